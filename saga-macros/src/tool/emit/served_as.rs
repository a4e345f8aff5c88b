//! What a saga is served as: a tool, a prompt or a resource. All three compile the same
//! way; a prompt or resource also implements its marker trait, which its registration
//! requires, after a check that the function returns what that kind returns.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServedAs {
    /// `#[saga_tool]`.
    Tool,
    /// `#[saga_prompt]`.
    Prompt,
    /// `#[saga_resource]`.
    Resource,
}

impl ServedAs {
    /// The marker trait's impl, so that `.prompt(..)` or `.resource(..)` accepts the saga.
    pub fn marker_impl(self, name: &syn::Ident, private: &TokenStream) -> TokenStream {
        match self {
            ServedAs::Tool => quote!(),
            ServedAs::Prompt => quote!(impl #private::SagaPrompt for #name {}),
            ServedAs::Resource => quote!(impl #private::SagaResource for #name {}),
        }
    }

    /// The check that `output` is what this kind returns, its error on the return type.
    pub fn output_check(self, output: &syn::Type, private: &TokenStream) -> TokenStream {
        let check = match self {
            ServedAs::Tool => return quote!(),
            ServedAs::Prompt => quote!(prompt_output),
            ServedAs::Resource => quote!(resource_output),
        };
        let call = quote_spanned!(output.span()=> #private::#check::<#output>(););
        quote! {
            const _: () = {
                #[allow(dead_code)]
                fn __saga_output_is_of_its_kind() {
                    #call
                }
            };
        }
    }
}
