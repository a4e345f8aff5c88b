//! What `cargo run --example quickstart` runs (`quickstart/examples/quickstart.rs`): the
//! deploy tool, and a client that speaks MCP 2026-07-28 over plain HTTP/1 with canned
//! answers, as `docs/guide/src/wire.md` does by hand.

#![allow(deprecated)] // sampling: deprecated in 2026-07-28, still served

#[path = "../../examples/support/deploy_tool.rs"]
pub mod deploy;

use anyhow::Context as _;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use serde_json::{Value, json};

/// The `_meta` MCP 2026-07-28 asks of every request: the version, and the capabilities
/// the deploy saga needs.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}}
    })
}

/// POSTs `message` to `http://{addr}/mcp` with the headers 2026-07-28 asks for, and reads
/// the JSON reply.
pub async fn post(addr: &str, message: &Value) -> anyhow::Result<Value> {
    let stream = tokio::net::TcpStream::connect(addr).await?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let mut request = hyper::Request::post("/mcp")
        .header("host", addr)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28");
    if let Some(method) = message["method"].as_str() {
        request = request.header("mcp-method", method);
    }
    if let Some(name) = message["params"]["name"].as_str() {
        request = request.header("mcp-name", name);
    }
    let request = request.body(Full::new(Bytes::from(serde_json::to_vec(message)?)))?;
    let response = sender.send_request(request).await?;
    let status = response.status();
    let body = response.into_body().collect().await?.to_bytes();
    serde_json::from_slice(&body)
        .with_context(|| format!("{status}: {}", String::from_utf8_lossy(&body)))
}

/// The answers a person and an LLM would give the deploy saga: the target `production`,
/// and a yes.
pub fn fulfil(requests: &serde_json::Map<String, Value>) -> Value {
    let answers: serde_json::Map<String, Value> = requests
        .iter()
        .map(|(key, request)| {
            let answer = match request["method"].as_str() {
                Some("elicitation/create") => {
                    json!({"action": "accept", "content": {"target": "production"}})
                }
                Some("sampling/createMessage") => json!({
                    "role": "assistant",
                    "model": "quickstart",
                    "content": {"type": "text", "text": "Yes, all systems are green."}
                }),
                _ => Value::Null,
            };
            (key.clone(), answer)
        })
        .collect();
    Value::Object(answers)
}
