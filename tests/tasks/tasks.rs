//! Durable tasks (MCP tasks extension, SEP-2663) over real processes and a real
//! `redis-server` (the stores' own contract is `stores.rs`, and tasks through a `kill -9`
//! on every durable store `durable.rs`): a fresh replica takes orphans over, and tasks
//! waiting for input cost the server no memory with the Redis store.

use std::time::Duration;

use saga_examples::harness::process::Spawn;
use saga_examples::harness::redis::start_redis;
use saga_examples::harness::session::Session;
use saga_examples::harness::tasks::TaskClient;
use saga_examples::migrate;
use saga_runtime::rmcp::model::TaskStatus;
use saga_runtime::tasks::{TaskRecord, TaskStore};
use serde_json::{Value, json};

const KEY_HEX: &str = "e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5";

/// A replica that starts after another died takes its tasks over without being asked
/// anything: its sweeper starts when it begins to serve, not at its first task request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_replica_takes_over_orphans_before_any_request() {
    let redis = start_redis().await;
    let replica = || {
        Spawn::new("migrate", KEY_HEX)
            .env("SAGA_TASKS_REDIS", &redis.url)
            .env("SAGA_TASK_LEASE_MS", "600")
            .log("saga_runtime::tasks=info")
            .capture_stderr()
            .start()
    };
    let mut first = replica();
    let client = TaskClient::new();
    let id = client
        .create(
            first.addr,
            "migrate",
            json!({"tables": 3, "millis_per_table": 300, "label": "orphan"}),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    first.kill_9();
    let second = replica();
    let store = TaskStore::redis(&redis.url).await.expect("connected");
    let mut record = None;
    for _ in 0..200 {
        record = store.backend().get(&id).await.expect("read");
        if record.as_ref().is_some_and(TaskRecord::is_terminal) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let record = record.expect("the task is kept");
    assert_eq!(record.status, TaskStatus::Completed, "{record:?}");
    assert_eq!(record.takeovers, 1, "{record:?}");
    assert!(
        second.stderr().contains("task taken over"),
        "{}",
        second.stderr()
    );
}

// ---------------------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------------------

/// The server's RSS (KiB) after a warm-up, with half of `count` tasks waiting for input,
/// and with all of them.
async fn rss_with_waiting_tasks(store: &str, count: usize) -> [u64; 3] {
    let server = Spawn::new("migrate", KEY_HEX)
        .env("SAGA_TASKS_PER_CLIENT", "20000")
        .env("SAGA_TASKS", store)
        .start();
    let client = TaskClient::new();
    let mut rss = [0; 3];
    // A first batch warms the allocator and the connection pools up; the memory store's
    // default capacity is 10,000 tasks, which it refuses to exceed.
    let batches = [(0, 500), (500, count / 2), (count / 2, count)];
    for (step, (from, to)) in batches.into_iter().enumerate() {
        let mut ids = Vec::new();
        for chunk in (from..to).collect::<Vec<_>>().chunks(100) {
            let creations = chunk.iter().map(|&index| {
                let client = client.clone();
                let server = &server;
                async move {
                    client
                        .create(server.addr, "approve_migration", json!({"tables": index}))
                        .await
                }
            });
            ids.extend(futures::future::join_all(creations).await);
        }
        // Every one of them waits for its approval.
        for id in &ids {
            loop {
                let task = client.status(server.addr, id).await;
                if task["status"] == "input_required" {
                    break;
                }
                assert_eq!(task["status"], "working", "{task}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        rss[step] = server.rss_kib();
    }
    rss
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_tasks_cost_no_server_memory_with_redis() {
    const WAITING: usize = 10_000;
    let memory = rss_with_waiting_tasks("memory", WAITING).await;
    let redis = start_redis().await;
    let shared = rss_with_waiting_tasks(&redis.url, WAITING).await;
    let second_half = |rss: [u64; 3]| rss[2].saturating_sub(rss[1]);
    println!(
        "server RSS (KiB) after 500 / {} / {WAITING} tasks waiting for input: memory store \
         {memory:?} (+{} for the last {}), Redis store {shared:?} (+{} for the last {})",
        WAITING / 2,
        second_half(memory),
        WAITING / 2,
        second_half(shared),
        WAITING / 2,
    );
    // With the records in Redis, waiting tasks hold nothing in the server: its memory stays
    // where the first thousands of requests left it.
    assert!(
        second_half(shared) * 4 < second_half(memory),
        "the Redis store's server grew by {} KiB over the last {} tasks, the memory store's by {}",
        second_half(shared),
        WAITING / 2,
        second_half(memory)
    );
}

// ---------------------------------------------------------------------------------------
// Sessions (2025-11-25)
// ---------------------------------------------------------------------------------------

/// `tasks/get` of the task `id` in `session` (request ids from `first` on) until `done`
/// holds of the answer, 200 times at the most, 20 ms apart; the last answer.
async fn poll(session: &Session, first: i64, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let mut task = Value::Null;
    for n in 0..200 {
        let get = json!({"jsonrpc": "2.0", "id": first + n, "method": "tasks/get", "params": {"taskId": id}});
        task = session.ask(get).await;
        if done(&task) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    task
}

/// A session that declares the extension in `initialize` gets tasks too: the call answers
/// with a task at its first checkpoint, and `tasks/get` in the session follows it; input a
/// task asks is answered with `tasks/update`. A session without it gets the whole call.
#[tokio::test]
async fn a_session_that_declares_tasks_gets_them() {
    use saga_runtime::prelude::KeyRing;
    let keys = KeyRing::parse(KEY_HEX).expect("a key");
    let server =
        migrate::server(keys, TaskStore::memory(), Duration::from_secs(10)).expect("a server");
    let running = saga_examples::harness::serving::serve_local(server).await;
    let tasks = json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    let session = Session::open(&running.url(), tasks).await;
    let mut notifications = session.listen().await;
    let call = |id: i64, tool: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": tool, "arguments": arguments}})
    };
    let completed = |task: &Value| task["result"]["status"] == "completed";
    let created = session
        .ask(call(
            1,
            "migrate",
            json!({"tables": 2, "millis_per_table": 10}),
        ))
        .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let task = poll(&session, 10, &id, completed).await;
    assert_eq!(
        task["result"]["result"]["content"][0]["text"], "migrated 2 tables: [0, 1]",
        "{task}"
    );
    // The session was told, on its own stream.
    loop {
        let message = notifications.next().await.expect("the stream stays open");
        if message["method"] == "notifications/tasks" && message["params"]["taskId"] == id {
            assert_eq!(message["params"]["status"], "completed", "{message}");
            assert_eq!(
                message["params"]["result"]["content"][0]["text"],
                "migrated 2 tables: [0, 1]"
            );
            break;
        }
    }

    // Input inside a task goes through tasks/update, not through the session.
    let created = session
        .ask(call(2, "approve_migration", json!({"tables": 7})))
        .await;
    let id = created["result"]["taskId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let task = poll(&session, 300, &id, |task| {
        task["result"]["inputRequests"].is_object()
    })
    .await;
    let key = task["result"]["inputRequests"]
        .as_object()
        .and_then(|requests| requests.keys().next().cloned())
        .expect("the task asks for its approval");
    let update = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/update", "params": {
        "taskId": id, "inputResponses": {key: {"action": "accept", "content": {"approve": true}}}
    }});
    let ack = session.ask(update).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let task = poll(&session, 600, &id, completed).await;
    assert_eq!(
        task["result"]["result"]["content"][0]["text"], "7 tables approved",
        "{task}"
    );

    // Without the extension: the call runs to its end within the request.
    let plain = Session::open(&running.url(), json!({"elicitation": {}})).await;
    let done = plain
        .ask(call(
            4,
            "migrate",
            json!({"tables": 2, "millis_per_table": 10}),
        ))
        .await;
    assert_eq!(
        done["result"]["content"][0]["text"], "migrated 2 tables: [0, 1]",
        "{done}"
    );
}
