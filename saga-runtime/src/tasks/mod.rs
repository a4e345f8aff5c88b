//! Durable tasks: the MCP tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663),
//! over sealed saga state.
//!
//! A `#[saga_tool(task)]` called by a client that declares the extension becomes a task at
//! its first `checkpoint()`: the call answers with a `CreateTaskResult` and a worker drives
//! the saga on, writing its sealed state to the [`TaskStore`] at every suspension and
//! checkpoint. Rounds that ask the client something before that first checkpoint are
//! ordinary MRTR rounds, so a tool can gather its input synchronously and then go on in
//! the background. In a task, a suspension that asks something makes the task
//! `input_required` with the requests inlined in `tasks/get`; `tasks/update` answers them.
//!
//! Workers hold a lease on the task they run and renew it while they work. When a worker
//! dies, its lease runs out and a worker of any replica sharing the store takes the task
//! over (at once, where the store can tell that its process ended: SQLite) from the last
//! state written: only the work since the last checkpoint runs again,
//! and the client sees one result.

pub(crate) mod clock;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod group_commit;
mod host;
#[cfg(all(unix, feature = "sqlite"))]
mod liveness;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
mod record;
#[cfg(feature = "redis")]
mod redis;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(feature = "sqlite")]
mod sqlite;
mod states;
mod store;
mod worker;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, ClientCapabilities, CreateTaskResult, GetTaskResult, InputResponses,
    Notification, ServerNotification, TaskStatus, TaskStatusNotificationParams,
};
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

pub use crate::engine::TaskSupport;
pub(crate) use host::Host;
pub use record::TaskRecord;
pub use states::{
    DEFAULT_INLINE_MAX, DEFAULT_STATE_BYTES_PER_PRINCIPAL, DEFAULT_STATE_STORE_BYTES, StateSettings,
};
pub use store::{Change, KeptEntry, Quota, Share, TaskBackend, TaskStore, TaskStoreError};

use crate::engine::runner::family::Saga;
use crate::engine::{Call, SagaContext};
use crate::log::Escaped;
use crate::state::StateCodec;

/// How long a task's record is kept unless [`TaskSettings::ttl`] says otherwise.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(3600);
/// How often clients are told to poll `tasks/get`.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// How long a worker's claim on a task holds without renewal.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);
/// How many tasks one process runs at once unless [`TaskSettings::max_workers`] says
/// otherwise.
pub const DEFAULT_MAX_WORKERS: usize = 256;
/// How many live tasks one principal may hold unless
/// [`TaskSettings::max_per_principal`] says otherwise.
pub const DEFAULT_MAX_PER_PRINCIPAL: usize = 100;
/// How many tasks the store may hold unless [`TaskSettings::max_tasks`] says otherwise.
pub const DEFAULT_MAX_TASKS: usize = 10_000;
/// How many bytes the store's records may hold unless [`TaskSettings::max_store_bytes`]
/// says otherwise: 256 MiB.
pub const DEFAULT_MAX_STORE_BYTES: usize = 256 * 1024 * 1024;
/// How many workers one principal's tasks may take unless
/// [`TaskSettings::max_workers_per_principal`] says otherwise: an eighth of
/// [`DEFAULT_MAX_WORKERS`].
pub const DEFAULT_MAX_WORKERS_PER_PRINCIPAL: usize = DEFAULT_MAX_WORKERS / 8;
/// How many bytes one principal's task records may hold unless
/// [`TaskSettings::max_bytes_per_principal`] says otherwise: 8 MiB.
pub const DEFAULT_MAX_BYTES_PER_PRINCIPAL: usize = 8 * 1024 * 1024;

/// The tasks of a server: a store and how tasks are kept. Each setter says its default.
///
/// ```
/// # use saga_runtime::tasks::{TaskSettings, TaskStore};
/// # use std::time::Duration;
/// let settings = TaskSettings::new(TaskStore::memory())
///     .ttl(Duration::from_secs(24 * 3600))
///     .max_workers(32);
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct TaskSettings {
    pub(crate) store: TaskStore,
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) lease: Duration,
    pub(crate) max_workers: usize,
    pub(crate) max_per_principal: usize,
    pub(crate) max_workers_per_principal: usize,
    pub(crate) max_bytes_per_principal: usize,
    pub(crate) max_tasks: usize,
    pub(crate) max_store_bytes: usize,
    pub(crate) unverified_share: Share,
}

impl TaskSettings {
    /// The bounds a task's record counts against when it changes: the same as at
    /// insert; the shared part's counts only a record the insert counted in it.
    pub(crate) fn updates_quota(&self) -> Quota {
        self.quota(false)
    }

    /// The quota a new task of a caller counts against.
    fn quota(&self, verified: bool) -> Quota {
        let quota = Quota::per_principal(self.max_per_principal)
            .with_bytes(self.max_bytes_per_principal, self.max_store_bytes)
            .with_tasks(self.max_tasks);
        if verified {
            quota
        } else {
            quota.with_share(self.unverified_share)
        }
    }
}

impl TaskSettings {
    /// The defaults, with `store`.
    pub fn new(store: TaskStore) -> Self {
        Self {
            store,
            ttl: DEFAULT_TASK_TTL,
            poll_interval: DEFAULT_POLL_INTERVAL,
            lease: DEFAULT_LEASE,
            max_workers: DEFAULT_MAX_WORKERS,
            max_per_principal: DEFAULT_MAX_PER_PRINCIPAL,
            max_workers_per_principal: DEFAULT_MAX_WORKERS_PER_PRINCIPAL,
            max_bytes_per_principal: DEFAULT_MAX_BYTES_PER_PRINCIPAL,
            max_tasks: DEFAULT_MAX_TASKS,
            max_store_bytes: DEFAULT_MAX_STORE_BYTES,
            unverified_share: Share {
                tasks: DEFAULT_MAX_TASKS / 2,
                bytes: DEFAULT_MAX_STORE_BYTES / 2,
            },
        }
    }

    /// How long a task is kept after its creation ([`DEFAULT_TASK_TTL`]).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The `pollIntervalMs` clients are given ([`DEFAULT_POLL_INTERVAL`]).
    pub fn poll_interval(mut self, poll_interval: Duration) -> Self {
        self.poll_interval = poll_interval;
        self
    }

    /// How long a worker's claim holds without renewal ([`DEFAULT_LEASE`]); a task whose
    /// worker died is taken over this long after its last renewal.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// How many tasks this process runs at once ([`DEFAULT_MAX_WORKERS`]). Tasks beyond it
    /// wait, already stored, for a worker (of this replica or, once their lease ends,
    /// another's): a burst of task calls costs store entries, not unbounded CPU.
    pub fn max_workers(mut self, max_workers: usize) -> Self {
        self.max_workers = max_workers;
        self
    }

    /// How many tasks one principal may have in the store at once, ended ones included
    /// until their `ttl` ([`DEFAULT_MAX_PER_PRINCIPAL`]), so that one client cannot fill
    /// the store for everyone. A call beyond it is refused.
    pub fn max_per_principal(mut self, max_per_principal: usize) -> Self {
        self.max_per_principal = max_per_principal;
        self
    }

    /// How many of this process's workers one principal's tasks may take at once
    /// ([`DEFAULT_MAX_WORKERS_PER_PRINCIPAL`]); its other tasks wait, so that one caller's
    /// long tasks never starve everyone else's.
    pub fn max_workers_per_principal(mut self, max_workers_per_principal: usize) -> Self {
        self.max_workers_per_principal = max_workers_per_principal;
        self
    }

    /// The most bytes one principal's task records may hold in the store at once
    /// ([`DEFAULT_MAX_BYTES_PER_PRINCIPAL`]), measured when each task is created.
    pub fn max_bytes_per_principal(mut self, max_bytes_per_principal: usize) -> Self {
        self.max_bytes_per_principal = max_bytes_per_principal;
        self
    }

    /// How many tasks the store may hold ([`DEFAULT_MAX_TASKS`]).
    pub fn max_tasks(mut self, max_tasks: usize) -> Self {
        self.max_tasks = max_tasks;
        self
    }

    /// How many bytes the store's task records may hold ([`DEFAULT_MAX_STORE_BYTES`]).
    pub fn max_store_bytes(mut self, max_store_bytes: usize) -> Self {
        self.max_store_bytes = max_store_bytes;
        self
    }

    /// The part of the store that callers nobody verified share between them (half of
    /// it by default): anonymous callers, and every caller unless
    /// [`SagaToolsBuilder::verified_principals`](crate::serve::SagaToolsBuilder::verified_principals)
    /// says the principals are verified. Each still has its own per-principal quota; the
    /// share bounds what made-up identities can take together, so that they never fill
    /// the store for verified callers.
    pub fn unverified_share(mut self, unverified_share: Share) -> Self {
        self.unverified_share = unverified_share;
        self
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// A worker of this process running one task.
struct Running {
    /// The claim it runs under: the record's `worker` while this run holds the task.
    claim: String,
    /// Stops it, on `tasks/cancel`.
    token: CancellationToken,
}

/// The running side of a server's tasks.
///
/// Every claim on a task (its creation, the `tasks/update` that answers its last pending
/// request, a takeover) writes a fresh random claim into the record's `worker`, and a
/// worker writes only while the record still holds its own claim. Two runs of one task,
/// in one process or in two, can therefore never both write: the one whose claim was
/// replaced stops at its next write.
pub(crate) struct Tasks {
    settings: TaskSettings,
    /// Seals a task's state for as long as the task lives (a person may take that long to
    /// answer).
    codec: StateCodec,
    /// The tasks this process is running, by task id.
    running: Mutex<HashMap<String, Running>>,
    /// Bounds how many tasks this process runs at once, how many of them one verified
    /// principal's or one address's unverified callers' tasks take, and how many all
    /// unverified callers' take together.
    workers: Arc<crate::engine::caller::pool::Shares>,
    /// The sessions (2025-11-25) that created tasks here, told of each status change with
    /// `notifications/tasks`. (MCP 2026-07-28 has no stream to send them on yet: its
    /// clients poll `tasks/get`.)
    observers: Mutex<HashMap<String, Peer<RoleServer>>>,
    sweeper: OnceLock<()>,
    /// Set when the server stops (graceful shutdown): no worker starts, no orphan is
    /// taken over, and the running ones are handed back ([`Tasks::hand_back`]).
    stopping: std::sync::atomic::AtomicBool,
    /// The tasks this build could not resume, and until when (unix ms) its sweeper leaves
    /// them to the other replicas (a newer build may be among them).
    deferred: Mutex<HashMap<String, u64>>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

fn unknown_task(id: &str) -> ErrorData {
    tracing::info!(task = %Escaped(id), "an unknown task");
    ErrorData::invalid_params(format!("unknown task: {id}"), None)
}

/// What a caller is told when the task store fails: nothing of the backend's own words.
pub const STORE_FAILED: &str = "the task store cannot answer now; retry later";

fn store_failed(error: TaskStoreError) -> ErrorData {
    let refusal = match error {
        TaskStoreError::PrincipalQuota(max) => Some(format!(
            "too many tasks: at most {max} per client are kept at once; \
             wait for some to end and expire, or cancel them"
        )),
        TaskStoreError::PrincipalBytes(max) => Some(format!(
            "too many task bytes: this client's tasks may hold at most {max} bytes at once; \
             wait for some to end and expire, or cancel them"
        )),
        TaskStoreError::SharedQuota => Some(
            "the task store's share for unverified callers is spent; retry later, or call \
             with credentials the server verifies"
                .to_owned(),
        ),
        TaskStoreError::Full => Some("the task store is full; retry later".to_owned()),
        TaskStoreError::Unavailable(_) => None,
    };
    if let Some(refusal) = refusal {
        tracing::info!(%error, "a task quota is spent");
        return ErrorData::invalid_request(refusal, None);
    }
    // The backend's words (a file's path, "database disk image is malformed", a corrupted
    // record's parse error, "error connecting to server") stay in the server's log: a
    // caller learns only that the store failed, as the single-use store answers.
    tracing::error!(error = %crate::log::Escaped(&error.to_string()), "the task store failed");
    ErrorData::internal_error(STORE_FAILED, None)
}

/// What a task keeps of the creating request's capabilities: what the saga may ask for.
/// Client-defined `experimental` and extension settings are dropped, so that a record
/// costs what the saga needs, not what the client chose to send.
fn kept_capabilities(capabilities: &ClientCapabilities) -> ClientCapabilities {
    let mut kept = capabilities.clone();
    kept.experimental = None;
    kept.extensions = capabilities.supports_tasks().then(|| {
        let mut extensions = rmcp::model::ExtensionCapabilities::new();
        extensions.insert(rmcp::model::TASKS_EXTENSION_ID.into(), Default::default());
        extensions
    });
    kept
}

/// The call a task's worker goes on with: its state is bound to the task's id (a record
/// written before tasks stopped keeping their arguments names them, and its state is
/// bound to them).
fn task_call(tool: &str, id: &str, arguments: Option<rmcp::model::JsonObject>) -> Call {
    let arguments = arguments.unwrap_or_else(|| {
        let mut bound = rmcp::model::JsonObject::new();
        bound.insert("task".into(), id.into());
        bound
    });
    Call {
        method: "tools/call".into(),
        name: tool.to_owned(),
        arguments: Some(arguments),
        ..Call::default()
    }
}

/// The `-32021` a client gets for a task-only tool without the extension.
pub(crate) fn tasks_required() -> ErrorData {
    ErrorData::missing_required_client_capability(
        ClientCapabilities::builder().enable_tasks().build(),
    )
}

impl Tasks {
    /// Tasks whose states are sealed like `server`'s (same keys, token cap, leeway and
    /// format: a server pinned to an older format for a rolling deploy pins its tasks'
    /// states too, so a replica of the older build can take a task over), for as long as
    /// a task lives.
    pub(crate) fn new(settings: TaskSettings, server: &StateCodec) -> Self {
        // A task's state stays in its record (counted by the task store's quota), never
        // handed to a client: it may be as long as the server's largest, kept or not.
        let codec = StateCodec::new(server.keys().duplicate(), settings.ttl)
            .with_max_token_len(server.max_sealed_len())
            .with_max_state_bytes(server.max_state_bytes())
            .with_leeway(server.leeway())
            .with_format(server.format());
        Self {
            workers: crate::engine::caller::pool::Shares::new(
                settings.max_workers,
                settings.max_workers_per_principal,
            ),
            settings,
            codec,
            running: Mutex::new(HashMap::new()),
            observers: Mutex::new(HashMap::new()),
            sweeper: OnceLock::new(),
            stopping: std::sync::atomic::AtomicBool::new(false),
            deferred: Mutex::new(HashMap::new()),
        }
    }

    fn poll_interval_ms(&self) -> u64 {
        millis(self.settings.poll_interval)
    }

    fn lease_until(&self) -> u64 {
        clock::now_ms().saturating_add(millis(self.settings.lease))
    }

    /// Where a task tool's call, run to its first checkpoint by the server (`response`),
    /// becomes a task: a checkpoint's state is sealed for the task, its record written,
    /// its worker started, and the client told the task. A response that ends the call or
    /// asks for input (gathered over MRTR before the task begins) is the call's answer.
    ///
    /// With the `otel` feature the request's span says how it ended: `task`, or the error
    /// it answered instead when the task could not be made.
    pub(crate) async fn begin<H: Host>(
        self: &Arc<Self>,
        tools: &H,
        saga: &Saga,
        call: Call,
        cx: &SagaContext,
        response: CallToolResponse,
    ) -> Result<CallToolResponse, ErrorData> {
        let begun = self.begin_task(tools, saga, call, cx, response).await;
        match &begun {
            Ok(CallToolResponse::Task(_)) => cx.call_ended("task", None),
            Err(error) => cx.call_ended("error", Some(error.code.0)),
            Ok(_) => {}
        }
        begun
    }

    /// [`Tasks::begin`]'s work.
    async fn begin_task<H: Host>(
        self: &Arc<Self>,
        tools: &H,
        saga: &Saga,
        call: Call,
        cx: &SagaContext,
        response: CallToolResponse,
    ) -> Result<CallToolResponse, ErrorData> {
        let CallToolResponse::InputRequired(required) = response else {
            return Ok(response);
        };
        let asks = required
            .input_requests
            .as_ref()
            .is_some_and(|r| !r.is_empty());
        let Some(state) = required.request_state.clone().filter(|_| !asks) else {
            // Input gathered over MRTR before the task begins.
            return Ok(CallToolResponse::InputRequired(required));
        };
        // Sealed for the request's lifetime; the task keeps it for its own, bound to the
        // task. The arguments stay behind: the saga's state holds what it kept of them.
        let id = crate::state::random_id();
        let point = crate::engine::runner::family::point_key(saga, &call.name, &state)?;
        let state = self
            .codec
            .reseal_bound(
                tools.codec(),
                &state,
                &point,
                &call.binding(cx.principal()),
                &task_call(&call.name, &id, None).binding(cx.principal()),
                &cx.state_owner(),
            )
            .await
            .map_err(|error| crate::engine::unopened(&call.name, &error))?;
        let now = clock::now_ms();
        // Kept only where the server seals traced tokens: a build before the record's
        // `trace` refuses a record that holds one, so a fleet pinned for a rolling deploy
        // writes none.
        let trace = cx
            .task_traceparent(&id)
            .filter(|_| self.codec.format() == crate::state::TokenFormat::TracedDeflated);
        let claim = self.settings.store.0.claim();
        let pool = cx.pool(tools.principals_verified());
        let record = TaskRecord {
            id,
            principal: cx.principal().to_owned(),
            counted_as: (!pool.is_verified()).then(|| pool.key()),
            tool: call.name.clone(),
            arguments: None,
            capabilities: kept_capabilities(cx.capabilities()),
            status: TaskStatus::Working,
            state: Some(state),
            pending: None,
            answers: InputResponses::new(),
            model_answers: InputResponses::new(),
            result: None,
            error: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms: millis(self.settings.ttl),
            worker: Some(claim.clone()),
            lease_until_ms: self.lease_until(),
            takeovers: 0,
            unresumable_since_ms: None,
            status_message: None,
            trace,
        };
        let quota = self.settings.quota(pool.is_verified());
        // Under the creating request's span: the insert is its child.
        let insert = cx.in_call_span(|| {
            crate::otel::store_write(
                "insert",
                &record.id,
                self.settings.store.0.insert(&record, &quota),
            )
        });
        insert.await.map_err(store_failed)?;
        tracing::info!(task = %record.id, tool = %Escaped(&record.tool), "task created");
        crate::metrics::task_status("working");
        if cx.is_session()
            && let Some(peer) = cx.peer()
            && let Ok(mut observers) = self.observers.lock()
        {
            observers.insert(record.id.clone(), peer.clone());
        }
        self.spawn_worker(tools, record.id.clone(), record.quota_owner(), claim);
        Ok(CallToolResponse::Task(CreateTaskResult::new(
            record.task(self.poll_interval_ms()),
        )))
    }

    async fn own(&self, id: &str, principal: &str) -> Result<TaskRecord, ErrorData> {
        match self.settings.store.0.get(id).await.map_err(store_failed)? {
            Some(record) if record.principal == principal => Ok(record),
            _ => Err(unknown_task(id)),
        }
    }

    /// `tasks/get`.
    pub(crate) async fn get<H: Host>(
        self: &Arc<Self>,
        tools: &H,
        id: &str,
        principal: &str,
    ) -> Result<GetTaskResult, ErrorData> {
        self.ensure_sweeper(tools);
        let record = self.own(id, principal).await?;
        Ok(GetTaskResult::new(record.detailed(self.poll_interval_ms())))
    }

    /// `tasks/update`: answers to the pending requests. Unknown keys are ignored; the task
    /// goes on once every pending request has its answer.
    pub(crate) async fn update<H: Host>(
        self: &Arc<Self>,
        tools: &H,
        id: &str,
        principal: &str,
        responses: InputResponses,
    ) -> Result<(), ErrorData> {
        self.ensure_sweeper(tools);
        self.own(id, principal).await?;
        let claim = self.settings.store.0.claim();
        let worker = claim.clone();
        let lease_until = self.lease_until();
        let change = move |record: &mut TaskRecord| {
            if record.status != TaskStatus::InputRequired {
                return false;
            }
            let Some(pending) = record.pending.as_mut() else {
                return false;
            };
            let mut changed = false;
            for (key, answer) in &responses {
                if pending.remove(key).is_some() {
                    record.answers.insert(key.clone(), answer.clone());
                    changed = true;
                }
            }
            if pending.is_empty() {
                record.pending = None;
                record.status = TaskStatus::Working;
                record.worker = Some(worker.clone());
                record.lease_until_ms = lease_until;
            }
            if changed {
                record.updated_ms = clock::now_ms();
            }
            changed
        };
        let updated = self
            .settings
            .store
            .0
            .update(id, &change, &self.settings.updates_quota())
            .await
            .map_err(store_failed)?;
        // Only the update that answered the last pending request holds the new claim;
        // any other (a retry, a racing update, one for a task already working) starts
        // nothing.
        if let Some(record) = updated
            && record.status == TaskStatus::Working
            && record.worker.as_deref() == Some(claim.as_str())
            && record.state.is_some()
        {
            crate::metrics::task_status("working");
            self.notify(&record.id).await;
            let owner = record.quota_owner().to_owned();
            self.spawn_worker(tools, record.id, &owner, claim);
        }
        Ok(())
    }

    /// `tasks/cancel`: idempotent; a task that has not ended ends `cancelled`.
    pub(crate) async fn cancel<H: Host>(
        self: &Arc<Self>,
        tools: &H,
        id: &str,
        principal: &str,
    ) -> Result<(), ErrorData> {
        self.ensure_sweeper(tools);
        self.own(id, principal).await?;
        let cancelled = std::sync::atomic::AtomicBool::new(false);
        let change = |record: &mut TaskRecord| {
            if record.is_terminal() {
                return false;
            }
            cancelled.store(true, std::sync::atomic::Ordering::Relaxed);
            record.status = TaskStatus::Cancelled;
            record.pending = None;
            record.worker = None;
            record.updated_ms = clock::now_ms();
            true
        };
        self.settings
            .store
            .0
            .update(id, &change, &self.settings.updates_quota())
            .await
            .map_err(store_failed)?;
        if cancelled.load(std::sync::atomic::Ordering::Relaxed) {
            crate::metrics::task_status("cancelled");
        }
        if let Some(token) = self
            .running
            .lock()
            .ok()
            .and_then(|running| running.get(id).map(|run| run.token.clone()))
        {
            token.cancel();
        }
        tracing::info!(task = %Escaped(id), "task cancelled");
        self.notify(id).await;
        Ok(())
    }

    /// Tells the session that created task `id`, if any, of its status; forgets the
    /// session once the task has ended.
    async fn notify(&self, id: &str) {
        let Some(peer) = self
            .observers
            .lock()
            .ok()
            .and_then(|observers| observers.get(id).cloned())
        else {
            return;
        };
        let Ok(Some(record)) = self.settings.store.0.get(id).await else {
            return;
        };
        if record.is_terminal()
            && let Ok(mut observers) = self.observers.lock()
        {
            observers.remove(id);
        }
        let params = TaskStatusNotificationParams::from(record.detailed(self.poll_interval_ms()));
        let notification = ServerNotification::TaskStatusNotification(Notification::new(params));
        if let Err(error) = peer.send_notification(notification).await {
            tracing::debug!(task = %Escaped(id), %error, "a task status notification could not be sent");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{KeyRing, TokenFormat};

    /// A server pinned to an older token format for a rolling deploy pins its tasks'
    /// states too: a replica of the older build can then take a task over.
    #[test]
    fn tasks_seal_in_the_servers_format() {
        for format in [
            TokenFormat::Fixed,
            TokenFormat::Compact,
            TokenFormat::Deflated,
            TokenFormat::TracedDeflated,
        ] {
            let server = StateCodec::new(KeyRing::ephemeral(), Duration::from_secs(60))
                .with_format(format)
                .with_max_token_len(10_000);
            let tasks = Tasks::new(TaskSettings::new(TaskStore::memory()), &server);
            assert_eq!(tasks.codec.format(), format);
            assert_eq!(tasks.codec.max_token_len(), 10_000);
        }
    }
}
