//! The serde layout of a saved state, traced at run time from its `Deserialize` impl.
//!
//! postcard is not self-describing: the bytes of a state say nothing of the types that
//! wrote them. So a token names the suspension point it stopped at and an identity of that
//! point's layout, and a build resumes it only where both match (see [`super::points`]).
//! This module computes the layout: field names and order, the type of each field, the
//! variants of every enum, helpers' nested states, as text.
//!
//! Why a tracer of our own rather than serde-reflection or postcard's `Schema` derive:
//! `Schema` needs a derive on every user type (a saved `struct Transfer` would need it),
//! and serde-reflection needs sample values for types whose `Deserialize` validates, and
//! has no hook for the helpers' states, which are nested as bytes. This tracer is a
//! `Deserializer` that answers every request with a sample and records what was asked,
//! as postcard would be asked (`is_human_readable` is false). It runs once per tool when
//! the server is built (measured in BENCHMARKS.md), never per request.
//!
//! Enums are explored variant by variant over repeated passes. Recursive types end where
//! a type re-enters itself: from there on options are `None`, sequences empty, and an
//! enum takes a variant not already being traced. Types whose `Deserialize` refuses the
//! plain samples (`NonZeroU32`, a URL, a date) are retried with other sample profiles;
//! a type no profile satisfies is an error, so that no state is ever resumed on a guess.
//!
//! The files: `shape.rs` holds what a trace finds and its text, `profile.rs` the samples
//! a trace answers with, `tracer.rs` the `Deserializer` that records, and `frame.rs` the
//! per-thread frame a macro saga's step records its states into.

mod frame;
mod profile;
mod shape;
mod tracer;

use std::collections::BTreeMap;

use serde::de;

pub(crate) use frame::{Frame, in_frame, record_callee, record_state, record_unreachable, tracing};
pub(crate) use profile::{EMPTY_ROOT, MACRO_STATE, UNREACHABLE};
use shape::Format;
pub use shape::LayoutError;
pub(crate) use shape::Traced;

use profile::{MAX_PASSES, PROFILES, Profile};
use tracer::{Session, Tracer};

/// Traces `T` as postcard would read it.
pub(crate) fn trace<T: de::DeserializeOwned>() -> Result<Traced, LayoutError> {
    let mut last = LayoutError("no profile".into());
    for profile in PROFILES {
        match trace_with::<T>(*profile) {
            Ok(traced) => return Ok(traced),
            Err(error) if error.0 == EMPTY_ROOT => return Err(error),
            Err(error) => last = error,
        }
    }
    Err(LayoutError(format!(
        "the saved state `{}` cannot be traced: {}. saga reads the layout of what a saga \
         saves by deserializing sample values (empty and short strings, 0 and 1, a date, a \
         URL, an email address) when the server is built, so that no token is ever read into \
         another layout; a saved type must be postcard-compatible (no serde_json::Value, \
         untagged or internally tagged enums, flatten) and accept one of those samples: \
         save the plain data (a String) and check it after the suspension instead",
        std::any::type_name::<T>(),
        last.0
    )))
}

fn trace_with<T: de::DeserializeOwned>(profile: Profile) -> Result<Traced, LayoutError> {
    let mut session = Session {
        profile,
        registry: BTreeMap::new(),
        names: BTreeMap::new(),
        first_pick: BTreeMap::new(),
        active: Vec::new(),
        active_variants: Vec::new(),
        terminating: 0,
    };
    let mut root = Format::Unknown;
    for _ in 0..MAX_PASSES {
        session.first_pick = session.plan();
        let mut format = Format::Unknown;
        T::deserialize(Tracer {
            session: &mut session,
            out: &mut format,
            depth: 0,
            ty: std::any::type_name::<T>(),
        })?;
        root.merge(format).map_err(LayoutError)?;
        if session.plan().is_empty() {
            return Ok(Traced {
                root,
                registry: session.registry,
                names: session.names,
            });
        }
    }
    Err(LayoutError("too many enum variants to explore".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    fn text<T: de::DeserializeOwned>() -> String {
        trace::<T>().expect("traces").render()
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Transfer {
        from: String,
        to: String,
        cents: u64,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct TransferSwapped {
        to: String,
        from: String,
        cents: u64,
    }

    #[test]
    fn field_names_order_and_types_are_in_the_layout() {
        assert_eq!(
            text::<Transfer>(),
            "\"Transfer\" { from: str, to: str, cents: u64 }"
        );
        assert_ne!(text::<Transfer>(), text::<TransferSwapped>());
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    enum Color {
        Red,
        Custom { rgb: (u8, u8, u8) },
        Named(String),
    }

    #[test]
    fn every_enum_variant_is_explored() {
        assert_eq!(
            text::<Vec<Option<Color>>>(),
            "[Option<\"Color\" enum { Red | Custom { rgb: (u8, u8, u8) } | Named(str) }>]"
        );
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    enum List {
        Cons(u8, Box<List>),
        Nil,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Tree {
        label: String,
        children: Vec<Tree>,
        parent: Option<Box<Tree>>,
        index: std::collections::BTreeMap<String, Tree>,
    }

    #[test]
    fn recursive_types_end() {
        // A type met again through another Rust type (`Box<List>`) is written out once
        // more before its recursion ends: deterministic, only longer.
        let list = text::<List>();
        assert!(
            list.starts_with("\"List\" enum { Cons(u8, \"List\" enum { Cons(u8, ^\"List\""),
            "{list}"
        );
        let tree = text::<Tree>();
        assert!(
            tree.starts_with("\"Tree\" { label: str, children: [\"Tree\""),
            "{tree}"
        );
        assert!(tree.contains("index: Map<str, \"Tree\""), "{tree}");
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    enum Outer {
        Plain,
        Other(u8),
        Holds { inner: Vec<Color> },
    }

    #[test]
    fn two_instances_of_one_generic_type_keep_their_own_layouts() {
        let text = text::<(Result<String, u8>, Result<Vec<u64>, u8>)>();
        assert_eq!(
            text,
            "(\"Result\" enum { Ok(str) | Err(u8) }, \"Result\" enum { Ok([u64]) | Err(u8) })"
        );
    }

    #[test]
    fn an_enum_reached_only_through_one_variant_is_explored_too() {
        let text = text::<Vec<Outer>>();
        assert!(
            text.contains("Red | Custom { rgb: (u8, u8, u8) } | Named(str)"),
            "{text}"
        );
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    enum Kind {
        Leaf,
        Branch(u8),
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Forest {
        children: Vec<Forest>,
        kind: Kind,
    }

    #[test]
    fn an_enum_first_met_inside_a_recursion_is_still_explored() {
        let text = text::<Forest>();
        assert!(text.contains("Leaf | Branch(u8)"), "{text}");
    }

    mod unit {
        #[derive(serde::Deserialize)]
        pub(super) struct Node;
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Node {
        next: Option<Box<Node>>,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    #[serde(rename = "Node")]
    struct NodeToUnit {
        next: Option<Box<NodeToUnit2>>,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    #[serde(rename = "Node")]
    struct NodeToUnit2 {
        next: Option<Box<unit::Node>>,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Renamed {
        #[serde(rename = "a: u8, b")]
        x: u8,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    #[serde(rename = "Renamed")]
    struct TwoFields {
        a: u8,
        b: u8,
    }

    #[test]
    fn a_back_reference_and_a_unit_struct_of_one_name_read_differently() {
        assert_ne!(text::<Node>(), text::<NodeToUnit>());
        assert_ne!(text::<Renamed>(), text::<TwoFields>());
    }

    #[test]
    fn validating_types_are_traced_with_other_samples() {
        assert_eq!(text::<std::num::NonZeroU32>(), "u32");
        assert_eq!(text::<std::net::IpAddr>(), text::<std::net::IpAddr>());
        assert!(text::<std::time::Duration>().contains("secs: u64"));
    }

    #[test]
    fn self_describing_types_are_refused() {
        assert!(trace::<serde_json::Value>().is_err());
    }

    #[test]
    fn each_root_variant_renders_alone() {
        let traced = trace::<Color>().expect("traces");
        let variants = traced.root_variants().expect("an enum");
        assert_eq!(
            variants,
            vec![
                ("Red".to_owned(), String::new()),
                ("Custom".to_owned(), " { rgb: (u8, u8, u8) }".to_owned()),
                ("Named".to_owned(), "(str)".to_owned()),
            ]
        );
    }
}
