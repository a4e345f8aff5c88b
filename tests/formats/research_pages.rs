//! The `research` example's loop at the size of real work (issue 74): twenty turns, each
//! reading a 20 KB page of a log, with its conversation kept in a SQLite state store by
//! reference. Over MRTR with a new server process at every round, in a 2025-11-25
//! session, and as a task whose worker is killed at every round; and without a store, to
//! the turn the guide documents, ending with the tool's error.

// Sampling is deprecated by MCP 2026-07-28 (SEP-2577); it is what this file tests.
#![allow(deprecated)]

use saga_examples::harness::session::Session;
use saga_examples::harness::tasks::TaskClient;
use saga_examples::research::PAGE_BYTES;
use serde_json::{Value, json};

use super::research::{drive_restarting, research_server};

/// Pages the agent reads before it answers.
const PAGES: usize = 20;

/// The answer once every page came back whole.
fn expected() -> String {
    format!("read {PAGES} pages, {} bytes", PAGES * PAGE_BYTES)
}

/// The client's LLM as an agent that reads page after page, then answers with how many
/// pages and bytes the tool results brought it (so a page lost or cut short shows).
fn pages_turn(params: &Value) -> Value {
    let results: Vec<usize> = params["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|message| match &message["content"] {
            Value::Array(blocks) => blocks.iter().collect(),
            block => vec![block],
        })
        .filter(|block| block["type"] == "tool_result")
        .map(|block| block["content"][0]["text"].as_str().map_or(0, str::len))
        .collect();
    let read = results.len();
    if read < PAGES {
        json!({"role": "assistant", "model": "scripted", "stopReason": "toolUse",
            "content": [{"type": "tool_use", "id": format!("p{read}"), "name": "read_page",
                         "input": {"page": read}}]})
    } else {
        let bytes: usize = results.iter().sum();
        json!({"role": "assistant", "model": "scripted", "stopReason": "endTurn",
            "content": {"type": "text", "text": format!("read {read} pages, {bytes} bytes")}})
    }
}

fn pages_answer(request: &Value) -> Value {
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    pages_turn(&request["params"])
}

/// A fresh SQLite file, removed with its WAL and workers' directory on drop.
struct TempDb(std::path::PathBuf);

impl TempDb {
    fn new(name: &str) -> Self {
        Self(std::env::temp_dir().join(format!(
            "saga-pages-{name}-{}-{}.db",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |since| since.as_nanos())
        )))
    }

    fn env(&self) -> String {
        format!("sqlite:{}", self.0.display())
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", self.0.display()));
        }
        let _ = std::fs::remove_dir_all(format!("{}.workers", self.0.display()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_pages_over_mrtr_with_a_sqlite_state_store_across_a_restart_at_every_round() {
    let db = TempDb::new("mrtr");
    let states = db.env();
    let (text, rounds, tokens) = drive_restarting(
        json!({"sampling": {"tools": {}}}),
        &[("SAGA_STATES", states.as_str())],
        pages_answer,
        PAGES + 4,
    )
    .await;
    assert_eq!(text, expected());
    assert_eq!(rounds.len(), PAGES + 1, "one round per model turn");
    // Past the first pages the client carries a short reference, whatever the
    // conversation's size: every token is under the inline bound.
    assert!(tokens.iter().all(|len| *len <= 8 * 1024), "{tokens:?}");
    assert!(tokens[PAGES] < 200, "{tokens:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_store_the_loop_ends_with_the_tools_error() {
    let http = saga_examples::harness::http::client();
    let mut token: Option<String> = None;
    let mut answers = json!({});
    let process = research_server(&[]);
    for turn in 0..PAGES + 2 {
        let mut call = saga_examples::harness::http::Call::new(
            "research",
            json!({"question": "What is MRTR?"}),
        )
        .capabilities(json!({"sampling": {"tools": {}}}));
        if let Some(token) = token.take() {
            call = call.state(token).answers(answers.clone());
        }
        let (_, body) = call.send_with(&http, process.addr).await;
        if let Some(error) = body.get("error") {
            // The documented turn (the guide's sampling chapter): ten pages read.
            assert!(turn > 10, "ended at turn {turn}: {error}");
            assert_eq!(error["code"], -32603, "{error}");
            let message = error["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("the tool's state outgrew its token")
                    && message.contains("SagaServerBuilder::state_store"),
                "{message}"
            );
            return;
        }
        let result = &body["result"];
        assert_eq!(result["resultType"], "input_required", "{body}");
        answers = Value::Object(
            result["inputRequests"]
                .as_object()
                .expect("requests")
                .iter()
                .map(|(key, request)| (key.clone(), pages_answer(request)))
                .collect(),
        );
        token = result["requestState"].as_str().map(str::to_owned);
    }
    panic!("twenty pages fit a token without a store");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_pages_in_a_2025_11_25_session() {
    let db = TempDb::new("session");
    let states = db.env();
    let process = research_server(&[("SAGA_STATES", states.as_str())]);
    let url = format!("http://{}/mcp", process.addr);
    let session = Session::open(&url, json!({"sampling": {"tools": {}}})).await;
    let mut events = session
        .request(json!({
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "research", "arguments": {"question": "What is MRTR?"}}
        }))
        .await;
    let mut samples = 0;
    while let Some(message) = events.next().await {
        if message["method"] == "sampling/createMessage" {
            samples += 1;
            session
                .answer(&message, pages_turn(&message["params"]))
                .await;
        } else if message["id"] == 7 {
            assert_eq!(message["result"]["isError"], false, "{message}");
            assert_eq!(message["result"]["content"][0]["text"], expected());
            assert_eq!(samples, PAGES + 1);
            return;
        }
    }
    panic!("the call did not end after {samples} samples");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_pages_as_a_task_whose_worker_is_killed_at_every_round() {
    let db = TempDb::new("task");
    let store = db.env();
    let env = [
        ("SAGA_TASKS", store.as_str()),
        ("SAGA_STATES", store.as_str()),
    ];
    let tasks = TaskClient::new().sampling();
    let mut process = research_server(&env);
    let id = tasks
        .create(
            process.addr,
            "research_task",
            json!({"question": "What is MRTR?"}),
        )
        .await;
    for _ in 0..PAGES + 1 {
        let task = tasks
            .settled(process.addr, &id, std::time::Duration::from_secs(60))
            .await;
        if task["status"] == "completed" {
            break;
        }
        assert_eq!(task["status"], "input_required", "{task}");
        let answers: serde_json::Map<String, Value> = task["inputRequests"]
            .as_object()
            .expect("requests")
            .iter()
            .map(|(key, request)| (key.clone(), pages_answer(request)))
            .collect();
        let update = tasks
            .request(
                process.addr,
                "tasks/update",
                json!({"taskId": id, "inputResponses": answers}),
            )
            .await;
        assert!(update.get("error").is_none(), "{update}");
        // The worker dies with the round in hand; a new process takes the task over.
        process.kill_9();
        process = research_server(&env);
    }
    let done = tasks.reached(process.addr, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], expected(), "{done}");
}
