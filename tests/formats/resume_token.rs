//! Seed 003, `resumeToken` / `nextResumeToken`: a long computation split by
//! `checkpoint()`, driven by a client without MRTR, which selects the format with the
//! header `Mcp-Result-Format: resume-token`.

use std::net::SocketAddr;

use saga_examples::harness::http::{Post, request, with_meta};
use saga_examples::harness::serving::{Running, serve_local};
use saga_runtime::prelude::*;
use serde_json::{Value, json};

/// Sums `0..n`, yielding every `every` steps so no request holds the server long.
#[saga_tool]
async fn sum_to(n: u64, every: u64) -> Result<String, SagaError> {
    let mut total: u64 = 0;
    for i in 0..n {
        total += i;
        if every > 0 && (i + 1) % every == 0 {
            checkpoint().await;
        }
    }
    Ok(format!("sum of 0..{n} = {total}"))
}

/// Asks the user, which this format cannot carry.
#[saga_tool]
async fn asks() -> Result<String, SagaError> {
    let name: String = elicit("Name?").await?;
    Ok(name)
}

async fn serve() -> (SocketAddr, Running) {
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(sum_to)
        .tool(asks)
        .build()
        .unwrap();
    let running = serve_local(server).await;
    (running.addr, running)
}

/// A `tools/call` of a 2026-07-28 client that selects the `resume-token` format.
async fn call(addr: SocketAddr, id: u64, params: Value) -> Value {
    let message = with_meta(request(id, "tools/call", params));
    let (_, reply) = Post::mcp(addr)
        .rpc(&message)
        .header("mcp-result-format", "resume-token")
        .send()
        .await;
    reply
}

#[tokio::test]
async fn a_long_computation_finishes_through_resume_tokens() {
    let (addr, _stop) = serve().await;
    let arguments = json!({"n": 1000, "every": 100});
    let mut params = json!({"name": "sum_to", "arguments": arguments});
    let mut tokens = Vec::new();
    let text = loop {
        let reply = call(addr, tokens.len() as u64, params.clone()).await;
        let result = &reply["result"];
        assert!(result.is_object(), "{reply:#}");
        match result.get("nextResumeToken") {
            Some(token) => {
                let token = token.as_str().expect("a string token").to_owned();
                assert!(!tokens.contains(&token), "every resume gets a fresh token");
                tokens.push(token.clone());
                params["resumeToken"] = json!(token);
            }
            None => break result["content"][0]["text"].as_str().unwrap().to_owned(),
        }
        assert!(tokens.len() <= 20, "the computation never finished");
    };
    assert_eq!(text, "sum of 0..1000 = 499500");
    assert_eq!(tokens.len(), 10, "one resume per checkpoint");

    // The token may also travel as a tool argument, as the proposal allows.
    let reply = call(
        addr,
        99,
        json!({"name": "sum_to", "arguments": {"n": 3, "every": 1}}),
    )
    .await;
    let token = reply["result"]["nextResumeToken"].as_str().unwrap();
    let reply = call(
        addr,
        100,
        json!({"name": "sum_to", "arguments": {"n": 3, "every": 1, "resumeToken": token}}),
    )
    .await;
    assert!(reply["result"]["nextResumeToken"].is_string(), "{reply:#}");
}

#[tokio::test]
async fn invalid_resume_tokens_are_invalid_params() {
    let (addr, _stop) = serve().await;
    let first = call(
        addr,
        1,
        json!({"name": "sum_to", "arguments": {"n": 10, "every": 5}}),
    )
    .await;
    let token = first["result"]["nextResumeToken"]
        .as_str()
        .unwrap()
        .to_owned();
    for bad in [
        format!("{token}A"),
        "garbage".to_owned(),
        token[..token.len() / 2].to_owned(),
    ] {
        let reply = call(
            addr,
            2,
            json!({"name": "sum_to", "arguments": {"n": 10, "every": 5}, "resumeToken": bad}),
        )
        .await;
        assert_eq!(reply["error"]["code"], -32602, "{reply:#}");
        assert_eq!(
            reply["error"]["message"],
            saga_runtime::state::INVALID_STATE_MESSAGE
        );
    }
    // Changed parameters make the token invalid too: it is bound to the call.
    let reply = call(
        addr,
        3,
        json!({"name": "sum_to", "arguments": {"n": 11, "every": 5}, "resumeToken": token}),
    )
    .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply:#}");
    let reply = call(
        addr,
        4,
        json!({"name": "sum_to", "arguments": {"n": 10, "every": 5}, "resumeToken": 7}),
    )
    .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply:#}");
}

#[tokio::test]
async fn a_tool_that_asks_is_refused_in_this_format() {
    let (addr, _stop) = serve().await;
    let reply = call(addr, 1, json!({"name": "asks"})).await;
    assert_eq!(reply["error"]["code"], -32600, "{reply:#}");
}
