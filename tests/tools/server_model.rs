//! `sample()` answered by a server-side model (`saga_runtime::model`), against a local
//! server of the OpenAI chat completions API that checks its key
//! (`saga_examples::harness::openai`): the same tool, for a client that cannot sample and
//! one that can, under each policy; a provider that is slow, fails or answers malformed
//! JSON; and the bounds, which one caller cannot spend for another.

// Sampling is deprecated by MCP 2026-07-28 (SEP-2577); it is what this file tests.
#![allow(deprecated)]

use std::time::Duration;

use saga_examples::harness::openai::{Behaviour, FakeOpenAi, PROVIDER_SECRET};
use saga_runtime::model::{OpenAiCompatible, SamplingLimits, SamplingPolicy};
use saga_runtime::prelude::*;
use saga_runtime::rmcp::model::ClientCapabilities;
use saga_runtime::serve::SagaTools;
use saga_runtime::testing::{Answer, Failed, TestCall, TestClient};
use serde_json::json;

const KEY: &str = "sk-test-0123456789";

/// Asks who to greet, then has an LLM write the greeting.
#[saga_tool]
async fn greet(style: String) -> Result<String, SagaError> {
    let name: String = elicit("Who should be greeted?").await?;
    let greeting = sample(format!("Greet {name}"))
        .system(format!("You write {style} greetings."))
        .max_tokens(64)
        .temperature(0.5)
        .await?;
    Ok(greeting.text().to_owned())
}

/// Asks a name, samples, and keeps the sample's answer across a second question.
#[saga_tool]
async fn keeps_sample() -> Result<String, SagaError> {
    let name: String = elicit("Who?").await?;
    let line = sample(format!("Write about {name}")).await?;
    let fine: bool = elicit("Is this fine?").await?;
    Ok(format!("{fine}: {}", line.text()))
}

/// Asks a question and samples in one round.
#[saga_tool]
async fn both() -> Result<String, SagaError> {
    let (name, line) = join!(elicit::<String>("Your name?"), sample("Say hi"));
    let (name, line) = (name?, line?);
    Ok(format!("{name}: {}", line.text()))
}

/// Two samples in one round.
#[saga_tool]
async fn two_samples() -> Result<String, SagaError> {
    let (first, second) = join!(sample("the first"), sample("the second"));
    Ok(format!("{} | {}", first?.text(), second?.text()))
}

/// Six samples in one round: more than one caller's share of the samples running.
#[saga_tool]
async fn six_samples() -> Result<String, SagaError> {
    let lines = join_all((0..6).map(|n| sample(format!("line {n}")))).await;
    let mut texts = Vec::new();
    for line in lines {
        texts.push(line?.text().to_owned());
    }
    Ok(texts.join(", "))
}

/// Samples only when a sample is answered, as API.md advises a tool that can do without.
#[saga_tool]
async fn adapts(cx: &SagaContext) -> Result<String, SagaError> {
    if cx.can_sample() {
        Ok(sample("Say hi").await?.text().to_owned())
    } else {
        Ok("no model to ask".to_owned())
    }
}

/// A sample whose prompt is large and whose `maxTokens` is one.
#[saga_tool]
async fn long_prompt() -> Result<String, SagaError> {
    Ok(sample("x".repeat(2_000))
        .max_tokens(1)
        .await?
        .text()
        .to_owned())
}

fn tools(provider: &FakeOpenAi, key: &str, policy: Option<SamplingPolicy>) -> SagaTools {
    let limits = SamplingLimits::default().timeout(Duration::from_millis(800));
    tools_limited(provider, key, policy, limits)
}

/// Every tool of this file, with the provider's model under `policy` and `limits`.
fn tools_limited(
    provider: &FakeOpenAi,
    key: &str,
    policy: Option<SamplingPolicy>,
    limits: SamplingLimits,
) -> SagaTools {
    let model = OpenAiCompatible::new(&provider.base_url, key, "fake-model").expect("a client");
    let mut builder = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .tool(greet)
        .tool(both)
        .tool(two_samples)
        .tool(six_samples)
        .tool(adapts)
        .tool(long_prompt)
        .model(model)
        .sampling_limits(limits);
    if let Some(policy) = policy {
        builder = builder.sampling_policy(policy);
    }
    builder.build().expect("the tools build")
}

/// `greet`, in `style`, answered "Ada" when it asks who.
fn greet_ada<'a>(client: &'a TestClient, style: &str) -> TestCall<'a> {
    client
        .call("greet", json!({"style": style}))
        .then(Answer::accept(json!({"value": "Ada"})))
}

fn without_sampling() -> ClientCapabilities {
    ClientCapabilities::builder().enable_elicitation().build()
}

fn with_sampling() -> ClientCapabilities {
    ClientCapabilities::builder()
        .enable_elicitation()
        .enable_sampling()
        .build()
}

#[tokio::test]
async fn a_client_that_cannot_sample_gets_the_servers_model_in_the_same_round() {
    let provider = FakeOpenAi::start(KEY).await;
    let client =
        TestClient::with_tools(tools(&provider, KEY, None)).capabilities(without_sampling());
    let run = greet_ada(&client, "warm")
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "echo: Greet Ada");
    // One round asked the client (the name); the sample cost it none.
    assert_eq!(run.rounds().len(), 2, "{:?}", run.rounds());
    assert!(
        run.rounds()
            .iter()
            .flat_map(|round| round.asked())
            .all(|asked| asked.method() != "sampling/createMessage"),
        "the client was sent a sample"
    );
    // What the provider was sent: the system prompt first, the message, the bounds.
    let sent = provider.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["model"], "fake-model");
    assert_eq!(sent[0]["max_tokens"], 64);
    assert_eq!(sent[0]["temperature"], 0.5);
    assert_eq!(
        sent[0]["messages"],
        json!([
            {"role": "system", "content": "You write warm greetings."},
            {"role": "user", "content": "Greet Ada"}
        ])
    );
}

#[tokio::test]
async fn a_client_that_can_sample_is_asked_first_unless_the_server_goes_first() {
    let provider = FakeOpenAi::start(KEY).await;
    let client = TestClient::with_tools(tools(&provider, KEY, Some(SamplingPolicy::ClientFirst)))
        .capabilities(with_sampling());
    let run = greet_ada(&client, "warm")
        .then(Answer::sampled("Hello from the client"))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "Hello from the client");
    assert!(provider.requests().is_empty(), "the model was asked");

    for policy in [SamplingPolicy::ServerFirst, SamplingPolicy::ServerOnly] {
        let client = TestClient::with_tools(tools(&provider, KEY, Some(policy)))
            .capabilities(with_sampling());
        let run = client
            .call("greet", json!({"style": "dry"}))
            .then(Answer::accept(json!({"value": "Bob"})))
            .run()
            .await
            .expect("the call completes");
        assert_eq!(run.text(), "echo: Greet Bob", "{policy:?}");
    }
}

#[tokio::test]
async fn client_only_refuses_a_client_that_cannot_sample() {
    let provider = FakeOpenAi::start(KEY).await;
    let client = TestClient::with_tools(tools(&provider, KEY, Some(SamplingPolicy::ClientOnly)))
        .capabilities(without_sampling());
    let failed = greet_ada(&client, "warm").run().await.expect_err("refused");
    assert!(
        matches!(&failed, Failed::Server { error, .. } if error.code.0 == -32021),
        "{failed:?}"
    );
    assert!(provider.requests().is_empty());
    // And no model at all is the same.
    let plain = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .tool(greet)
        .build()
        .expect("builds");
    let failed = TestClient::with_tools(plain)
        .capabilities(without_sampling())
        .call("greet", json!({"style": "warm"}))
        .then(Answer::accept(json!({"value": "Ada"})))
        .run()
        .await
        .expect_err("refused");
    assert!(matches!(&failed, Failed::Server { error, .. } if error.code.0 == -32021));
    // A policy that needs a model, without one, is refused when the server is built.
    let Err(error) = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .tool(greet)
        .sampling_policy(SamplingPolicy::ServerOnly)
        .build()
    else {
        panic!("a policy that needs a model was built without one");
    };
    assert!(error.to_string().contains(".model("), "{error}");
}

#[tokio::test]
async fn a_round_that_asks_the_client_and_samples_sends_the_client_its_part_only() {
    let provider = FakeOpenAi::start(KEY).await;
    let client =
        TestClient::with_tools(tools(&provider, KEY, None)).capabilities(without_sampling());
    let run = client
        .call("both", json!({}))
        .then(Answer::accept(json!({"value": "Ada"})))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "Ada: echo: Say hi");
    let asked: Vec<String> = run
        .rounds()
        .iter()
        .flat_map(|round| round.asked())
        .map(|asked| asked.method().to_owned())
        .collect();
    assert_eq!(asked, ["elicitation/create"]);
    assert_eq!(provider.requests().len(), 1, "the model is asked once");
}

#[tokio::test]
async fn a_provider_that_fails_is_the_tools_error_and_leaks_nothing() {
    let provider = FakeOpenAi::start(KEY).await;
    let cases = [
        (
            Behaviour::Slow(Duration::from_secs(3)),
            "did not answer in time",
        ),
        (Behaviour::Status(500), "HTTP status 500"),
        (Behaviour::Status(429), "HTTP status 429"),
        (Behaviour::Malformed, "unexpected format"),
        (Behaviour::Refuse, "declined"),
    ];
    for (behaviour, reason) in cases {
        provider.behave(behaviour.clone());
        let client =
            TestClient::with_tools(tools(&provider, KEY, None)).capabilities(without_sampling());
        let run = greet_ada(&client, "warm")
            .run()
            .await
            .expect("the tool's error is a result");
        assert!(run.is_error(), "{behaviour:?}: {}", run.text());
        assert!(run.text().contains(reason), "{behaviour:?}: {}", run.text());
        assert!(!run.text().contains(PROVIDER_SECRET), "{}", run.text());
        assert!(!run.text().contains(KEY), "{}", run.text());
    }
    // A wrong key is the provider's 401, said as a status.
    provider.behave(Behaviour::Echo);
    let client =
        TestClient::with_tools(tools(&provider, "sk-wrong", None)).capabilities(without_sampling());
    let run = greet_ada(&client, "warm").run().await.expect("a result");
    assert!(run.text().contains("HTTP status 401"), "{}", run.text());
    assert!(!run.text().contains("sk-wrong"));
}

#[tokio::test]
async fn one_caller_cannot_spend_anothers_share() {
    let provider = FakeOpenAi::start(KEY).await;
    let tools = tools_limited(
        &provider,
        KEY,
        None,
        SamplingLimits::default().requests_per_minute(2),
    );
    let run_as = |principal: &str| {
        TestClient::with_tools(tools.clone())
            .principal(principal)
            .capabilities(without_sampling())
    };
    let mallory = run_as("mallory");
    for _ in 0..2 {
        let run = mallory
            .call("greet", json!({"style": "warm"}))
            .then(Answer::accept(json!({"value": "x"})))
            .run()
            .await
            .expect("a result");
        assert!(!run.is_error(), "{}", run.text());
    }
    let spent = mallory
        .call("greet", json!({"style": "warm"}))
        .then(Answer::accept(json!({"value": "x"})))
        .run()
        .await
        .expect("a result");
    assert!(spent.is_error());
    assert!(
        spent.text().contains("for this minute are spent"),
        "{}",
        spent.text()
    );
    let alice = run_as("alice")
        .call("greet", json!({"style": "warm"}))
        .then(Answer::accept(json!({"value": "Alice"})))
        .run()
        .await
        .expect("a result");
    assert_eq!(alice.text(), "echo: Greet Alice", "another caller's share");
    // A prompt larger than the server takes is never sent.
    let small = tools_limited(
        &provider,
        KEY,
        None,
        SamplingLimits::default().max_prompt_bytes(100),
    );
    let before = provider.requests().len();
    let run = TestClient::with_tools(small)
        .capabilities(without_sampling())
        .call("greet", json!({"style": "x".repeat(200)}))
        .then(Answer::accept(json!({"value": "Ada"})))
        .run()
        .await
        .expect("a result");
    assert!(run.text().contains("prompt is larger"), "{}", run.text());
    assert_eq!(provider.requests().len(), before);
}

/// A task whose client did not declare sampling: the worker has the server's model answer
/// its sample, and the task completes without waiting for `tasks/update`.
#[saga_tool(task)]
async fn summarise(topic: String) -> Result<String, SagaError> {
    checkpoint().await;
    let summary = sample(format!("Summarise {topic}")).max_tokens(50).await?;
    Ok(summary.text().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tasks_sample_is_answered_by_the_servers_model() {
    let provider = FakeOpenAi::start(KEY).await;
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(summarise)
        .tasks(saga_runtime::tasks::TaskStore::memory())
        .model(OpenAiCompatible::new(&provider.base_url, KEY, "fake-model").expect("a client"))
        .build()
        .expect("builds");
    let running = saga_examples::harness::serving::serve_local(server).await;
    let client = saga_examples::harness::tasks::TaskClient::new();
    let id = client
        .create(running.addr, "summarise", json!({"topic": "tides"}))
        .await;
    let task = client
        .settled(running.addr, &id, Duration::from_secs(20))
        .await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(
        task["result"]["content"][0]["text"], "echo: Summarise tides",
        "{task}"
    );
    assert_eq!(provider.requests().len(), 1);
}

/// Identities a client makes up share its address's budget: over MRTR, and in tasks,
/// whose samples the worker asks long after the request that created them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn made_up_identities_share_one_budget() {
    let provider = FakeOpenAi::start(KEY).await;
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(summarise)
        .tasks(saga_runtime::tasks::TaskStore::memory())
        .model(OpenAiCompatible::new(&provider.base_url, KEY, "fake-model").expect("a client"))
        .sampling_limits(SamplingLimits::default().requests_per_minute(1))
        .build()
        .expect("builds");
    let running = saga_examples::harness::serving::serve_local(server).await;
    let finished = |who: &'static str| {
        let client = saga_examples::harness::tasks::TaskClient::new().authorization(who);
        let addr = running.addr;
        async move {
            let id = client
                .create(addr, "summarise", json!({"topic": who}))
                .await;
            client.settled(addr, &id, Duration::from_secs(20)).await
        }
    };
    let first = finished("Bearer made-up-1").await;
    assert_eq!(
        first["result"]["content"][0]["text"], "echo: Summarise Bearer made-up-1",
        "{first}"
    );
    let second = finished("Bearer made-up-2").await;
    assert_eq!(second["result"]["isError"], true, "{second}");
    assert!(
        second["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains("for this minute are spent")),
        "{second}"
    );
    assert_eq!(
        provider.requests().len(),
        1,
        "a made-up identity got a budget of its own"
    );
}

/// A `maxTokens` larger than `SamplingLimits::max_tokens` is cut to it before it is sent.
#[tokio::test]
async fn a_larger_max_tokens_is_cut_to_the_limit() {
    let provider = FakeOpenAi::start(KEY).await;
    let tools = tools_limited(
        &provider,
        KEY,
        None,
        SamplingLimits::default().max_tokens(10),
    );
    TestClient::with_tools(tools)
        .capabilities(without_sampling())
        .call("greet", json!({"style": "warm"}))
        .then(Answer::accept(json!({"value": "Ada"})))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(
        provider.requests()[0]["max_tokens"],
        10,
        "the tool asked 64"
    );
}

/// Under `ServerFirst`, a client that can sample is asked when the model fails.
#[tokio::test]
async fn server_first_falls_back_to_a_client_that_samples() {
    let provider = FakeOpenAi::start(KEY).await;
    provider.behave(Behaviour::Status(503));
    let client = TestClient::with_tools(tools(&provider, KEY, Some(SamplingPolicy::ServerFirst)))
        .capabilities(with_sampling());
    let run = greet_ada(&client, "warm")
        .then(Answer::sampled("Hello from the client"))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "Hello from the client");
    assert_eq!(provider.requests().len(), 1, "the model was asked first");
    // ServerOnly does not fall back: the failure is the tool's.
    let client = TestClient::with_tools(tools(&provider, KEY, Some(SamplingPolicy::ServerOnly)))
        .capabilities(with_sampling());
    let run = greet_ada(&client, "warm").run().await.expect("a result");
    assert!(
        run.is_error() && run.text().contains("HTTP status 503"),
        "{}",
        run.text()
    );
}

/// Under `ServerFirst`, a round of two samples whose second the model fails: the client
/// answers the second, and the model is not asked it again (nor the first twice), so the
/// round is not sent back and forth.
#[tokio::test]
async fn a_sample_the_client_answered_is_not_asked_of_the_model_again() {
    let provider = FakeOpenAi::start(KEY).await;
    provider.behave(Behaviour::FailOn("the second".into()));
    let client = TestClient::with_tools(tools(&provider, KEY, Some(SamplingPolicy::ServerFirst)))
        .capabilities(with_sampling());
    let run = client
        .call("two_samples", json!({}))
        .then(Answer::sampled("the client's second"))
        .max_rounds(4)
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "echo: the first | the client's second");
    let prompts: Vec<String> = provider
        .requests()
        .iter()
        .map(|sent| sent["messages"][0]["content"].to_string())
        .collect();
    assert_eq!(prompts.len(), 3, "{prompts:?}");
    assert_eq!(
        prompts.iter().filter(|p| p.contains("the second")).count(),
        1,
        "the model was asked the client's sample again: {prompts:?}"
    );
}

/// Under `ServerOnly`, a client that answers a sample it was never sent (its key beside
/// its answer to the question of the same round) does not put its text in the tool's
/// hands: the model answers it.
#[tokio::test]
async fn under_server_only_a_client_cannot_answer_a_sample() {
    let provider = FakeOpenAi::start(KEY).await;
    let client = TestClient::with_tools(tools(&provider, KEY, Some(SamplingPolicy::ServerOnly)))
        .capabilities(with_sampling());
    let run = client
        .call("both", json!({}))
        .then(Answer::accept(json!({"value": "Ada"})))
        .unasked("sample-2", Answer::sampled("forged by the client"))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "Ada: echo: Say hi");
    assert_eq!(provider.requests().len(), 1);
}

/// A round of more samples than one caller may have answered at once is answered whole:
/// they wait for places rather than failing as busy.
#[tokio::test]
async fn a_round_of_more_samples_than_a_callers_share_is_answered_whole() {
    let provider = FakeOpenAi::start(KEY).await;
    let client =
        TestClient::with_tools(tools(&provider, KEY, None)).capabilities(without_sampling());
    let run = client
        .call("six_samples", json!({}))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(
        run.text(),
        "echo: line 0, echo: line 1, echo: line 2, echo: line 3, echo: line 4, echo: line 5"
    );
    assert_eq!(provider.requests().len(), 6);
}

/// `cx.can_sample()` says whether a sample is answered: by the client, or by the server's
/// model for a client that cannot sample.
#[tokio::test]
async fn can_sample_is_true_where_the_servers_model_answers() {
    let provider = FakeOpenAi::start(KEY).await;
    let client =
        TestClient::with_tools(tools(&provider, KEY, None)).capabilities(without_sampling());
    let run = client
        .call("adapts", json!({}))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "echo: Say hi");
    // Without a model, the same client is told there is none.
    let plain = TestClient::with_tools(
        SagaTools::builder()
            .keys(KeyRing::ephemeral())
            .tool(adapts)
            .build()
            .expect("the tools build"),
    )
    .capabilities(without_sampling());
    let run = plain
        .call("adapts", json!({}))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "no model to ask");
}

/// The tokens a minute a caller may spend count the prompt: a large prompt with a
/// `maxTokens` of one is not nearly free.
#[tokio::test]
async fn the_prompt_counts_against_the_tokens_a_minute() {
    let provider = FakeOpenAi::start(KEY).await;
    let limits = SamplingLimits::default().tokens_per_minute(100);
    let tools = tools_limited(&provider, KEY, None, limits);
    let run = TestClient::with_tools(tools)
        .capabilities(without_sampling())
        .call("long_prompt", json!({}))
        .run()
        .await
        .expect("the call ends");
    assert!(run.is_error(), "{}", run.text());
    assert!(
        run.text().contains("tokens for this minute"),
        "{}",
        run.text()
    );
    assert!(provider.requests().is_empty(), "the model was asked");
}

/// A provider of one's own, as the guide says: the `Model` trait, one method from the
/// request to a `Completion`.
#[tokio::test]
async fn a_model_of_ones_own_answers_samples() {
    use saga_runtime::model::{BoxFuture, Completion, Model, ModelError};
    use saga_runtime::rmcp::model::CreateMessageRequestParams;

    #[derive(Debug)]
    struct Shouts;

    impl Model for Shouts {
        fn complete<'a>(
            &'a self,
            request: &'a CreateMessageRequestParams,
        ) -> BoxFuture<'a, Result<Completion, ModelError>> {
            let asked = serde_json::to_value(&request.messages).unwrap_or_default();
            Box::pin(async move {
                let text = asked[0]["content"]["text"].as_str().unwrap_or_default();
                Ok(Completion::new(text.to_uppercase(), "shouts-1"))
            })
        }
    }

    let tools = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .tool(adapts)
        .model(Shouts)
        .build()
        .expect("the tools build");
    let run = TestClient::with_tools(tools)
        .capabilities(without_sampling())
        .call("adapts", json!({}))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "SAY HI");
}

// ---------------------------------------------------------------------------------------
// Over HTTP, in the formats that carry answers without a token (dependent-requests) and
// step errors (tools/resumeSaga): who answers a sample, and what a client may send for it.
// ---------------------------------------------------------------------------------------

mod over_http {
    use super::*;
    use saga_examples::harness::http::{Post, StatusCode, meta, request, with_meta};
    use saga_examples::harness::serving::{Running, serve_local};
    use serde_json::Value;

    /// The tools of this file behind HTTP, with the provider's model under `policy`.
    pub(super) async fn serve(provider: &FakeOpenAi, policy: SamplingPolicy) -> Running {
        let limits = SamplingLimits::default().timeout(Duration::from_millis(800));
        serve_limited(provider, policy, limits).await
    }

    /// [`serve`] under `limits`.
    pub(super) async fn serve_limited(
        provider: &FakeOpenAi,
        policy: SamplingPolicy,
        limits: SamplingLimits,
    ) -> Running {
        let model = OpenAiCompatible::new(&provider.base_url, KEY, "fake-model").expect("a client");
        let server = SagaServer::builder()
            .keys(KeyRing::ephemeral())
            .tool(both)
            .tool(greet)
            .tool(keeps_sample)
            .model(model)
            .sampling_policy(policy)
            .sampling_limits(limits)
            .build()
            .expect("the server builds");
        serve_local(server).await
    }

    /// An MRTR `tools/call` of `tool` from a client that cannot sample, resuming `token`
    /// with Ada's name as the answer to `elicit-1`: the JSON-RPC reply.
    pub(super) async fn mrtr(running: &Running, id: u64, tool: &str, token: Option<&str>) -> Value {
        let mut params = json!({"name": tool, "arguments": {"style": "warm"}, "_meta": meta(json!({"elicitation": {}}))});
        if let Some(token) = token {
            params["requestState"] = json!(token);
            params["inputResponses"] =
                json!({"elicit-1": {"action": "accept", "content": {"value": "Ada"}}});
        }
        Post::mcp(running.addr)
            .rpc(&request(id, "tools/call", params))
            .send()
            .await
            .1
    }

    /// `greet` to its end over MRTR: the result.
    async fn greet_over_mrtr(running: &Running) -> Value {
        let first = mrtr(running, 1, "greet", None).await;
        let token = first["result"]["requestState"].as_str().expect("a token");
        mrtr(running, 2, "greet", Some(token)).await["result"].clone()
    }

    /// Finding 6: what the provider writes reaches the tool and the client bounded: a
    /// 3 MB model name (copied into `_meta["saga/samples"]`, and so `saga call`'s output)
    /// is cut to 128 bytes on one line, and an answer past `max_answer_bytes` is cut and
    /// reads as stopped at `maxTokens`.
    #[tokio::test]
    async fn a_providers_words_reach_the_client_bounded() {
        let provider = FakeOpenAi::start(KEY).await;
        let running = serve(&provider, SamplingPolicy::ClientFirst).await;
        provider.behave(Behaviour::Named(format!(
            "evil\nINFO forged {}",
            "m".repeat(3_000_000)
        )));
        let result = greet_over_mrtr(&running).await;
        let named = result["_meta"]["saga/samples"][0]["model"]
            .as_str()
            .expect("the model's name");
        assert!(named.len() <= 128, "{} bytes", named.len());
        assert!(!named.contains('\n'), "{named}");
        assert!(named.starts_with("evilINFO forged"), "{named}");
        provider.behave(Behaviour::Say("ü".repeat(40_000)));
        let result = greet_over_mrtr(&running).await;
        let text = result["content"][0]["text"].as_str().expect("the text");
        assert!(
            text.len() <= 32 * 1024 && text.len() > 32 * 1024 - 4,
            "{}",
            text.len()
        );
    }

    /// Finding 6: a retry of a round the model answered does not ask it again; it reads
    /// the same answer.
    #[tokio::test]
    async fn a_retry_of_a_round_does_not_pay_the_model_twice() {
        let provider = FakeOpenAi::start(KEY).await;
        let running = serve(&provider, SamplingPolicy::ClientFirst).await;
        let first = mrtr(&running, 1, "greet", None).await;
        let token = first["result"]["requestState"].as_str().expect("a token");
        let once = mrtr(&running, 2, "greet", Some(token)).await;
        let twice = mrtr(&running, 3, "greet", Some(token)).await;
        assert_eq!(
            once["result"]["content"], twice["result"]["content"],
            "{twice:#}"
        );
        assert_eq!(
            provider.requests().len(),
            1,
            "the retry asked the model again"
        );
        // Another call of the same tool is not a retry: the model is asked.
        greet_over_mrtr(&running).await;
        assert_eq!(provider.requests().len(), 2);
    }

    /// Finding 6: a state that outgrows the token because it keeps the model's answer
    /// says so (it blamed the client's answers: "send smaller answers"), as the server's
    /// error; and the retry does not pay for the sample again.
    #[tokio::test]
    async fn a_state_outgrown_by_the_models_answer_is_said_as_the_servers() {
        let provider = FakeOpenAi::start(KEY).await;
        let limits = SamplingLimits::default()
            .timeout(Duration::from_millis(800))
            .max_answer_bytes(200_000);
        let running = serve_limited(&provider, SamplingPolicy::ClientFirst, limits).await;
        // Words that do not repeat: a state that keeps them cannot deflate under the cap.
        let answer = saga_examples::harness::noise::noise(2, 100_000);
        provider.behave(Behaviour::Say(answer));
        let first = mrtr(&running, 1, "keeps_sample", None).await;
        let token = first["result"]["requestState"].as_str().expect("a token");
        for id in [2, 3] {
            let reply = mrtr(&running, id, "keeps_sample", Some(token)).await;
            assert_eq!(reply["error"]["code"], -32603, "{reply:#}");
            let message = reply["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains("server's model's answer"), "{message}");
            assert!(!message.contains("send smaller answers"), "{message}");
        }
        assert_eq!(
            provider.requests().len(),
            1,
            "the retry paid for the sample again"
        );
    }

    /// A `tools/call` of `both` in the dependent-requests format, from a client declaring
    /// `capabilities`, carrying `responses` (none on a first call).
    pub(super) async fn dependent(
        running: &Running,
        capabilities: Value,
        responses: Option<Value>,
    ) -> (StatusCode, Value) {
        let params = json!({"name": "both", "arguments": {}, "_meta": meta(capabilities)});
        let mut message = request(1, "tools/call", params);
        if let Some(responses) = responses {
            // The seed carries them beside `params`.
            message["dependent_responses"] = responses;
        }
        Post::mcp(running.addr)
            .rpc(&message)
            .header("mcp-result-format", "dependent-requests")
            .send()
            .await
    }

    fn ada() -> Value {
        json!({"result": {"action": "accept", "content": {"value": "Ada"}}})
    }

    fn sampled(text: &str) -> Value {
        json!({"result": {"role": "assistant", "content": {"type": "text", "text": text}, "model": "the-clients"}})
    }

    fn failed() -> Value {
        json!({"error": {"code": -1, "message": "forged by the client"}})
    }

    /// A client that cannot sample and names the sample's key beside its answer (a result
    /// or an error): the round gets that entry and the call ends in this request. It was
    /// replayed 64 times and refused with "checkpoints more than 64 times".
    #[tokio::test]
    async fn an_entry_for_the_sample_ends_the_replay_at_once() {
        let provider = FakeOpenAi::start(KEY).await;
        let running = serve(&provider, SamplingPolicy::ClientFirst).await;
        for (entry, expected) in [
            (sampled("the client's own"), "Ada: the client's own"),
            (failed(), "forged by the client"),
        ] {
            let responses = json!({"elicit-1": ada(), "sample-2": entry});
            let (status, reply) =
                dependent(&running, json!({"elicitation": {}}), Some(responses)).await;
            assert_eq!(status, 200);
            assert!(reply.get("error").is_none(), "{reply:#}");
            let text = reply["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            assert!(text.contains(expected), "{reply:#}");
        }
        assert!(
            provider.requests().is_empty(),
            "the client answered the sample itself"
        );
    }

    /// Under `ServerFirst` with a failing model, a client that samples answers the sample
    /// it is then sent, over dependent-requests as over MRTR.
    #[tokio::test]
    async fn server_first_falls_back_to_the_client_over_dependent_requests() {
        let provider = FakeOpenAi::start(KEY).await;
        provider.behave(Behaviour::Status(503));
        let running = serve(&provider, SamplingPolicy::ServerFirst).await;
        let capabilities = json!({"elicitation": {}, "sampling": {}});
        let (_, first) = dependent(&running, capabilities.clone(), None).await;
        assert!(
            first["dependent_requests"].get("elicit-1").is_some(),
            "{first:#}"
        );
        let (_, second) = dependent(
            &running,
            capabilities.clone(),
            Some(json!({"elicit-1": ada()})),
        )
        .await;
        assert!(
            second["dependent_requests"].get("sample-2").is_some(),
            "the model failed: the client is asked, {second:#}"
        );
        let (_, third) = dependent(
            &running,
            capabilities,
            Some(json!({"elicit-1": ada(), "sample-2": sampled("from the client")})),
        )
        .await;
        assert_eq!(
            third["result"]["content"][0]["text"], "Ada: from the client",
            "{third:#}"
        );
    }

    /// Under `ServerOnly`, nothing a client sends for a sample is heard: a result, an
    /// error or a decline, in each format that carries one. The model answers.
    #[tokio::test]
    async fn under_server_only_no_entry_of_the_clients_answers_a_sample() {
        let provider = FakeOpenAi::start(KEY).await;
        let running = serve(&provider, SamplingPolicy::ServerOnly).await;
        let capabilities = json!({"elicitation": {}, "sampling": {}});
        for entry in [sampled("forged"), failed()] {
            let responses = json!({"elicit-1": ada(), "sample-2": entry});
            let (_, reply) = dependent(&running, capabilities.clone(), Some(responses)).await;
            assert_eq!(
                reply["result"]["content"][0]["text"], "Ada: echo: Say hi",
                "{reply:#}"
            );
        }
        // MRTR: a first call whose answers are known, then a retry with a token.
        let call = json!({"name": "both", "arguments": {}, "_meta": meta(capabilities.clone())});
        let (_, first) = Post::mcp(running.addr)
            .rpc(&request(2, "tools/call", call.clone()))
            .send()
            .await;
        let token = first["result"]["requestState"].as_str().expect("a token");
        let mut retry = call;
        retry["requestState"] = json!(token);
        retry["inputResponses"] = json!({
            "elicit-1": {"action": "accept", "content": {"value": "Ada"}},
            "sample-2": {"action": "decline"},
        });
        let (_, second) = Post::mcp(running.addr)
            .rpc(&request(3, "tools/call", retry))
            .send()
            .await;
        assert_eq!(
            second["result"]["content"][0]["text"], "Ada: echo: Say hi",
            "{second:#}"
        );
        // tools/callSaga: the sample's step reported failed beside the question's answer.
        let (_, called) = Post::mcp(running.addr)
            .rpc(&with_meta(request(
                4,
                "tools/callSaga",
                json!({"name": "both", "arguments": {}}),
            )))
            .send()
            .await;
        let token = called["result"]["sagaToken"]
            .as_str()
            .expect("a saga token");
        let steps = json!([
            {"stepId": "elicit-1", "result": {"action": "accept", "content": {"value": "Ada"}}},
            {"stepId": "sample-2", "error": {"code": -1, "message": "forged by the client"}},
        ]);
        let (_, resumed) = Post::mcp(running.addr)
            .rpc(&with_meta(request(
                5,
                "tools/resumeSaga",
                json!({"sagaToken": token, "completedSteps": steps}),
            )))
            .send()
            .await;
        assert_eq!(
            resumed["result"]["content"][0]["text"], "Ada: echo: Say hi",
            "{resumed:#}"
        );
        assert_eq!(provider.requests().len(), 4, "the model answered each call");
    }
}

/// A failure of the server's model reads as the server's, not as the client's step.
#[tokio::test]
async fn a_server_models_failure_is_said_as_the_servers() {
    let provider = FakeOpenAi::start(KEY).await;
    provider.behave(Behaviour::Status(500));
    let client =
        TestClient::with_tools(tools(&provider, KEY, None)).capabilities(without_sampling());
    let run = greet_ada(&client, "warm").run().await.expect("a result");
    assert!(run.is_error());
    assert!(
        run.text().contains("the server's model could not answer"),
        "{}",
        run.text()
    );
    assert!(!run.text().contains("client"), "{}", run.text());
}

/// Asks to confirm, passes a checkpoint, then asks to confirm again beside a sample.
#[saga_tool(task)]
async fn confirms_twice() -> Result<String, SagaError> {
    let first: bool = elicit("Start?").key("confirm").await?;
    checkpoint().await;
    let (second, line) = join!(
        elicit::<bool>("Still sure?").key("confirm"),
        sample("Say why")
    );
    Ok(format!("{first} {} {}", second?, line?.text()))
}

/// A task tool called without the tasks extension passes its checkpoints in one request;
/// what the client answered in that request was for the round its token asked, and a
/// round after a checkpoint that asks the same key again (beside a sample the model
/// takes) asks the client again, rather than reading the earlier answer.
#[tokio::test]
async fn an_answer_does_not_outlive_a_checkpoint_passed_in_its_request() {
    let provider = FakeOpenAi::start(KEY).await;
    let model = OpenAiCompatible::new(&provider.base_url, KEY, "fake-model").expect("a client");
    let tools = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .tool(confirms_twice)
        .tasks(TaskStore::memory())
        .model(model)
        .build()
        .expect("the tools build");
    let client = TestClient::with_tools(tools).capabilities(without_sampling());
    let run = client
        .call("confirms_twice", json!({}))
        .then(Answer::accept(json!({"value": true})))
        .then(Answer::accept(json!({"value": false})))
        .run()
        .await
        .expect("the tool completes");
    assert_eq!(run.text(), "true false echo: Say why");
    let asked: Vec<Vec<&str>> = run
        .rounds()
        .iter()
        .map(|round| round.asked().iter().map(|asked| asked.key()).collect())
        .collect();
    assert_eq!(asked, vec![vec!["confirm"], vec!["confirm"], vec![]]);
}
