//! Borrows kept across a suspension (issue 55) in a task whose every round is answered
//! by a server started for it on the task's SQLite file, the one before it stopped: each
//! round's state is read back from the store, and the result equals the same tool's as
//! a stateless call. And the same tool in a 2025-11-25 session.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use saga_examples::harness::serving::{Running, serve_local};
use saga_examples::harness::tasks::TaskClient;
use saga_runtime::prelude::*;
use saga_runtime::tasks::{TaskSettings, TaskStore};
use saga_runtime::testing::{Answer, TestClient};
use serde_json::{Value, json};

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind")]
pub enum Source {
    Db { name: String, tables: Vec<String> },
    Bucket { name: String },
}

/// A pattern binding over a borrowed loop item, a nested loop over its field, a
/// `&'static str` chosen inside it, and a borrowed hash map walked by key.
#[saga_tool(task)]
async fn plan(
    sources: Vec<Source>,
    owners: HashMap<String, String>,
    limits: BTreeMap<String, u32>,
) -> Result<String, SagaError> {
    checkpoint().await;
    let mut done = Vec::new();
    for src in &sources {
        match src {
            Source::Db { name, tables } => {
                for table in tables {
                    let how = if table.starts_with('_') {
                        "skip"
                    } else {
                        "copy"
                    };
                    let rows: i64 = elicit(format!("Rows of {name}.{table} ({how})?")).await?;
                    done.push(format!("{name}.{table}:{how}:{rows}"));
                }
            }
            Source::Bucket { name } => {
                let ok: bool = elicit(format!("Bucket {name}?")).await?;
                done.push(format!("{name}:{ok}"));
            }
        }
    }
    for (team, owner) in &owners {
        let limit = limits.get(team);
        let ok: bool = elicit(format!("Ask {owner} of {team} ({limit:?})?")).await?;
        done.push(format!("{team}/{owner}/{limit:?}:{ok}"));
    }
    done.sort();
    Ok(done.join(", "))
}

fn answer(prompt: &str) -> Value {
    if prompt.starts_with("Rows") {
        json!({"action": "accept", "content": {"value": prompt.len()}})
    } else {
        json!({"action": "accept", "content": {"value": prompt.len().is_multiple_of(2)}})
    }
}

fn arguments() -> Value {
    json!({
        "sources": [
            {"kind": "Db", "name": "orders", "tables": ["items", "_tmp", "lines"]},
            {"kind": "Bucket", "name": "logs"},
            {"kind": "Db", "name": "users", "tables": ["people"]},
        ],
        "owners": {"core": "ana", "web": "bo", "data": "cy", "ops": "di"},
        "limits": {"core": 3, "ops": 9},
    })
}

async fn replica(store: TaskStore) -> Running {
    let server = SagaServer::builder()
        .keys(KeyRing::from_keys([[7u8; 32]]).expect("one fixed key is a valid ring"))
        .tool(plan)
        .task_settings(TaskSettings::new(store).lease(Duration::from_millis(500)))
        .build()
        .expect("the server builds");
    serve_local(server).await
}

/// The task, once it asks or ends.
async fn settled(replica: &Running, id: &str) -> Value {
    TaskClient::new()
        .settled(replica.addr, id, Duration::from_secs(20))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_keeping_borrows_resumes_on_another_server_of_its_store() {
    let file = std::env::temp_dir().join(format!("saga-borrows-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let first = replica(TaskStore::sqlite(&file).expect("a SQLite store")).await;
    let client = TaskClient::new();
    let id = client.create(first.addr, "plan", arguments()).await;
    drop(first);
    let mut rounds = 0;
    let done = loop {
        // Each round answered through a server started for it on the same file (the one
        // before it stopped), which reads the state back from the store.
        let server = &replica(TaskStore::sqlite(&file).expect("a SQLite store")).await;
        let task = settled(server, &id).await;
        if task["status"] != "input_required" {
            break task;
        }
        rounds += 1;
        assert!(rounds < 50, "the task never finished: {task}");
        let answers: serde_json::Map<String, Value> = task["inputRequests"]
            .as_object()
            .expect("the requests it waits for")
            .iter()
            .map(|(key, request)| {
                let prompt = request["params"]["message"].as_str().unwrap_or_default();
                (key.clone(), answer(prompt))
            })
            .collect();
        client
            .request(
                server.addr,
                "tasks/update",
                json!({"taskId": id, "inputResponses": answers}),
            )
            .await;
    };
    assert_eq!(done["status"], "completed", "{done}");

    // The same tool as a stateless call, answered alike.
    let run = TestClient::new(plan)
        .call("plan", arguments())
        .respond(|asked| {
            let value = answer(asked.message().unwrap_or_default());
            Some(Answer::raw(value))
        })
        .run()
        .await
        .expect("the call completes");
    assert_eq!(done["result"]["content"][0]["text"], run.text().as_str());
    assert_eq!(rounds, 9, "one round per table, bucket and owner");
    assert!(run.text().contains("orders._tmp:skip:"), "{}", run.text());
    let _ = std::fs::remove_file(&file);
}

/// The same tool in a 2025-11-25 session: each request reaches the client during the
/// call, and the result equals the stateless call's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_keeping_borrows_runs_in_a_session() {
    use saga_examples::harness::session::Session;

    let server = replica(TaskStore::memory()).await;
    let session = Session::open(&server.url(), json!({"elicitation": {}})).await;
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "plan", "arguments": arguments()}});
    let mut events = session.request(call).await;
    let mut asked = 0;
    let result = loop {
        let message = events.next().await.expect("the call's messages");
        if message["method"] == "elicitation/create" && message.get("id").is_some() {
            asked += 1;
            let prompt = message["params"]["message"].as_str().unwrap_or_default();
            let answer = answer(prompt);
            session.answer(&message, answer).await;
        } else if message["id"] == 3 {
            break message;
        }
    };
    let run = TestClient::new(plan)
        .call("plan", arguments())
        .respond(|asked| Some(Answer::raw(answer(asked.message().unwrap_or_default()))))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(asked, 9);
    assert_eq!(
        result["result"]["content"][0]["text"],
        run.text().as_str(),
        "{result}"
    );
}
