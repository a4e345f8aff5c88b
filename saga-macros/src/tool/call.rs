//! A call awaited as `f(..).await`, which may be of a `#[saga_fn]`. The syntax cannot tell
//! a helper that suspends from an ordinary `async fn`, so the code asks the types: the
//! runtime's `probe(&call)` with `kind()` gives a `SagaFnKind` for a helper and a
//! `FutureKind` for anything else. Both have the same methods, so one expansion serves
//! both: a helper runs its transition and may suspend, saving its state in the caller's;
//! an ordinary future is awaited in place, and its (never used) saved state is empty.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{Expr, Ident};

use super::lower::Site;
use super::machine::Saved;
use crate::shared::private_path;

/// `match call { __call => { let __kind = …; then } }`: the call's kind (a helper, or an
/// ordinary future) chosen by its type, then `then`. A `match`, not a `let`: the call's
/// temporaries (`&format!(..)`) live until it ends, as they would in
/// `f(&format!(..)).await`.
fn with_kind(span: proc_macro2::Span, call: &Expr, then: TokenStream) -> Expr {
    let private = private_path();
    syn::parse_quote_spanned! {span=>
        match #call {
            __call => {
                #[allow(unused_imports)]
                use #private::{ViaFuture as _, ViaSagaFn as _};
                let __kind = (&&#private::probe(&__call)).kind();
                #then
            }
        }
    }
}

/// Ends the transition while the helper waits: the caller's locals and the helper's state
/// are saved, and the helper's requests are the round's.
fn suspend(site: &Site, saved: &[Saved]) -> TokenStream {
    let private = private_path();
    let span = site.span;
    let variant = &site.variant;
    let fields = saved.iter().map(|s| {
        let field = &s.field;
        let ident = &s.ident;
        quote_spanned!(ident.span()=> #field: __kind.keep(#ident))
    });
    quote_spanned! {span=>
        #private::FnStep::Suspend { state: __callee, requests: __round } => {
            return #private::suspend(
                &mut __slot,
                __State::#variant {
                    #(#fields,)*
                    __m0: #private::kind_marker(&__kind),
                    __callee,
                },
                __round,
            );
        }
        #private::FnStep::AskAgain(__round) => return #private::ask_again(__round),
        #private::FnStep::Failed(__message) => return #private::failed(__message),
    }
}

/// At the call: runs the helper's first transition (or awaits the future); its value, or
/// the end of the transition.
pub fn exit(site: &Site, call: &Expr, saved: &[Saved]) -> Expr {
    let private = private_path();
    let span = site.span;
    let suspend = suspend(site, saved);
    with_kind(
        span,
        call,
        quote_spanned! {span=>
            match __kind.drive(__call, &mut __answers, __cx).await {
                #private::FnStep::Done(__value) => __value,
                #suspend
            }
        },
    )
}

/// After a round: the helper's next transition with the answers; its value, or the end of
/// the transition again.
pub fn resume(site: &Site, saved: &[Saved]) -> TokenStream {
    let private = private_path();
    let span = site.span;
    let suspend = suspend(site, saved);
    quote_spanned! {span=> {
        let __kind = #private::kind_of(__mark0);
        match __kind.resume(__callee, &mut __answers, __cx).await {
            #private::FnStep::Done(__value) => __value,
            #suspend
        }
    }}
}

/// A saved local of the caller, read back (through the kind, so that it has its type).
pub fn restore(source: &Ident) -> TokenStream {
    let private = private_path();
    quote!(#private::kind_of(__mark0).restore(#source))
}

/// The call in the plain run: the helper's plain body, or the future awaited.
pub fn plain(span: proc_macro2::Span, call: &Expr) -> Expr {
    with_kind(
        span,
        call,
        quote_spanned!(span=> __kind.plain(__call, __cx, __run, __script).await),
    )
}

/// A call site in the body kept beside a failed expansion: typed as the call's result
/// (a helper's output, or the future's), without running it.
pub fn placeholder(span: proc_macro2::Span, call: &Expr) -> Expr {
    with_kind(
        span,
        call,
        quote_spanned!(span=> __kind.placeholder(__call)),
    )
}

/// The state variant's fields a call site adds to the saved locals: which kind the call
/// was (no bytes), and the helper's state.
pub fn fields(marker_param: &Ident) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let private = private_path();
    let mark = format_ident!("__mark0");
    (
        vec![
            quote!(__m0: #private::Marker<#marker_param>),
            quote!(__callee: ::std::vec::Vec<u8>),
        ],
        vec![quote!(__m0: #mark), quote!(__callee: __callee)],
    )
}
