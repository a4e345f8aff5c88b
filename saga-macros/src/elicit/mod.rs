//! `#[derive(Elicit)]`: parse into a small AST, validate (collecting every error), then
//! expand; on error, emit the errors and a stub impl so nothing else cascades.

mod ast;
mod attr;
mod case;
mod expand;
mod fallback;
mod valid;

use proc_macro2::TokenStream;
use syn::DeriveInput;

pub fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let parsed = ast::Input::from_syn(input, &mut errors);
    if let Some(parsed) = &parsed {
        valid::check(parsed, &mut errors);
    }
    match (errors.into_error(), parsed) {
        (None, Some(parsed)) => expand::derive(&parsed),
        (Some(error), _) => fallback::expand(input, error),
        (None, None) => fallback::expand(
            input,
            syn::Error::new_spanned(&input.ident, "`#[derive(Elicit)]` could not read this type"),
        ),
    }
}

pub use crate::errors::Errors;
