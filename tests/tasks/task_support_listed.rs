//! `tools/list` declares `execution.taskSupport` for task tools (the tasks extension's
//! per-tool field, which rmcp's `Tool` cannot carry), statelessly and in a session, and
//! declares nothing on a server that runs no tasks.

use saga_examples::harness::http::{Post, meta, request};
use saga_examples::harness::serving::serve_local;
use saga_examples::harness::session;
use saga_runtime::prelude::*;
use serde_json::{Value, json};

#[saga_tool(task)]
async fn import(rows: u32) -> Result<String, SagaError> {
    checkpoint().await;
    Ok(format!("{rows} rows"))
}

#[saga_tool(task = "required")]
async fn export(rows: u32) -> Result<String, SagaError> {
    checkpoint().await;
    Ok(format!("{rows} rows"))
}

#[saga_tool]
async fn plain(name: String) -> Result<String, SagaError> {
    Ok(name)
}

fn server(tasks: bool) -> SagaServer {
    let builder = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(import)
        .tool(export)
        .tool(plain);
    let builder = if tasks {
        builder.tasks(TaskStore::memory())
    } else {
        builder
    };
    builder.build().expect("builds")
}

/// `tools/list` of a 2026-07-28 client, outside any session.
async fn stateless_list(url: &str) -> Value {
    let list = request(1, "tools/list", json!({"_meta": meta(json!({}))}));
    Post::to(url).rpc(&list).send().await.1
}

fn support(list: &Value, name: &str) -> Value {
    list["result"]["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|tool| tool["name"] == name))
        .map(|tool| tool["execution"]["taskSupport"].clone())
        .unwrap_or_else(|| panic!("{name} in {list}"))
}

#[tokio::test]
async fn task_tools_declare_their_task_support() {
    let running = serve_local(server(true)).await;
    let list = stateless_list(&running.url()).await;
    assert_eq!(support(&list, "import"), "optional", "{list}");
    assert_eq!(support(&list, "export"), "required", "{list}");
    assert_eq!(support(&list, "plain"), Value::Null, "{list}");

    // In a session (2025-11-25), where the list comes back as an SSE event.
    let session = session::Session::open(&running.url(), json!({})).await;
    let mut events = session
        .request(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}))
        .await;
    let list = events.next().await.expect("the list");
    assert_eq!(support(&list, "import"), "optional", "{list}");
    assert_eq!(support(&list, "export"), "required", "{list}");
}

#[tokio::test]
async fn a_server_without_tasks_declares_none() {
    let running = serve_local(server(false)).await;
    let list = stateless_list(&running.url()).await;
    assert_eq!(support(&list, "import"), Value::Null, "{list}");
}
