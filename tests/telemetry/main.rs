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

use std::io::Write;
use std::sync::{Arc, Mutex};

/// A log writer whose bytes a test reads back.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut buffer) = self.0.lock() {
            buffer.extend_from_slice(bytes);
        }
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// Everything written so far.
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("the log")).into_owned()
    }

    /// A subscriber at `filter` that writes here, the thread's default while the guard
    /// lives.
    fn install(&self, filter: &str) -> tracing::subscriber::DefaultGuard {
        let writer = self.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        let guard = tracing::subscriber::set_default(subscriber);
        // Callsites first hit before this subscriber existed are asked again.
        tracing::callsite::rebuild_interest_cache();
        guard
    }
}
