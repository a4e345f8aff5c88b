//! Sampling decided before a span is made: a call, a request or a task step that the
//! operator's sampler drops makes no span at all, and nothing under it is made or reaches
//! the exporting layer, so an unsampled request costs about what it costs with the
//! feature idle (BENCHMARKS.md).
//!
//! - **The decision** ([`sampled`]) is the operator's sampler (`OTEL_TRACES_SAMPLER`, as
//!   [`super::Telemetry`] configured it) asked as the SDK would ask it: with the client's
//!   context as the parent, or, for a trace the server begins, with a fresh trace id.
//! - **Under an unsampled request** ([`Quiet`], [`quietly`]) the exporting layer's filter
//!   takes nothing: no round, no store write, no model call, no span of the application's,
//!   which would otherwise become roots of traces of their own.
//! - **A root saga decided to sample** is sampled by the SDK too ([`Decided`]): the SDK
//!   asks again with the trace id it draws, and a ratio asked twice would keep r² of the
//!   traces instead of r. Spans with a parent are asked again with the same inputs, so the
//!   SDK's answer is the one saga had.
//!
//! Decided once a [`super::Telemetry`] is built (saga's spans are recorded to it). An
//! application's layer of its own over `Telemetry::tracer_provider()` gets every span of
//! the application's made, and the SDK decides them as it starts them.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use opentelemetry::KeyValue;
use opentelemetry::trace::{Link, SpanContext, SpanKind, TraceContextExt as _, TraceId};
use opentelemetry_sdk::trace::{SamplingDecision, SamplingResult, ShouldSample};

/// A sampler, as the SDK takes one.
pub(super) type Sampler = Box<dyn ShouldSample>;

/// The operator's sampler, as [`super::Telemetry`] built it; unset without one.
static SAMPLER: OnceLock<Sampler> = OnceLock::new();

/// Whether a telemetry is built: saga's spans are recorded, and sampling is decided
/// before them.
static DECIDING: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Set while an unsampled request's work runs on this thread.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// The SDK's sampler for a telemetry whose operator's sampler is `sampler`: saga's root
/// spans, sampled already, as they are; everything else as `sampler` says.
pub(super) fn install(sampler: Sampler) -> Decided {
    let _ = SAMPLER.set(sampler.clone());
    Decided(sampler)
}

/// A telemetry is built: decide before the spans from now on.
pub(super) fn deciding() {
    DECIDING.store(true, Ordering::Relaxed);
}

/// Whether the work running on this thread is an unsampled request's: the exporting
/// layer's filter takes none of it, and saga makes none of its own spans for it (a span
/// the layer's filter refuses is still made in the registry: a per-layer filter cannot
/// disable a span for every layer).
pub(crate) fn quiet() -> bool {
    QUIET.with(Cell::get)
}

/// Whether a request whose client's context is `parent` (none: a trace the server
/// begins) is sampled, as the operator's sampler decides; `true` where saga does not
/// decide (no telemetry of saga's, or a layer of the application's).
pub(crate) fn sampled(parent: Option<&SpanContext>) -> bool {
    if !DECIDING.load(Ordering::Relaxed) {
        return true;
    }
    // A request driven within an unsampled one's work stays out of the export with it.
    if quiet() {
        return false;
    }
    let Some(sampler) = SAMPLER.get() else {
        return true;
    };
    let (context, trace_id) = match parent {
        Some(parent) => (
            opentelemetry::Context::new().with_remote_span_context(parent.clone()),
            parent.trace_id(),
        ),
        None => (
            opentelemetry::Context::new(),
            // The SDK's own generator: a thread's generator, no system call a request.
            opentelemetry_sdk::trace::IdGenerator::new_trace_id(
                &opentelemetry_sdk::trace::RandomIdGenerator::default(),
            ),
        ),
    };
    let decision = sampler
        .should_sample(Some(&context), trace_id, "", &SpanKind::Server, &[], &[])
        .decision;
    decision != SamplingDecision::Drop
}

/// Whether a task's step whose creation's span is `creation` (as the task's record keeps
/// it) is sampled: exactly when its creation was, which the record tells, since it keeps
/// only a sampled span's ids. The SDK then samples the step ([`Decided`]) rather than ask
/// the ratio again: a creation the server began was decided on another trace id than the
/// one the SDK gave it. `true` where saga does not decide.
pub(crate) fn step_sampled(creation: Option<&SpanContext>) -> bool {
    if !DECIDING.load(Ordering::Relaxed) {
        return true;
    }
    !quiet() && creation.is_some_and(SpanContext::is_sampled)
}

/// Runs `f` as an unsampled request's work when `quiet`: nothing it makes is exported.
pub(crate) fn quietly<R>(quiet: bool, f: impl FnOnce() -> R) -> R {
    if !quiet {
        return f();
    }
    /// Puts the flag back as it was, also when `f` unwinds: a panic caught above (by
    /// Tokio, say) must not leave the thread quiet for every request after it.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            QUIET.with(|flag| flag.set(self.0));
        }
    }
    let _restore = Restore(QUIET.with(|flag| flag.replace(true)));
    f()
}

pin_project_lite::pin_project! {
    /// A future that runs as an unsampled request's work (when `quiet`), at every poll.
    pub(crate) struct Quiet<F> {
        #[pin]
        inner: F,
        quiet: bool,
    }
}

impl<F> Quiet<F> {
    pub(crate) fn new(inner: F, quiet: bool) -> Self {
        Self { inner, quiet }
    }
}

impl<F: Future> Future for Quiet<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        quietly(*this.quiet, || this.inner.poll(cx))
    }
}

/// The SDK's sampler under saga's layer: a root span of saga's (an MCP server span, a
/// task's step: `mcp.method.name` or `saga.task.id` made with it) exists only because
/// [`sampled`] sampled it, and is sampled; any other span as the operator's sampler says.
#[derive(Debug, Clone)]
pub(super) struct Decided(Sampler);

impl ShouldSample for Decided {
    fn should_sample(
        &self,
        parent_context: Option<&opentelemetry::Context>,
        trace_id: TraceId,
        name: &str,
        span_kind: &SpanKind,
        attributes: &[KeyValue],
        links: &[Link],
    ) -> SamplingResult {
        let sample = |decision| SamplingResult {
            decision,
            attributes: Vec::new(),
            trace_state: parent_context
                .map(|parent| parent.span().span_context().trace_state().clone())
                .unwrap_or_default(),
        };
        let follow = |parent: &SpanContext| {
            sample(if parent.is_sampled() {
                SamplingDecision::RecordAndSample
            } else {
                SamplingDecision::Drop
            })
        };
        if DECIDING.load(Ordering::Relaxed) {
            let parent = parent_context.map(|parent| parent.span().span_context().clone());
            let has = |key: &str| attributes.iter().any(|kv| kv.key.as_str() == key);
            match parent.filter(SpanContext::is_valid) {
                // A request's span saga sampled already, on another trace id.
                None if has("mcp.method.name") => {
                    return sample(SamplingDecision::RecordAndSample);
                }
                // A task's step (or the step a lost worker left), sampled as its creation
                // was: saga made it only then.
                Some(parent) if parent.is_remote() && has("saga.task.id") => {
                    return follow(&parent);
                }
                // A span under one of saga's, in process: as its parent was decided, even
                // where the operator's sampler is not parent-based.
                Some(parent) if !parent.is_remote() => return follow(&parent),
                _ => {}
            }
        }
        self.0
            .should_sample(parent_context, trace_id, name, span_kind, attributes, links)
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::TraceState;

    use super::*;

    #[test]
    fn quiet_holds_only_while_its_work_runs_and_nests() {
        assert!(!quiet());
        quietly(true, || {
            assert!(quiet());
            quietly(false, || {
                assert!(quiet(), "an inner loud run keeps the outer quiet")
            });
            quietly(true, || assert!(quiet()));
            assert!(quiet());
        });
        assert!(!quiet());
        quietly(false, || assert!(!quiet()));
    }

    #[test]
    fn a_root_of_sagas_is_sampled_and_any_other_span_as_the_operator_says() {
        deciding();
        let decided = Decided(Box::new(opentelemetry_sdk::trace::Sampler::AlwaysOff));
        let ask = |attributes: &[KeyValue], parent: Option<&opentelemetry::Context>| {
            decided
                .should_sample(
                    parent,
                    TraceId::from_bytes([7; 16]),
                    "x",
                    &SpanKind::Server,
                    attributes,
                    &[],
                )
                .decision
        };
        let saga_root = [KeyValue::new("mcp.method.name", "tools/call")];
        assert_eq!(ask(&saga_root, None), SamplingDecision::RecordAndSample);
        // Another root, and a request's span with a client's parent: the operator's
        // sampler (saga asked it the same way).
        assert_eq!(
            ask(&[KeyValue::new("other", 1)], None),
            SamplingDecision::Drop
        );
        let context = |sampled: bool, remote: bool| {
            let flags = if sampled {
                opentelemetry::trace::TraceFlags::SAMPLED
            } else {
                opentelemetry::trace::TraceFlags::default()
            };
            let span = SpanContext::new(
                TraceId::from_bytes([1; 16]),
                opentelemetry::trace::SpanId::from_bytes([2; 8]),
                flags,
                remote,
                TraceState::default(),
            );
            // A span context says itself whether it is remote.
            opentelemetry::Context::new().with_remote_span_context(span)
        };
        assert_eq!(
            ask(&saga_root, Some(&context(true, true))),
            SamplingDecision::Drop
        );
        // A task's step: as its creation was sampled, whatever the ratio.
        let step = [KeyValue::new("saga.task.id", "t")];
        assert_eq!(
            ask(&step, Some(&context(true, true))),
            SamplingDecision::RecordAndSample
        );
        assert_eq!(
            ask(&step, Some(&context(false, true))),
            SamplingDecision::Drop
        );
        // A child in process: as its parent.
        let child = [KeyValue::new("saga.round", 1)];
        assert_eq!(
            ask(&child, Some(&context(true, false))),
            SamplingDecision::RecordAndSample
        );
        assert_eq!(
            ask(&child, Some(&context(false, false))),
            SamplingDecision::Drop
        );
    }
}
