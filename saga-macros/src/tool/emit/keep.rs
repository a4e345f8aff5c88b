//! How an exit puts its saved locals into the state's fields. Each field is made by a
//! runtime function that checks, at the user's token, that the local can be saved, and
//! whose result leaves the field's type unknown when it cannot: rustc then reports the
//! local once, and nothing about the state enum (see the runtime's `expand::local`).

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::Ident;

use crate::shared::{private_path, private_path_at};
use crate::tool::ir::{Chosen, Rebound, Saved, Site};

/// Where the fields are made: at a suspension of the tool's own, or at a helper's call,
/// whose kind (`__kind`, declared at the call site's span, given here, so that the name
/// resolves there whatever context a local's own tokens come from, as in a tool a
/// `macro_rules!` writes) says whether it saves anything (a `#[saga_fn]` suspends; an
/// ordinary future never does, and its fields are never filled).
#[derive(Clone, Copy)]
pub enum Keeper {
    Runtime,
    CallKind(Span),
}

impl Keeper {
    /// The runtime's `function` (`keep`, `for_items`, `keep_item`, `keep_rest`) called
    /// with `args`, after the site when it takes one. The checks go through the
    /// expansion's own shims ([`keep_shim`]), so that rustc's "required by a bound in"
    /// note points at the user's `#[saga_tool]`, not into the runtime's sources.
    fn call(self, span: Span, function: &str, args: TokenStream) -> TokenStream {
        let site = match self {
            Keeper::Runtime => {
                let private = private_path_at(span);
                quote_spanned!(span=> &#private::ASuspension)
            }
            Keeper::CallKind(site) => {
                let kind = Ident::new("__kind", site.located_at(span));
                quote_spanned!(span=> &#kind)
            }
        };
        match function {
            "keep_item" => {
                let shim = Ident::new(shim_name(function), crate::shared::at_call_site(span));
                quote_spanned!(span=> #shim(#args))
            }
            "keep" | "for_items" | "keep_among" => {
                let shim = Ident::new(shim_name(function), crate::shared::at_call_site(span));
                quote_spanned!(span=> #shim(#site, #args))
            }
            _ => {
                let private = private_path_at(span);
                let function = Ident::new(function, span);
                quote_spanned!(span=> #private::#function(#site, #args))
            }
        }
    }
}

/// The name in the expansion of the runtime's `keep`, `for_items` or `keep_item`: rustc's
/// note names it ("required by a bound in `saga_saves_this_local`"), so it says in the
/// user's words what the bound is for; no user's function is likely to be called so.
fn shim_name(function: &str) -> &'static str {
    if function == "for_items" {
        "saga_saves_this_loops_items"
    } else if function == "keep_among" {
        "saga_saves_this_local_among"
    } else if function == "keep_item" {
        "saga_saves_this_part_of_an_item"
    } else {
        "saga_saves_this_local"
    }
}

/// `keep`, `for_items` and `keep_item`, the runtime's functions defined in
/// the expansion, at a tool's suspension and at a helper's call alike: where a local (or a loop's items) cannot be saved, the error's note
/// shows the bound at the `#[saga_tool]` (or `#[saga_fn]`) attribute, in the user's
/// file, never a path into saga-runtime's sources on the user's machine. The two for
/// loops only where a site saves a loop's items (`sites`), so that a tool without such a
/// loop compiles nothing more.
pub fn keep_shim(sites: &[Site], locates: bool, literals: Option<&[String]>) -> TokenStream {
    let private = private_path();
    let literals = literals.map(|literals| {
        let name = Ident::new(LITERALS, Span::call_site());
        let count = literals.len();
        quote::quote! {
            #[allow(dead_code)]
            static #name: [&str; #count] = [#(#literals),*];
        }
    });
    let among = locates.then(|| {
        quote::quote! {
            // Unused only where the tool or helper is itself unused: rustc says that once.
            #[allow(dead_code)]
            #[inline]
            fn saga_saves_this_local_among<
                __K: #private::CallSaves,
                __W,
                __T: #private::SavedAmong<<__K as #private::CallSaves>::Across, __W, __M>,
                __M,
            >(
                __saga_site: &__K,
                __saga_local: __T,
                __saga_roots: &[#private::Root<'_>],
                __saga_name: &str,
                __saga_as: &__W,
            ) -> <__T as #private::SavedAmong<<__K as #private::CallSaves>::Across, __W, __M>>::Kept {
                #private::keep_among(__saga_site, __saga_local, __saga_roots, __saga_name, __saga_as)
            }
        }
    });
    let keep = quote::quote! {
        // The checks of borrows made again (`lower::places::SHIMS`), generic: compiled
        // only where a tool uses them.
        #[allow(dead_code)]
        #[inline(always)]
        fn saga_calls_this_again<__T>(__saga_value: __T) -> __T
        where
            #private::Gives: #private::Borrowed<__T>,
        {
            #private::borrowed(__saga_value)
        }
        #[allow(dead_code)]
        #[inline]
        fn saga_calls_this_getter_again<'__a, __G: #private::BorrowedItems<'__a>>(
            __saga_got: __G,
        ) -> &'__a <__G as #private::BorrowedItems<'__a>>::Collection {
            #private::borrowed_items(__saga_got)
        }
        #[allow(dead_code)]
        #[inline]
        fn saga_saves_this_local<
            __K: #private::CallSaves,
            __T: #private::SavedLocal<<__K as #private::CallSaves>::Across, __M>,
            __M,
        >(
            __saga_site: &__K,
            __saga_local: __T,
        ) -> <__T as #private::SavedLocal<<__K as #private::CallSaves>::Across, __M>>::Kept {
            #private::keep(__saga_site, __saga_local)
        }
        #among
        #literals
    };
    if sites.iter().all(|site| site.for_loops.is_empty()) {
        return keep;
    }
    quote::quote! {
        #keep
        #[allow(dead_code)]
        #[inline]
        fn saga_saves_this_loops_items<
            __K: #private::CallSaves,
            __T: #private::SavedLoopItem<<__K as #private::CallSaves>::Across, __M>,
            __M,
        >(
            __saga_site: &__K,
            __saga_items: &::std::vec::Vec<__T>,
        ) -> #private::Items<__M> {
            #private::for_items(__saga_site, __saga_items)
        }
        #[allow(dead_code)]
        #[inline]
        fn saga_saves_this_part_of_an_item<__I, __M: #private::SavedItemPart<__I, __N>, __N>(
            __saga_item: __I,
            __saga_items: #private::Items<__M>,
        ) -> <__M as #private::SavedItemPart<__I, __N>>::Kept {
            #private::keep_item(__saga_item, __saga_items)
        }
    }
}

/// The roots `s` is saved among at `site` (see `Saved::roots`), or `None` when it is saved
/// as it is: a choice among literals or constants, a loop's item or rest, and a local that
/// may hold no borrow of another. A local whose written type holds a `&str` is saved among
/// its roots and the body's literals ([`LITERALS`]), even with no root.
pub fn roots_among<'a>(site: &Site, s: &Saved, saved: &'a [Saved]) -> Option<Vec<&'a Saved>> {
    let name = s.ident.to_string();
    let of_loop = site.for_loops.iter().any(|each| {
        each.bindings.contains(&name) && saved.iter().any(|kept| kept.ident == each.rest)
    });
    if s.chosen.is_some() || of_loop || site.is_rest_of_items(&name) {
        return None;
    }
    let roots = s.roots(site, saved);
    (s.text || !roots.is_empty()).then_some(roots)
}

/// The static holding the body's string literals (`Machine::literals`), which a `&str` kept
/// where it points may be one of: resolved where the attribute is, as the shims are.
pub const LITERALS: &str = "__SAGA_LITERALS";

/// The roots of `roots`, and the literals when `s` holds a `&str`, as the runtime's `Root`s.
///
/// At a call (`kind`, the call's kind), a root is made through the kind: an ordinary
/// future saves nothing, so its roots need not be `Serialize` (`RootAt`).
pub fn root_exprs(
    s: &Saved,
    roots: &[&Saved],
    span: Span,
    kind: Option<TokenStream>,
) -> Vec<TokenStream> {
    let private = private_path_at(span);
    let mut exprs: Vec<TokenStream> = roots
        .iter()
        .map(|root| {
            let root = &root.ident;
            match &kind {
                Some(kind) => quote_spanned!(span=> #private::RootAt::root_at(#kind, &#root)),
                None => quote_spanned!(span=> #private::root(&#root)),
            }
        })
        .collect();
    if s.text {
        let literals = Ident::new(LITERALS, crate::shared::at_call_site(span));
        exprs.push(quote_spanned!(span=> #private::literals(&#literals)));
    }
    exprs
}

/// Whether a local is saved among roots at any site (`saved`, per site): only then does the
/// expansion define `keep_among`'s shim and the borrow check's probe of a located field,
/// so that a tool without one compiles nothing more for them.
pub fn locates(sites: &[Site], saved: &[Vec<Saved>]) -> bool {
    sites
        .iter()
        .zip(saved)
        .any(|(site, saved)| saved.iter().any(|s| roots_among(site, s, saved).is_some()))
}

/// The statements to run before the state is built, and its fields for `saved`.
pub fn fields(
    site: &Site,
    saved: &[Saved],
    keeper: Keeper,
) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let is_saved = |name: &Ident| saved.iter().any(|s| s.ident == *name);
    // A loop's items are checked once, at its collection; its item's bindings take their
    // fields' type from that check.
    let mut before = Vec::new();
    for each in &site.for_loops {
        let binds = each
            .bindings
            .iter()
            .any(|b| saved.iter().any(|s| s.ident == b));
        if is_saved(&each.rest) && binds {
            let rest = &each.rest;
            let items = items_name(rest, rest.span());
            let check = keeper.call(
                rest.span(),
                "for_items",
                quote_spanned!(rest.span()=> &#rest),
            );
            before.push(quote_spanned!(rest.span()=> let #items = #check;));
        }
    }
    // Locals saved among their roots, before the state is built (while the roots are all
    // still there), the last declared first: a root may be such a local itself.
    let mut among: Vec<((usize, usize), TokenStream)> = Vec::new();
    let fields = saved
        .iter()
        .enumerate()
        .map(|(index, s)| {
            let field = &s.field;
            let name = s.ident.to_string();
            // The innermost loop with this binding whose items are saved here: two loops
            // may bind the same name, and only the one the suspension is in keeps its items.
            let of_loop = site
                .for_loops
                .iter()
                .rev()
                .find(|each| is_saved(&each.rest) && each.bindings.contains(&name));
            let value = match of_loop {
                // Checked only when the loop's items can be saved (see `keep_item`): a
                // part of an item that cannot be saved, though the item can.
                Some(each) => {
                    let ident = &s.ident;
                    let span = ident.span();
                    // Resolved as the declaration is (at the loop's collection), shown at
                    // the binding.
                    let items = items_name(&each.rest, each.rest.span().located_at(span));
                    keeper.call(span, "keep_item", quote_spanned!(span=> #ident, #items))
                }
                _ if site.is_rest_of_items(&name) => {
                    let ident = &s.ident;
                    keeper.call(
                        ident.span(),
                        "keep_rest",
                        quote_spanned!(ident.span()=> #ident),
                    )
                }
                _ => {
                    let span = s.ident.span();
                    // Moved into the suspension's own request (`sample_messages(history)`
                    // in a loop): read at the move, so that rustc's error is the one it
                    // gives the function as written, at the use, with `.clone()` as the fix.
                    let ident = &match moved_into(site, &s.ident) {
                        // Resolved as the attribute's code is, so that rustc offers no
                        // rewrite of the expansion as the user's own.
                        Some(at) => Ident::new(&name, crate::shared::at_call_site(at)),
                        None => s.ident.clone(),
                    };
                    let local = match &s.chosen {
                        // Its text, taken back among the literals (see `Saved::chosen`).
                        Some(Chosen::Literals(_)) => {
                            let private = private_path_at(span);
                            quote_spanned!(span=> #private::Literal::of(#ident))
                        }
                        // Its value's fingerprint, taken back among the constants.
                        Some(Chosen::Constants(..)) => {
                            let private = private_path_at(span);
                            quote_spanned!(span=> {
                                // One of the two is used, by autoref: the other is not.
                                #[allow(unused_imports)]
                                use #private::{ChoiceKindOf as _, NoChoiceKind as _};
                                #private::ConstantChoice::of(
                                    (&&#private::ChoiceProbe(&#ident)).choice_kind(),
                                )
                            })
                        }
                        None => quote_spanned!(span=> #ident),
                    };
                    if let Some(roots) = roots_among(site, s, saved) {
                        // What the local's borrows may point into (see `Saved::roots`).
                        let kind = match keeper {
                            Keeper::Runtime => None,
                            Keeper::CallKind(site) => {
                                let kind = Ident::new("__kind", site.located_at(span));
                                Some(quote_spanned!(span=> &#kind))
                            }
                        };
                        let roots = root_exprs(s, &roots, span, kind);
                        let name = crate::tool::ir::written(&s.ident);
                        let kept = Ident::new(&format!("__kept{index}"), span);
                        // Its written type holds a `&str`, which is also `Deserialize` up
                        // to its lifetime: saved as where it points, rustc cannot choose.
                        let how = Ident::new(if s.text { "AsTexts" } else { "AsValue" }, span);
                        let private = private_path_at(span);
                        let keep = keeper.call(
                            span,
                            "keep_among",
                            quote_spanned!(span=> #local, &[#(#roots),*], #name, &#private::#how),
                        );
                        let start = s.ident.span().start();
                        among.push((
                            (start.line, start.column),
                            quote_spanned!(span=> let #kept = #keep;),
                        ));
                        quote_spanned!(span=> #kept)
                    } else {
                        keeper.call(span, "keep", local)
                    }
                }
            };
            quote_spanned!(s.ident.span()=> #field: #value)
        })
        .collect();
    among.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
    before.extend(among.into_iter().map(|(_, stmt)| stmt));
    (before, fields)
}

/// Where the suspension's request (or helper call) moves `local` in, as an argument
/// written as the bare local (`sample_messages(history)`): saving it afterwards is a use
/// after that move.
fn moved_into(site: &Site, local: &Ident) -> Option<Span> {
    struct Moves<'a> {
        local: &'a Ident,
        found: Option<Span>,
    }
    impl Moves<'_> {
        fn argument(&mut self, arg: &syn::Expr) {
            if let syn::Expr::Path(path) = arg
                && path.qself.is_none()
                && path.path.is_ident(self.local)
                && self.found.is_none()
            {
                self.found = path.path.get_ident().map(Ident::span);
            }
        }
    }
    impl<'ast> syn::visit::Visit<'ast> for Moves<'_> {
        fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
            call.args.iter().for_each(|arg| self.argument(arg));
            syn::visit::visit_expr_call(self, call);
        }
        fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
            call.args.iter().for_each(|arg| self.argument(arg));
            syn::visit::visit_expr_method_call(self, call);
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut moves = Moves { local, found: None };
    match &site.suspension {
        crate::tool::ir::Suspension::Call { call, .. } => {
            syn::visit::Visit::visit_expr(&mut moves, call)
        }
        other => other
            .requests()
            .into_iter()
            .for_each(|request| syn::visit::Visit::visit_expr(&mut moves, request)),
    }
    moves.found
}

/// The local holding what `for_items` found for the loop whose items `rest` holds:
/// `__items1` for `__rest1` (snake case, or the user's build warns).
fn items_name(rest: &Ident, span: Span) -> Ident {
    let name = rest.to_string();
    Ident::new(
        &format!("__items{}", name.trim_start_matches("__rest")),
        span,
    )
}

/// Uses, at the suspension, each borrow of a place that the continuation binds again
/// instead of saving: the borrow then lives up to the suspension, as it does in the
/// function as written, so rustc refuses what would change its place before it (the
/// owner assigned, moved, or borrowed mutably), with the suspension as the later use.
pub fn keep_alive(site: &Site, rebound: &[Rebound]) -> Option<TokenStream> {
    let alive: Vec<&Rebound> = rebound.iter().filter(|each| each.alive).collect();
    if alive.is_empty() {
        return None;
    }
    let private = private_path();
    let span = site.resolved_span();
    // One at a time, innermost first: an item borrowed mutably through its loop's
    // collection ends before the collection's own borrow is used.
    let idents = alive.iter().map(|each| &each.ident);
    // Then a loop's iterator (`__walkN`) is dropped: its type may be opaque (`flat_map` of
    // a function returning `impl Iterator`), whose drop rustc takes to use the borrow, so
    // that the state, moving the collection it borrows, would be refused. It is made
    // again after the restore, never read here again.
    let walks = alive
        .iter()
        .map(|each| &each.ident)
        .filter(|ident| ident.to_string().starts_with("__walk"));
    Some(quote_spanned!(span=>
        #(#private::keep_alive(&#idents);)*
        #(::core::mem::drop(#walks);)*
    ))
}
