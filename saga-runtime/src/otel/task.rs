//! A task's steps as spans: one `task {tool}` span per step a worker runs (a round of its
//! saga, the store writes that keep it), each a child of the request that created the
//! task, on whichever replica runs it; and the step a lost worker left unfinished, made
//! by the worker that takes the task over.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use opentelemetry::KeyValue;
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt as _, Tracer as _};

use super::StepEnd;
use super::incoming::span_context;
use super::sampling::Quiet;
use super::span::OtelSpan;
use crate::log::Escaped;
use crate::state::SagaTrace;

/// A worker's run of one task: the span of the step it runs now, if any is recorded.
#[derive(Debug)]
pub(crate) struct TaskStep {
    task: String,
    tool: String,
    /// The creating request's span, as the task's record keeps it.
    parent: Option<SagaTrace>,
    span: Mutex<Option<OtelSpan>>,
    /// The current step is not sampled: no span, its work quiet (`super::sampling`).
    quiet: AtomicBool,
}

impl TaskStep {
    /// The steps of task `task` of `tool`, created by the request whose span's
    /// `traceparent` is `creation` (as the task's record keeps it).
    pub(crate) fn of(task: &str, tool: &str, creation: Option<&str>) -> Self {
        Self {
            task: task.to_owned(),
            tool: tool.to_owned(),
            parent: creation.and_then(SagaTrace::parse_traceparent),
            span: Mutex::new(None),
            quiet: AtomicBool::new(false),
        }
    }

    /// Begins a step: its span is current while `f` makes the step's round, so that the
    /// round's own span is its child. The step before it, if any, ended already.
    pub(crate) fn begin<R>(&self, f: impl FnOnce() -> R) -> R {
        let (task, tool) = (&self.task, &self.tool);
        // Sampled exactly when its creation was (`sampling::step_sampled`).
        let parent = self
            .parent
            .as_ref()
            .map(|parent| span_context(parent, Default::default()));
        let quiet = !super::sampling::step_sampled(parent.as_ref());
        self.quiet.store(quiet, Ordering::Relaxed);
        if quiet {
            return super::sampling::quietly(true, f);
        }
        let parent = match parent {
            Some(parent) => opentelemetry::Context::new().with_remote_span_context(parent),
            None => opentelemetry::Context::new(),
        };
        let span = OtelSpan::start(
            format!("task {}", Escaped(tool)),
            SpanKind::Internal,
            vec![
                KeyValue::new("gen_ai.tool.name", Escaped(tool).to_string()),
                KeyValue::new("gen_ai.operation.name", "execute_tool"),
                KeyValue::new("saga.task.id", Escaped(task).to_string()),
            ],
            &parent,
        );
        if span.is_none() {
            return f();
        }
        let made = span.in_scope(f);
        if let Ok(mut current) = self.span.lock() {
            *current = Some(span);
        }
        made
    }

    fn current(&self) -> Option<OtelSpan> {
        self.span.lock().ok()?.clone()
    }

    /// `work` run in the current step's span: what it writes is the step's.
    pub(crate) fn run<F: std::future::Future>(
        &self,
        work: F,
    ) -> super::span::Instrumented<Quiet<F>> {
        self.current()
            .unwrap_or_default()
            .instrument(Quiet::new(work, self.quiet.load(Ordering::Relaxed)))
    }

    /// Ends the current step as `end` says, with the JSON-RPC `error` code it failed with.
    pub(crate) fn end(&self, end: StepEnd, error: Option<i32>) {
        let Some(span) = self.span.lock().ok().and_then(|mut span| span.take()) else {
            return;
        };
        span.set("saga.outcome", end.label());
        if matches!(end, StepEnd::Failed | StepEnd::ToolError) {
            let kind = match (end, error) {
                (StepEnd::ToolError, _) => "tool_error".to_owned(),
                (_, Some(code)) => code.to_string(),
                (_, None) => "error".to_owned(),
            };
            span.fail(kind);
        }
        span.end();
    }
}

/// Why a worker took a task over, as the cut-short step's `saga.task.takeover.reason`
/// says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Takeover {
    /// Its worker's lease ran out without a renewal.
    LeaseExpired,
    /// Its worker's process is gone (the store can tell: the lock it held is free).
    WorkerGone,
}

impl Takeover {
    /// The cut-short step's `error.type`: `worker_lost` only where the store can tell
    /// the worker's process is gone; a lease that ran out may also be a worker that was
    /// slow, or a task that waited for one and had not begun its step.
    fn error_type(self) -> &'static str {
        match self {
            Takeover::LeaseExpired => "lease_expired",
            Takeover::WorkerGone => "worker_lost",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Takeover::LeaseExpired => "lease_expired",
            Takeover::WorkerGone => "worker_gone",
        }
    }
}

/// What a taken-over task's record said of its lost worker, for [`cut_short`].
pub(crate) struct LostStep<'a> {
    pub(crate) task: &'a str,
    pub(crate) tool: &'a str,
    /// The creating request's `traceparent`, as the record keeps it.
    pub(crate) trace: Option<&'a str>,
    /// The lost worker's last write to the record (unix milliseconds): its last sign of
    /// life, so the least its unfinished step ran.
    pub(crate) last_write_ms: u64,
    /// The record's takeovers, this one counted.
    pub(crate) takeovers: u32,
    pub(crate) reason: Takeover,
}

/// The step a lost worker left unfinished (its process killed, its span never ended nor
/// exported), made by the worker that takes the task over: a `task {tool}` span under
/// the task's creation, from the lost worker's last write to the takeover, ended in error
/// (`error.type` `worker_lost`, or `lease_expired` where the store cannot tell the
/// worker is gone) with the reason, and a `task taken over` event.
///
/// Only for a task whose creation was traced and sampled: a trace nobody records gains
/// nothing from it.
pub(crate) fn cut_short(lost: LostStep<'_>) {
    let Some(tracer) = super::span::tracer() else {
        return;
    };
    let Some(parent) = lost.trace.and_then(SagaTrace::parse_traceparent) else {
        return;
    };
    let parent = opentelemetry::Context::new()
        .with_remote_span_context(span_context(&parent, Default::default()));
    let began = SystemTime::UNIX_EPOCH + Duration::from_millis(lost.last_write_ms);
    let now = SystemTime::now().max(began);
    let mut span = tracer
        .span_builder(format!("task {}", Escaped(lost.tool)))
        .with_kind(SpanKind::Internal)
        .with_start_time(began)
        .with_attributes([
            KeyValue::new("gen_ai.tool.name", Escaped(lost.tool).to_string()),
            KeyValue::new("gen_ai.operation.name", "execute_tool"),
            KeyValue::new("saga.task.id", Escaped(lost.task).to_string()),
            KeyValue::new("saga.outcome", "cut_short"),
            KeyValue::new("error.type", lost.reason.error_type()),
            KeyValue::new("saga.task.takeover.reason", lost.reason.label()),
            KeyValue::new("saga.task.takeovers", i64::from(lost.takeovers)),
        ])
        .start_with_context(tracer, &parent);
    span.add_event_with_timestamp(
        "task taken over",
        now,
        vec![KeyValue::new(
            "saga.task.takeover.reason",
            lost.reason.label(),
        )],
    );
    span.set_status(Status::error(match lost.reason {
        Takeover::WorkerGone => "the task's worker was lost",
        Takeover::LeaseExpired => "the task's worker's lease ran out",
    }));
    span.end_with_timestamp(now);
}
