//! A call awaited as `f(..).await`, which may be of a `#[saga_fn]`. The syntax cannot tell
//! a helper that suspends from an ordinary `async fn`, so the code asks the types: the
//! runtime's `probe(&call)` with `kind()` gives a `SagaFnKind` for a helper and a
//! `FutureKind` for anything else. Both have the same methods, so one expansion serves
//! both: a helper runs its transition and may suspend, saving its state in the caller's;
//! an ordinary future is awaited in place, and its (never used) saved state is empty.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{Expr, Ident};

use crate::shared::private_path;
use crate::tool::emit::state_codec::{FieldKind, StateField};
use crate::tool::ir::{Carrier, Rebound, Saved, Site};

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

/// A local the expansion declares (`__answers`, `__slot`, …), named so that it resolves
/// where the attribute is, wherever the call's tokens come from (a `macro_rules!`'s
/// caller's); the code around it keeps the call's span, so that its errors read as the
/// user's.
fn local(name: &str, site: &Site) -> Ident {
    Ident::new(name, site.resolved_span())
}

/// Ends the transition while the helper waits: the caller's locals and the helper's state
/// are saved, and the helper's requests are the round's.
fn suspend(site: &Site, saved: &[Saved], rebound: &[Rebound], carrier: Carrier) -> TokenStream {
    let private = private_path();
    let span = site.span;
    let variant = &site.variant;
    let (keeps, fields) = crate::tool::emit::keep::fields(
        site,
        saved,
        crate::tool::emit::keep::Keeper::CallKind(span),
    );
    let slot = local("__slot", site);
    let suspend = carrier.wrap(quote_spanned! {span=>
        #private::suspend(
            &#slot,
            __State::#variant {
                #(#fields,)*
                __m0: #private::kind_marker(&__kind),
                __callee,
            },
            __round,
        )
    });
    let alive = crate::tool::emit::keep::keep_alive(site, rebound);
    let ask_again = carrier.wrap(quote_spanned!(span=> #private::ask_again(__round)));
    let failed = carrier.wrap(quote_spanned!(span=> #private::failed(__message)));
    quote_spanned! {span=>
        #private::FnStep::Suspend { state: __callee, requests: __round } => {
            #alive
            #(#keeps)*
            return #suspend;
        }
        #private::FnStep::AskAgain(__round) => return #ask_again,
        #private::FnStep::Failed(__message) => return #failed,
    }
}

/// At the call: runs the helper's first transition (or awaits the future); its value, or
/// the end of the transition.
pub fn exit(
    site: &Site,
    call: &Expr,
    saved: &[Saved],
    rebound: &[Rebound],
    carrier: Carrier,
) -> Expr {
    let private = private_path();
    let span = site.span;
    let suspend = suspend(site, saved, rebound, carrier);
    let (answers, cx) = (local("__answers", site), local("__cx", site));
    with_kind(
        span,
        call,
        quote_spanned! {span=>
            match __kind.drive(__call, &mut #answers, #cx).await {
                #private::FnStep::Done(__value) => __value,
                #suspend
            }
        },
    )
}

/// After a round: the helper's next transition with the answers; its value, or the end of
/// the transition again.
pub fn resume(site: &Site, saved: &[Saved], rebound: &[Rebound], carrier: Carrier) -> TokenStream {
    let private = private_path();
    let span = site.span;
    let suspend = suspend(site, saved, rebound, carrier);
    let (mark, callee) = (local("__mark0", site), local("__callee", site));
    let (answers, cx) = (local("__answers", site), local("__cx", site));
    quote_spanned! {span=> {
        let __kind = #private::kind_of(#mark);
        match __kind.resume(#callee, &mut #answers, #cx).await {
            #private::FnStep::Done(__value) => __value,
            #suspend
        }
    }}
}

/// A saved local of the caller, read back (through the kind, so that it has its type).
pub fn restore(source: &Ident) -> Expr {
    let private = private_path();
    syn::parse_quote!(#private::kind_of(__mark0).restore(#source))
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
pub fn fields(marker_param: &Ident) -> (Vec<StateField>, Vec<TokenStream>) {
    let mark = format_ident!("__mark0");
    (
        vec![
            StateField {
                name: format_ident!("__m0"),
                kind: FieldKind::Marker,
                param: marker_param.clone(),
            },
            StateField {
                name: format_ident!("__callee"),
                kind: FieldKind::Callee,
                param: marker_param.clone(),
            },
        ],
        vec![quote!(__m0: #mark), quote!(__callee: __callee)],
    )
}

/// Items for a step whose saga awaits calls: the kind of a call that returns a request
/// (`fn ask(..) -> ElicitForm<bool>`, awaited as `ask(..).await`). Such a request was made
/// by the function, where saga cannot suspend, so it is refused, at the call, with an
/// error that says what to write instead; rustc alone would say that `ElicitForm<bool>`
/// is not a future and suggest removing the `.await`, which is wrong. Method resolution
/// tries this kind (on `&&&Probe<R>`) after a helper's (`&&Probe<SagaCall<..>>`) and
/// before an ordinary future's (`&Probe<F>`), for a request type only.
pub fn request_kind_items() -> Vec<syn::Item> {
    let private = private_path();
    let file: syn::File = syn::parse_quote! {
        #[diagnostic::on_unimplemented(
            message = "`{Self}` is a request returned by a function, and a saga cannot suspend at it: a saga suspends where a request is made and awaited (`elicit(..).await`), or at a `#[saga_fn]` helper",
            label = "this call returns a request made outside the saga",
            note = "make the function a helper that awaits the request, and keep this call as it is: `#[saga_fn] async fn ask(..) -> Result<bool, SagaError> { elicit::<bool>(..).await }`",
            note = "or make the request here, `elicit::<bool>(question(..)).await`, keeping in the function only what builds its message"
        )]
        #[allow(non_camel_case_types)]
        trait __SagaRequestMadeElsewhere {}

        // An impl no request has, so that rustc does not suggest adding one.
        #[diagnostic::do_not_recommend]
        impl __SagaRequestMadeElsewhere for () {}

        #[allow(non_camel_case_types)]
        trait __SagaViaRequest {
            type Kind;
            fn kind(&self) -> Self::Kind;
        }

        impl<R: #private::Suspension> __SagaViaRequest for &&#private::Probe<R> {
            type Kind = __SagaRequestKind<R::Output>;
            fn kind(&self) -> Self::Kind {
                __SagaRequestKind(::core::marker::PhantomData)
            }
        }

        /// Never run: every use of it is refused by `drive`.
        #[allow(non_camel_case_types, dead_code)]
        struct __SagaRequestKind<O>(::core::marker::PhantomData<fn() -> O>);

        impl<O> ::core::default::Default for __SagaRequestKind<O> {
            fn default() -> Self {
                __SagaRequestKind(::core::marker::PhantomData)
            }
        }

        // Saves nothing, as an ordinary future's site.
        impl<O> #private::CallSaves for __SagaRequestKind<O> {
            type Across = #private::NoSuspension;
        }

        #[allow(dead_code, clippy::all)]
        impl<O> __SagaRequestKind<O> {
            async fn drive<F: __SagaRequestMadeElsewhere>(
                self,
                _call: F,
                _answers: &mut impl ::core::borrow::BorrowMut<#private::Answers>,
                _cx: &#private::SagaContext,
            ) -> #private::FnStep<O> {
                ::core::unreachable!()
            }
            async fn resume(
                self,
                _state: ::std::vec::Vec<u8>,
                _answers: &mut impl ::core::borrow::BorrowMut<#private::Answers>,
                _cx: &#private::SagaContext,
            ) -> #private::FnStep<O> {
                ::core::unreachable!()
            }
            fn restore<T>(self, saved: #private::Slot<#private::Unreachable<T>>) -> T {
                <#private::FutureKind<O> as ::core::default::Default>::default().restore(saved)
            }
            fn trace_callee(self, variant: &'static str) {
                <#private::FutureKind<O> as ::core::default::Default>::default().trace_callee(variant)
            }
            fn placeholder<F>(self, _call: F) -> O {
                ::core::unreachable!()
            }
        }
    };
    file.items
}
