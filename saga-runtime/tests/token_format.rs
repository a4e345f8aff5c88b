//! Token formats across a rolling deploy: a server that seals 0x40
//! (`SagaServerBuilder::token_format(TokenFormat::Fixed)`, for a fleet that still runs
//! builds before 0x50) and one that seals 0x50 (the default) finish each other's sagas,
//! round by round, in either order: every build opens both formats, and each token's
//! plaintext is read in its own format's layout.

use rmcp::model::{CallToolResponse, InputResponses};
use saga_runtime::engine::{Call, SagaContext};
use saga_runtime::prelude::*;
use saga_runtime::serve::SagaTools;
use saga_runtime::state::{TokenFormat, TokenHeader};
use serde_json::json;

#[derive(Debug, Elicit, Serialize, Deserialize)]
struct Target {
    target: String,
}

/// Two questions, a sample between them, and a kept local: a head with pending requests
/// and a restated digest, and a state, in every token.
#[saga_tool]
async fn rollout(service: String) -> Result<String, SagaError> {
    let first: Target = elicit("Where first?").await?;
    let verdict = sample(format!("Is {} safe for {service}?", first.target))
        .max_tokens(10)
        .await?;
    let second: Target = elicit("And then?").await?;
    Ok(format!(
        "{service}: {} then {} ({})",
        first.target,
        second.target,
        verdict.text()
    ))
}

fn tools(format: Option<TokenFormat>) -> SagaTools {
    let mut builder = SagaTools::builder()
        .keys(KeyRing::from_keys([[0x5a; 32]]).expect("a key"))
        .tool(rollout);
    if let Some(format) = format {
        builder = builder.token_format(format);
    }
    builder.build().expect("builds")
}

fn cx() -> SagaContext {
    let caps: rmcp::model::ClientCapabilities =
        serde_json::from_value(json!({"elicitation": {}, "sampling": {}})).expect("caps");
    SagaContext::new("alice").with_capabilities(caps)
}

fn answers(round: usize, key: &str) -> InputResponses {
    let answer = match round {
        1 => json!({"action": "accept", "content": {"target": "eu"}}),
        2 => json!({"role": "assistant", "content": {"type": "text", "text": "yes"},
                    "model": "m", "stopReason": "endTurn"}),
        _ => json!({"action": "accept", "content": {"target": "us"}}),
    };
    serde_json::from_value(json!({ key: answer })).expect("answers")
}

/// Runs the saga's four rounds, round `n` on `servers[n % servers.len()]`; returns the
/// final text and the format of each token handed out.
async fn run(servers: &[&SagaTools]) -> (String, Vec<Option<TokenFormat>>) {
    let arguments = json!({"service": "api"}).as_object().cloned();
    let mut call = Call::tool("rollout", arguments.clone());
    let mut formats = Vec::new();
    for round in 0..4 {
        let response = servers[round % servers.len()]
            .run(call, &cx())
            .await
            .expect("the round runs");
        match response {
            CallToolResponse::InputRequired(result) => {
                let token = result.request_state.expect("a token");
                formats.push(TokenHeader::parse(&token).expect("a header").format());
                let key = result
                    .input_requests
                    .and_then(|requests| requests.into_keys().next())
                    .expect("one request");
                call = Call {
                    request_state: Some(token),
                    input_responses: Some(answers(round + 1, &key)),
                    ..Call::tool("rollout", arguments.clone())
                };
            }
            CallToolResponse::Complete(result) => {
                let text = result.content[0].as_text().expect("text").text.clone();
                return (text, formats);
            }
            other => panic!("round {round}: {other:?}"),
        }
    }
    panic!("four rounds and no result");
}

#[tokio::test]
async fn servers_sealing_either_format_finish_each_others_sagas() {
    let (old, new) = (tools(Some(TokenFormat::Fixed)), tools(None));
    let done = "api: eu then us (yes)";
    let (text, formats) = run(&[&new]).await;
    assert_eq!(text, done);
    assert_eq!(formats, [Some(TokenFormat::Compact); 3]);
    let (text, formats) = run(&[&old]).await;
    assert_eq!(text, done);
    assert_eq!(formats, [Some(TokenFormat::Fixed); 3]);
    // Alternating, starting on either: each round reads the token of the other format.
    let (text, formats) = run(&[&old, &new]).await;
    assert_eq!(text, done);
    assert_eq!(
        formats,
        [
            Some(TokenFormat::Fixed),
            Some(TokenFormat::Compact),
            Some(TokenFormat::Fixed)
        ]
    );
    let (text, _) = run(&[&new, &old]).await;
    assert_eq!(text, done);
}
