//! Collecting every error of an expansion, serde_derive style, so the user sees them all
//! at once.

/// Every error found, combined into one `syn::Error` (one `compile_error!` each).
///
/// A collector must be checked ([`Errors::take`] or [`Errors::into_error`]) after its last
/// error was pushed, as serde_derive's `Ctxt` must: one dropped unchecked would swallow
/// errors and expand a broken item silently, so dropping it is a bug of this crate, and
/// panics.
#[derive(Default)]
pub struct Errors {
    found: Option<syn::Error>,
    /// Whether every error pushed so far has been taken.
    checked: bool,
}

impl Errors {
    pub fn push(&mut self, error: syn::Error) {
        self.checked = false;
        match &mut self.found {
            Some(all) => all.combine(error),
            None => self.found = Some(error),
        }
    }

    pub fn at(&mut self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// The errors pushed so far, combined; the collector goes on, empty.
    pub fn take(&mut self) -> Option<syn::Error> {
        self.checked = true;
        self.found.take()
    }

    /// The combined error, if any was pushed: the last check.
    pub fn into_error(mut self) -> Option<syn::Error> {
        self.take()
    }
}

impl Drop for Errors {
    fn drop(&mut self) {
        if !self.checked && !std::thread::panicking() {
            panic!("saga-macros: an error collector was dropped without being checked");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Errors;

    fn error(message: &str) -> syn::Error {
        syn::Error::new(proc_macro2::Span::call_site(), message)
    }

    #[test]
    fn every_error_pushed_comes_out_combined() {
        let mut errors = Errors::default();
        errors.push(error("first"));
        errors.push(error("second"));
        let combined = errors.into_error().expect("two errors");
        assert_eq!(combined.into_iter().count(), 2);
    }

    #[test]
    #[should_panic(expected = "dropped without being checked")]
    fn a_collector_dropped_unchecked_panics() {
        let mut errors = Errors::default();
        errors.push(error("lost"));
    }

    #[test]
    #[should_panic(expected = "dropped without being checked")]
    fn an_error_pushed_after_the_last_check_must_be_checked_too() {
        let mut errors = Errors::default();
        assert!(errors.take().is_none());
        errors.push(error("late"));
    }

    #[test]
    fn a_checked_collector_drops_quietly() {
        let mut errors = Errors::default();
        errors.push(error("seen"));
        assert!(errors.take().is_some());
    }
}
