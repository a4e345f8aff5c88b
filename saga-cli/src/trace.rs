//! `saga call`'s own trace context: a fresh W3C trace id and span id, sent as `traceparent`
//! in every request's `_meta` (SEP-414), and the trace id printed, so that a person can
//! find in their trace backend the saga they just drove (a server built with saga's `otel`
//! feature makes each round's span a child of this one).

use rmcp::model::RequestMetaObject;
use saga_wire::SagaTrace;

/// A new trace, sampled: random ids (never all zero).
pub fn fresh() -> anyhow::Result<SagaTrace> {
    loop {
        let mut bytes = [0u8; 24];
        getrandom::fill(&mut bytes)
            .map_err(|error| anyhow::anyhow!("no random bytes for a trace id: {error}"))?;
        let (trace_id, span_id) = bytes.split_at(16);
        let (Ok(trace_id), Ok(span_id)) = (trace_id.try_into(), span_id.try_into()) else {
            continue;
        };
        if let Some(trace) = SagaTrace::new(trace_id, span_id, 1) {
            return Ok(trace);
        }
    }
}

/// `meta` with `trace`'s `traceparent` added.
pub fn with_traceparent(meta: Option<RequestMetaObject>, trace: &SagaTrace) -> RequestMetaObject {
    let mut meta = meta.unwrap_or_default();
    (meta.0)
        .0
        .insert("traceparent".to_owned(), trace.traceparent().into());
    meta
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_trace_is_a_valid_traceparent_and_new_each_time() {
        let (a, b) = (fresh().unwrap(), fresh().unwrap());
        assert_ne!(a.trace_id, b.trace_id);
        assert_eq!(SagaTrace::parse_traceparent(&a.traceparent()), Some(a));
        let meta = with_traceparent(None, &a);
        assert_eq!(
            (meta.0).0.get("traceparent").and_then(|v| v.as_str()),
            Some(a.traceparent().as_str())
        );
    }
}
