//! `saga call --task`: following the task a call becomes (MCP tasks extension,
//! `io.modelcontextprotocol/tasks`).
//!
//! The `tools/call` answers with a `CreateTaskResult`; `saga` then polls `tasks/get` at
//! the server's `pollIntervalMs`, shows each change of status (and status message),
//! answers an `input_required` task's requests with `tasks/update` (the same prompts, or
//! `--answers`, as an ordinary call), and prints the result of a `completed` task as an
//! ordinary call prints its result. Ctrl-C sends `tasks/cancel`. rmcp's client puts the
//! task id in each `tasks/*` request's `Mcp-Name` header.
//!
//! A task outlives its connection: when the server cannot be reached (it restarts, as a
//! durable task's server may), `saga` keeps polling for up to [`UNREACHABLE_FOR`], saying
//! so, and goes on once the server answers. It never cancels a task on an error: only on
//! Ctrl-C during `call --task`, which created it. `saga task get|watch|cancel URL ID`
//! re-attaches to a task by its id ([`attach`]).

use crate::terminal::one_line;
use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::{
    CallToolResult, CancelTaskParams, CreateTaskResult, GetTaskParams, InputResponses, TaskPayload,
    TaskStatus, UpdateTaskParams,
};
use serde_json::Value;

use crate::call::print::print_result;
use crate::call::respond::{Outcome, Responder, asked_again};
use crate::call::session::{Client, MAX_ROUNDS, request_error};
use crate::prompt::Interrupted;
use crate::terminal::clean;

/// The poll interval when the server gives none.
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// The bounds on a server's poll interval: no busier than this…
const MIN_POLL: Duration = Duration::from_millis(10);
/// …and no sleepier than this.
const MAX_POLL: Duration = Duration::from_secs(60);
/// How long `tasks/cancel` may take before `saga` gives up on it.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(5);
/// How long `saga` keeps polling a server it cannot reach (a restart) before it stops,
/// leaving the task to run.
const UNREACHABLE_FOR: Duration = Duration::from_secs(120);
/// The wait between two tries of a server it cannot reach.
const UNREACHABLE_RETRY: Duration = Duration::from_secs(1);

/// What `saga task` does with a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Action {
    /// Shows the task's status, and its result once it has one.
    Get,
    /// Follows the task to its end, answering what it asks (Ctrl-C stops watching and
    /// leaves the task running).
    Watch,
    /// Sends tasks/cancel.
    Cancel,
}

/// The id of the task a call became, once it is one: what Ctrl-C cancels.
#[derive(Debug, Default)]
pub struct Slot(Mutex<Option<String>>);

impl Slot {
    fn set(&self, id: &str) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(id.to_owned());
        }
    }

    fn get(&self) -> Option<String> {
        self.0.lock().ok().and_then(|slot| slot.clone())
    }
}

/// The wait before the next `tasks/get`: the server's `pollIntervalMs` within
/// [`MIN_POLL`]..=[`MAX_POLL`], or [`DEFAULT_POLL`].
fn poll_interval(ms: Option<u64>) -> Duration {
    ms.map_or(DEFAULT_POLL, |ms| {
        Duration::from_millis(ms).clamp(MIN_POLL, MAX_POLL)
    })
}

/// A status as the extension spells it.
fn status_name(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Working => "working",
        TaskStatus::InputRequired => "input_required",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
        _ => "unknown",
    }
}

/// One line for a task's status and its message, if any.
fn status_line(id: &str, status: TaskStatus, message: Option<&str>) -> String {
    let id = one_line(id);
    match message {
        Some(message) => format!(
            "← task {id}: {} — {}",
            status_name(status),
            one_line(message)
        ),
        None => format!("← task {id}: {}", status_name(status)),
    }
}

/// `{code, message}` of a failed task, as one line.
fn task_error(error: &serde_json::Map<String, Value>) -> String {
    let code = error.get("code").map_or("?".to_owned(), Value::to_string);
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    format!("server error {code}: {message}")
}

/// Follows the task `created` to its end.
pub(crate) async fn follow(
    client: &Client,
    responder: &Responder,
    created: CreateTaskResult,
    slot: &Slot,
) -> anyhow::Result<Outcome> {
    slot.set(&created.task.task_id);
    follow_task(client, responder, created.task, "created").await
}

/// Whether a request failed on its way (the server unreachable, the connection reset),
/// not with the server's answer.
fn unreachable(error: &rmcp::ServiceError) -> bool {
    !matches!(error, rmcp::ServiceError::McpError(_)) && error.auth_challenge().is_none()
}

/// A task's `tasks/get`, tried again while the server cannot be reached, for up to
/// [`UNREACHABLE_FOR`]; said once when it starts and once when the server answers again.
async fn get_task(
    client: &Client,
    responder: &Responder,
    id: &str,
) -> anyhow::Result<rmcp::model::GetTaskResult> {
    let mut since: Option<std::time::Instant> = None;
    loop {
        let got = responder
            .until_stopped(crate::deadline::answer(
                "tasks/get",
                client.get_task(GetTaskParams::new(id.to_owned())),
            ))
            .await??;
        match got {
            Ok(got) => {
                if since.is_some() {
                    say!("← task {}: the server answers again", one_line(id));
                }
                return Ok(got);
            }
            Err(error) if unreachable(&error) => {
                if since.is_none() {
                    say!(
                        "… the server cannot be reached ({}); polling task {} again for up to {} s (the task runs on there)",
                        one_line(&format!("{error}")),
                        one_line(id),
                        UNREACHABLE_FOR.as_secs()
                    );
                }
                let first = *since.get_or_insert_with(std::time::Instant::now);
                if first.elapsed() >= UNREACHABLE_FOR {
                    return Err(
                        request_error(&format!("tasks/get {id}"), error).context(format!(
                            "the server was unreachable for {} s; the task may still run",
                            UNREACHABLE_FOR.as_secs()
                        )),
                    );
                }
                responder
                    .until_stopped(tokio::time::sleep(UNREACHABLE_RETRY))
                    .await?;
            }
            Err(error) => return Err(request_error(&format!("tasks/get {id}"), error)),
        }
    }
}

/// Follows `task` to its end; `how` says how saga came to it (`created`, `found`).
async fn follow_task(
    client: &Client,
    responder: &Responder,
    task: rmcp::model::Task,
    how: &str,
) -> anyhow::Result<Outcome> {
    let id = task.task_id.clone();
    let mut interval = poll_interval(task.poll_interval_ms);
    say!(
        "← task {} {how}: {} (polling tasks/get every {} ms)",
        one_line(&id),
        status_name(task.status),
        interval.as_millis()
    );
    if let Some(message) = &task.status_message {
        say!("  {}", one_line(message));
    }
    let mut shown = (task.status, task.status_message.clone());
    // Keys answered with tasks/update; with --answers, one asked again is refused.
    let mut answered: BTreeSet<String> = BTreeSet::new();
    // The task's lastUpdatedAt when it was last answered: an input_required read with the
    // same one is the state before the update (a store that answers from a stale read).
    let mut answered_at: Option<String> = None;
    let mut updates = 0usize;
    loop {
        tokio::time::sleep(interval).await;
        let detailed = get_task(client, responder, &id).await?.task;
        if detailed.task.poll_interval_ms.is_some() {
            interval = poll_interval(detailed.task.poll_interval_ms);
        }
        let now = (detailed.task.status, detailed.task.status_message.clone());
        let stale = detailed.task.status == TaskStatus::InputRequired
            && answered_at.as_deref() == Some(detailed.task.last_updated_at.as_str());
        if now != shown && !stale {
            say!("{}", status_line(&id, now.0, now.1.as_deref()));
            shown = now;
        }
        match detailed.payload {
            TaskPayload::InputRequired { input_requests } if !stale => {
                if input_requests.is_empty() {
                    continue;
                }
                if updates >= MAX_ROUNDS {
                    anyhow::bail!("task {id}: still asking after {MAX_ROUNDS} updates; giving up");
                }
                let keys: Vec<String> = input_requests.keys().map(|key| one_line(key)).collect();
                say!(
                    "← task {}: {} request(s): {}",
                    one_line(&id),
                    input_requests.len(),
                    keys.join(", ")
                );
                let mut responses = InputResponses::new();
                for (key, request) in &input_requests {
                    let request = serde_json::to_value(request)?;
                    if responder.is_scripted() && answered.contains(key) {
                        return Err(asked_again(key, &request));
                    }
                    responses.insert(key.clone(), responder.answer(key, &request)?);
                }
                let keys: Vec<String> = responses.keys().cloned().collect();
                let shown: Vec<String> = keys.iter().map(|key| one_line(key)).collect();
                say!("→ tasks/update {} {}", one_line(&id), shown.join(", "));
                responder
                    .until_stopped(crate::deadline::answer(
                        "tasks/update",
                        client.update_task(UpdateTaskParams::new(id.clone(), responses)),
                    ))
                    .await??
                    .map_err(|e| request_error(&format!("tasks/update {id}"), e))?;
                answered.extend(keys);
                answered_at = Some(detailed.task.last_updated_at.clone());
                updates += 1;
            }
            TaskPayload::Completed { result } => {
                let result: CallToolResult = serde_json::from_value(Value::Object(result))
                    .map_err(|e| {
                        anyhow::anyhow!(
                            "task {id} completed with a result that is not a tool's: {e}"
                        )
                    })?;
                let is_error = print_result(&result, &of_task(&id))?;
                return Ok(Outcome::Done(is_error));
            }
            TaskPayload::Failed { error } => {
                anyhow::bail!("task {id} failed: {}", task_error(&error))
            }
            TaskPayload::Cancelled => anyhow::bail!("task {id} was cancelled"),
            _ => {}
        }
    }
}

/// What a task's result is said to be of: its id on one line (it heads a line of its own).
fn of_task(id: &str) -> String {
    format!("of task {}", one_line(id))
}

/// Sends `tasks/cancel` for `id`; says why it could not.
async fn cancel(client: &Client, id: &str) -> Result<(), String> {
    match tokio::time::timeout(
        CANCEL_TIMEOUT,
        client.cancel_task(CancelTaskParams::new(id.to_owned())),
    )
    .await
    {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(format!("{:#}", request_error("tasks/cancel", error))),
        Err(_) => Err(format!(
            "tasks/cancel had no answer within {} s",
            CANCEL_TIMEOUT.as_secs()
        )),
    }
}

/// Runs `call` until it ends or Ctrl-C. On Ctrl-C (a signal, or at a prompt) the task the
/// call became, if any, is cancelled with `tasks/cancel`, and the outcome is
/// [`Outcome::Interrupted`]: the person asked for it; so it is when saga gives up on the
/// task itself (its answers file has no answer the server accepts). On any other error the
/// task is left as it is (a server that restarts, a network that fails: a durable task
/// runs on), and the error says how to follow it again (`reattach`: `saga task watch URL`).
pub(crate) async fn until_interrupted(
    client: &Client,
    slot: &Slot,
    reattach: &str,
    call: impl std::future::Future<Output = anyhow::Result<Outcome>>,
) -> anyhow::Result<Outcome> {
    tokio::select! {
        outcome = call => match outcome {
            Err(error) if error.is::<Interrupted>() => {}
            Err(error) => {
                let Some(id) = slot.get() else {
                    return Err(error);
                };
                // saga gave up on a task it created: nobody will answer it.
                if error.is::<crate::call::respond::GaveUp>() {
                    return Err(match cancel(client, &id).await {
                        Ok(()) => error.context(format!("task {id} cancelled")),
                        Err(why) => error.context(format!("task {id} may still run ({why})")),
                    });
                }
                return Err(error.context(format!(
                    "task {} was not cancelled and may still run: follow it with `{reattach} {}`",
                    clean(&id),
                    clean(&id)
                )));
            }
            other => return other,
        },
        signal = tokio::signal::ctrl_c() => {
            signal.map_err(|e| anyhow::anyhow!("cannot wait for Ctrl-C: {e}"))?;
        }
    }
    match slot.get() {
        Some(id) => match cancel(client, &id).await {
            Ok(()) => eprintln!(
                "saga: interrupted: task {} cancelled (tasks/cancel sent)",
                clean(&id)
            ),
            Err(why) => eprintln!(
                "saga: interrupted: task {} may still run: {}",
                clean(&id),
                clean(&why)
            ),
        },
        None => eprintln!("saga: interrupted"),
    }
    Ok(Outcome::Interrupted)
}

/// `saga task ACTION URL ID`: connects declaring the tasks extension, and gets, follows
/// or cancels the task `id`. Following it, Ctrl-C stops watching and leaves it running
/// (this command did not create it).
pub async fn attach(
    target: &crate::target::Target,
    responder: Responder,
    action: Action,
    id: &str,
) -> anyhow::Result<Outcome> {
    let responder = std::sync::Arc::new(responder);
    let connection = crate::call::session::connect(target, responder.clone()).await?;
    let client = &connection.client;
    let outcome = match action {
        Action::Cancel => {
            cancel(client, id)
                .await
                .map_err(|why| anyhow::anyhow!("task {}: {why}", clean(id)))?;
            say!("← task {}: cancel sent (tasks/cancel)", one_line(id));
            Ok(Outcome::Done(false))
        }
        Action::Get => {
            let detailed = get_task(client, &responder, id).await?.task;
            say!(
                "{}",
                status_line(
                    id,
                    detailed.task.status,
                    detailed.task.status_message.as_deref()
                )
            );
            match detailed.payload {
                TaskPayload::Completed { result } => {
                    let result: CallToolResult = serde_json::from_value(Value::Object(result))
                        .map_err(|e| {
                            anyhow::anyhow!("task {id}: a result that is not a tool's: {e}")
                        })?;
                    Ok(Outcome::Done(print_result(&result, &of_task(id))?))
                }
                TaskPayload::InputRequired { input_requests } => {
                    let keys: Vec<String> =
                        input_requests.keys().map(|key| one_line(key)).collect();
                    say!(
                        "  asks: {} (answer them with `saga task watch`)",
                        keys.join(", ")
                    );
                    Ok(Outcome::Done(false))
                }
                TaskPayload::Failed { error } => {
                    anyhow::bail!("task {id} failed: {}", task_error(&error))
                }
                TaskPayload::Cancelled => anyhow::bail!("task {id} was cancelled"),
                _ => Ok(Outcome::Done(false)),
            }
        }
        Action::Watch => {
            let task = get_task(client, &responder, id).await?.task.task;
            tokio::select! {
                outcome = follow_task(client, &responder, task, "found") => match outcome {
                    Err(error) if error.is::<Interrupted>() => {
                        eprintln!("saga: stopped watching task {}; it runs on", clean(id));
                        Ok(Outcome::Interrupted)
                    }
                    other => other,
                },
                signal = tokio::signal::ctrl_c() => {
                    signal.map_err(|e| anyhow::anyhow!("cannot wait for Ctrl-C: {e}"))?;
                    eprintln!("saga: stopped watching task {}; it runs on", clean(id));
                    Ok(Outcome::Interrupted)
                }
            }
        }
    };
    let _ = connection.client.cancel().await;
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polls_at_the_servers_interval_within_bounds() {
        assert_eq!(poll_interval(Some(500)), Duration::from_millis(500));
        assert_eq!(poll_interval(Some(0)), MIN_POLL);
        assert_eq!(poll_interval(Some(u64::MAX)), MAX_POLL);
        assert_eq!(poll_interval(None), DEFAULT_POLL);
    }

    #[test]
    fn status_lines_name_the_status_and_its_message() {
        assert_eq!(
            status_line("t1", TaskStatus::InputRequired, None),
            "← task t1: input_required"
        );
        assert_eq!(
            status_line("t1", TaskStatus::Working, Some("table 3 of 9")),
            "← task t1: working — table 3 of 9"
        );
    }

    #[test]
    fn a_task_id_and_status_message_cannot_forge_lines() {
        let line = status_line(
            "t1\n← task t1: completed",
            TaskStatus::Working,
            Some("3 of 9\r\n── result ──"),
        );
        assert_eq!(line.lines().count(), 1, "{line}");
        assert_eq!(
            line,
            "← task t1\\u{a}← task t1: completed: working — 3 of 9\\u{d}\\u{a}── result ──"
        );
    }

    /// Finding 11 of the third hardening pass: a task id with a line break made one line
    /// more in the heading of its result.
    #[test]
    fn a_task_id_cannot_forge_a_line_in_its_results_heading() {
        let heading = of_task("t1 ──\n── result of task t2");
        assert_eq!(heading.lines().count(), 1, "{heading}");
        assert!(heading.starts_with("of task t1 ──\\u{a}"), "{heading}");
    }

    #[test]
    fn a_failed_tasks_error_is_one_line() {
        let error = serde_json::json!({"code": -32603, "message": "boom"});
        let error = error.as_object().cloned().unwrap_or_default();
        assert_eq!(task_error(&error), "server error -32603: boom");
        assert_eq!(task_error(&serde_json::Map::new()), "server error ?: ");
    }
}
