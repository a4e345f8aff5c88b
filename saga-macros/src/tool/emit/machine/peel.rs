//! A loop on the path to a suspension, *peeled*: the rest of the current iteration runs
//! once, then the loop itself runs as written. The iteration's `break`s and `continue`s
//! are rewritten to leave the peeled part, since it is no longer inside the loop.

use proc_macro2::Span;
use quote::quote;
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, Label, Lifetime, Stmt};

use crate::shared::private_path;

/// The rest of a loop's current iteration, then the loop.
pub(super) fn peel(
    rest: Block,
    label: Option<&Label>,
    full: Expr,
    site: usize,
    depth: usize,
) -> Expr {
    let peel_label = Lifetime::new(&format!("'__peel{site}_{depth}"), Span::call_site());
    let target = label.map(|label| label.name.ident.to_string());
    let mut detect = LoopExits {
        target: target.clone(),
        depth: 0,
        found_break: false,
        rewrite: None,
    };
    let mut probe = rest.clone();
    detect.visit_block_mut(&mut probe);
    let with_break = detect.found_break;
    let mut rewrite = LoopExits {
        target,
        depth: 0,
        found_break: false,
        rewrite: Some((peel_label.clone(), with_break)),
    };
    let mut rest = rest;
    rewrite.visit_block_mut(&mut rest);
    let mut stmts = rest.stmts;
    if let Some(Stmt::Expr(_, semi @ None)) = stmts.last_mut() {
        *semi = Some(Default::default());
    }
    let private = private_path();
    if with_break {
        syn::parse_quote! {{
            let __flow = #peel_label: { #(#stmts)* #private::Flow::Continue };
            match __flow {
                #private::Flow::Break(__value) => __value,
                #private::Flow::Continue => #full,
            }
        }}
    } else {
        syn::parse_quote! {{
            #peel_label: { #(#stmts)* }
            #full
        }}
    }
}

/// Finds, or rewrites to leave the peeled iteration, the `break`s and `continue`s that
/// target the peeled loop.
struct LoopExits {
    target: Option<String>,
    /// Loops entered inside the peeled part: unlabeled exits there are theirs.
    depth: usize,
    found_break: bool,
    rewrite: Option<(Lifetime, bool)>,
}

impl LoopExits {
    fn targets(&self, label: Option<&Lifetime>) -> bool {
        match label {
            None => self.depth == 0,
            Some(label) => self.target.as_deref() == Some(&label.ident.to_string()),
        }
    }
}

impl VisitMut for LoopExits {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        match expr {
            Expr::Closure(_) | Expr::Async(_) => {}
            Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_) => {
                self.depth += 1;
                visit_mut::visit_expr_mut(self, expr);
                self.depth -= 1;
            }
            Expr::Break(expr_break) if self.targets(expr_break.label.as_ref()) => {
                self.found_break = true;
                if let Some(value) = &mut expr_break.expr {
                    self.visit_expr_mut(value);
                }
                if let Some((peel, _)) = &self.rewrite {
                    let private = private_path();
                    let value = expr_break
                        .expr
                        .take()
                        .map_or_else(|| quote!(()), |v| quote!(#v));
                    *expr = syn::parse_quote!(break #peel (#private::Flow::Break(#value)));
                }
            }
            Expr::Continue(expr_continue) if self.targets(expr_continue.label.as_ref()) => {
                if let Some((peel, with_break)) = &self.rewrite {
                    let private = private_path();
                    *expr = if *with_break {
                        syn::parse_quote!(break #peel (#private::Flow::Continue))
                    } else {
                        syn::parse_quote!(break #peel)
                    };
                }
            }
            _ => visit_mut::visit_expr_mut(self, expr),
        }
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
