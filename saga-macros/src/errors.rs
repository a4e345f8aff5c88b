//! Collecting every error of an expansion, serde_derive style, so the user sees them all
//! at once.

/// Every error found, combined into one `syn::Error` (one `compile_error!` each).
#[derive(Default)]
pub struct Errors(pub Option<syn::Error>);

impl Errors {
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub fn at(&mut self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// The combined error, if any was pushed.
    pub fn into_error(self) -> Option<syn::Error> {
        self.0
    }
}
