//! The direct path's JSON reply: the bytes rmcp writes, without the `serde_json::Value`
//! rmcp 3.11 builds for every input request.
//!
//! rmcp writes a request's params by turning them into a `Value` first, to merge in a
//! `_meta` that the request's extensions may carry, and then writing that value. When
//! neither the extensions nor the params carry a `_meta`, the merge changes nothing, and
//! writing the params straight out gives the same bytes, with one exception: the `Value`
//! may store an `f32` differently (this build widens it to `f64`, so `0.7` is written
//! `0.699999988079071`). [`Writer::detect`] compares the two ways of writing once, when
//! the first reply is written, and chooses the writer that gives rmcp's bytes: direct,
//! direct with every `f32` widened, or rmcp's own when neither matches.

use std::sync::LazyLock;

use rmcp::model::{
    InputRequest, JsonRpcMessage, JsonRpcResponse, MetaObject, RequestMetaObject,
    ServerJsonRpcMessage, ServerResult,
};
use serde::ser::{self, Serialize, SerializeMap, SerializeStruct, Serializer};

/// Writes `message` as `serde_json::to_writer` would.
///
/// `server_info` is the `serverInfo` stamp of an input-required or complete result that
/// has no `_meta` of its own, as JSON ([`crate::serve::tools::server_info_stamp`]): it is
/// written as the `_meta` that stamping the result would have given it, so the result
/// need not be stamped, which cloned the server info into new maps for every reply.
/// Only a writer that writes results directly takes it ([`stamps_unstamped`]).
pub(super) fn write(
    message: &ServerJsonRpcMessage,
    server_info: Option<&[u8]>,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    let widen = match *WRITER {
        Writer::Direct => false,
        Writer::Widened => true,
        Writer::Rmcp => {
            debug_assert!(server_info.is_none(), "rmcp's writer stamps nothing");
            return serde_json::to_writer(out, message);
        }
    };
    match message {
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc,
            id,
            result: ServerResult::InputRequiredResult(result),
        }) => {
            // The envelope's and the result's keys written as the bytes serde_json writes
            // for them: they are constants that need no escaping, and each key written
            // through the serializer was a pass over it looking for characters to escape
            // (BENCHMARKS.md). Their values are serde_json's.
            out.extend_from_slice(br#"{"jsonrpc":"#);
            serde_json::to_writer(&mut *out, jsonrpc)?;
            out.extend_from_slice(br#","id":"#);
            serde_json::to_writer(&mut *out, id)?;
            out.extend_from_slice(br#","result":{"resultType":"#);
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
            out.extend_from_slice(b"}}");
            Ok(())
        }
        JsonRpcMessage::Response(JsonRpcResponse {
            result: ServerResult::CallToolResult(result),
            ..
        }) if result.meta.is_none() => {
            let start = out.len();
            serde_json::to_writer(&mut *out, message)?;
            let Some(stamp) = server_info else {
                return Ok(());
            };
            // The result's `_meta` is its last field, and the result the response's: the
            // stamped result's bytes are these with `,"_meta":STAMP` before the result's
            // closing brace (a test compares them with rmcp's). Stamping the result
            // itself cloned the server info into new maps for every reply.
            if out.ends_with(b"}}") {
                out.truncate(out.len() - 2);
                out.extend_from_slice(br#","_meta":"#);
                out.extend_from_slice(stamp);
                out.extend_from_slice(b"}}");
                return Ok(());
            }
            // Not the shape above (another rmcp): the stamped result, written by rmcp.
            out.truncate(start);
            let mut stamped = message.clone();
            if let JsonRpcMessage::Response(JsonRpcResponse {
                result: ServerResult::CallToolResult(result),
                ..
            }) = &mut stamped
            {
                let meta: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_slice(stamp)?;
                result.meta = Some(MetaObject(meta));
            }
            serde_json::to_writer(out, &stamped)
        }
        _ => {
            debug_assert!(
                server_info.is_none(),
                "only an input-required or a complete result is stamped"
            );
            serde_json::to_writer(out, message)
        }
    }
}

/// Whether [`write()`] writes an input-required or complete result's `serverInfo` stamp
/// itself.
pub(super) fn stamps_unstamped() -> bool {
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
                &Request {
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
struct Request<'a> {
    request: &'a InputRequest,
    widen: bool,
}

impl Serialize for Request<'_> {
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

impl Request<'_> {
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
    use rmcp::model::{
        CreateMessageRequestParams, ElicitRequestParams, ElicitationSchema, InputRequests,
        InputRequiredResult, ModelPreferences, RequestId, SamplingMessage,
    };

    fn reply(requests: Vec<(&str, InputRequest)>) -> ServerJsonRpcMessage {
        let mut map = InputRequests::new();
        for (key, request) in requests {
            map.insert(key.to_owned(), request);
        }
        let mut result = InputRequiredResult::from_request_state("state");
        result.input_requests = Some(map);
        ServerJsonRpcMessage::response(
            ServerResult::InputRequiredResult(result),
            RequestId::Number(7),
        )
    }

    fn same_bytes_as_rmcp(message: &ServerJsonRpcMessage) {
        let mut ours = Vec::new();
        write(message, None, &mut ours).unwrap();
        let rmcp = serde_json::to_vec(message).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&rmcp)
        );
    }

    fn sample(params: CreateMessageRequestParams) -> InputRequest {
        InputRequest::CreateMessage(rmcp::model::CreateMessageRequest::new(params))
    }

    fn form(message: &str) -> InputRequest {
        let schema = ElicitationSchema::builder()
            .required_string("target")
            .optional_number("replicas", 0.5, 10.0)
            .build()
            .unwrap();
        InputRequest::Elicitation(rmcp::model::ElicitRequest::new(
            ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: message.to_owned(),
                requested_schema: schema,
            },
        ))
    }

    /// Writes `unstamped` with the stamp of `info`, requires rmcp's bytes for the result
    /// stamped, and returns them.
    fn same_bytes_as_stamped(
        unstamped: rmcp::model::CallToolResponse,
        info: &serde_json::Value,
        id: RequestId,
    ) -> String {
        let mut stamped = unstamped.clone();
        crate::serve::tools::stamp_server_info(&mut stamped, info);
        let message =
            |response| ServerJsonRpcMessage::response(ServerResult::from(response), id.clone());
        let mut ours = Vec::new();
        let stamp = crate::serve::tools::server_info_stamp(info);
        write(&message(unstamped), Some(&stamp), &mut ours).unwrap();
        let rmcp = serde_json::to_vec(&message(stamped)).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&rmcp)
        );
        String::from_utf8(ours).unwrap()
    }

    /// The stamp the writer writes is the one stamping the result gives, as rmcp writes it.
    #[test]
    fn a_stamp_written_by_the_writer_is_the_stamped_results() {
        let info = serde_json::json!({"name": "deploy \"server\"", "version": "0.1.0"});
        let mut result = InputRequiredResult::from_request_state("s");
        let mut requests = InputRequests::new();
        requests.insert("elicit-1".to_owned(), form("Where to?"));
        result.input_requests = Some(requests);
        let ours = same_bytes_as_stamped(
            rmcp::model::CallToolResponse::InputRequired(result),
            &info,
            RequestId::Number(7),
        );
        assert!(ours.contains(r#""_meta":{"io.modelcontextprotocol/serverInfo":{"name""#));
    }

    /// A complete result's stamp, written by the writer, is the stamped result's, as rmcp
    /// writes it: with and without structured content and an error flag.
    #[test]
    fn a_complete_results_stamp_written_by_the_writer_is_the_stamped_results() {
        let info = serde_json::json!({"name": "deploy \"server\"", "version": "0.1.0"});
        let mut structured =
            rmcp::model::CallToolResult::structured(serde_json::json!({"ok": true, "n": [1, 2.5]}));
        structured.is_error = Some(false);
        let results = [
            rmcp::model::CallToolResult::success(vec![rmcp::model::ContentBlock::text("done ✓")]),
            rmcp::model::CallToolResult::error(vec![]),
            structured,
        ];
        for unstamped in results {
            same_bytes_as_stamped(
                rmcp::model::CallToolResponse::Complete(unstamped),
                &info,
                RequestId::String("r\"1".into()),
            );
        }
    }

    #[test]
    fn this_build_writes_params_directly() {
        // With serde_json's `preserve_order` (which rmcp enables), only `f32`s differ.
        assert_eq!(*WRITER, Writer::Widened);
    }

    #[test]
    fn input_required_replies_are_rmcps_bytes() {
        let plain = CreateMessageRequestParams::new(
            vec![SamplingMessage::user_text("Is it \"safe\"? ✓")],
            100,
        );
        same_bytes_as_rmcp(&reply(vec![("sample-2", sample(plain.clone()))]));
        same_bytes_as_rmcp(&reply(vec![("elicit-1", form("Where to?"))]));
        // `f32`s, which a `Value` widens.
        let floats = plain.clone().with_temperature(0.7).with_model_preferences(
            ModelPreferences::new()
                .with_cost_priority(0.1)
                .with_speed_priority(f32::NAN),
        );
        same_bytes_as_rmcp(&reply(vec![
            ("a", sample(floats)),
            ("b", form("second")),
            ("c", InputRequest::ListRoots(Default::default())),
        ]));
        // A `_meta` in the params, which rmcp moves first.
        let mut meta = RequestMetaObject::default();
        meta.0.0.insert("k".into(), serde_json::json!(1.25));
        let mut with_meta = plain.clone();
        with_meta.meta = Some(meta.clone());
        same_bytes_as_rmcp(&reply(vec![("m", sample(with_meta))]));
        // A `_meta` in the extensions, which rmcp merges in.
        let mut request = rmcp::model::CreateMessageRequest::new(plain);
        request.extensions.insert(meta);
        same_bytes_as_rmcp(&reply(vec![("x", InputRequest::CreateMessage(request))]));
        // A checkpoint (a state, no requests), a result with a `_meta` of its own, and
        // one with neither a state nor requests, under a string id to escape.
        let mut checkpoint = InputRequiredResult::from_request_state("only\"state");
        same_bytes_as_rmcp(&ServerJsonRpcMessage::response(
            ServerResult::InputRequiredResult(checkpoint.clone()),
            RequestId::String("id \"1\"".into()),
        ));
        let mut own_meta = MetaObject::default();
        own_meta
            .0
            .insert("k".into(), serde_json::json!({"x": [1, "y"]}));
        checkpoint.meta = Some(own_meta);
        same_bytes_as_rmcp(&ServerJsonRpcMessage::response(
            ServerResult::InputRequiredResult(checkpoint.clone()),
            RequestId::Number(-3),
        ));
        checkpoint.request_state = None;
        same_bytes_as_rmcp(&ServerJsonRpcMessage::response(
            ServerResult::InputRequiredResult(checkpoint),
            RequestId::Number(0),
        ));
        // Other messages are serde_json's.
        same_bytes_as_rmcp(&ServerJsonRpcMessage::error(
            rmcp::ErrorData::invalid_params("no", None),
            Some(RequestId::String("s".into())),
        ));
    }
}
