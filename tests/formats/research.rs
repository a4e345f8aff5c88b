//! The `research` example's agent loop (sampling with tools) end to end, over HTTP, with
//! the server process killed and started again between its turns: answered by the
//! client's LLM over MRTR, by the server's model (a local server of the chat completions
//! API answering with `tool_calls`) with the person's answer given to a new process, and
//! as a task on Redis whose worker dies while the loop waits for the person.

// Sampling is deprecated by MCP 2026-07-28 (SEP-2577); it is what this file tests.
#![allow(deprecated)]

use saga_examples::harness::http::{Call, Post, client, meta, request};
use saga_examples::harness::openai::{Behaviour, FakeOpenAi};
use saga_examples::harness::process::{ServerProcess, Spawn};
use saga_examples::harness::redis::start_redis;
use saga_examples::harness::tasks::TaskClient;
use serde_json::{Value, json};

pub(crate) const KEY: &str = "5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b";
const MODEL_KEY: &str = "sk-research-0123456789";

/// What the loop answers for "What is MRTR?": the two searches' notes and the person's
/// answer, as the scripted agents (here and in the fake provider) write it.
const EXPECTED: &str = "Answer: mrtr: MCP 2026-07-28 answers input_required with the requests \
and an opaque requestState. | saga: saga compiles one async function into a state machine \
sealed into the client's token. | durability";

/// The client's LLM as a small agent: two searches at once, then `ask_user`, then the
/// answer made of every tool result.
fn agent_turn(params: &Value) -> Value {
    let blocks: Vec<&Value> = params["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|message| match &message["content"] {
            Value::Array(blocks) => blocks.iter().collect(),
            block => vec![block],
        })
        .collect();
    let results: Vec<String> = blocks
        .iter()
        .filter(|block| block["type"] == "tool_result")
        .map(|block| {
            block["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    let used = |uses: Vec<Value>| json!({"role": "assistant", "model": "scripted", "stopReason": "toolUse", "content": uses});
    match results.len() {
        0 => used(vec![
            json!({"type": "tool_use", "id": "a", "name": "search", "input": {"query": "What is MRTR?"}}),
            json!({"type": "tool_use", "id": "b", "name": "search", "input": {"query": "saga"}}),
        ]),
        2 => used(vec![
            json!({"type": "tool_use", "id": "c", "name": "ask_user", "input": {"question": "Which part?"}}),
        ]),
        _ => json!({"role": "assistant", "model": "scripted", "stopReason": "endTurn",
            "content": {"type": "text", "text": format!("Answer: {}", results.join(" | "))}}),
    }
}

fn answer_for(request: &Value) -> Value {
    match request["method"].as_str() {
        Some("sampling/createMessage") => agent_turn(&request["params"]),
        Some("elicitation/create") => {
            json!({"action": "accept", "content": {"answer": "durability"}})
        }
        other => panic!("unexpected request {other:?}: {request}"),
    }
}

pub(crate) fn research_server(env: &[(&str, &str)]) -> ServerProcess {
    let mut spawn = Spawn::new("research", KEY);
    for (key, value) in env {
        spawn = spawn.env(key, value);
    }
    spawn.start()
}

/// Drives `research` over MRTR, a new server process for every round, answering each
/// request as [`answer_for`] says; returns the final text and the rounds' methods.
async fn over_mrtr_restarting(
    capabilities: Value,
    env: &[(&str, &str)],
) -> (String, Vec<Vec<String>>) {
    let (text, rounds, _) = drive_restarting(capabilities, env, answer_for, 12).await;
    (text, rounds)
}

/// Drives `research` over MRTR, a new server process for every round (at most `most`),
/// answering each request as `answer` says; returns the final text, the rounds' methods
/// and the length of each round's `requestState`.
pub(crate) async fn drive_restarting(
    capabilities: Value,
    env: &[(&str, &str)],
    answer: fn(&Value) -> Value,
    most: usize,
) -> (String, Vec<Vec<String>>, Vec<usize>) {
    let http = client();
    let arguments = json!({"question": "What is MRTR?"});
    let mut token: Option<String> = None;
    let mut answers = json!({});
    let mut rounds = Vec::new();
    let mut tokens = Vec::new();
    for _ in 0..most {
        let process = research_server(env);
        let mut call = Call::new("research", arguments.clone()).capabilities(capabilities.clone());
        if let Some(token) = token.take() {
            call = call.state(token).answers(answers.clone());
        }
        let (_, body) = call.send_with(&http, process.addr).await;
        drop(process);
        let result = &body["result"];
        if result["resultType"] != "input_required" {
            assert_eq!(result["isError"], false, "{body}");
            let text = result["content"][0]["text"]
                .as_str()
                .expect("text")
                .to_owned();
            return (text, rounds, tokens);
        }
        let requests = result["inputRequests"].as_object().expect("requests");
        rounds.push(
            requests
                .values()
                .map(|request| request["method"].as_str().unwrap_or_default().to_owned())
                .collect(),
        );
        answers = Value::Object(
            requests
                .iter()
                .map(|(key, request)| (key.clone(), answer(request)))
                .collect(),
        );
        let state = result["requestState"].as_str().expect("a token");
        tokens.push(state.len());
        token = Some(state.to_owned());
    }
    panic!("the loop did not end: {rounds:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_llm_runs_the_loop_across_a_restart_at_every_turn() {
    let (text, rounds) =
        over_mrtr_restarting(json!({"elicitation": {}, "sampling": {"tools": {}}}), &[]).await;
    assert_eq!(text, EXPECTED);
    assert_eq!(
        rounds,
        [
            vec!["sampling/createMessage"],
            vec!["sampling/createMessage"],
            vec!["elicitation/create"],
            vec!["sampling/createMessage"],
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_model_runs_the_loop_across_a_restart() {
    let provider = FakeOpenAi::start(MODEL_KEY).await;
    provider.behave(Behaviour::Research);
    let env = [
        ("SAGA_MODEL_URL", provider.base_url.as_str()),
        ("SAGA_MODEL_KEY", MODEL_KEY),
    ];
    // A client that cannot sample: the model takes every turn, the person's question is
    // the only round the client sees, and a new process takes its answer.
    let (text, rounds) = over_mrtr_restarting(json!({"elicitation": {}}), &env).await;
    assert_eq!(text, EXPECTED);
    assert_eq!(rounds, [vec!["elicitation/create"]]);
    assert_eq!(provider.requests().len(), 3, "three model turns");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_runs_the_loop_across_its_workers_death() {
    let redis = start_redis().await;
    let provider = FakeOpenAi::start(MODEL_KEY).await;
    provider.behave(Behaviour::Research);
    let env = [
        ("SAGA_MODEL_URL", provider.base_url.as_str()),
        ("SAGA_MODEL_KEY", MODEL_KEY),
        ("SAGA_TASKS_REDIS", redis.url.as_str()),
    ];
    let tasks = TaskClient::new();
    let first = research_server(&env);
    let id = tasks
        .create(
            first.addr,
            "research_task",
            json!({"question": "What is MRTR?"}),
        )
        .await;
    let asked = tasks.reached(first.addr, &id, "input_required").await;
    let (key, request) = asked["inputRequests"]
        .as_object()
        .and_then(|requests| requests.iter().next())
        .map(|(key, request)| (key.clone(), request.clone()))
        .expect("the person's question");
    assert_eq!(request["method"], "elicitation/create", "{asked}");
    // The worker dies mid-loop, after two model turns; another process goes on.
    drop(first);
    let second = research_server(&env);
    let update = tasks
        .request(
            second.addr,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {key: answer_for(&request)}}),
        )
        .await;
    assert!(update.get("error").is_none(), "{update}");
    let done = tasks.reached(second.addr, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], EXPECTED, "{done}");
    assert_eq!(provider.requests().len(), 3, "no turn asked twice");
}

/// `tools/callSaga` and `tools/resumeSaga` (seed 000), whose steps carry the samples with
/// their tools: the client's LLM answers each step, a new server process each round.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loop_runs_over_call_saga_across_restarts() {
    async fn send(addr: std::net::SocketAddr, method: &str, mut params: Value) -> Value {
        params["_meta"] = meta(json!({"elicitation": {}, "sampling": {"tools": {}}}));
        let (status, reply) = Post::mcp(addr)
            .rpc(&request(1, method, params))
            .send()
            .await;
        assert!(status.is_success(), "{status}: {reply}");
        reply["result"].clone()
    }
    let mut process = research_server(&[]);
    let mut result = send(
        process.addr,
        "tools/callSaga",
        json!({"name": "research", "arguments": {"question": "What is MRTR?"}}),
    )
    .await;
    let mut kinds = Vec::new();
    for _ in 0..8 {
        if result["state"] != "suspended" {
            break;
        }
        let steps: Vec<Value> = result["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .map(|step| {
                kinds.push(step["type"].as_str().unwrap_or_default().to_owned());
                let method = match step["type"].as_str() {
                    Some("sampling") => "sampling/createMessage",
                    _ => "elicitation/create",
                };
                let answer = answer_for(&json!({"method": method, "params": step["params"]}));
                json!({"stepId": step["stepId"], "result": answer})
            })
            .collect();
        let token = result["sagaToken"].clone();
        drop(process);
        process = research_server(&[]);
        result = send(
            process.addr,
            "tools/resumeSaga",
            json!({"sagaToken": token, "completedSteps": steps}),
        )
        .await;
    }
    assert_eq!(result["content"][0]["text"], EXPECTED, "{result}");
    assert_eq!(kinds, ["sampling", "sampling", "elicitation", "sampling"]);
}
