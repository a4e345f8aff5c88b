//! The tools of build 2, each changed one way from build 1 (`upgrade_v1/tools.rs`). The
//! `_kept` tools change their layout and keep build 1's code as a retired copy
//! (`retired.rs`), which finishes the calls build 1 started.

use saga_runtime::prelude::*;

/// Only the text it returns changed: in-flight calls finish here.
#[saga_tool]
pub async fn greet() -> Result<String, SagaError> {
    let name: String = elicit("Your name?").key("name").await?;
    Ok(format!("Hi {name}!"))
}

/// The second message and the result changed: calls in flight at either question go on
/// here, and the second question is asked as this build words it.
#[saga_tool]
pub async fn survey() -> Result<String, SagaError> {
    let first: String = elicit("First answer?").key("first").await?;
    let second: String = elicit("Second answer, please?").key("second").await?;
    Ok(format!("{first}, then {second}"))
}

/// A suspension added after the one in flight: calls waiting at `a` go on and are asked
/// `b` too.
#[saga_tool]
pub async fn grow() -> Result<String, SagaError> {
    let a: String = elicit("A?").key("a").await?;
    let b: String = elicit("B?").key("b").await?;
    Ok(format!("a={a} b={b}"))
}

/// The fields are reordered: another layout.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Transfer {
    pub to: String,
    pub from: String,
}

/// Saves the reordered `Transfer`: tokens of build 1 are refused, never read swapped.
#[saga_tool]
pub async fn transfer(from: String, to: String) -> Result<String, SagaError> {
    let order = Transfer { to, from };
    let ok: bool = elicit("Move 500?").key("ok").await?;
    Ok(if ok {
        format!("500 from {} to {}", order.from, order.to)
    } else {
        "cancelled".to_owned()
    })
}

/// As `transfer`, with build 1's code kept as a retired copy.
#[saga_tool]
pub async fn transfer_kept(from: String, to: String) -> Result<String, SagaError> {
    let order = Transfer { to, from };
    let ok: bool = elicit("Move 500?").key("ok").await?;
    Ok(if ok {
        format!("500 from {} to {} (build 2)", order.from, order.to)
    } else {
        "cancelled".to_owned()
    })
}

/// A saved local's type changed: another layout.
#[saga_tool]
pub async fn count(start: u32) -> Result<String, SagaError> {
    let counted: u64 = u64::from(start) + 1;
    let more: bool = elicit("Count on?").key("more").await?;
    Ok(format!("counted {counted}, more: {more}"))
}

/// As `count`, with build 1's code kept as a retired copy.
#[saga_tool]
pub async fn count_kept(start: u32) -> Result<String, SagaError> {
    let counted: u64 = u64::from(start) + 1;
    let more: bool = elicit("Count on?").key("more").await?;
    Ok(format!("counted {counted} (build 2), more: {more}"))
}

/// The helper saves one more local: the callers' layouts change.
#[saga_fn]
async fn confirm(what: String) -> Result<bool, SagaError> {
    let asked = what.clone();
    let length = what.len();
    let ok: bool = elicit("Confirm?").key("confirm").await?;
    Ok(ok && !asked.is_empty() && length > 0)
}

/// Calls the changed helper: tokens of build 1 waiting in it are refused.
#[saga_tool]
pub async fn cleanup(path: String) -> Result<String, SagaError> {
    let ok = confirm(path.clone()).await?;
    Ok(format!("{path}: {}", if ok { "removed" } else { "kept" }))
}

/// As `cleanup`, with build 1's code (and helper) kept as a retired copy.
#[saga_tool]
pub async fn cleanup_kept(path: String) -> Result<String, SagaError> {
    let ok = confirm(path.clone()).await?;
    Ok(format!(
        "{path}: {} (build 2)",
        if ok { "removed" } else { "kept" }
    ))
}

/// A variant added to a saved enum: another layout.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub enum Plan {
    Basic,
    Pro,
    Enterprise,
}

/// Saves the grown `Plan`.
#[saga_tool]
pub async fn subscribe(pro: bool) -> Result<String, SagaError> {
    let plan = if pro { Plan::Pro } else { Plan::Basic };
    let ok: bool = elicit("Subscribe?").key("ok").await?;
    Ok(format!("{plan:?}: {ok}"))
}

/// As `subscribe`, with build 1's code kept as a retired copy.
#[saga_tool]
pub async fn subscribe_kept(pro: bool) -> Result<String, SagaError> {
    let plan = if pro { Plan::Pro } else { Plan::Enterprise };
    let ok: bool = elicit("Subscribe?").key("ok").await?;
    Ok(format!("{plan:?}: {ok} (build 2)"))
}

/// A yes now means "hold": the same layout, another meaning, so `version = 2` refuses
/// build 1's tokens rather than read their answer the other way round.
#[saga_tool(version = 2)]
pub async fn meaning() -> Result<String, SagaError> {
    let yes: bool = elicit("Hold?").key("yes").await?;
    Ok(if yes { "hold" } else { "ship" }.to_owned())
}

/// Only the result changed: tasks of build 1 finish here.
#[saga_tool(task)]
pub async fn job(steps: u32, millis: u64) -> Result<String, SagaError> {
    let mut done: Vec<u32> = Vec::new();
    checkpoint().await;
    for step in 0..steps.min(1_000) {
        tokio::time::sleep(std::time::Duration::from_millis(millis.min(1_000))).await;
        done.push(step);
        checkpoint().await;
    }
    Ok(format!("job of {} steps done by build 2", done.len()))
}

/// Saves its steps as `u64`, with no retired copy: build 1's tasks end `failed`.
#[saga_tool(task)]
pub async fn job_changed(steps: u32, millis: u64) -> Result<String, SagaError> {
    let mut done: Vec<u64> = Vec::new();
    checkpoint().await;
    for step in 0..steps.min(1_000) {
        tokio::time::sleep(std::time::Duration::from_millis(millis.min(1_000))).await;
        done.push(u64::from(step));
        checkpoint().await;
    }
    Ok(format!("job of {} steps done by build 2", done.len()))
}

/// A JSON-shaped API type, kept as MessagePack (`skip_serializing_if`), with a field build
/// 1 did not have: build 1's calls read it by name, with its default.
#[derive(Debug, Serialize, Deserialize)]
pub struct Ticket {
    pub id: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default = "normal")]
    pub priority: String,
}

fn normal() -> String {
    "normal".into()
}

/// Keeps a [`Ticket`] across a question; the field `priority` is new in this build.
#[saga_tool]
pub async fn ticket(id: u32) -> Result<String, SagaError> {
    let filed = Ticket {
        id,
        note: None,
        priority: "high".into(),
    };
    let ok: bool = elicit("File it?").key("ok").await?;
    Ok(serde_json::json!({"ok": ok, "ticket": filed}).to_string())
}

/// Another JSON-shaped type, with a required field build 1 did not have.
#[derive(Debug, Serialize, Deserialize)]
pub struct Assignment {
    pub id: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub owner: String,
}

/// Keeps an [`Assignment`]: a call build 1 started cannot be read here (no `owner`).
#[saga_tool]
pub async fn assignment(id: u32) -> Result<String, SagaError> {
    let assigned = Assignment {
        id,
        note: None,
        owner: "ops".into(),
    };
    let ok: bool = elicit("Assign it?").key("ok").await?;
    Ok(serde_json::json!({"ok": ok, "assignment": assigned}).to_string())
}

/// The server of build 2.
pub fn server(keys: KeyRing, store: TaskStore) -> anyhow::Result<SagaServer> {
    Ok(SagaServer::builder()
        .info("upgrade", "2.0.0")
        .keys(keys)
        .tool(greet)
        .tool(survey)
        .tool(grow)
        .tool(transfer)
        .tool(transfer_kept)
        .retired(super::retired::transfer_kept)
        .tool(count)
        .tool(count_kept)
        .retired(super::retired::count_kept)
        .tool(cleanup)
        .tool(cleanup_kept)
        .retired(super::retired::cleanup_kept)
        .tool(subscribe)
        .tool(subscribe_kept)
        .retired(super::retired::subscribe_kept)
        .tool(meaning)
        .tool(ticket)
        .tool(assignment)
        .tool(job)
        .tool(job_changed)
        .task_settings(saga_examples::cli::task_settings(store))
        .build()?)
}
