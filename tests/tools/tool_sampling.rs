//! Sampling with tools (SEP-1577): an agent loop written as a plain `for` loop, answered
//! by the client's LLM (scripted with `saga_runtime::testing`) and by the server's model
//! (a local server of the OpenAI chat completions API that answers with `tool_calls`,
//! `saga_examples::harness::openai`): the `research` example to its end either way, the
//! history sent back balanced, a tool the sample did not offer refused, input that does
//! not fit answered as an error, a model that never stops bounded, and a client without
//! `sampling.tools` never sent tools.

// Sampling is deprecated by MCP 2026-07-28 (SEP-2577); it is what this file tests.
#![allow(deprecated)]

use saga_examples::harness::openai::{Behaviour, FakeOpenAi};
use saga_examples::research::{MAX_TURNS, research};
use saga_runtime::model::{OpenAiCompatible, SamplingPolicy};
use saga_runtime::prelude::*;
use saga_runtime::rmcp::model::{ClientCapabilities, JsonObject};
use saga_runtime::serve::{SagaTools, SagaToolsBuilder};
use saga_runtime::testing::{Answer, Failed, TestClient};
use serde_json::{Value, json};

const KEY: &str = "sk-test-0123456789";

/// That the call ended with a tool error saying `text`.
#[track_caller]
fn assert_tool_error(run: &saga_runtime::testing::Run, text: &str) {
    assert!(run.is_error(), "{}", run.text());
    assert!(run.text().contains(text), "{}", run.text());
}

/// The JSON-RPC error a run ended with.
#[track_caller]
fn server_error(failed: Failed) -> saga_runtime::rmcp::ErrorData {
    match failed {
        Failed::Server { error, .. } => error,
        other => panic!("a JSON-RPC error, not {other:?}"),
    }
}

fn sampling_without_tools() -> ClientCapabilities {
    ClientCapabilities::builder()
        .enable_elicitation()
        .enable_sampling()
        .build()
}

fn no_sampling() -> ClientCapabilities {
    ClientCapabilities::builder().enable_elicitation().build()
}

async fn with_model(behaviour: Behaviour, policy: SamplingPolicy) -> (FakeOpenAi, SagaTools) {
    with_model_and(behaviour, policy, |tools| tools.tool(research)).await
}

/// The fake provider behaving as `behaviour`, and a registry whose model it is, the rest
/// of the registry from `rest` (its tools, its limits).
async fn with_model_and(
    behaviour: Behaviour,
    policy: SamplingPolicy,
    rest: impl FnOnce(SagaToolsBuilder) -> SagaToolsBuilder,
) -> (FakeOpenAi, SagaTools) {
    let provider = FakeOpenAi::start(KEY).await;
    provider.behave(behaviour);
    let model = OpenAiCompatible::new(&provider.base_url, KEY, "gpt-test").expect("a model");
    let tools = rest(
        SagaTools::builder()
            .keys(KeyRing::ephemeral())
            .model(model)
            .sampling_policy(policy),
    )
    .build()
    .expect("builds");
    (provider, tools)
}

/// `research` of "q" for a client that cannot sample, the model (behaving as `behaviour`)
/// taking every sample: the provider, and how the call ended.
async fn research_by_the_model_alone(
    behaviour: Behaviour,
) -> (FakeOpenAi, saga_runtime::testing::Run) {
    let (provider, tools) = with_model(behaviour, SamplingPolicy::ServerOnly).await;
    let run = TestClient::with_tools(tools)
        .capabilities(no_sampling())
        .call("research", json!({"question": "q"}))
        .run()
        .await
        .expect("ends");
    (provider, run)
}

/// The client's LLM searches twice at once, asks the person, then answers: every turn is
/// a round, and each sample sends the whole conversation so far, balanced.
#[tokio::test]
async fn the_client_runs_the_research_loop_to_its_end() {
    let client = TestClient::new(research);
    let run = client
        .call("research", json!({"question": "What is MRTR?"}))
        .then(Answer::tool_uses([
            ("c1", "search", json!({"query": "mrtr"})),
            ("c2", "search", json!({"query": "tasks"})),
        ]))
        .then(Answer::tool_uses([(
            "c3",
            "ask_user",
            json!({"question": "Which era?"}),
        )]))
        .then(Answer::accept(json!({"answer": "the stateless one"})))
        .then(Answer::sampled("MRTR is the stateless era."))
        .run()
        .await
        .expect("completes");
    assert_eq!(run.text(), "MRTR is the stateless era.");
    let asked = run.asked();
    assert_eq!(asked.len(), 4, "three model turns and one question");
    assert_eq!(asked[0].tool_names(), ["search", "read_page", "ask_user"]);
    assert_eq!(
        asked[0].params()["tools"][0]["inputSchema"]["required"],
        json!(["query"])
    );
    assert_eq!(asked[2].message(), Some("Which era?"));
    // The second turn sends the question, the model's two tool uses, and their results.
    let messages = asked[1].params()["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["content"][1]["id"], "c2");
    assert_eq!(messages[2]["role"], "user");
    let results = messages[2]["content"].as_array().expect("results");
    assert_eq!(results[0]["toolUseId"], "c1");
    assert!(
        results[0]["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains("requestState")),
        "{results:?}"
    );
    assert_eq!(results[1]["toolUseId"], "c2");
    // The last turn holds the person's answer as ask_user's result.
    let last = asked[3].params()["messages"].as_array().expect("messages");
    assert_eq!(last.len(), 5);
    assert_eq!(
        last[4]["content"][0]["content"][0]["text"],
        "the stateless one"
    );
    let balanced: saga_runtime::rmcp::model::CreateMessageRequestParams =
        serde_json::from_value(asked[3].params().clone()).expect("a request");
    balanced.validate().expect("every tool use has its result");
}

/// A tool use of a tool the sample did not offer is the client's error, refused before
/// the tool runs.
#[tokio::test]
async fn a_tool_the_sample_did_not_offer_is_refused() {
    let client = TestClient::new(research);
    let failed = client
        .call("research", json!({"question": "q"}))
        .then(Answer::tool_uses([("c1", "rm_rf", json!({}))]))
        .run()
        .await
        .expect_err("refused");
    let error = server_error(failed);
    assert_eq!(error.code.0, -32602, "{error:?}");
    assert!(error.message.contains("rm_rf"), "{}", error.message);
    assert!(error.message.contains("did not offer"), "{}", error.message);
}

/// Input that does not fit the tool's arguments reaches the model as an error result
/// that names what does not fit; the model then answers.
#[tokio::test]
async fn input_that_does_not_fit_is_answered_as_an_error() {
    let client = TestClient::new(research);
    let run = client
        .call("research", json!({"question": "q"}))
        .then(Answer::tool_uses([("c1", "search", json!({"q": 7}))]))
        .then(Answer::sampled("I could not search."))
        .run()
        .await
        .expect("completes");
    assert_eq!(run.text(), "I could not search.");
    let second = &run.asked()[1];
    let result = &second.params()["messages"][2]["content"][0];
    assert_eq!(result["isError"], true);
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("search") && text.contains("query"), "{text}");
}

/// A model that never stops calling tools ends the call after the author's bound.
#[tokio::test]
async fn a_model_that_never_stops_is_bounded_by_the_loop() {
    let client = TestClient::new(research);
    let run = client
        .call("research", json!({"question": "q"}))
        .respond(|asked| {
            (asked.method() == "sampling/createMessage")
                .then(|| Answer::tool_uses([("again", "search", json!({"query": "saga"}))]))
        })
        .max_rounds(MAX_TURNS + 2)
        .run()
        .await
        .expect("ends");
    assert_tool_error(&run, "did not answer within");
    assert_eq!(run.asked().len(), MAX_TURNS);
}

/// An answer that is not the model's (a tool result, a user's role) or repeats a tool
/// use's id is refused.
#[tokio::test]
async fn malformed_tool_answers_are_refused() {
    let client = TestClient::new(research);
    for answer in [
        json!({"role": "assistant", "model": "m", "content": [
            {"type": "tool_result", "toolUseId": "x", "content": []}
        ]}),
        json!({"role": "user", "model": "m", "content": {"type": "text", "text": "hi"}}),
        json!({"role": "assistant", "model": "m", "content": [
            {"type": "tool_use", "id": "a", "name": "search", "input": {"query": "x"}},
            {"type": "tool_use", "id": "a", "name": "search", "input": {"query": "y"}}
        ]}),
    ] {
        let failed = client
            .call("research", json!({"question": "q"}))
            .then(Answer::raw(answer.clone()))
            .run()
            .await
            .expect_err("refused");
        let error = server_error(failed);
        assert_eq!(error.code.0, -32602, "{answer}: {error:?}");
    }
}

/// A client that samples but did not declare `sampling.tools` is never sent tools:
/// without a model the call fails with -32021 naming `sampling.tools`.
#[tokio::test]
async fn a_client_without_sampling_tools_is_never_sent_tools() {
    let client = TestClient::new(research).capabilities(sampling_without_tools());
    let failed = client
        .call("research", json!({"question": "q"}))
        .respond(|_| Some(Answer::sampled("unreachable")))
        .run()
        .await
        .expect_err("refused");
    let error = server_error(failed);
    assert_eq!(error.code.0, -32021, "{error:?}");
    let required = error.data.expect("data")["requiredCapabilities"].clone();
    assert_eq!(required["sampling"]["tools"], json!({}), "{required}");
}

/// The server's model runs the whole loop for a client that cannot sample: parallel tool
/// calls, then a question for the person (the client's), then the answer, mapped to and
/// from the chat completions API's `tools`, `tool_calls` and `tool` messages.
#[tokio::test]
async fn the_servers_model_runs_the_research_loop() {
    let (provider, tools) = with_model(Behaviour::Research, SamplingPolicy::ClientFirst).await;
    let client = TestClient::with_tools(tools).capabilities(no_sampling());
    let run = client
        .call("research", json!({"question": "How do tasks survive?"}))
        .then(Answer::accept(json!({"answer": "durability"})))
        .run()
        .await
        .expect("completes");
    let text = run.text();
    assert!(text.starts_with("Answer: "), "{text}");
    assert!(text.contains("tasks: A task keeps its state"), "{text}");
    assert!(text.contains("saga: saga compiles"), "{text}");
    assert!(text.ends_with("durability"), "{text}");
    // The client was asked only the person's question.
    let asked = run.asked();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].method(), "elicitation/create");
    let sent = provider.requests();
    assert_eq!(sent.len(), 3, "three turns");
    let first = &sent[0];
    assert_eq!(first["tools"][0]["type"], "function");
    assert_eq!(first["tools"][0]["function"]["name"], "search");
    assert!(first["tools"][0]["function"]["parameters"]["properties"]["query"].is_object());
    assert!(
        first["tools"][0]["function"]["parameters"]
            .get("$schema")
            .is_none()
    );
    let second = sent[1]["messages"].as_array().expect("messages");
    let assistant = second
        .iter()
        .find(|message| message["role"] == "assistant")
        .expect("the model's tool calls sent back");
    assert_eq!(assistant["tool_calls"].as_array().map(Vec::len), Some(2));
    let arguments: Value = serde_json::from_str(
        assistant["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .expect("arguments as text"),
    )
    .expect("JSON");
    assert_eq!(arguments["query"], "How do tasks survive?");
    let tool_messages: Vec<&Value> = second.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tool_messages.len(), 2);
    assert_eq!(
        tool_messages[0]["tool_call_id"],
        assistant["tool_calls"][0]["id"]
    );
}

/// A client that samples text but not tools: under `ClientFirst` the server's model takes
/// the samples with tools, and the client is sent none.
#[tokio::test]
async fn the_servers_model_takes_tools_a_text_sampling_client_cannot() {
    let (provider, tools) = with_model(Behaviour::Research, SamplingPolicy::ClientFirst).await;
    let client = TestClient::with_tools(tools).capabilities(sampling_without_tools());
    let run = client
        .call("research", json!({"question": "saga"}))
        .then(Answer::accept(json!({"answer": "all"})))
        .run()
        .await
        .expect("completes");
    assert!(run.text().starts_with("Answer: "), "{}", run.text());
    assert!(
        run.asked()
            .iter()
            .all(|asked| asked.method() != "sampling/createMessage"),
        "{:?}",
        run.asked()
    );
    assert_eq!(provider.requests().len(), 3);
}

/// The server's model asking for a tool the sample did not offer is its failure: the
/// tool reads `ModelFailed`, and the call ends with that error, not a client's.
#[tokio::test]
async fn the_servers_model_asking_an_unoffered_tool_fails_the_sample() {
    let (_provider, run) =
        research_by_the_model_alone(Behaviour::CallTool("delete_everything".into(), "{}".into()))
            .await;
    assert_tool_error(&run, "did not offer");
    assert!(run.text().contains("delete_everything"), "{}", run.text());
}

/// The server's model that never stops is bounded by the loop, and each of its turns
/// is a call to the provider within the same budgets.
#[tokio::test]
async fn the_servers_model_that_never_stops_is_bounded() {
    let (provider, run) = research_by_the_model_alone(Behaviour::CallTool(
        "search".into(),
        json!({"query": "saga"}).to_string(),
    ))
    .await;
    assert_tool_error(&run, "did not answer within");
    assert_eq!(provider.requests().len(), MAX_TURNS);
}

/// Arguments that are not a JSON object are not the documented format: the sample fails.
#[tokio::test]
async fn the_servers_model_with_arguments_that_are_not_json_fails_the_sample() {
    let (_provider, run) =
        research_by_the_model_alone(Behaviour::CallTool("search".into(), "{not json".into())).await;
    assert_tool_error(&run, "unexpected format");
}

/// A hand-made schema works as a typed one does.
#[test]
fn a_tool_with_a_written_schema() {
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    let tool = SamplingTool::new("now", "The time", schema);
    assert_eq!(tool.name(), "now");
    assert_eq!(tool.description(), "The time");
    assert_eq!(tool.input_schema()["type"], "object");
}

/// `search`'s input, for the tools below.
#[derive(Debug, Deserialize, JsonSchema)]
struct Query {
    /// What to look for.
    #[allow(dead_code)]
    query: String,
}

/// One turn that must use a tool: its request is not stated again from the state (the
/// choice is a path), so the token keeps it, and the answer is checked against that.
#[saga_tool]
async fn must_search(question: String) -> Result<String, SagaError> {
    let tools = [SamplingTool::of::<Query>("search", "Search")];
    let turn = sample_messages(vec![SamplingMessage::user(question)])
        .tools(tools)
        .tool_choice(ToolChoice::Required)
        .await?;
    let names: Vec<&str> = turn.tool_uses().iter().map(|used| used.name()).collect();
    Ok(names.join(","))
}

#[tokio::test]
async fn a_kept_request_refuses_a_tool_it_did_not_offer_too() {
    let client = TestClient::new(must_search);
    let run = client
        .call("must_search", json!({"question": "q"}))
        .then(Answer::tool_uses([("c1", "search", json!({"query": "x"}))]))
        .run()
        .await
        .expect("completes");
    assert_eq!(run.text(), "search");
    assert_eq!(
        run.asked()[0].params()["toolChoice"],
        json!({"mode": "required"})
    );
    let failed = client
        .call("must_search", json!({"question": "q"}))
        .then(Answer::tool_uses([("c1", "shell", json!({}))]))
        .run()
        .await
        .expect_err("refused");
    let error = server_error(failed);
    assert_eq!(error.code.0, -32602, "{error:?}");
    assert!(error.message.contains("shell"), "{}", error.message);
}

/// A conversation is saved state: one that outgrows the token cap ends the call with a
/// clear error, never a token the server would refuse when it comes back. The client's
/// answers are a small part of each round's state (the tool keeps every turn): the
/// tool's error, naming what it keeps (here the loop's helper, `answer_from_notes`).
#[tokio::test]
async fn a_history_past_the_token_cap_ends_with_the_tools_error() {
    let tools = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .max_token_len(6 * 1024)
        .tool(research)
        .build()
        .expect("builds");
    let client = TestClient::with_tools(tools);
    let mut turn = 0u32;
    let failed = client
        .call("research", json!({"question": "q"}))
        .respond(move |asked| {
            turn += 1;
            // Words that do not repeat from turn to turn: deflating keeps little of them.
            let query = noise_words(turn, 400);
            (asked.method() == "sampling/createMessage")
                .then(|| Answer::tool_uses([("big", "search", json!({"query": query}))]))
        })
        .max_rounds(MAX_TURNS + 2)
        .run()
        .await;
    let Err(Failed::Server { error, rounds }) = failed else {
        panic!("not refused: {}", failed.is_ok());
    };
    assert_eq!(error.code.0, -32603, "{error:?}");
    assert!(
        error.message.contains("the tool's state outgrew its token")
            && error
                .message
                .contains("the frame of the #[saga_fn] helper it is suspended in"),
        "{}",
        error.message
    );
    assert!(
        rounds.len() < MAX_TURNS,
        "the cap ends it first: {}",
        rounds.len()
    );
}

/// `n` words that differ from any other turn's.
fn noise_words(turn: u32, n: usize) -> String {
    saga_examples::harness::noise::noise(turn, n * 9)
}

/// API.md's agent loop, as written there: `let answer = loop { … break … }`, the tool's
/// own `search`, and an `elicit` inside the `match` over the tool uses.
mod as_api_md_writes_it {
    use super::*;

    #[derive(Deserialize, JsonSchema)]
    struct Search {
        query: String,
    }

    #[derive(Deserialize, JsonSchema)]
    struct AskUser {
        question: String,
    }

    fn search(query: String) -> String {
        format!("3 documents about {query}")
    }

    #[saga_tool]
    async fn agent(question: String) -> Result<String, SagaError> {
        let tools = [
            SamplingTool::of::<Search>("search", "Search the docs"),
            SamplingTool::of::<AskUser>("ask_user", "Ask the person a question"),
        ];
        let mut history = vec![SamplingMessage::user(question)];
        let answer = loop {
            let turn = sample_messages(history.clone())
                .tools(tools.clone())
                .max_tokens(400)
                .await?;
            if turn.tool_uses().is_empty() {
                break turn.text().to_owned();
            }
            let mut results = Vec::new();
            for call in turn.tool_uses() {
                let out = match call.name() {
                    "search" => search(call.input::<Search>()?.query),
                    "ask_user" => elicit::<String>(call.input::<AskUser>()?.question).await?,
                    other => format!("unknown tool {other}"),
                };
                results.push(call.result(out));
            }
            history.extend(turn.continue_with(results)); // the assistant's tool uses + the results
        };
        Ok(answer)
    }

    #[tokio::test]
    async fn runs_to_its_answer() {
        let client = TestClient::new(agent);
        let run = client
            .call("agent", json!({"question": "q"}))
            .then(Answer::tool_uses([
                ("s", "search", json!({"query": "rust"})),
                ("a", "ask_user", json!({"question": "Which one?"})),
            ]))
            .then(Answer::accept(json!({"value": "the second"})))
            .then(Answer::sampled("done"))
            .run()
            .await
            .expect("completes");
        assert_eq!(run.text(), "done");
        let last = &run.asked()[2].params()["messages"][2]["content"];
        assert_eq!(last[0]["content"][0]["text"], "3 documents about rust");
        assert_eq!(last[1]["content"][0]["text"], "the second");
        // Input that does not fit ends the call with the error `?` passes up.
        let misfit = client
            .call("agent", json!({"question": "q"}))
            .then(Answer::tool_uses([("s", "search", json!({"q": 1}))]))
            .run()
            .await
            .expect("ends");
        assert_tool_error(&misfit, "does not fit its arguments");
    }
}

/// Tool inputs cannot be cut as text is: a model whose tool uses are larger than
/// `max_answer_bytes` fails the sample with that bound's reason.
#[tokio::test]
async fn the_servers_model_with_tool_inputs_past_the_answer_bound_fails_the_sample() {
    let huge = json!({"query": "x".repeat(4096)}).to_string();
    let (_provider, tools) = with_model_and(
        Behaviour::CallTool("search".into(), huge),
        SamplingPolicy::ServerOnly,
        |tools| {
            tools
                .sampling_limits(
                    saga_runtime::model::SamplingLimits::default().max_answer_bytes(1024),
                )
                .tool(research)
        },
    )
    .await;
    let run = TestClient::with_tools(tools)
        .capabilities(no_sampling())
        .call("research", json!({"question": "q"}))
        .run()
        .await
        .expect("ends");
    assert_tool_error(&run, "tool uses are larger than the server takes");
}

/// One turn whose one tool has a long name: the name the model answers with is the one
/// offered, never cut on the way.
#[saga_tool]
async fn long_named(question: String) -> Result<String, SagaError> {
    let name = "a_tool_whose_name_is_long_".repeat(8);
    let tools = [SamplingTool::of::<Query>(name, "Search")];
    let turn = sample_messages(vec![SamplingMessage::user(question)])
        .tools(tools)
        .await?;
    Ok(turn
        .tool_uses()
        .first()
        .map(|used| used.name().len().to_string())
        .unwrap_or_default())
}

#[tokio::test]
async fn the_servers_model_may_call_a_tool_with_a_long_name() {
    let name = "a_tool_whose_name_is_long_".repeat(8);
    let (_provider, tools) = with_model_and(
        Behaviour::CallTool(name.clone(), json!({"query": "x"}).to_string()),
        SamplingPolicy::ServerOnly,
        |tools| tools.tool(long_named),
    )
    .await;
    let run = TestClient::with_tools(tools)
        .capabilities(no_sampling())
        .call("long_named", json!({"question": "q"}))
        .run()
        .await
        .expect("completes");
    assert!(!run.is_error(), "{}", run.text());
    assert_eq!(run.text(), name.len().to_string());
}

/// Offers its tools and a choice made again after each resume (a plain `let` of
/// `SamplingTool::of` with literal texts, a `ToolChoice` variant), beside a list built at
/// run time (`mut`), which is saved as any value is.
#[saga_tool]
async fn offers_again(rounds: u32) -> Result<String, SagaError> {
    let tools = vec![SamplingTool::of::<saga_examples::research::Search>(
        "search",
        "Search the project's notes",
    )];
    let choice = ToolChoice::Required;
    let mut extra = Vec::new();
    extra.push(SamplingTool::of::<saga_examples::research::ReadPage>(
        "read_page",
        "Read a page",
    ));
    let mut used = 0;
    for _ in 0..rounds {
        let offered: Vec<SamplingTool> = tools.iter().chain(&extra).cloned().collect();
        let turn = sample("Look something up")
            .tools(offered)
            .tool_choice(choice)
            .max_tokens(50)
            .await?;
        used += turn.tool_uses().len();
    }
    Ok(format!("{used} uses"))
}

#[tokio::test]
async fn offered_tools_and_a_choice_made_again_after_each_resume_are_the_same() {
    let client = TestClient::new(offers_again);
    let run = client
        .call("offers_again", json!({"rounds": 3}))
        .respond(|asked| {
            (asked.method() == "sampling/createMessage")
                .then(|| Answer::tool_uses([("a", "search", json!({"query": "saga"}))]))
        })
        .run()
        .await
        .expect("completes");
    assert_eq!(run.text(), "3 uses");
    let asked = run.asked();
    assert_eq!(asked.len(), 3);
    for round in &asked {
        assert_eq!(round.tool_names(), ["search", "read_page"]);
        assert_eq!(
            round.params()["toolChoice"],
            asked[0].params()["toolChoice"]
        );
        assert_eq!(round.params()["tools"], asked[0].params()["tools"]);
    }
    assert_eq!(asked[0].params()["toolChoice"]["mode"], "required");
}
