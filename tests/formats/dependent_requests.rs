//! Seed 001, `dependent_requests` / `dependent_responses`: the proposal's example,
//! replayed against the weather example (`saga_examples::weather`). A client selects the
//! format with the header `Mcp-Result-Format: dependent-requests`.

use std::net::SocketAddr;

use saga_examples::harness::http::{Post, StatusCode, with_meta};
use saga_examples::harness::serving::{Running, serve_local};
use saga_examples::weather;
use saga_runtime::prelude::*;
use serde_json::{Value, json};

async fn serve() -> (SocketAddr, Running) {
    let running = serve_local(weather::server(KeyRing::ephemeral()).unwrap()).await;
    (running.addr, running)
}

/// Sends `body` as a 2026-07-28 client would, selecting the format when `select`.
async fn post(addr: SocketAddr, body: &Value, select: bool) -> (StatusCode, Value) {
    let format = if select { "dependent-requests" } else { "" };
    Post::mcp(addr)
        .rpc(&with_meta(body.clone()))
        .header("mcp-result-format", format)
        .send()
        .await
}

fn close(a: &Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 1e-6)
}

#[tokio::test]
async fn the_proposals_example_replays_against_weather() {
    let (addr, _stop) = serve().await;

    // The seed's first message, as written.
    let call = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "get_weather", "arguments": {"location": "New York"}}
    });
    let (status, reply) = post(addr, &call, true).await;
    assert_eq!(status, 200);
    assert_eq!(reply["id"], 2);
    assert!(reply.get("result").is_none(), "{reply:#}");
    let requests = &reply["dependent_requests"];
    assert_eq!(
        requests["github_login"],
        json!({
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Please provide your GitHub username",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
            }
        })
    );
    let sampling = &requests["capital_of_france"];
    assert_eq!(sampling["method"], "sampling/createMessage");
    let params = &sampling["params"];
    assert_eq!(
        params["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}])
    );
    assert_eq!(
        params["modelPreferences"]["hints"],
        json!([{"name": "claude-3-sonnet"}])
    );
    assert!(
        close(&params["modelPreferences"]["intelligencePriority"], 0.8),
        "{params:#}"
    );
    assert!(
        close(&params["modelPreferences"]["speedPriority"], 0.5),
        "{params:#}"
    );
    assert_eq!(params["systemPrompt"], "You are a helpful assistant.");
    assert_eq!(params["maxTokens"], 100);
    assert_eq!(requests.as_object().unwrap().len(), 2);

    // The seed's retry: the same call plus the responses, keyed as asked.
    let retry = json!({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "get_weather", "arguments": {"location": "New York"}},
        "dependent_responses": {
            "github_login": {"result": {"action": "accept", "content": {"name": "octocat"}}},
            "capital_of_france": {"result": {
                "role": "assistant",
                "content": {"type": "text", "text": "The capital of France is Paris."},
                "model": "claude-3-sonnet-20240307",
                "stopReason": "endTurn"
            }}
        }
    });
    let (status, reply) = post(addr, &retry, true).await;
    assert_eq!(status, 200);
    assert_eq!(reply["id"], 3);
    assert_eq!(
        reply["result"]["content"],
        json!([{"type": "text", "text": "Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy"}])
    );
    assert_eq!(reply["result"]["isError"], false);
}

#[tokio::test]
async fn partial_responses_ask_for_the_rest_and_bad_ones_are_errors() {
    let (addr, _stop) = serve().await;
    let partial = json!({
        "jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "get_weather", "arguments": {"location": "Paris"}},
        "dependent_responses": {"github_login": {"result": {"action": "accept", "content": {"name": "octocat"}}}}
    });
    let (_, reply) = post(addr, &partial, true).await;
    assert!(
        reply["dependent_requests"]["capital_of_france"].is_object(),
        "{reply:#}"
    );

    let malformed = json!({
        "jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "get_weather", "arguments": {"location": "Paris"}},
        "dependent_responses": {"github_login": {"nothing": true}}
    });
    let (_, reply) = post(addr, &malformed, true).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply:#}");

    let unknown =
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "nope"}});
    let (_, reply) = post(addr, &unknown, true).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply:#}");
}

#[tokio::test]
async fn without_the_header_the_endpoint_speaks_mcp_2026() {
    let (addr, _stop) = serve().await;
    // The same message without the header is answered in MRTR's own form.
    let call = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "get_weather", "arguments": {"location": "New York"}}
    });
    let (status, reply) = post(addr, &call, false).await;
    assert_eq!(status, 200, "{reply:#}");
    assert!(
        reply.get("dependent_requests").is_none(),
        "{status} {reply:#}"
    );
    assert_eq!(reply["result"]["resultType"], "input_required", "{reply:#}");
    assert!(reply["result"]["inputRequests"]["github_login"].is_object());
}

/// The format rides on the 2026-07-28 transport and passes its checks like any call: a
/// message without the transport's headers and `_meta` is refused before the tool runs.
#[tokio::test]
async fn the_format_passes_the_transports_checks() {
    let (addr, _stop) = serve().await;
    let call = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "get_weather", "arguments": {"location": "New York"}}
    });
    let (status, reply) = Post::mcp(addr)
        .without("mcp-protocol-version")
        .header("mcp-result-format", "dependent-requests")
        .json(&call)
        .send()
        .await;
    assert!(status.as_u16() >= 400, "{status} {reply:#}");
    assert!(reply.get("dependent_requests").is_none(), "{reply:#}");
}

/// A seed-format client that cannot sample, against a server with a model of its own: it is
/// asked only for the form, and the retry that answers it completes, the model having
/// answered the sample (`saga_runtime::model`).
#[tokio::test]
async fn a_client_that_cannot_sample_is_asked_only_its_part() {
    use saga_examples::harness::http::meta;
    use saga_examples::harness::openai::FakeOpenAi;
    let provider = FakeOpenAi::start("sk-seed").await;
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(weather::get_weather)
        .model(
            saga_runtime::model::OpenAiCompatible::new(&provider.base_url, "sk-seed", "m")
                .expect("a client"),
        )
        .build()
        .expect("builds");
    let running = serve_local(server).await;
    let with_form_only = |mut body: Value| {
        body["params"]["_meta"] = meta(json!({"elicitation": {}}));
        body
    };
    let call = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "get_weather", "arguments": {"location": "New York"}}
    });
    let (_, reply) = post(running.addr, &with_form_only(call), true).await;
    let requests = reply["dependent_requests"].as_object().expect("requests");
    assert_eq!(
        requests.keys().collect::<Vec<_>>(),
        ["github_login"],
        "{reply:#}"
    );
    assert!(
        provider.requests().is_empty(),
        "asked before the client answered"
    );
    let retry = json!({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "get_weather", "arguments": {"location": "New York"}},
        "dependent_responses": {
            "github_login": {"result": {"action": "accept", "content": {"name": "octocat"}}}
        }
    });
    let (_, reply) = post(running.addr, &with_form_only(retry), true).await;
    assert_eq!(
        reply["result"]["content"][0]["text"],
        "Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy",
        "{reply:#}"
    );
    let sent = provider.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0]["messages"][0]["content"],
        "You are a helpful assistant."
    );
}
