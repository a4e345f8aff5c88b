//! Seed 002 (SEP-975) for a 2026-07-28 client without a session: `resumableRequests` in
//! the request's own `_meta` capabilities streams the call (a resume policy at each
//! checkpoint, then the result), and after a `kill -9` a fresh process continues it from
//! the last token with `requests/resume`; `requests/getStatus` answers from the token.

use saga_examples::harness::http::{Post, meta};
use saga_examples::harness::journal::Journal;
use saga_examples::harness::process::Spawn;
use saga_examples::harness::session::Events;
use serde_json::{Value, json};

const KEY_HEX: &str = "7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c";

/// A stateless 2026-07-28 request declaring `capabilities` in its `_meta`.
async fn post(url: &str, mut message: Value, capabilities: Value) -> reqwest::Response {
    message["params"]["_meta"] = meta(capabilities);
    Post::to(url).rpc(&message).response().await
}

fn migrate(id: &str, tables: u32) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "migrate", "arguments": {"tables": tables, "millis_per_table": 150}}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_call_killed_mid_checkpoints_completes_on_a_fresh_process() {
    let journal = Journal::new("seed002-stateless");
    let tables = 8u32;
    // Declared at the top level of the capabilities, as seed 002 writes it.
    let capabilities = json!({"resumableRequests": {}});

    let mut first = journal.migrate(KEY_HEX).start();
    let url = format!("http://{}/mcp", first.addr);
    let response = post(&url, migrate("m-1", tables), capabilities.clone()).await;
    assert_eq!(
        response.headers()["content-type"],
        "text/event-stream",
        "one streamed response"
    );
    let mut stream = Events::new(response);
    let token = stream.policies(4, "m-1").await;
    first.kill_9();
    drop(stream);
    let done_before = journal.tables_done_at_least("migration", 3);

    let second = journal.migrate(KEY_HEX).start();
    let url = format!("http://{}/mcp", second.addr);

    // The status, from the token alone.
    let status = post(
        &url,
        json!({"jsonrpc": "2.0", "id": 99, "method": "requests/getStatus",
               "params": {"requestId": "m-1", "resumeToken": token}}),
        capabilities.clone(),
    )
    .await
    .json::<Value>()
    .await
    .expect("JSON");
    assert_eq!(status["result"]["status"], "processing", "{status}");
    assert_eq!(status["result"]["hasInputRequest"], false, "{status}");

    // Under another id the token is refused.
    let foreign = post(
        &url,
        json!({"jsonrpc": "2.0", "id": "m-2", "method": "requests/resume",
               "params": {"resumeToken": token}}),
        capabilities.clone(),
    )
    .await
    .json::<Value>()
    .await
    .expect("JSON");
    assert_eq!(foreign["error"]["code"], -32602, "{foreign}");

    let response = post(
        &url,
        json!({"jsonrpc": "2.0", "id": "m-1", "method": "requests/resume",
               "params": {"resumeToken": token}}),
        capabilities.clone(),
    )
    .await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut stream = Events::new(response);
    let (policy, done) = stream.next_after_policy().await;
    assert!(
        policy.is_some(),
        "the resumed call streams its policies too"
    );
    assert_eq!(done["id"], "m-1", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"], "migrated 8 tables: [0, 1, 2, 3, 4, 5, 6, 7]",
        "{done}"
    );

    let kept = 3; // the fourth policy comes after the third table's checkpoint
    journal.assert_resumed("migration", tables, kept, done_before);
}

/// A client that does not declare the capability gets one JSON message as before, and a call
/// that asks ends its stream with `input_required`, whose state any replica continues.
#[tokio::test]
async fn without_the_capability_mrtr_and_an_ask_ends_the_stream_with_input_required() {
    let server = Spawn::new("migrate", KEY_HEX).start();
    let url = format!("http://{}/mcp", server.addr);
    let plain = post(&url, migrate("p-1", 2), json!({})).await;
    assert_eq!(plain.headers()["content-type"], "application/json");
    let plain = plain.json::<Value>().await.expect("one JSON message");
    assert_eq!(plain["result"]["resultType"], "complete", "{plain}");

    let response = post(
        &url,
        json!({"jsonrpc": "2.0", "id": "a-1", "method": "tools/call",
               "params": {"name": "approve_migration", "arguments": {"tables": 3}}}),
        json!({"elicitation": {}, "experimental": {"resumableRequests": {}}}),
    )
    .await;
    let mut stream = Events::new(response);
    let (policy, asked) = stream.next_after_policy().await;
    assert!(
        policy.is_some(),
        "a policy at the checkpoint before the question"
    );
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"].as_str().expect("a state");
    let key = asked["result"]["inputRequests"]
        .as_object()
        .and_then(|requests| requests.keys().next().cloned())
        .expect("a request");

    // The state is an ordinary MRTR state: answered on a fresh process, the call ends.
    let answered = post(
        &url,
        json!({"jsonrpc": "2.0", "id": "a-2", "method": "tools/call",
               "params": {"name": "approve_migration", "arguments": {"tables": 3},
                          "requestState": state,
                          "inputResponses": {key: {"action": "accept", "content": {"approve": true}}}}}),
        json!({"elicitation": {}}),
    )
    .await
    .json::<Value>()
    .await
    .expect("JSON");
    assert_eq!(
        answered["result"]["content"][0]["text"], "3 tables approved",
        "{answered}"
    );
}
