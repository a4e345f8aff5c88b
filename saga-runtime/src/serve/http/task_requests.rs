//! The tasks extension's requests of a stateless (MCP 2026-07-28) client, served by the
//! direct path (`super::direct`): `tasks/get`, `tasks/update` and `tasks/cancel`, each
//! answered as rmcp's service answers it around `SagaServer`'s handler (the extension's
//! capability checks first, then the handler in its MCP server span, then the 2026-07-28
//! error code for a missing resource).
//!
//! A task method is one [`TaskMethod`]; adding one is a variant, its method's name and
//! its run.

use axum::response::Response;
use http::request::Parts;
use rmcp::ErrorData;
use rmcp::model::{
    CancelTaskMethod, GetTaskMethod, InputResponses, RequestId, RequestMetaObject, ServerResult,
    UpdateTaskMethod,
};

use super::message::{CallId, RequestMessage, ServedMethod, answered, names_2026_07_28, written};
use crate::otel::MethodTrace;
use crate::serve::tools::SagaTools;

/// A request of the tasks extension served here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TaskMethod {
    Get,
    Update,
    Cancel,
}

impl ServedMethod for TaskMethod {
    const ALL: &'static [Self] = &[TaskMethod::Get, TaskMethod::Update, TaskMethod::Cancel];

    fn method(self) -> &'static str {
        match self {
            TaskMethod::Get => "tasks/get",
            TaskMethod::Update => "tasks/update",
            TaskMethod::Cancel => "tasks/cancel",
        }
    }
}

impl TaskMethod {
    /// rmcp's answer when the server runs no tasks: its method is not found.
    fn not_found(self) -> ErrorData {
        match self {
            TaskMethod::Get => ErrorData::method_not_found::<GetTaskMethod>(),
            TaskMethod::Update => ErrorData::method_not_found::<UpdateTaskMethod>(),
            TaskMethod::Cancel => ErrorData::method_not_found::<CancelTaskMethod>(),
        }
    }
}

/// A JSON-RPC request of a task method: [`TaskParams`].
pub(super) type TaskMessage = RequestMessage<TaskParams>;

/// A task method's params: `_meta`, the task's id, and for `tasks/update` its answers;
/// nothing else. rmcp ignores other members, and `inputResponses` outside an update: a
/// request with one is rmcp's to answer.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct TaskParams {
    #[serde(rename = "_meta")]
    meta: Option<RequestMetaObject>,
    task_id: String,
    input_responses: Option<InputResponses>,
}

/// What a task request asks of its task.
enum Run {
    Get,
    Update(InputResponses),
    Cancel,
}

/// A stateless task request the direct path serves: read, and found to pass every check.
pub(crate) struct TaskRequest {
    method: TaskMethod,
    id: RequestId,
    task_id: String,
    run: Run,
    /// The caller's principal, whose tasks it may read.
    principal: String,
    /// The handler's span and duration record, or the refusal of the extension's checks,
    /// answered before the handler runs (and so with no span), as rmcp answers it.
    admitted: Result<MethodTrace, ErrorData>,
}

impl TaskRequest {
    /// The request `message` is, when it is the `method` its `Mcp-Method` header names,
    /// its `Mcp-Name` (`name`, decoded) is its task's id, and its `_meta` has every key
    /// 2026-07-28 requires (the transport's checks have passed:
    /// `super::direct::Direct::read_within`). `principal` makes the caller's, from the
    /// request's head, once the request is found to be served here.
    pub(super) fn read(
        tools: &SagaTools,
        parts: &Parts,
        method: TaskMethod,
        name: &str,
        message: TaskMessage,
        principal: impl FnOnce() -> String,
    ) -> Option<Self> {
        let TaskMessage {
            id: CallId(id),
            method: named,
            params,
            ..
        } = message;
        let TaskParams {
            meta,
            task_id,
            input_responses,
        } = params;
        if named != method.method() || task_id != name {
            return None;
        }
        let run = match (method, input_responses) {
            (TaskMethod::Get, None) => Run::Get,
            (TaskMethod::Update, Some(responses)) => Run::Update(responses),
            (TaskMethod::Cancel, None) => Run::Cancel,
            _ => return None,
        };
        let meta = meta?;
        if !names_2026_07_28(&meta) {
            return None;
        }
        let capabilities = crate::serve::wire::resumable::capabilities_of(&meta)?;
        // rmcp's checks of the extension, in its order, before the handler, whose span
        // a refused request never gets.
        let admitted = if tools.tasks().is_none() {
            Err(method.not_found())
        } else if !capabilities.supports_tasks() {
            Err(crate::tasks::tasks_required())
        } else {
            Ok(MethodTrace::stateless(
                method.method(),
                None,
                &parts.headers,
                &meta,
                &id,
            ))
        };
        Some(Self {
            method,
            principal: principal(),
            id,
            task_id,
            run,
            admitted,
        })
    }

    /// Its JSON-RPC method.
    pub(crate) fn method(&self) -> &'static str {
        self.method.method()
    }

    /// The response, as rmcp writes the handler's answer: cache hints filled, a missing
    /// resource's error code 2026-07-28's.
    pub(super) async fn respond(self, tools: &SagaTools) -> Response {
        let TaskRequest {
            method,
            id,
            task_id,
            run,
            principal,
            admitted,
        } = self;
        let answer = match (admitted, tools.tasks()) {
            (Err(refusal), _) => Err(refusal),
            (Ok(_), None) => Err(method.not_found()),
            (Ok(trace), Some(tasks)) => {
                trace
                    .run(async {
                        match run {
                            Run::Get => tasks
                                .get(tools, &task_id, &principal)
                                .await
                                .map(ServerResult::GetTaskResult),
                            // Boxed, as the rmcp handler's: these futures are large.
                            Run::Update(responses) => {
                                Box::pin(tasks.update(tools, &task_id, &principal, responses))
                                    .await
                                    .map(ServerResult::task_ack)
                            }
                            Run::Cancel => Box::pin(tasks.cancel(tools, &task_id, &principal))
                                .await
                                .map(ServerResult::task_ack),
                        }
                    })
                    .await
            }
        };
        let message = answered(answer, id);
        written(&message, None).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_task_method_is_named_by_its_method_and_only_it() {
        for &method in TaskMethod::ALL {
            assert_eq!(TaskMethod::of_method(method.method()), Some(method));
        }
        for other in ["tasks/list", "tasks/result", "tools/call", "tasks/get "] {
            assert_eq!(TaskMethod::of_method(other), None, "{other}");
        }
    }
}
