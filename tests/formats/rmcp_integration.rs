#![allow(deprecated)] // sampling is deprecated in MCP 2026-07-28, still served

//! `saga_examples::rmcp_server` (`examples/rmcp_server.rs`): a server written with rmcp's
//! own macros lists and runs its plain tool and the saga tool it gained, driven end to end
//! by rmcp's client over HTTP.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use saga_examples::client::{ScriptedClient, accept, llm_says};
use saga_examples::rmcp_server;
use saga_runtime::prelude::*;
use saga_runtime::rmcp::model::CallToolRequestParams;
use serde_json::json;

async fn serve() -> String {
    let server = rmcp_server::Greeter::new(KeyRing::ephemeral()).expect("the server builds");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(async move { axum::serve(listener, rmcp_server::router(server)).await });
    format!("http://{addr}/mcp")
}

fn args(name: &str) -> saga_runtime::rmcp::model::JsonObject {
    json!({"name": name})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn an_rmcp_server_serves_its_own_tool_and_the_saga_it_gained() {
    let url = serve().await;
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let client = ScriptedClient::new(
        move |params| {
            counter.fetch_add(1, Ordering::SeqCst);
            let text = serde_json::to_value(params).unwrap_or_default().to_string();
            assert!(text.contains("Greet Ada?"), "{text}");
            accept(json!({"value": true}))
        },
        |_| llm_says("unused"),
    )
    .connect_http(&url)
    .await
    .expect("connected");

    let tools = client.list_all_tools().await.expect("tools/list");
    let mut names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(names, ["greet", "greet_politely"]);

    let plain = client
        .call_tool(CallToolRequestParams::new("greet").with_arguments(args("Ada")))
        .await
        .expect("the plain tool runs");
    assert_eq!(
        plain.content[0].as_text().expect("text").text,
        "Hello, Ada!"
    );

    let saga = client
        .call_tool(CallToolRequestParams::new("greet_politely").with_arguments(args("Ada")))
        .await
        .expect("the saga tool runs");
    assert_eq!(
        saga.content[0].as_text().expect("text").text,
        "Good day, Ada."
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1, "one elicitation round");
    let meta = serde_json::to_value(&saga.meta).expect("meta");
    assert_eq!(
        meta["io.modelcontextprotocol/serverInfo"]["name"], "greeter",
        "results keep the host server's serverInfo: {meta:#}"
    );
    client.cancel().await.expect("closed");
}

/// A 2025-11-25 client opens a session on the rmcp-mounted server (it used to get HTTP 500,
/// "Session management is not supported") and answers the saga's question during the call.
#[tokio::test]
async fn a_2025_11_25_session_client_is_served_by_the_rmcp_mounted_saga() {
    let url = serve().await;
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let client = ScriptedClient::new(
        move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
            accept(json!({"value": false}))
        },
        |_| llm_says("unused"),
    )
    .connect_http_session(&url)
    .await
    .expect("a session opens");
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 2);
    let saga = client
        .call_tool(CallToolRequestParams::new("greet_politely").with_arguments(args("Ada")))
        .await
        .expect("the saga tool runs in the session");
    assert_eq!(
        saga.content[0].as_text().expect("text").text,
        "Not greeted."
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1, "asked during the call");
    client.cancel().await.expect("closes");
}
