//! `execution.taskSupport` in `tools/list`: the tasks extension's per-tool declaration,
//! which rmcp's `Tool` has no field for. A server that runs tasks adds it to each task
//! tool of the list on its way out, in a JSON body or in the SSE event that carries it.

use axum::body::Body;
use axum::response::Response;
use http::header;
use serde_json::{Value, json};

use crate::serve::tools::SagaTools;
use crate::tasks::TaskSupport;

/// `response` to a `tools/list`, with `execution.taskSupport` on each tool that may run
/// as a task. A server without a task store runs every tool as an ordinary call and
/// declares nothing.
pub(super) async fn with_task_support(
    response: Response,
    tools: &SagaTools,
    limit: usize,
) -> Response {
    if tools.tasks().is_none() {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let is_sse = super::streams::is_event_stream(&parts.headers);
    // rmcp's own response: small, but read within a bound all the same.
    let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let declare = |message: &mut Value| declare_task_support(message, tools);
    let rewritten: Option<String> = if is_sse {
        let text = String::from_utf8_lossy(&bytes);
        let mut changed = false;
        let lines: Vec<String> = text
            .split('\n')
            .map(|line| {
                let declared = line
                    .strip_prefix("data:")
                    .and_then(|data| serde_json::from_str::<Value>(data.trim_start()).ok())
                    .and_then(|mut message| declare(&mut message).then_some(message));
                match declared {
                    Some(message) => {
                        changed = true;
                        format!("data: {message}")
                    }
                    None => line.to_owned(),
                }
            })
            .collect();
        changed.then(|| lines.join("\n"))
    } else {
        serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(|mut message| declare(&mut message).then(|| message.to_string()))
    };
    match rewritten {
        Some(text) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            Response::from_parts(parts, Body::from(text))
        }
        None => Response::from_parts(parts, Body::from(bytes)),
    }
}

/// Gives each task tool of the `tools/list` answer `message` its `execution.taskSupport`;
/// whether `message` is such an answer.
pub(super) fn declare_task_support(message: &mut Value, tools: &SagaTools) -> bool {
    let Some(list) = message
        .pointer_mut("/result/tools")
        .and_then(Value::as_array_mut)
    else {
        return false;
    };
    for tool in list {
        let support = tool
            .get("name")
            .and_then(Value::as_str)
            .and_then(|name| tools.saga(name).ok())
            .map(|saga| saga.task_support());
        let value = match support {
            Some(TaskSupport::Optional) => "optional",
            Some(TaskSupport::Required) => "required",
            _ => continue,
        };
        if let Some(tool) = tool.as_object_mut() {
            tool.insert("execution".to_owned(), json!({ "taskSupport": value }));
        }
    }
    true
}
