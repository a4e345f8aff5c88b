//! A log a test reads back: a `tracing` subscriber that writes into memory, installed as
//! the test thread's default.

use std::io::Write;
use std::sync::{Arc, Mutex};

/// A log writer whose bytes a test reads back.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

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
    pub fn text(&self) -> String {
        self.0
            .lock()
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default()
    }

    /// A subscriber at `filter` that writes here, the thread's default while the guard
    /// lives.
    pub fn install(&self, filter: &str) -> tracing::subscriber::DefaultGuard {
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
