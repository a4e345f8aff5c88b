//! The tools of build 1. Each is changed one way in build 2 (`upgrade_v2/tools.rs`).

use saga_runtime::prelude::*;

/// Asks a name and greets; build 2 changes only the text it returns.
#[saga_tool]
pub async fn greet() -> Result<String, SagaError> {
    let name: String = elicit("Your name?").key("name").await?;
    Ok(format!("Hello, {name}."))
}

/// Two questions; build 2 changes the second's message and the result's wording.
#[saga_tool]
pub async fn survey() -> Result<String, SagaError> {
    let first: String = elicit("First answer?").key("first").await?;
    let second: String = elicit("Second answer?").key("second").await?;
    Ok(format!("{first} then {second}"))
}

/// One question; build 2 asks another after it.
#[saga_tool]
pub async fn grow() -> Result<String, SagaError> {
    let a: String = elicit("A?").key("a").await?;
    Ok(format!("a={a}"))
}

/// A transfer, kept across its confirmation; build 2 reorders its fields.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Transfer {
    pub from: String,
    pub to: String,
}

/// Moves 500 after a confirmation; what it saves changes in build 2.
#[saga_tool]
pub async fn transfer(from: String, to: String) -> Result<String, SagaError> {
    let order = Transfer { from, to };
    let ok: bool = elicit("Move 500?").key("ok").await?;
    Ok(if ok {
        format!("500 from {} to {}", order.from, order.to)
    } else {
        "cancelled".to_owned()
    })
}

/// The same as `transfer`; build 2 changes it the same way and keeps this code as a
/// retired copy.
#[saga_tool]
pub async fn transfer_kept(from: String, to: String) -> Result<String, SagaError> {
    let order = Transfer { from, to };
    let ok: bool = elicit("Move 500?").key("ok").await?;
    Ok(if ok {
        format!("500 from {} to {}", order.from, order.to)
    } else {
        "cancelled".to_owned()
    })
}

/// Counts on after a question; build 2 saves the count as a `u64`.
#[saga_tool]
pub async fn count(start: u32) -> Result<String, SagaError> {
    let counted: u32 = start + 1;
    let more: bool = elicit("Count on?").key("more").await?;
    Ok(format!("counted {counted}, more: {more}"))
}

/// The same as `count`, kept as a retired copy in build 2.
#[saga_tool]
pub async fn count_kept(start: u32) -> Result<String, SagaError> {
    let counted: u32 = start + 1;
    let more: bool = elicit("Count on?").key("more").await?;
    Ok(format!("counted {counted}, more: {more}"))
}

/// Asks to confirm `what`; build 2 saves one more local in it.
#[saga_fn]
async fn confirm(what: String) -> Result<bool, SagaError> {
    let asked = what.clone();
    let ok: bool = elicit("Confirm?").key("confirm").await?;
    Ok(ok && !asked.is_empty())
}

/// Removes a path after a confirmation in a helper.
#[saga_tool]
pub async fn cleanup(path: String) -> Result<String, SagaError> {
    let ok = confirm(path.clone()).await?;
    Ok(format!("{path}: {}", if ok { "removed" } else { "kept" }))
}

/// The same as `cleanup`, kept as a retired copy in build 2.
#[saga_tool]
pub async fn cleanup_kept(path: String) -> Result<String, SagaError> {
    let ok = confirm(path.clone()).await?;
    Ok(format!("{path}: {}", if ok { "removed" } else { "kept" }))
}

/// A plan; build 2 adds a variant.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub enum Plan {
    Basic,
    Pro,
}

/// Subscribes after a question, keeping the plan across it.
#[saga_tool]
pub async fn subscribe(pro: bool) -> Result<String, SagaError> {
    let plan = if pro { Plan::Pro } else { Plan::Basic };
    let ok: bool = elicit("Subscribe?").key("ok").await?;
    Ok(format!("{plan:?}: {ok}"))
}

/// The same as `subscribe`, kept as a retired copy in build 2.
#[saga_tool]
pub async fn subscribe_kept(pro: bool) -> Result<String, SagaError> {
    let plan = if pro { Plan::Pro } else { Plan::Basic };
    let ok: bool = elicit("Subscribe?").key("ok").await?;
    Ok(format!("{plan:?}: {ok}"))
}

/// Reads a yes as "ship"; build 2 reads it the other way round, keeping the layout, and
/// says so with `version = 2`.
#[saga_tool]
pub async fn meaning() -> Result<String, SagaError> {
    let yes: bool = elicit("Ship?").key("yes").await?;
    Ok(if yes { "ship" } else { "hold" }.to_owned())
}

/// A long job run as a task, a checkpoint per step; build 2 changes only its result.
#[saga_tool(task)]
pub async fn job(steps: u32, millis: u64) -> Result<String, SagaError> {
    let mut done: Vec<u32> = Vec::new();
    checkpoint().await;
    for step in 0..steps.min(1_000) {
        tokio::time::sleep(std::time::Duration::from_millis(millis.min(1_000))).await;
        done.push(step);
        checkpoint().await;
    }
    Ok(format!("job of {} steps done by build 1", done.len()))
}

/// The same job; build 2 saves its steps as `u64`, with no retired copy, so its tasks in
/// flight cannot go on and end `failed`.
#[saga_tool(task)]
pub async fn job_changed(steps: u32, millis: u64) -> Result<String, SagaError> {
    let mut done: Vec<u32> = Vec::new();
    checkpoint().await;
    for step in 0..steps.min(1_000) {
        tokio::time::sleep(std::time::Duration::from_millis(millis.min(1_000))).await;
        done.push(step);
        checkpoint().await;
    }
    Ok(format!("job of {} steps done by build 1", done.len()))
}

/// A JSON-shaped API type, kept as MessagePack (`skip_serializing_if`); build 2 adds a
/// field with a default, read by name from build 1's calls.
#[derive(Debug, Serialize, Deserialize)]
pub struct Ticket {
    pub id: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Keeps a [`Ticket`] across a question; build 2 adds a field with a default to it.
#[saga_tool]
pub async fn ticket(id: u32) -> Result<String, SagaError> {
    let filed = Ticket { id, note: None };
    let ok: bool = elicit("File it?").key("ok").await?;
    Ok(serde_json::json!({"ok": ok, "ticket": filed}).to_string())
}

/// Another JSON-shaped type; build 2 adds a required field, which build 1's state lacks.
#[derive(Debug, Serialize, Deserialize)]
pub struct Assignment {
    pub id: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Keeps an [`Assignment`]; build 2 adds a required field: build 1's calls cannot be read
/// there and end with an error, never with a made-up value.
#[saga_tool]
pub async fn assignment(id: u32) -> Result<String, SagaError> {
    let assigned = Assignment { id, note: None };
    let ok: bool = elicit("Assign it?").key("ok").await?;
    Ok(serde_json::json!({"ok": ok, "assignment": assigned}).to_string())
}

/// The server of build 1.
pub fn server(keys: KeyRing, store: TaskStore) -> anyhow::Result<SagaServer> {
    Ok(SagaServer::builder()
        .info("upgrade", "1.0.0")
        .keys(keys)
        .tool(greet)
        .tool(survey)
        .tool(grow)
        .tool(transfer)
        .tool(transfer_kept)
        .tool(count)
        .tool(count_kept)
        .tool(cleanup)
        .tool(cleanup_kept)
        .tool(subscribe)
        .tool(subscribe_kept)
        .tool(meaning)
        .tool(ticket)
        .tool(assignment)
        .tool(job)
        .tool(job_changed)
        .task_settings(saga_examples::cli::task_settings(store))
        .build()?)
}
