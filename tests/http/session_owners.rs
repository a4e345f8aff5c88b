//! A session (MCP 2025-11-25) belongs to the principal that opened it, and only a live
//! session of the caller's lets a request give back its slot while it waits: over real
//! HTTP, against a server on a loopback port.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use saga_examples::harness::http::{Call, Method, StatusCode, is_event_stream};
use saga_examples::harness::serving::{Running, serve_local};
use saga_examples::harness::session::{self, Session};
use saga_runtime::prelude::*;
use serde_json::{Value, json};

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

/// Opens a session as `who`; its id.
async fn open(url: &str, who: &str) -> String {
    Session::open_as(url, Some(who), json!({}))
        .await
        .id()
        .to_owned()
}

/// A request in the session `id` as `who`; its status (the body read, unless a stream).
async fn in_session(
    url: &str,
    id: &str,
    who: &str,
    method: Method,
    body: Option<&Value>,
) -> StatusCode {
    let mut request = session::in_session(url, id, Some(who)).method(method);
    request = match body {
        Some(body) => request.json(body),
        None => request.without("content-type"),
    };
    let response = request.response().await;
    let status = response.status();
    if is_event_stream(&response) {
        return status;
    }
    let _ = tokio::time::timeout(Duration::from_millis(500), response.text()).await;
    status
}

#[tokio::test]
async fn a_session_answers_only_to_the_principal_that_opened_it() {
    let running = serve_local(server(HttpLimits::default())).await;
    let url = format!("http://{}/mcp", running.addr);
    let id = open(&url, "Bearer alice").await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    for method in [Method::POST, Method::GET, Method::DELETE] {
        let body = (method == Method::POST).then_some(&list);
        let status = in_session(&url, &id, "Bearer mallory", method.clone(), body).await;
        assert_eq!(
            status,
            StatusCode::NOT_FOUND,
            "{method} by another principal"
        );
    }
    // Alice's session is whole: she lists, then ends it; after that it is gone for her too.
    let status = in_session(&url, &id, "Bearer alice", Method::POST, Some(&list)).await;
    assert_eq!(status, StatusCode::OK);
    let status = in_session(&url, &id, "Bearer alice", Method::DELETE, None).await;
    assert!(status.is_success(), "{status}");
    let status = in_session(&url, &id, "Bearer alice", Method::POST, Some(&list)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// A request's status, once it is answered.
type Status = Pin<Box<dyn Future<Output = StatusCode> + Send>>;

/// A server of one request slot, waiting `queue_timeout` for it; and a call of the slow
/// tool there, naming `session` if given.
async fn one_slot(queue_timeout: Duration) -> (Running, impl Fn(Option<&'static str>) -> Status) {
    let limits = HttpLimits::default()
        .max_concurrent_requests(1)
        .queue_timeout(queue_timeout);
    let running = serve_local(server(limits)).await;
    let addr = running.addr;
    let call = move |session: Option<&'static str>| -> Status {
        Box::pin(async move {
            let call = Call::new("slow", json!({})).capabilities(json!({}));
            let mut request = call.post(addr);
            if let Some(session) = session {
                request = request.header("mcp-session-id", session);
            }
            request.response().await.status()
        })
    };
    (running, call)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_made_up_session_id_does_not_skip_the_request_slots() {
    let (_running, call) = one_slot(Duration::from_millis(300)).await;
    // Both name a session nobody opened: each holds its slot while it runs, as any
    // request does, so the second waits for the only slot and is shed.
    let first = tokio::spawn(call(Some("made-up-session")));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let second = call(Some("another-made-up-session")).await;
    assert_eq!(second, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(first.await.expect("joins"), StatusCode::OK);
}

/// A request that finds every slot busy waits for one, and runs once it is free.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_waits_for_a_busy_slot_and_then_runs() {
    let (_running, call) = one_slot(Duration::from_secs(30)).await;
    // The first holds the only slot for its whole run (1.5 s); the second comes in
    // meanwhile, so it is served only by waiting for the slot.
    let first = tokio::spawn(call(None));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(call(None).await, StatusCode::OK);
    assert_eq!(first.await.expect("joins"), StatusCode::OK);
}
