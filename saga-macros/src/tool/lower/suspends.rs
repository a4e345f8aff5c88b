//! Where the suspensions are: every step of the lowering first asks whether the code in
//! front of it suspends, and leaves it as written if not.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Block, Expr, Stmt};

use crate::tool::parse::macro_args;

/// The marker the lowering leaves where a suspension was (`__saga_site!(N)`).
pub const SITE_MACRO: &str = "__saga_site";

/// The site number of a `__saga_site!(N)` marker.
pub fn site_id(expr: &Expr) -> Option<usize> {
    match expr {
        Expr::Macro(mac) if mac.mac.path.is_ident(SITE_MACRO) => mac
            .mac
            .parse_body::<syn::LitInt>()
            .ok()?
            .base10_parse()
            .ok(),
        _ => None,
    }
}
use crate::tool::parse::suspend::{classify, is_join};

/// Finds suspensions, not looking into closures, async blocks or nested items (where they
/// are errors reported elsewhere).
#[derive(Default)]
pub(super) struct Finder {
    pub(super) found: Vec<Span>,
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_expr(&mut self, expr: &'ast Expr) {
        if classify(expr).is_some() {
            self.found.push(expr.span());
            return;
        }
        match expr {
            Expr::Closure(_) | Expr::Async(_) => {}
            _ => syn::visit::visit_expr(self, expr),
        }
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        if let Some(args) = macro_args::std_args(mac) {
            args.values()
                .into_iter()
                .for_each(|value| self.visit_expr(value));
        }
    }
}

pub fn contains_suspension(expr: &Expr) -> bool {
    let mut finder = Finder::default();
    finder.visit_expr(expr);
    !finder.found.is_empty()
}

pub(super) fn contains_suspension_block(block: &Block) -> bool {
    let mut finder = Finder::default();
    finder.visit_block(block);
    !finder.found.is_empty()
}

pub(super) fn contains_suspension_stmt(stmt: &Stmt) -> bool {
    if let Stmt::Macro(stmt_macro) = stmt
        && is_join(&Expr::Macro(syn::ExprMacro {
            attrs: Vec::new(),
            mac: stmt_macro.mac.clone(),
        }))
    {
        return true;
    }
    let mut finder = Finder::default();
    finder.visit_stmt(stmt);
    !finder.found.is_empty()
}
