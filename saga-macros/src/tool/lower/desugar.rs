//! Standard macros that are written out before the body is compiled, so that the rest of
//! the macro sees the plain Rust they stand for: `matches!(x, pattern if guard)` is
//! `match x { pattern if guard => true, _ => false }` (its definition in `core`), whose
//! scrutinee may then ask like any `match`'s. The checks run before this, on the body as
//! written, so that their errors name `matches!`.

use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr};

use crate::tool::parse::macro_args::{self, Args};

/// Writes out every `matches!` in `block`.
pub fn matches(block: &mut Block) {
    Desugar.visit_block_mut(block);
}

struct Desugar;

impl VisitMut for Desugar {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if let Expr::Macro(mac) = expr
            && mac
                .mac
                .path
                .segments
                .last()
                .is_some_and(|last| last.ident == "matches")
            && let Some(Args::Matches {
                scrutinee,
                pattern,
                guard,
                ..
            }) = macro_args::matches_args(&mac.mac)
        {
            let span = mac.span();
            let guard = guard.map(|(if_token, guard)| quote_spanned!(span=> #if_token #guard));
            let written = quote_spanned! {span=>
                match #scrutinee {
                    #pattern #guard => true,
                    _ => false,
                }
            };
            if let Ok(written) = syn::parse2::<Expr>(written) {
                *expr = written;
            }
        }
        visit_mut::visit_expr_mut(self, expr);
    }

    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        // `format!("{}", matches!(…))`: the standard macros' arguments are expressions.
        if let Some(mut args) = macro_args::std_args(mac) {
            args.values_mut()
                .into_iter()
                .for_each(|value| self.visit_expr_mut(value));
            mac.tokens = args.tokens();
        }
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
