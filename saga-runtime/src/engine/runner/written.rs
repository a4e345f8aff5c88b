//! A round's input-required result as JSON: the bytes rmcp writes, without the
//! `serde_json::Value` rmcp 3.11 builds for every input request. The direct path's reply
//! writes it (`serve::http::reply`), and so does the record of a round's outcome
//! (`runner::retried`), which wrote it through rmcp's serializer: that detour was the
//! larger part of what recording an outcome cost (issue 99).
//!
//! rmcp writes a request's params by turning them into a `Value` first, to merge in a
//! `_meta` that the request's extensions may carry, and then writing that value. When
//! neither the extensions nor the params carry a `_meta`, the merge changes nothing, and
//! writing the params straight out gives the same bytes, with one exception: the `Value`
//! may store an `f32` differently (this build widens it to `f64`, so `0.7` is written
//! `0.699999988079071`). [`Writer::detect`] compares the two ways of writing once, when
//! the first result is written, and chooses the writer that gives rmcp's bytes: direct,
//! direct with every `f32` widened, or rmcp's own when neither matches.

use std::sync::LazyLock;

use rmcp::model::{InputRequest, InputRequiredResult, MetaObject, RequestMetaObject};
use serde::ser::{self, Serialize, SerializeMap, SerializeStruct, Serializer};

/// Writes `result` as `serde_json::to_writer` would, through rmcp's own serializer when
/// this build's serde_json writes a `Value` in some other way ([`writes_directly`]).
///
/// `server_info` is a `serverInfo` stamp, as JSON, written as the `_meta` that stamping a
/// result without one would have given it (see `serve::tools::server_info_stamp`); only
/// where [`writes_directly`].
pub(crate) fn write_input_required(
    result: &InputRequiredResult,
    server_info: Option<&[u8]>,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    let widen = match *WRITER {
        Writer::Direct => false,
        Writer::Widened => true,
        Writer::Rmcp => {
            debug_assert!(server_info.is_none(), "rmcp's writer stamps nothing");
            return serde_json::to_writer(out, result);
        }
    };
    // The keys written as the bytes serde_json writes for them: they are constants that
    // need no escaping, and each key written through the serializer was a pass over it
    // looking for characters to escape (BENCHMARKS.md). Their values are serde_json's.
    out.extend_from_slice(br#"{"resultType":"#);
    serde_json::to_writer(&mut *out, &result.result_type)?;
    if let Some(requests) = &result.input_requests {
        out.extend_from_slice(br#","inputRequests":"#);
        serde_json::to_writer(&mut *out, &Requests { requests, widen })?;
    }
    if let Some(state) = &result.request_state {
        out.extend_from_slice(br#","requestState":"#);
        serde_json::to_writer(&mut *out, state)?;
    }
    match (&result.meta, server_info) {
        (Some(meta), _) => {
            out.extend_from_slice(br#","_meta":"#);
            serde_json::to_writer(&mut *out, meta)?;
        }
        (None, Some(stamp)) => {
            out.extend_from_slice(br#","_meta":"#);
            out.extend_from_slice(stamp);
        }
        (None, None) => {}
    }
    out.push(b'}');
    Ok(())
}

/// Whether results are written straight out (else through rmcp's serializer, which
/// writes no stamp of its own).
pub(crate) fn writes_directly() -> bool {
    *WRITER != Writer::Rmcp
}

/// How params are written so that the bytes are rmcp's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Writer {
    /// Straight out: a `Value` holds every number as written.
    Direct,
    /// Straight out, every `f32` written as the `f64` a `Value` widens it to.
    Widened,
    /// rmcp's own serializer: this serde_json writes a `Value` in some other way (its keys
    /// sorted without `preserve_order`, say).
    Rmcp,
}

static WRITER: LazyLock<Writer> = LazyLock::new(Writer::detect);

impl Writer {
    /// Writes a probe both ways, as rmcp does (through a `Value`) and directly.
    fn detect() -> Self {
        #[derive(serde::Serialize)]
        struct Probe {
            zeta: f32,
            alpha: Vec<f32>,
            nested: Option<Box<Probe>>,
        }
        let probe = Probe {
            zeta: 0.7,
            alpha: vec![0.1, f32::NAN],
            nested: Some(Box::new(Probe {
                zeta: 1.5,
                alpha: Vec::new(),
                nested: None,
            })),
        };
        let Ok(through_value) = serde_json::to_value(&probe).and_then(|v| serde_json::to_vec(&v))
        else {
            return Self::Rmcp;
        };
        let direct = serde_json::to_vec(&probe).ok();
        let widened = serde_json::to_vec(&Widened(&probe)).ok();
        if direct.as_ref() == Some(&through_value) {
            Self::Direct
        } else if widened.as_ref() == Some(&through_value) {
            Self::Widened
        } else {
            Self::Rmcp
        }
    }
}

struct Requests<'a> {
    requests: &'a rmcp::model::InputRequests,
    widen: bool,
}

impl Serialize for Requests<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.requests.len()))?;
        for (key, request) in self.requests {
            map.serialize_entry(
                key,
                &WrittenRequest {
                    request,
                    widen: self.widen,
                },
            )?;
        }
        map.end()
    }
}

/// One input request: `{"method", "params"}` written straight out when no `_meta` is
/// merged into its params, else as rmcp writes it.
struct WrittenRequest<'a> {
    request: &'a InputRequest,
    widen: bool,
}

impl Serialize for WrittenRequest<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.request {
            InputRequest::CreateMessage(request)
                if no_meta(&request.extensions) && request.params.meta.is_none() =>
            {
                self.write(serializer, &request.method, &request.params)
            }
            InputRequest::Elicitation(request)
                if no_meta(&request.extensions) && elicitation_has_no_meta(&request.params) =>
            {
                self.write(serializer, &request.method, &request.params)
            }
            other => other.serialize(serializer),
        }
    }
}

impl WrittenRequest<'_> {
    fn write<S: Serializer>(
        &self,
        serializer: S,
        method: &impl Serialize,
        params: &impl Serialize,
    ) -> Result<S::Ok, S::Error> {
        let mut fields = serializer.serialize_struct("Proxy", 2)?;
        fields.serialize_field("method", method)?;
        if self.widen {
            fields.serialize_field("params", &Widened(params))?;
        } else {
            fields.serialize_field("params", params)?;
        }
        fields.end()
    }
}

/// Whether a request's extensions hold no `_meta` for rmcp to merge into its params.
fn no_meta(extensions: &rmcp::model::Extensions) -> bool {
    extensions.get::<RequestMetaObject>().is_none() && extensions.get::<MetaObject>().is_none()
}

fn elicitation_has_no_meta(params: &rmcp::model::ElicitRequestParams) -> bool {
    use rmcp::model::ElicitRequestParams::{FormElicitationParams, UrlElicitationParams};
    match params {
        FormElicitationParams { meta, .. } | UrlElicitationParams { meta, .. } => meta.is_none(),
        // A mode this file does not know: rmcp writes it.
        _ => false,
    }
}

/// A value written with every `f32` in it written as an `f64`.
struct Widened<'a, T: ?Sized>(&'a T);

impl<T: Serialize + ?Sized> Serialize for Widened<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(Widen(serializer))
    }
}

/// A serializer that hands everything to `S`, an `f32` as an `f64`, and wraps the values
/// of compound types so that theirs are too.
struct Widen<S>(S);

/// The compound serializers: `S`'s, with each value they are given wrapped.
struct Compound<C>(C);

macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(fn $method(self, $($arg: $ty),*) -> Result<Self::Ok, Self::Error> {
            self.0.$method($($arg),*)
        })*
    };
}

/// The methods that open a compound value: `S`'s, its compound serializer wrapped.
macro_rules! open {
    ($($method:ident($($arg:ident: $ty:ty),*) -> $compound:ident;)*) => {
        $(fn $method(self, $($arg: $ty),*) -> Result<Self::$compound, Self::Error> {
            self.0.$method($($arg),*).map(Compound)
        })*
    };
}

impl<S: Serializer> Serializer for Widen<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Compound<S::SerializeSeq>;
    type SerializeTuple = Compound<S::SerializeTuple>;
    type SerializeTupleStruct = Compound<S::SerializeTupleStruct>;
    type SerializeTupleVariant = Compound<S::SerializeTupleVariant>;
    type SerializeMap = Compound<S::SerializeMap>;
    type SerializeStruct = Compound<S::SerializeStruct>;
    type SerializeStructVariant = Compound<S::SerializeStructVariant>;

    forward! {
        serialize_bool(v: bool);
        serialize_i8(v: i8);
        serialize_i16(v: i16);
        serialize_i32(v: i32);
        serialize_i64(v: i64);
        serialize_i128(v: i128);
        serialize_u8(v: u8);
        serialize_u16(v: u16);
        serialize_u32(v: u32);
        serialize_u64(v: u64);
        serialize_u128(v: u128);
        serialize_f64(v: f64);
        serialize_char(v: char);
        serialize_str(v: &str);
        serialize_bytes(v: &[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(name: &'static str);
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str);
    }

    fn serialize_f32(self, v: f32) -> Result<S::Ok, S::Error> {
        self.0.serialize_f64(f64::from(v))
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.0.serialize_some(&Widened(value))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_newtype_struct(name, &Widened(value))
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0
            .serialize_newtype_variant(name, index, variant, &Widened(value))
    }

    open! {
        serialize_seq(len: Option<usize>) -> SerializeSeq;
        serialize_tuple(len: usize) -> SerializeTuple;
        serialize_tuple_struct(name: &'static str, len: usize) -> SerializeTupleStruct;
        serialize_tuple_variant(
            name: &'static str,
            index: u32,
            variant: &'static str,
            len: usize
        ) -> SerializeTupleVariant;
        serialize_map(len: Option<usize>) -> SerializeMap;
        serialize_struct(name: &'static str, len: usize) -> SerializeStruct;
        serialize_struct_variant(
            name: &'static str,
            index: u32,
            variant: &'static str,
            len: usize
        ) -> SerializeStructVariant;
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

macro_rules! compound {
    ($($trait:ident :: $method:ident;)*) => {
        $(impl<C: ser::$trait> ser::$trait for Compound<C> {
            type Ok = C::Ok;
            type Error = C::Error;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
                self.0.$method(&Widened(value))
            }

            fn end(self) -> Result<C::Ok, C::Error> {
                self.0.end()
            }
        })*
    };
}

compound! {
    SerializeSeq::serialize_element;
    SerializeTuple::serialize_element;
    SerializeTupleStruct::serialize_field;
    SerializeTupleVariant::serialize_field;
}

impl<C: ser::SerializeMap> ser::SerializeMap for Compound<C> {
    type Ok = C::Ok;
    type Error = C::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), C::Error> {
        // A key is written as text, not through a `Value`'s numbers: left as it is.
        self.0.serialize_key(key)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
        self.0.serialize_value(&Widened(value))
    }

    fn end(self) -> Result<C::Ok, C::Error> {
        self.0.end()
    }
}

/// The two struct serializers, whose fields are named and may be skipped.
macro_rules! compound_struct {
    ($($trait:ident),*) => {
        $(impl<C: ser::$trait> ser::$trait for Compound<C> {
            type Ok = C::Ok;
            type Error = C::Error;

            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), C::Error> {
                self.0.serialize_field(key, &Widened(value))
            }

            fn skip_field(&mut self, key: &'static str) -> Result<(), C::Error> {
                self.0.skip_field(key)
            }

            fn end(self) -> Result<C::Ok, C::Error> {
                self.0.end()
            }
        })*
    };
}

compound_struct!(SerializeStruct, SerializeStructVariant);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_build_writes_params_directly() {
        // With serde_json's `preserve_order` (which rmcp enables), only `f32`s differ.
        assert_eq!(*WRITER, Writer::Widened);
    }
}
