//! The MRTR loop: a call driven through its `input_required` rounds, each answered and
//! retried, until the tool's result (or the task the call becomes).

#![allow(deprecated)] // sampling and roots: deprecated in 2026-07-28, still served

use std::collections::BTreeSet;

use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::Value;

use super::print::{print_result, say_served_samples, shown_state};
use super::respond::{Outcome, Responder, asked_again};
use super::session::{Client, MAX_ROUNDS, connect, request_error};
use super::tools::all_tools;
use crate::schema::parse_arguments;
use crate::target::Target;
use crate::terminal::one_line;

/// `saga call`: drives `tool` to completion.
pub async fn call(
    target: &Target,
    tool: &str,
    pairs: &[String],
    responder: Responder,
    show_state: bool,
) -> anyhow::Result<Outcome> {
    let responder = std::sync::Arc::new(responder);
    let connection = connect(target, responder.clone()).await?;
    let client = &connection.client;
    if responder.tasks {
        let offered = client
            .peer_info()
            .is_some_and(|info| info.capabilities.supports_tasks());
        if !offered {
            let era = if responder.session {
                "in a 2025-11-25 session"
            } else {
                "(MCP 2026-07-28)"
            };
            anyhow::bail!(
                "--task: the server does not offer tasks {era}: its capabilities declare no \
                 {} extension; call without --task",
                rmcp::model::TASKS_EXTENSION_ID
            );
        }
    }
    let tools = all_tools(client).await?;
    let Some(found) = tools.iter().find(|t| t.name == tool) else {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        anyhow::bail!(
            "no tool named {tool:?} (the server has: {})",
            names.join(", ")
        );
    };
    if responder.tasks && connection.seen.task_support(tool).as_deref() == Some("forbidden") {
        anyhow::bail!(
            "--task: the tool {tool:?} does not run as a task (its execution.taskSupport is \
             \"forbidden\"); call it without --task"
        );
    }
    let arguments =
        parse_arguments(pairs, Some(&found.input_schema)).map_err(anyhow::Error::msg)?;
    let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    // The call's own trace: each request carries its context, and the id is shown so
    // that the saga can be found in a trace backend.
    let trace = crate::trace::fresh()?;
    params.meta = Some(crate::trace::with_traceparent(params.meta.take(), &trace));
    say!(
        "trace {} (its traceparent rides in each request's _meta)",
        trace.trace_id_hex()
    );
    let task = crate::task::Slot::default();
    let run = drive(client, &responder, tool, params, show_state, &task);
    let outcome = if responder.tasks {
        let reattach = match target {
            Target::Http(url) => format!("saga task watch {url}"),
            Target::Stdio(words) => format!("saga task watch --stdio {:?}", words.join(" ")),
        };
        crate::task::until_interrupted(client, &task, &reattach, run).await
    } else {
        run.await
    };
    let _ = connection.client.cancel().await;
    outcome
}

/// The rounds of a call: MRTR rounds until a result, or (with `--task`) the task the call
/// becomes, followed to its end.
async fn drive(
    client: &Client,
    responder: &Responder,
    tool: &str,
    mut params: CallToolRequestParams,
    show_state: bool,
    task: &crate::task::Slot,
) -> anyhow::Result<Outcome> {
    // The keys answered in the round before: with --answers, one asked again is refused.
    let mut answered: BTreeSet<String> = BTreeSet::new();
    for round in 1..=MAX_ROUNDS {
        say!("── round {round} ──");
        say!(
            "→ tools/call {tool} {}{}",
            Value::Object(params.arguments.clone().unwrap_or_default()),
            if responder.tasks {
                " (tasks extension declared)"
            } else {
                ""
            }
        );
        let response = responder
            .until_stopped(crate::deadline::answer(
                &format!("tools/call {tool}"),
                client.call_tool_once(params.clone()),
            ))
            .await??
            .map_err(|e| request_error(&format!("tools/call {tool}"), e))?;
        say_served_samples(&response);
        match response {
            CallToolResponse::Complete(result) => {
                if responder.tasks {
                    say!("← a result: the server ran the call without a task");
                }
                let is_error = print_result(&result, &format!("after {round} round(s)"))?;
                return Ok(Outcome::Done(is_error));
            }
            CallToolResponse::InputRequired(result) => {
                let requests = result.input_requests.unwrap_or_default();
                let keys: Vec<&str> = requests.keys().map(String::as_str).collect();
                if requests.is_empty() {
                    say!("← input_required: no requests (checkpoint), retrying");
                } else {
                    let keys: Vec<String> = keys.into_iter().map(one_line).collect();
                    say!(
                        "← input_required: {} request(s): {}",
                        requests.len(),
                        keys.join(", ")
                    );
                }
                if let Some(state) = &result.request_state {
                    say!("← requestState {}", shown_state(state, show_state));
                }
                let mut responses = rmcp::model::InputResponses::new();
                for (key, request) in &requests {
                    let request = serde_json::to_value(request)?;
                    if responder.is_scripted() && answered.contains(key) {
                        return Err(asked_again(key, &request));
                    }
                    responses.insert(key.clone(), responder.answer(key, &request)?);
                }
                answered = responses.keys().cloned().collect();
                params.input_responses = (!responses.is_empty()).then_some(responses);
                params.request_state = result.request_state;
            }
            CallToolResponse::Task(created) if responder.tasks => {
                return crate::task::follow(client, responder, created, task).await;
            }
            CallToolResponse::Task(created) => anyhow::bail!(
                "tools/call {tool}: the server answered with task {} though saga did not \
                 declare tasks (try --task)",
                created.task.task_id
            ),
            other => anyhow::bail!("tools/call {tool}: unexpected response {other:?}"),
        }
    }
    // A server that keeps asking must not hold a script forever.
    anyhow::bail!("tools/call {tool}: still asking after {MAX_ROUNDS} rounds; giving up")
}
