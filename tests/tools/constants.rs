//! A `for` over a constant by value resumes by position and binds its item again from the
//! constant: a build whose constant changed before that position is refused, never read
//! as another item; one that only added items after it goes on. Two builds of one tool
//! (modules `v1`, `v2`, `v3`), served with the same keys, share one saga's token.

use saga_examples::harness::http::Call;
use saga_examples::harness::serving::serve_local;
use saga_runtime::prelude::*;
use saga_runtime::state::KeyRing;
use serde_json::{Value, json};

macro_rules! survey_build {
    ($module:ident, $steps:expr) => {
        mod $module {
            use saga_runtime::prelude::*;

            const STEPS: &[(&str, &str)] = &$steps;

            /// The labels are read after the suspension: bound again from `STEPS`.
            #[saga_tool]
            pub async fn survey() -> Result<String, SagaError> {
                let mut out = Vec::new();
                for (label, question) in STEPS {
                    let answer: String = elicit(*question).await?;
                    out.push(format!("{label}={answer}"));
                }
                Ok(out.join(" "))
            }
        }
    };
}

survey_build!(v1, [("name", "Your name?"), ("city", "Your city?")]);
// The same steps in another order: item 0 is now another step.
survey_build!(v2, [("city", "Your city?"), ("name", "Your name?")]);
// A step added after them: the items a saga began with are where they were.
survey_build!(
    v3,
    [
        ("name", "Your name?"),
        ("city", "Your city?"),
        ("pet", "A pet?")
    ]
);

macro_rules! quiz_build {
    ($module:ident, $questions:expr) => {
        mod $module {
            use saga_runtime::prelude::*;

            const QUESTIONS: &[&str] = &$questions;

            /// The question is read only before the suspension: not bound again, checked.
            #[saga_tool]
            pub async fn quiz() -> Result<String, SagaError> {
                let mut answers = Vec::new();
                for question in QUESTIONS {
                    let answer: String = elicit(*question).await?;
                    answers.push(answer);
                }
                Ok(answers.join(" "))
            }
        }
    };
}

quiz_build!(q1, ["Your name?", "Your city?"]);
quiz_build!(q2, ["Your city?", "Your name?"]);
quiz_build!(q3, ["Your name?", "Your city?", "A pet?"]);

macro_rules! bank_build {
    ($module:ident, $easy:expr, $hard:expr) => {
        mod $module {
            use saga_runtime::prelude::*;

            const EASY: &[&str] = &$easy;
            const HARD: &[&str] = &$hard;

            #[derive(Clone, Copy, Serialize)]
            pub struct Limits {
                pub rounds: u32,
            }

            // Longer than the 32 items serde serializes as an array: chosen as a slice.
            const WEIGHTS_EASY: [u32; 40] = [1; 40];
            const WEIGHTS_HARD: [u32; 40] = [2; 40];

            const SHORT: Limits = Limits { rounds: 1 };
            const LONG: Limits = Limits { rounds: 2 };

            /// References chosen among constants, kept across suspensions and read after
            /// them: `questions` (a slice) and `limits` (`&` of a constant that is not one).
            #[saga_tool]
            pub async fn bank(hard: bool) -> Result<String, SagaError> {
                let questions: &[&str] = if hard { HARD } else { EASY };
                let limits: &Limits = match hard {
                    true => &LONG,
                    false => &SHORT,
                };
                // Chosen among literals, its type written.
                let level: &str = if hard { "hard" } else { "easy" };
                let weights: &[u32] = if hard { &WEIGHTS_HARD } else { &WEIGHTS_EASY };
                let mut answers = Vec::new();
                for round in 0..limits.rounds as usize {
                    let answer: String = elicit(questions[round]).await?;
                    answers.push(answer);
                }
                Ok(format!(
                    "{level} (weight {}) {} of {}: {}",
                    weights.iter().sum::<u32>(),
                    answers.len(),
                    questions.len(),
                    answers.join(" ")
                ))
            }
        }
    };
}

bank_build!(
    b1,
    ["Easy one?", "Easy two?"],
    ["Hard one?", "Hard two?", "Hard three?"]
);
// The hard questions edited: a saga that chose them is refused, one that chose the easy
// ones goes on.
bank_build!(
    b2,
    ["Easy one?", "Easy two?"],
    ["Hard one?", "Hard 2?", "Hard three?"]
);

fn server(tool: impl SagaTool) -> SagaServer {
    SagaServer::builder()
        .keys(KeyRing::from_keys([[7u8; 32]]).expect("a key"))
        .tool(tool)
        .build()
        .expect("the server builds")
}

/// The token `body` hands back.
fn token_of(body: &Value) -> String {
    body["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("a token: {body}"))
        .to_owned()
}

/// The message of the one request `body` asks.
fn asked(body: &Value) -> &Value {
    let requests = body["result"]["inputRequests"]
        .as_object()
        .unwrap_or_else(|| panic!("a request: {body}"));
    assert_eq!(requests.len(), 1, "{body}");
    let (_, request) = requests.iter().next().expect("one");
    &request["params"]["message"]
}

/// Refused as a token this build cannot read: `-32602`, as a build with another layout
/// or other literals refuses it, not the `-32603` of a tool that panicked (nothing is
/// wrong with the tool; the client starts the call again).
fn refused_as_another_builds(body: &Value) {
    assert_eq!(body["error"]["code"], json!(-32602), "{body}");
    assert_eq!(
        body["error"]["message"],
        json!(saga_runtime::state::INVALID_STATE_MESSAGE),
        "{body}"
    );
}

fn answer(text: &str) -> Value {
    json!({"elicit-1": {"action": "accept", "content": {"value": text}}})
}

#[tokio::test]
async fn a_build_whose_constant_changed_is_refused_and_one_that_grew_goes_on() {
    let first = serve_local(server(v1::survey)).await;
    let reordered = serve_local(server(v2::survey)).await;
    let grown = serve_local(server(v3::survey)).await;

    // The first build asks item 0, "Your name?", and suspends there.
    let (_, body) = Call::new("survey", json!({})).send(first.addr).await;
    assert_eq!(asked(&body), "Your name?", "{body}");
    let token = token_of(&body);
    let resume = Call::new("survey", json!({}))
        .state(&token)
        .answers(answer("Ada"));

    // A build whose item 0 is "city": the answer to "Your name?" is not read as a city.
    let (_, body) = resume.clone().send(reordered.addr).await;
    let text = body.to_string();
    assert!(!text.contains("city=Ada"), "{body}");
    refused_as_another_builds(&body);

    // A build with a step added after them goes on, and asks its own next step after.
    let (_, body) = resume.send(grown.addr).await;
    assert_eq!(asked(&body), "Your city?", "{body}");
}

/// The loop's item is not read after the suspension, so nothing binds it again; the loop
/// still goes on from its position, and a build whose constant differs there would walk
/// another sequence (here: ask "Your name?" a second time and never "Your city?").
#[tokio::test]
async fn a_loop_whose_item_is_not_read_again_is_refused_by_a_build_whose_constant_changed() {
    let first = serve_local(server(q1::quiz)).await;
    let reordered = serve_local(server(q2::quiz)).await;
    let grown = serve_local(server(q3::quiz)).await;

    let (_, body) = Call::new("quiz", json!({})).send(first.addr).await;
    assert_eq!(asked(&body), "Your name?", "{body}");
    let token = token_of(&body);
    let resume = Call::new("quiz", json!({}))
        .state(&token)
        .answers(answer("Ada"));

    let (_, body) = resume.clone().send(reordered.addr).await;
    refused_as_another_builds(&body);

    // The same token goes on in the first build, and in one that only added a question.
    let (_, body) = resume.clone().send(first.addr).await;
    assert_eq!(asked(&body), "Your city?", "{body}");
    let (_, body) = resume.send(grown.addr).await;
    assert_eq!(asked(&body), "Your city?", "{body}");
}

/// A reference chosen among constants is kept across suspensions without an owned copy
/// (issue 78's review: it was refused with the advice to own the value): the saga reads
/// the very constant it chose after each one, and a build whose chosen constant changed
/// refuses the token while one whose other constant changed goes on.
#[tokio::test]
async fn a_reference_chosen_among_constants_is_kept_across_suspensions() {
    let first = serve_local(server(b1::bank)).await;
    let edited = serve_local(server(b2::bank)).await;

    // The hard bank, two rounds (`&LONG`): both questions come from it.
    let (_, body) = Call::new("bank", json!({"hard": true}))
        .send(first.addr)
        .await;
    assert_eq!(asked(&body), "Hard one?", "{body}");
    let token = token_of(&body);
    let resume = Call::new("bank", json!({"hard": true}))
        .state(&token)
        .answers(answer("a"));
    let (_, body) = resume.clone().send(first.addr).await;
    assert_eq!(asked(&body), "Hard two?", "{body}");
    let second = token_of(&body);
    let (_, body) = Call::new("bank", json!({"hard": true}))
        .state(&second)
        .answers(json!({"elicit-2": {"action": "accept", "content": {"value": "b"}}}))
        .send(first.addr)
        .await;
    assert_eq!(
        body["result"]["content"][0]["text"],
        json!("hard (weight 80) 2 of 3: a b"),
        "{body}"
    );

    // The build whose hard questions changed refuses that saga's token.
    let (_, body) = resume.send(edited.addr).await;
    refused_as_another_builds(&body);

    // The easy bank is the same in both builds: its saga goes on in the edited one.
    let (_, body) = Call::new("bank", json!({"hard": false}))
        .send(first.addr)
        .await;
    assert_eq!(asked(&body), "Easy one?", "{body}");
    let token = token_of(&body);
    let (_, body) = Call::new("bank", json!({"hard": false}))
        .state(&token)
        .answers(answer("c"))
        .send(edited.addr)
        .await;
    assert_eq!(
        body["result"]["content"][0]["text"],
        json!("easy (weight 40) 1 of 2: c"),
        "{body}"
    );
}

/// Neither `Copy` nor `Serialize`: it cannot be chosen across a suspension, but across an
/// ordinary future nothing is saved, and the tool compiles and runs as it did before
/// references chosen among constants were kept.
pub struct Plain {
    rounds: u32,
}

const ONE: Plain = Plain { rounds: 1 };
const TWO: Plain = Plain { rounds: 2 };

async fn score() -> u32 {
    7
}

#[saga_tool]
async fn scored(two: bool) -> Result<String, SagaError> {
    let plan: &Plain = if two { &TWO } else { &ONE };
    let points = score().await;
    Ok(format!("{points} x {}", plan.rounds))
}

#[tokio::test]
async fn a_reference_chosen_among_constants_across_an_ordinary_future_is_not_saved() {
    let server = serve_local(server(scored)).await;
    let (_, body) = Call::new("scored", json!({"two": true}))
        .send(server.addr)
        .await;
    assert_eq!(
        body["result"]["content"][0]["text"],
        json!("7 x 2"),
        "{body}"
    );
}
