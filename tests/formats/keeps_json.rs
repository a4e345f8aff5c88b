//! JSON-shaped values kept across a suspension (`saga_examples::keeps_json`), in every
//! request format: MRTR, `tools/callSaga` and tasks on Redis with the server process
//! killed and started again between the rounds, and a 2025-11-25 session (whose call
//! lives in its process, so its rounds cross a seal and an open, not a restart). Each
//! tool answers with what it kept, compared field by field with what it was given.

use std::net::SocketAddr;

use saga_examples::harness::http::{Call, Post, client, meta, request};
use saga_examples::harness::process::{ServerProcess, Spawn};
use saga_examples::harness::redis::{Redis, start_redis};
use saga_examples::harness::session::Session;
use saga_examples::harness::tasks::TaskClient;
use serde_json::{Value, json};

const KEY: &str = "4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a";

fn server() -> ServerProcess {
    Spawn::new("keeps_json", KEY).start()
}

fn task_server(redis: &Redis) -> ServerProcess {
    Spawn::new("keeps_json", KEY)
        .env("SAGA_TASKS_REDIS", &redis.url)
        .start()
}

/// The answer to every tool's one question.
fn yes() -> Value {
    json!({"action": "accept", "content": {"value": true}})
}

/// A tool's text result, parsed as the JSON it is.
#[track_caller]
fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|error| panic!("{error}: {text}"))
}

/// MRTR: round 1 on one process, which is then killed; round 2 on a new one.
async fn over_mrtr(tool: &str, arguments: &Value) -> Value {
    let http = client();
    let first = server();
    let (_, body) = Call::new(tool, arguments.clone())
        .capabilities(json!({"elicitation": {}}))
        .send_with(&http, first.addr)
        .await;
    let result = &body["result"];
    assert_eq!(result["resultType"], "input_required", "{body}");
    assert!(result["inputRequests"]["ok"].is_object(), "{body}");
    let token = result["requestState"].as_str().expect("a token").to_owned();
    drop(first);
    let second = server();
    let (_, body) = Call::new(tool, arguments.clone())
        .capabilities(json!({"elicitation": {}}))
        .state(token)
        .answers(json!({"ok": yes()}))
        .send_with(&http, second.addr)
        .await;
    let text = body["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {body}"));
    parsed(text)
}

/// `tools/callSaga` and `tools/resumeSaga` (seed 000), with a restart between them.
async fn over_call_saga(tool: &str, arguments: &Value) -> Value {
    async fn send(addr: SocketAddr, method: &str, mut params: Value) -> Value {
        params["_meta"] = meta(json!({"elicitation": {}}));
        let (status, reply) = Post::mcp(addr)
            .rpc(&request(1, method, params))
            .send()
            .await;
        assert!(status.is_success(), "{status}: {reply}");
        reply["result"].clone()
    }
    let mut process = server();
    let mut result = send(
        process.addr,
        "tools/callSaga",
        json!({"name": tool, "arguments": arguments}),
    )
    .await;
    // A checkpoint suspends with no step; the question is the step of the next round.
    for _ in 0..3 {
        if result["state"] != "suspended" {
            break;
        }
        let steps: Vec<Value> = result["steps"]
            .as_array()
            .map(|steps| {
                steps
                    .iter()
                    .map(|step| json!({"stepId": step["stepId"], "result": yes()}))
                    .collect()
            })
            .unwrap_or_default();
        let token = result["sagaToken"].clone();
        drop(process);
        process = server();
        result = send(
            process.addr,
            "tools/resumeSaga",
            json!({"sagaToken": token, "completedSteps": steps}),
        )
        .await;
    }
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {result}"));
    parsed(text)
}

/// A 2025-11-25 session: the question comes as `elicitation/create` during the call.
async fn over_session(tool: &str, arguments: &Value) -> Value {
    let process = server();
    let url = format!("http://{}/mcp", process.addr);
    let session = Session::open(&url, json!({"elicitation": {}})).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}});
    let mut events = session.request(call).await;
    loop {
        let message = events.next().await.expect("the call's messages");
        if message["method"] == "elicitation/create" {
            session.answer(&message, yes()).await;
        } else if message["id"] == 7 {
            let text = message["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_else(|| panic!("a text result: {message}"));
            return parsed(text);
        }
    }
}

/// A task on Redis: created on one process, which is killed while the task waits for its
/// answer; answered and finished on a new one.
async fn over_task(tool: &str, arguments: &Value) -> Value {
    let redis = start_redis().await;
    let client = TaskClient::new();
    let first = task_server(&redis);
    let id = client.create(first.addr, tool, arguments.clone()).await;
    let asked = client.reached(first.addr, &id, "input_required").await;
    let key = asked["inputRequests"]
        .as_object()
        .and_then(|requests| requests.keys().next().cloned())
        .expect("one question");
    drop(first);
    let second = task_server(&redis);
    let update = client
        .request(
            second.addr,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {key: yes()}}),
        )
        .await;
    assert!(update.get("error").is_none(), "{update}");
    let done = client.reached(second.addr, &id, "completed").await;
    let text = done["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {done}"));
    parsed(text)
}

// ---------------------------------------------------------------------------------------
// One test per kind of value and request format
// ---------------------------------------------------------------------------------------

/// For each case: a test per request format that the tool's answer is `expected` (every
/// tool of the example runs as a task when the client asks for one).
macro_rules! every_format {
    ($($case:ident: $tool:literal, $arguments:expr, $expected:expr;)*) => {
        $(mod $case {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn over_mrtr_across_a_restart() {
                assert_eq!(super::over_mrtr($tool, &$arguments).await, $expected);
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn over_call_saga_across_a_restart() {
                assert_eq!(super::over_call_saga($tool, &$arguments).await, $expected);
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn in_a_session() {
                assert_eq!(super::over_session($tool, &$arguments).await, $expected);
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn as_a_task_on_redis_across_a_restart() {
                assert_eq!(super::over_task($tool, &$arguments).await, $expected);
            }
        })*
    };
}

fn api_response() -> Value {
    json!({
        "id": 4711,
        "title": "Deploy \"prod\" ✓",
        "labels": [{"name": "ops", "color": null}, {"name": "urgent"}],
        "ratio": 0.25,
        "closed": false,
        "assignee": null,
        "nested": {"a": {"b": {"c": [1, 2, 3]}}},
    })
}

every_format! {
    a_value_argument: "value_argument",
        json!({"payload": api_response()}),
        json!({"applied": api_response(), "fields": 7});
    a_json_local: "value_local",
        json!({"name": "n1"}),
        json!({"ok": true, "document": {"name": "n1", "tags": ["a", "b"], "ratio": 1.5,
            "nothing": null, "nested": {"deep": [1, {"x": true}]}}});
    a_struct_with_skip_serializing_if: "skipping_struct",
        json!({"id": 3}),
        json!({"ok": true, "draft": {"id": 3}});
    a_struct_with_skip_serializing_if_and_a_value: "skipping_struct",
        json!({"id": 3, "note": "hi"}),
        json!({"ok": true, "draft": {"id": 3, "note": "hi"}});
    an_internally_tagged_enum: "tagged_enum",
        json!({"kind": "rename"}),
        json!({"ok": true, "action": {"kind": "rename", "from": "old", "to": "new"}});
    a_struct_with_flatten: "flattened",
        json!({"name": "r", "extra": {"color": "red", "size": [1, 2]}}),
        json!({"ok": true, "record": {"name": "r", "color": "red", "size": [1, 2]}});
    a_hash_map_of_strings: "string_map",
        json!({"entries": {"b": "2", "a": "1"}}),
        json!({"ok": true, "entries": {"a": "1", "b": "2"}});
    every_other_shape: "every_shape",
        json!({"text": "t"}),
        every_shape_expected();
    a_value_in_a_saga_fn: "helper_keeps_json",
        json!({"payload": {"k": [1, "2"]}}),
        json!({"before": {"seen": {"k": [1, "2"]}}, "answer": {"ok": true, "document": {"k": [1, "2"]}}});
    a_skip_no_sample_takes: "rare_skip",
        json!({}),
        json!({"ok": true, "limit": {"label": "max None"}, "unlimited": true});
    options_that_hold_nothing: "keeps_options",
        json!({"clear": true}),
        json!({"ok": true, "body": "Some(Null)", "name": "Some(None)", "seen": "Some(())",
            "patch": "Some(None) Some(Null) {\"k\":null}", "list": "[Some(Null), None]"});
    options_that_hold_something: "keeps_options",
        json!({"clear": false}),
        json!({"ok": true, "body": "Some(Null)", "name": "None", "seen": "Some(())",
            "patch": "Some(Some(\"n\")) Some(Null) {\"k\":null}", "list": "[Some(Null), None]"});
    the_same_skip_not_taken: "rare_skip",
        json!({"max": 3}),
        json!({"ok": true, "limit": {"max": 3, "label": "max Some(3)"}, "unlimited": false});
}

fn every_shape_expected() -> Value {
    json!({
        "ok": true,
        "loose": [3, "t"],
        "adjacent": {"t": "Point", "c": {"x": 1, "y": -2}},
        "labelled": {"t": "Label", "c": "t"},
        "settings": {"retries": 0, "region": "eu"},
        "values": [1, {"a": [null]}, "t"],
        "maybe": {"id": 1, "labels": ["x"]},
        "by_name": {"k": {"v": 2}},
        "content": {"type": "text", "text": "kept t"},
        "result": {"resultType": "complete", "content": [{"type": "text", "text": "inner"}],
            "isError": false},
        "when": "2026-07-28T12:30:00Z",
        "id": "12345678-9abc-def0-1234-56789abcdef0",
        "link": "https://example.com/a?b=c#d",
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_on_redis_keeps_a_value_across_a_restart() {
    let payload = api_response();
    assert_eq!(
        over_task("task_keeps_json", &json!({"payload": payload})).await,
        json!({"ok": true, "payload": api_response(), "draft": {"id": 2}})
    );
}
