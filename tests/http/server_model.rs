//! The deploy example with a server-side model (`SAGA_MODEL_URL`, a local server of the
//! OpenAI chat completions API that checks its key): clients that declare no sampling
//! complete the saga over MCP 2026-07-28 (MRTR) and in a 2025-11-25 session, never sent a
//! sampling request; the provider is sent the tool's prompt with its key.

use saga_examples::harness::http::{Call, DEPLOYED};
use saga_examples::harness::openai::{Behaviour, FakeOpenAi};
use saga_examples::harness::process::{ServerProcess, Spawn};
use saga_examples::harness::session::Session;
use serde_json::json;

const KEYS: &str = "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3";
const MODEL_KEY: &str = "sk-e2e-model-key";

fn deploy_with_model(provider: &FakeOpenAi) -> ServerProcess {
    Spawn::new("deploy", KEYS)
        .env("SAGA_MODEL_URL", &provider.base_url)
        .env("SAGA_MODEL_KEY", MODEL_KEY)
        .env("SAGA_MODEL", "local-model")
        .start()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mrtr_client_without_sampling_completes_the_deploy_saga() {
    let provider = FakeOpenAi::start(MODEL_KEY).await;
    provider.behave(Behaviour::Say("Yes, it is safe.".into()));
    let server = deploy_with_model(&provider);
    let elicitation_only = json!({"elicitation": {}});
    let (_, first) = Call::deploy()
        .capabilities(elicitation_only.clone())
        .send(server.addr)
        .await;
    let requests = &first["result"]["inputRequests"];
    assert_eq!(
        requests
            .as_object()
            .map(|r| r.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["elicit-1".to_owned()]),
        "{first}"
    );
    let token = first["result"]["requestState"].as_str().expect("a token");
    let (_, second) = Call::deploy_target(token)
        .capabilities(elicitation_only)
        .send(server.addr)
        .await;
    assert_eq!(second["result"]["resultType"], "complete", "{second}");
    assert_eq!(second["result"]["content"][0]["text"], DEPLOYED);
    // The result says who answered the sample.
    assert_eq!(
        second["result"]["_meta"]["saga/samples"],
        json!([{"key": "sample-2", "answeredBy": "server", "model": "local-model"}]),
        "{second}"
    );
    let sent = provider.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["model"], "local-model");
    assert_eq!(
        sent[0]["messages"][0]["content"],
        "Is deploying to 'production' safe right now?"
    );
    assert_eq!(sent[0]["max_tokens"], 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_client_without_sampling_completes_the_deploy_saga() {
    let provider = FakeOpenAi::start(MODEL_KEY).await;
    provider.behave(Behaviour::Say("Yes.".into()));
    let server = deploy_with_model(&provider);
    let url = format!("http://{}/mcp", server.addr);
    let session = Session::open(&url, json!({"elicitation": {}})).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "complex_tool", "arguments": {"initial_arg": "x"}}});
    let mut events = session.request(call).await;
    let mut asked = Vec::new();
    let result = loop {
        let message = events.next().await.expect("the call's messages");
        if let Some(method) = message["method"].as_str()
            && message.get("id").is_some()
        {
            asked.push(method.to_owned());
            session
                .answer(
                    &message,
                    json!({"action": "accept", "content": {"target": "production"}}),
                )
                .await;
        } else if message["id"] == 7 {
            break message;
        }
    };
    assert_eq!(
        asked,
        ["elicitation/create"],
        "the client was sent a sample"
    );
    assert_eq!(result["result"]["content"][0]["text"], DEPLOYED, "{result}");
    assert_eq!(provider.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_samples_is_still_asked_itself() {
    let provider = FakeOpenAi::start(MODEL_KEY).await;
    let server = deploy_with_model(&provider);
    let (_, first) = Call::deploy().send(server.addr).await;
    let token = first["result"]["requestState"].as_str().expect("a token");
    let (_, second) = Call::deploy_target(token).send(server.addr).await;
    let requests = &second["result"]["inputRequests"];
    assert!(requests.get("sample-2").is_some(), "{second}");
    assert!(provider.requests().is_empty());
}

/// `saga call`, declaring no sampling, says that the server's model answered the sample.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saga_call_shows_which_side_answered_each_sample() {
    let provider = FakeOpenAi::start(MODEL_KEY).await;
    provider.behave(Behaviour::Say("Yes.".into()));
    let server = deploy_with_model(&provider);
    let answers = saga_examples::harness::process::AnswersFile::new(
        "model",
        r#"{"elicit-1": {"target": "production"}}"#,
    );
    let output = tokio::process::Command::new(saga_examples::harness::process::saga_cli())
        .args(["call", "--without", "sampling", "--answers"])
        .arg(answers.path())
        .arg(format!("http://{}/mcp", server.addr))
        .args(["complex_tool", "initial_arg=x"])
        .env("NO_COLOR", "1")
        .output()
        .await
        .expect("saga runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("[sample-2] sampling answered by the server's model (local-model)"),
        "{stdout}"
    );
    assert!(stdout.contains(DEPLOYED), "{stdout}");
}
