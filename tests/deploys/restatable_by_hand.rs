//! A hand-written `SagaTool` that suspends with `Step::suspend_restatable`: its token keeps
//! no requests, it states them again when asked, and it checks a form's answer as it reads
//! it. Each promise it does not keep must end the call with an error, never send a
//! different question or hand the tool content outside its form.

#![allow(deprecated)] // sampling: deprecated in 2026-07-28, still served

use std::sync::atomic::{AtomicUsize, Ordering};

use saga_examples::deploy_by_hand::ComplexToolByHand;
use saga_examples::harness::context;
use saga_examples::harness::serving;
use saga_examples::harness::tasks;
use saga_examples::harness::variant::Variant;
use saga_runtime::engine::{Call, SagaContext, SagaTool};
use saga_runtime::prelude::*;
use saga_runtime::rmcp::ErrorData;
use saga_runtime::rmcp::model::{CallToolResponse, InputRequiredResult, JsonObject, Tool};
use saga_runtime::state::TokenHeader;
use serde_json::{Value, json};

#[derive(Debug, Elicit, Serialize, Deserialize)]
struct Count {
    #[elicit(min = 1, max = 9)]
    count: i64,
}

#[derive(Debug, Serialize, Deserialize)]
enum State {
    /// Before a checkpoint: where a task begins, so that it becomes a task.
    Begin {
        label: String,
    },
    Start {
        label: String,
    },
    AfterCount {
        label: String,
    },
}

/// How the tool keeps (or breaks) its promises.
#[derive(Clone, Copy, PartialEq)]
enum Manners {
    /// States the round again from its state, and asks again for an unfit answer.
    Keeps,
    /// Words the round differently each time it states it.
    Rewords,
    /// Suspends restatably, but cannot state its round again (`restate` keeps its
    /// default).
    CannotRestate,
    /// Panics when asked to state its round again.
    PanicsRestating,
    /// Hands any error, an unfit answer's too, back as the tool's result.
    ReturnsEveryError,
    /// States the same message again, for another answer type.
    SwapsType,
}

struct Counter {
    name: &'static str,
    manners: Manners,
    /// How many times it stated its round.
    stated: AtomicUsize,
}

impl Counter {
    fn ask(&self, label: &str) -> Request {
        let times = self.stated.fetch_add(1, Ordering::SeqCst);
        let message = match self.manners {
            Manners::Rewords => format!("{label}: how many? ({times})"),
            _ => format!("{label}: how many?"),
        };
        if self.manners == Manners::SwapsType && times > 0 {
            return elicit::<String>(message).key("count").into();
        }
        elicit::<Count>(message).key("count").into()
    }
}

impl SagaTool for Counter {
    type State = State;

    fn tool(&self) -> Tool {
        let schema = json!({"type": "object", "properties": {"label": {"type": "string"}}});
        Tool::new(
            self.name,
            "counts",
            schema.as_object().cloned().unwrap_or_default(),
        )
    }

    fn start(&self, arguments: JsonObject) -> Result<State, ErrorData> {
        let label = arguments
            .get("label")
            .and_then(Value::as_str)
            .unwrap_or("items")
            .to_owned();
        Ok(State::Start { label })
    }

    async fn step(&self, state: State, mut answers: Answers, _cx: &SagaContext) -> Step<State> {
        match state {
            State::Begin { label } => Step::checkpoint(State::Start { label }),
            State::Start { label } => {
                let ask = self.ask(&label);
                Step::suspend_restatable(State::AfterCount { label }, [ask])
            }
            State::AfterCount { label } => match answers.elicit::<Count>(0) {
                Ok(count) => Step::done(format!("{label}: {}", count.count)),
                Err(SagaError::DoesNotFit(_)) if self.manners != Manners::ReturnsEveryError => {
                    Step::AskAgain(vec![self.ask(&label)])
                }
                Err(error) => Step::done(Err::<String, _>(error)),
            },
        }
    }

    fn restate(&self, state: State, _cx: &SagaContext) -> Option<Vec<Request>> {
        match state {
            State::AfterCount { .. } if self.manners == Manners::PanicsRestating => {
                panic!("restating")
            }
            State::AfterCount { label } if self.manners != Manners::CannotRestate => {
                Some(vec![self.ask(&label)])
            }
            _ => None,
        }
    }
}

fn server() -> SagaServer {
    let counter = |name, manners| Counter {
        name,
        manners,
        stated: AtomicUsize::new(0),
    };
    SagaServer::builder()
        .info("restatable-by-hand-test", "0")
        .keys(KeyRing::parse(&"5b".repeat(32)).expect("key"))
        .tool(counter("counts", Manners::Keeps))
        .tool(counter("rewords", Manners::Rewords))
        .tool(counter("cannot", Manners::CannotRestate))
        .tool(counter("panics", Manners::PanicsRestating))
        .tool(counter("returns", Manners::ReturnsEveryError))
        .tool(Counter {
            name: "swaps",
            manners: Manners::SwapsType,
            stated: AtomicUsize::new(0),
        })
        .tool(Pair {
            restates_first: true,
        })
        .tool(Pair {
            restates_first: false,
        })
        .tool(ComplexToolByHand)
        // Wrapped, as a deploy test renames or re-versions a tool: `restate` passes
        // through as `step` does.
        .tool(Variant::of(ComplexToolByHand).named("wrapped_deploy"))
        .tool(Variant::of(saga_examples::deploy::complex_tool).named("wrapped_macro_deploy"))
        .build()
        .expect("server")
}

fn context() -> SagaContext {
    context::eliciting_and_sampling("alice")
}

fn call(tool: &str, label: &str) -> Call {
    Call::tool(
        tool.to_owned(),
        json!({"label": label}).as_object().cloned(),
    )
}

enum Outcome {
    Asks(InputRequiredResult),
    Done { text: String, is_error: bool },
    Error(ErrorData),
}

async fn round(server: &SagaServer, call: &Call) -> Outcome {
    match server.tools().run(call.clone(), &context()).await {
        Ok(CallToolResponse::InputRequired(result)) => Outcome::Asks(result),
        Ok(CallToolResponse::Complete(result)) => Outcome::Done {
            text: result.content[0]
                .as_text()
                .map(|text| text.text.clone())
                .unwrap_or_default(),
            is_error: result.is_error == Some(true),
        },
        Ok(other) => panic!("unexpected response: {other:?}"),
        Err(error) => Outcome::Error(error),
    }
}

async fn asks(server: &SagaServer, call: &Call) -> InputRequiredResult {
    match round(server, call).await {
        Outcome::Asks(result) => result,
        Outcome::Done { text, .. } => panic!("finished: {text}"),
        Outcome::Error(error) => panic!("failed: {error:?}"),
    }
}

/// The call ended as a broken saga contract does: an internal error, no question sent.
fn a_tool_bug(outcome: Outcome, what: &str) {
    match outcome {
        Outcome::Error(error) => assert_eq!(error.code.0, -32603, "{what}: {error:?}"),
        _ => panic!("{what}: must end the call, not ask or finish"),
    }
}

fn requests_json(result: &InputRequiredResult) -> Value {
    serde_json::to_value(result.input_requests.as_ref().expect("requests")).expect("json")
}

fn answering(call: &Call, asked: &InputRequiredResult, answers: Option<Value>) -> Call {
    let mut next = call.clone();
    next.request_state = asked.request_state.clone();
    next.input_responses =
        answers.map(|answers| serde_json::from_value(answers).expect("responses"));
    next
}

fn count(content: Value) -> Option<Value> {
    Some(json!({"count": {"action": "accept", "content": content}}))
}

fn payload_len(result: &InputRequiredResult) -> usize {
    let token = result.request_state.as_deref().expect("a token");
    TokenHeader::parse(token).expect("a token").ciphertext_len()
}

#[tokio::test]
async fn a_missing_or_unfit_answer_is_asked_again_word_for_word_from_a_token_without_requests() {
    let server = server();
    let start = call("counts", "crates");
    let first = asks(&server, &start).await;
    assert_eq!(
        requests_json(&first)["count"]["params"]["message"],
        "crates: how many?"
    );
    // The head, the variant and the label: no message, no schema.
    assert!(payload_len(&first) < 30, "{} bytes", payload_len(&first));

    for answers in [
        None,
        count(json!({"count": 12})),
        count(json!({"count": "two"})),
        count(json!({})),
        // Accepted with no content, or content that is not an object.
        Some(json!({"count": {"action": "accept"}})),
        count(json!("three")),
    ] {
        let again = asks(&server, &answering(&start, &first, answers.clone())).await;
        assert_eq!(requests_json(&again), requests_json(&first), "{answers:?}");
        assert_ne!(again.request_state, first.request_state, "a fresh token");
    }

    let done = round(
        &server,
        &answering(&start, &first, count(json!({"count": 3}))),
    )
    .await;
    assert!(
        matches!(&done, Outcome::Done { text, is_error: false } if text == "crates: 3"),
        "{:?}",
        match done {
            Outcome::Done { text, .. } => text,
            _ => "not done".into(),
        }
    );
}

#[tokio::test]
async fn a_declined_form_is_not_a_misfit() {
    let server = server();
    let start = call("counts", "crates");
    let first = asks(&server, &start).await;
    let declined = Some(json!({"count": {"action": "decline"}}));
    match round(&server, &answering(&start, &first, declined)).await {
        Outcome::Done { text, is_error } => {
            assert!(is_error, "{text}");
            assert!(text.contains("declined"), "{text}");
        }
        _ => panic!("a decline ends the call"),
    }
}

#[tokio::test]
async fn a_round_stated_in_other_words_is_an_error_not_another_question() {
    let server = server();
    let start = call("rewords", "crates");
    let first = asks(&server, &start).await;
    for answers in [None, count(json!({"count": 12}))] {
        let outcome = round(&server, &answering(&start, &first, answers)).await;
        a_tool_bug(outcome, "a reworded round must not be sent");
    }
}

#[tokio::test]
async fn a_tool_that_cannot_state_its_round_again_is_an_error() {
    let server = server();
    let start = call("cannot", "crates");
    let first = asks(&server, &start).await;
    let outcome = round(&server, &answering(&start, &first, None)).await;
    a_tool_bug(outcome, "the tool broke its promise");
}

/// `restate` is the tool's code: a panic in it ends that call with an error, and the
/// server serves the next.
#[tokio::test]
async fn a_panic_while_restating_ends_the_call_only() {
    let server = server();
    let start = call("panics", "crates");
    let first = asks(&server, &start).await;
    let outcome = round(&server, &answering(&start, &first, None)).await;
    a_tool_bug(outcome, "a panic in restate");
    let counts = call("counts", "crates");
    asks(&server, &counts).await;
}

#[tokio::test]
async fn an_unfit_answer_never_reaches_the_tool_as_a_value() {
    let server = server();
    let start = call("returns", "crates");
    let first = asks(&server, &start).await;
    match round(
        &server,
        &answering(&start, &first, count(json!({"count": 12}))),
    )
    .await
    {
        Outcome::Done { text, is_error } => {
            assert!(is_error, "{text}");
            assert!(text.contains("does not fit"), "{text}");
            assert!(text.contains("count"), "names the field: {text}");
        }
        _ => panic!("the tool returns the error"),
    }
}

/// The example's hand-written deploy saga keeps no requests in its tokens, as the
/// generated one does, and is asked again word for word at each round.
#[tokio::test]
async fn the_hand_written_deploy_keeps_no_requests_in_its_tokens() {
    let server = server();
    let start = Call::tool(
        "complex_tool",
        json!({"initial_arg": "x"}).as_object().cloned(),
    );
    let first = asks(&server, &start).await;
    assert!(payload_len(&first) < 20, "{} bytes", payload_len(&first));
    let again = asks(&server, &answering(&start, &first, None)).await;
    assert_eq!(requests_json(&again), requests_json(&first));
    let unfit = Some(json!({"elicit-1": {"action": "accept", "content": {}}}));
    let again = asks(&server, &answering(&start, &first, unfit)).await;
    assert_eq!(requests_json(&again), requests_json(&first));

    let target = Some(json!({"elicit-1": {"action": "accept", "content": {"target": "prod"}}}));
    let next = answering(&start, &first, target);
    let second = asks(&server, &next).await;
    // The head, the variant and the target's name: not the prompt.
    assert!(payload_len(&second) < 24, "{} bytes", payload_len(&second));
    assert_eq!(
        requests_json(&second)["sample-2"]["params"]["messages"][0]["content"]["text"],
        "Is deploying to 'prod' safe right now?"
    );
    let again = asks(&server, &answering(&next, &second, None)).await;
    assert_eq!(requests_json(&again), requests_json(&second));
}

/// A tool behind a wrapper that passes `step` and `restate` through is asked again as
/// itself: a hand-written one and a generated one.
#[tokio::test]
async fn a_wrapped_tool_is_asked_again_as_itself() {
    let server = server();
    for name in ["wrapped_deploy", "wrapped_macro_deploy"] {
        let start = Call::tool(
            name.to_owned(),
            json!({"initial_arg": "x"}).as_object().cloned(),
        );
        let first = asks(&server, &start).await;
        let again = asks(&server, &answering(&start, &first, None)).await;
        assert_eq!(requests_json(&again), requests_json(&first), "{name}");
    }
}

#[tokio::test]
async fn a_round_stated_again_for_another_answer_type_is_an_error() {
    let server = server();
    let start = call("swaps", "crates");
    let first = asks(&server, &start).await;
    let outcome = round(&server, &answering(&start, &first, None)).await;
    a_tool_bug(
        outcome,
        "the same message for another form must not be sent",
    );
}

/// Two forms in one round, the first restatable, the second kept: checked with
/// `Answers::fits` before either is read, so nothing is done for the first when the
/// second must be asked again.
struct Pair {
    /// Whether the first request is restatable (else both are kept).
    restates_first: bool,
}

static PAIRS_DONE: AtomicUsize = AtomicUsize::new(0);

fn pair_round(restates_first: bool) -> Vec<Request> {
    let apples = Request::from(elicit::<Count>("How many apples?").key("apples"));
    vec![
        if restates_first {
            apples.restatable()
        } else {
            apples
        },
        elicit::<Count>("How many pears?").key("pears").into(),
    ]
}

impl SagaTool for Pair {
    type State = u8;

    fn tool(&self) -> Tool {
        let schema = json!({"type": "object"});
        let name = if self.restates_first {
            "pair"
        } else {
            "pair_kept"
        };
        Tool::new(
            name,
            "pairs",
            schema.as_object().cloned().unwrap_or_default(),
        )
    }

    fn start(&self, _arguments: JsonObject) -> Result<u8, ErrorData> {
        Ok(0)
    }

    async fn step(&self, state: u8, mut answers: Answers, _cx: &SagaContext) -> Step<u8> {
        if state == 0 {
            return Step::suspend(1, pair_round(self.restates_first));
        }
        if !(answers.fits::<Count>(0) && answers.fits::<Count>(1)) {
            return Step::AskAgain(pair_round(self.restates_first));
        }
        let apples = answers.elicit::<Count>(0);
        let pears = answers.elicit::<Count>(1);
        PAIRS_DONE.fetch_add(1, Ordering::SeqCst);
        match (apples, pears) {
            (Ok(apples), Ok(pears)) => Step::done(format!("{}", apples.count + pears.count)),
            (Err(error), _) | (_, Err(error)) => Step::done(Err::<String, _>(error)),
        }
    }

    fn restate(&self, state: u8, _cx: &SagaContext) -> Option<Vec<Request>> {
        (state == 1).then(|| pair_round(self.restates_first))
    }
}

#[tokio::test]
async fn a_round_with_one_restatable_request_keeps_the_other_and_checks_both_first() {
    let server = server();
    let start = Call::tool("pair", Some(JsonObject::new()));
    let first = asks(&server, &start).await;
    // The restatable request's message and schema are not in the token; the kept one's are.
    let both_kept = asks(&server, &Call::tool("pair_kept", Some(JsonObject::new()))).await;
    assert_eq!(requests_json(&both_kept), requests_json(&first));
    let (mixed, kept) = (payload_len(&first), payload_len(&both_kept));
    assert!(mixed > 2 * "How many pears?".len(), "{mixed} bytes");
    assert!(mixed * 2 < kept + 40, "{mixed} bytes against {kept}");

    let before = PAIRS_DONE.load(Ordering::SeqCst);
    let unfit_first = Some(json!({
        "apples": {"action": "accept", "content": {"count": 40}},
        "pears": {"action": "accept", "content": {"count": 2}},
    }));
    let again = asks(&server, &answering(&start, &first, unfit_first)).await;
    assert_eq!(requests_json(&again), requests_json(&first));
    let missing_one = Some(json!({"apples": {"action": "accept", "content": {"count": 1}}}));
    let again = asks(&server, &answering(&start, &first, missing_one)).await;
    assert_eq!(requests_json(&again), requests_json(&first));
    assert_eq!(
        PAIRS_DONE.load(Ordering::SeqCst),
        before,
        "nothing done yet"
    );

    let fit = Some(json!({
        "apples": {"action": "accept", "content": {"count": 1}},
        "pears": {"action": "accept", "content": {"count": 2}},
    }));
    match round(&server, &answering(&start, &first, fit)).await {
        Outcome::Done { text, is_error } => {
            assert!(!is_error, "{text}");
            assert_eq!(text, "3");
        }
        _ => panic!("both fit"),
    }
}

/// The counter as a task (the tasks extension): its rounds are asked and answered through
/// `tasks/get` and `tasks/update`.
struct TaskCounter(Counter);

impl SagaTool for TaskCounter {
    type State = State;

    fn tool(&self) -> Tool {
        self.0.tool()
    }

    fn start(&self, arguments: JsonObject) -> Result<State, ErrorData> {
        match self.0.start(arguments)? {
            State::Start { label } => Ok(State::Begin { label }),
            other => Ok(other),
        }
    }

    async fn step(&self, state: State, answers: Answers, cx: &SagaContext) -> Step<State> {
        self.0.step(state, answers, cx).await
    }

    fn task_support(&self) -> saga_runtime::tasks::TaskSupport {
        saga_runtime::tasks::TaskSupport::Required
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_asks_again_word_for_word_for_a_missing_or_unfit_answer() {
    use saga_runtime::tasks::{TaskSettings, TaskStore};
    use tasks::TaskClient;

    let server = SagaServer::builder()
        .keys(KeyRing::parse(&"5c".repeat(32)).expect("key"))
        .tool(TaskCounter(Counter {
            name: "task_counts",
            manners: Manners::Keeps,
            stated: AtomicUsize::new(0),
        }))
        .task_settings(TaskSettings::new(TaskStore::memory()))
        .build()
        .expect("server");
    let running = serving::serve_local(server).await;
    let client = TaskClient::new();
    let id = client
        .create(running.addr, "task_counts", json!({"label": "crates"}))
        .await;
    // An update that answers every pending request sets the task `working` before it
    // returns, so the next `input_required` seen is the round that followed it.
    let until_asking_or_done =
        || client.settled(running.addr, &id, std::time::Duration::from_secs(10));
    let first = until_asking_or_done().await;
    let asked = first["inputRequests"].clone();
    assert_eq!(
        asked["count"]["params"]["message"], "crates: how many?",
        "{first}"
    );

    // An update without the answer leaves the round as it is; one outside the form runs
    // the tool, which asks again.
    for answers in [
        json!({}),
        json!({"count": {"action": "accept", "content": {"count": 12}}}),
    ] {
        let update = client
            .request(
                running.addr,
                "tasks/update",
                json!({"taskId": id, "inputResponses": answers}),
            )
            .await;
        assert!(update.get("error").is_none(), "{update}");
        let task = until_asking_or_done().await;
        assert_eq!(task["status"], "input_required", "{answers}: {task}");
        assert_eq!(task["inputRequests"], asked, "{answers}: {task}");
    }

    client
        .request(
            running.addr,
            "tasks/update",
            json!({"taskId": id, "inputResponses":
                {"count": {"action": "accept", "content": {"count": 3}}}}),
        )
        .await;
    let task = until_asking_or_done().await;
    assert_eq!(task["result"]["content"][0]["text"], "crates: 3", "{task}");
}
