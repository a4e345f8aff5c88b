//! Requests the token does not keep: a `#[saga_tool]` suspension whose request
//! expressions are pure and read only saved locals states them again from its state. A
//! round resent without answers, or with a form answer that does not fit, must be asked
//! again word for word, under the same keys, without running any of the tool's code twice;
//! a suspension that does not qualify keeps its requests in the token as before.

#![allow(deprecated)] // sampling: deprecated in 2026-07-28, still served

use std::sync::atomic::{AtomicUsize, Ordering};

use saga_examples::harness::context;
use saga_runtime::engine::{Call, SagaContext};
use saga_runtime::prelude::*;
use saga_runtime::rmcp::model::{CallToolResponse, InputRequiredResult};
use saga_runtime::state::TokenHeader;
use serde_json::{Map, Value, json};

#[derive(Debug, Elicit, Serialize, Deserialize)]
struct Target {
    target: String,
}

#[derive(Debug, Elicit, Serialize, Deserialize)]
struct Count {
    #[elicit(min = 1, max = 9)]
    count: i64,
}

/// The deploy saga's shape: a literal form, then a sampling request formatted from a saved
/// local.
#[saga_tool]
async fn deploy(service: String) -> Result<String, SagaError> {
    let target: Target = elicit(format!("Where should {service} go?")).await?;
    let verdict = sample(format!(
        "Is deploying {service} to '{}' safe?",
        target.target
    ))
    .max_tokens(50)
    .system("Answer yes or no.")
    .await?;
    Ok(format!("{service} → {}: {}", target.target, verdict.text()))
}

/// A form with bounds, asked in a loop (so the suspension is in a peeled loop).
#[saga_tool]
async fn counted(label: String) -> Result<String, SagaError> {
    let mut total = 0;
    for _ in 0..2u32 {
        let count: Count = elicit(format!("{label}: how many?")).await?;
        total += count.count;
    }
    Ok(format!("{label}: {total}"))
}

/// Two requests in one round.
#[saga_tool]
async fn joined(topic: String) -> Result<String, SagaError> {
    let (name, summary) = join!(
        elicit::<String>(format!("Your name, for {topic}?")).key("name"),
        sample(format!("Summarise {topic}")).max_tokens(20),
    );
    Ok(format!("{}: {} / {topic}", name?, summary?.text()))
}

#[saga_fn]
async fn confirm(what: String) -> Result<bool, SagaError> {
    let sure: bool = elicit(format!("Really {what}?")).await?;
    Ok(sure && !what.is_empty())
}

/// A helper's suspension, stated again through its caller.
#[saga_tool]
async fn helped(what: String) -> Result<String, SagaError> {
    let sure = confirm(what.clone()).await?;
    Ok(format!("{what}: {sure}"))
}

static PROMPTS_MADE: AtomicUsize = AtomicUsize::new(0);

fn prompt_for(topic: &str) -> String {
    PROMPTS_MADE.fetch_add(1, Ordering::SeqCst);
    format!("Tell me about {topic}")
}

/// A request built by the user's own function: evaluating it again could do anything, so
/// the token keeps it.
#[saga_tool]
async fn kept(topic: String) -> Result<String, SagaError> {
    let answer: String = elicit(prompt_for(&topic)).await?;
    Ok(format!("{topic}: {answer}"))
}

/// `{:?}` text is kept: a `HashMap`'s would change order once read back from the state.
#[saga_tool]
async fn debugged(items: Vec<String>) -> Result<String, SagaError> {
    let pick: String = elicit(format!("Pick one of {items:?}")).await?;
    Ok(format!("{pick} of {}", items.len()))
}

/// A field the state leaves out: the message cannot be stated again as it was asked.
#[derive(Debug, Serialize, Deserialize)]
struct Job {
    name: String,
    #[serde(skip)]
    owner: String,
}

#[saga_tool]
async fn skipped(name: String) -> Result<String, SagaError> {
    let job = Job {
        name,
        owner: "alice".into(),
    };
    let ok: bool = elicit(format!("{} asks to run {}", job.owner, job.name)).await?;
    Ok(format!("{}: {ok}", job.name))
}

/// A method of the user's that shares a builder's name is the user's code: kept.
#[derive(Debug, Serialize, Deserialize)]
struct Room {
    name: String,
}

static READINGS: AtomicUsize = AtomicUsize::new(0);

impl Room {
    fn temperature(&self) -> usize {
        READINGS.fetch_add(1, Ordering::SeqCst)
    }
}

#[saga_tool]
async fn vent(name: String) -> Result<String, SagaError> {
    let room = Room { name };
    let open: bool = elicit(format!("{} is at {}. Open?", room.name, room.temperature())).await?;
    Ok(format!("{}: {open}", room.name))
}

fn server() -> SagaServer {
    SagaServer::builder()
        .info("restated-test", "0")
        .keys(KeyRing::parse(&"5a".repeat(32)).expect("key"))
        .tool(deploy)
        .tool(counted)
        .tool(joined)
        .tool(helped)
        .tool(kept)
        .tool(debugged)
        .tool(skipped)
        .tool(vent)
        .build()
        .expect("server")
}

fn context() -> SagaContext {
    context::eliciting_and_sampling("alice")
}

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// Runs one round; the input required, or the final text.
async fn round(server: &SagaServer, call: &Call) -> Result<InputRequiredResult, String> {
    match server.tools().run(call.clone(), &context()).await {
        Ok(CallToolResponse::InputRequired(result)) => Ok(result),
        Ok(CallToolResponse::Complete(result)) => Err(serde_json::to_value(&result.content)
            .ok()
            .and_then(|content| content[0]["text"].as_str().map(str::to_owned))
            .unwrap_or_default()),
        other => panic!("unexpected response: {other:?}"),
    }
}

fn requests_json(result: &InputRequiredResult) -> Value {
    serde_json::to_value(result.input_requests.as_ref().expect("requests")).expect("json")
}

/// Asks `call`'s round, then sends the same round back with no answers and with
/// `bad` answers (if any); each time the very same requests must come back, under a
/// fresh token. Returns the first asking.
async fn asked_again_word_for_word(
    server: &SagaServer,
    call: &Call,
    bad: Option<Value>,
) -> InputRequiredResult {
    let first = round(server, call).await.expect("asks");
    let mut again = call.clone();
    again.request_state = first.request_state.clone();
    again.input_responses = None;
    let resent = round(server, &again).await.expect("asks again");
    assert_eq!(requests_json(&resent), requests_json(&first), "no answers");
    assert_ne!(resent.request_state, first.request_state, "a fresh token");
    if let Some(bad) = bad {
        again.input_responses = Some(serde_json::from_value(bad).expect("responses"));
        let refused = round(server, &again).await.expect("asks again");
        // The same requests, each form whose answer did not fit saying why at the end of
        // its message.
        let mut expected = requests_json(&first);
        for (key, request) in requests_json(&refused).as_object().expect("requests") {
            let asked = expected[key]["params"]["message"]
                .as_str()
                .map(str::to_owned);
            let again = request["params"]["message"].as_str().unwrap_or_default();
            if let Some(asked) = asked
                && again != asked
            {
                let reason = again
                    .strip_prefix(asked.as_str())
                    .and_then(|rest| rest.strip_prefix("\n\nYour last answer was not accepted: "))
                    .expect("the message asked again ends with the reason");
                assert!(reason.ends_with('.') && reason.len() > 10, "{reason}");
                expected[key]["params"]["message"] = Value::from(again);
            }
        }
        assert_eq!(requests_json(&refused), expected, "unfit answer");
        assert_ne!(
            requests_json(&refused),
            requests_json(&first),
            "a reason given"
        );
    }
    first
}

fn answered(call: &Call, asked: &InputRequiredResult, answers: Value) -> Call {
    let mut next = call.clone();
    next.request_state = asked.request_state.clone();
    next.input_responses = Some(serde_json::from_value(answers).expect("responses"));
    next
}

fn payload_len(token: &str) -> usize {
    TokenHeader::parse(token).expect("a token").ciphertext_len()
}

#[tokio::test]
async fn the_deploy_shape_is_asked_again_word_for_word_from_a_token_without_its_requests() {
    let server = server();
    let call = Call::tool("deploy", Some(object(json!({"service": "api"}))));
    let first = asked_again_word_for_word(&server, &call, None).await;
    assert_eq!(
        requests_json(&first)["elicit-1"]["params"]["message"],
        "Where should api go?"
    );
    // The token holds the head and the state, not the 38-character message or the schema.
    let token = first.request_state.clone().expect("token");
    assert!(payload_len(&token) < 20, "{} bytes", payload_len(&token));

    let call = answered(
        &call,
        &first,
        json!({"elicit-1": {"action": "accept", "content": {"target": "prod"}}}),
    );
    let second = asked_again_word_for_word(&server, &call, None).await;
    let sampling = &requests_json(&second)["sample-2"]["params"];
    assert_eq!(
        sampling["messages"][0]["content"]["text"],
        "Is deploying api to 'prod' safe?"
    );
    assert_eq!(sampling["maxTokens"], 50);
    assert_eq!(sampling["systemPrompt"], "Answer yes or no.");

    // Inspection shows the request the token does not keep, as the tool states it again.
    let request = saga_runtime::serve::InspectRequest {
        principal: "alice".into(),
        arguments: Some(object(json!({"service": "api"}))),
        ..saga_runtime::serve::InspectRequest::default()
    };
    let shown = server
        .inspect(second.request_state.as_deref().expect("token"), &request)
        .expect("opens");
    assert_eq!(shown["pending"][0]["restated"], true, "{shown:#}");
    assert_eq!(
        shown["pending"][0]["request"],
        requests_json(&second)["sample-2"],
        "{shown:#}"
    );

    let call = answered(
        &call,
        &second,
        json!({"sample-2": {"role": "assistant", "content": {"type": "text", "text": "yes"}, "model": "m"}}),
    );
    assert_eq!(
        round(&server, &call).await.err().as_deref(),
        Some("api → prod: yes")
    );
}

#[tokio::test]
async fn a_form_answer_outside_its_schema_is_asked_again_by_the_tool_itself() {
    let server = server();
    let call = Call::tool("counted", Some(object(json!({"label": "crates"}))));
    let too_many = json!({"elicit-1": {"action": "accept", "content": {"count": 12}}});
    let first = asked_again_word_for_word(&server, &call, Some(too_many)).await;
    let token = first.request_state.clone().expect("token");
    assert!(
        payload_len(&token) < 30,
        "restated: {} bytes",
        payload_len(&token)
    );
    let call = answered(
        &call,
        &first,
        json!({"elicit-1": {"action": "accept", "content": {"count": 2}}}),
    );
    // The second time round the loop: a new key, the loop's own message.
    let wrong_type = json!({"elicit-2": {"action": "accept", "content": {"count": "two"}}});
    let second = asked_again_word_for_word(&server, &call, Some(wrong_type)).await;
    assert_eq!(
        requests_json(&second)["elicit-2"]["params"]["message"],
        "crates: how many?"
    );
    let call = answered(
        &call,
        &second,
        json!({"elicit-2": {"action": "accept", "content": {"count": 3}}}),
    );
    assert_eq!(
        round(&server, &call).await.err().as_deref(),
        Some("crates: 5")
    );
}

#[tokio::test]
async fn a_joined_round_with_one_answer_missing_is_asked_again_whole() {
    let server = server();
    let call = Call::tool("joined", Some(object(json!({"topic": "rust"}))));
    let first = round(&server, &call).await.expect("asks");
    let only_name = answered(
        &call,
        &first,
        json!({"name": {"action": "accept", "content": {"value": "Ada"}}}),
    );
    let again = round(&server, &only_name).await.expect("asks again");
    assert_eq!(requests_json(&again), requests_json(&first));
    let keys: Vec<&String> = again
        .input_requests
        .as_ref()
        .expect("requests")
        .keys()
        .collect();
    assert_eq!(keys.len(), 2, "{keys:?}");
    let both = answered(
        &call,
        &again,
        json!({
            "name": {"action": "accept", "content": {"value": "Ada"}},
            "sample-1": {"role": "assistant", "content": {"type": "text", "text": "fast"}, "model": "m"},
        }),
    );
    assert_eq!(
        round(&server, &both).await.err().as_deref(),
        Some("Ada: fast / rust")
    );
}

#[tokio::test]
async fn a_helpers_suspension_is_stated_again_through_its_caller() {
    let server = server();
    let call = Call::tool("helped", Some(object(json!({"what": "delete"}))));
    let not_a_bool = json!({"elicit-1": {"action": "accept", "content": {"value": "yes"}}});
    let first = asked_again_word_for_word(&server, &call, Some(not_a_bool)).await;
    assert_eq!(
        requests_json(&first)["elicit-1"]["params"]["message"],
        "Really delete?"
    );
    let call = answered(
        &call,
        &first,
        json!({"elicit-1": {"action": "accept", "content": {"value": true}}}),
    );
    assert_eq!(
        round(&server, &call).await.err().as_deref(),
        Some("delete: true")
    );
}

#[tokio::test]
async fn a_request_built_by_the_users_function_is_kept_and_never_built_twice() {
    let server = server();
    let call = Call::tool("kept", Some(object(json!({"topic": "owls"}))));
    let before = PROMPTS_MADE.load(Ordering::SeqCst);
    let first = asked_again_word_for_word(&server, &call, None).await;
    assert_eq!(
        PROMPTS_MADE.load(Ordering::SeqCst) - before,
        1,
        "asking again must not run the tool's code again"
    );
    let token = first.request_state.clone().expect("token");
    assert!(
        payload_len(&token) > "Tell me about owls".len(),
        "the message is kept in the token"
    );
    let call = answered(
        &call,
        &first,
        json!({"elicit-1": {"action": "accept", "content": {"value": "wise"}}}),
    );
    assert_eq!(
        round(&server, &call).await.err().as_deref(),
        Some("owls: wise")
    );
}

#[tokio::test]
async fn a_debug_formatted_message_is_kept() {
    let server = server();
    let call = Call::tool("debugged", Some(object(json!({"items": ["a", "b"]}))));
    let first = asked_again_word_for_word(&server, &call, None).await;
    let message = "Pick one of [\"a\", \"b\"]";
    assert_eq!(
        requests_json(&first)["elicit-1"]["params"]["message"],
        message
    );
    let token = first.request_state.clone().expect("token");
    assert!(payload_len(&token) > message.len(), "the message is kept");
}

#[tokio::test]
async fn a_round_that_cannot_be_stated_as_asked_is_an_error_not_another_question() {
    let server = server();
    let call = Call::tool("skipped", Some(object(json!({"name": "build"}))));
    let first = round(&server, &call).await.expect("asks");
    assert_eq!(
        requests_json(&first)["elicit-1"]["params"]["message"],
        "alice asks to run build"
    );
    let mut again = call.clone();
    again.request_state = first.request_state.clone();
    let error = server
        .tools()
        .run(again, &context())
        .await
        .expect_err("the owner is not in the state");
    assert_eq!(error.code.0, -32603, "{error:?}");
}

#[tokio::test]
async fn a_users_method_named_like_a_builder_is_not_run_again() {
    let server = server();
    let call = Call::tool("vent", Some(object(json!({"name": "lab"}))));
    let before = READINGS.load(Ordering::SeqCst);
    asked_again_word_for_word(&server, &call, None).await;
    assert_eq!(READINGS.load(Ordering::SeqCst) - before, 1);
}

/// How many times the tool below ran its code after the kept suspension.
static AFTER_KEPT: AtomicUsize = AtomicUsize::new(0);

fn question_about(name: &str) -> String {
    format!("What does {name} do?")
}

/// A restatable suspension, then one that keeps its requests (built by the user's
/// function), whose failed answer the tool turns into work of its own.
#[saga_tool]
async fn restatable_then_kept() -> Result<String, SagaError> {
    let name: String = elicit("Name?").key("name").await?;
    match elicit::<String>(question_about(&name)).key("job").await {
        Ok(job) => Ok(format!("{name}: {job}")),
        Err(_) => {
            AFTER_KEPT.fetch_add(1, Ordering::SeqCst);
            Ok(format!("{name}: unknown"))
        }
    }
}

/// A token of an earlier build, where the second suspension was restatable, may ask this
/// build to state it again. It cannot: `restate` gives `None` without running any of the
/// tool's code (before, the restating mode went on as if the answer were missing).
#[tokio::test]
async fn a_suspension_that_keeps_its_requests_states_none_and_runs_nothing() {
    use saga_runtime::engine::{SagaTool, Step};
    use saga_runtime::testing::KeyedRound;

    let tool = restatable_then_kept;
    let cx = context::eliciting_and_sampling("alice");
    let state = tool.start(Map::new()).expect("no arguments");
    let Step::Suspend { state, requests } = tool.step(state, Answers::none(), &cx).await else {
        panic!("suspends at the name");
    };
    // The first suspension states its round again, as the first time.
    let restated = tool.restate(state, &cx).expect("the name is restatable");
    assert_eq!(restated.len(), requests.len());

    let state = tool.start(Map::new()).expect("no arguments");
    let Step::Suspend { state, requests } = tool.step(state, Answers::none(), &cx).await else {
        panic!("suspends at the name");
    };
    let mut last_key = 0;
    let round = KeyedRound::new(requests, &mut last_key).expect("a round");
    let responses = serde_json::from_value(json!({
        "name": {"action": "accept", "content": {"value": "Ada"}}
    }))
    .expect("responses");
    let answers = round.answers(responses).expect("read").expect("answered");
    let Step::Suspend { state, .. } = tool.step(state, answers, &cx).await else {
        panic!("suspends at the job");
    };
    let before = AFTER_KEPT.load(Ordering::SeqCst);
    assert!(
        tool.restate(state, &cx).is_none(),
        "the job's request is kept"
    );
    assert_eq!(
        AFTER_KEPT.load(Ordering::SeqCst),
        before,
        "the restating mode ran the tool's code"
    );
}
