//! The corpus: sagas covering every construct `#[saga_tool]` accepts, each run through the
//! differential harness (plain async function vs state machine with a seal/open round
//! trip at every step). One binary: `cargo test -p saga-workspace --test corpus`.

#![allow(deprecated)]

#[macro_use]
mod harness;

/// What the plain copy of a corpus file sees in place of saga's attributes: the plain
/// run's (`saga_examples::plain`), `join!` asking its requests as one round, and
/// `#[tokio::test]` leaving the file's tests out (they run once, in the file's own
/// module, where they compare the two).
#[allow(unused_imports)]
mod plain_prelude {
    pub use saga_examples::plain::skip as machine_only;
    pub use saga_examples::plain::{join, saga_fn, saga_tool};

    /// saga as the plain copy sees it, for attributes written with a path
    /// (`#[saga_runtime::prelude::saga_fn]`).
    pub mod saga_runtime {
        pub use ::saga_runtime::*;
        pub use saga_examples::plain::{join, saga_fn, saga_tool};

        pub mod prelude {
            pub use ::saga_runtime::prelude::*;
            pub use saga_examples::plain::{join, saga_fn, saga_tool};
        }
    }

    pub mod tokio {
        pub use ::tokio::*;
        pub use saga_examples::plain::skip as test;
    }
}

/// Borrows kept across a suspension (issue 55): bindings of patterns over borrowed loop
/// items, nested loops over a borrowed item's parts, `match` on a tuple of borrows, a
/// `&'static str` chosen among literals, `&mut` into saved state, and `for` over borrowed
/// hash maps and sets, each against the plain function.
mod borrows {
    #[allow(unused_imports)]
    use saga_examples::plain::keep as machine_only;
    include!("borrows.rs");

    /// The same file again, each saga a plain run (`saga_examples::plain`), which the
    /// differential tests above compare with its state machine; its tests are left out.
    #[allow(dead_code, unused_imports, unused_macros, clippy::all)]
    pub(crate) mod plain {
        use crate::plain_prelude::{join, machine_only, saga_fn, saga_runtime, saga_tool, tokio};
        include!("borrows.rs");
    }
}
/// A held-out corpus (issue 95): 24 tools written from the guide and the rustdoc alone,
/// keeping borrows across their suspensions as ordinary async Rust allows, each against
/// the plain function.
mod heldout {
    #[allow(unused_imports)]
    use saga_examples::plain::keep as machine_only;
    include!("heldout.rs");

    #[allow(dead_code, unused_imports, unused_macros, clippy::all)]
    pub(crate) mod plain {
        use crate::plain_prelude::{join, machine_only, saga_fn, saga_runtime, saga_tool, tokio};
        include!("heldout.rs");
    }
}
/// A second held-out corpus (issue 95): 24 more tools, texts in locals whose type is not
/// written, map lookups, `while let`, helpers that keep borrows, agent loops.
mod heldout2 {
    #[allow(unused_imports)]
    use saga_examples::plain::keep as machine_only;
    include!("heldout2.rs");

    #[allow(dead_code, unused_imports, unused_macros, clippy::all)]
    pub(crate) mod plain {
        use crate::plain_prelude::{join, machine_only, saga_fn, saga_runtime, saga_tool, tokio};
        include!("heldout2.rs");
    }
}
mod diagrams;
/// Borrows recomputed after a restore (issue 95): loops over any iterator chain of
/// borrowed data, `Vec<&T>` and tuples of borrows kept across suspensions, each against
/// the plain function; what recomputes to another value is refused.
mod recomputed {
    #[allow(unused_imports)]
    use saga_examples::plain::keep as machine_only;
    include!("recomputed.rs");

    /// The same file again, each saga a plain run (`saga_examples::plain`).
    #[allow(dead_code, unused_imports, unused_macros, clippy::all)]
    pub(crate) mod plain {
        use crate::plain_prelude::{join, machine_only, saga_fn, saga_runtime, saga_tool, tokio};
        include!("recomputed.rs");
    }
}
/// Borrows built up over statements (issue 95): `best = Some(f)`, `Vec<&T>` pushed in
/// nested loops, a guard's alternative, a user's method's borrow, kept as where each
/// points and found there again after a restore, each against the plain function.
mod located {
    #[allow(unused_imports)]
    use saga_examples::plain::keep as machine_only;
    include!("located.rs");

    /// The same file again, each saga a plain run (`saga_examples::plain`).
    #[allow(dead_code, unused_imports, unused_macros, clippy::all)]
    pub(crate) mod plain {
        use crate::plain_prelude::{join, machine_only, saga_fn, saga_runtime, saga_tool, tokio};
        include!("located.rs");
    }
}
/// Exits the macro cannot see: a `return` or `?` inside another crate's macro
/// (`anyhow::bail!`, `anyhow::ensure!`) or a `macro_rules!` of the user's. Each ends the
/// saga with its error, before or after a suspension and inside loops, exactly as it
/// leaves the function.
mod exits {
    #[allow(unused_imports)]
    use saga_examples::plain::keep as machine_only;
    include!("exits.rs");

    /// The same file again, each saga a plain run (`saga_examples::plain`), which the
    /// differential tests above compare with its state machine; its tests are left out.
    #[allow(dead_code, unused_imports, unused_macros, clippy::all)]
    pub(crate) mod plain {
        use crate::plain_prelude::{join, machine_only, saga_fn, saga_runtime, saga_tool, tokio};
        include!("exits.rs");
    }
}
/// Suspensions in every expression position (issue 9): operands, arguments, literals,
/// indexes, casts, conditions, `&&`/`||`, `let … else`, the standard macros, `break` and
/// `return` values. Side effects go to a log whose order the prompts and results show, so
/// that a wrong evaluation order changes the transcript.
mod expressions {
    #[allow(unused_imports)]
    use saga_examples::plain::keep as machine_only;
    include!("expressions.rs");

    /// The same file again, each saga a plain run (`saga_examples::plain`), which the
    /// differential tests above compare with its state machine; its tests are left out.
    #[allow(dead_code, unused_imports, unused_macros, clippy::all)]
    pub(crate) mod plain {
        use crate::plain_prelude::{join, machine_only, saga_fn, saga_runtime, saga_tool, tokio};
        include!("expressions.rs");
    }
}
/// Helpers that suspend (`#[saga_fn]`): called from tools and from other helpers, in
/// loops, with `?`, from many call sites, with borrowed parameters, beside ordinary async
/// functions, each run against the plain async function.
mod helpers {
    #[allow(unused_imports)]
    use saga_examples::plain::keep as machine_only;
    include!("helpers.rs");

    /// The same file again, each saga a plain run (`saga_examples::plain`), which the
    /// differential tests above compare with its state machine; its tests are left out.
    #[allow(dead_code, unused_imports, unused_macros, clippy::all)]
    pub(crate) mod plain {
        use crate::plain_prelude::{join, machine_only, saga_fn, saga_runtime, saga_tool, tokio};
        include!("helpers.rs");
    }
}
mod http;
/// A `while` with `break`, labelled `for` loops with `continue`, a `match` whose arms
/// suspend, and a `join!`.
mod loops {
    #[allow(unused_imports)]
    use saga_examples::plain::keep as machine_only;
    include!("loops.rs");

    /// The same file again, each saga a plain run (`saga_examples::plain`), which the
    /// differential tests above compare with its state machine; its tests are left out.
    #[allow(dead_code, unused_imports, unused_macros, clippy::all)]
    pub(crate) mod plain {
        use crate::plain_prelude::{join, machine_only, saga_fn, saga_runtime, saga_tool, tokio};
        include!("loops.rs");
    }
}
/// The sagas of the corpus, one per construct (or a few related ones), with the scripts
/// that answer them and their differential tests.
mod sagas {
    #[allow(unused_imports)]
    use saga_examples::plain::keep as machine_only;
    include!("sagas.rs");

    /// The same file again, each saga a plain run (`saga_examples::plain`), which the
    /// differential tests above compare with its state machine; its tests are left out.
    #[allow(dead_code, unused_imports, unused_macros, clippy::all)]
    pub(crate) mod plain {
        use crate::plain_prelude::{join, machine_only, saga_fn, saga_runtime, saga_tool, tokio};
        include!("sagas.rs");
    }
}
/// What users write that the first transform got wrong: a local overwritten after a
/// suspension (moved from, or declared without a value), a local named like the tool,
/// format specs naming locals, shorthand field patterns, an explicit `checkpoint` import.
mod writes {
    #[allow(unused_imports)]
    use saga_examples::plain::keep as machine_only;
    include!("writes.rs");

    /// The same file again, each saga a plain run (`saga_examples::plain`), which the
    /// differential tests above compare with its state machine; its tests are left out.
    #[allow(dead_code, unused_imports, unused_macros, clippy::all)]
    pub(crate) mod plain {
        use crate::plain_prelude::{join, machine_only, saga_fn, saga_runtime, saga_tool, tokio};
        include!("writes.rs");
    }
}

use saga_examples::harness::snapshots;
