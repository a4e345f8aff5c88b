//! The OpenTelemetry metrics of sessions and tasks, beside `mcp.server.operation.duration`
//! (`super::spans`): what `crate::metrics` reports through the `metrics` facade, recorded
//! as the MCP conventions name it where they name it (`mcp.server.session.duration`), and
//! under `saga.` where they do not.
//!
//! | name | kind | unit | attributes |
//! |---|---|---|---|
//! | `mcp.server.session.duration` | histogram, at each 2025-11-25 session's end | `s` | `network.transport` (`tcp`), `network.protocol.name` (`http`) |
//! | `saga.server.sessions` | gauge, live 2025-11-25 sessions | `{session}` | |
//! | `saga.task.status.changes` | counter, each change of a task's status | `{change}` | `saga.task.status` |
//! | `saga.task.takeovers` | counter, tasks taken over by another worker (their worker lost, or handed back by a graceful stop) | `{takeover}` | |
//! | `saga.task.store.depth` | gauge, tasks the store keeps | `{task}` | |

use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Gauge, Histogram, Meter};

/// The instruments, made from [`super::Telemetry`]'s meter provider when it is built, or
/// else from the global one at their first use.
static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();

struct Instruments {
    session_duration: Histogram<f64>,
    sessions: Gauge<u64>,
    task_status: Counter<u64>,
    takeovers: Counter<u64>,
    store_depth: Gauge<u64>,
}

/// Makes the instruments from `meter`, unless they were made already.
pub(super) fn init(meter: &Meter) {
    let _ = INSTRUMENTS.set(Instruments::of(meter));
}

impl Instruments {
    fn of(meter: &Meter) -> Self {
        Self {
            session_duration: meter
                .f64_histogram("mcp.server.session.duration")
                .with_unit("s")
                .with_description("Duration of an MCP session as the server sees it")
                // The conventions advise the operation's bounds for sessions too.
                .with_boundaries(super::spans::DURATION_BOUNDS.to_vec())
                .build(),
            sessions: meter
                .u64_gauge("saga.server.sessions")
                .with_unit("{session}")
                .with_description("Live 2025-11-25 sessions")
                .build(),
            task_status: meter
                .u64_counter("saga.task.status.changes")
                .with_unit("{change}")
                .with_description("Changes of a task's status, by the status it took")
                .build(),
            takeovers: meter
                .u64_counter("saga.task.takeovers")
                .with_unit("{takeover}")
                .with_description("Tasks taken over by another worker")
                .build(),
            store_depth: meter
                .u64_gauge("saga.task.store.depth")
                .with_unit("{task}")
                .with_description("Tasks the task store keeps")
                .build(),
        }
    }

    fn get() -> &'static Self {
        INSTRUMENTS.get_or_init(|| Self::of(&opentelemetry::global::meter("saga-runtime")))
    }
}

/// A session ended, `lasted` after it was opened.
pub(crate) fn session_ended(lasted: Duration) {
    Instruments::get().session_duration.record(
        lasted.as_secs_f64(),
        &[
            KeyValue::new("network.transport", "tcp"),
            KeyValue::new("network.protocol.name", "http"),
        ],
    );
}

/// The number of live sessions.
pub(crate) fn sessions(live: usize) {
    Instruments::get().sessions.record(live as u64, &[]);
}

/// A task took `status` (a closed set: `crate::metrics`'s `status` label).
pub(crate) fn task_status(status: &'static str) {
    Instruments::get()
        .task_status
        .add(1, &[KeyValue::new("saga.task.status", status)]);
}

/// A task was taken over.
pub(crate) fn lease_takeover() {
    Instruments::get().takeovers.add(1, &[]);
}

/// The number of tasks the store keeps.
pub(crate) fn task_store_depth(depth: usize) {
    Instruments::get().store_depth.record(depth as u64, &[]);
}
