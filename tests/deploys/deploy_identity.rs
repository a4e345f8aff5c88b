//! The edge cases of a suspension point's identity, two builds in one process sharing a
//! key: points that share a name are told apart by their code, a helper's reworded
//! question is another build's, a wrapper cannot lower a version, and a state whose serde
//! does not read back as itself is never sealed.

use saga_examples::harness::variant::Variant;
use saga_runtime::engine::{Call, SagaContext};
use saga_runtime::prelude::*;
use saga_runtime::rmcp::model::{CallToolResponse, JsonObject};
use saga_runtime::serve::BuildError;
use serde_json::json;

const KEY: [u8; 32] = [0x5c; 32];

fn tools(configure: impl FnOnce(SagaToolsBuilder) -> SagaToolsBuilder) -> SagaTools {
    configure(SagaTools::builder().keys(KeyRing::from_keys([KEY]).expect("a key ring")))
        .build()
        .expect("the tools build")
}

use saga_runtime::serve::SagaToolsBuilder;

fn cx() -> SagaContext {
    let capabilities = serde_json::from_value(json!({"elicitation": {}})).expect("capabilities");
    SagaContext::new("alice").with_capabilities(capabilities)
}

/// One round of `name`: the token and the keys asked, or the result's text, or the error.
async fn round(
    tools: &SagaTools,
    name: &str,
    token: Option<&str>,
    answers: serde_json::Value,
) -> Result<(Option<String>, Vec<String>, String), (i32, String)> {
    let call = Call {
        request_state: token.map(str::to_owned),
        input_responses: token.and_then(|_| serde_json::from_value(answers).ok()),
        ..Call::tool(name, Some(JsonObject::new()))
    };
    match tools.run(call, &cx()).await {
        Ok(CallToolResponse::InputRequired(required)) => {
            let asked = required
                .input_requests
                .as_ref()
                .map(|requests| {
                    requests
                        .values()
                        .map(|request| {
                            serde_json::to_value(request).expect("a request")["params"]["message"]
                                .as_str()
                                .unwrap_or_default()
                                .to_owned()
                        })
                        .collect()
                })
                .unwrap_or_default();
            Ok((required.request_state, asked, String::new()))
        }
        Ok(CallToolResponse::Complete(result)) => {
            let value = serde_json::to_value(result).expect("a result");
            Ok((
                None,
                Vec::new(),
                value["content"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            ))
        }
        Ok(other) => panic!("{other:?}"),
        Err(error) => Err((error.code.0, error.message.to_string())),
    }
}

mod charge_v1 {
    use saga_runtime::prelude::*;

    /// Charges, then mails a receipt, a checkpoint before each.
    #[saga_tool(name = "charge")]
    pub async fn charge() -> Result<String, SagaError> {
        let mut log: Vec<String> = Vec::new();
        checkpoint().await;
        log.push("charged".into());
        checkpoint().await;
        log.push("mailed".into());
        Ok(log.join(", "))
    }
}

mod charge_v2 {
    use saga_runtime::prelude::*;

    /// A fraud check in front: one more checkpoint, the same saved locals.
    #[saga_tool(name = "charge")]
    pub async fn charge() -> Result<String, SagaError> {
        let mut log: Vec<String> = Vec::new();
        checkpoint().await;
        log.push("checked".into());
        checkpoint().await;
        log.push("charged".into());
        checkpoint().await;
        log.push("mailed".into());
        Ok(log.join(", "))
    }
}

#[tokio::test]
async fn a_checkpoint_inserted_in_front_moves_no_token_onto_other_code() {
    let old = tools(|b| b.tool(charge_v1::charge));
    let new = tools(|b| b.tool(charge_v2::charge));
    let (first, _, _) = round(&old, "charge", None, json!({}))
        .await
        .expect("starts");
    // After the charge, at the second checkpoint: build 2's second checkpoint is before
    // its charge, and must not take this token.
    let (second, _, _) = round(&old, "charge", first.as_deref(), json!({}))
        .await
        .expect("charges");
    let resumed = round(&new, "charge", second.as_deref(), json!({})).await;
    assert_eq!(
        resumed.err().map(|(code, _)| code),
        Some(-32602),
        "refused, never charged twice"
    );
    // Build 1 itself finishes it.
    let (_, _, text) = round(&old, "charge", second.as_deref(), json!({}))
        .await
        .expect("finishes");
    assert_eq!(text, "charged, mailed");
}

mod confirm_v1 {
    use saga_runtime::prelude::*;

    #[saga_tool(name = "confirm")]
    pub async fn confirm(delete: bool) -> Result<String, SagaError> {
        if delete {
            let ok: bool = elicit("Delete everything?").await?;
            Ok(format!("delete: {ok}"))
        } else {
            let ok: bool = elicit("Keep a backup?").await?;
            Ok(format!("backup: {ok}"))
        }
    }
}

mod confirm_v2 {
    use saga_runtime::prelude::*;

    /// The branches swapped: the same names and layouts, at each other's places.
    #[saga_tool(name = "confirm")]
    pub async fn confirm(delete: bool) -> Result<String, SagaError> {
        if !delete {
            let ok: bool = elicit("Keep a backup?").await?;
            Ok(format!("backup: {ok}"))
        } else {
            let ok: bool = elicit("Delete everything?").await?;
            Ok(format!("delete: {ok}"))
        }
    }
}

#[tokio::test]
async fn swapped_branches_that_share_a_point_name_are_refused() {
    let old = tools(|b| b.tool(confirm_v1::confirm));
    let new = tools(|b| b.tool(confirm_v2::confirm));
    let call = |token: Option<String>| Call {
        request_state: token,
        input_responses: None,
        ..Call::tool("confirm", json!({"delete": true}).as_object().cloned())
    };
    let first = old.run(call(None), &cx()).await.expect("asks");
    let CallToolResponse::InputRequired(required) = first else {
        panic!("asks");
    };
    let refused = new
        .run(call(required.request_state.clone()), &cx())
        .await
        .expect_err("another point at that name");
    assert_eq!(refused.code.0, -32602);
}

mod reword {
    pub mod v1 {
        use saga_runtime::prelude::*;

        #[saga_fn]
        async fn ask() -> Result<bool, SagaError> {
            elicit::<bool>("Go?").await
        }

        #[saga_tool(name = "reword")]
        pub async fn reword() -> Result<String, SagaError> {
            let go = ask().await?;
            Ok(format!("go: {go}"))
        }
    }

    pub mod v2 {
        use saga_runtime::prelude::*;

        /// Only the helper's question is reworded.
        #[saga_fn]
        async fn ask() -> Result<bool, SagaError> {
            elicit::<bool>("Go ahead?").await
        }

        #[saga_tool(name = "reword")]
        pub async fn reword() -> Result<String, SagaError> {
            let go = ask().await?;
            Ok(format!("go: {go}"))
        }
    }
}

#[tokio::test]
async fn a_question_reworded_in_a_helper_is_asked_again_as_the_new_build_words_it() {
    let old = tools(|b| b.tool(reword::v1::reword));
    let new = tools(|b| b.tool(reword::v2::reword));
    let (token, asked, _) = round(&old, "reword", None, json!({})).await.expect("asks");
    assert_eq!(asked, ["Go?"]);
    // No answer came: the new build asks again, in its own words (not a tool error).
    let (again, asked, _) = round(&new, "reword", token.as_deref(), json!({}))
        .await
        .expect("asked again");
    assert_eq!(asked, ["Go ahead?"]);
    let key = "elicit-1";
    let (_, _, text) = round(
        &new,
        "reword",
        again.as_deref(),
        json!({key: {"action": "accept", "content": {"value": true}}}),
    )
    .await
    .expect("finishes");
    assert_eq!(text, "go: true");
}

mod versioned {
    use saga_runtime::prelude::*;

    #[saga_tool(version = 3)]
    pub async fn versioned() -> Result<String, SagaError> {
        let ok: bool = elicit("Ok?").await?;
        Ok(format!("{ok}"))
    }
}

#[test]
fn a_wrapper_cannot_lower_the_wrapped_tools_version() {
    let error = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        // A wrapper that forwards the layout but forgets the version.
        .tool(Variant::of(versioned::versioned))
        .build()
        .expect_err("the version is not forwarded");
    assert!(
        matches!(&error, BuildError::Layout { .. })
            && error.to_string().contains("forwards `version`"),
        "{error}"
    );
}

/// A hand-written state whose serde counts a skipped variant when it writes and not when
/// it reads (serde-rs/serde#2614).
#[derive(Debug, Serialize, Deserialize)]
enum Skewed {
    #[serde(skip)]
    #[allow(dead_code)]
    Fresh(u8),
    WaitA {
        a: u32,
    },
    WaitB {
        b: u32,
    },
}

struct SkewedTool;

impl SagaTool for SkewedTool {
    type State = Skewed;

    fn tool(&self) -> saga_runtime::rmcp::model::Tool {
        let schema = json!({"type": "object"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        saga_runtime::rmcp::model::Tool::new("skewed", "skews", std::sync::Arc::new(schema))
    }

    fn start(&self, _: JsonObject) -> Result<Skewed, saga_runtime::rmcp::ErrorData> {
        Ok(Skewed::WaitA { a: 1 })
    }

    async fn step(&self, state: Skewed, _: Answers, _: &SagaContext) -> Step<Skewed> {
        match state {
            Skewed::WaitA { a } => Step::checkpoint(Skewed::WaitA { a: a + 1 }),
            other => Step::done(format!("{other:?}")),
        }
    }
}

#[tokio::test]
async fn a_state_that_does_not_read_back_as_itself_is_never_sealed() {
    let tools = tools(|b| b.tool(SkewedTool));
    let refused = round(&tools, "skewed", None, json!({})).await;
    assert_eq!(
        refused.err().map(|(code, _)| code),
        Some(-32603),
        "an internal error, not a token that reads as WaitB"
    );
}

mod greet_v1 {
    use saga_runtime::prelude::*;

    #[saga_tool(name = "greet")]
    pub async fn greet() -> Result<String, SagaError> {
        let name: String = elicit("Name?").await?;
        Ok(format!("Hello, {name}."))
    }
}

mod greet_v2 {
    use saga_runtime::prelude::*;

    #[saga_tool(name = "greet")]
    pub async fn greet() -> Result<String, SagaError> {
        let name: String = elicit("Name?").await?;
        Ok(format!("Hi {name}!"))
    }
}

#[tokio::test]
async fn a_point_both_builds_have_resumes_on_the_current_code_even_with_a_retired_copy() {
    let old = tools(|b| b.tool(greet_v1::greet));
    let new = tools(|b| b.tool(greet_v2::greet).retired(greet_v1::greet));
    let (token, _, _) = round(&old, "greet", None, json!({})).await.expect("asks");
    let (_, _, text) = round(
        &new,
        "greet",
        token.as_deref(),
        json!({"elicit-1": {"action": "accept", "content": {"value": "Ada"}}}),
    )
    .await
    .expect("finishes");
    assert_eq!(
        text, "Hi Ada!",
        "the newest code that has the point runs it"
    );
}

mod borrow_v1 {
    use saga_runtime::prelude::*;

    /// Keeps a borrow of the first name across a suspension.
    #[saga_tool(name = "pick")]
    pub async fn pick() -> Result<String, SagaError> {
        let names = vec!["ada".to_owned(), "bo".to_owned()];
        let chosen = &names[0];
        checkpoint().await;
        Ok(format!("chose {chosen}"))
    }
}

mod borrow_v2 {
    use saga_runtime::prelude::*;

    /// The same saved locals, the borrow at another index.
    #[saga_tool(name = "pick")]
    pub async fn pick() -> Result<String, SagaError> {
        let names = vec!["ada".to_owned(), "bo".to_owned()];
        let chosen = &names[1];
        checkpoint().await;
        Ok(format!("chose {chosen}"))
    }
}

mod borrow_v3 {
    use saga_runtime::prelude::*;

    /// The borrow's path as build 1 has it, only the text after the suspension changed.
    #[saga_tool(name = "pick")]
    pub async fn pick() -> Result<String, SagaError> {
        let names = vec!["ada".to_owned(), "bo".to_owned()];
        let chosen = &names[0];
        checkpoint().await;
        Ok(format!("picked {chosen}"))
    }
}

/// The state saves a borrow's owner, not the borrow: a build that would borrow another
/// place of it refuses the token, never reads it along its own path; a build that borrows
/// the same place resumes it.
#[tokio::test]
async fn a_borrow_made_again_along_another_path_is_refused() {
    let old = tools(|b| b.tool(borrow_v1::pick));
    let moved = tools(|b| b.tool(borrow_v2::pick));
    let same = tools(|b| b.tool(borrow_v3::pick));
    let (token, _, _) = round(&old, "pick", None, json!({}))
        .await
        .expect("suspends");
    let refused = round(&moved, "pick", token.as_deref(), json!({})).await;
    assert_eq!(
        refused.err().map(|(code, _)| code),
        Some(-32602),
        "refused, never read as names[1]"
    );
    let (_, _, text) = round(&same, "pick", token.as_deref(), json!({}))
        .await
        .expect("the same path resumes");
    assert_eq!(text, "picked ada");
}

mod literal_v1 {
    use saga_runtime::prelude::*;

    /// Keeps a `&'static str` chosen among literals across a suspension.
    #[saga_tool(name = "side")]
    pub async fn side(white: bool) -> Result<String, SagaError> {
        let side = if white { "White" } else { "Black" };
        checkpoint().await;
        Ok(format!("{side} to move"))
    }
}

mod literal_v2 {
    use saga_runtime::prelude::*;

    /// The same saved locals, other literals to choose among.
    #[saga_tool(name = "side")]
    pub async fn side(white: bool) -> Result<String, SagaError> {
        let side = if white { "Blanc" } else { "Noir" };
        checkpoint().await;
        Ok(format!("{side} to move"))
    }
}

/// A `&'static str` is saved as its text and taken back among the build's literals: a
/// build with other literals refuses the token, where it would find none of them.
#[tokio::test]
async fn a_literal_choice_among_other_literals_is_refused() {
    let old = tools(|b| b.tool(literal_v1::side));
    let new = tools(|b| b.tool(literal_v2::side));
    let call = |token: Option<String>| Call {
        request_state: token,
        input_responses: None,
        ..Call::tool("side", json!({"white": true}).as_object().cloned())
    };
    let CallToolResponse::InputRequired(required) =
        old.run(call(None), &cx()).await.expect("suspends")
    else {
        panic!("suspends");
    };
    let refused = new
        .run(call(required.request_state.clone()), &cx())
        .await
        .expect_err("other literals");
    assert_eq!(refused.code.0, -32602);
    let Ok(CallToolResponse::Complete(done)) = old.run(call(required.request_state), &cx()).await
    else {
        panic!("build 1 finishes it");
    };
    assert_eq!(
        serde_json::to_value(done).expect("a result")["content"][0]["text"],
        "White to move"
    );
}
