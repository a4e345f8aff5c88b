//! What both macros need: the path to the runtime's support module, doc comments, a type
//! as written, and case conversion.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Attribute;

/// The runtime's support module, which generated code refers to.
pub fn private_path() -> TokenStream {
    quote!(::saga_runtime::__private)
}

/// [`private_path`] located at `span`: generated code whose error belongs at the user's
/// token is spanned there from its first token on (rustc reports an expression whose
/// tokens' spans cannot be joined at its first token).
pub fn private_path_at(span: proc_macro2::Span) -> TokenStream {
    quote::quote_spanned!(span=> ::saga_runtime::__private)
}

/// `span`'s place with the call site's name resolution: generated code there names the
/// expansion's own locals, whatever hygiene the user's tokens at `span` carry (a
/// `macro_rules!`'s caller's), while rustc still reports at `span`.
pub fn at_call_site(span: proc_macro2::Span) -> proc_macro2::Span {
    proc_macro2::Span::call_site().located_at(span)
}

/// The lines of the doc comment (`///` and `#[doc = "…"]`), as written.
pub fn doc_lines(attrs: &[Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .flat_map(|text| {
            text.split('\n')
                .map(|line| line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `snake_case` → `PascalCase`.
pub fn pascal(text: &str) -> String {
    text.split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|first| first.to_uppercase().chain(chars).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// A type's tokens as a user would write them: `Vec<String>`, not `Vec < String >`.
pub fn type_name(ty: &syn::Type) -> String {
    let text = quote::quote!(#ty).to_string();
    text.replace(" < ", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" ,", ",")
        .replace("& ", "&")
}
