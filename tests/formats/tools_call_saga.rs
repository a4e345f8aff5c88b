//! Seed 000, `tools/callSaga` / `tools/resumeSaga`: the proposal's six-message example,
//! replayed against the deploy example (`saga_examples::deploy`). Tokens and step ids are
//! compared by shape (the server chooses them); everything else must match the seed. The
//! messages travel with the envelope MCP 2026-07-28 requires of every request (`_meta`,
//! headers).

use std::net::SocketAddr;

use saga_examples::deploy;
use saga_examples::harness::http::{Call, Post, StatusCode, meta, request};
use saga_examples::harness::serving::{Running, serve_local};
use saga_runtime::prelude::*;
use serde_json::{Value, json};

async fn serve() -> Running {
    serve_local(deploy::server(KeyRing::ephemeral()).unwrap()).await
}

/// Sends a JSON-RPC request with the 2026-07-28 envelope; returns the `result`.
async fn send(addr: SocketAddr, id: &str, method: &str, params: Value) -> Value {
    let (status, reply) = send_raw(addr, id, method, params).await;
    assert!(status.is_success(), "{status}: {reply:#}");
    reply
        .get("result")
        .cloned()
        .unwrap_or_else(|| panic!("no result: {reply:#}"))
}

/// Sends a JSON-RPC request with the 2026-07-28 envelope; returns the HTTP status and the
/// whole reply.
async fn send_raw(
    addr: SocketAddr,
    id: &str,
    method: &str,
    mut params: Value,
) -> (StatusCode, Value) {
    params["_meta"] = meta(json!({"elicitation": {}, "sampling": {}}));
    let (status, reply) = Post::mcp(addr)
        .rpc(&request(id, method, params))
        .send()
        .await;
    assert_eq!(reply["id"], id, "{reply:#}");
    (status, reply)
}

/// A suspended result: the shape of the seed's, with `steps` of the given types; returns
/// the token and the steps.
#[track_caller]
fn suspended(result: &Value, types: &[&str]) -> (String, Vec<Value>) {
    assert_eq!(result["state"], "suspended", "{result:#}");
    let token = result["sagaToken"]
        .as_str()
        .expect("a sagaToken string")
        .to_owned();
    assert!(!token.is_empty());
    let steps = result["steps"].as_array().expect("steps").clone();
    let found: Vec<&str> = steps
        .iter()
        .map(|step| step["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(found, types, "{result:#}");
    for step in &steps {
        assert!(
            step["stepId"].as_str().is_some_and(|id| !id.is_empty()),
            "{step:#}"
        );
    }
    (token, steps)
}

/// `tools/callSaga` of the deploy tool as request `id`: the token and the steps of its
/// first suspension, which asks for the target.
async fn call_deploy(addr: SocketAddr, id: &str) -> (String, Vec<Value>) {
    let arguments = json!({"name": "complex_tool", "arguments": {"initial_arg": "value"}});
    let result = send(addr, id, "tools/callSaga", arguments).await;
    suspended(&result, &["elicitation"])
}

#[tokio::test]
async fn the_proposals_example_replays_against_deploy() {
    let server = serve().await;

    // 1 → 2: the call suspends for the elicitation of the seed.
    let (token_v1, steps) = call_deploy(server.addr, "client-req-1").await;
    assert_eq!(
        steps[0]["params"],
        json!({
            "message": "Please provide the deployment target:",
            "requestedSchema": {
                "type": "object",
                "properties": { "target": { "type": "string" } },
                "required": ["target"]
            }
        })
    );
    let elicitation_id = steps[0]["stepId"].clone();
    let elicitation = json!({
        "stepId": elicitation_id,
        "result": { "action": "accept", "content": { "target": "production" } }
    });

    // 3 → 4: resumed with the elicitation, it suspends for the seed's sampling.
    let result = send(
        server.addr,
        "client-req-2",
        "tools/resumeSaga",
        json!({"sagaToken": token_v1, "completedSteps": [elicitation]}),
    )
    .await;
    let (token_v2, steps) = suspended(&result, &["sampling"]);
    assert_ne!(token_v2, token_v1, "a new token every round");
    assert_eq!(
        steps[0]["params"],
        json!({
            "messages": [{
                "role": "user",
                "content": { "type": "text", "text": "Is deploying to 'production' safe right now?" }
            }],
            "maxTokens": 100
        })
    );
    let sampling = json!({
        "stepId": steps[0]["stepId"],
        "result": {
            "role": "assistant",
            "content": { "type": "text", "text": "Yes, all systems are green." },
            "model": "client-side-llm-v2"
        }
    });

    // 5 → 6: resumed with every step so far, it completes with the seed's text.
    let result = send(
        server.addr,
        "client-req-3",
        "tools/resumeSaga",
        json!({"sagaToken": token_v2, "completedSteps": [elicitation, sampling]}),
    )
    .await;
    assert_eq!(
        result["content"],
        json!([{ "type": "text", "text": "Deployment to production initiated successfully based on confirmation." }])
    );
    assert_ne!(result["isError"], true);
}

#[tokio::test]
async fn a_failed_step_reaches_the_tool_as_step_failed() {
    let server = serve().await;
    let (token, steps) = call_deploy(server.addr, "1").await;
    let failed =
        json!({"stepId": steps[0]["stepId"], "error": {"code": -1, "message": "user rejected"}});
    let result = send(
        server.addr,
        "2",
        "tools/resumeSaga",
        json!({"sagaToken": token, "completedSteps": [failed]}),
    )
    .await;
    assert_eq!(result["isError"], true, "{result:#}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("user rejected") && text.contains("-1"),
        "{text}"
    );
}

#[tokio::test]
async fn a_saga_token_is_not_a_request_state_and_a_forged_one_is_refused() {
    let server = serve().await;
    let (token, _) = call_deploy(server.addr, "1").await;
    for bad in [
        format!("{token}x"),
        token.replacen('.', "", 1),
        "bm9wZQ.abc".to_owned(),
        String::new(),
    ] {
        let params = json!({"sagaToken": bad, "completedSteps": [], "_meta": meta(json!({}))});
        let (_, reply) = Post::mcp(server.addr)
            .rpc(&request(9, "tools/resumeSaga", params))
            .send()
            .await;
        assert_eq!(reply["error"]["code"], -32602, "{bad}: {reply:#}");
        assert_eq!(
            reply["error"]["message"],
            saga_runtime::state::INVALID_STATE_MESSAGE
        );
    }
    // The same sealed state is not accepted as an MRTR requestState of tools/call: the
    // binding differs (method, and the arguments bound by tools/call).
    let (_, raw) = token.split_once('.').unwrap();
    let (_, reply) = Call::new("complex_tool", json!({"initial_arg": "value"}))
        .id(10)
        .state(raw)
        .send(server.addr)
        .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply:#}");
}

/// A tool removed from the build, kept only as a retired copy, still finishes the sagas of
/// the build before in this format.
#[tokio::test]
async fn a_retired_only_tool_resumes_its_saga_tokens() {
    let key = KeyRing::from_keys([[0x4d; 32]]).unwrap();
    let before = serve_local(deploy::server(key).unwrap()).await;
    let after = serve_local(
        SagaServer::builder()
            .keys(KeyRing::from_keys([[0x4d; 32]]).unwrap())
            .retired(deploy::complex_tool)
            .build()
            .unwrap(),
    )
    .await;
    let started = send(
        before.addr,
        "1",
        "tools/callSaga",
        json!({"name": "complex_tool", "arguments": {"initial_arg": "x"}}),
    )
    .await;
    let (token, steps) = suspended(&started, &["elicitation"]);
    let step_id = steps[0]["stepId"].as_str().unwrap().to_owned();
    let resumed = send(
        after.addr,
        "2",
        "tools/resumeSaga",
        json!({"sagaToken": token, "completedSteps": [{
            "stepId": step_id,
            "result": {"action": "accept", "content": {"target": "production"}}
        }]}),
    )
    .await;
    assert_eq!(resumed["state"], "suspended", "{resumed:#}");
    let asks_next = resumed["steps"]
        .as_array()
        .is_some_and(|steps| steps.iter().any(|step| step["type"] == "sampling"));
    assert!(
        asks_next,
        "the retired copy went on to the next round: {resumed:#}"
    );
}

/// A task-only tool, served with a task store.
#[saga_tool(task = "required")]
async fn long_job() -> Result<String, SagaError> {
    checkpoint().await;
    Ok("done".into())
}

/// `tools/callSaga` has no tasks: a task-only tool is refused with `-32021`, as
/// `tools/call` refuses it for a client without the tasks extension.
#[tokio::test]
async fn a_task_only_tool_is_refused_in_this_format() {
    let running = serve_local(
        SagaServer::builder()
            .keys(KeyRing::ephemeral())
            .tool(long_job)
            .tasks(TaskStore::memory())
            .build()
            .unwrap(),
    )
    .await;
    // The client declares elicitation and sampling, not the tasks extension.
    let (_, reply) = send_raw(
        running.addr,
        "1",
        "tools/callSaga",
        json!({"name": "long_job"}),
    )
    .await;
    assert_eq!(reply["error"]["code"], -32021, "{reply:#}");
}
