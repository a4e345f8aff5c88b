//! Spans sent over OTLP/HTTP in protobuf, encoded straight from the SDK's `SpanData`.
//!
//! Why not `opentelemetry-otlp`'s span exporter: it first converts every span into
//! `opentelemetry-proto`'s owned message types (each id, name and attribute copied into a
//! fresh allocation, then grouped through a hash map by scope), encodes that with prost,
//! and drops it: counted, about 18,000 instructions a span, as much as the rest of a
//! span's life (BENCHMARKS.md). Here a batch is written once into one buffer, the bytes
//! prost would write for the same `ExportTraceServiceRequest` (the receiver tests decode
//! them with prost's types). The metrics keep `opentelemetry-otlp`'s exporter: they are
//! sent once a period, not per request.
//!
//! What the exporter is told comes from where `opentelemetry-otlp` reads it: the
//! builder's endpoint (`{endpoint}/v1/traces`), else `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
//! as it is, else `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces`, else
//! `http://localhost:4318/v1/traces`; headers from `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, else
//! `OTEL_EXPORTER_OTLP_HEADERS` (`key=value,…`, values percent-decoded).

use std::time::SystemTime;

use hyper::body::Bytes;
use opentelemetry::trace::{SpanKind, Status};
use opentelemetry::{Array, InstrumentationScope, KeyValue, Value};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

use opentelemetry_http::HttpClient;

const TRACES_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
const ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
const TRACES_HEADERS: &str = "OTEL_EXPORTER_OTLP_TRACES_HEADERS";
const HEADERS: &str = "OTEL_EXPORTER_OTLP_HEADERS";
const DEFAULT_ENDPOINT: &str = "http://localhost:4318";

/// The span exporter: where to send, with which headers, the service's resource encoded
/// once.
#[derive(Debug)]
pub(super) struct Spans {
    client: std::sync::Arc<dyn HttpClient>,
    endpoint: http::Uri,
    headers: http::HeaderMap,
    /// The `Resource` message's bytes (its attributes), written into every batch.
    resource: Vec<u8>,
    resource_schema: Option<String>,
}

impl Spans {
    /// Sends through `client` to `endpoint` (the collector's base, `http://host:4318`), or
    /// where the variables say; why not, when that is not a URL.
    pub(super) fn new(
        client: std::sync::Arc<dyn HttpClient>,
        endpoint: Option<&str>,
    ) -> Result<Self, String> {
        let var = |name| std::env::var(name).ok().filter(|value| !value.is_empty());
        let (url, from) = match (endpoint.filter(|e| !e.is_empty()), var(TRACES_ENDPOINT)) {
            (Some(base), _) => (joined(base), "the builder's endpoint"),
            (None, Some(url)) => (url, TRACES_ENDPOINT),
            (None, None) => match var(ENDPOINT) {
                Some(base) => (joined(&base), ENDPOINT),
                None => (joined(DEFAULT_ENDPOINT), "the default endpoint"),
            },
        };
        let endpoint = url
            .parse::<http::Uri>()
            .map_err(|error| format!("{from} is not a URL ({url:?}): {error}"))?;
        let mut headers = http::HeaderMap::new();
        if let Some(listed) = var(TRACES_HEADERS).or_else(|| var(HEADERS)) {
            for (name, value) in parse_headers(&listed) {
                headers.insert(name, value);
            }
        }
        Ok(Spans {
            client,
            endpoint,
            headers,
            resource: Vec::new(),
            resource_schema: None,
        })
    }

    /// The request's body: one `ExportTraceServiceRequest`.
    fn body(&self, batch: &[SpanData]) -> Vec<u8> {
        // About what a span of saga's takes (its attributes most of it): grown rarely.
        let mut out = Vec::with_capacity(256 + 640 * batch.len());
        // ExportTraceServiceRequest.resource_spans (1): one resource, the service's.
        nested(&mut out, 1, |out| {
            nested(out, 1, |out| out.extend_from_slice(&self.resource));
            // One ScopeSpans per scope, in the order the scopes first appear; a batch
            // holds one or two, so a scan is cheaper than a map.
            // Each span's scope is compared once: its index in `scopes`.
            let mut scopes: Vec<&InstrumentationScope> = Vec::new();
            let mut scope_of = Vec::with_capacity(batch.len());
            for span in batch {
                let scope = &span.instrumentation_scope;
                let at = match scopes.iter().position(|known| *known == scope) {
                    Some(at) => at,
                    None => {
                        scopes.push(scope);
                        scopes.len() - 1
                    }
                };
                scope_of.push(at);
            }
            for (at, scope) in scopes.iter().enumerate() {
                nested(out, 2, |out| {
                    nested(out, 1, |out| instrumentation_scope(out, scope));
                    for (span, _) in batch.iter().zip(&scope_of).filter(|(_, of)| **of == at) {
                        nested(out, 2, |out| self::span(out, span));
                    }
                    string(out, 3, scope.schema_url().unwrap_or_default());
                });
            }
            string(out, 3, self.resource_schema.as_deref().unwrap_or_default());
        });
        out
    }
}

impl SpanExporter for Spans {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        if batch.is_empty() {
            return Ok(());
        }
        let body = self.body(&batch);
        let spans = batch.len();
        drop(batch);
        let mut request = http::Request::post(self.endpoint.clone())
            .header(http::header::CONTENT_TYPE, "application/x-protobuf")
            .body(Bytes::from(body))
            .map_err(|error| OTelSdkError::InternalFailure(error.to_string()))?;
        request
            .headers_mut()
            .extend(self.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
        let response = self
            .client
            .send_bytes(request)
            .await
            .map_err(|error| OTelSdkError::InternalFailure(error.to_string()))?;
        if response.status().is_success() {
            Ok(())
        } else {
            Err(OTelSdkError::InternalFailure(format!(
                "the collector answered {} to a batch of {spans} spans",
                response.status(),
            )))
        }
    }

    fn set_resource(&mut self, resource: &Resource) {
        let mut out = Vec::new();
        for (key, value) in resource.iter() {
            nested(&mut out, 1, |out| key_value(out, key.as_str(), value));
        }
        self.resource = out;
        self.resource_schema = resource.schema_url().map(str::to_owned);
    }
}

/// `{base}/v1/traces`, one slash between.
fn joined(base: &str) -> String {
    format!("{}/v1/traces", base.trim_end_matches('/'))
}

/// `key=value,…` as OpenTelemetry's variables list headers: values percent-decoded (kept
/// as written where that fails), pairs with an empty key or value, or not a valid header,
/// left out.
fn parse_headers(listed: &str) -> impl Iterator<Item = (http::HeaderName, http::HeaderValue)> {
    listed.split(',').filter_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        let (key, value) = (key.trim(), value.trim());
        let value = percent_decoded(value).unwrap_or_else(|| value.to_owned());
        if key.is_empty() || value.is_empty() {
            return None;
        }
        Some((
            http::HeaderName::from_bytes(key.as_bytes()).ok()?,
            http::HeaderValue::from_str(&value).ok()?,
        ))
    })
}

/// `value` with its `%XX` escapes decoded; `None` when one is malformed or the bytes are
/// not UTF-8.
fn percent_decoded(value: &str) -> Option<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = std::str::from_utf8(bytes.get(at + 1..at + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).ok()
}

// Protobuf, as much of it as OTLP's trace messages use. Field numbers are those of
// `opentelemetry/proto/trace/v1/trace.proto` and `common/v1/common.proto`.

const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LEN: u32 = 2;
const FIXED32: u32 = 5;

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn key(out: &mut Vec<u8>, field: u32, wire: u32) {
    varint(out, u64::from(field << 3 | wire));
}

/// A length-delimited field whose content `write` appends: one byte is kept for the
/// length, and the content moved up when the length needs more.
fn nested(out: &mut Vec<u8>, field: u32, write: impl FnOnce(&mut Vec<u8>)) {
    key(out, field, LEN);
    let at = out.len();
    out.push(0);
    write(out);
    let len = out.len() - at - 1;
    if len < 0x80 {
        out[at] = len as u8;
    } else {
        let mut prefix = Vec::with_capacity(10);
        varint(&mut prefix, len as u64);
        out[at] = prefix[0];
        out.splice(at + 1..at + 1, prefix[1..].iter().copied());
    }
}

/// A string or bytes field, left out when empty (proto3's default).
fn bytes(out: &mut Vec<u8>, field: u32, value: &[u8]) {
    if !value.is_empty() {
        key(out, field, LEN);
        varint(out, value.len() as u64);
        out.extend_from_slice(value);
    }
}

fn string(out: &mut Vec<u8>, field: u32, value: &str) {
    bytes(out, field, value.as_bytes());
}

/// A varint field, left out when zero.
fn number(out: &mut Vec<u8>, field: u32, value: u64) {
    if value != 0 {
        key(out, field, VARINT);
        varint(out, value);
    }
}

fn fixed64(out: &mut Vec<u8>, field: u32, value: u64) {
    if value != 0 {
        key(out, field, FIXED64);
        out.extend_from_slice(&value.to_le_bytes());
    }
}

fn fixed32(out: &mut Vec<u8>, field: u32, value: u32) {
    if value != 0 {
        key(out, field, FIXED32);
        out.extend_from_slice(&value.to_le_bytes());
    }
}

fn nanos(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
        })
}

/// A span's or link's flags: its trace flags, and whether its parent (for a link, its
/// context) is remote, as the `SpanFlags` mask says.
fn flags(trace_flags: u8, remote: bool) -> u32 {
    const HAS_IS_REMOTE: u32 = 0x100;
    const IS_REMOTE: u32 = 0x200;
    u32::from(trace_flags) | HAS_IS_REMOTE | if remote { IS_REMOTE } else { 0 }
}

fn instrumentation_scope(out: &mut Vec<u8>, scope: &InstrumentationScope) {
    string(out, 1, scope.name());
    string(out, 2, scope.version().unwrap_or_default());
    attributes(out, 3, scope.attributes());
}

fn span(out: &mut Vec<u8>, span: &SpanData) {
    let context = &span.span_context;
    bytes(out, 1, &context.trace_id().to_bytes());
    bytes(out, 2, &context.span_id().to_bytes());
    string(out, 3, &context.trace_state().header());
    if span.parent_span_id != opentelemetry::trace::SpanId::INVALID {
        bytes(out, 4, &span.parent_span_id.to_bytes());
    }
    string(out, 5, &span.name);
    number(out, 6, kind(&span.span_kind));
    fixed64(out, 7, nanos(span.start_time));
    fixed64(out, 8, nanos(span.end_time));
    attributes(out, 9, &span.attributes);
    number(out, 10, u64::from(span.dropped_attributes_count));
    for event in span.events.iter() {
        nested(out, 11, |out| {
            fixed64(out, 1, nanos(event.timestamp));
            string(out, 2, &event.name);
            attributes(out, 3, &event.attributes);
            number(out, 4, u64::from(event.dropped_attributes_count));
        });
    }
    number(out, 12, u64::from(span.events.dropped_count));
    for link in span.links.iter() {
        let context = &link.span_context;
        nested(out, 13, |out| {
            bytes(out, 1, &context.trace_id().to_bytes());
            bytes(out, 2, &context.span_id().to_bytes());
            string(out, 3, &context.trace_state().header());
            attributes(out, 4, &link.attributes);
            number(out, 5, u64::from(link.dropped_attributes_count));
            fixed32(
                out,
                6,
                flags(context.trace_flags().to_u8(), context.is_remote()),
            );
        });
    }
    number(out, 14, u64::from(span.links.dropped_count));
    // Always written, as prost writes the `Some(Status)` it is given.
    nested(out, 15, |out| match &span.status {
        Status::Error { description } => {
            string(out, 2, description);
            number(out, 3, 2);
        }
        Status::Ok => number(out, 3, 1),
        Status::Unset => {}
    });
    fixed32(
        out,
        16,
        flags(context.trace_flags().to_u8(), span.parent_span_is_remote),
    );
}

fn kind(kind: &SpanKind) -> u64 {
    match kind {
        SpanKind::Internal => 1,
        SpanKind::Server => 2,
        SpanKind::Client => 3,
        SpanKind::Producer => 4,
        SpanKind::Consumer => 5,
    }
}

fn attributes<'a>(out: &mut Vec<u8>, field: u32, list: impl IntoIterator<Item = &'a KeyValue>) {
    for attribute in list {
        let name = attribute.key.as_str();
        // A scalar's length is known before it is written: no room kept and moved, as
        // `nested` would (most of a span's bytes are its attributes).
        let Some(any) = scalar_len(&attribute.value) else {
            nested(out, field, |out| key_value(out, name, &attribute.value));
            continue;
        };
        // The key is left out when empty, as proto3 leaves a default out.
        let key_len = if name.is_empty() {
            0
        } else {
            1 + varint_len(name.len() as u64) + name.len()
        };
        key(out, field, LEN);
        varint(out, (key_len + 1 + varint_len(any as u64) + any) as u64);
        string(out, 1, name);
        key(out, 2, LEN);
        varint(out, any as u64);
        any_value(out, &attribute.value);
    }
}

/// The bytes of a scalar's `AnyValue`; `None` for an array (and what is to come).
fn scalar_len(value: &Value) -> Option<usize> {
    Some(match value {
        Value::Bool(_) => 2,
        Value::I64(value) => 1 + varint_len(*value as u64),
        Value::F64(_) => 9,
        Value::String(text) => 1 + varint_len(text.as_str().len() as u64) + text.as_str().len(),
        _ => return None,
    })
}

/// How many bytes `value` takes as a varint.
fn varint_len(value: u64) -> usize {
    let bits = 64 - value.leading_zeros() as usize;
    bits.max(1).div_ceil(7)
}

fn key_value(out: &mut Vec<u8>, name: &str, value: &Value) {
    string(out, 1, name);
    nested(out, 2, |out| any_value(out, value));
}

/// An `AnyValue`: a oneof, so its field is written even when it holds the default (a
/// `false`, a `0`, an empty string), as prost writes a oneof that is set.
fn any_value(out: &mut Vec<u8>, value: &Value) {
    let text = |out: &mut Vec<u8>, text: &str| {
        key(out, 1, LEN);
        varint(out, text.len() as u64);
        out.extend_from_slice(text.as_bytes());
    };
    let boolean = |out: &mut Vec<u8>, value: bool| {
        key(out, 2, VARINT);
        varint(out, u64::from(value));
    };
    let int = |out: &mut Vec<u8>, value: i64| {
        key(out, 3, VARINT);
        varint(out, value as u64);
    };
    let double = |out: &mut Vec<u8>, value: f64| {
        key(out, 4, FIXED64);
        out.extend_from_slice(&value.to_bits().to_le_bytes());
    };
    match value {
        Value::Bool(value) => boolean(out, *value),
        Value::I64(value) => int(out, *value),
        Value::F64(value) => double(out, *value),
        Value::String(value) => text(out, value.as_str()),
        Value::Array(array) => nested(out, 5, |out| {
            // ArrayValue.values (1), each an AnyValue.
            let mut each = |write: &mut dyn FnMut(&mut Vec<u8>)| nested(out, 1, |out| write(out));
            match array {
                Array::Bool(values) => values.iter().for_each(|v| each(&mut |o| boolean(o, *v))),
                Array::I64(values) => values.iter().for_each(|v| each(&mut |o| int(o, *v))),
                Array::F64(values) => values.iter().for_each(|v| each(&mut |o| double(o, *v))),
                Array::String(values) => values
                    .iter()
                    .for_each(|v| each(&mut |o| text(o, v.as_str()))),
                other => each(&mut |o| text(o, &other.to_string())),
            }
        }),
        other => text(out, &other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::time::{Duration, SystemTime};

    use opentelemetry::trace::{
        Event, Link, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
    };
    use opentelemetry::{InstrumentationScope, KeyValue, Value};
    use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};

    fn sample(scope: &str, n: u8) -> SpanData {
        let context = |trace: u128, span: u64, remote| {
            SpanContext::new(
                TraceId::from(trace),
                SpanId::from(span),
                TraceFlags::SAMPLED,
                remote,
                TraceState::from_key_value([("saga", "x")]).expect("state"),
            )
        };
        let mut events = SpanEvents::default();
        events.events.push(Event::new(
            "task taken over",
            SystemTime::UNIX_EPOCH + Duration::from_secs(7),
            vec![KeyValue::new("saga.n", 0_i64)],
            1,
        ));
        let mut links = SpanLinks::default();
        links.links.push(Link::new(
            context(9, 10, true),
            vec![KeyValue::new("k", true)],
            0,
        ));
        SpanData {
            span_context: context(0x0123_4567_89ab_cdef + u128::from(n), 0xfeed, false),
            parent_span_id: SpanId::from(u64::from(n) + 1),
            parent_span_is_remote: n.is_multiple_of(2),
            span_kind: SpanKind::Server,
            name: Cow::Owned(format!("tools/call deploy {n}")),
            start_time: SystemTime::UNIX_EPOCH + Duration::from_nanos(1_700_000_000_123_456_789),
            end_time: SystemTime::UNIX_EPOCH + Duration::from_nanos(1_700_000_001_000_000_000),
            attributes: vec![
                KeyValue::new("mcp.method.name", "tools/call"),
                KeyValue::new("saga.round", i64::from(n)),
                KeyValue::new("neg", -5_i64),
                KeyValue::new("zero", 0_i64),
                KeyValue::new("f", 0.25),
                KeyValue::new("no", false),
                KeyValue::new("empty", ""),
                KeyValue::new(
                    "gen_ai.response.finish_reasons",
                    Value::Array(vec![opentelemetry::StringValue::from("stop")].into()),
                ),
                KeyValue::new("long", "x".repeat(300)),
                KeyValue::new("", "no key"),
                KeyValue::new("big", i64::MAX),
                KeyValue::new("seven", 127_i64),
                KeyValue::new("eight", 128_i64),
                KeyValue::new("bools", Value::Array(vec![true, false].into())),
            ],
            dropped_attributes_count: 2,
            events,
            links,
            status: if n == 0 {
                Status::error("boom")
            } else {
                Status::Unset
            },
            instrumentation_scope: InstrumentationScope::builder(scope.to_owned())
                .with_version("1.2")
                .build(),
        }
    }

    /// The bytes written are the bytes prost writes for the same request, converted as
    /// `opentelemetry-otlp` converts it (its grouping by scope included): any collector
    /// reads them as it reads the SDK exporter's.
    #[test]
    fn a_batch_is_encoded_as_prost_encodes_it() {
        use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
        use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
        use prost::Message as _;

        let resource = opentelemetry_sdk::Resource::builder_empty()
            .with_service_name("svc")
            .with_attribute(KeyValue::new("n", 3_i64))
            .build();
        let batch = vec![
            sample("saga-runtime", 0),
            sample("app", 1),
            sample("saga-runtime", 2),
        ];
        let client = super::super::export::ExportClient::new().expect("client");
        let mut spans = super::Spans::new(std::sync::Arc::new(client), Some("http://127.0.0.1:9"))
            .expect("exporter");
        opentelemetry_sdk::trace::SpanExporter::set_resource(&mut spans, &resource);
        let ours = spans.body(&batch);
        let theirs = opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest {
            resource_spans: group_spans_by_resource_and_scope(
                batch,
                &ResourceAttributesWithSchema::from(&resource),
            ),
        };
        let decoded =
            opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest::decode(
                ours.as_slice(),
            )
            .expect("prost reads it");
        assert_eq!(decoded, theirs, "the same message");
        assert_eq!(ours, theirs.encode_to_vec(), "the same bytes");
    }

    #[test]
    fn headers_are_read_as_the_variables_list_them() {
        let headers: Vec<_> = super::parse_headers(
            "api-key=s%20e%3Dcret, x-team = blue ,=nokey,novalue=,bad%=a%zz,broken,sp ace=x",
        )
        .map(|(k, v)| (k.to_string(), v.to_str().expect("ascii").to_owned()))
        .collect();
        // A malformed escape is kept as written, as `opentelemetry-otlp` keeps it.
        assert_eq!(
            headers,
            [
                ("api-key".to_owned(), "s e=cret".to_owned()),
                ("x-team".to_owned(), "blue".to_owned()),
                ("bad%".to_owned(), "a%zz".to_owned()),
            ]
        );
        assert_eq!(super::percent_decoded("a%zz"), None);
        assert_eq!(super::percent_decoded("a%2"), None);
        assert_eq!(super::percent_decoded("%C3%A9").as_deref(), Some("é"));
    }
}
