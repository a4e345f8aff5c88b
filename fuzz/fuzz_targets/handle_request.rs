//! The request handler: a JSON-RPC frame, then a `tools/call` of a real saga with an
//! arbitrary `requestState`, arguments and `inputResponses`. Nothing a client sends may
//! panic the server.
//!
//! The first byte picks the mode: a raw frame, or a real first round (so the fuzzer holds
//! a valid token) followed by the rest of the input as the retry's `inputResponses`, or as
//! a mutated token.

#![no_main]
#![allow(deprecated)] // sampling and roots: deprecated in MCP 2026-07-28, still served

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use saga_runtime::engine::{Call, SagaContext};
use saga_runtime::prelude::*;
use saga_runtime::rmcp::model::{CallToolResponse, ClientCapabilities};
use serde_json::Value;

#[derive(Elicit, Serialize, Deserialize)]
struct Target {
    target: String,
}

#[saga_tool]
async fn deploy(initial_arg: String) -> Result<String, SagaError> {
    let target: Target = elicit("Where?").await?;
    let verdict = sample(format!(
        "Safe to deploy {} to {}?",
        initial_arg, target.target
    ))
    .await?;
    let mut log = Vec::new();
    for round in 0..2 {
        let ok: bool = elicit(format!("Confirm {round}?")).await?;
        log.push(ok);
    }
    Ok(format!("{} {:?}", verdict.text(), log))
}

static TOOLS: LazyLock<SagaTools> = LazyLock::new(|| {
    SagaServer::builder()
        .keys(KeyRing::from_keys([[3u8; 32]]).expect("a key"))
        .tool(deploy)
        .build()
        .expect("the server builds")
        .tools()
        .clone()
});

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
});

fn context() -> SagaContext {
    SagaContext::new("fuzzer").with_capabilities(
        ClientCapabilities::builder()
            .enable_elicitation()
            .enable_sampling()
            .enable_roots()
            .build(),
    )
}

fn call_of(params: &Value) -> Call {
    Call {
        method: "tools/call".into(),
        name: params["name"].as_str().unwrap_or("deploy").to_owned(),
        arguments: params["arguments"].as_object().cloned(),
        request_state: params["requestState"].as_str().map(str::to_owned),
        input_responses: params["inputResponses"]
            .as_object()
            .map(|map| map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        ..Call::default()
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let cx = context();
    RUNTIME.block_on(async {
        match mode % 3 {
            // A raw frame, as the transport would hand it over.
            0 => {
                if let Ok(frame) = serde_json::from_slice::<Value>(rest) {
                    let _ = TOOLS.run(call_of(&frame["params"]), &cx).await;
                }
            }
            // A real first round, then the rest as the answers of the retry.
            1 => {
                let arguments = serde_json::json!({"initial_arg": "svc"})
                    .as_object()
                    .cloned();
                let start = Call {
                    arguments: arguments.clone(),
                    ..Call::tool("deploy", arguments.clone())
                };
                let Ok(CallToolResponse::InputRequired(round)) = TOOLS.run(start, &cx).await else {
                    panic!("the first round asks");
                };
                let answers = serde_json::from_slice::<Value>(rest)
                    .ok()
                    .and_then(|value| value.as_object().cloned())
                    .map(|map| map.into_iter().collect());
                let retry = Call {
                    request_state: round.request_state,
                    input_responses: answers,
                    ..Call::tool("deploy", arguments)
                };
                let _ = TOOLS.run(retry, &cx).await;
            }
            // A real token with the rest spliced into it.
            _ => {
                let arguments = serde_json::json!({"initial_arg": "svc"})
                    .as_object()
                    .cloned();
                let Ok(CallToolResponse::InputRequired(round)) = TOOLS
                    .run(Call::tool("deploy", arguments.clone()), &cx)
                    .await
                else {
                    panic!("the first round asks");
                };
                let mut token = round.request_state.unwrap_or_default().into_bytes();
                for (i, byte) in rest.iter().enumerate() {
                    if token.is_empty() {
                        break;
                    }
                    let at = (*byte as usize + i * 31) % token.len();
                    token[at] = *byte;
                }
                let token = String::from_utf8_lossy(&token).into_owned();
                let retry = Call {
                    request_state: Some(token),
                    ..Call::tool("deploy", arguments)
                };
                if let Ok(CallToolResponse::Complete(result)) = TOOLS.run(retry, &cx).await {
                    panic!("a spliced token completed the saga: {result:?}");
                }
            }
        }
    });
});
