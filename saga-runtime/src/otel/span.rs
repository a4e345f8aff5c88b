//! saga's own spans, recorded to the OpenTelemetry SDK directly, not through `tracing`.
//!
//! Why: through `tracing` and `tracing-opentelemetry`, a span is made in the registry,
//! its fields formatted and visited one by one into a builder, each later `record` sent
//! through the subscriber to the layer, and the span built from the builder when it
//! closes: counted, about 20,000 instructions a span, three times what serving a round
//! costs (BENCHMARKS.md). Here a span is started with its attributes, keys static, and
//! ended; what runs under it finds it as OpenTelemetry's current context, attached at
//! every poll (`OtelSpan::instrument`), which is also where `tracing-opentelemetry` finds
//! the parent of an application's span in a tool.
//!
//! A span is recorded only once a [`super::Telemetry`] is built (it sets the tracer), and
//! only when sampled: an unsampled one is not kept at all.

use std::borrow::Cow;
use std::future::Future;
use std::sync::OnceLock;

use opentelemetry::context::FutureExt as _;
use opentelemetry::trace::{
    SpanContext, SpanKind, Status, TraceContextExt as _, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue};

use crate::state::SagaTrace;

/// A future run with one of saga's spans current, or as it is.
pub(crate) type Instrumented<F> =
    futures::future::Either<opentelemetry::context::WithContext<F>, F>;

/// The tracer saga's spans are recorded with: the first [`super::Telemetry`] built's.
static TRACER: OnceLock<opentelemetry_sdk::trace::SdkTracer> = OnceLock::new();

/// Records saga's spans to `provider` from now on (the first provider set stays).
pub(super) fn record_to(
    provider: &opentelemetry_sdk::trace::SdkTracerProvider,
    scope: &'static str,
) {
    let _ = TRACER.set(provider.tracer(scope));
}

/// The tracer, once a telemetry is built.
pub(super) fn tracer() -> Option<&'static opentelemetry_sdk::trace::SdkTracer> {
    TRACER.get()
}

/// Whether saga records spans at all: a telemetry is built. Nothing of a request's trace
/// context is read otherwise.
pub(super) fn recording() -> bool {
    TRACER.get().is_some()
}

/// One of saga's spans, sampled and recording; or none. A clone is the same span. It ends
/// at [`OtelSpan::end`], or when the last clone of its context is dropped.
#[derive(Debug, Clone, Default)]
pub(crate) struct OtelSpan(Option<Context>);

impl OtelSpan {
    /// No span: every method does nothing.
    pub(crate) const fn none() -> Self {
        OtelSpan(None)
    }

    /// A span named `name`, of `kind`, with `attributes` (its sampler sees them), a child of
    /// `parent`'s span (none: a root). None when no telemetry is built or it is not
    /// sampled.
    pub(super) fn start(
        name: impl Into<Cow<'static, str>>,
        kind: SpanKind,
        attributes: Vec<KeyValue>,
        parent: &Context,
    ) -> Self {
        let Some(tracer) = tracer() else {
            return OtelSpan(None);
        };
        let span = tracer
            .span_builder(name)
            .with_kind(kind)
            .with_attributes(attributes)
            .start_with_context(tracer, parent);
        if !opentelemetry::trace::Span::span_context(&span).is_sampled() {
            return OtelSpan(None);
        }
        OtelSpan(Some(parent.with_span(span)))
    }

    /// A child of the span current on this thread (of what `instrument` runs), named and
    /// with the attributes `made` makes, made only then; or none when there is none: a
    /// span of its own would begin a trace of its own.
    pub(super) fn child<N: Into<Cow<'static, str>>>(
        kind: SpanKind,
        made: impl FnOnce() -> (N, Vec<KeyValue>),
    ) -> Self {
        if !recording() || super::sampling::quiet() {
            return OtelSpan(None);
        }
        let current = Context::current();
        if !current.has_active_span() {
            return OtelSpan(None);
        }
        let (name, attributes) = made();
        OtelSpan::start(name, kind, attributes, &current)
    }

    pub(crate) fn is_none(&self) -> bool {
        self.0.is_none()
    }

    /// Sets attribute `key`.
    pub(super) fn set(&self, key: &'static str, value: impl Into<opentelemetry::Value>) {
        if let Some(cx) = &self.0 {
            cx.span().set_attribute(KeyValue::new(key, value));
        }
    }

    /// Marks the span failed: `error.type` is `kind` (a closed set or a JSON-RPC code).
    pub(super) fn fail(&self, kind: impl Into<opentelemetry::Value>) {
        if let Some(cx) = &self.0 {
            let span = cx.span();
            span.set_attribute(KeyValue::new("error.type", kind));
            span.set_status(Status::error(""));
        }
    }

    /// Links the span to `to` (a saga's first span).
    pub(super) fn link(&self, to: SpanContext) {
        if let Some(cx) = &self.0 {
            cx.span().add_link(to, Vec::new());
        }
    }

    /// The span's ids, as a saga's sealed state keeps them.
    pub(super) fn ids(&self) -> Option<SagaTrace> {
        let cx = self.0.as_ref()?;
        let span = cx.span();
        let ids = span.span_context();
        SagaTrace::new(
            ids.trace_id().to_bytes(),
            ids.span_id().to_bytes(),
            ids.trace_flags().to_u8(),
        )
    }

    /// Runs `f` with the span current: what it makes is the span's child.
    pub(super) fn in_scope<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.0 {
            Some(cx) => {
                let _current = cx.clone().attach();
                f()
            }
            None => f(),
        }
    }

    /// `work`, with the span current at every poll; without a span, as it is (nothing
    /// attached at every poll of an untraced request).
    pub(crate) fn instrument<F: Future>(&self, work: F) -> Instrumented<F> {
        match &self.0 {
            Some(cx) => futures::future::Either::Left(work.with_context(cx.clone())),
            None => futures::future::Either::Right(work),
        }
    }

    /// Sets the attributes `made` makes (made only for a span), at once, and ends it.
    pub(super) fn end_with(&self, made: impl FnOnce() -> Vec<KeyValue>) {
        if let Some(cx) = &self.0 {
            let span = cx.span();
            span.set_attributes(made());
            span.end();
        }
    }

    /// Ends the span now.
    pub(super) fn end(&self) {
        if let Some(cx) = &self.0 {
            cx.span().end();
        }
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::{SpanKind, TraceContextExt as _};
    use tracing_subscriber::layer::SubscriberExt as _;

    use super::OtelSpan;

    /// What runs under one of saga's spans finds it: saga's next span (a round) is its
    /// child, and so is a span of the application's made in a tool, through the layer.
    #[test]
    fn what_runs_under_a_span_is_its_child() {
        let telemetry = crate::otel::Telemetry::builder()
            .endpoint("http://127.0.0.1:9")
            .export_target("my_server")
            .build()
            .expect("telemetry");
        let subscriber = tracing_subscriber::registry().with(telemetry.layer());
        tracing::subscriber::with_default(subscriber, || {
            let call = OtelSpan::start(
                "tools/call deploy",
                SpanKind::Server,
                vec![opentelemetry::KeyValue::new(
                    "mcp.method.name",
                    "tools/call",
                )],
                &opentelemetry::Context::new(),
            );
            let ids = call.ids().expect("sampled");
            assert!(
                OtelSpan::child(SpanKind::Internal, || ("saga.transition", Vec::new())).is_none(),
                "no span current: none made"
            );
            let (round, mine) = futures::executor::block_on(call.instrument(async {
                let round = OtelSpan::child(SpanKind::Internal, || ("saga.transition", Vec::new()));
                let mine = tracing::info_span!(target: "my_server::tools", "lookup");
                (
                    round,
                    tracing_opentelemetry::OpenTelemetrySpanExt::context(&mine),
                )
            }));
            let round = round.ids().expect("a round");
            assert_eq!(round.trace_id, ids.trace_id);
            assert_ne!(round.span_id, ids.span_id);
            let mine = mine.span().span_context().clone();
            assert_eq!(mine.trace_id().to_bytes(), ids.trace_id, "the tool's span");
        });
    }
}
