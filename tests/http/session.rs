//! The session era (2025-11-25) over raw Streamable HTTP, where the messages themselves
//! are checked.

#![allow(deprecated)] // sampling is deprecated in MCP 2026-07-28, still served

use std::time::Duration;

use saga_examples::deploy;
use saga_examples::harness::serving::serve_local;
use saga_examples::harness::session::Session;
use saga_runtime::prelude::*;
use serde_json::json;

/// `notifications/cancelled` for a call that waits on its client stops the saga: the
/// answer to the pending request is not used, nothing more is asked, and the call does
/// not complete.
#[tokio::test]
async fn a_cancelled_call_stops_its_saga() {
    let server = deploy::server(KeyRing::ephemeral()).expect("a server");
    let running = serve_local(server).await;
    let session = Session::open(&running.url(), json!({"elicitation": {}, "sampling": {}})).await;
    let mut stream = session
        .request(json!({
            "jsonrpc": "2.0", "id": 11, "method": "tools/call",
            "params": {"name": "complex_tool", "arguments": {"initial_arg": "x"}}
        }))
        .await;
    let (_, elicitation) = stream.next_after_policy().await;
    assert_eq!(elicitation["method"], "elicitation/create", "{elicitation}");

    let cancel = json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 11, "reason": "the user gave up"}
    });
    assert!(session.post(&cancel).await.status().is_success());
    // Answering now is too late: the saga must not go on to its sampling round.
    let late = json!({"jsonrpc": "2.0", "id": elicitation["id"],
                      "result": {"action": "accept", "content": {"target": "production"}}});
    let _ = session.post(&late).await;

    let mut seen = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(3), async {
        while let Some(message) = stream.next().await {
            seen.push(message);
        }
    })
    .await;
    let _ = read; // a stream that stays open after a cancel is allowed; it stays quiet
    for message in &seen {
        assert_ne!(message["method"], "sampling/createMessage", "{seen:?}");
        assert!(
            message.get("result").is_none(),
            "the call completed: {seen:?}"
        );
    }
}

/// Ten numbers, as structured output that is not an object.
#[saga_tool]
async fn first_ten() -> Result<Json<Vec<u32>>, SagaError> {
    Ok(Json((1..=10).collect()))
}

/// A 2025-11-25 peer gets no non-object structured output (SEP-2106, as rmcp 3.11 sends
/// it): the tool's output schema is left out of its list and the numbers come as text; a
/// 2026-07-28 peer gets them structured.
#[tokio::test]
async fn non_object_output_reaches_a_legacy_peer_as_text() {
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(first_ten)
        .build()
        .expect("a server");
    let running = serve_local(server).await;
    let session = Session::open(&running.url(), json!({})).await;
    let listed = session
        .ask(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}))
        .await;
    let tool = &listed["result"]["tools"][0];
    assert_eq!(tool["name"], "first_ten", "{listed}");
    assert!(tool.get("outputSchema").is_none(), "{listed}");
    let called = session
        .ask(json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "first_ten", "arguments": {}}
        }))
        .await;
    let result = &called["result"];
    assert!(result.get("structuredContent").is_none(), "{called}");
    let text = result["content"][0]["text"].as_str().expect("text");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(text).ok(),
        Some(json!([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])),
        "{called}"
    );

    let (_, reply) = saga_examples::harness::http::Post::mcp(running.addr)
        .rpc(&saga_examples::harness::http::request(
            3,
            "tools/call",
            json!({"name": "first_ten", "arguments": {},
                   "_meta": saga_examples::harness::http::meta(json!({}))}),
        ))
        .send()
        .await;
    assert_eq!(
        reply["result"]["structuredContent"],
        json!([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
        "{reply}"
    );
}

/// Interop with third-party clients: a 2025-11-25 list result carries only that era's
/// fields (no `ttlMs`, no `cacheScope`, which 2026-07-28 added), while a 2026-07-28
/// request keeps them; integer formats are ones validators know; and closing a session is
/// `204 No Content` (rmcp answered `202`, at which the Python SDK 1.x warns).
#[tokio::test]
async fn a_session_gets_its_eras_list_fields_and_a_204_when_it_closes() {
    use saga_examples::harness::http::{Post, request, with_meta};
    let server = deploy::server(KeyRing::ephemeral()).expect("a server");
    let running = serve_local(server).await;
    let session = Session::open(&running.url(), json!({"elicitation": {}})).await;
    let mut listed = session
        .request(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}))
        .await;
    let listed = listed.next().await.expect("the list");
    let result = &listed["result"];
    assert_eq!(result["tools"][0]["name"], "complex_tool", "{listed}");
    assert!(result.get("ttlMs").is_none(), "{listed}");
    assert!(result.get("cacheScope").is_none(), "{listed}");

    let stateless = Post::mcp(running.addr)
        .rpc(&with_meta(request(3, "tools/list", json!({}))))
        .reply()
        .await;
    assert_eq!(
        stateless.body["result"]["cacheScope"], "public",
        "{stateless:?}"
    );
    assert!(stateless.body["result"]["ttlMs"].is_u64(), "{stateless:?}");
    // `replicas: Option<u32>`: a format validators know, and the range (schemars wrote
    // `format: "uint32"`, at which Mastra's validator warns).
    assert_eq!(
        stateless.body["result"]["tools"][0]["inputSchema"]["properties"]["replicas"],
        json!({"type": ["integer", "null"], "format": "int64", "minimum": 0, "maximum": 4294967295u64}),
        "{stateless:?}"
    );

    assert_eq!(session.delete().await, reqwest::StatusCode::NO_CONTENT);
}
