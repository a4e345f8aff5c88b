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

use crate::engine::identity::layout::shape::{LayoutError, Traced};
use crate::engine::identity::layout::trace_state_shape;
use crate::engine::identity::layout::tracer::{FieldTracer, StateShape};

/// Why a state could not be written or read: postcard's error.
pub type StateError = postcard::Error;

/// A generated state enum (`__State`): one variant per suspension, one field per saved
/// local, request marker or helper state. Implemented by `#[saga_tool]` and `#[saga_fn]`.
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
pub trait StateEnum: Sized {
    /// The enum's name, variants and fields, as serde's derive names them.
    const SHAPE: StateShape;

    /// Set once a state of this enum was sealed in the tagged form: its later seals go
    /// there at once. One flag per expansion (the macro declares it), so that no other
    /// tool's state is tagged for this one's values.
    fn tagged() -> &'static std::sync::atomic::AtomicBool;

    /// Writes the variant's index and its fields, in order.
    fn write(&self, writer: &mut StateWriter);

    /// Reads what [`StateEnum::write`] wrote.
    fn read(reader: &mut StateReader<'_>) -> Result<Self, StateError>;

    /// Renders the state as `{"Variant": {"field": value, ..}}`, each field as JSON.
    fn render(&self, render: &mut StateRender);

    /// Traces the type of field `field` of variant `variant`.
    fn trace_field(
        variant: u32,
        field: usize,
        tracer: FieldTracer<'_, '_>,
    ) -> Result<(), LayoutError>;
}

/// Writes a state as postcard. A write that fails is kept, and every later one is
/// skipped: the generated `write` calls it once per field, without a branch per field.
pub struct StateWriter {
    // The serializer `postcard::to_allocvec` uses, so that a field's type shares its
    // serialization code with every other postcard write of that type.
    serializer: postcard::Serializer<AllocVec>,
    failed: Option<StateError>,
}

impl StateWriter {
    /// Writes a variant's index.
    // Never inlined: a call per field is all the generated `write` holds.
    #[inline(never)]
    pub fn variant(&mut self, index: u32) {
        if self.failed.is_none() {
            let written = serde::Serializer::serialize_u32(&mut self.serializer, index);
            self.failed = written.err();
        }
    }

    /// Writes one field.
    #[inline(never)]
    pub fn field<F: Serialize>(&mut self, value: &F) {
        if self.failed.is_none() {
            self.failed = value.serialize(&mut self.serializer).err();
        }
    }
}

/// `state` as postcard bytes.
pub(crate) fn write_state<S: StateEnum>(state: &S) -> Result<Vec<u8>, StateError> {
    let mut writer = StateWriter {
        serializer: postcard::Serializer {
            output: AllocVec::new(),
        },
        failed: None,
    };
    state.write(&mut writer);
    finish_write(writer)
}

/// What [`write_state`] wrote, or why it could not: apart so that it is compiled once.
fn finish_write(writer: StateWriter) -> Result<Vec<u8>, StateError> {
    if let Some(error) = writer.failed {
        return Err(error);
    }
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
    failed: Option<StateError>,
}

impl StateReader<'_> {
    /// Reads a variant's index.
    pub fn variant(&mut self) -> Result<u32, StateError> {
        u32::deserialize(&mut self.deserializer)
    }

    /// Reads one field; `None` if it cannot be read, the error then kept for
    /// [`StateReader::failed`]. An `Option` rather than a `Result`, and never inlined:
    /// the generated `read` is then a call and a test per field.
    #[inline(never)]
    pub fn field<F: DeserializeOwned>(&mut self) -> Option<F> {
        match F::deserialize(&mut self.deserializer) {
            Ok(value) => Some(value),
            Err(error) => {
                self.failed = Some(error);
                None
            }
        }
    }

    /// Why the last [`StateReader::field`] that gave `None` could not read its field.
    #[inline(never)]
    pub fn failed(&mut self) -> StateError {
        self.failed
            .take()
            .unwrap_or(StateError::DeserializeUnexpectedEnd)
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
        failed: None,
    };
    let state = S::read(&mut reader)?;
    if reader.deserializer.finalize()?.is_empty() {
        Ok(state)
    } else {
        Err(StateError::DeserializeBadEncoding)
    }
}

/// Renders a state as JSON, as `serde_json` renders an enum's struct variant. A field
/// that fails to render is kept as the error, and later ones are skipped.
#[derive(Default)]
pub struct StateRender {
    variant: &'static str,
    fields: serde_json::Map<String, serde_json::Value>,
    failed: Option<String>,
}

impl StateRender {
    /// Names the variant.
    pub fn variant(&mut self, name: &'static str) {
        self.variant = name;
    }

    /// The rendered state. Apart from [`render_state`] so that it is compiled once.
    fn finish(self) -> Result<serde_json::Value, String> {
        if let Some(error) = self.failed {
            return Err(error);
        }
        let mut variant = serde_json::Map::new();
        variant.insert(
            self.variant.to_owned(),
            serde_json::Value::Object(self.fields),
        );
        Ok(serde_json::Value::Object(variant))
    }

    /// Renders one field; human-readable, so a saved local shows as its value.
    #[inline(never)]
    pub fn field<F: Serialize>(&mut self, name: &'static str, value: &F) {
        if self.failed.is_none() {
            let rendered = serde_json::to_value(value);
            self.keep(name, rendered);
        }
    }

    /// Keeps a rendered field, or its error: apart so that it is compiled once.
    fn keep(&mut self, name: &'static str, rendered: Result<serde_json::Value, serde_json::Error>) {
        match rendered {
            Ok(value) => {
                self.fields.insert(name.to_owned(), value);
            }
            Err(error) => self.failed = Some(error.to_string()),
        }
    }
}

/// Traces the state enum `S` as postcard would read it.
pub(crate) fn trace_state<S: StateEnum>() -> Result<Traced, LayoutError> {
    trace_state_shape(std::any::type_name::<S>(), &S::SHAPE, S::trace_field)
}

/// `state` as `{"Variant": {fields}}`.
pub(crate) fn render_state<S: StateEnum>(state: &S) -> Result<serde_json::Value, String> {
    let mut render = StateRender::default();
    state.render(&mut render);
    render.finish()
}

#[cfg(test)]
mod tests {
    use std::marker::PhantomData;
    use std::sync::atomic::AtomicBool;

    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::engine::identity::layout::trace;
    use crate::engine::identity::slot::{Slot, SlotField, SlotTrace, trace_slot};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Transfer {
        from: String,
        cents: u64,
        memo: Option<String>,
    }

    type Marker = PhantomData<fn() -> u8>;

    /// What `#[saga_tool]` writes for two suspensions (a saved local and a marker, then a
    /// helper's bytes), by hand, as `state_codec.rs` generates it.
    #[derive(Debug, PartialEq)]
    #[allow(non_camel_case_types)]
    enum __State<T0, T1> {
        AfterElicitName {
            count: T0,
            __m0: Marker,
        },
        AfterConfirm {
            transfer: T1,
            __m0: Marker,
            __callee: Vec<u8>,
        },
    }

    impl<T0: SlotField, T1: SlotField> StateEnum for __State<T0, T1> {
        const SHAPE: StateShape = StateShape {
            name: "__State",
            variants: &["AfterElicitName", "AfterConfirm"],
            fields: &[&["count", "__m0"], &["transfer", "__m0", "__callee"]],
        };

        fn tagged() -> &'static AtomicBool {
            static TAGGED: AtomicBool = AtomicBool::new(false);
            &TAGGED
        }

        fn write(&self, writer: &mut StateWriter) {
            match self {
                __State::AfterElicitName { count, .. } => {
                    writer.variant(0);
                    writer.field(count);
                }
                __State::AfterConfirm {
                    transfer, __callee, ..
                } => {
                    writer.variant(1);
                    writer.field(transfer);
                    writer.field(__callee);
                }
            }
        }

        fn read(reader: &mut StateReader<'_>) -> Result<Self, StateError> {
            Ok(match reader.variant()? {
                0 => {
                    let Some(count) = reader.field() else {
                        return Err(reader.failed());
                    };
                    __State::AfterElicitName {
                        count,
                        __m0: PhantomData,
                    }
                }
                1 => {
                    let Some(transfer) = reader.field() else {
                        return Err(reader.failed());
                    };
                    let Some(__callee) = reader.field() else {
                        return Err(reader.failed());
                    };
                    __State::AfterConfirm {
                        transfer,
                        __m0: PhantomData,
                        __callee,
                    }
                }
                _ => return Err(reader.unknown_variant()),
            })
        }

        fn render(&self, render: &mut StateRender) {
            match self {
                __State::AfterElicitName { count, .. } => {
                    render.variant("AfterElicitName");
                    render.field("count", count.shown());
                }
                __State::AfterConfirm {
                    transfer, __callee, ..
                } => {
                    render.variant("AfterConfirm");
                    render.field("transfer", transfer.shown());
                    render.field("__callee", __callee);
                }
            }
        }

        fn trace_field(
            variant: u32,
            field: usize,
            tracer: FieldTracer<'_, '_>,
        ) -> Result<(), LayoutError> {
            match (variant, field) {
                (0, 0) => trace_slot::<T0::Shown>(tracer),
                (0, 1) | (1, 1) => tracer.marker(std::any::type_name::<PhantomData<Marker>>()),
                (1, 0) => trace_slot::<T1::Shown>(tracer),
                (1, 2) => tracer.field::<Vec<u8>>(),
                _ => tracer.missing(),
            }
        }
    }

    /// The same enum as serde derived it before the macros wrote it out, with the
    /// slots' traces in place of the slots for the layout.
    #[derive(Debug, Serialize, Deserialize)]
    #[allow(non_camel_case_types)]
    enum Derived<T0, T1> {
        AfterElicitName {
            count: T0,
            __m0: Marker,
        },
        AfterConfirm {
            transfer: T1,
            __m0: Marker,
            __callee: Vec<u8>,
        },
    }

    #[allow(non_camel_case_types)]
    mod derived {
        /// Named `__State`, as the derived enum was.
        #[derive(serde::Deserialize)]
        #[allow(dead_code)]
        pub(super) enum __State<T0, T1> {
            AfterElicitName {
                count: T0,
                __m0: super::Marker,
            },
            AfterConfirm {
                transfer: T1,
                __m0: super::Marker,
                __callee: Vec<u8>,
            },
        }
    }

    type Written = __State<Slot<u32>, Slot<Transfer>>;
    type Twin = Derived<Slot<u32>, Slot<Transfer>>;

    fn transfer() -> Transfer {
        Transfer {
            from: "ada".into(),
            cents: 1234,
            memo: None,
        }
    }

    #[test]
    fn the_bytes_are_the_derived_enums_and_read_back() {
        let states: [(Written, Twin); 2] = [
            (
                __State::AfterElicitName {
                    count: Slot(7),
                    __m0: PhantomData,
                },
                Derived::AfterElicitName {
                    count: Slot(7),
                    __m0: PhantomData,
                },
            ),
            (
                __State::AfterConfirm {
                    transfer: Slot(transfer()),
                    __m0: PhantomData,
                    __callee: vec![1, 2, 3],
                },
                Derived::AfterConfirm {
                    transfer: Slot(transfer()),
                    __m0: PhantomData,
                    __callee: vec![1, 2, 3],
                },
            ),
        ];
        for (written, derived) in states {
            let bytes = write_state(&written).expect("writes");
            assert_eq!(bytes, postcard::to_allocvec(&derived).expect("writes"));
            let read: Written = read_state(&bytes).expect("reads");
            assert_eq!(
                postcard::to_allocvec(
                    &Derived::<Slot<u32>, Slot<Transfer>>::deserialize(
                        &mut postcard::Deserializer::from_bytes(&bytes)
                    )
                    .expect("reads")
                )
                .expect("writes"),
                write_state(&read).expect("writes")
            );
            // The derived enum rendered its markers as `null`, which the inspection
            // hid; the written one leaves them out.
            let mut shown = serde_json::to_value(&derived).expect("renders");
            for fields in shown.as_object_mut().expect("a variant").values_mut() {
                fields
                    .as_object_mut()
                    .expect("fields")
                    .retain(|name, _| name != "__m0");
            }
            assert_eq!(render_state(&written).expect("renders"), shown);
        }
    }

    #[test]
    fn a_state_is_refused_with_trailing_bytes_or_an_unknown_variant() {
        let mut bytes = write_state::<Written>(&__State::AfterElicitName {
            count: Slot(7),
            __m0: PhantomData,
        })
        .expect("writes");
        bytes.push(0);
        assert!(read_state::<Written>(&bytes).is_err());
        assert!(read_state::<Written>(&[2, 7]).is_err());
        assert!(read_state::<Written>(&[]).is_err());
    }

    #[test]
    fn the_layout_is_the_derived_enums() {
        let written = trace_state::<Written>().expect("traces");
        let derived =
            trace::<derived::__State<SlotTrace<u32>, SlotTrace<Transfer>>>().expect("traces");
        assert_eq!(written.render(), derived.render());
        assert_eq!(written.root_variants(), derived.root_variants());
        assert_eq!(written.registry, derived.registry);
        assert_eq!(written.names, derived.names);
        // A MessagePack slot (a `Value`), and a type traced with another sample profile
        // (a `NonZeroU32` refuses 0).
        type Other = __State<Slot<serde_json::Value>, Slot<std::num::NonZeroU32>>;
        let written = trace_state::<Other>().expect("traces");
        let derived = trace::<
            derived::__State<SlotTrace<serde_json::Value>, SlotTrace<std::num::NonZeroU32>>,
        >()
        .expect("traces");
        assert_eq!(written.render(), derived.render());
        assert!(written.render().contains("msgpack"), "{}", written.render());
        assert_eq!(written.registry, derived.registry);
        assert_eq!(written.names, derived.names);
    }
}
