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
//! over from the last state written: only the work since the last checkpoint runs again,
//! and the client sees one result.

mod clock;
mod record;
#[cfg(feature = "redis")]
mod redis;
mod store;

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

pub use record::TaskRecord;
pub use store::{Change, TaskBackend, TaskStore, TaskStoreError};

use crate::engine::{Call, SagaContext};
use crate::log::Escaped;
use crate::serve::SagaTools;
use crate::state::{KeyRing, StateCodec};

/// Whether a tool may run as a task: `#[saga_tool(task)]` is [`TaskSupport::Optional`],
/// `#[saga_tool(task = "required")]` [`TaskSupport::Required`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Always an ordinary call.
    #[default]
    Forbidden,
    /// A task for a client that declares the extension, an ordinary call otherwise (its
    /// checkpoints then run within the call).
    Optional,
    /// Only as a task: a client without the extension gets `-32021`.
    Required,
}

/// How long a task's record is kept unless [`TaskSettings::ttl`] says otherwise.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(3600);
/// How often clients are told to poll `tasks/get`.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// How long a worker's claim on a task holds without renewal.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);

/// The tasks of a server: a store and how tasks are kept.
#[derive(Debug, Clone)]
pub struct TaskSettings {
    /// Where task records live.
    pub store: TaskStore,
    /// How long a task is kept after its creation ([`DEFAULT_TASK_TTL`]).
    pub ttl: Duration,
    /// The `pollIntervalMs` clients are given ([`DEFAULT_POLL_INTERVAL`]).
    pub poll_interval: Duration,
    /// How long a worker's claim holds without renewal ([`DEFAULT_LEASE`]); a task whose
    /// worker died is taken over this long after its last renewal.
    pub lease: Duration,
}

impl TaskSettings {
    /// The defaults, with `store`.
    pub fn new(store: TaskStore) -> Self {
        Self {
            store,
            ttl: DEFAULT_TASK_TTL,
            poll_interval: DEFAULT_POLL_INTERVAL,
            lease: DEFAULT_LEASE,
        }
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// The running side of a server's tasks.
pub(crate) struct Tasks {
    settings: TaskSettings,
    /// Seals a task's state for as long as the task lives (a person may take that long to
    /// answer).
    codec: StateCodec,
    worker_id: String,
    /// The tasks this process is running, to stop them on `tasks/cancel`.
    running: Mutex<HashMap<String, CancellationToken>>,
    /// The sessions (2025-11-25) that created tasks here, told of each status change with
    /// `notifications/tasks`. (MCP 2026-07-28 has no stream to send them on yet: its
    /// clients poll `tasks/get`.)
    observers: Mutex<HashMap<String, Peer<RoleServer>>>,
    sweeper: OnceLock<()>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("worker_id", &self.worker_id)
            .finish_non_exhaustive()
    }
}

fn random_hex() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    crate::state::hex(&bytes)
}

fn unknown_task(id: &str) -> ErrorData {
    tracing::info!(task = %Escaped(id), "an unknown task");
    ErrorData::invalid_params(format!("unknown task: {id}"), None)
}

fn store_failed(error: TaskStoreError) -> ErrorData {
    tracing::error!(%error, "the task store failed");
    ErrorData::internal_error(error.to_string(), None)
}

/// The `-32021` a client gets for a task-only tool without the extension.
pub(crate) fn tasks_required() -> ErrorData {
    ErrorData::missing_required_client_capability(
        ClientCapabilities::builder().enable_tasks().build(),
    )
}

impl Tasks {
    pub(crate) fn new(settings: TaskSettings, keys: KeyRing) -> Self {
        let codec = StateCodec::new(keys, settings.ttl);
        Self {
            settings,
            codec,
            worker_id: random_hex(),
            running: Mutex::new(HashMap::new()),
            observers: Mutex::new(HashMap::new()),
            sweeper: OnceLock::new(),
        }
    }

    fn poll_interval_ms(&self) -> u64 {
        millis(self.settings.poll_interval)
    }

    fn lease_until(&self) -> u64 {
        clock::now_ms().saturating_add(millis(self.settings.lease))
    }

    /// A `tools/call` of a tool that may run as a task.
    pub(crate) async fn call(
        self: &Arc<Self>,
        tools: &SagaTools,
        support: TaskSupport,
        mut call: Call,
        cx: &SagaContext,
    ) -> Result<CallToolResponse, ErrorData> {
        self.ensure_sweeper(tools);
        let declared = cx.capabilities().supports_tasks();
        if !declared {
            if support == TaskSupport::Required {
                return Err(tasks_required());
            }
            // An ordinary call: its checkpoints run within it.
            loop {
                let response = tools.run(call.clone(), cx).await?;
                match response {
                    CallToolResponse::InputRequired(required)
                        if required
                            .input_requests
                            .as_ref()
                            .is_none_or(|r| r.is_empty())
                            && required.request_state.is_some() =>
                    {
                        call.request_state = required.request_state;
                        call.input_responses = None;
                        tokio::task::yield_now().await;
                    }
                    other => return Ok(other),
                }
            }
        }
        let response = tools.run_until_checkpoint(call.clone(), cx).await?;
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
        let now = clock::now_ms();
        let record = TaskRecord {
            id: random_hex(),
            principal: cx.principal().to_owned(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            capabilities: cx.capabilities().clone(),
            status: TaskStatus::Working,
            state: Some(state),
            pending: None,
            answers: InputResponses::new(),
            result: None,
            error: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms: millis(self.settings.ttl),
            worker: Some(self.worker_id.clone()),
            lease_until_ms: self.lease_until(),
            takeovers: 0,
        };
        self.settings
            .store
            .0
            .insert(&record)
            .await
            .map_err(store_failed)?;
        tracing::info!(task = %record.id, tool = %Escaped(&record.tool), "task created");
        if crate::serve::is_session_era(cx.protocol_version())
            && let Some(peer) = cx.peer()
            && let Ok(mut observers) = self.observers.lock()
        {
            observers.insert(record.id.clone(), peer.clone());
        }
        self.spawn_worker(tools, record.id.clone());
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
    pub(crate) async fn get(
        self: &Arc<Self>,
        tools: &SagaTools,
        id: &str,
        principal: &str,
    ) -> Result<GetTaskResult, ErrorData> {
        self.ensure_sweeper(tools);
        let record = self.own(id, principal).await?;
        Ok(GetTaskResult::new(record.detailed(self.poll_interval_ms())))
    }

    /// `tasks/update`: answers to the pending requests. Unknown keys are ignored; the task
    /// goes on once every pending request has its answer.
    pub(crate) async fn update(
        self: &Arc<Self>,
        tools: &SagaTools,
        id: &str,
        principal: &str,
        responses: InputResponses,
    ) -> Result<(), ErrorData> {
        self.ensure_sweeper(tools);
        self.own(id, principal).await?;
        let worker = self.worker_id.clone();
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
            .update(id, &change)
            .await
            .map_err(store_failed)?;
        if let Some(record) = updated
            && record.status == TaskStatus::Working
            && record.worker.as_deref() == Some(self.worker_id.as_str())
            && record.state.is_some()
        {
            self.notify(&record.id).await;
            self.spawn_worker(tools, record.id);
        }
        Ok(())
    }

    /// `tasks/cancel`: idempotent; a task that has not ended ends `cancelled`.
    pub(crate) async fn cancel(
        self: &Arc<Self>,
        tools: &SagaTools,
        id: &str,
        principal: &str,
    ) -> Result<(), ErrorData> {
        self.ensure_sweeper(tools);
        self.own(id, principal).await?;
        let change = |record: &mut TaskRecord| {
            if record.is_terminal() {
                return false;
            }
            record.status = TaskStatus::Cancelled;
            record.pending = None;
            record.worker = None;
            record.updated_ms = clock::now_ms();
            true
        };
        self.settings
            .store
            .0
            .update(id, &change)
            .await
            .map_err(store_failed)?;
        if let Some(token) = self
            .running
            .lock()
            .ok()
            .and_then(|running| running.get(id).cloned())
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

    fn spawn_worker(self: &Arc<Self>, tools: &SagaTools, id: String) {
        let token = CancellationToken::new();
        if let Ok(mut running) = self.running.lock() {
            running.insert(id.clone(), token.clone());
        }
        let tasks = Arc::clone(self);
        let tools = tools.clone();
        tokio::spawn(async move {
            tasks.work(&tools, &id, token).await;
            if let Ok(mut running) = tasks.running.lock() {
                running.remove(&id);
            }
        });
    }

    /// Writes `change` to the task if this worker still holds it; `false` when it does not
    /// (cancelled, ended, or taken over), and the work must stop.
    async fn write(&self, id: &str, change: impl Fn(&mut TaskRecord) + Send + Sync) -> bool {
        let worker = self.worker_id.as_str();
        let guarded = |record: &mut TaskRecord| {
            if record.status != TaskStatus::Working || record.worker.as_deref() != Some(worker) {
                return false;
            }
            change(record);
            record.updated_ms = clock::now_ms();
            true
        };
        match self.settings.store.0.update(id, &guarded).await {
            Ok(Some(record)) => record.worker.as_deref() == Some(worker) || record.is_terminal(),
            Ok(None) => false,
            Err(error) => {
                tracing::error!(task = %Escaped(id), %error, "a task could not be written");
                false
            }
        }
    }

    /// Drives a task from its last state until it ends, waits for input, or is lost.
    async fn work(&self, tools: &SagaTools, id: &str, token: CancellationToken) {
        loop {
            let record = match self.settings.store.0.get(id).await {
                Ok(Some(record)) => record,
                Ok(None) => return,
                Err(error) => {
                    tracing::error!(task = %Escaped(id), %error, "a task could not be read");
                    return;
                }
            };
            if record.status != TaskStatus::Working
                || record.worker.as_deref() != Some(self.worker_id.as_str())
            {
                return;
            }
            let cx = SagaContext::new(record.principal.clone())
                .with_capabilities(record.capabilities.clone())
                .with_cancellation(token.clone());
            let call = Call {
                method: "tools/call".into(),
                name: record.tool.clone(),
                arguments: record.arguments.clone(),
                request_state: record.state.clone(),
                input_responses: (!record.answers.is_empty()).then(|| record.answers.clone()),
                ..Call::default()
            };
            let outcome = self.transition(tools, id, call, &cx, &token).await;
            let lease_until = self.lease_until();
            let keep_going = match outcome {
                None => {
                    // Cancelled while it ran: `tasks/cancel` wrote the status.
                    return;
                }
                Some(Err(error)) => {
                    let code = error.code.0;
                    let message = error.message.to_string();
                    self.write(id, move |record| {
                        record.status = TaskStatus::Failed;
                        record.error = Some(TaskRecord::error_object(code, &message));
                        record.worker = None;
                    })
                    .await;
                    false
                }
                Some(Ok(CallToolResponse::Complete(result))) => {
                    let result = serde_json::to_value(&result)
                        .ok()
                        .and_then(|value| value.as_object().cloned())
                        .unwrap_or_default();
                    self.write(id, move |record| {
                        record.status = TaskStatus::Completed;
                        record.result = Some(result.clone());
                        record.worker = None;
                        record.state = None;
                    })
                    .await;
                    false
                }
                Some(Ok(CallToolResponse::InputRequired(required))) => {
                    let requests = required.input_requests.unwrap_or_default();
                    let state = required.request_state;
                    if requests.is_empty() {
                        // A checkpoint: the state is written, the work goes on.
                        self.write(id, move |record| {
                            record.state = state.clone();
                            record.answers.clear();
                            record.lease_until_ms = lease_until;
                        })
                        .await
                    } else {
                        self.write(id, move |record| {
                            record.status = TaskStatus::InputRequired;
                            record.state = state.clone();
                            record.pending = Some(requests.clone());
                            record.answers.clear();
                            record.worker = None;
                        })
                        .await;
                        false
                    }
                }
                Some(Ok(_)) => {
                    self.write(id, |record| {
                        record.status = TaskStatus::Failed;
                        record.error = Some(TaskRecord::error_object(
                            -32603,
                            "a task step answered with a task",
                        ));
                        record.worker = None;
                    })
                    .await;
                    false
                }
            };
            if !keep_going {
                self.notify(id).await;
                return;
            }
            tokio::task::yield_now().await;
        }
    }

    /// One transition, renewing the lease while it runs; `None` if the task was cancelled.
    async fn transition(
        &self,
        tools: &SagaTools,
        id: &str,
        call: Call,
        cx: &SagaContext,
        token: &CancellationToken,
    ) -> Option<Result<CallToolResponse, ErrorData>> {
        let Ok(saga) = tools.saga(&call.name).cloned() else {
            return Some(Err(ErrorData::internal_error(
                format!("the task's tool {} is not served here", call.name),
                None,
            )));
        };
        let run = saga.run(&self.codec, call, cx);
        tokio::pin!(run);
        // A zero period would panic: a lease of zero renews as often as a tenth of a second.
        let mut renew =
            tokio::time::interval((self.settings.lease / 3).max(Duration::from_millis(100)));
        renew.tick().await;
        loop {
            tokio::select! {
                outcome = &mut run => return Some(outcome),
                () = token.cancelled() => return None,
                _ = renew.tick() => {
                    let lease_until = self.lease_until();
                    if !self.write(id, move |record| record.lease_until_ms = lease_until).await {
                        // Cancelled, or taken over: stop.
                        return None;
                    }
                }
            }
        }
    }

    /// Starts, once, the loop that takes over tasks whose worker's lease ran out.
    fn ensure_sweeper(self: &Arc<Self>, tools: &SagaTools) {
        if self.sweeper.set(()).is_err() {
            return;
        }
        let tasks = Arc::downgrade(self);
        let tools = tools.clone();
        let period = (self.settings.lease / 2).max(Duration::from_millis(50));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(period).await;
                let Some(tasks) = tasks.upgrade() else {
                    return;
                };
                tasks.take_over_orphans(&tools).await;
            }
        });
    }

    async fn take_over_orphans(self: &Arc<Self>, tools: &SagaTools) {
        let now = clock::now_ms();
        let orphans = match self.settings.store.0.orphans(now).await {
            Ok(orphans) => orphans,
            Err(error) => {
                tracing::warn!(%error, "orphaned tasks could not be listed");
                return;
            }
        };
        for id in orphans {
            let worker = self.worker_id.clone();
            let lease_until = self.lease_until();
            let claim = move |record: &mut TaskRecord| {
                if record.status != TaskStatus::Working || record.lease_until_ms >= now {
                    return false;
                }
                record.worker = Some(worker.clone());
                record.lease_until_ms = lease_until;
                record.takeovers += 1;
                true
            };
            match self.settings.store.0.update(&id, &claim).await {
                Ok(Some(record)) if record.worker.as_deref() == Some(self.worker_id.as_str()) => {
                    tracing::info!(task = %id, takeovers = record.takeovers, "task taken over");
                    self.spawn_worker(tools, id);
                }
                Ok(_) => {}
                Err(error) => tracing::warn!(task = %id, %error, "a task could not be claimed"),
            }
        }
    }
}
