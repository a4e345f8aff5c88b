//! The whole HTTP path, in process: arbitrary bytes as the body of a POST to `/mcp`, with
//! the transport's headers, a wire format chosen by the first byte, and a real token
//! spliced in where the body says `TOKEN`. Every request takes the guard (limits, JSON
//! checks), the format's translation and rmcp's validation; nothing may panic, and
//! every answer must be a well-formed HTTP response.

#![no_main]

use std::sync::LazyLock;

use axum::body::Body;
use libfuzzer_sys::fuzz_target;
use saga_runtime::prelude::*;
use tower::ServiceExt as _;

#[derive(Elicit, Serialize, Deserialize)]
struct Target {
    target: String,
}

#[saga_tool]
async fn deploy(initial_arg: String) -> Result<String, SagaError> {
    let target: Target = elicit("Where?").await?;
    let verdict = sample(format!("Safe to deploy {initial_arg} to {}?", target.target)).await?;
    checkpoint().await;
    Ok(verdict.text().to_owned())
}

static SERVER: LazyLock<SagaServer> = LazyLock::new(|| {
    SagaServer::builder()
        .keys(KeyRing::from_keys([[5u8; 32]]).expect("a key"))
        .tool(deploy)
        .build()
        .expect("the server builds")
});

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
});

const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{}}}"#;

/// A real round-1 token, so that spliced bodies reach the saga's own checks.
static TOKEN: LazyLock<String> = LazyLock::new(|| {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"deploy","arguments":{{"initial_arg":"x"}},"_meta":{META}}}}}"#
    );
    let response = RUNTIME.block_on(post(None, body.into_bytes()));
    let value: serde_json::Value = serde_json::from_slice(&response).expect("JSON");
    value["result"]["requestState"]
        .as_str()
        .expect("a token")
        .to_owned()
});

async fn post(format: Option<&str>, body: Vec<u8>) -> Vec<u8> {
    let mut request = http::Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "deploy");
    if let Some(format) = format {
        request = request.header("mcp-result-format", format);
    }
    let request = request.body(Body::from(body)).expect("a request");
    let response = SERVER
        .router()
        .oneshot(request)
        .await
        .expect("the router is infallible");
    let status = response.status();
    assert!(!status.is_server_error() || status.as_u16() == 503, "HTTP {status}");
    axum::body::to_bytes(response.into_body(), 64 << 20)
        .await
        .expect("a readable body")
        .to_vec()
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let format = match selector % 4 {
        0 => None,
        1 => Some("dependent-requests"),
        2 => Some("resume-token"),
        _ => Some("something-else"),
    };
    let text = String::from_utf8_lossy(rest);
    let body = if selector & 4 != 0 {
        // A sound envelope around the input, so that it reaches the handler.
        let spliced = text.replace("TOKEN", &TOKEN).replace("META", META);
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"deploy","arguments":{{"initial_arg":"x"}},"_meta":{META},"requestState":"{}","inputResponses":{spliced}}}}}"#,
            &*TOKEN
        )
        .into_bytes()
    } else {
        rest.to_vec()
    };
    RUNTIME.block_on(post(format, body));
});
