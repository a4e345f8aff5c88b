//! Checkpoints over raw HTTP: a saga that yields with only a `requestState` after each
//! unit of work, and a client that retries with nothing but that token.

use std::net::SocketAddr;

use saga_examples::harness::http::{Call, StatusCode};
use saga_examples::harness::serving::{Running, serve_local};
use saga_runtime::engine::{Answers, SagaContext, SagaTool, Step, parse_arguments};
use saga_runtime::rmcp::ErrorData;
use saga_runtime::rmcp::handler::server::common::schema_for_type;
use saga_runtime::rmcp::model::{JsonObject, Tool};
use saga_runtime::serve::SagaServer;
use saga_runtime::state::{INVALID_STATE_MESSAGE, KeyRing};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const TOOL: &str = "count_to";

/// `count_to`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct CountArgs {
    /// Where to stop.
    n: u32,
}

/// Where the count is.
#[derive(Debug, Serialize, Deserialize)]
struct Count {
    reached: u32,
    n: u32,
}

/// Counts to `n`, one increment per round, yielding a checkpoint after each.
struct CountTo;

impl SagaTool for CountTo {
    type State = Count;

    fn tool(&self) -> Tool {
        Tool::new(
            TOOL,
            "Counts to n, one step per round.",
            schema_for_type::<CountArgs>(),
        )
    }

    fn start(&self, arguments: JsonObject) -> Result<Count, ErrorData> {
        let CountArgs { n } = parse_arguments(arguments)?;
        Ok(Count { reached: 0, n })
    }

    async fn step(&self, state: Count, answers: Answers, _cx: &SagaContext) -> Step<Count> {
        if !answers.is_empty() {
            return Step::done(Err::<String, _>("a checkpoint round has no answers"));
        }
        if state.reached >= state.n {
            return Step::done(format!("counted to {}", state.n));
        }
        Step::checkpoint(Count {
            reached: state.reached + 1,
            n: state.n,
        })
    }
}

async fn serve() -> Running {
    serve_local(
        SagaServer::builder()
            .keys(KeyRing::from_keys([[7u8; 32]]).expect("one fixed key is a valid ring"))
            .tool(CountTo)
            .build()
            .expect("the server builds"),
    )
    .await
}

/// One `tools/call` of `count_to` over raw HTTP; returns the status and the parsed body.
async fn call(
    addr: SocketAddr,
    n: u32,
    capabilities: Value,
    request_state: Option<&str>,
) -> (StatusCode, Value) {
    let mut call = Call::new(TOOL, json!({"n": n})).capabilities(capabilities);
    if let Some(token) = request_state {
        call = call.state(token);
    }
    call.send(addr).await
}

/// A checkpoint: `{"resultType": "input_required", "requestState": ...}` and nothing else
/// (no `inputRequests`); returns the token.
#[track_caller]
fn checkpoint(status: StatusCode, body: &Value) -> String {
    assert_eq!(status, StatusCode::OK, "{body:#}");
    assert!(body.get("error").is_none(), "{body:#}");
    let result = body["result"].as_object().expect("a result object");
    assert_eq!(result["resultType"], "input_required", "{body:#}");
    assert!(!result.contains_key("inputRequests"), "{body:#}");
    let mut keys: Vec<&str> = result.keys().map(String::as_str).collect();
    keys.retain(|key| *key != "_meta");
    keys.sort_unstable();
    assert_eq!(keys, ["requestState", "resultType"], "{body:#}");
    let token = result["requestState"]
        .as_str()
        .expect("a string requestState");
    assert!(!token.is_empty());
    token.to_owned()
}

/// The final result's text.
#[track_caller]
fn done(status: StatusCode, body: &Value) -> String {
    assert_eq!(status, StatusCode::OK, "{body:#}");
    let result = &body["result"];
    assert_eq!(result["resultType"], "complete", "{body:#}");
    assert!(result.get("requestState").is_none(), "{body:#}");
    assert_ne!(result["isError"], true, "{body:#}");
    result["content"][0]["text"]
        .as_str()
        .expect("a text result")
        .to_owned()
}

async fn count(addr: SocketAddr, n: u32, capabilities: Value) -> (Vec<String>, String) {
    let mut tokens = Vec::new();
    loop {
        let (status, body) = call(
            addr,
            n,
            capabilities.clone(),
            tokens.last().map(String::as_str),
        )
        .await;
        if body["result"]["resultType"] == "complete" {
            return (tokens, done(status, &body));
        }
        tokens.push(checkpoint(status, &body));
        assert!(
            tokens.len() <= n as usize,
            "more checkpoints than increments"
        );
    }
}

#[tokio::test]
async fn counts_to_five_in_five_checkpoints() {
    let server = serve().await;
    let caps = json!({"elicitation": {}, "sampling": {}});
    let (tokens, text) = count(server.addr, 5, caps).await;
    assert_eq!(tokens.len(), 5);
    assert_eq!(text, "counted to 5");
    let mut distinct = tokens.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        tokens.len(),
        "every checkpoint issues a new token"
    );
}

#[tokio::test]
async fn checkpoints_need_no_capability() {
    let server = serve().await;
    let (tokens, text) = count(server.addr, 3, json!({})).await;
    assert_eq!(tokens.len(), 3);
    assert_eq!(text, "counted to 3");
}

#[tokio::test]
async fn counting_to_zero_finishes_at_once() {
    let server = serve().await;
    let (status, body) = call(server.addr, 0, json!({}), None).await;
    assert_eq!(done(status, &body), "counted to 0");
}

#[tokio::test]
async fn checkpoint_token_is_bound_to_the_arguments() {
    let server = serve().await;
    let (status, body) = call(server.addr, 5, json!({}), None).await;
    let token = checkpoint(status, &body);
    let (status, body) = call(server.addr, 6, json!({}), Some(&token)).await;
    assert_eq!(status, StatusCode::OK, "{body:#}");
    assert!(body.get("result").is_none(), "{body:#}");
    assert_eq!(body["error"]["code"], -32602, "{body:#}");
    assert_eq!(body["error"]["message"], INVALID_STATE_MESSAGE, "{body:#}");
}

#[tokio::test]
async fn bad_arguments_are_invalid_params() {
    let server = serve().await;
    let (status, body) = Call::new(TOOL, json!({"n": "five"}))
        .capabilities(json!({}))
        .send(server.addr)
        .await;
    assert!(!status.is_server_error());
    assert!(body.get("result").is_none(), "{body:#}");
    assert_eq!(body["error"]["code"], -32602, "{body:#}");
}
