//! When the function cannot be compiled into a saga: the errors; the function itself,
//! under a hidden name and with its suspensions replaced by typed placeholders, so that
//! IDEs keep analysing it; and the tool's struct with a `SagaTool` impl that does nothing,
//! so that the code registering the tool does not add errors of its own.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;

use crate::shared::private_path;

pub fn expand(kind: crate::tool::ServedAs, item: &ItemFn, error: syn::Error) -> TokenStream {
    let mut item = item.clone();
    // `#[arg]` only means something to the macro; left on, rustc would add errors.
    for input in &mut item.sig.inputs {
        if let syn::FnArg::Typed(typed) = input {
            typed.attrs.retain(|attr| !attr.path().is_ident("arg"));
        }
    }
    let item = &item;
    let private = private_path();
    let vis = &item.vis;
    let name = &item.sig.ident;
    let errors = error.to_compile_error();
    if item.sig.receiver().is_some() {
        // Inside an `impl`, where a struct cannot go: the function as written, so that
        // the only errors are the macro's.
        return quote!(#errors #item);
    }
    let mut kept = item.clone();
    kept.sig.ident = quote::format_ident!("__saga_unexpanded_{}", name);
    kept.sig.asyncness = Some(Default::default());
    kept.sig.constness = None;
    kept.sig.variadic = None;
    kept.attrs.retain(|attr| attr.path().is_ident("doc"));
    *kept.block = crate::tool::emit::unexpanded::unexpanded((*kept.block).clone());
    let marker = kind.marker_impl(name, &private);
    quote! {
        #errors

        #[doc(hidden)]
        #[allow(dead_code, unused, unreachable_code, non_snake_case, clippy::all)]
        #kept

        #[allow(non_camel_case_types)]
        #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug, ::core::default::Default)]
        #vis struct #name;

        impl #private::SagaTool for #name {
            type State = ();
            fn tool(&self) -> #private::Tool {
                #private::Tool::new(stringify!(#name), "", ::std::sync::Arc::new(#private::JsonObject::new()))
            }
            fn start(&self, _: #private::JsonObject) -> ::core::result::Result<(), #private::ErrorData> {
                ::core::result::Result::Err(#private::ErrorData::internal_error("this tool did not compile", None))
            }
            async fn step(&self, _: (), _: #private::Answers, _: &#private::SagaContext) -> #private::Step<()> {
                #private::Step::done("this tool did not compile")
            }
        }

        #marker
    }
}
