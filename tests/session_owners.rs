//! A session (MCP 2025-11-25) belongs to the principal that opened it, and only a live
//! session of the caller's lets a request give back its slot while it waits: over real
//! HTTP, against a server on a loopback port.

use saga_examples::harness::serving;

use std::time::Duration;

use saga_runtime::prelude::*;
use serde_json::{Value, json};
use serving::serve_local;

/// Takes its time, with no suspension: a request that holds its slot throughout.
#[saga_tool]
async fn slow() -> Result<String, SagaError> {
    tokio::time::sleep(Duration::from_millis(1500)).await;
    Ok("slept".into())
}

fn server(limits: HttpLimits) -> SagaServer {
    SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(slow)
        .http_limits(limits)
        .build()
        .expect("the server builds")
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("an HTTP client")
}

/// Opens a session as `who`; its id.
async fn open(url: &str, who: &str) -> String {
    let response = http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", who)
        .json(&json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "owners-test", "version": "0"}
            }
        }))
        .send()
        .await
        .expect("initialize is answered");
    let id = response
        .headers()
        .get("mcp-session-id")
        .and_then(|id| id.to_str().ok())
        .expect("a session id")
        .to_owned();
    let _ = response.text().await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let status = in_session(url, &id, who, reqwest::Method::POST, Some(&initialized)).await;
    assert!(status.is_success(), "initialized: {status}");
    id
}

async fn in_session(
    url: &str,
    id: &str,
    who: &str,
    method: reqwest::Method,
    body: Option<&Value>,
) -> reqwest::StatusCode {
    let mut request = http()
        .request(method, url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", id)
        .header("mcp-protocol-version", "2025-11-25")
        .header("authorization", who);
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .json(body);
    }
    let response = request.send().await.expect("answered");
    let status = response.status();
    if method_is_get(&response) {
        return status;
    }
    let _ = tokio::time::timeout(Duration::from_millis(500), response.text()).await;
    status
}

fn method_is_get(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"))
}

#[tokio::test]
async fn a_session_answers_only_to_the_principal_that_opened_it() {
    let running = serve_local(server(HttpLimits::default())).await;
    let url = format!("http://{}/mcp", running.addr);
    let id = open(&url, "Bearer alice").await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    for method in [
        reqwest::Method::POST,
        reqwest::Method::GET,
        reqwest::Method::DELETE,
    ] {
        let body = (method == reqwest::Method::POST).then_some(&list);
        let status = in_session(&url, &id, "Bearer mallory", method.clone(), body).await;
        assert_eq!(
            status,
            reqwest::StatusCode::NOT_FOUND,
            "{method} by another principal"
        );
    }
    // Alice's session is whole: she lists, then ends it; after that it is gone for her too.
    let status = in_session(
        &url,
        &id,
        "Bearer alice",
        reqwest::Method::POST,
        Some(&list),
    )
    .await;
    assert_eq!(status, reqwest::StatusCode::OK);
    let status = in_session(&url, &id, "Bearer alice", reqwest::Method::DELETE, None).await;
    assert!(status.is_success(), "{status}");
    let status = in_session(
        &url,
        &id,
        "Bearer alice",
        reqwest::Method::POST,
        Some(&list),
    )
    .await;
    assert_eq!(status, reqwest::StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_made_up_session_id_does_not_skip_the_request_slots() {
    let limits = HttpLimits::default()
        .max_concurrent_requests(1)
        .queue_timeout(Duration::from_millis(300));
    let running = serve_local(server(limits)).await;
    let url = format!("http://{}/mcp", running.addr);
    let call = |session: Option<&'static str>| {
        let url = url.clone();
        async move {
            let mut request = http()
                .post(&url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "slow");
            if let Some(session) = session {
                request = request.header("mcp-session-id", session);
            }
            request
                .json(
                    &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                        "name": "slow",
                        "arguments": {},
                        "_meta": {
                            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                            "io.modelcontextprotocol/clientCapabilities": {},
                        }
                    }}),
                )
                .send()
                .await
                .expect("answered")
                .status()
        }
    };
    // Both name a session nobody opened: each holds its slot while it runs, as any
    // request does, so the second waits for the only slot and is shed.
    let first = tokio::spawn(call(Some("made-up-session")));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let second = call(Some("another-made-up-session")).await;
    assert_eq!(second, reqwest::StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(first.await.expect("joins"), reqwest::StatusCode::OK);
}
