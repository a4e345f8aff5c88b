//! Telemetry: what operators see of a saga: the spans it logs and the metrics it reports.
//! A binary of its own: the spans test captures the log through a thread's default
//! subscriber, which other tests running saga code in the same process would race with
//! (tracing caches each callsite's interest when the callsite is first hit).
//!
//! `cargo test -p saga-workspace --test telemetry`. The helpers are `saga_examples::harness`
//! (`examples/support/harness/`).

mod metrics;
mod model_log;
mod spans;

use saga_examples::harness::log::Captured;
