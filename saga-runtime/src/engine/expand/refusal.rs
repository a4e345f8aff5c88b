//! The refusal of a state this build would read as another value: what the expansions'
//! checks unwind with (constants that differ, a borrow recomputed or found again as
//! another value), apart so that each check's module names it without the others.

/// What a saga's restore unwinds with when the state it reads was saved by a build whose
/// constants differ: a `for` loop's constant changed before the loop's position, or none
/// of this build's literals has a saved `&'static str`'s text. The token opened (it is
/// this server's), but this build would read it as another saga, so the call is refused
/// like any token this build cannot read (`-32602`, counted as `other_constants`) rather
/// than reported as a panic in the tool's code; nothing of the tool ran after the
/// suspension yet. The reason goes to the log.
// Plumbing of the expansions' checks: only the runtime's unwind handling names it.
#[doc(hidden)]
#[derive(Debug)]
pub(crate) struct OtherConstants(String);

impl std::fmt::Display for OtherConstants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl crate::metrics::AsRefusal for OtherConstants {
    fn refusal(&self) -> crate::metrics::Refusal {
        crate::metrics::Refusal::OtherConstants
    }
}

/// Ends the transition with [`OtherConstants`]. `resume_unwind`, not `panic!`: nothing is
/// wrong with the tool's code, so the panic hook (which prints "panicked at") is not run;
/// the runtime's `catch_unwind` around every step turns it into the refusal.
#[cold]
pub(crate) fn other_constants(reason: String) -> ! {
    std::panic::resume_unwind(Box::new(OtherConstants(reason)))
}

/// Ends the transition with the refusal of a state this build reads as another value
/// (a borrow recomputed to another value, see `recompute`): the same refusal as a
/// constant that differs, for the same reason.
#[cold]
pub(crate) fn refuse_other_value(reason: String) -> ! {
    other_constants(reason)
}
