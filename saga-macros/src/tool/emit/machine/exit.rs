//! Where a transition ends: each `let __aN = __saga_site!(N);` replaced by the code that
//! builds the site's requests, saves the live locals and returns, and the answer that
//! starts the continuation. One file because both read the answer the same way
//! (`answer_expr`): after the exit's `return`, for its type; in the continuation, for its
//! value.

use std::cell::RefCell;
use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::{format_ident, quote_spanned};
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, Ident, Stmt};

use crate::shared::private_path;
use crate::tool::emit::keep::Keeper;
use crate::tool::ir::{Carrier, Rebound, Saved, Site, Suspension};
use crate::tool::lower::places::Refs;
use crate::tool::lower::site_id;

/// `let __aN = <the answer>;`
pub(super) fn answer_stmt(
    site: &Site,
    saved: &[Saved],
    rebound: &[Rebound],
    carrier: Carrier,
) -> Stmt {
    let answer = &site.answer;
    let value = match &site.suspension {
        Suspension::Call { .. } => crate::tool::emit::call::resume(site, saved, rebound, carrier),
        _ => answer_expr(site, |i| format_ident!("__mark{}", i)),
    };
    syn::parse_quote_spanned!(site.span=> let #answer = #value;)
}

/// What the suspension evaluates to, read from `__answers` with the markers `mark(i)`.
pub fn answer_expr(site: &Site, mark: impl Fn(usize) -> Ident) -> TokenStream {
    let private = private_path();
    let span = site.resolved_span();
    match &site.suspension {
        s if s.is_checkpoint() => quote_spanned!(span=> ()),
        Suspension::Await { .. } => {
            let m = mark(0);
            quote_spanned!(span=> #private::answer(#m, &mut __answers, 0))
        }
        Suspension::Join { requests } => {
            let items = (0..requests.len()).map(|i| {
                let m = mark(i);
                quote_spanned!(span=> #private::answer(#m, &mut __answers, #i))
            });
            quote_spanned!(span=> ( #(#items),* ))
        }
        // What a call gives is the helper's value, read where it returns.
        Suspension::Call { .. } => quote_spanned!(span=> ()),
    }
}

/// The exits already built, by site, with the saved set each was built for: the same
/// site's exit appears in the start and in the continuation before it, and again at each
/// pass of `build`.
pub(super) type Built = RefCell<HashMap<usize, (Vec<Saved>, Vec<Rebound>, Expr)>>;

/// Replaces every `let __aN = __saga_site!(N);` with the code that ends the transition
/// there, given the saved sets of one pass of `build`.
pub(super) struct Exits<'a> {
    pub(super) sites: &'a [Site],
    pub(super) saved: &'a [Vec<Saved>],
    /// Per site, the borrows of places its continuation binds again (see `places`).
    pub(super) rebound: &'a [Vec<Rebound>],
    pub(super) refs: &'a Refs,
    pub(super) built: &'a Built,
    pub(super) carrier: Carrier,
}

impl Exits<'_> {
    pub(super) fn block(&self, mut block: Block) -> Block {
        Exitify(self).visit_block_mut(&mut block);
        block
    }

    pub(super) fn stmt(&self, mut stmt: Stmt) -> Stmt {
        Exitify(self).visit_stmt_mut(&mut stmt);
        stmt
    }

    pub(super) fn expr(&self, mut expr: Expr) -> Expr {
        Exitify(self).visit_expr_mut(&mut expr);
        expr
    }

    fn exit(&self, site: &Site) -> Expr {
        let saved = &self.saved[site.id];
        let rebound = &self.rebound[site.id];
        let mut built = self.built.borrow_mut();
        if let Some((_, _, exit)) = built
            .get(&site.id)
            .filter(|(built_for, rebound_for, _)| built_for == saved && rebound_for == rebound)
        {
            return exit.clone();
        }
        let exit = exit_expr(site, saved, rebound, self.carrier);
        built.insert(site.id, (saved.clone(), rebound.clone(), exit.clone()));
        exit
    }
}

struct Exitify<'a, 'b>(&'a Exits<'b>);

impl VisitMut for Exitify<'_, '_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if let Some(id) = site_id(expr) {
            if let Some(site) = self.0.sites.get(id) {
                *expr = self.0.exit(site);
            }
            return;
        }
        visit_mut::visit_expr_mut(self, expr);
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Ends the transition at `site`: builds its requests, saves the live locals, returns.
/// The answer that follows is never reached; it gives the suspension its type, so that
/// rustc infers the code after it exactly as in the function as written.
fn exit_expr(site: &Site, saved: &[Saved], rebound: &[Rebound], carrier: Carrier) -> Expr {
    if let Suspension::Call { call, .. } = &site.suspension {
        return crate::tool::emit::call::exit(site, call, saved, rebound, carrier);
    }
    let private = private_path();
    let span = site.resolved_span();
    let variant = &site.variant;
    let site_id = site.id;
    let requests = site.suspension.requests();
    let request_names: Vec<Ident> = (0..requests.len())
        .map(|i| format_ident!("__request{}", i))
        .collect();
    let mark_names: Vec<Ident> = (0..requests.len())
        .map(|i| format_ident!("__mark{}", i))
        .collect();
    let mark_fields: Vec<Ident> = (0..requests.len())
        .map(|i| format_ident!("__m{}", i))
        .collect();
    let (keeps, fields) = crate::tool::emit::keep::fields(site, saved, Keeper::Runtime);
    let answer = answer_expr(site, |i| format_ident!("__mark{}", i));
    let builds =
        requests
            .iter()
            .zip(&request_names)
            .zip(&mark_names)
            .map(|((request, name), mark)| {
                quote_spanned!(span=>
                    let #name = #request;
                    let #mark = #private::marker(&#name);
                )
            });
    // A checkpoint asks nothing, but its expression is still evaluated, as written: the
    // user's `checkpoint` import stays used, and a `checkpoint()` that is not saga's is a
    // type error on it.
    let checkpoint = match &site.suspension {
        Suspension::Await { request, .. } if site.suspension.is_checkpoint() => {
            Some(quote_spanned!(span=> let _: #private::Checkpoint = #request;))
        }
        _ => None,
    };
    let suspend = carrier.wrap(quote_spanned! {span=>
        #private::suspend(
            &__slot,
            __State::#variant { #(#fields,)* #(#mark_fields: #mark_names,)* },
            {
                let mut __round = ::std::vec::Vec::new();
                #(#private::requests(&mut __round, #request_names);)*
                #private::restatable(&mut __round, __SAGA_RESTATED[#site_id]);
                __round
            },
        )
    });
    let alive = crate::tool::emit::keep::keep_alive(site, rebound);
    let exprs: Expr = syn::parse_quote_spanned! {span=> {
        #checkpoint
        #(#builds)*
        #alive
        #(#keeps)*
        return #suspend;
        #answer
    }};
    exprs
}
