//! The spans saga makes with the feature on: a call's MCP server span,
//! its link to the saga's first span, the server model's GenAI client spans, the task
//! store's writes, and the operation histogram.

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;
use opentelemetry::trace::{TraceContextExt as _, TraceState};
use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, NumberOrString};
use tracing::Instrument as _;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use super::incoming::{CallTrace, RequestTrace, parent, span_context};
use super::sampling::Quiet;
use crate::log::Escaped;
use crate::state::SagaTrace;

/// The histogram of `mcp.server.operation.duration`: set by [`super::Telemetry`] from its
/// own meter provider, or else taken from the global one at its first use.
pub(super) static OPERATION_DURATION: OnceLock<Histogram<f64>> = OnceLock::new();

/// Bucket bounds (seconds) of `mcp.server.operation.duration`, as OpenTelemetry's MCP
/// conventions advise them.
pub(super) const DURATION_BOUNDS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The histogram, made from `meter`.
pub(super) fn operation_duration(meter: &opentelemetry::metrics::Meter) -> Histogram<f64> {
    meter
        .f64_histogram("mcp.server.operation.duration")
        .with_unit("s")
        .with_description("Duration of an MCP request as the server sees it")
        .with_boundaries(DURATION_BOUNDS.to_vec())
        .build()
}

/// The longest request id kept as an attribute: a client's string id may be as long as
/// a body allows.
const REQUEST_ID_MAX: usize = 64;

/// A call's MCP server span, made before the call runs and closed
/// with its outcome by [`CallSpan::run`].
pub(crate) struct CallSpan {
    span: tracing::Span,
    /// `None` when nothing records the histogram or the span.
    labels: Option<[KeyValue; 2]>,
    version: Option<String>,
    /// Not sampled: no span, and the call's work runs quiet.
    quiet: bool,
}

/// What a call's span names: its method and tool, and what its request says of it.
pub(crate) struct CallInfo<'a> {
    pub(crate) method: &'a str,
    pub(crate) tool: &'a str,
    pub(crate) request_id: Option<&'a NumberOrString>,
    pub(crate) protocol_version: Option<&'a str>,
    pub(crate) meta: &'a rmcp::model::RequestMetaObject,
}

/// The MCP server span of a call: parented on the request's trace context, and recorded
/// in its `trace` so that its rounds keep and link to the saga's first span.
pub(crate) fn call_span(call: CallInfo<'_>, trace: &RequestTrace) -> CallSpan {
    // A task's worker makes a span per step instead (`super::task`), and a step is not a
    // request: no MCP server span, no record in the operations' histogram.
    if trace.task.is_some() {
        return CallSpan {
            span: tracing::Span::none(),
            labels: None,
            version: None,
            quiet: false,
        };
    }
    let (parent, quiet) = decided(call.meta, trace);
    let span = if quiet {
        tracing::Span::none()
    } else {
        tracing::info_span!(
        target: "saga_runtime",
        "mcp.server",
        otel.name = %format_args!("{} {}", call.method, call.tool),
        otel.kind = "server",
        otel.status_code = Empty,
        mcp.method.name = call.method,
        gen_ai.tool.name = call.tool,
        gen_ai.operation.name = "execute_tool",
        jsonrpc.request.id = Empty,
        mcp.protocol.version = Empty,
        error.type = Empty,
        rpc.response.status_code = Empty,
        saga.outcome = Empty,
        saga.task.id = Empty,
        )
    };
    let version = call
        .protocol_version
        .filter(|_| !span.is_disabled() || OPERATION_DURATION.get().is_some())
        .map(str::to_owned);
    if !span.is_disabled() {
        if let Some(id) = call.request_id {
            match id {
                // A string, as the conventions type it, whichever the client sent.
                NumberOrString::Number(n) => {
                    span.record("jsonrpc.request.id", n.to_string().as_str())
                }
                NumberOrString::String(text) => {
                    // Cut first: a client's id may be as long as its body.
                    let cut: String = text.chars().take(REQUEST_ID_MAX).collect();
                    span.record("jsonrpc.request.id", Escaped(&cut).to_string())
                }
            };
        }
        if let Some(version) = &version {
            span.record("mcp.protocol.version", version.as_str());
        }
        if let Some(parent) = parent {
            let parent = opentelemetry::Context::new().with_remote_span_context(parent);
            let _ = span.set_parent(parent);
        }
        if let Ok(mut call) = trace.call.get_or_init(Arc::default).lock() {
            *call = CallTrace {
                ids: ids_of(&span),
                span: Some(span.clone()),
                linked: false,
            };
        }
    }
    // The histogram's labels, made only where it is recorded: a build with the feature
    // and nothing to export to allocates nothing for them.
    let labels = (OPERATION_DURATION.get().is_some() || !span.is_disabled()).then(|| {
        [
            KeyValue::new("mcp.method.name", call.method.to_owned()),
            KeyValue::new("gen_ai.tool.name", call.tool.to_owned()),
        ]
    });
    CallSpan {
        span,
        labels,
        version,
        quiet,
    }
}

impl CallSpan {
    /// Whether nothing records the span or the histogram: the call then runs as it is.
    pub(crate) fn idle(&self) -> bool {
        self.labels.is_none()
    }

    /// Runs `drive` (one call, as `engine::runner::drive` runs it) inside the span, then
    /// records its outcome and duration.
    pub(crate) async fn run<F>(self, drive: F) -> F::Output
    where
        F: Future<Output = Result<CallToolResponse, ErrorData>>,
    {
        let CallSpan {
            span,
            labels,
            version,
            quiet,
        } = self;
        let Some(labels) = labels else {
            return drive.await;
        };
        let started = Instant::now();
        let outcome = if quiet {
            Quiet::new(drive, true).await
        } else {
            drive.instrument(span.clone()).await
        };
        let error = finish(&span, &outcome);
        let histogram = OPERATION_DURATION
            .get_or_init(|| operation_duration(&opentelemetry::global::meter("saga-runtime")));
        let mut attributes = Vec::with_capacity(4);
        attributes.extend(labels);
        if let Some(version) = version {
            attributes.push(KeyValue::new("mcp.protocol.version", version));
        }
        if let Some(error) = error {
            attributes.push(KeyValue::new("error.type", error));
        }
        histogram.record(started.elapsed().as_secs_f64(), &attributes);
        outcome
    }
}

/// A request other than a call (`tools/list`, `server/discover`, `prompts/get`,
/// `tasks/get`, …) traced: its MCP server span (`{method} {target}`), parented on the
/// client's trace context as a call's is, with the same attributes, and its record in
/// `mcp.server.operation.duration`. Made before the handler takes the request's context;
/// nothing when nothing records either.
pub(crate) struct MethodTrace(Option<(tracing::Span, Vec<KeyValue>, bool)>);

impl MethodTrace {
    /// The trace of request `context`, a `method`, naming `target` (no text of the
    /// client's: a prompt the server has).
    pub(crate) fn of(
        method: &'static str,
        target: Option<&str>,
        context: &rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Self {
        let trace = context
            .extensions
            .get::<http::request::Parts>()
            .map_or_else(RequestTrace::default, |parts| {
                RequestTrace::of_headers(&parts.headers)
            });
        let (parent, quiet) = decided(&context.meta, &trace);
        let span = if quiet {
            tracing::Span::none()
        } else {
            tracing::info_span!(
            target: "saga_runtime",
            "mcp.server",
            otel.name = %match target {
                Some(target) => format!("{method} {}", Escaped(target)),
                None => method.to_owned(),
            },
            otel.kind = "server",
            otel.status_code = Empty,
            mcp.method.name = method,
            jsonrpc.request.id = Empty,
            mcp.protocol.version = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
            )
        };
        if span.is_disabled() && OPERATION_DURATION.get().is_none() {
            return Self(None);
        }
        let mut labels = vec![KeyValue::new("mcp.method.name", method)];
        // A version as MCP names them (`2026-07-28`), never other text of the client's.
        let dated = |version: &str| {
            version.len() == 10 && version.bytes().all(|b| b.is_ascii_digit() || b == b'-')
        };
        if let Some(version) = context
            .protocol_version()
            .filter(|version| dated(version.as_str()))
        {
            span.record("mcp.protocol.version", version.as_str());
            labels.push(KeyValue::new(
                "mcp.protocol.version",
                version.as_str().to_owned(),
            ));
        }
        if !span.is_disabled() {
            let id = match &context.id {
                NumberOrString::Number(n) => n.to_string(),
                NumberOrString::String(text) => {
                    Escaped(&text.chars().take(REQUEST_ID_MAX).collect::<String>()).to_string()
                }
            };
            span.record("jsonrpc.request.id", id.as_str());
            if let Some(parent) = parent {
                let parent = opentelemetry::Context::new().with_remote_span_context(parent);
                let _ = span.set_parent(parent);
            }
        }
        Self(Some((span, labels, quiet)))
    }

    /// Runs `handle` in the span, then records its outcome and duration.
    pub(crate) async fn run<T>(
        self,
        handle: impl Future<Output = Result<T, ErrorData>>,
    ) -> Result<T, ErrorData> {
        let Some((span, mut labels, quiet)) = self.0 else {
            return handle.await;
        };
        let started = Instant::now();
        let outcome = if quiet {
            Quiet::new(handle, true).await
        } else {
            handle.instrument(span.clone()).await
        };
        if let Err(error) = &outcome {
            let code = error.code.0.to_string();
            span.record("error.type", code.as_str());
            span.record("rpc.response.status_code", code.as_str());
            span.record("otel.status_code", "ERROR");
            labels.push(KeyValue::new("error.type", code));
        }
        OPERATION_DURATION
            .get_or_init(|| operation_duration(&opentelemetry::global::meter("saga-runtime")))
            .record(started.elapsed().as_secs_f64(), &labels);
        outcome
    }
}

/// The parent a request's span takes (its `_meta`'s context, else its trace's), and
/// whether the request is quiet: not sampled, decided before its span is made
/// (`super::sampling`), so that it makes none and its work runs quiet. The parent is read
/// only where a span may be recorded.
fn decided(
    meta: &rmcp::model::RequestMetaObject,
    trace: &RequestTrace,
) -> (Option<opentelemetry::trace::SpanContext>, bool) {
    let parent = tracing::level_enabled!(tracing::Level::INFO)
        .then(|| parent(meta, trace))
        .flatten();
    let quiet = !super::sampling::sampled(parent.as_ref());
    (parent, quiet)
}

/// Records the call's outcome on its span; the `error.type` it recorded, if any.
fn finish(span: &tracing::Span, outcome: &Result<CallToolResponse, ErrorData>) -> Option<String> {
    let (label, error) = match outcome {
        Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => {
            ("tool_error", Some("tool_error".to_owned()))
        }
        Ok(CallToolResponse::Complete(_)) => ("complete", None),
        Ok(CallToolResponse::InputRequired(required)) => (
            if required
                .input_requests
                .as_ref()
                .is_some_and(|r| !r.is_empty())
            {
                "input_required"
            } else {
                "checkpoint"
            },
            None,
        ),
        Ok(CallToolResponse::Task(_)) => ("task", None),
        Ok(_) => ("other", None),
        Err(error) => {
            span.record(
                "rpc.response.status_code",
                error.code.0.to_string().as_str(),
            );
            ("error", Some(error.code.0.to_string()))
        }
    };
    span.record("saga.outcome", label);
    if let Some(error) = &error {
        span.record("error.type", error.as_str());
        span.record("otel.status_code", "ERROR");
    }
    error
}

/// The trace a saga's first round keeps: its MCP server span's ids, when a trace is being
/// recorded.
pub(crate) fn first_round(trace: &RequestTrace) -> Option<SagaTrace> {
    trace.ids()
}

/// A span's ids, when it is recorded as an OpenTelemetry span.
///
/// Only a sampled span's: an unsampled one is never exported, so nothing could be found by
/// its ids, and a saga's token carries no trace for it.
fn ids_of(span: &tracing::Span) -> Option<SagaTrace> {
    let context = span.context();
    let ids = context.span().span_context().clone();
    if !ids.is_valid() || !ids.is_sampled() {
        return None;
    }
    SagaTrace::new(
        ids.trace_id().to_bytes(),
        ids.span_id().to_bytes(),
        ids.trace_flags().to_u8(),
    )
}

/// A later round: its span links to the saga's first span (`trace`), unless it is that
/// span's child already (a task's step, parented on its creation).
pub(crate) fn resumed(request: &RequestTrace, trace: Option<&SagaTrace>) {
    let Some(trace) = trace else {
        return;
    };
    // A task's step is its creation's child already.
    if request.task.is_some() && request.fallback.as_ref() == Some(trace) {
        return;
    }
    let span = {
        let Some(Ok(mut call)) = request.call.get().map(|call| call.lock()) else {
            return;
        };
        // Once per call, and never to itself (a later round of the request whose span is
        // the saga's first: a session's).
        if call.linked || call.ids.as_ref() == Some(trace) {
            return;
        }
        call.linked = true;
        call.span.clone()
    };
    if let Some(span) = span {
        span.add_link(span_context(trace, TraceState::default()));
    }
}

/// The `traceparent` a task's record keeps of the request that created it (its MCP
/// server span's), and the task's id recorded on that span.
pub(crate) fn task_trace(trace: &RequestTrace, task: &str) -> Option<String> {
    if let Some(span) = trace.span() {
        span.record("saga.task.id", Escaped(task).to_string().as_str());
    }
    trace.ids().map(|trace| trace.traceparent())
}

/// Records on the call's span how the request ended after its drive: `outcome` (`task`,
/// when the call became one), or the JSON-RPC `error` the request answered instead.
pub(crate) fn call_ended(trace: &RequestTrace, outcome: &'static str, error: Option<i32>) {
    let Some(span) = trace.span() else {
        return;
    };
    span.record("saga.outcome", outcome);
    if let Some(code) = error {
        span.record("error.type", code.to_string().as_str());
        span.record("rpc.response.status_code", code.to_string().as_str());
        span.record("otel.status_code", "ERROR");
    }
}

/// Runs `f` in the call's span, if there is one: what it makes (a task store's write
/// after the drive) is that span's child.
pub(crate) fn in_call<R>(trace: &RequestTrace, f: impl FnOnce() -> R) -> R {
    match trace.span() {
        Some(span) => span.in_scope(f),
        None => f(),
    }
}

/// What a server model's call is, for its span: the model asked for, the provider, the
/// request's bounds.
pub(crate) struct ModelRequest<'a> {
    pub(crate) provider: Option<&'a str>,
    pub(crate) model: Option<&'a str>,
    pub(crate) max_tokens: u32,
    pub(crate) temperature: Option<f32>,
}

/// The GenAI client span of a server model's call (`chat {model}`), with the request's
/// model and bounds; [`model_answered`] records the answer. Neither the prompt nor the
/// answer nor any credential is recorded.
pub(crate) fn model_span(request: ModelRequest<'_>) -> tracing::Span {
    if super::sampling::quiet() {
        return tracing::Span::none();
    }
    tracing::info_span!(
        target: "saga_runtime",
        "gen_ai.client",
        otel.name = %format_args!("chat {}", request.model.unwrap_or("model")),
        otel.kind = "client",
        otel.status_code = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = request.provider,
        gen_ai.request.model = request.model,
        gen_ai.request.max_tokens = request.max_tokens,
        gen_ai.request.temperature = request.temperature.map(f64::from),
        gen_ai.response.model = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        error.type = Empty,
    )
}

/// What a server model answered, for its span.
pub(crate) struct ModelAnswer<'a> {
    pub(crate) model: &'a str,
    pub(crate) finish_reason: Option<&'a str>,
    pub(crate) input_tokens: Option<u64>,
    pub(crate) output_tokens: Option<u64>,
}

/// Records on `span` (a [`model_span`]) what the model answered, or the kind of its
/// failure (a closed set).
pub(crate) fn model_answered(span: &tracing::Span, answer: Result<ModelAnswer<'_>, &'static str>) {
    match answer {
        Ok(answer) => {
            span.record(
                "gen_ai.response.model",
                Escaped(answer.model).to_string().as_str(),
            );
            if let Some(reason) = answer.finish_reason {
                span.record(
                    "gen_ai.response.finish_reasons",
                    Escaped(reason).to_string().as_str(),
                );
            }
            if let Some(tokens) = answer.input_tokens {
                span.record("gen_ai.usage.input_tokens", tokens);
            }
            if let Some(tokens) = answer.output_tokens {
                span.record("gen_ai.usage.output_tokens", tokens);
            }
        }
        Err(kind) => {
            span.record("error.type", kind);
            span.record("otel.status_code", "ERROR");
        }
    }
}

/// Runs a task store's write (`operation`, of task `task`) inside a `saga.store` span, a
/// child of the current span; with no current span (a worker's bookkeeping between steps),
/// as it is: a write of its own would start a trace of its own.
pub(crate) fn store_write<F: Future>(
    operation: &'static str,
    task: &str,
    write: F,
) -> tracing::instrument::Instrumented<F> {
    if tracing::Span::current().is_none() || super::sampling::quiet() {
        return write.instrument(tracing::Span::none());
    }
    write.instrument(tracing::info_span!(
        target: "saga_runtime",
        "saga.store",
        otel.name = %format_args!("saga.store {operation}"),
        otel.kind = "client",
        saga.store.operation = operation,
        saga.task.id = %Escaped(task),
    ))
}
