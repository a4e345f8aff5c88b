//! OpenTelemetry (feature `otel`): one trace per saga, as MCP and OpenTelemetry specify it.
//!
//! - **Context in.** The W3C trace context of a request's `params._meta` (`traceparent`,
//!   `tracestate`; SEP-414), or of its HTTP `traceparent` header when `_meta` has none,
//!   parents the request's MCP server span, in both eras and over stdio. A malformed value
//!   is ignored: never an error, never logged. `tracestate` is read only up to 512 bytes
//!   and 32 members (W3C's own bound), and `baggage` is not read at all, so neither costs
//!   more than a small fixed amount.
//! - **One saga, one trace.** A saga's first round keeps its span's trace id and span id
//!   in its sealed state (25 bytes; token formats 0x80 and 0x90). Every later round's span
//!   links to that span (an OpenTelemetry span link), whoever the client, whichever
//!   replica, after a restart or a deploy; a task's worker steps are children of the
//!   request that created the task, also after another replica took it over.
//! - **Spans and attributes as the conventions name them.** Each call's MCP server span
//!   is named `{mcp.method.name} {gen_ai.tool.name}` (`tools/call deploy`) with
//!   `mcp.method.name`, `gen_ai.tool.name`, `gen_ai.operation.name`, `jsonrpc.request.id`,
//!   `mcp.protocol.version`, `error.type` (`tool_error` for a result with `isError`, the
//!   JSON-RPC code of an error) and saga's `saga.round` and `saga.outcome`; each round
//!   is a `saga.transition` child (round, point entered and left, outcome). The server's
//!   model calls are GenAI client spans (`chat {model}`: model, token usage when the
//!   provider reports it, finish reason; never the prompt, the answer or the key). A
//!   task's steps are `task {tool}` spans, children of its creation, and a step its worker
//!   did not live to end is ended, in error, by the worker that takes the task over. A
//!   task store's writes are `saga.store` spans. The `mcp.server.operation.duration` and
//!   `mcp.server.session.duration` histograms (seconds), and sessions' and tasks' counts
//!   (`metrics`), are recorded beside saga's other metrics.
//! - **Export.** `Telemetry` builds the tracer and meter providers, which saga's spans
//!   are recorded to directly (`span`: no `tracing` span on their way), with saga's own
//!   OTLP encoder (HTTP, protobuf: `otlp`), through the HTTP client saga already builds,
//!   and installs a `tracing` subscriber whose layer exports the application's own spans;
//!   `Telemetry::from_env` does so when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, as the
//!   OpenTelemetry specification names it. An application with a subscriber of its own
//!   adds `Telemetry::layer` to it instead.
//!
//! Without the feature none of this is compiled, and nothing of it is on the request path:
//! a build without it still reads a traced token and seals its trace again, so a fleet
//! built either way keeps each saga's trace.
//!
//! What a span may carry is in SECURITY.md: names, ids, numbers and closed sets, never a
//! tool's arguments, an answer, a prompt, a token or a credential.

#[cfg(feature = "otel")]
mod export;
#[cfg(feature = "otel")]
mod incoming;
#[cfg(feature = "otel")]
pub(crate) mod metrics;
#[cfg(feature = "otel")]
mod otlp;
#[cfg(feature = "otel")]
mod sampling;
#[cfg(feature = "otel")]
mod span;
#[cfg(feature = "otel")]
mod spans;
#[cfg(feature = "otel")]
mod task;

#[cfg(feature = "otel")]
pub use export::{
    ClientSampling, OTEL_EXPORTER_OTLP_ENDPOINT, SAGA_OTEL_EXPORT_TARGETS,
    SAGA_OTEL_TRUST_CLIENT_SAMPLED, Telemetry, TelemetryBuilder, TelemetryError,
};
#[cfg(feature = "otel")]
pub(crate) use incoming::RequestTrace;
#[cfg(feature = "otel")]
pub(crate) use sampling::quiet;
#[cfg(feature = "otel")]
pub(crate) use spans::{
    CallInfo, MethodTrace, ModelAnswer, ModelRequest, Round, call_ended, call_span, first_round,
    in_call, model_answered, model_span, resumed, store_write, task_trace,
};
#[cfg(feature = "otel")]
pub(crate) use task::{LostStep, Takeover, TaskStep, cut_short};

/// How a task's step ended, as its span's `saga.outcome` says (feature `otel`; without
/// it, recorded nowhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
pub(crate) enum StepEnd {
    /// The step reached a checkpoint, its state written: the next step follows.
    Checkpoint,
    /// The step asks the client: the task waits in `input_required`.
    InputRequired,
    /// The saga returned: the task completed.
    Complete,
    /// The saga returned a tool error (`isError`): the task completed with it.
    ToolError,
    /// The step failed: the task failed.
    Failed,
    /// The step was stopped before it ended: the task was cancelled, or another worker
    /// holds it now, or the server stopped and handed it back.
    Stopped,
}

#[cfg(feature = "otel")]
impl StepEnd {
    /// The span's `saga.outcome`.
    fn label(self) -> &'static str {
        match self {
            StepEnd::Checkpoint => "checkpoint",
            StepEnd::InputRequired => "input_required",
            StepEnd::Complete => "complete",
            StepEnd::ToolError => "tool_error",
            StepEnd::Failed => "error",
            StepEnd::Stopped => "stopped",
        }
    }
}

#[cfg(not(feature = "otel"))]
mod off {
    //! The hooks the request path calls, as nothing: without the feature they compile
    //! to no code at all.

    /// A task store's write, as it is.
    #[inline(always)]
    pub(crate) fn store_write<F>(_: &'static str, _: &str, write: F) -> F {
        write
    }

    /// A request other than a call, untraced.
    pub(crate) struct MethodTrace;

    impl MethodTrace {
        #[inline(always)]
        pub(crate) fn of(
            _: &'static str,
            _: Option<&str>,
            _: &rmcp::service::RequestContext<rmcp::RoleServer>,
        ) -> Self {
            MethodTrace
        }

        #[inline(always)]
        pub(crate) fn stateless(
            _: &'static str,
            _: Option<&str>,
            _: &http::HeaderMap,
            _: &rmcp::model::RequestMetaObject,
            _: &rmcp::model::RequestId,
        ) -> Self {
            MethodTrace
        }

        /// `handle`, as it is.
        #[inline(always)]
        pub(crate) fn run<F>(self, handle: F) -> F {
            handle
        }
    }

    /// A round, untraced.
    #[derive(Clone, Default)]
    pub(crate) struct Round;

    impl Round {
        #[inline(always)]
        pub(crate) fn begin(_: &str, _: &str, _: &str, _: usize) -> Self {
            Round
        }

        #[inline(always)]
        pub(crate) fn recording(&self) -> bool {
            false
        }

        #[inline(always)]
        pub(crate) fn text(&self, _: &'static str, _: String) {}

        #[inline(always)]
        pub(crate) fn number(&self, _: &'static str, _: i64) {}

        /// `work`, as it is.
        #[inline(always)]
        pub(crate) fn run<F>(&self, work: F) -> F {
            work
        }

        #[inline(always)]
        pub(crate) fn end(&self, _: &'static str, _: i64, _: Option<i64>) {}
    }

    /// Never an unsampled request's work: nothing is sampled.
    #[inline(always)]
    pub(crate) const fn quiet() -> bool {
        false
    }

    /// A task's steps, untraced.
    #[derive(Debug)]
    pub(crate) struct TaskStep;

    impl TaskStep {
        /// Nothing of the task.
        #[inline(always)]
        pub(crate) fn of(_: &str, _: &str, _: Option<&str>) -> Self {
            TaskStep
        }

        /// `f`, as it is.
        #[inline(always)]
        pub(crate) fn begin<R>(&self, f: impl FnOnce() -> R) -> R {
            f()
        }

        /// `work`, as it is.
        #[inline(always)]
        pub(crate) fn run<F>(&self, work: F) -> F {
            work
        }

        #[inline(always)]
        pub(crate) fn end(&self, _: super::StepEnd, _: Option<i32>) {}
    }
}
#[cfg(not(feature = "otel"))]
pub(crate) use off::{MethodTrace, Round, TaskStep, quiet, store_write};
