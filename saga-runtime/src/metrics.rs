//! What saga reports through the [`metrics`] facade, for operators: install any recorder
//! (`metrics-exporter-prometheus`, for example) and these appear; without one they cost a
//! lookup of the absent recorder each (the transition bench measures it).
//!
//! | name | kind | labels |
//! |---|---|---|
//! | `saga_transitions_total` | counter | `tool`, `outcome`, `era` |
//! | `saga_transition_seconds` | histogram | `tool` |
//! | `saga_refusals_total` | counter | `reason` |
//! | `saga_token_bytes` | histogram | `direction` (`in`, `out`) |
//! | `saga_rounds` | histogram, at each completed saga | `tool` |
//! | `saga_tasks_total` | counter, at each change of status | `status` |
//! | `saga_task_lease_takeovers_total` | counter | |
//! | `saga_task_store_depth` | gauge, tasks kept in the store | |
//! | `saga_sessions` | gauge, live 2025-11-25 sessions | |
//! | `saga_samples_total` | counter, only with a server model: each `sample()` it answers (`server`), or, failing under `ServerFirst`, leaves to the client (`client`) | `answered_by` (`client`, `server`), `outcome` (`ok`, `failed`) |
//! | `saga_model_seconds` | histogram, each call of the server's model | |
//! | `saga_model_tokens_total` | counter, tokens the server's model reported | |
//! | `saga_auth_refused_total` | counter, only with authorization: bearer tokens refused | `reason` (`invalid_token`, `insufficient_scope`) |
//! | `saga_auth_key_fetches_total` | counter, only with authorization: fetches of an issuer's keys | |
//!
//! Every label value comes from a closed set, and nothing a client writes becomes one (a
//! call of an unknown tool is refused before it reaches a transition):
//!
//! | label | values |
//! |---|---|
//! | `tool` | a registered tool's name |
//! | `outcome` | `complete`, `tool_error`, `input_required`, `checkpoint`, `refused_invalid_params`, `refused_missing_capability`, `internal_error`, `other` |
//! | `era` | `2026-07-28`, `2025-11-25`, `2025-06-18`, `2025-03-26`, `2024-11-05`; `other` for any other version, `unknown` for none |
//! | `reason` (refusals) | `too_long`, `malformed`, `unknown_key`, `tampered`, `expired`, `from_the_future`, `unknown_point`, `other_version`, `other_layout`, `other_constants`, `redeemed`, `undecodable`, `other` |
//! | `status` | `working`, `input_required`, `completed`, `failed`, `cancelled` |
//!
//! With the `otel` feature these are also recorded as OpenTelemetry metrics, under the
//! names the MCP conventions give them where they give one (the `otel` module lists them).
//!
//! `examples/metrics.rs` serves the deploy saga with Prometheus text on `/metrics`, its
//! histograms as histograms: an exporter's default may render them as summaries, whose
//! quantiles are each replica's and cannot be added up across a fleet. [`BUCKETS`] gives
//! bucket bounds that fit what saga measures (BENCHMARKS.md): a transition takes 2–100 µs
//! of CPU unless the tool itself awaits something slow, and a token is about 100 bytes per
//! request kept and grows with the locals saved.
//!
//! ```
//! use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut prometheus = PrometheusBuilder::new();
//! for (name, bounds) in saga_runtime::metrics::BUCKETS {
//!     prometheus = prometheus.set_buckets_for_metric(Matcher::Full((*name).to_owned()), bounds)?;
//! }
//! let handle = prometheus.install_recorder()?;
//! # let _ = handle; Ok(()) }
//! ```

use std::fmt;
use std::time::Duration;

use metrics::{Key, Label, Metadata, counter, gauge, histogram};

/// `saga_transitions_total`.
pub const TRANSITIONS: &str = "saga_transitions_total";
/// `saga_transition_seconds`.
pub const TRANSITION_SECONDS: &str = "saga_transition_seconds";
/// `saga_refusals_total`.
pub const REFUSALS: &str = "saga_refusals_total";
/// `saga_token_bytes`.
pub const TOKEN_BYTES: &str = "saga_token_bytes";
/// `saga_rounds`.
pub const ROUNDS: &str = "saga_rounds";
/// `saga_tasks_total`.
pub const TASKS: &str = "saga_tasks_total";
/// `saga_task_lease_takeovers_total`.
pub const LEASE_TAKEOVERS: &str = "saga_task_lease_takeovers_total";
/// `saga_task_store_depth`.
pub const TASK_STORE_DEPTH: &str = "saga_task_store_depth";
/// `saga_sessions`.
pub const SESSIONS: &str = "saga_sessions";

/// `saga_samples_total`.
pub const SAMPLES: &str = "saga_samples_total";
/// `saga_auth_refused_total`.
pub const AUTH_REFUSED: &str = "saga_auth_refused_total";
/// `saga_auth_key_fetches_total`.
pub const AUTH_KEY_FETCHES: &str = "saga_auth_key_fetches_total";
/// `saga_model_seconds`.
pub const MODEL_SECONDS: &str = "saga_model_seconds";
/// `saga_model_tokens_total`.
pub const MODEL_TOKENS: &str = "saga_model_tokens_total";

/// Bucket bounds for each of saga's histograms, as `(name, upper bounds)`: see the module's
/// documentation. Seconds for the `_seconds` ones, bytes for the token's, a count of
/// rounds for `saga_rounds`.
pub const BUCKETS: &[(&str, &[f64])] = &[
    // Most transitions end between 2 and 100 µs; a tool that awaits an API call or a
    // database takes milliseconds to seconds, up to `max_run_time`.
    (
        TRANSITION_SECONDS,
        &[
            0.000_005, 0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.005,
            0.025, 0.1, 0.5, 2.5, 10.0, 60.0,
        ],
    ),
    // The deploy saga's tokens are about 100 bytes; a saved 1 KiB of JSON makes one of
    // about 1 KiB; the default bound on a token is 64 KiB.
    (
        TOKEN_BYTES,
        &[
            64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0, 65536.0,
        ],
    ),
    (
        ROUNDS,
        &[
            1.0, 2.0, 3.0, 4.0, 5.0, 8.0, 12.0, 20.0, 50.0, 100.0, 1000.0,
        ],
    ),
    // A chat completion: a fraction of a second to the sample timeout (30 s by default).
    (
        MODEL_SECONDS,
        &[0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0],
    ),
];

/// How a transition ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The saga completed with a result.
    Complete,
    /// The saga completed with a tool error (`isError: true`).
    ToolError,
    /// It asks the client (`input_required` with requests).
    InputRequired,
    /// It saved its state at a `checkpoint()`.
    Checkpoint,
    /// The request was refused with `-32602` (a bad token, bad arguments, bad answers).
    RefusedInvalidParams,
    /// The request lacked a capability a request needs (`-32021`).
    RefusedMissingCapability,
    /// The server failed (`-32603`).
    InternalError,
    /// Any other JSON-RPC error, or any other result.
    Other,
}

impl Outcome {
    /// The label value.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Outcome::Complete => "complete",
            Outcome::ToolError => "tool_error",
            Outcome::InputRequired => "input_required",
            Outcome::Checkpoint => "checkpoint",
            Outcome::RefusedInvalidParams => "refused_invalid_params",
            Outcome::RefusedMissingCapability => "refused_missing_capability",
            Outcome::InternalError => "internal_error",
            Outcome::Other => "other",
        }
    }
}

/// The protocol eras a label can name; anything else is `other`, and no version `unknown`.
pub(crate) fn era(version: Option<&str>) -> &'static str {
    match version {
        None => "unknown",
        Some(version) => ERAS[..ERAS.len() - 2]
            .iter()
            .find(|known| **known == version)
            .copied()
            .unwrap_or("other"),
    }
}

/// Why a token (or what it carried) was refused: the `reason` of `saga_refusals_total`,
/// and the reason in the log. The client only ever sees the one fixed message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum Refusal {
    /// Over the server's cap on token length.
    TooLong,
    /// Not a token at all (encoding, length, version byte).
    Malformed,
    /// Sealed with a key this server does not have.
    UnknownKey,
    /// Its tag does not verify: tampered, or bound to another tool, method, principal or
    /// arguments.
    Tampered,
    /// Past its expiry.
    Expired,
    /// Expires further ahead than this server ever seals.
    FromTheFuture,
    /// Stopped at a suspension point this build does not have.
    UnknownPoint,
    /// Stopped at a point this build has at another version.
    OtherVersion,
    /// Stopped at a point this build has with another saved layout.
    OtherLayout,
    /// Saved by a build whose constants differ where the saga stopped: a `for` loop's
    /// constant, or the literals a saved `&'static str` is chosen among.
    OtherConstants,
    /// Already redeemed (single use).
    Redeemed,
    /// Opened, but what it holds does not read as this build's state.
    Undecodable(String),
    /// Anything else, with the reason for the log.
    Other(String),
}

impl Refusal {
    /// The label value.
    pub(crate) fn as_str(&self) -> &'static str {
        match self {
            Refusal::TooLong => "too_long",
            Refusal::Malformed => "malformed",
            Refusal::UnknownKey => "unknown_key",
            Refusal::Tampered => "tampered",
            Refusal::Expired => "expired",
            Refusal::FromTheFuture => "from_the_future",
            Refusal::UnknownPoint => "unknown_point",
            Refusal::OtherVersion => "other_version",
            Refusal::OtherLayout => "other_layout",
            Refusal::OtherConstants => "other_constants",
            Refusal::Redeemed => "redeemed",
            Refusal::Undecodable(_) => "undecodable",
            Refusal::Other(_) => "other",
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Undecodable(reason) => write!(f, "the state does not decode: {reason}"),
            Refusal::Other(reason) => f.write_str(reason),
            Refusal::Redeemed => f.write_str("token already redeemed"),
            other => f.write_str(other.as_str()),
        }
    }
}

/// What can be said of a refused token: its [`Refusal`]. Implemented for the errors the
/// runtime meets while opening one, and for a plain reason (`Refusal::Other`).
pub(crate) trait AsRefusal: fmt::Display {
    /// The refusal.
    fn refusal(&self) -> Refusal;
}

impl AsRefusal for Refusal {
    fn refusal(&self) -> Refusal {
        self.clone()
    }
}

impl AsRefusal for crate::state::OpenError {
    fn refusal(&self) -> Refusal {
        Refusal::from(self)
    }
}

impl AsRefusal for postcard::Error {
    fn refusal(&self) -> Refusal {
        Refusal::Undecodable(self.to_string())
    }
}

impl AsRefusal for serde_json::Error {
    fn refusal(&self) -> Refusal {
        Refusal::Undecodable(self.to_string())
    }
}

impl AsRefusal for &str {
    fn refusal(&self) -> Refusal {
        Refusal::Other((*self).to_owned())
    }
}

impl AsRefusal for String {
    fn refusal(&self) -> Refusal {
        Refusal::Other(self.clone())
    }
}

impl From<&crate::state::OpenError> for Refusal {
    fn from(error: &crate::state::OpenError) -> Self {
        use crate::state::OpenError;
        match error {
            OpenError::TooLong { .. } => Refusal::TooLong,
            OpenError::Encoding | OpenError::Truncated { .. } | OpenError::Version(_) => {
                Refusal::Malformed
            }
            OpenError::UnknownKey(_) => Refusal::UnknownKey,
            OpenError::Forged => Refusal::Tampered,
            OpenError::Expired(_) => Refusal::Expired,
            OpenError::FromTheFuture(_) => Refusal::FromTheFuture,
            other => Refusal::Other(other.to_string()),
        }
    }
}

/// The eras a label names: the protocol versions, then `other` and `unknown`.
const ERAS: [&str; 7] = [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
    "other",
    "unknown",
];

const OUTCOMES: [Outcome; 8] = [
    Outcome::Complete,
    Outcome::ToolError,
    Outcome::InputRequired,
    Outcome::Checkpoint,
    Outcome::RefusedInvalidParams,
    Outcome::RefusedMissingCapability,
    Outcome::InternalError,
    Outcome::Other,
];

/// One tool's metric keys, built when the tool is registered, so that a transition
/// reports through the recorder without building a label or hashing a key: with no
/// recorder installed, what it costs is a look for the recorder.
#[derive(Debug)]
pub(crate) struct ToolKeys {
    /// By outcome, then era.
    transitions: Vec<Key>,
    seconds: Key,
    rounds: Key,
}

impl ToolKeys {
    pub(crate) fn new(tool: &str) -> Self {
        let tool = tool.to_owned();
        let transitions = OUTCOMES
            .iter()
            .flat_map(|outcome| {
                let tool = tool.clone();
                ERAS.iter().map(move |era| {
                    Key::from_parts(
                        TRANSITIONS,
                        vec![
                            Label::new("tool", tool.clone()),
                            Label::new("outcome", outcome.as_str()),
                            Label::new("era", *era),
                        ],
                    )
                })
            })
            .collect();
        Self {
            transitions,
            seconds: Key::from_parts(TRANSITION_SECONDS, vec![Label::new("tool", tool.clone())]),
            rounds: Key::from_parts(ROUNDS, vec![Label::new("tool", tool)]),
        }
    }

    fn transitions(&self, outcome: Outcome, era: &str) -> Option<&Key> {
        let outcome = OUTCOMES.iter().position(|known| *known == outcome)?;
        let era = ERAS.iter().position(|known| *known == era)?;
        self.transitions.get(outcome * ERAS.len() + era)
    }
}

static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()));

/// One transition's figures.
pub(crate) fn transition(
    keys: &ToolKeys,
    outcome: Outcome,
    era: &'static str,
    elapsed: Duration,
    token_in: usize,
    token_out: Option<usize>,
) {
    metrics::with_recorder(|recorder| {
        if let Some(key) = keys.transitions(outcome, era) {
            recorder.register_counter(key, &METADATA).increment(1);
        }
        recorder
            .register_histogram(&keys.seconds, &METADATA)
            .record(elapsed.as_secs_f64());
    });
    if token_in > 0 {
        histogram!(TOKEN_BYTES, "direction" => "in").record(token_in as f64);
    }
    if let Some(bytes) = token_out {
        histogram!(TOKEN_BYTES, "direction" => "out").record(bytes as f64);
    }
}

/// A saga completed after `rounds` rounds.
pub(crate) fn completed(keys: &ToolKeys, rounds: u32) {
    metrics::with_recorder(|recorder| {
        recorder
            .register_histogram(&keys.rounds, &METADATA)
            .record(f64::from(rounds));
    });
}

/// A refused token.
pub(crate) fn refused(refusal: &Refusal) {
    counter!(REFUSALS, "reason" => refusal.as_str()).increment(1);
}

/// A task entered `status` (`working`, `input_required`, `completed`, `failed`,
/// `cancelled`).
pub(crate) fn task_status(status: &'static str) {
    counter!(TASKS, "status" => status).increment(1);
    #[cfg(feature = "otel")]
    crate::otel::metrics::task_status(status);
}

/// A replica took over a task whose worker's lease had ended.
pub(crate) fn lease_takeover() {
    counter!(LEASE_TAKEOVERS).increment(1);
    #[cfg(feature = "otel")]
    crate::otel::metrics::lease_takeover();
}

/// The number of tasks the store keeps.
pub(crate) fn task_store_depth(depth: usize) {
    gauge!(TASK_STORE_DEPTH).set(depth as f64);
    #[cfg(feature = "otel")]
    crate::otel::metrics::task_store_depth(depth);
}

/// A `sample()` answered by the server's model (`server`) or sent to the client
/// (`client`), and whether the server's answer came (`ok`) or not (`failed`).
pub(crate) fn sample(answered_by: &'static str, ok: bool) {
    counter!(SAMPLES, "answered_by" => answered_by, "outcome" => if ok { "ok" } else { "failed" })
        .increment(1);
}

/// A call of the server's model: how long it took, and the tokens it reported.
pub(crate) fn model_call(elapsed: Duration, tokens: Option<u64>) {
    histogram!(MODEL_SECONDS).record(elapsed.as_secs_f64());
    if let Some(tokens) = tokens {
        counter!(MODEL_TOKENS).increment(tokens);
    }
}

/// A bearer token refused, for `reason` (`invalid_token`, `insufficient_scope`).
#[cfg_attr(not(feature = "oauth"), allow(dead_code))]
pub(crate) fn auth_refused(reason: &'static str) {
    counter!(AUTH_REFUSED, "reason" => reason).increment(1);
}

/// A fetch of an issuer's keys (JWKS).
#[cfg_attr(not(feature = "oauth"), allow(dead_code))]
pub(crate) fn auth_keys_fetched() {
    counter!(AUTH_KEY_FETCHES).increment(1);
}

/// A session ended, `lasted` after it was opened: recorded only as OpenTelemetry's
/// `mcp.server.session.duration` (feature `otel`).
pub(crate) fn session_ended(lasted: std::time::Duration) {
    #[cfg(feature = "otel")]
    crate::otel::metrics::session_ended(lasted);
    #[cfg(not(feature = "otel"))]
    let _ = lasted;
}

/// The number of live sessions.
pub(crate) fn sessions(live: usize) {
    gauge!(SESSIONS).set(live as f64);
    #[cfg(feature = "otel")]
    crate::otel::metrics::sessions(live);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The module's table of label values, as a reader sees it.
    fn documented(label: &str) -> String {
        let row = format!("//! | `{label}`");
        include_str!("metrics.rs")
            .lines()
            .find(|line| line.starts_with(&row))
            .unwrap_or_else(|| panic!("no row for `{label}` in the module's table"))
            .to_owned()
    }

    #[test]
    fn every_label_value_is_in_the_modules_table() {
        // The enums are private: the table is all an operator reads of them.
        let outcomes = documented("outcome");
        for outcome in OUTCOMES {
            assert!(
                outcomes.contains(&format!("`{}`", outcome.as_str())),
                "{outcome:?}"
            );
        }
        let eras = documented("era");
        for era in ERAS {
            assert!(eras.contains(&format!("`{era}`")), "{era}");
        }
        let reasons = documented("reason");
        for refusal in [
            Refusal::TooLong,
            Refusal::Malformed,
            Refusal::UnknownKey,
            Refusal::Tampered,
            Refusal::Expired,
            Refusal::FromTheFuture,
            Refusal::UnknownPoint,
            Refusal::OtherVersion,
            Refusal::OtherLayout,
            Refusal::OtherConstants,
            Refusal::Redeemed,
            Refusal::Undecodable(String::new()),
            Refusal::Other(String::new()),
        ] {
            // A new variant fails to compile here until it is listed.
            match &refusal {
                Refusal::TooLong
                | Refusal::Malformed
                | Refusal::UnknownKey
                | Refusal::Tampered
                | Refusal::Expired
                | Refusal::FromTheFuture
                | Refusal::UnknownPoint
                | Refusal::OtherVersion
                | Refusal::OtherLayout
                | Refusal::OtherConstants
                | Refusal::Redeemed
                | Refusal::Undecodable(_)
                | Refusal::Other(_) => {}
            }
            assert!(
                reasons.contains(&format!("`{}`", refusal.as_str())),
                "{refusal:?}"
            );
        }
    }

    #[test]
    fn eras_are_a_closed_set() {
        assert_eq!(era(Some("2026-07-28")), "2026-07-28");
        assert_eq!(era(Some("2025-11-25")), "2025-11-25");
        assert_eq!(era(Some("1999-01-01\u{1b}[2J")), "other");
        assert_eq!(era(None), "unknown");
    }

    #[test]
    fn every_open_error_has_its_refusal() {
        use crate::state::OpenError;
        assert_eq!(Refusal::from(&OpenError::Forged).as_str(), "tampered");
        assert_eq!(Refusal::from(&OpenError::Expired(3)).as_str(), "expired");
        assert_eq!(Refusal::from(&OpenError::Encoding).as_str(), "malformed");
        assert_eq!(
            Refusal::from(&OpenError::UnknownKey("k".into())).as_str(),
            "unknown_key"
        );
    }
}
