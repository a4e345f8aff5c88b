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

pub(crate) mod frame;
pub(crate) mod profile;
pub(crate) mod shape;
pub(crate) mod tracer;

use serde::de;

use super::slot::same::same_value;
use super::slot::saved::Saved;

use profile::EMPTY_ROOT;
use shape::Format;
pub use shape::LayoutError;
pub(crate) use shape::Traced;

use profile::{MAX_PASSES, PROFILES, Profile};
use tracer::{TraceSession, Tracer};

/// Traces `T` as postcard would read it.
pub(crate) fn trace<T: de::DeserializeOwned>() -> Result<Traced, LayoutError> {
    // Only the trace with a profile is `T`'s: trying the profiles is compiled once.
    trace_profiles(std::any::type_name::<T>(), &mut |profile| {
        trace_with::<T>(profile, &mut |_| Ok(()))
    })
}

/// [`trace`], each profile tried with `attempt` until one traces.
fn trace_profiles(
    type_name: &str,
    attempt: &mut dyn FnMut(Profile) -> Result<Traced, TraceStop>,
) -> Result<Traced, LayoutError> {
    let mut last = LayoutError("no profile".into());
    for profile in PROFILES {
        match attempt(*profile) {
            Ok(traced) => return Ok(traced),
            Err(TraceStop::Trace(error)) if error.0 == EMPTY_ROOT => return Err(error),
            Err(TraceStop::Trace(error) | TraceStop::Value(error)) => last = error,
        }
    }
    Err(LayoutError(format!(
        "the saved state `{}` cannot be traced: {}. saga reads the layout of what a saga \
         saves by deserializing sample values (empty and short strings, 0 and 1, a date, a \
         URL, an email address) when the server is built, so that no token is ever read into \
         another layout; a hand-written tool's state must be postcard-compatible (no \
         serde_json::Value, untagged or internally tagged enums, flatten) and accept one of \
         those samples. A #[saga_tool] keeps such values itself (as MessagePack): write the tool \
         with the macro, or keep the value as a String in the hand-written state",
        type_name, last.0
    )))
}

/// Traces a generated state enum of `shape` as postcard would read it, each field by
/// `field`: the layout its derived `Deserialize` traced (see `identity::state_enum`).
/// `type_name` names it in an error.
pub(crate) fn trace_state_shape(
    type_name: &str,
    shape: &tracer::StateShape,
    field: tracer::StateFieldTrace,
) -> Result<Traced, LayoutError> {
    trace_profiles(type_name, &mut |profile| {
        trace_passes(profile, &mut |session, format| {
            let root = Tracer {
                session,
                out: format,
                depth: 0,
                ty: "",
                field: false,
            };
            tracer::trace_state_enum(root, shape, field).map_err(TraceStop::Trace)
        })
    })
}

/// Whether postcard reads back what `T` writes: `T` traces, and sample values of each
/// of its variants, filled and minimal (options `None`, sequences and maps empty), read
/// back as themselves: the index of the profile it traced with. Why not, otherwise. This
/// decides whether a saved local is kept as postcard or as MessagePack ([`super::slot`]).
pub(crate) fn postcard_reads<T: serde::Serialize + de::DeserializeOwned>()
-> Result<usize, LayoutError> {
    // Only making a sample and reading it back are `T`'s: the rest is compiled once.
    postcard_reads_with(&mut |session, format| {
        let value = traced::<T>(session, format).map_err(TraceStop::Trace)?;
        reads_back(&value).map_err(TraceStop::Value)
    })
}

/// [`postcard_reads`]: `sample` makes a sample in a session and reads it back; every pass
/// of a trace with a profile, then the minimal samples of the profile that traced.
fn postcard_reads_with(
    sample: &mut dyn FnMut(&mut TraceSession, &mut Format) -> Result<(), TraceStop>,
) -> Result<usize, LayoutError> {
    let mut last = LayoutError("no profile".into());
    for (index, profile) in PROFILES.iter().enumerate() {
        match trace_passes(*profile, sample) {
            Ok(_) => {
                // The minimal sample, where `skip_serializing_if` predicates most often
                // hold; a type that refuses it (a non-empty list) has no such value.
                for empty in [false, true] {
                    let mut session = minimal_session(*profile, empty);
                    if let Err(TraceStop::Value(error)) = sample(&mut session, &mut Format::Unknown)
                    {
                        return Err(error);
                    }
                }
                return Ok(index);
            }
            // No value of an enum without variants exists: postcard never meets one.
            Err(TraceStop::Trace(error)) if error.0 == EMPTY_ROOT => return Ok(0),
            Err(TraceStop::Value(error)) => return Err(error),
            Err(TraceStop::Trace(error)) => last = error,
        }
    }
    Err(last)
}

/// Whether postcard reads `value` back as itself.
fn reads_back(value: &dyn Saved) -> Result<(), LayoutError> {
    postcard_read_back(value).map(drop).map_err(|reason| {
        LayoutError(format!(
            "a sample value does not read back with postcard: {reason}"
        ))
    })
}

/// Postcard of `value`, if it reads back as itself: to the last byte, as a value that
/// writes the same bytes, or (a collection whose order is its hasher's) the same value
/// ([`same_value`]). The samples' check and the tagged slots' writing share it.
// Through `Saved`: compiled once, not once per saved type.
pub(crate) fn postcard_read_back(value: &dyn Saved) -> Result<Vec<u8>, String> {
    let bytes = value.postcard().map_err(|error| error.to_string())?;
    let (again, left) = value
        .read_postcard(&bytes)
        .map_err(|error| error.to_string())?;
    if left != 0 {
        return Err("bytes are left over".into());
    }
    if again.postcard().is_ok_and(|written| written == bytes) || same_value(value, &*again) {
        Ok(bytes)
    } else {
        Err("it reads back as another value".into())
    }
}

/// What stopped a trace: the type, or a sample value the caller refused.
enum TraceStop {
    Trace(LayoutError),
    Value(LayoutError),
}

fn trace_with<T: de::DeserializeOwned>(
    profile: Profile,
    each: &mut dyn FnMut(T) -> Result<(), LayoutError>,
) -> Result<Traced, TraceStop> {
    // Only the pass itself has `T`'s type: the passes are compiled once for every type.
    trace_passes(profile, &mut |session, format| {
        let value = traced::<T>(session, format).map_err(TraceStop::Trace)?;
        each(value).map_err(TraceStop::Value)
    })
}

/// A `T` as the tracer makes one in `session`, its layout written to `out`: the one
/// place a type's `Deserialize` meets the tracer.
// Out of line: its callers (each pass of a trace, the minimal samples) share one copy of
// `T`'s reading.
#[inline(never)]
fn traced<T: de::DeserializeOwned>(
    session: &mut TraceSession,
    out: &mut Format,
) -> Result<T, LayoutError> {
    T::deserialize(Tracer {
        session,
        out,
        depth: 0,
        // The root is one position: its key needs no type to tell it from another
        // instance of its generic type, and a state enum's type name runs to kilobytes
        // (one parameter per saved local), which every pass would copy and compare.
        ty: "",
        field: false,
    })
}

/// [`trace_with`]'s passes, each running `pass` once, until every variant is explored.
fn trace_passes(
    profile: Profile,
    pass: &mut dyn FnMut(&mut TraceSession, &mut Format) -> Result<(), TraceStop>,
) -> Result<Traced, TraceStop> {
    let mut session = TraceSession::new(profile);
    let mut root = Format::Unknown;
    for _ in 0..MAX_PASSES {
        session.first_pick = session.plan();
        let mut format = Format::Unknown;
        pass(&mut session, &mut format)?;
        root.merge(format)
            .map_err(|reason| TraceStop::Trace(LayoutError(reason)))?;
        if session.plan().is_empty() {
            return Ok(Traced {
                root,
                registry: session.registry,
                names: session.names,
            });
        }
    }
    Err(TraceStop::Trace(LayoutError(
        "too many enum variants to explore".into(),
    )))
}

/// The session of a minimal sample: every option `None`, and (if `empty`) every sequence
/// and map empty and the first variant that does not contain itself. A type may refuse it.
fn minimal_session(profile: Profile, empty: bool) -> TraceSession {
    let mut session = TraceSession::new(profile);
    session.no_options = true;
    if empty {
        // The way out of a recursion, from the start: sequences and maps empty too.
        session.terminating = 1;
    }
    session
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

    #[derive(Deserialize, serde::Serialize)]
    #[allow(dead_code)]
    struct Skips {
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        id: u32,
    }

    #[derive(Deserialize, serde::Serialize)]
    #[allow(dead_code)]
    struct SkipsEmpty {
        id: u32,
        #[serde(skip_serializing_if = "Vec::is_empty", default)]
        tags: Vec<String>,
    }

    #[derive(Deserialize, serde::Serialize)]
    #[allow(dead_code)]
    enum SkipsInAVariant {
        Plain(u8),
        Later {
            #[serde(skip_serializing_if = "String::is_empty")]
            name: String,
        },
    }

    #[test]
    fn what_postcard_cannot_read_back_is_found_by_samples() {
        assert!(postcard_reads::<Transfer2>().is_ok());
        assert!(postcard_reads::<std::collections::HashMap<String, String>>().is_ok());
        assert!(postcard_reads::<serde_json::Value>().is_err());
        assert!(postcard_reads::<Skips>().is_err());
        assert!(postcard_reads::<SkipsEmpty>().is_err());
        assert!(postcard_reads::<SkipsInAVariant>().is_err());
        assert!(postcard_reads::<Vec<Skips>>().is_err());
    }

    #[derive(Deserialize, serde::Serialize)]
    #[allow(dead_code)]
    struct Transfer2 {
        from: String,
        cents: Option<u64>,
        #[serde(default)]
        memo: String,
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
