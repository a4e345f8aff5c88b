//! On error: the errors, plus stub impls so code that uses the type (`elicit::<T>`, a
//! field of this enum's type) does not pile further errors on top.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput};

pub fn expand(input: &DeriveInput, error: syn::Error) -> TokenStream {
    let errors = error.into_compile_error();
    let ident = &input.ident;
    // `Elicit` types are `'static` (the runtime keeps one schema per type): so is the
    // stub's, so that a generic type's only error is the one above.
    let mut generics = input.generics.clone();
    for param in generics.type_params_mut() {
        param.bounds.push(syn::parse_quote!('static));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let p = crate::shared::private_path();
    let map = quote!(#p::serde_json::Map<::std::string::String, #p::serde_json::Value>);
    let enum_impls = matches!(input.data, Data::Enum(_)).then(|| {
        quote! {
            impl #impl_generics #p::ElicitEnum for #ident #ty_generics #where_clause {
                const WIRE_NAMES: &'static [&'static str] = &[];
                const TITLES: &'static [&'static str] = &[];
                fn from_wire(_: &str) -> ::core::option::Option<Self> {
                    ::core::option::Option::None
                }
                fn to_wire(&self) -> &'static str {
                    ::core::unreachable!()
                }
            }

            impl #impl_generics #p::ElicitField for #ident #ty_generics #where_clause {
                fn property() -> #map {
                    ::core::unreachable!()
                }
                fn parse(
                    _: ::core::option::Option<&#p::serde_json::Value>,
                ) -> ::core::result::Result<Self, #p::FormError> {
                    ::core::unreachable!()
                }
            }
        }
    });
    quote! {
        #errors
        #[allow(non_local_definitions, clippy::all)]
        const _: () = {
            impl #impl_generics #p::Elicit for #ident #ty_generics #where_clause {
                fn requested_schema() -> #map {
                    ::core::unreachable!()
                }
                fn from_content(_: &#map) -> ::core::result::Result<Self, #p::FormError> {
                    ::core::unreachable!()
                }
            }
            #enum_impls
        };
    }
}
