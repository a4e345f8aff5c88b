//! What a request brings of a trace: the W3C trace context of its `_meta`, or of its
//! transport (the HTTP `traceparent` header) or its task (the creating request's span).

use std::str::FromStr as _;
use std::sync::{Arc, Mutex, OnceLock};

use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};

use crate::state::SagaTrace;

/// `_meta`'s keys for W3C trace context (SEP-414), and the HTTP header's name.
pub(crate) const TRACEPARENT: &str = "traceparent";
const TRACESTATE: &str = "tracestate";

/// The longest `tracestate` read: W3C's own bound on what a vendor must propagate
/// (512 characters, 32 members). A longer one is dropped whole, as W3C allows.
const TRACESTATE_MAX: usize = 512;
const TRACESTATE_MEMBERS_MAX: usize = 32;

/// A request's trace, beside its context: where its span's parent comes from when its
/// `_meta` names none, and the span its call runs in.
#[derive(Debug, Clone, Default)]
pub(crate) struct RequestTrace {
    /// The HTTP `traceparent` header's context, or a task's creation's span.
    pub(crate) fallback: Option<SagaTrace>,
    /// A task's worker step: the task's id (its span is then the creation's child).
    pub(crate) task: Option<Arc<str>>,
    /// The call's MCP server span and its ids, once its drive made them (each drive of
    /// the same context makes its own): a copy of a context shares them. The span stays
    /// open while the context lives, so that what the request does after its drive (a
    /// task's creation) is under it.
    ///
    /// Made by the first drive whose span is recorded: a request nothing records allocates
    /// nothing for it.
    pub(crate) call: OnceLock<Arc<Mutex<CallTrace>>>,
}

/// The span of the call a context runs, and its ids when a trace is recorded.
#[derive(Debug, Default)]
pub(crate) struct CallTrace {
    pub(crate) span: Option<super::span::OtelSpan>,
    pub(crate) ids: Option<SagaTrace>,
    /// Whether the span links to its saga's first span already: a drive that runs several
    /// rounds (a session's, checkpoints passed) links once.
    pub(crate) linked: bool,
}

impl RequestTrace {
    /// The call's span, if its drive made one.
    pub(crate) fn span(&self) -> Option<super::span::OtelSpan> {
        self.call.get()?.lock().ok()?.span.clone()
    }

    /// The ids of the call's span, when a trace is recorded.
    pub(crate) fn ids(&self) -> Option<SagaTrace> {
        self.call.get()?.lock().ok()?.ids
    }
}

impl RequestTrace {
    /// The trace an HTTP request's `traceparent` header names, if it is well formed.
    pub(crate) fn of_headers(headers: &http::HeaderMap) -> Self {
        // Read only where a span may be recorded (a telemetry is built): a server that
        // records nothing does not look.
        if !super::span::recording() {
            return Self::default();
        }
        let mut values = headers.get_all(TRACEPARENT).iter();
        let fallback = match (values.next(), values.next()) {
            // One header only: two are ambiguous, and W3C asks that they be ignored.
            (Some(value), None) => value.to_str().ok().and_then(SagaTrace::parse_traceparent),
            _ => None,
        };
        Self {
            fallback,
            ..Self::default()
        }
    }

    /// A task's worker step, parented on the span that created it (`traceparent`, as its
    /// record keeps it).
    pub(crate) fn of_task(id: &str, traceparent: Option<&str>) -> Self {
        Self {
            fallback: traceparent.and_then(SagaTrace::parse_traceparent),
            task: Some(id.into()),
            ..Self::default()
        }
    }
}

/// The parent a request's span takes: the context of its `_meta` when that has a
/// well-formed `traceparent`, else its trace's fallback (header, task); `None` for
/// neither.
pub(crate) fn parent(
    meta: &rmcp::model::RequestMetaObject,
    trace: &RequestTrace,
) -> Option<SpanContext> {
    let meta = &(meta.0).0;
    let from_meta = meta
        .get(TRACEPARENT)
        .and_then(serde_json::Value::as_str)
        .and_then(SagaTrace::parse_traceparent);
    let (trace, state) = match from_meta {
        Some(trace) => (
            trace,
            meta.get(TRACESTATE)
                .and_then(serde_json::Value::as_str)
                .and_then(trace_state)
                .unwrap_or_default(),
        ),
        None => (trace.fallback?, TraceState::default()),
    };
    Some(span_context(&trace, state))
}

/// `text` as a `tracestate`, if it is within the bound and well formed.
fn trace_state(text: &str) -> Option<TraceState> {
    if text.len() > TRACESTATE_MAX || text.split(',').count() > TRACESTATE_MEMBERS_MAX {
        return None;
    }
    TraceState::from_str(text).ok()
}

/// A remote span context of `trace`'s ids.
pub(crate) fn span_context(trace: &SagaTrace, state: TraceState) -> SpanContext {
    SpanContext::new(
        TraceId::from_bytes(trace.trace_id),
        SpanId::from_bytes(trace.span_id),
        TraceFlags::new(trace.flags),
        true,
        state,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    fn with_meta(meta: serde_json::Value) -> rmcp::model::RequestMetaObject {
        serde_json::from_value(meta).expect("meta")
    }

    fn parent(meta: &rmcp::model::RequestMetaObject) -> Option<SpanContext> {
        super::parent(meta, &RequestTrace::default())
    }

    #[test]
    fn meta_parents_the_request_and_a_bad_value_is_ignored() {
        let cx = with_meta(serde_json::json!({"traceparent": GOOD, "tracestate": "a=1,b=2"}));
        let found = parent(&cx).expect("a parent");
        assert_eq!(
            found.trace_id().to_bytes(),
            SagaTrace::parse_traceparent(GOOD).unwrap().trace_id
        );
        assert_eq!(found.trace_state().get("b"), Some("2"));
        for bad in [
            serde_json::json!({"traceparent": "00-zz"}),
            serde_json::json!({"traceparent": 7}),
            serde_json::json!({"traceparent": GOOD.to_uppercase()}),
            serde_json::json!({}),
        ] {
            assert!(parent(&with_meta(bad.clone())).is_none(), "{bad}");
        }
        // A tracestate past the bound is dropped, the traceparent kept.
        let long = (0..40)
            .map(|n| format!("k{n}=v"))
            .collect::<Vec<_>>()
            .join(",");
        let cx = with_meta(serde_json::json!({"traceparent": GOOD, "tracestate": long}));
        assert_eq!(parent(&cx).expect("a parent").trace_state().header(), "");
    }

    #[test]
    fn the_header_is_read_only_once_and_well_formed() {
        // Read only where spans may be recorded: once a telemetry is built.
        let _telemetry = crate::otel::Telemetry::builder()
            .endpoint("http://127.0.0.1:9")
            .build()
            .expect("telemetry");
        header_is_read();
    }

    fn header_is_read() {
        let mut headers = http::HeaderMap::new();
        headers.insert(TRACEPARENT, GOOD.parse().unwrap());
        assert!(RequestTrace::of_headers(&headers).fallback.is_some());
        headers.append(TRACEPARENT, GOOD.parse().unwrap());
        assert!(RequestTrace::of_headers(&headers).fallback.is_none());
        let mut bad = http::HeaderMap::new();
        bad.insert(TRACEPARENT, "00-1-2-3".parse().unwrap());
        assert!(RequestTrace::of_headers(&bad).fallback.is_none());
    }
}
