//! `#[saga_fn]`: a helper that suspends. It compiles like a tool, to a state machine, but
//! its `step` is the runtime's `SagaFn::step`, run by the saga that awaits it. The
//! function keeps its name and parameters and returns a `SagaCall` holding its
//! arguments; everything else is declared inside it, so that the helper may be a free
//! function or an associated one.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{FnArg, Ident, ItemFn, Lifetime};

use crate::shared::private_path;
use crate::tool::check::helper::{LIFETIME, with_lifetime};
use crate::tool::ir::Compiled;

pub fn expand(compiled: Compiled) -> TokenStream {
    let Compiled {
        item,
        sig,
        sites,
        machine,
        items,
    } = compiled;
    let private = private_path();
    let step_lints = crate::tool::emit::tool::step_lints();
    let vis = &item.vis;
    let name = &item.sig.ident;
    let output = &sig.output;
    let attrs = &item.attrs;
    let lifetime = Lifetime::new(LIFETIME, proc_macro2::Span::call_site());

    let (inputs, borrows) = inputs(&item);
    let fields = sig.params.iter().map(|param| {
        let ident = &param.ident;
        let mut ty = param.ty.clone();
        with_lifetime(&mut ty);
        quote!(#ident: #ty)
    });
    let names: Vec<&Ident> = sig.params.iter().map(|param| &param.ident).collect();
    let context = match &sig.context {
        Some(ident) => quote!(let #ident: &#private::SagaContext = __cx;),
        None => quote!(let _ = __cx;),
    };
    let ignored_context = match &sig.context {
        Some(ident) => quote!(let _ = #ident;),
        None => quote!(),
    };
    let (generics, captures) = if borrows {
        (quote!(<#lifetime>), quote!(use<#lifetime>))
    } else {
        (quote!(), quote!(use<>))
    };

    let state = crate::tool::emit::tool::state_enum(&sites, &machine);
    let crate::tool::emit::tool::StateEnum {
        definition,
        slot_type,
        resume,
        trace,
    } = state;
    let keep_shim =
        crate::tool::emit::keep::keep_shim(&sites, machine.locates, machine.literals.as_deref());
    let build_tag = crate::tool::emit::tool::build_tag(&item);
    let diagram = crate::tool::emit::diagram::generated::helper(&item, &sig, &sites);
    let (diagram_doc, diagram_method) = (diagram.doc, diagram.method);
    let step_body = step_body(&sig, &machine, (slot_type, resume, trace), &private);

    quote! {
        #(#attrs)*
        #diagram_doc
        #[allow(clippy::needless_lifetimes)]
        #vis fn #name #generics (#(#inputs),*)
            -> #private::SagaCall<impl #private::SagaFn<Output = #output> + #captures>
        {
            #ignored_context

            #[allow(non_camel_case_types)]
            struct __SagaFn<#lifetime> {
                #(#fields,)*
                __lifetime: ::core::marker::PhantomData<&#lifetime ()>,
            }

            impl<#lifetime> __SagaFn<#lifetime> {
                fn __finish(output: #output) -> #private::FnStep<#output> {
                    #private::FnStep::Done(output)
                }
            }

            impl<#lifetime> #private::SagaFn for __SagaFn<#lifetime> {
                type Output = #output;
                type Resumed = __SagaFn<'static>;

                fn build_tag() -> u16 {
                    #build_tag
                }

                #diagram_method

                #step_lints
                async fn step<'__step>(
                    __state: #private::FnState<Self>,
                    mut __answers: &'__step mut #private::Answers,
                    __cx: &'__step #private::SagaContext,
                ) -> #private::FnStep<#output>
                where
                    Self: '__step,
                {
                    #(#items)*
                    #context
                    #keep_shim
                    #definition
                    #step_body
                }

            }

            #private::SagaCall::new(__SagaFn {
                #(#names,)*
                __lifetime: ::core::marker::PhantomData,
            })
        }
    }
}

/// The helper's parameters as its function takes them, each type given the helper's
/// lifetime where it borrows; and whether any does.
fn inputs(item: &ItemFn) -> (Vec<TokenStream>, bool) {
    let mut borrows = false;
    let mut inputs = Vec::new();
    for input in &item.sig.inputs {
        let FnArg::Typed(typed) = input else { continue };
        let mut ty = (*typed.ty).clone();
        borrows |= with_lifetime(&mut ty);
        let pat = match &*typed.pat {
            syn::Pat::Ident(pat) => {
                let ident = &pat.ident;
                quote!(#ident)
            }
            other => quote!(#other),
        };
        inputs.push(quote!(#pat: #ty));
    }
    (inputs, borrows)
}

/// The body of the helper's `step`: its start, its trace mode, and its resumption.
/// `(slot_type, resume, trace)` are the state enum's.
fn step_body(
    sig: &crate::tool::parse::sig::Signature,
    machine: &crate::tool::ir::Machine,
    (slot_type, resume, trace): (TokenStream, TokenStream, TokenStream),
    private: &TokenStream,
) -> TokenStream {
    let names: Vec<&Ident> = sig.params.iter().map(|param| &param.ident).collect();
    let rebind_mut: Vec<TokenStream> = sig
        .params
        .iter()
        .filter(|param| param.mutable)
        .map(|param| {
            let ident = &param.ident;
            quote!(let mut #ident = #ident;)
        })
        .collect();
    let start = &machine.start;
    // Enclosed, so that a `return` the macro cannot see ends the saga (see `rewrite`).
    crate::tool::lower::rewrite::enclose(
        quote! {
            let __slot: #private::StateSlot<#slot_type> = ::core::marker::PhantomData;
            match __state {
                #private::FnState::Start(__SagaFn { #(#names,)* .. }) => {
                    #(#rebind_mut)*
                    #start
                }
                #private::FnState::Trace => {
                    #trace
                }
                #private::FnState::Resume(__bytes) => {
                    #resume
                }
            }
        },
        machine.carrier,
    )
}

/// When the helper cannot be compiled: the errors, and the function as written (with its
/// suspensions replaced by typed placeholders) under its own name, so that IDEs keep
/// analysing it and its callers add no errors of their own.
///
/// A helper that calls itself keeps an empty body, so that rustc does not report the
/// recursion a second time.
pub fn fallback(original: &ItemFn, error: syn::Error, recursive: bool) -> TokenStream {
    let errors = error.to_compile_error();
    let mut kept = original.clone();
    kept.sig.asyncness = Some(Default::default());
    *kept.block = if recursive {
        syn::parse_quote!({ ::core::unreachable!() })
    } else {
        crate::tool::emit::unexpanded::unexpanded((*kept.block).clone())
    };
    quote! {
        #errors
        #[allow(unused, unreachable_code, clippy::all)]
        #kept
    }
}
