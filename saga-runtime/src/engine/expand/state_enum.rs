//! A generated state enum's serde, which the macros write field by field instead of
//! deriving.
//!
//! Why not `#[derive(Serialize, Deserialize)]`: a derived enum has a visitor per variant,
//! and each is compiled once per format that reads it (postcard, the layout tracer) and
//! again for each format that writes it (postcard, JSON for `saga inspect`). That was
//! about a third of the code a `#[saga_tool]` added to a user's release build (issue 43).
//! The generated impl of [`StateEnum`] is a `match` per operation, and each field is
//! written, read, rendered and traced through one generic function per field *type*
//! ([`StateWriter::field`], [`StateReader::field`], [`StateRender::field`],
//! [`FieldTracer::field`]): a `String` or `u32` local costs that code once per build,
//! not once per tool.
//!
//! The bytes are postcard's for the derived enum, byte for byte: the variant index as a
//! varint, then each field in order. The layout trace asks the tracer what serde's derive
//! would have asked (see `layout::tracer::trace_state_enum`), so every point identity
//! is the same as the derived enum's.

use postcard::de_flavors::Slice;
use postcard::ser_flavors::{AllocVec, Flavor};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub use crate::engine::identity::layout::FieldTracer;
use crate::engine::identity::layout::shape::LayoutError;
use crate::engine::identity::slot::SlotState;

/// Why a state could not be written or read: postcard's error.
pub type StateError = postcard::Error;

/// A generated state enum (`__State`): one variant per suspension, one field per saved
/// local, request marker or helper state. Implemented by `#[saga_tool]` and `#[saga_fn]`.
pub trait StateEnum: SlotState + Sized {
    /// The enum's name, variants and fields, as serde's derive names them.
    const SHAPE: StateShape;

    /// Writes the variant's index and its fields, in order.
    fn write(&self, writer: &mut StateWriter) -> Result<(), StateError>;

    /// Reads what [`StateEnum::write`] wrote.
    fn read(reader: &mut StateReader<'_>) -> Result<Self, StateError>;

    /// Renders the state as `{"Variant": {"field": value, ..}}`, each field as JSON.
    fn render(&self, render: &mut StateRender) -> Result<(), String>;

    /// Traces the type of field `field` of variant `variant`.
    fn trace_field(
        variant: u32,
        field: usize,
        tracer: FieldTracer<'_, '_>,
    ) -> Result<(), LayoutError>;
}

/// A state enum's names: what the layout trace records for it.
#[derive(Debug, Clone, Copy)]
pub struct StateShape {
    /// The enum's name.
    pub name: &'static str,
    /// Its variants, by index.
    pub variants: &'static [&'static str],
    /// Per variant, its fields' names, in order.
    pub fields: &'static [&'static [&'static str]],
}

/// Writes a state as postcard.
pub struct StateWriter {
    // The serializer `postcard::to_allocvec` uses, so that a field's type shares its
    // serialization code with every other postcard write of that type.
    serializer: postcard::Serializer<AllocVec>,
}

impl StateWriter {
    /// Writes a variant's index.
    pub fn variant(&mut self, index: u32) -> Result<(), StateError> {
        serde::Serializer::serialize_u32(&mut self.serializer, index)
    }

    /// Writes one field.
    pub fn field<F: Serialize>(&mut self, value: &F) -> Result<(), StateError> {
        value.serialize(&mut self.serializer)
    }
}

/// `state` as postcard bytes.
pub(crate) fn write_state<S: StateEnum>(state: &S) -> Result<Vec<u8>, StateError> {
    let mut writer = StateWriter {
        serializer: postcard::Serializer {
            output: AllocVec::new(),
        },
    };
    state.write(&mut writer)?;
    writer
        .serializer
        .output
        .finalize()
        .map_err(|_| StateError::SerializeBufferFull)
}

/// Reads a state from postcard bytes.
pub struct StateReader<'a> {
    // The deserializer `postcard::take_from_bytes` uses, for the same reason.
    deserializer: postcard::Deserializer<'a, Slice<'a>>,
}

impl StateReader<'_> {
    /// Reads a variant's index.
    pub fn variant(&mut self) -> Result<u32, StateError> {
        u32::deserialize(&mut self.deserializer)
    }

    /// Reads one field.
    pub fn field<F: DeserializeOwned>(&mut self) -> Result<F, StateError> {
        F::deserialize(&mut self.deserializer)
    }

    /// The error for a variant index the enum does not have.
    pub fn unknown_variant(&self) -> StateError {
        StateError::DeserializeBadEnum
    }
}

/// The state in `bytes`, which it must fill to the last byte.
pub(crate) fn read_state<S: StateEnum>(bytes: &[u8]) -> Result<S, StateError> {
    let mut reader = StateReader {
        deserializer: postcard::Deserializer::from_bytes(bytes),
    };
    let state = S::read(&mut reader)?;
    if reader.deserializer.finalize()?.is_empty() {
        Ok(state)
    } else {
        Err(StateError::DeserializeBadEncoding)
    }
}

/// Renders a state as JSON, as `serde_json` renders an enum's struct variant.
#[derive(Default)]
pub struct StateRender {
    variant: &'static str,
    fields: serde_json::Map<String, serde_json::Value>,
}

impl StateRender {
    /// Names the variant.
    pub fn variant(&mut self, name: &'static str) {
        self.variant = name;
    }

    /// Renders one field; human-readable, so a saved local shows as its value.
    pub fn field<F: Serialize>(&mut self, name: &'static str, value: &F) -> Result<(), String> {
        let value = serde_json::to_value(value).map_err(|error| error.to_string())?;
        self.fields.insert(name.to_owned(), value);
        Ok(())
    }
}

/// `state` as `{"Variant": {fields}}`.
pub(crate) fn render_state<S: StateEnum>(state: &S) -> Result<serde_json::Value, String> {
    let mut render = StateRender::default();
    state.render(&mut render)?;
    let mut variant = serde_json::Map::new();
    variant.insert(
        render.variant.to_owned(),
        serde_json::Value::Object(render.fields),
    );
    Ok(serde_json::Value::Object(variant))
}
