//! A saved local's encoding: postcard where postcard reads the value back, MessagePack
//! where it cannot.
//!
//! # How a slot's encoding is chosen
//!
//! Every local a `#[saga_tool]` or `#[saga_fn]` keeps across a suspension is a *slot* of
//! its state enum: the macro wraps it in [`Slot`], and the slot chooses its encoding by
//! its Rust type, once per type and process:
//!
//! 1. **Postcard**, the default, when postcard reads back what the type writes. The slot
//!    is then transparent: its bytes, and the layout its point's identity hashes, are
//!    those of the bare type, so tools whose locals postcard reads keep their tokens byte
//!    for byte.
//! 2. **MessagePack** (`rmp-serde`, structs as maps), self-describing, when postcard
//!    cannot read the type:
//!    - its `Deserialize` asks for a self-describing format (`deserialize_any`:
//!      `serde_json::Value`, untagged and internally tagged enums, `flatten`), or no
//!      sample satisfies it, so the layout tracer ([`super::layout`]) cannot trace it;
//!    - or its `Serialize` writes what its `Deserialize` does not read
//!      (`skip_serializing_if`): sample values of every variant, with options `None`
//!      and sequences empty as well as filled, are written and read back with postcard
//!      when the type is first met, and a type whose samples do not read back as
//!      themselves is MessagePack;
//!    - or it holds `serde_json`'s `RawValue` (the tracer meets its private name): its
//!      map of one entry, the private name to the JSON text, is read back as a
//!      `RawValue` of that text, byte for byte. (Builds from `ac76824` until issue 80
//!      kept such a type as `serde_json`'s text, marked `J`; those slots are read still,
//!      [`json`].)
//!
//!    Such a slot is a byte string holding a one-byte marker of the encoding and the
//!    value's MessagePack, structs as maps of field names. Its layout is
//!    `msgpack "Type"`, the Rust type's name without its module paths: a renamed type,
//!    or a slot that changes encoding, changes the point's identity, and the token is
//!    refused, never misread. What such a slot holds is read as serde reads it from
//!    MessagePack: struct fields and enum variants by name (a field gained with a default
//!    or as an `Option` is filled in, one removed is ignored, a required one gained makes
//!    the old state unreadable, and that call ends with an error), tuples and tuple
//!    structs by position, a number as any numeric type that holds it. A change of
//!    meaning the names do not show (a field's unit, a tuple's order) needs a new
//!    `version`, as for postcard slots. In the tagged form (below), a value of a
//!    MessagePack type is always MessagePack. MessagePack was measured against JSON and CBOR
//!    (BENCHMARKS.md): the fastest and about as small as CBOR, and unlike JSON it keeps
//!    NaN and maps whose keys are not strings.
//! 3. **Per value, at the seal**, as a last resort. Samples cannot show every value's
//!    serialization (a `skip_serializing_if` predicate on a value no sample takes), so
//!    every postcard slot's value is walked when it is written, for a field it skips
//!    (serde_derive reports each one) or a length it cannot tell ([`skips`]): postcard
//!    reads by position, and a skipped field would shift the rest. Debug builds also read
//!    every such value back. (A MessagePack slot reads by
//!    name; what it holds is what the type's serde writes, as JSON would hold it.) A
//!    state with a slot that does not read back as itself is sealed again in the *tagged*
//!    form:
//!    each slot carries a one-byte tag, postcard for a value that reads back,
//!    MessagePack for one that does not. The tagged form is marked by the state's variant index, offset
//!    by [`TAGGED`](super::points::TAGGED); at the top of a tool's state the index is not sealed, so a tagged
//!    state is sealed under its point's tagged twin, another identity
//!    ([`super::points`]). The state type is remembered, and its later seals go to the
//!    tagged form directly.
//!
//! The decision depends on the type alone, so every replica of a build makes the same
//! one, and the layout a token's identity hashes names it.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::RwLock;

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde::ser::{self, Serializer};
use serde::{Deserialize, Serialize};

use super::fnv::FnvBuild;
use super::layout::shape::LayoutError;
use super::layout::tracer::FieldTracer;
use super::layout::{self};
use saved::Saved;

mod json;
mod json_number;
mod msgpack;
pub(crate) mod same;
pub(crate) mod saved;
mod skips;
pub(crate) mod values;
mod write;

/// A saved local in a state enum: encoded as postcard where postcard reads its type back,
/// as MessagePack (fields by name) where it cannot, decided once per type. Transparent in
/// a human-readable format (`saga inspect` shows the value as it is).
#[derive(Debug)]
pub struct Slot<T>(pub T);

/// A slot in the layout trace: reads as its value's layout, or as a MessagePack slot's marker,
/// and holds nothing, so that a trace never needs a value of a type it cannot trace
/// (a `serde_json::Value` has no layout to trace). What state enums derived before
/// [`trace_slot`]; its name stays part of every slot's key in the trace.
#[derive(Debug)]
pub(crate) struct SlotTrace<T>(PhantomData<fn() -> T>);

/// A saved local's field of a state enum, which the layout trace reads through another
/// type.
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
pub trait SlotField: Serialize + DeserializeOwned {
    /// The value it holds, which an inspection shows and the layout trace traces.
    type Shown: Serialize + DeserializeOwned;

    /// The value it holds: what a human-readable format shows of the slot.
    fn shown(&self) -> &Self::Shown;
}

impl<T: Serialize + DeserializeOwned> SlotField for Slot<T> {
    type Shown = T;

    fn shown(&self) -> &T {
        &self.0
    }
}

/// How one slot is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// Postcard; the index of the sample profile the type traced with.
    Postcard(usize),
    /// MessagePack; also for a type holding serde_json's `RawValue`, whose private name
    /// no other format keeps: saga's reader knows it (see [`json`]). (A type holding
    /// another of serde_json's private names is refused where it is read back.)
    MessagePack,
}

/// The first byte of a MessagePack slot's bytes (and a tagged slot's tag) as `rmp-serde`
/// wrote them, `Some(x)` as `x`: what slots sealed before issue 72 hold, still read as
/// they were written. No slot is written so any more.
const MSGPACK_MARK: u8 = b'M';
/// The first byte of a MessagePack slot's bytes (and a tagged slot's tag) as
/// [`write`] writes them, `Some(x)` marked: `Some(())`, `Some(None)` and
/// `Some(Value::Null)` read back as themselves, not as `None`. A build before this
/// marker refuses such a slot ("not marked with its encoding"), never misreads it.
const MSGPACK_SOME_MARK: u8 = b'O';
/// A tagged slot's tag for an inline postcard value.
const POSTCARD_MARK: u8 = b'P';
/// The first byte of a JSON slot's bytes: a type holding a `RawValue` as the builds from
/// `ac76824` to issue 80 wrote it (`serde_json`'s text), read still ([`json`]). No slot is
/// written so any more: such a type is MessagePack, which those builds refuse (an error,
/// never another value).
const JSON_MARK: u8 = b'J';

/// Each type's encoding, by its name, its size and its alignment (two types that share
/// all three and a name, say one crate at two versions, would share a decision: the seal's
/// read-back then catches a wrong one). Decided once per type and process.
type Key = (&'static str, usize, usize);
static ENCODINGS: RwLock<Option<HashMap<Key, Encoding, FnvBuild>>> = RwLock::new(None);

/// The encoding of `T`'s slots, decided at its first use.
pub(crate) fn encoding<T: Serialize + DeserializeOwned>() -> Encoding {
    let key = (
        std::any::type_name::<T>(),
        std::mem::size_of::<T>(),
        std::mem::align_of::<T>(),
    );
    // Only the trace is `T`'s: the table is compiled once.
    encoding_of(key, layout::postcard_reads::<T>)
}

fn encoding_of(
    key: Key,
    postcard_reads: fn() -> Result<usize, layout::shape::LayoutError>,
) -> Encoding {
    if let Ok(known) = ENCODINGS.read()
        && let Some(encoding) = known.as_ref().and_then(|known| known.get(&key))
    {
        return *encoding;
    }
    // Decided without the lock held: deciding traces the type, which may meet slots.
    let decided = match postcard_reads() {
        Ok(profile) => Encoding::Postcard(profile),
        Err(reason) if reason.is_json_only() => {
            tracing::debug!(
                r#type = key.0,
                "a saved local holding raw JSON is kept as MessagePack"
            );
            Encoding::MessagePack
        }
        Err(reason) => {
            tracing::debug!(
                r#type = key.0,
                %reason,
                "a saved local is kept as MessagePack"
            );
            Encoding::MessagePack
        }
    };
    if let Ok(mut known) = ENCODINGS.write() {
        known
            .get_or_insert_with(HashMap::default)
            .insert(key, decided);
    }
    decided
}

thread_local! {
    /// Whether the state being encoded or decoded on this thread is in the tagged form.
    static TAGGING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `run` with every slot it encodes or decodes in the tagged form (or not).
pub(crate) fn with_tagging<R>(tagged: bool, run: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            set_tagging(self.0);
        }
    }
    let _restore = Restore(set_tagging(tagged));
    run()
}

// The thread-locals are read and written by these functions only, never from generic
// code: each `with` in a generic function would be compiled again for every type.

/// Sets whether slots are in the tagged form on this thread; what it was.
fn set_tagging(tagged: bool) -> bool {
    TAGGING.with(|tagging| tagging.replace(tagged))
}

thread_local! {
    /// Set when a postcard slot did not read back as itself while its state was written.
    static NOT_READ_BACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Writes a state with `write` (postcard, each slot in its own encoding): `Ok(None)` if a postcard
/// slot's value does not read back as itself (the state is then sealed tagged).
pub(crate) fn write_untagged(
    write: &mut dyn FnMut() -> postcard::Result<Vec<u8>>,
) -> Result<Option<Vec<u8>>, String> {
    take_not_read_back();
    match write() {
        Ok(bytes) => Ok(Some(bytes)),
        Err(_) if take_not_read_back() => Ok(None),
        Err(error) => Err(error.to_string()),
    }
}

/// Notes that a postcard slot did not read back as itself.
fn note_not_read_back() {
    NOT_READ_BACK.with(|flag| flag.set(true));
}

/// Whether a postcard slot did not read back as itself; clears it.
fn take_not_read_back() -> bool {
    NOT_READ_BACK.with(|flag| flag.replace(false))
}

thread_local! {
    /// Set when a helper's state was sealed in the tagged form, until its caller, which
    /// seals next on this thread in the same step, takes it.
    static HELPER_TAGGED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Notes that a helper's state was just sealed in the tagged form.
pub(crate) fn note_helper_tagged() {
    HELPER_TAGGED.with(|flag| flag.set(true));
}

/// Whether a helper's state was just sealed in the tagged form; clears it.
pub(crate) fn take_helper_tagged() -> bool {
    HELPER_TAGGED.with(|flag| flag.replace(false))
}

fn tagging() -> bool {
    TAGGING.with(std::cell::Cell::get)
}

/// Postcard of `value`, if it reads back as itself.
fn postcard_of(value: &dyn Saved) -> Option<Vec<u8>> {
    layout::postcard_read_back(value).ok()
}

/// `value` as a MessagePack slot's bytes: the marker, then structs as maps of field names
/// (never `rmp_serde::to_vec`, which writes them as arrays and so reads them by position)
/// and `Some` marked ([`write`]).
fn msgpack_bytes(value: &dyn Saved) -> Result<Vec<u8>, msgpack::Error> {
    let mut bytes = vec![MSGPACK_SOME_MARK];
    value.write(&mut bytes)?;
    Ok(bytes)
}

/// A MessagePack (`M`, `O`) or JSON (`J`) slot's value behind its marker, read to its
/// last byte.
#[cfg(test)]
fn from_msgpack<T: DeserializeOwned>(marked: &[u8]) -> Result<T, String> {
    marked_input(marked)
        .and_then(|input| msgpack::read_input(&input))
        .map_err(|error| error.to_string())
}

/// What a slot's marker says its bytes are.
fn marked_input(marked: &[u8]) -> Result<msgpack::Input<'_>, msgpack::Error> {
    let (some_marked, bytes) = match marked.split_first() {
        Some((&MSGPACK_SOME_MARK, bytes)) => (true, bytes),
        Some((&MSGPACK_MARK, bytes)) => (false, bytes),
        Some((&JSON_MARK, json)) => return json::transcoded(json),
        _ => {
            return Err(msgpack::Error::new(
                "a saved local is not marked with its encoding",
            ));
        }
    };
    Ok(msgpack::Input::msgpack(bytes, some_marked))
}

impl<T: Serialize + DeserializeOwned> Serialize for Slot<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            return self.0.serialize(serializer);
        }
        match slot_written(&self.0, encoding::<T>()) {
            SlotWritten::Bare => match self.0.serialize(serializer) {
                Ok(written) => Ok(written),
                Err(error) => {
                    note_not_read_back();
                    Err(error)
                }
            },
            SlotWritten::Bytes(bytes) => serializer.serialize_bytes(&bytes),
            SlotWritten::Refused(reason) => Err(ser::Error::custom(reason)),
        }
    }
}

/// How a slot is written: what [`slot_written`] decided.
enum SlotWritten {
    /// As its value writes itself (an untagged postcard slot).
    Bare,
    /// As these bytes: a MessagePack slot's, or a tagged slot's.
    Bytes(Vec<u8>),
    /// Not at all, for this reason.
    Refused(std::borrow::Cow<'static, str>),
}

/// How a slot of `encoding` holding `value` is written. Through `Saved`, so compiled once
/// for every saved type ([`saved`]); only the bare writing is the type's own.
fn slot_written(value: &dyn Saved, encoding: Encoding) -> SlotWritten {
    if tagging() {
        // The tagged form: postcard for a value of a postcard type that reads back,
        // MessagePack otherwise. A MessagePack type is never written as postcard: a
        // build that changed it (as MessagePack allows) would read it by position.
        let postcard = match encoding {
            Encoding::Postcard(_) if !value.skips() => postcard_of(value),
            _ => None,
        };
        return match postcard {
            Some(mut postcard) => {
                postcard.insert(0, POSTCARD_MARK);
                SlotWritten::Bytes(postcard)
            }
            None => msgpack_checked(value),
        };
    }
    match encoding {
        Encoding::Postcard(_) => {
            // Postcard reads by position: a value that skips a field (a
            // `skip_serializing_if` no sample showed) must not be sealed so. Debug
            // builds also read every such value back. Either way, and for a value
            // postcard cannot write, the state is sealed again in the tagged form.
            if value.skips() || (cfg!(debug_assertions) && postcard_of(value).is_none()) {
                note_not_read_back();
                return SlotWritten::Refused("a saved local does not read back".into());
            }
            SlotWritten::Bare
        }
        Encoding::MessagePack => msgpack_checked(value),
    }
}

/// Whether every value of `T` reads back from what it writes, so that the seal need not
/// read it back to know (measured: reading back each JSON value at every seal cost a
/// first round that keeps a 1 KB `Value` 4–32 % of its throughput). serde_json's own
/// values write each key of a map once; a struct with `#[serde(flatten)]` may not. An
/// `Option<Value>` reads back as itself only because `Some` is marked ([`write`]):
/// `Some(Value::Null)` is not `None`.
fn reads_back_by_construction(name: &str) -> bool {
    use serde_json::{Map, Value};
    [
        std::any::type_name::<Value>(),
        std::any::type_name::<Map<String, Value>>(),
        std::any::type_name::<Vec<Value>>(),
        std::any::type_name::<Option<Value>>(),
    ]
    .contains(&name)
}

/// The error of a saved local that does not read back: the state is refused when it is
/// sealed, in this round, rather than sealed and found unreadable when it comes back. The
/// reason is kept for [`take_unreadable`] (postcard's errors drop a custom message).
fn not_read_back(reason: &dyn std::fmt::Display) -> SlotWritten {
    let reason = format!("a value the saga keeps does not read back: {reason}");
    UNREADABLE.with(|unreadable| *unreadable.borrow_mut() = Some(reason.clone()));
    SlotWritten::Refused(reason.into())
}

thread_local! {
    /// Why the state being sealed on this thread holds a value that does not read back.
    static UNREADABLE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Why the state just sealed on this thread failed because a saved local's value does not
/// read back (a `#[serde(flatten)]` map its caller filled with a key of the struct's own
/// fields), if it did; clears it. Such a failure is the caller's values', said to it.
pub(crate) fn take_unreadable() -> Option<String> {
    UNREADABLE.with(|unreadable| unreadable.borrow_mut().take())
}

/// [`msgpack_bytes`], read back: a value whose serde does not read back what it writes
/// (a skipped field without a default, a `#[serde(flatten)]` map the client filled with
/// a key of its struct's own, which is then written twice) is refused where it is saved,
/// not found unreadable when its token comes back; and so is one that reads back as
/// another value (an untagged enum whose variants overlap: `B(3)` written as `3`, read as
/// `A(Some(3))`), never read back changed. The value read back is written again and its
/// bytes compared (a hasher's order told apart from a change, [`same`]).
fn msgpack_checked(value: &dyn Saved) -> SlotWritten {
    let bytes = match msgpack_bytes(value) {
        Ok(bytes) => bytes,
        Err(error) => return SlotWritten::Refused(error.to_string().into()),
    };
    if values::counting() {
        // What the state costs once read back is counted where it is sealed, so that no
        // token is handed out that its server would not read ([`values`]).
        values::note_written(msgpack::values_in(&bytes[1..]));
    }
    if reads_back_by_construction(value.type_name()) && !cfg!(debug_assertions) {
        return SlotWritten::Bytes(bytes);
    }
    // The bytes just written, behind the marker of options marked.
    let again = match value.read_msgpack(&msgpack::Input::msgpack(&bytes[1..], true)) {
        Ok(again) => again,
        Err(error) => return not_read_back(&error),
    };
    if !same::reads_as_written(&bytes[1..], &*again) {
        return not_read_back(
            &"it reads back as another value (an untagged enum whose variants overlap?)",
        );
    }
    SlotWritten::Bytes(bytes)
}

impl<'de, T: Serialize + DeserializeOwned> Deserialize<'de> for Slot<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // The bare value in a human-readable format and in an untagged postcard slot (one
        // call of `T`'s reading, not two); else a byte string: MessagePack, or tagged,
        // where a postcard type's slot holds postcard behind its tag.
        let (bare, postcard) = match deserializer.is_human_readable() {
            true => (true, false),
            false => slot_form(encoding::<T>()),
        };
        if bare {
            return T::deserialize(deserializer).map(Slot);
        }
        let bytes = slot_bytes(deserializer)?;
        read_slot_bytes::<T>(&bytes, postcard)
            .map(Slot)
            .map_err(de::Error::custom)
    }
}

/// Whether a slot of `encoding` is read bare (an untagged postcard slot), and else whether
/// its byte string may hold postcard behind its tag.
fn slot_form(encoding: Encoding) -> (bool, bool) {
    let postcard = matches!(encoding, Encoding::Postcard(_));
    match tagging() {
        false => (postcard, false),
        true => (false, postcard),
    }
}

/// A slot's byte string, borrowed where the input lends it: through one visitor for
/// every saved type, and out of line, so that only the value's reading is `T`'s.
#[inline(never)]
fn slot_bytes<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<std::borrow::Cow<'de, [u8]>, D::Error> {
    deserializer.deserialize_byte_buf(SlotBytes)
}

/// The value a slot's byte string holds: MessagePack behind its marker, or postcard behind
/// its tag where `postcard` says the slot may hold it (a tagged slot of a postcard type).
fn read_slot_bytes<T: DeserializeOwned>(bytes: &[u8], postcard: bool) -> Result<T, msgpack::Error> {
    match slot_input(bytes, postcard)? {
        SlotInput::MessagePack(input) => msgpack::read_input(&input),
        SlotInput::Postcard(postcard) => {
            let (value, rest) = postcard::take_from_bytes::<T>(postcard).map_err(postcard_error)?;
            if !rest.is_empty() {
                return Err(msgpack::Error::new("trailing bytes in a saved local"));
            }
            Ok(value)
        }
    }
}

/// A tagged slot's postcard error, as the slot's reading reports it.
fn postcard_error(error: postcard::Error) -> msgpack::Error {
    msgpack::Error::new(&error.to_string())
}

/// What a slot's byte string holds, by its marker.
enum SlotInput<'a> {
    MessagePack(msgpack::Input<'a>),
    /// Postcard behind its tag (a tagged slot of a postcard type).
    Postcard(&'a [u8]),
}

/// What `bytes`, a slot's byte string, holds: MessagePack behind its marker, or postcard
/// behind its tag where `postcard` says the slot may hold it.
fn slot_input(bytes: &[u8], postcard: bool) -> Result<SlotInput<'_>, msgpack::Error> {
    match bytes.split_first() {
        Some((&POSTCARD_MARK, rest)) if postcard => Ok(SlotInput::Postcard(rest)),
        _ => marked_input(bytes).map(SlotInput::MessagePack),
    }
}

/// A slot's byte string, borrowed where the input lends it.
struct SlotBytes;

impl<'de> Visitor<'de> for SlotBytes {
    type Value = std::borrow::Cow<'de, [u8]>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a saved local's bytes")
    }

    fn visit_borrowed_bytes<E: de::Error>(self, bytes: &'de [u8]) -> Result<Self::Value, E> {
        Ok(bytes.into())
    }

    fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Self::Value, E> {
        Ok(bytes.to_vec().into())
    }

    fn visit_byte_buf<E: de::Error>(self, bytes: Vec<u8>) -> Result<Self::Value, E> {
        Ok(bytes.into())
    }
}

/// Traces the slot of a generated state enum holding a `T` (see `identity::state_enum`),
/// as `SlotTrace<T>`'s `Deserialize` traced it: only the value's own trace is `T`'s.
pub fn trace_slot<T: Serialize + DeserializeOwned>(
    tracer: FieldTracer<'_, '_>,
) -> Result<(), LayoutError> {
    let profile = match encoding::<T>() {
        Encoding::Postcard(profile) => Some(profile),
        Encoding::MessagePack => None,
    };
    tracer.slot(
        std::any::type_name::<PhantomData<SlotTrace<T>>>(),
        profile,
        std::any::type_name::<T>(),
        &mut |tracer| T::deserialize(tracer).map(drop),
    )
}

/// How the derived state enums traced a slot, before `trace_slot`: the tests' reference
/// for it (`identity::state_enum`'s tests trace both and compare).
#[cfg(test)]
mod reference {
    use std::marker::PhantomData;

    use serde::de::{DeserializeOwned, Deserializer, Visitor};
    use serde::{Deserialize, Serialize};

    use super::super::layout::profile::{SELF_DESCRIBED, SLOT_PROFILES};
    use super::{Encoding, SlotTrace, encoding};

    impl<'de, T: Serialize + DeserializeOwned> Deserialize<'de> for SlotTrace<T> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            match encoding::<T>() {
                // The bare type's layout, exactly as before slots were chosen, traced with the
                // samples the type takes.
                Encoding::Postcard(profile) => deserializer.deserialize_newtype_struct(
                    SLOT_PROFILES
                        .get(profile)
                        .copied()
                        .unwrap_or(SLOT_PROFILES[0]),
                    Traced::<T>(PhantomData),
                ),
                Encoding::MessagePack => deserializer
                    .deserialize_newtype_struct(SELF_DESCRIBED, TypeMarker::<T>(PhantomData)),
            }
        }
    }

    /// Reads a postcard slot's value inside the tracer's newtype, and drops it.
    struct Traced<T>(PhantomData<fn() -> T>);

    impl<'de, T: DeserializeOwned> Visitor<'de> for Traced<T> {
        type Value = SlotTrace<T>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a saved local")
        }

        fn visit_newtype_struct<D: Deserializer<'de>>(
            self,
            inner: D,
        ) -> Result<Self::Value, D::Error> {
            T::deserialize(inner).map(|_| SlotTrace(PhantomData))
        }
    }

    /// Tells the tracer a MessagePack slot's type: a unit struct named after it.
    struct TypeMarker<T>(PhantomData<fn() -> T>);

    impl<'de, T> Visitor<'de> for TypeMarker<T> {
        type Value = SlotTrace<T>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a MessagePack slot")
        }

        fn visit_newtype_struct<D: Deserializer<'de>>(
            self,
            inner: D,
        ) -> Result<Self::Value, D::Error> {
            struct Unit;
            impl Visitor<'_> for Unit {
                type Value = ();
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("a unit")
                }
                fn visit_unit<E>(self) -> Result<(), E> {
                    Ok(())
                }
            }
            inner.deserialize_unit_struct(std::any::type_name::<T>(), Unit)?;
            Ok(SlotTrace(PhantomData))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    enum Before {
        First(u8),
        Second { name: String },
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    enum After {
        Added,
        Second {
            name: String,
            #[serde(default)]
            extra: u8,
        },
        First(u8),
    }

    #[test]
    fn messagepack_slots_are_read_by_name() {
        let bytes = msgpack_bytes(&Before::Second { name: "x".into() }).expect("writes");
        assert_eq!(bytes[0], MSGPACK_SOME_MARK);
        let read: After = from_msgpack(&bytes).expect("reads by name");
        assert_eq!(
            read,
            After::Second {
                name: "x".into(),
                extra: 0
            }
        );
        let mut trailing = bytes.clone();
        trailing.push(0);
        assert!(from_msgpack::<After>(&trailing).is_err());
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    struct Transfer {
        from: String,
        cents: u64,
        memo: Option<String>,
        tags: Vec<String>,
    }

    /// A postcard slot writes the bare value's bytes: the tokens of tools whose locals
    /// postcard reads did not change when slots came.
    #[test]
    fn a_postcard_slot_is_the_bare_value_byte_for_byte() {
        let transfer = Transfer {
            from: "a".into(),
            cents: 1234,
            memo: None,
            tags: vec!["x".into()],
        };
        let map: HashMap<String, String> = [("k".to_owned(), "v".to_owned())].into();
        assert!(matches!(encoding::<Transfer>(), Encoding::Postcard(_)));
        assert_eq!(
            postcard::to_allocvec(&Slot(transfer.clone())).expect("writes"),
            postcard::to_allocvec(&transfer).expect("writes")
        );
        assert_eq!(
            postcard::to_allocvec(&Slot(map.clone())).expect("writes"),
            postcard::to_allocvec(&map).expect("writes")
        );
        assert_eq!(
            postcard::to_allocvec(&Slot(7u64)).expect("writes"),
            postcard::to_allocvec(&7u64).expect("writes")
        );
        let read: Slot<Transfer> =
            postcard::from_bytes(&postcard::to_allocvec(&transfer).expect("writes"))
                .expect("reads");
        assert_eq!(read.0, transfer);
    }

    /// A `Value` slot is MessagePack behind its marker, and reads back; a slot whose marker
    /// is not MessagePack's is refused, not read.
    #[test]
    fn a_value_slot_is_marked_messagepack_and_refuses_other_marks() {
        let value = serde_json::json!({"a": [1, null, {"b": 2.5}], "c": "d"});
        assert_eq!(encoding::<serde_json::Value>(), Encoding::MessagePack);
        let bytes = postcard::to_allocvec(&Slot(value.clone())).expect("writes");
        let read: Slot<serde_json::Value> = postcard::from_bytes(&bytes).expect("reads");
        assert_eq!(read.0, value);
        let (inner, _) = postcard::take_from_bytes::<Vec<u8>>(&bytes).expect("a byte string");
        assert_eq!(inner[0], MSGPACK_SOME_MARK);
        let mut other = inner.clone();
        other[0] = POSTCARD_MARK;
        let forged = postcard::to_allocvec(&other).expect("writes");
        assert!(postcard::from_bytes::<Slot<serde_json::Value>>(&forged).is_err());
        // Shown as itself in a human-readable format (inspection).
        assert_eq!(
            serde_json::to_value(Slot(value.clone())).expect("renders"),
            value
        );
    }

    /// A type holding raw JSON, which only `serde_json` wrote and read before issue 80.
    #[derive(Serialize, Deserialize, Debug)]
    struct Raw {
        id: Option<u32>,
        body: Box<serde_json::value::RawValue>,
        parts: Vec<Option<Box<serde_json::value::RawValue>>>,
        wide: i128,
        unit: (),
    }

    fn raw_sample() -> Raw {
        let raw = |text: &str| serde_json::value::RawValue::from_string(text.into()).expect("JSON");
        Raw {
            id: Some(7),
            body: raw(r#"{ "b" : [1, 2.50, 1e3], "a": null }"#),
            parts: vec![Some(raw(" \"x\" ")), None, Some(raw("[]"))],
            wide: i128::MIN,
            unit: (),
        }
    }

    fn raw_texts(raw: &Raw) -> Vec<String> {
        let mut texts = vec![raw.body.get().to_owned()];
        texts.extend(
            raw.parts
                .iter()
                .map(|part| format!("{:?}", part.as_ref().map(|p| p.get()))),
        );
        texts.push(format!("{:?} {} {:?}", raw.id, raw.wide, raw.unit));
        texts
    }

    /// A `RawValue` is kept as MessagePack, its text byte for byte, in both forms.
    #[test]
    fn raw_json_is_a_messagepack_slot_of_its_text() {
        assert_eq!(encoding::<Raw>(), Encoding::MessagePack);
        for tagged in [false, true] {
            let bytes = with_tagging(tagged, || postcard::to_allocvec(&Slot(raw_sample())))
                .expect("writes");
            let (inner, _) = postcard::take_from_bytes::<Vec<u8>>(&bytes).expect("bytes");
            assert_eq!(inner[0], MSGPACK_SOME_MARK);
            let read: Slot<Raw> =
                with_tagging(tagged, || postcard::from_bytes(&bytes)).expect("reads");
            assert_eq!(raw_texts(&read.0), raw_texts(&raw_sample()));
        }
    }

    /// A JSON slot as the builds before issue 80 sealed it (`J`, then `serde_json`'s text)
    /// reads as those builds read it; a `RawValue` where another type is saved is refused.
    #[test]
    fn a_json_slot_sealed_before_reads_as_it_did() {
        for tagged in [false, true] {
            let mut inner = vec![JSON_MARK];
            serde_json::to_writer(&mut inner, &raw_sample()).expect("writes");
            let bytes = postcard::to_allocvec(&inner).expect("writes");
            let read: Slot<Raw> =
                with_tagging(tagged, || postcard::from_bytes(&bytes)).expect("reads");
            assert_eq!(raw_texts(&read.0), raw_texts(&raw_sample()));
            let before: Raw = serde_json::from_slice(&inner[1..]).expect("serde_json reads");
            assert_eq!(raw_texts(&read.0), raw_texts(&before));
        }
        let mut not_raw = vec![MSGPACK_SOME_MARK];
        write::append(
            &mut not_raw,
            &serde_json::json!({"id": 1, "body": {"k": 1}}),
        )
        .expect("writes");
        let bytes = postcard::to_allocvec(&not_raw).expect("writes");
        assert!(postcard::from_bytes::<Slot<Raw>>(&bytes).is_err());
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Memo {
        #[serde(skip_serializing_if = "Option::is_none")]
        memo: Option<String>,
        from: String,
    }

    /// In the tagged form, a value of a MessagePack type is MessagePack even where postcard
    /// would read it back: a build that reorders its fields reads it by name.
    #[test]
    fn a_tagged_messagepack_type_is_never_written_as_postcard() {
        assert_eq!(encoding::<Memo>(), Encoding::MessagePack);
        let memo = Memo {
            memo: Some("m".into()),
            from: "a".into(),
        };
        let bytes = with_tagging(true, || postcard::to_allocvec(&Slot(memo))).expect("writes");
        let (inner, _) = postcard::take_from_bytes::<Vec<u8>>(&bytes).expect("a byte string");
        assert_eq!(inner[0], MSGPACK_SOME_MARK);
        // And a `P` tag is refused for it.
        let mut forged = vec![POSTCARD_MARK];
        forged.extend(postcard::to_allocvec(&(Some("m"), "a")).expect("writes"));
        let forged = postcard::to_allocvec(&forged).expect("writes");
        assert!(with_tagging(true, || postcard::from_bytes::<Slot<Memo>>(&forged)).is_err());
    }

    /// A `HashSet` of many elements is written in its hasher's order: it reads back as
    /// itself, and is never taken for a value that skips a field.
    #[test]
    fn a_hash_set_reads_back_as_itself_in_any_order() {
        let set: std::collections::HashSet<String> = (0..50).map(|i| format!("s{i}")).collect();
        assert!(!skips::skips(&set));
        assert!(postcard_of(&set).is_some());
        assert!(matches!(
            encoding::<std::collections::HashSet<String>>(),
            Encoding::Postcard(_)
        ));
    }

    mod options {
        //! Issue 72: `Some(())`, `Some(None)` and `Some(Value::Null)` kept in every
        //! container kind, in every form a slot takes (untagged: postcard or MessagePack
        //! by the type; tagged: postcard or MessagePack by the value), read back as
        //! themselves. Every combination of the options below, not a sample of them.

        use std::collections::{BTreeMap, HashMap};
        use std::fmt::Debug;

        use serde::de::DeserializeOwned;
        use serde::{Deserialize, Serialize};
        use serde_json::{Value, json};

        use super::super::{Slot, take_not_read_back, with_tagging};

        /// Seals `value` as a slot, untagged (as the state's first seal) and tagged (as
        /// its seal again when a slot does not read back), and reads each back.
        fn kept<T: Serialize + DeserializeOwned + Clone + PartialEq + Debug>(value: &T) {
            for tagged in [false, true] {
                let written = with_tagging(tagged, || postcard::to_allocvec(&Slot(value.clone())));
                let bytes = match written {
                    Ok(bytes) => bytes,
                    // Untagged, a postcard slot whose value does not read back asks for
                    // the tagged form, checked next.
                    Err(_) if !tagged && take_not_read_back() => continue,
                    Err(error) => panic!("{value:?} is refused (tagged: {tagged}): {error}"),
                };
                let read: Slot<T> = with_tagging(tagged, || postcard::from_bytes(&bytes))
                    .unwrap_or_else(|error| panic!("{value:?} (tagged: {tagged}): {error}"));
                assert_eq!(&read.0, value, "tagged: {tagged}");
            }
        }

        fn values() -> Vec<Value> {
            vec![
                Value::Null,
                json!(0),
                json!(""),
                json!([null]),
                json!({"k": null}),
            ]
        }

        fn options() -> Vec<Option<Value>> {
            std::iter::once(None)
                .chain(values().into_iter().map(Some))
                .collect()
        }

        fn nested() -> Vec<Option<Option<u8>>> {
            vec![None, Some(None), Some(Some(0))]
        }

        fn units() -> Vec<Option<()>> {
            vec![None, Some(())]
        }

        fn deep() -> Vec<Option<Option<Option<Value>>>> {
            let mut all = vec![None, Some(None), Some(Some(None))];
            all.extend(values().into_iter().map(|value| Some(Some(Some(value)))));
            all
        }

        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        struct Patch {
            name: Option<Option<String>>,
            body: Option<Value>,
            seen: Option<()>,
            deep: Option<Option<Option<Value>>>,
        }

        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        struct PostcardPatch {
            name: Option<Option<String>>,
            seen: Option<()>,
            units: Vec<Option<()>>,
        }

        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        enum Change {
            Clear,
            Set(Option<Value>),
            Pair(Option<Option<u8>>, Option<()>),
            Named {
                value: Option<Value>,
                flag: Option<()>,
            },
        }

        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(untagged)]
        enum Loose {
            Patch {
                patch: Option<Option<u8>>,
                body: Option<Value>,
            },
            Text(String),
        }

        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "kind")]
        enum Tagged {
            Edit {
                body: Option<Value>,
                seen: Option<()>,
            },
        }

        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        struct Flat {
            body: Option<Value>,
            name: Option<Option<String>>,
            #[serde(flatten)]
            rest: BTreeMap<String, Value>,
        }

        #[test]
        fn bare_options_and_options_in_sequences_and_tuples() {
            for value in options() {
                kept(&value);
                kept(&Some(value.clone()));
                kept(&Box::new(value.clone()));
                kept(&vec![value.clone(), None, value.clone()]);
                kept(&[value.clone(), Some(Value::Null)]);
                for inner in nested() {
                    kept(&(value.clone(), inner, ()));
                    for unit in units() {
                        kept(&(inner, unit, value.clone()));
                    }
                }
            }
            for value in deep() {
                kept(&value);
                kept(&vec![value.clone()]);
            }
            for value in nested() {
                kept(&value);
                kept(&vec![value; 3]);
            }
            for unit in units() {
                kept(&unit);
                kept(&vec![unit, None]);
                kept(&Some(unit));
            }
        }

        #[test]
        fn options_in_maps() {
            for value in options() {
                let by_name: BTreeMap<String, Option<Value>> =
                    [("a".to_owned(), value.clone()), ("b".to_owned(), None)].into();
                kept(&by_name);
                let by_number: HashMap<u8, Option<Value>> =
                    (0..20).map(|i| (i, value.clone())).collect();
                kept(&by_number);
                for inner in nested() {
                    let hashed: HashMap<String, Option<Option<u8>>> =
                        [("x".to_owned(), inner), ("y".to_owned(), Some(None))].into();
                    kept(&hashed);
                    // An option as a key.
                    let keyed: BTreeMap<Option<Option<u8>>, Option<Value>> =
                        [(inner, value.clone())].into();
                    kept(&keyed);
                }
            }
        }

        #[test]
        fn options_in_structs_and_enums() {
            for body in options() {
                for name in [None, Some(None), Some(Some("n".to_owned()))] {
                    for seen in units() {
                        for deep in deep() {
                            kept(&Patch {
                                name: name.clone(),
                                body: body.clone(),
                                seen,
                                deep,
                            });
                        }
                        kept(&PostcardPatch {
                            name: name.clone(),
                            seen,
                            units: vec![seen, None],
                        });
                        kept(&Change::Named {
                            value: body.clone(),
                            flag: seen,
                        });
                        kept(&Tagged::Edit {
                            body: body.clone(),
                            seen,
                        });
                        kept(&Flat {
                            body: body.clone(),
                            name: name.clone(),
                            rest: [("extra".to_owned(), Value::Null)].into(),
                        });
                    }
                }
                kept(&Change::Set(body.clone()));
                kept(&Change::Clear);
                for patch in nested() {
                    kept(&Loose::Patch {
                        patch,
                        body: body.clone(),
                    });
                    for seen in units() {
                        kept(&Change::Pair(patch, seen));
                    }
                }
                kept(&Loose::Text("t".into()));
            }
        }

        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(untagged)]
        enum Overlapping {
            Maybe(Option<u8>),
            Plain(u8),
        }

        /// A value that reads back as another (an untagged enum whose variants overlap:
        /// `Plain(3)` is written `3` and read `Maybe(Some(3))`) is refused where it is
        /// sealed, in release builds too, never read back changed; its neighbours that read
        /// back are kept.
        #[test]
        fn a_value_that_reads_back_as_another_is_refused_at_the_seal() {
            for tagged in [false, true] {
                let sealed = with_tagging(tagged, || {
                    postcard::to_allocvec(&Slot(Overlapping::Plain(3)))
                });
                assert!(sealed.is_err(), "tagged: {tagged}");
                assert!(
                    super::super::take_unreadable()
                        .is_some_and(|why| why.contains("another value")),
                    "the reason is kept for the caller"
                );
            }
            kept(&Overlapping::Maybe(Some(3)));
            kept(&Overlapping::Maybe(None));
        }

        /// The bytes sealed before Some was marked (`M`, `rmp-serde`'s) read as they were
        /// written: a value, and a `None`.
        #[test]
        fn slots_sealed_before_read_as_they_did() {
            let mut old = vec![super::super::MSGPACK_MARK];
            let mut serializer = rmp_serde::Serializer::new(&mut old).with_struct_map();
            Some(json!({"k": [1, null]}))
                .serialize(&mut serializer)
                .expect("writes");
            let sealed = postcard::to_allocvec(&old).expect("writes");
            let read: Slot<Option<Value>> = postcard::from_bytes(&sealed).expect("reads");
            assert_eq!(read.0, Some(json!({"k": [1, null]})));
            let none = postcard::to_allocvec(&vec![super::super::MSGPACK_MARK, 0xc0]).expect("w");
            let read: Slot<Option<Value>> = postcard::from_bytes(&none).expect("reads");
            assert_eq!(read.0, None);
        }
    }
}
