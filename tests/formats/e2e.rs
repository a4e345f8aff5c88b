#![allow(deprecated)] // sampling is deprecated in MCP 2026-07-28, still served

//! The deploy saga driven end to end by rmcp's client, which fulfils MRTR rounds itself,
//! over Streamable HTTP and over stdio.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use saga_examples::client::{ScriptedClient, accept, llm_says};
use saga_examples::harness::process::example_binary;
use saga_examples::harness::serving::{Running, serve_local};
use saga_examples::{deploy, weather};
use saga_runtime::prelude::*;
use saga_runtime::rmcp::model::{CallToolRequestParams, CallToolResponse, JsonObject};
use saga_runtime::rmcp::service::{RoleClient, RunningService};
use serde_json::json;

const DONE: &str = "Deployment to production initiated successfully based on confirmation.";

fn arguments() -> JsonObject {
    json!({"initial_arg": "value"})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

/// Serves `server` on an ephemeral loopback port until the returned guard drops.
async fn serve(server: SagaServer) -> (String, Running) {
    let running = serve_local(server).await;
    (running.url(), running)
}

/// How many elicitations and sampling requests a [`counting_client`] answered.
#[derive(Default)]
struct Counts {
    elicits: Arc<AtomicUsize>,
    samples: Arc<AtomicUsize>,
}

/// A client that answers the deploy saga's requests and counts them in `counts`.
fn counting_client(counts: &Counts) -> ScriptedClient {
    let (elicits, samples) = (counts.elicits.clone(), counts.samples.clone());
    ScriptedClient::new(
        move |_| {
            elicits.fetch_add(1, Ordering::SeqCst);
            accept(json!({"target": "production"}))
        },
        move |params| {
            samples.fetch_add(1, Ordering::SeqCst);
            let prompt = serde_json::to_value(params).unwrap().to_string();
            assert!(
                prompt.contains("Is deploying to 'production' safe right now?"),
                "{prompt}"
            );
            llm_says("Yes, all systems are green.")
        },
    )
}

/// Calls the deploy tool through `client` (a [`counting_client`] counting in `counts`)
/// until it completes: rmcp fulfils the rounds, or the session's requests, itself. One
/// elicitation and one sampling request are answered on the way.
async fn completes_the_deploy_saga(
    client: &RunningService<RoleClient, ScriptedClient>,
    counts: &Counts,
) {
    let result = client
        .call_tool(CallToolRequestParams::new("complex_tool").with_arguments(arguments()))
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text().unwrap().text, DONE);
    assert_eq!(result.is_error, Some(false));
    assert_eq!(counts.elicits.load(Ordering::SeqCst), 1, "one elicitation");
    assert_eq!(
        counts.samples.load(Ordering::SeqCst),
        1,
        "one sampling request"
    );
}

#[tokio::test]
async fn rmcp_client_completes_the_deploy_saga_over_http() {
    let (url, _stop) = serve(deploy::server(KeyRing::ephemeral()).unwrap()).await;
    let counts = Counts::default();
    let client = counting_client(&counts).connect_http(&url).await.unwrap();
    completes_the_deploy_saga(&client, &counts).await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn any_replica_with_the_same_keys_serves_any_round() {
    let key = [42u8; 32];
    let (url_a, _stop_a) = serve(deploy::server(KeyRing::from_keys([key]).unwrap()).unwrap()).await;
    let (url_b, _stop_b) = serve(deploy::server(KeyRing::from_keys([key]).unwrap()).unwrap()).await;
    let script = ScriptedClient::deploy();
    let a = script.clone().connect_http(&url_a).await.unwrap();
    let b = script.clone().connect_http(&url_b).await.unwrap();

    let mut params = CallToolRequestParams::new("complex_tool").with_arguments(arguments());
    let mut final_text = None;
    for (round, replica) in [&a, &b, &a].into_iter().enumerate() {
        match replica.call_tool_once(params.clone()).await.unwrap() {
            CallToolResponse::InputRequired(result) => {
                assert!(round < 2, "round {round} should have completed");
                params.input_responses =
                    Some(script.fulfil(result.input_requests.as_ref().unwrap()));
                params.request_state = result.request_state;
            }
            CallToolResponse::Complete(result) => {
                final_text = Some(result.content[0].as_text().unwrap().text.clone());
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(final_text.as_deref(), Some(DONE));
}

#[tokio::test]
async fn a_replica_with_other_keys_refuses_the_token() {
    let (url_a, _stop_a) = serve(deploy::server(KeyRing::ephemeral()).unwrap()).await;
    let (url_b, _stop_b) = serve(deploy::server(KeyRing::ephemeral()).unwrap()).await;
    let script = ScriptedClient::deploy();
    let a = script.clone().connect_http(&url_a).await.unwrap();
    let b = script.clone().connect_http(&url_b).await.unwrap();

    let mut params = CallToolRequestParams::new("complex_tool").with_arguments(arguments());
    let CallToolResponse::InputRequired(first) = a.call_tool_once(params.clone()).await.unwrap()
    else {
        panic!("round 1 must ask for input");
    };
    params.input_responses = Some(script.fulfil(first.input_requests.as_ref().unwrap()));
    params.request_state = first.request_state;
    let error = b.call_tool_once(params).await.unwrap_err().to_string();
    assert!(error.contains("Invalid or expired requestState"), "{error}");
}

#[tokio::test]
async fn rmcp_client_completes_the_deploy_saga_over_stdio() {
    let mut command = tokio::process::Command::new(example_binary("deploy"));
    command.arg("--stdio").env("SAGA_KEYS", "11".repeat(32));
    let counts = Counts::default();
    let client = counting_client(&counts)
        .connect_stdio(command)
        .await
        .unwrap();
    let tools = client.list_tools(None).await.unwrap();
    assert!(tools.tools.iter().any(|tool| tool.name == "complex_tool"));
    completes_the_deploy_saga(&client, &counts).await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn weather_asks_both_requests_in_one_round_with_their_keys() {
    let (url, _stop) = serve(weather::server(KeyRing::ephemeral()).unwrap()).await;
    let script = ScriptedClient::new(
        |_| accept(json!({"name": "octocat"})),
        |_| llm_says("The capital of France is Paris."),
    );
    let client = script.clone().connect_http(&url).await.unwrap();
    let mut params = CallToolRequestParams::new("get_weather").with_arguments(
        json!({"location": "New York"})
            .as_object()
            .cloned()
            .unwrap(),
    );

    let CallToolResponse::InputRequired(round) =
        client.call_tool_once(params.clone()).await.unwrap()
    else {
        panic!("the first round asks");
    };
    let requests = round.input_requests.clone().unwrap();
    let keys: Vec<&str> = requests.keys().map(String::as_str).collect();
    assert_eq!(keys, ["capital_of_france", "github_login"]);
    let wire = serde_json::to_value(&requests).unwrap();
    assert_eq!(
        wire["github_login"]["params"]["requestedSchema"]["properties"]["name"]["type"],
        "string"
    );
    assert_eq!(
        wire["capital_of_france"]["params"]["systemPrompt"],
        "You are a helpful assistant."
    );
    assert_eq!(
        wire["capital_of_france"]["params"]["modelPreferences"]["hints"][0]["name"],
        "claude-3-sonnet"
    );

    params.input_responses = Some(script.fulfil(&requests));
    params.request_state = round.request_state;
    let CallToolResponse::Complete(result) = client.call_tool_once(params).await.unwrap() else {
        panic!("one round is enough");
    };
    assert_eq!(
        result.content[0].as_text().unwrap().text,
        "Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy"
    );
}

/// Each round of a conversation, as JSON without its token.
async fn conversation(tool: impl SagaTool, script: &ScriptedClient) -> Vec<serde_json::Value> {
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(tool)
        .build()
        .unwrap();
    let (url, _stop) = serve(server).await;
    let client = script.clone().connect_http(&url).await.unwrap();
    let mut params = CallToolRequestParams::new("complex_tool").with_arguments(arguments());
    let mut rounds = Vec::new();
    loop {
        match client.call_tool_once(params.clone()).await.unwrap() {
            CallToolResponse::InputRequired(result) => {
                let mut json = serde_json::to_value(&result).unwrap();
                json.as_object_mut().unwrap().remove("requestState");
                rounds.push(json);
                params.input_responses =
                    Some(script.fulfil(result.input_requests.as_ref().unwrap()));
                params.request_state = result.request_state;
            }
            CallToolResponse::Complete(result) => {
                rounds.push(serde_json::to_value(&result).unwrap());
                return rounds;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[tokio::test]
async fn the_hand_written_deploy_says_exactly_what_the_generated_one_says() {
    let script = ScriptedClient::deploy();
    let generated = conversation(deploy::complex_tool, &script).await;
    let by_hand = conversation(saga_examples::deploy_by_hand::ComplexToolByHand, &script).await;
    assert_eq!(generated.len(), 3, "{generated:#?}");
    assert_eq!(generated, by_hand);
}

/// A 2025-11-25 client opens a session with `initialize`; the same saga sends it
/// `elicitation/create` and `sampling/createMessage` during the call, and completes.
#[tokio::test]
async fn a_2025_11_25_client_completes_the_deploy_saga_in_a_session_over_http() {
    let (url, _stop) = serve(deploy::server(KeyRing::ephemeral()).unwrap()).await;
    let counts = Counts::default();
    let client = counting_client(&counts)
        .connect_http_session(&url)
        .await
        .unwrap();
    let version = client
        .peer_info()
        .map(|info| info.protocol_version.to_string());
    assert_eq!(version.as_deref(), Some("2025-11-25"));
    // The elicitation and the sampling request are sent by the server, during the call.
    completes_the_deploy_saga(&client, &counts).await;
    client.cancel().await.unwrap();
}

/// The same over stdio.
#[tokio::test]
async fn a_2025_11_25_client_completes_the_deploy_saga_in_a_session_over_stdio() {
    let mut command = tokio::process::Command::new(example_binary("deploy"));
    command.arg("--stdio").env("SAGA_KEYS", "11".repeat(32));
    let counts = Counts::default();
    let client = counting_client(&counts)
        .connect_stdio_session(command)
        .await
        .unwrap();
    completes_the_deploy_saga(&client, &counts).await;
    client.cancel().await.unwrap();
}

/// In a session, an answer that does not fit its form is asked again, as on the MRTR
/// path; a client that keeps sending such answers gets `-32602` after
/// `MAX_ASKS_AGAIN` tries, and one that corrects itself gets the result.
#[tokio::test]
async fn a_session_asks_again_for_an_answer_that_fails_its_schema() {
    session_asks_again_for_an_answer_that_fails_its_schema(
        deploy::server(KeyRing::ephemeral()).unwrap(),
    )
    .await;
}

/// The same with the tool written by hand: its tokens keep no form, so the answer is
/// checked as it reads it, and it asks again itself.
#[tokio::test]
async fn a_session_asks_again_for_an_answer_that_fails_its_schema_written_by_hand() {
    let server = SagaServer::builder()
        .info("deploy-by-hand", "0")
        .keys(KeyRing::ephemeral())
        .tool(saga_examples::deploy_by_hand::ComplexToolByHand)
        .build()
        .unwrap();
    session_asks_again_for_an_answer_that_fails_its_schema(server).await;
}

async fn session_asks_again_for_an_answer_that_fails_its_schema(server: SagaServer) {
    let (url, _stop) = serve(server).await;

    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let stubborn = ScriptedClient::new(
        move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
            accept(json!({"target": 12345}))
        },
        |_| llm_says("Yes"),
    )
    .connect_http_session(&url)
    .await
    .unwrap();
    let error = stubborn
        .call_tool(CallToolRequestParams::new("complex_tool").with_arguments(arguments()))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("did not match what was asked"), "{error}");
    assert_eq!(
        asked.load(Ordering::SeqCst),
        saga_runtime::serve::MAX_ASKS_AGAIN,
        "asked once, then again until the limit"
    );
    stubborn.cancel().await.unwrap();

    let tries = Arc::new(AtomicUsize::new(0));
    let counter = tries.clone();
    let learner = ScriptedClient::new(
        move |_| {
            if counter.fetch_add(1, Ordering::SeqCst) == 0 {
                accept(json!({"target": 12345}))
            } else {
                accept(json!({"target": "production"}))
            }
        },
        |_| llm_says("Yes, all systems are green."),
    )
    .connect_http_session(&url)
    .await
    .unwrap();
    let result = learner
        .call_tool(CallToolRequestParams::new("complex_tool").with_arguments(arguments()))
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text().unwrap().text, DONE);
    assert_eq!(
        tries.load(Ordering::SeqCst),
        2,
        "the bad answer was asked again once"
    );
    learner.cancel().await.unwrap();
}
