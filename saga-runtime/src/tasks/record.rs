//! What the store keeps of one task: enough for any replica to answer `tasks/get` and to
//! take the task over.

use rmcp::model::{
    ClientCapabilities, DetailedTask, InputRequests, InputResponses, JsonObject, Task, TaskPayload,
    TaskStatus,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One task. Serialized as JSON in the store.
///
/// A record holding a field this build does not know is refused, not read: a build that
/// read it would drop the field when it writes the record back. Fields are only ever
/// added (with `#[serde(default)]`, so that earlier builds' records still read).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskRecord {
    /// The task id: 128 random bits, hex.
    pub id: String,
    /// Who created it; only they can see or change it.
    pub principal: String,
    /// What its quota counts it under, when not its principal: the pool of unverified
    /// callers at the creator's address (`unverified:ADDRESS`), so that identities made
    /// up at one address share one quota. Records of earlier builds count under their
    /// principal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_as: Option<String>,
    /// The tool it runs.
    pub tool: String,
    /// `None`: a task keeps no arguments, only what its saga's state kept of them (its
    /// state is bound to the task). Records written by earlier builds hold the call's
    /// arguments, which their states are bound to.
    pub arguments: Option<JsonObject>,
    /// The capabilities the creating request declared: what the saga may ask for.
    pub capabilities: ClientCapabilities,
    /// Where it is.
    pub status: TaskStatus,
    /// The saga's sealed state at its last suspension or checkpoint.
    pub state: Option<String>,
    /// The requests still unanswered, while `input_required`.
    pub pending: Option<InputRequests>,
    /// The answers given so far to the pending requests.
    pub answers: InputResponses,
    /// The answers the server's model gave the round (`saga_runtime::model`), kept apart
    /// from the client's: under `SamplingPolicy::ServerOnly` only these answer a sample.
    #[serde(default, skip_serializing_if = "InputResponses::is_empty")]
    pub model_answers: InputResponses,
    /// The tool's result (a `CallToolResult`), once `completed`.
    pub result: Option<JsonObject>,
    /// The error (`{code, message}`), once `failed`.
    pub error: Option<JsonObject>,
    /// Unix milliseconds.
    pub created_ms: u64,
    /// Unix milliseconds of the last change.
    pub updated_ms: u64,
    /// How long the record is kept after its creation.
    pub ttl_ms: u64,
    /// The worker that runs it, while `working`.
    pub worker: Option<String>,
    /// Until when (unix milliseconds) the worker's claim holds; after it, another replica
    /// may take the task over.
    pub lease_until_ms: u64,
    /// How many times a worker took it over from another.
    pub takeovers: u32,
    /// Since when (unix milliseconds) the replicas that claimed it could not resume its
    /// state (another build's suspension point); it fails with the reason once no replica
    /// has resumed it for three leases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unresumable_since_ms: Option<u64>,
    /// The latest progress its tool reported (`cx.progress(..)`: `2/5 table 1`), shown
    /// as the task's `statusMessage` while it works.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// The W3C `traceparent` of the request that created it (feature `otel`, when a trace
    /// was recorded): its worker's steps are that span's children, on any replica.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

impl TaskRecord {
    /// The name the store's per-principal quota counts this record under.
    pub fn quota_owner(&self) -> &str {
        self.counted_as.as_deref().unwrap_or(&self.principal)
    }

    /// The task as MCP shows it, in `CreateTaskResult` and `tasks/get`.
    pub(crate) fn task(&self, poll_interval_ms: u64) -> Task {
        let task = Task::new(
            self.id.clone(),
            self.status,
            super::clock::iso8601(self.created_ms),
            super::clock::iso8601(self.updated_ms),
        )
        .with_ttl_ms(self.ttl_ms)
        .with_poll_interval_ms(poll_interval_ms);
        match &self.status_message {
            Some(message) if self.status == TaskStatus::Working => {
                task.with_status_message(message)
            }
            _ => task,
        }
    }

    /// The task with what its status carries: the pending requests, the result or the
    /// error.
    pub(crate) fn detailed(&self, poll_interval_ms: u64) -> DetailedTask {
        let payload = match self.status {
            TaskStatus::InputRequired => TaskPayload::InputRequired {
                input_requests: self.pending.clone().unwrap_or_default(),
            },
            TaskStatus::Completed => TaskPayload::Completed {
                result: self.result.clone().unwrap_or_default(),
            },
            TaskStatus::Failed => TaskPayload::Failed {
                error: self.error.clone().unwrap_or_default(),
            },
            TaskStatus::Cancelled => TaskPayload::Cancelled,
            _ => TaskPayload::Working,
        };
        DetailedTask::new(self.task(poll_interval_ms), payload)
    }

    /// Whether the task has ended.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self.status,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// When the store may forget it (unix milliseconds).
    pub fn expires_ms(&self) -> u64 {
        self.created_ms.saturating_add(self.ttl_ms)
    }

    /// `{code, message}` as a JSON object.
    pub(crate) fn error_object(code: i32, message: &str) -> JsonObject {
        let mut error = JsonObject::new();
        error.insert("code".into(), Value::from(code));
        error.insert("message".into(), Value::from(message));
        error
    }
}
