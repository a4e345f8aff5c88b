//! The route of a call, chosen once (`serve::route`), as a client meets it: where a task
//! begins, which calls stream, what a call through `SagaTools::run` needs.

use std::time::Duration;

use saga_examples::harness::http::{Post, meta};
use saga_examples::harness::serving::serve_local;
use saga_examples::harness::tasks::TaskClient;
use saga_runtime::engine::{Call, SagaContext};
use saga_runtime::prelude::*;
use serde_json::{Value, json};

/// Asks for a name, then checkpoints twice: the work after the question is a task's.
#[saga_tool(task)]
async fn greet_later() -> Result<String, SagaError> {
    let name: String = elicit("Your name?").key("name").await?;
    checkpoint().await;
    checkpoint().await;
    Ok(format!("Hello, {name}!"))
}

/// Runs only as a task.
#[saga_tool(task = "required")]
async fn only_a_task() -> Result<String, SagaError> {
    checkpoint().await;
    Ok("done".to_owned())
}

fn server() -> SagaServer {
    SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(greet_later)
        .tool(only_a_task)
        .tasks(TaskStore::memory())
        .build()
        .expect("the server builds")
}

/// A first request that already brings the answers asked before the first checkpoint
/// (no `requestState`: the call is replayed) begins its task at that checkpoint, as any
/// call of a task tool by a client that declared tasks does; the rest runs in the task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_first_request_begins_its_task_at_the_first_checkpoint() {
    let running = serve_local(server()).await;
    let client = TaskClient::new();
    let answer = client
        .request(
            running.addr,
            "tools/call",
            json!({
                "name": "greet_later",
                "arguments": {},
                "inputResponses": {"name": {"action": "accept", "content": {"value": "Ada"}}}
            }),
        )
        .await;
    assert_eq!(answer["result"]["resultType"], "task", "{answer}");
    let id = answer["result"]["taskId"].as_str().expect("a task id");
    let task = client
        .settled(running.addr, id, Duration::from_secs(20))
        .await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(
        task["result"]["content"][0]["text"], "Hello, Ada!",
        "{task}"
    );
}

/// A client that declared `resumableRequests` but not tasks is refused a task-only tool,
/// as `tools/call` refuses it to any client without the extension: the stream is no way
/// around the rule.
#[tokio::test]
async fn a_streaming_client_is_refused_a_task_only_tool_without_tasks() {
    let running = serve_local(server()).await;
    let mut message = json!({
        "jsonrpc": "2.0", "id": "s-1", "method": "tools/call",
        "params": {"name": "only_a_task", "arguments": {}}
    });
    message["params"]["_meta"] = meta(json!({"resumableRequests": {}}));
    let response = Post::mcp(running.addr).rpc(&message).response().await;
    assert_eq!(response.headers()["content-type"], "application/json");
    let body: Value = response.json().await.expect("one JSON message");
    assert_eq!(body["error"]["code"], -32021, "{body}");
}

/// `SagaTools::run`, the door of a transport of one's own, leaves the bound to that
/// transport: it runs on a runtime without timers (as the fuzz target's is), where a
/// bound of its own would panic.
#[test]
fn a_call_through_sagatools_run_needs_no_timers() {
    let tools = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .tool(greet_later)
        .build()
        .expect("the tools build");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime without timers");
    let cx = SagaContext::new("alice").with_capabilities(
        saga_runtime::rmcp::model::ClientCapabilities::builder()
            .enable_elicitation()
            .build(),
    );
    let response = runtime
        .block_on(tools.run(Call::tool("greet_later", None), &cx))
        .expect("the first round");
    let saga_runtime::rmcp::model::CallToolResponse::InputRequired(asked) = response else {
        panic!("the tool asks first: {response:?}");
    };
    assert!(
        asked
            .input_requests
            .is_some_and(|requests| requests.contains_key("name")),
        "it asks for the name"
    );
}
