//! How long `saga` waits for one answer of a server's: connecting, a page of tools, a
//! round of a call over MRTR, a task's status or update. A server that accepts the
//! request and never answers would otherwise hold the terminal forever.
//!
//! Not bounded: a call in a 2025-11-25 session, whose answer comes after the questions it
//! asks you (as long as you take to answer them); its connection and its listing are.

use std::future::Future;
use std::time::Duration;

/// The default: twice saga's own run-time limit for one round (60 s), so that a slow
/// round of a saga server still answers within it.
pub const DEFAULT: Duration = Duration::from_secs(120);

/// The environment variable that sets it, in seconds.
pub const VARIABLE: &str = "SAGA_REQUEST_TIMEOUT";

/// The wait: `SAGA_REQUEST_TIMEOUT` seconds when set to a positive number, else
/// [`DEFAULT`].
pub fn limit() -> Duration {
    std::env::var(VARIABLE)
        .ok()
        .and_then(|text| text.trim().parse::<u64>().ok())
        .filter(|seconds| *seconds > 0)
        .map_or(DEFAULT, Duration::from_secs)
}

/// `request`, or an error naming `what` once the server has not answered within
/// [`limit`].
pub async fn answer<T>(what: &str, request: impl Future<Output = T>) -> anyhow::Result<T> {
    let limit = limit();
    tokio::time::timeout(limit, request).await.map_err(|_| {
        anyhow::anyhow!(
            "{what}: the server did not answer within {} s (set {VARIABLE} to wait longer)",
            limit.as_secs()
        )
    })
}
