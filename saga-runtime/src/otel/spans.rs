//! The spans saga makes with the feature on: a call's MCP server span,
//! its link to the saga's first span, the server model's GenAI client spans, the task
//! store's writes, and the operation histogram.

use std::borrow::Cow;
use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;
use opentelemetry::trace::{SpanKind, TraceContextExt as _, TraceState};
use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, NumberOrString};

use super::incoming::{CallTrace, RequestTrace, parent, span_context};
use super::sampling::Quiet;
use super::span::{OtelSpan, recording};
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
    span: OtelSpan,
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

/// A request's id as the conventions type it (a string, whichever the client sent), cut
/// first: a client's id may be as long as its body.
fn request_id(id: &NumberOrString) -> String {
    match id {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(text) => {
            Escaped(&text.chars().take(REQUEST_ID_MAX).collect::<String>()).to_string()
        }
    }
}

/// Whether `version` is written as MCP names its versions (`2026-07-28`): only such a
/// version is recorded, never other text of the client's, on a call's span and a
/// method's alike.
fn dated(version: &str) -> bool {
    version.len() == 10 && version.bytes().all(|b| b.is_ascii_digit() || b == b'-')
}

/// A call's method as an attribute: the methods a call is made by, without an allocation.
fn method_name(method: &str) -> opentelemetry::Value {
    match method {
        "tools/call" => "tools/call".into(),
        "tools/callSaga" => "tools/callSaga".into(),
        "requests/resume" => "requests/resume".into(),
        other => Escaped(other).to_string().into(),
    }
}

/// A round's era as an attribute: the versions saga serves, without an allocation.
fn era_name(era: &str) -> opentelemetry::Value {
    match era {
        "2026-07-28" => "2026-07-28".into(),
        "2025-11-25" => "2025-11-25".into(),
        "2025-06-18" => "2025-06-18".into(),
        "2025-03-26" => "2025-03-26".into(),
        "unknown" => "unknown".into(),
        other => Escaped(other).to_string().into(),
    }
}

/// The parent context of a request's span: the client's, remote, or none.
fn parent_context(parent: Option<opentelemetry::trace::SpanContext>) -> opentelemetry::Context {
    match parent {
        Some(parent) => opentelemetry::Context::new().with_remote_span_context(parent),
        None => opentelemetry::Context::new(),
    }
}

/// The MCP server span of a call: parented on the request's trace context, and recorded
/// in its `trace` so that its rounds keep and link to the saga's first span.
pub(crate) fn call_span(call: CallInfo<'_>, trace: &RequestTrace) -> CallSpan {
    // A task's worker makes a span per step instead (`super::task`), and a step is not a
    // request: no MCP server span, no record in the operations' histogram.
    if trace.task.is_some() {
        return CallSpan {
            span: OtelSpan::none(),
            labels: None,
            version: None,
            quiet: false,
        };
    }
    let (parent, quiet) = decided(call.meta, trace);
    let records = OPERATION_DURATION.get().is_some() || (recording() && !quiet);
    // The tool's name once, shared by the span and the histogram's labels.
    let tool = records.then(|| opentelemetry::Value::from(Arc::<str>::from(call.tool)));
    let tool_name = || {
        tool.clone()
            .unwrap_or_else(|| opentelemetry::Value::from(call.tool.to_owned()))
    };
    let span = if quiet || !recording() {
        OtelSpan::none()
    } else {
        let mut attributes = Vec::with_capacity(6);
        attributes.extend([
            KeyValue::new("mcp.method.name", method_name(call.method)),
            KeyValue::new("gen_ai.tool.name", tool_name()),
            KeyValue::new("gen_ai.operation.name", "execute_tool"),
        ]);
        if let Some(id) = call.request_id {
            attributes.push(KeyValue::new("jsonrpc.request.id", request_id(id)));
        }
        if let Some(version) = call.protocol_version.filter(|v| dated(v)) {
            attributes.push(KeyValue::new("mcp.protocol.version", version.to_owned()));
        }
        OtelSpan::start(
            format!("{} {}", call.method, call.tool),
            SpanKind::Server,
            attributes,
            &parent_context(parent),
        )
    };
    let version = call
        .protocol_version
        .filter(|v| dated(v))
        .filter(|_| !span.is_none() || OPERATION_DURATION.get().is_some())
        .map(str::to_owned);
    if !span.is_none()
        && let Ok(mut call) = trace.call.get_or_init(Arc::default).lock()
    {
        *call = CallTrace {
            ids: span.ids(),
            span: Some(span.clone()),
            linked: false,
        };
    }
    // The histogram's labels, made only where it is recorded: a build with the feature
    // and nothing to export to allocates nothing for them.
    let labels = (OPERATION_DURATION.get().is_some() || !span.is_none()).then(|| {
        [
            KeyValue::new("mcp.method.name", method_name(call.method)),
            KeyValue::new("gen_ai.tool.name", tool_name()),
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
        } else if span.is_none() {
            drive.await
        } else {
            span.instrument(drive).await
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
pub(crate) struct MethodTrace(Option<(OtelSpan, Vec<KeyValue>, bool)>);

impl MethodTrace {
    /// The trace of request `context`, a `method`, naming `target` (no text of the
    /// client's: a prompt the server has).
    pub(crate) fn of(
        method: &'static str,
        target: Option<&str>,
        context: &rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Self {
        if !recording() && OPERATION_DURATION.get().is_none() {
            return Self(None);
        }
        let headers = context
            .extensions
            .get::<http::request::Parts>()
            .map(|parts| &parts.headers);
        let version = context
            .protocol_version()
            .filter(|version| dated(version.as_str()))
            .map(|version| version.as_str().to_owned());
        Self::made(method, target, headers, &context.meta, &context.id, version)
    }

    /// The trace of a stateless (MCP 2026-07-28) request that saga reads itself, without
    /// rmcp's request context: its HTTP `headers`, its `_meta` and its `id`, as
    /// [`MethodTrace::of`] reads them from the context rmcp would make of it.
    pub(crate) fn stateless(
        method: &'static str,
        target: Option<&str>,
        headers: &http::HeaderMap,
        meta: &rmcp::model::RequestMetaObject,
        id: &NumberOrString,
    ) -> Self {
        if !recording() && OPERATION_DURATION.get().is_none() {
            return Self(None);
        }
        let version = rmcp::model::ProtocolVersion::V_2026_07_28
            .as_str()
            .to_owned();
        Self::made(method, target, Some(headers), meta, id, Some(version))
    }

    /// The span and labels of a request, from what both kinds of request give.
    fn made(
        method: &'static str,
        target: Option<&str>,
        headers: Option<&http::HeaderMap>,
        meta: &rmcp::model::RequestMetaObject,
        id: &NumberOrString,
        version: Option<String>,
    ) -> Self {
        let trace = headers.map_or_else(RequestTrace::default, RequestTrace::of_headers);
        let (parent, quiet) = decided(meta, &trace);
        let span = if quiet || !recording() {
            OtelSpan::none()
        } else {
            let mut attributes = vec![
                KeyValue::new("mcp.method.name", method),
                KeyValue::new("jsonrpc.request.id", request_id(id)),
            ];
            if let Some(version) = &version {
                attributes.push(KeyValue::new("mcp.protocol.version", version.clone()));
            }
            let name = match target {
                Some(target) => Cow::Owned(format!("{method} {}", Escaped(target))),
                None => Cow::Borrowed(method),
            };
            OtelSpan::start(name, SpanKind::Server, attributes, &parent_context(parent))
        };
        if span.is_none() && OPERATION_DURATION.get().is_none() {
            return Self(None);
        }
        let mut labels = vec![KeyValue::new("mcp.method.name", method)];
        if let Some(version) = version {
            labels.push(KeyValue::new("mcp.protocol.version", version));
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
            span.instrument(handle).await
        };
        if let Err(error) = &outcome {
            let code = error.code.0.to_string();
            span.set("rpc.response.status_code", code.clone());
            span.fail(code.clone());
            labels.push(KeyValue::new("error.type", code));
        }
        span.end();
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
    let parent = recording().then(|| parent(meta, trace)).flatten();
    let quiet = !super::sampling::sampled(parent.as_ref());
    (parent, quiet)
}

/// Records the call's outcome on its span; the `error.type` it recorded, if any.
fn finish(span: &OtelSpan, outcome: &Result<CallToolResponse, ErrorData>) -> Option<String> {
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
            span.set("rpc.response.status_code", error.code.0.to_string());
            ("error", Some(error.code.0.to_string()))
        }
    };
    span.set("saga.outcome", label);
    if let Some(error) = &error {
        span.fail(error.clone());
    }
    error
}

/// The trace a saga's first round keeps: its MCP server span's ids, when a trace is being
/// recorded.
pub(crate) fn first_round(trace: &RequestTrace) -> Option<SagaTrace> {
    trace.ids()
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
        span.link(span_context(trace, TraceState::default()));
    }
}

/// The `traceparent` a task's record keeps of the request that created it (its MCP
/// server span's), and the task's id recorded on that span.
pub(crate) fn task_trace(trace: &RequestTrace, task: &str) -> Option<String> {
    if let Some(span) = trace.span() {
        span.set("saga.task.id", Escaped(task).to_string());
    }
    trace.ids().map(|trace| trace.traceparent())
}

/// Records on the call's span how the request ended after its drive: `outcome` (`task`,
/// when the call became one), or the JSON-RPC `error` the request answered instead.
pub(crate) fn call_ended(trace: &RequestTrace, outcome: &'static str, error: Option<i32>) {
    let Some(span) = trace.span() else {
        return;
    };
    span.set("saga.outcome", outcome);
    if let Some(code) = error {
        span.set("rpc.response.status_code", code.to_string());
        span.fail(code.to_string());
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

/// A round's `saga.transition` span, a child of the call's or the task step's span (the
/// current one): made by the engine beside its `tracing` span, which serves the logs.
#[derive(Clone, Default)]
pub(crate) struct Round(OtelSpan);

impl Round {
    /// The span of a round of `tool`, for request `method` of protocol `era`, whose token
    /// came in `token_in` bytes long.
    pub(crate) fn begin(tool: &str, method: &str, era: &str, token_in: usize) -> Self {
        if !recording() {
            return Round(OtelSpan::none());
        }
        Round(OtelSpan::child(SpanKind::Internal, || {
            (
                "saga.transition",
                vec![
                    KeyValue::new("saga.tool", Escaped(tool).to_string()),
                    KeyValue::new("mcp.method.name", method_name(method)),
                    KeyValue::new("saga.era", era_name(era)),
                    KeyValue::new("saga.token_in", token_in as i64),
                ],
            )
        }))
    }

    /// Whether the round is recorded: its attributes are worth making.
    pub(crate) fn recording(&self) -> bool {
        !self.0.is_none()
    }

    /// Sets `key` (`saga.entered`, `saga.left`) to a point's name.
    pub(crate) fn text(&self, key: &'static str, value: String) {
        self.0.set(key, value);
    }

    /// Sets `key` (`saga.round`, `saga.token_out`, `saga.micros`) to a number.
    pub(crate) fn number(&self, key: &'static str, value: i64) {
        self.0.set(key, value);
    }

    /// `work`, with the round's span current.
    pub(crate) fn run<F: Future>(&self, work: F) -> super::span::Instrumented<F> {
        self.0.instrument(work)
    }

    /// Ends the round with its `outcome`, its duration and the size of the token it
    /// handed out, set at once.
    pub(crate) fn end(&self, outcome: &'static str, micros: i64, token_out: Option<i64>) {
        self.0.end_with(|| {
            let mut attributes = Vec::with_capacity(3);
            attributes.push(KeyValue::new("saga.outcome", outcome));
            attributes.push(KeyValue::new("saga.micros", micros));
            if let Some(bytes) = token_out {
                attributes.push(KeyValue::new("saga.token_out", bytes));
            }
            attributes
        });
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
pub(crate) fn model_span(request: ModelRequest<'_>) -> OtelSpan {
    OtelSpan::child(SpanKind::Client, || {
        let mut attributes = vec![
            KeyValue::new("gen_ai.operation.name", "chat"),
            KeyValue::new("gen_ai.request.max_tokens", i64::from(request.max_tokens)),
        ];
        if let Some(provider) = request.provider {
            attributes.push(KeyValue::new("gen_ai.provider.name", provider.to_owned()));
        }
        if let Some(model) = request.model {
            attributes.push(KeyValue::new("gen_ai.request.model", model.to_owned()));
        }
        if let Some(temperature) = request.temperature {
            attributes.push(KeyValue::new(
                "gen_ai.request.temperature",
                f64::from(temperature),
            ));
        }
        (
            format!("chat {}", request.model.unwrap_or("model")),
            attributes,
        )
    })
}

/// What a server model answered, for its span.
pub(crate) struct ModelAnswer<'a> {
    pub(crate) model: &'a str,
    pub(crate) finish_reason: Option<&'a str>,
    pub(crate) input_tokens: Option<u64>,
    pub(crate) output_tokens: Option<u64>,
}

/// Records on `span` (a [`model_span`]) what the model answered, or the kind of its
/// failure (a closed set), and ends it.
pub(crate) fn model_answered(span: &OtelSpan, answer: Result<ModelAnswer<'_>, &'static str>) {
    if span.is_none() {
        return;
    }
    match answer {
        Ok(answer) => {
            span.set("gen_ai.response.model", Escaped(answer.model).to_string());
            if let Some(reason) = answer.finish_reason {
                span.set(
                    "gen_ai.response.finish_reasons",
                    Escaped(reason).to_string(),
                );
            }
            if let Some(tokens) = answer.input_tokens {
                span.set("gen_ai.usage.input_tokens", saturated(tokens));
            }
            if let Some(tokens) = answer.output_tokens {
                span.set("gen_ai.usage.output_tokens", saturated(tokens));
            }
        }
        Err(kind) => span.fail(kind),
    }
    span.end();
}

/// A count as OpenTelemetry's integers hold it.
fn saturated(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// Runs a task store's write (`operation`, of task `task`) inside a `saga.store` span, a
/// child of the current span; with no current span (a worker's bookkeeping between steps),
/// as it is: a write of its own would start a trace of its own.
pub(crate) fn store_write<F: Future>(
    operation: &'static str,
    task: &str,
    write: F,
) -> impl Future<Output = F::Output> {
    let span = OtelSpan::child(SpanKind::Client, || {
        (
            format!("saga.store {operation}"),
            vec![
                KeyValue::new("saga.store.operation", operation),
                KeyValue::new("saga.task.id", Escaped(task).to_string()),
            ],
        )
    });
    async move {
        let written = write.await;
        span.end();
        written
    }
}

#[cfg(test)]
mod tests {
    /// A call's span and a method's record a protocol version only as MCP writes one: a
    /// client's other text (a header it made up, as long as it likes) is never recorded.
    #[test]
    fn only_a_dated_version_is_recorded() {
        assert!(super::dated("2026-07-28"));
        assert!(super::dated("2025-11-25"));
        for made_up in [
            "",
            "latest",
            "2026-07-28x",
            "<script>abc",
            &"9".repeat(4096),
        ] {
            assert!(!super::dated(made_up), "{made_up:.20}");
        }
    }
}
