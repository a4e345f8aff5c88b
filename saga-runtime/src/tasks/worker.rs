//! The workers: each runs one task under a lease it renews, writes the task's sealed state
//! at every suspension and checkpoint, and a sweeper takes over the tasks whose worker died.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, TaskStatus};
use tokio_util::sync::CancellationToken;

use rmcp::model::InputRequiredResult;

use super::*;
use crate::engine::runner::drive::{Inputs, Next, Pass, Policy, TransitionFuture, drive};
use crate::engine::runner::per_call::OnRetry;
use crate::engine::{Call, SagaContext};
use crate::log::Escaped;
use crate::otel::{StepEnd, TaskStep};

/// How often a task's progress is written to its record at most.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// The progress a task's step reported and the worker has not written yet.
#[derive(Debug, Default)]
struct Progress {
    latest: std::sync::Mutex<Option<String>>,
    reported: tokio::sync::Notify,
}

impl Progress {
    fn take(&self) -> Option<String> {
        self.latest.lock().ok()?.take()
    }
}

impl crate::engine::ProgressSink for Progress {
    fn report(&self, text: String) {
        if let Ok(mut latest) = self.latest.lock() {
            *latest = Some(text);
        }
        self.reported.notify_one();
    }
}

impl Tasks {
    /// Runs task `id` under `claim`. A run of this process under an older claim is
    /// stopped (its claim is no longer the record's, so it could not write anyway); a
    /// second run under the same claim is not started.
    pub(super) fn spawn_worker<H: Host>(
        self: &Arc<Self>,
        tools: &H,
        id: String,
        owner: &str,
        claim: String,
    ) {
        if self.stopping.load(Ordering::Relaxed) {
            // The server stops: the task is left to the replica that takes it over.
            return;
        }
        let token = CancellationToken::new();
        {
            let Ok(mut running) = self.running.lock() else {
                return;
            };
            if let Some(previous) = running.get(&id) {
                if previous.claim == claim {
                    return;
                }
                previous.token.cancel();
            }
            running.insert(
                id.clone(),
                Running {
                    claim: claim.clone(),
                    token: token.clone(),
                },
            );
        }
        let tasks = Arc::clone(self);
        let tools = tools.clone();
        let pool = crate::engine::caller::pool::Pool::from_key(owner);
        tokio::spawn(async move {
            // Waiting for a worker is waiting in the store: the lease runs out meanwhile,
            // and another replica with a free worker may take the task over. A task
            // first waits for one of its pool's share of the workers, so that one
            // caller's tasks, or one address's made-up callers', never hold them all.
            if let Some(_worker) = tasks.workers.take(&pool).await {
                tasks.work(&tools, &id, &claim, token).await;
            }
            if let Ok(mut running) = tasks.running.lock()
                && running.get(&id).is_some_and(|run| run.claim == claim)
            {
                running.remove(&id);
            }
        });
    }

    /// Writes the progress a task's step reports as its `statusMessage`, the latest at
    /// most every [`PROGRESS_EVERY`], for as long as the step runs (it never returns).
    async fn write_progress(
        &self,
        id: &str,
        claim: &str,
        progress: &Progress,
    ) -> std::convert::Infallible {
        loop {
            progress.reported.notified().await;
            if let Some(text) = progress.take() {
                self.write(id, claim, move |record| {
                    record.status_message = Some(text.clone())
                })
                .await;
            }
            tokio::time::sleep(PROGRESS_EVERY).await;
        }
    }

    /// Writes `change` to the task if the record still holds `claim` and is working;
    /// `false` when it did not (cancelled, ended, or taken over), and the work must stop.
    pub(super) async fn write(
        &self,
        id: &str,
        claim: &str,
        change: impl Fn(&mut TaskRecord) + Send + Sync,
    ) -> bool {
        let applied = AtomicBool::new(false);
        let guarded = |record: &mut TaskRecord| {
            // A store may apply a change more than once (a compare-and-set retried): only
            // the last application counts.
            let holds =
                record.status == TaskStatus::Working && record.worker.as_deref() == Some(claim);
            applied.store(holds, Ordering::Relaxed);
            if holds {
                change(record);
                record.updated_ms = clock::now_ms();
            }
            holds
        };
        let quota = self.settings.updates_quota();
        match crate::otel::store_write(
            "update",
            id,
            self.settings.store.0.update(id, &guarded, &quota),
        )
        .await
        {
            Ok(Some(_)) => applied.load(Ordering::Relaxed),
            Ok(None) => false,
            Err(
                error @ (TaskStoreError::PrincipalBytes(_)
                | TaskStoreError::SharedQuota
                | TaskStoreError::Full),
            ) => {
                // The step's state or result would take the task past its bytes: the
                // task fails, and gives back what it held.
                tracing::warn!(task = %Escaped(id), %error, "a task outgrew its byte quota; it fails");
                let fail = |record: &mut TaskRecord| {
                    if record.status != TaskStatus::Working
                        || record.worker.as_deref() != Some(claim)
                    {
                        return false;
                    }
                    record.status = TaskStatus::Failed;
                    record.error = Some(TaskRecord::error_object(
                        -32603,
                        "the task's state or result outgrew the bytes its client's tasks may hold",
                    ));
                    record.state = None;
                    record.result = None;
                    record.pending = None;
                    record.answers.clear();
                    record.model_answers.clear();
                    record.worker = None;
                    record.updated_ms = clock::now_ms();
                    true
                };
                if let Err(error) = self.settings.store.0.update(id, &fail, &quota).await {
                    tracing::error!(task = %Escaped(id), %error, "a task could not be written");
                } else {
                    crate::metrics::task_status("failed");
                }
                false
            }
            Err(error) => {
                tracing::error!(task = %Escaped(id), %error, "a task could not be written");
                false
            }
        }
    }

    /// Drives a task from its last state until it ends, waits for input, or is lost.
    pub(super) async fn work<H: Host>(
        &self,
        tools: &H,
        id: &str,
        claim: &str,
        token: CancellationToken,
    ) {
        // The claim's lease began when it was made, perhaps a while ago if this run waited
        // for a worker: renew it before any work, so that no other replica takes the task
        // over in the middle of the first step.
        let lease_until = self.lease_until();
        if !self
            .write(id, claim, move |record| record.lease_until_ms = lease_until)
            .await
        {
            return;
        }
        let record = match self.settings.store.0.get(id).await {
            Ok(Some(record)) => record,
            Ok(None) => return,
            Err(error) => {
                tracing::error!(task = %Escaped(id), %error, "a task could not be read");
                return;
            }
        };
        if record.status != TaskStatus::Working || record.worker.as_deref() != Some(claim) {
            return;
        }
        if let Some(reason) = unresumable(tools, &record) {
            self.defer_unresumable(id, claim, &record, &reason).await;
            return;
        }
        if record.unresumable_since_ms.is_some() {
            self.write(id, claim, |record| record.unresumable_since_ms = None)
                .await;
        }
        let progress = Arc::new(Progress::default());
        let cx = SagaContext::new(record.principal.clone())
            .with_capabilities(record.capabilities.clone())
            .with_cancellation(token.clone())
            .with_progress_sink(progress.clone())
            .with_pool(crate::engine::caller::pool::Pool::from_key(
                record.quota_owner(),
            ))
            .with_model(tools.model());
        // Its steps are children of the request that created it, on any replica.
        #[cfg(feature = "otel")]
        let cx = cx.with_trace(crate::otel::RequestTrace::of_task(
            &record.id,
            record.trace.as_deref(),
        ));
        let mut call = task_call(&record.tool, &record.id, record.arguments.clone());
        call.request_state = record.state.clone();
        call.input_responses = (!record.answers.is_empty()).then(|| record.answers.clone());
        call.model = crate::engine::ModelAnswers {
            answers: record.model_answers.clone(),
            failures: std::collections::BTreeMap::new(),
        };
        let mut step = WorkerStep {
            tasks: self,
            id,
            claim,
            token: &token,
            progress: &progress,
            stopped: AtomicBool::new(false),
            stepped: AtomicBool::new(false),
            spans: TaskStep::of(&record.id, &record.tool, record.trace.as_deref()),
        };
        let outcome = match tools.saga(&record.tool) {
            Ok(saga) => drive(saga, &mut call, &cx, &mut step, OnRetry::AnswerAgain).await,
            Err(_) => Err(ErrorData::internal_error(
                format!("the task's tool {} is not served here", record.tool),
                None,
            )),
        };
        if step.stopped.load(Ordering::Relaxed) {
            // Cancelled while it ran (`tasks/cancel` wrote the status), or taken over.
            step.spans.end(StepEnd::Stopped, None);
            return;
        }
        if let Err(error) = outcome {
            let code = error.code.0;
            let message = error.message.to_string();
            let written = step
                .spans
                .run(self.write(id, claim, move |record| {
                    record.status = TaskStatus::Failed;
                    record.error = Some(TaskRecord::error_object(code, &message));
                    record.worker = None;
                }))
                .await;
            match written {
                true => step.spans.end(StepEnd::Failed, Some(code)),
                false => step.spans.end(StepEnd::Stopped, None),
            }
            crate::metrics::task_status("failed");
        }
        self.notify(id).await;
    }

    /// Stops this process's workers and hands their tasks back to the store (no worker,
    /// the lease run out), so that another replica's next sweep takes them over rather
    /// than waiting for the lease: what a server that stops gracefully does last. A step
    /// cut short runs again there from the task's last checkpoint (an `effect` in it with
    /// the key it had). From now on this process starts no worker and takes nothing over.
    pub(crate) async fn hand_back(&self) {
        self.stopping.store(true, Ordering::Relaxed);
        let running: Vec<(String, String)> = match self.running.lock() {
            Ok(mut running) => running
                .drain()
                .map(|(id, run)| {
                    run.token.cancel();
                    (id, run.claim)
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        for (id, claim) in running {
            let handed = self
                .write(&id, &claim, |record| {
                    record.worker = None;
                    record.lease_until_ms = 0;
                })
                .await;
            if handed {
                tracing::info!(task = %Escaped(&id), "a running task is handed back to the store: another replica takes it over");
            }
        }
    }

    /// A task this build cannot resume (its state stopped at a suspension point no build
    /// here has): given back for another replica to claim, as during a rolling upgrade,
    /// and failed with the reason once none has resumed it for three leases.
    pub(super) async fn defer_unresumable(
        &self,
        id: &str,
        claim: &str,
        record: &TaskRecord,
        reason: &str,
    ) {
        let now = clock::now_ms();
        let since = record.unresumable_since_ms.unwrap_or(now);
        let grace = millis(self.settings.lease).saturating_mul(3);
        if now.saturating_sub(since) >= grace {
            tracing::warn!(task = %Escaped(id), tool = %Escaped(&record.tool), reason, "a task no build can continue failed");
            let message = format!(
                "no build of tool {} serving this task can continue it: {reason}",
                record.tool
            );
            self.write(id, claim, move |record| {
                record.status = TaskStatus::Failed;
                record.error = Some(TaskRecord::error_object(-32602, &message));
                record.worker = None;
            })
            .await;
            crate::metrics::task_status("failed");
            self.notify(id).await;
        } else {
            tracing::info!(task = %Escaped(id), tool = %Escaped(&record.tool), reason, "a task this build cannot resume is left for another replica");
            if let Ok(mut deferred) = self.deferred.lock() {
                // Bounded: an entry lives for the grace, and each is a task of the store.
                deferred.retain(|_, until| *until > now);
                deferred.insert(id.to_owned(), since.saturating_add(grace));
            }
            self.write(id, claim, move |record| {
                record.unresumable_since_ms = Some(since);
                record.worker = None;
                record.lease_until_ms = 0;
            })
            .await;
        }
    }

    /// One transition, renewing the lease while it runs; `None` if the task was cancelled.
    async fn lease_while(
        &self,
        id: &str,
        claim: &str,
        run: TransitionFuture<'_>,
        token: &CancellationToken,
    ) -> Option<Result<CallToolResponse, ErrorData>> {
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
                    if !self.write(id, claim, move |record| record.lease_until_ms = lease_until).await {
                        // Cancelled (perhaps on another replica), ended, or taken over:
                        // this run may not finish the step.
                        return None;
                    }
                }
            }
        }
    }

    /// Starts, once, the loop that takes over tasks whose worker's lease ran out. Called
    /// when the server starts serving, and again (a no-op) by every task request, so that
    /// a server mounted some other way starts it too. Outside a Tokio runtime it waits for
    /// the next call.
    pub(crate) fn ensure_sweeper<H: Host>(self: &Arc<Self>, tools: &H) {
        if tokio::runtime::Handle::try_current().is_err() || self.sweeper.set(()).is_err() {
            return;
        }
        let tasks = Arc::downgrade(self);
        let tools = tools.clone();
        let period = (self.settings.lease / 2).max(Duration::from_millis(50));
        tokio::spawn(async move {
            // The first sweep at once: a server restarted after a crash takes over its
            // tasks whose worker is known gone without waiting a period.
            loop {
                let Some(tasks) = tasks.upgrade() else {
                    return;
                };
                tasks.take_over_orphans(&tools).await;
                tasks.forget_observers().await;
                if let Ok(Some(depth)) = tasks.settings.store.0.depth(clock::now_ms()).await {
                    crate::metrics::task_store_depth(depth);
                }
                drop(tasks);
                tokio::time::sleep(period).await;
            }
        });
    }

    pub(super) async fn take_over_orphans<H: Host>(self: &Arc<Self>, tools: &H) {
        if self.stopping.load(Ordering::Relaxed) {
            return;
        }
        let now = clock::now_ms();
        let orphans = match self.settings.store.0.orphans(now).await {
            Ok(orphans) => orphans,
            Err(error) => {
                tracing::warn!(%error, "orphaned tasks could not be listed");
                return;
            }
        };
        for id in orphans {
            // A task this build could not resume waits for the other replicas until its
            // grace ends; then this replica takes it again, to fail it with the reason.
            if self
                .deferred
                .lock()
                .is_ok_and(|deferred| deferred.get(&id).is_some_and(|until| *until > now))
            {
                continue;
            }
            // A run of this very process is alive, only slow (its renewal could not tick):
            // taking it over here would run its step twice.
            if self
                .running
                .lock()
                .map_or(true, |running| running.contains_key(&id))
            {
                continue;
            }
            let claim = self.settings.store.0.claim();
            let worker = claim.clone();
            let lease_until = self.lease_until();
            let store = self.settings.store.0.clone();
            // What the record said of the worker it is taken from: its step's span.
            #[cfg(feature = "otel")]
            let lost = std::sync::Mutex::new(None);
            let take = |record: &mut TaskRecord| {
                // Its lease ended, or its worker's process did (the store can tell).
                let expired = record.lease_until_ms < now;
                let gone = || {
                    record
                        .worker
                        .as_deref()
                        .is_some_and(|worker| store.is_gone(worker))
                };
                let free = expired || gone();
                if record.status != TaskStatus::Working || !free {
                    return false;
                }
                #[cfg(feature = "otel")]
                if let Ok(mut lost) = lost.lock() {
                    // A record without a worker was handed back (a graceful stop): no step
                    // of it was cut short.
                    *lost = record.worker.is_some().then(|| {
                        // The process gone says more than its lease run out: asked
                        // again only here, for a task being taken over.
                        let reason = if gone() {
                            crate::otel::Takeover::WorkerGone
                        } else {
                            crate::otel::Takeover::LeaseExpired
                        };
                        (record.updated_ms, reason)
                    });
                }
                record.worker = Some(worker.clone());
                record.lease_until_ms = lease_until;
                record.takeovers += 1;
                true
            };
            match self
                .settings
                .store
                .0
                .update(&id, &take, &self.settings.updates_quota())
                .await
            {
                Ok(Some(record)) if record.worker.as_deref() == Some(claim.as_str()) => {
                    tracing::info!(task = %id, takeovers = record.takeovers, "task taken over");
                    crate::metrics::lease_takeover();
                    #[cfg(feature = "otel")]
                    if let Some((last_write_ms, reason)) = lost.lock().ok().and_then(|lost| *lost) {
                        crate::otel::cut_short(crate::otel::LostStep {
                            task: &record.id,
                            tool: &record.tool,
                            trace: record.trace.as_deref(),
                            last_write_ms,
                            takeovers: record.takeovers,
                            reason,
                        });
                    }
                    self.spawn_worker(tools, id, record.quota_owner(), claim);
                }
                Ok(_) => {}
                Err(error) => tracing::warn!(task = %id, %error, "a task could not be claimed"),
            }
        }
    }

    /// Drops the sessions watching tasks that ended elsewhere, expired, or whose session
    /// is gone: a task need not end in this process for its observer to be forgotten.
    pub(super) async fn forget_observers(&self) {
        let watched: Vec<(String, bool)> = match self.observers.lock() {
            Ok(observers) => observers
                .iter()
                .map(|(id, peer)| (id.clone(), peer.is_transport_closed()))
                .collect(),
            Err(_) => return,
        };
        for (id, closed) in watched {
            let forget = closed
                || match self.settings.store.0.get(&id).await {
                    // Ended on another replica: the session still hears how (and `notify`
                    // forgets it).
                    Ok(Some(record)) if record.is_terminal() => {
                        self.notify(&id).await;
                        false
                    }
                    Ok(record) => record.is_none(),
                    Err(_) => false,
                };
            if forget && let Ok(mut observers) = self.observers.lock() {
                observers.remove(&id);
            }
        }
    }
}

/// Why this build cannot resume `record`'s saved state, if it cannot.
fn unresumable<H: Host>(tools: &H, record: &TaskRecord) -> Option<String> {
    let Ok(saga) = tools.saga(&record.tool) else {
        return Some(format!("the tool {} is not served here", record.tool));
    };
    let state = record.state.as_deref()?;
    match crate::state::TokenHeader::peek_point(state) {
        Err(error) => Some(error.to_string()),
        Ok(header) => saga
            .point_key(&header)
            .is_none()
            .then(|| saga.points().refusal(&header).to_string()),
    }
}

/// [`Policy`] of a task's worker: each round's state written to the task's record before
/// the work goes on, the samples the server's model takes answered in the worker, the rest
/// left in the record for the client.
struct WorkerStep<'a> {
    tasks: &'a Tasks,
    id: &'a str,
    claim: &'a str,
    token: &'a CancellationToken,
    progress: &'a Progress,
    /// Set when the run was cancelled or lost its claim: nothing more is written.
    stopped: AtomicBool,
    /// Set once the first step has run.
    stepped: AtomicBool,
    /// Each step's span (feature `otel`).
    spans: TaskStep,
}

impl WorkerStep<'_> {
    /// The record could not be written (cancelled, ended, taken over): the work stops, and
    /// the record says what it is.
    fn lost(required: InputRequiredResult) -> Result<Next, ErrorData> {
        Ok(Next::Respond(CallToolResponse::InputRequired(required)))
    }

    /// Writes `change` to the task, ending this worker's step with `status` (its span's
    /// outcome `step`).
    async fn end(
        &self,
        status: TaskStatus,
        step: StepEnd,
        change: impl Fn(&mut TaskRecord) + Send + Sync,
    ) {
        let label = match status {
            TaskStatus::Completed => "completed",
            TaskStatus::InputRequired => "input_required",
            _ => "failed",
        };
        let written = self
            .spans
            .run(self.tasks.write(self.id, self.claim, move |record| {
                change(record);
                record.status = status;
                record.worker = None;
            }))
            .await;
        // A write refused (cancelled, taken over): the step did not end as it says.
        let step = if written { step } else { StepEnd::Stopped };
        let code = (step == StepEnd::Failed).then_some(-32603);
        self.spans.end(step, code);
        crate::metrics::task_status(label);
    }

    /// Writes `change` to the task in the step's span; `false` when the run lost the task
    /// (see [`Tasks::write`]), and its step then ends as stopped.
    async fn write(&self, change: impl Fn(&mut TaskRecord) + Send + Sync) -> bool {
        let written = self
            .spans
            .run(self.tasks.write(self.id, self.claim, change))
            .await;
        if !written {
            self.spans.end(StepEnd::Stopped, None);
        }
        written
    }
}

impl Policy for WorkerStep<'_> {
    fn codec(&self) -> &StateCodec {
        &self.tasks.codec
    }

    fn keeps_every_token(&self) -> bool {
        // Each step's state is written to the task's record before the next one runs,
        // and a takeover starts from the record's token.
        true
    }

    fn round<R>(&self, make: impl FnOnce() -> R) -> R {
        self.spans.begin(make)
    }

    async fn transition<'b>(
        &'b self,
        run: TransitionFuture<'b>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (tasks, id, claim) = (self.tasks, self.id, self.claim);
        // Between two steps the task may have been cancelled (`tasks/cancel` writes the
        // status, then cancels the token here; on another replica, only the status) or
        // taken over: as the record says, read again before every step but the first
        // (`work` read it), the next step does not start.
        let holds = !self.stepped.swap(true, Ordering::Relaxed)
            || matches!(
                tasks.settings.store.0.get(id).await,
                Ok(Some(record))
                    if record.status == TaskStatus::Working
                        && record.worker.as_deref() == Some(claim)
            );
        if !holds || self.token.is_cancelled() {
            self.stopped.store(true, Ordering::Relaxed);
            self.spans.end(StepEnd::Stopped, None);
            return Err(ErrorData::internal_error(
                "the task's step was stopped",
                None,
            ));
        }
        // The step, and beside it the writes of the progress it reports.
        let outcome = self
            .spans
            .run(async {
                tokio::select! {
                    outcome = tasks.lease_while(id, claim, run, self.token) => outcome,
                    never = tasks.write_progress(id, claim, self.progress) => match never {},
                }
            })
            .await;
        if let Some(text) = self.progress.take() {
            // Reported at the end of the step: written before what follows.
            self.write(move |record| record.status_message = Some(text.clone()))
                .await;
        }
        outcome.unwrap_or_else(|| {
            self.stopped.store(true, Ordering::Relaxed);
            self.spans.end(StepEnd::Stopped, None);
            Err(ErrorData::internal_error(
                "the task's step was stopped",
                None,
            ))
        })
    }

    async fn ended(
        &mut self,
        _: &Call,
        response: CallToolResponse,
    ) -> Result<CallToolResponse, ErrorData> {
        match &response {
            CallToolResponse::Complete(result) => {
                let step = if result.is_error == Some(true) {
                    StepEnd::ToolError
                } else {
                    StepEnd::Complete
                };
                let result = serde_json::to_value(result)
                    .ok()
                    .and_then(|value| value.as_object().cloned())
                    .unwrap_or_default();
                self.end(TaskStatus::Completed, step, move |record| {
                    record.result = Some(result.clone());
                    record.state = None;
                })
                .await;
            }
            _ => {
                self.end(TaskStatus::Failed, StepEnd::Failed, |record| {
                    record.error = Some(TaskRecord::error_object(
                        -32603,
                        "a task step answered with a task",
                    ));
                })
                .await;
            }
        }
        Ok(response)
    }

    async fn checkpoint(
        &mut self,
        _: &Call,
        required: InputRequiredResult,
        _: &SagaContext,
    ) -> Result<Next, ErrorData> {
        // The state is written, the work goes on.
        let lease_until = self.tasks.lease_until();
        let state = required.request_state.clone();
        if !self
            .write(move |record| {
                record.state = state.clone();
                record.answers.clear();
                record.model_answers.clear();
                record.lease_until_ms = lease_until;
            })
            .await
        {
            return Self::lost(required);
        }
        self.spans.end(StepEnd::Checkpoint, None);
        Ok(Next::GoOn {
            from: required,
            // Bounded by the task's lease and quota.
            inputs: Inputs::checkpoint(Pass::Free),
        })
    }

    async fn asks(
        &mut self,
        _: &Call,
        mut required: InputRequiredResult,
        cx: &SagaContext,
    ) -> Result<Next, ErrorData> {
        let lease_until = self.tasks.lease_until();
        let mut requests = required.input_requests.take().unwrap_or_default();
        let state = required.request_state.clone();
        // The samples the server's model takes are answered now: with nothing left for
        // the client, the task goes on; otherwise their answers wait beside the client's
        // (`crate::model`).
        // In the step's span: the model's calls are its children.
        let served = self
            .spans
            .run(crate::engine::runner::sampling::serve_round(
                &mut requests,
                cx,
                None,
            ))
            .await;
        if !served.model.is_empty() && requests.is_empty() {
            let answers = served.model.answers.clone();
            if !self
                .write(move |record| {
                    record.state = state.clone();
                    record.answers.clear();
                    record.model_answers = answers.clone();
                    record.lease_until_ms = lease_until;
                })
                .await
            {
                return Self::lost(required);
            }
            // The server's model answered: the task goes on, as from a checkpoint.
            self.spans.end(StepEnd::Checkpoint, None);
            // The model's failures are given with its answers to the next round (a record
            // keeps answers, not failures).
            let inputs = Inputs {
                answers: None,
                failures: std::collections::BTreeMap::new(),
                model: served.model,
                pass: Pass::Free,
            };
            return Ok(Next::GoOn {
                from: required,
                inputs,
            });
        }
        if let Some((key, reason)) = served.model.failures.into_iter().next() {
            // A round that also waits for the client cannot keep a failure until it
            // answers: the task fails with the model's reason.
            return Err(ErrorData::internal_error(
                format!("{key}: the server's model could not answer: {reason}"),
                None,
            ));
        }
        let answers = served.model.answers;
        required.input_requests = Some(requests.clone());
        self.end(
            TaskStatus::InputRequired,
            StepEnd::InputRequired,
            move |record| {
                record.state = state.clone();
                record.pending = Some(requests.clone());
                record.answers.clear();
                record.model_answers = answers.clone();
            },
        )
        .await;
        Ok(Next::Respond(CallToolResponse::InputRequired(required)))
    }
}
