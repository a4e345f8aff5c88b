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

/// Writes each `effect(..).await` as the effect awaited, then a checkpoint that saves its
/// result, which the block then gives:
/// `{ let __saga_effect = effect(..).await; checkpoint().await; __saga_effect }`. The
/// result is then in the saga's state before the code goes on (see `saga_runtime`'s
/// `effect`). Only in the body itself: an effect awaited in a closure or an `async` block
/// runs there, with its key, and is not recorded.
pub fn effects(block: &mut Block) {
    Effects.visit_block_mut(block);
}

struct Effects;

impl VisitMut for Effects {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        visit_mut::visit_expr_mut(self, expr);
        if let Expr::Await(awaited) = expr
            && crate::tool::parse::suspend::is_effect(&awaited.base)
        {
            let span = awaited.span();
            let written = quote_spanned! {span=>
                {
                    let __saga_effect = #awaited;
                    ::saga_runtime::prelude::checkpoint().await;
                    __saga_effect
                }
            };
            if let Ok(written) = syn::parse2::<Expr>(written) {
                *expr = written;
            }
        }
    }

    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}

    fn visit_expr_async_mut(&mut self, _: &mut syn::ExprAsync) {}

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Writes a `let` of a tuple of bindings from a tuple that mixes borrows and values
/// (`let (score, top) = (order[0].0, &entries[best]);`) as one `let` per binding, in the
/// tuple's order: a borrow of a saved place is then bound again after a suspension as any
/// `let top = &entries[best];` is, and the value saved as any other. Run after the body's
/// bindings are renamed apart (`rename::alpha`), so that no element can read a binding
/// of the same `let` (`let (a, b) = (b, a)` swaps as written). Only plain bindings, no
/// type written, the same number on both sides; the values are evaluated in the same
/// order, each temporary dropped at the end of its own `let` instead of the tuple's.
pub fn tuple_lets(block: &mut Block) {
    TupleLets.visit_block_mut(block);
}

struct TupleLets;

impl VisitMut for TupleLets {
    fn visit_block_mut(&mut self, block: &mut Block) {
        visit_mut::visit_block_mut(self, block);
        let mut stmts = Vec::with_capacity(block.stmts.len());
        for stmt in std::mem::take(&mut block.stmts) {
            match split(&stmt) {
                Some(lets) => stmts.extend(lets),
                None => stmts.push(stmt),
            }
        }
        block.stmts = stmts;
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// `stmt` as one `let` per binding, if it is such a `let`.
fn split(stmt: &syn::Stmt) -> Option<Vec<syn::Stmt>> {
    let syn::Stmt::Local(local) = stmt else {
        return None;
    };
    let syn::Pat::Tuple(pattern) = &local.pat else {
        return None;
    };
    let init = local.init.as_ref()?;
    if init.diverge.is_some() || !local.attrs.is_empty() {
        return None;
    }
    let Expr::Tuple(values) = &*init.expr else {
        return None;
    };
    if pattern.elems.len() != values.elems.len() || pattern.elems.len() < 2 {
        return None;
    }
    let plain = pattern.elems.iter().all(|pat| {
        matches!(pat, syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none())
    });
    let borrows = values
        .elems
        .iter()
        .filter(|value| matches!(value, Expr::Reference(_)))
        .count();
    if !plain || borrows == 0 || borrows == values.elems.len() {
        return None;
    }
    Some(
        pattern
            .elems
            .iter()
            .zip(&values.elems)
            .map(|(pat, value)| syn::parse_quote_spanned!(pat.span()=> let #pat = #value;))
            .collect(),
    )
}
