//! A suspension's site: the marker statement that stands for it until the machine is
//! built, and the name of the state variant that resumes it. Apart from the descent
//! because naming answers to what the user reads (the log, `state_names()`, the
//! diagram), not to the order of evaluation.

use proc_macro2::Span;
use quote::quote_spanned;
use syn::{Expr, Ident, Stmt};

use crate::shared::pascal;
use crate::tool::ir::{Site, Suspension};
use crate::tool::lower::{Lower, SITE_MACRO};

impl Lower<'_> {
    pub(super) fn site(
        &mut self,
        suspension: Suspension,
        hint: &str,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Expr {
        let id = self.sites.len();
        // At the suspension (with the call site's hygiene), so that what rustc reports
        // about the answer (`?` on it) points at the user's code.
        let answer = Ident::new(&format!("__a{id}"), crate::shared::at_call_site(span));
        let (variant, base) = self.variant_name(&suspension, hint);
        let marker = Ident::new(SITE_MACRO, span);
        let number = proc_macro2::Literal::usize_unsuffixed(id);
        let marker_stmt: Stmt =
            syn::parse2(quote_spanned!(span=> let #answer = #marker!(#number);))
                .unwrap_or_else(|_| syn::parse_quote!(let #answer = ();));
        out.push(marker_stmt);
        self.sites.push(Site {
            id,
            answer: answer.clone(),
            suspension,
            variant: Ident::new(&variant, span),
            base,
            source: self.source.clone(),
            span,
            for_loops: Vec::new(),
        });
        syn::parse2(quote_spanned!(span=> #answer)).unwrap_or_else(|_| syn::parse_quote!(#answer))
    }

    fn variant_name(&mut self, suspension: &Suspension, hint: &str) -> (String, String) {
        let kinds = suspension.kinds();
        let kind = if kinds.len() == 1 {
            pascal(kinds[0])
        } else {
            "Join".to_owned()
        };
        let base = format!("After{kind}{}", pascal(hint));
        // The rename pass numbers a binding that repeats (`__ok_2`): the site is named
        // after the binding as written, so that the sites sharing it are told apart.
        let written = format!("After{kind}{}", pascal(written_binding(hint)));
        let mut name = base.clone();
        let mut n = 1;
        while self.variants.contains(&name) {
            n += 1;
            name = format!("{base}{n}");
        }
        self.variants.push(name.clone());
        (name, written)
    }
}

/// A binding's name as the user wrote it, from the rename pass's `__{name}_{n}`.
fn written_binding(hint: &str) -> &str {
    hint.strip_prefix("__")
        .and_then(|rest| rest.rsplit_once('_'))
        .filter(|(_, number)| !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()))
        .map_or(hint, |(name, _)| name)
}
