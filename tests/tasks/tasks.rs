//! Durable tasks (MCP tasks extension, SEP-2663) over real processes and a real
//! `redis-server` (the stores' own contract is `stores.rs`): a thousand tasks survive a replica
//! killed with SIGKILL part-way through, each completing once with the right result; and
//! tasks waiting for input cost the server no memory with the Redis store.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use saga_examples::harness::journal::Journal;
use saga_examples::harness::process::Spawn;
use saga_examples::harness::redis::start_redis;
use saga_examples::harness::session::Session;
use saga_examples::harness::tasks::TaskClient;
use saga_examples::migrate;
use saga_runtime::rmcp::model::TaskStatus;
use saga_runtime::tasks::{TaskRecord, TaskStore};
use serde_json::{Value, json};

const KEY_HEX: &str = "e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5";

// ---------------------------------------------------------------------------------------
// The stores
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// A client of the tasks extension, over raw HTTP
// ---------------------------------------------------------------------------------------

fn terminal(task: &Value) -> bool {
    matches!(
        task["status"].as_str(),
        Some("completed" | "failed" | "cancelled")
    )
}

// ---------------------------------------------------------------------------------------
// A replica killed part-way through a thousand tasks
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_tasks_survive_a_replica_killed_part_way() {
    const TASKS: usize = 1000;
    let redis = start_redis().await;
    let journal = Journal::new("tasks");
    let replica = || {
        journal
            .migrate(KEY_HEX)
            .env("SAGA_TASKS_PER_CLIENT", "5000")
            // Every task of a replica runs at once, so that only the kill moves tasks.
            .env("SAGA_TASK_WORKERS", "1000")
            .env("SAGA_TASK_WORKERS_PER_CLIENT", "1000")
            .env("SAGA_TASKS_REDIS", &redis.url)
            .env("SAGA_TASK_LEASE_MS", "3000")
            .log("saga_runtime::tasks=info")
            .capture_stderr()
            .start()
    };
    let mut replicas = [replica(), replica(), replica()];
    let client = TaskClient::new();

    // Each task migrates 3 to 5 tables, 2 s each: longer than creating them all takes,
    // so that the kill finds every task of its replica in flight; a checkpoint after every
    // table.
    let mut tasks: Vec<(String, usize, usize)> = Vec::new(); // (id, replica, tables)
    let created = Instant::now();
    for chunk in (0..TASKS).collect::<Vec<_>>().chunks(50) {
        let mut creations = Vec::new();
        for &index in chunk {
            let client = client.clone();
            let on = index % 3;
            let tables = 3 + index % 3;
            let server = &replicas[on];
            creations.push(async move {
                let arguments = json!({
                    "tables": tables, "millis_per_table": 2000, "label": format!("t{index}")
                });
                (
                    client.create(server.addr, "migrate", arguments).await,
                    on,
                    tables,
                )
            });
        }
        tasks.extend(futures::future::join_all(creations).await);
    }
    let creation_time = created.elapsed();

    // Part-way through: kill the first replica, its third of the tasks in flight, most
    // with a table or two behind them and one under way.
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let in_flight_at_kill = journal
        .text()
        .lines()
        .filter(|line| line.contains(" table ") && !line.contains(" began "))
        .count();
    replicas[0].kill_9();

    // Every task completes, as seen from the surviving replicas.
    let deadline = Instant::now() + Duration::from_secs(180);
    let mut results: HashMap<String, Value> = HashMap::new();
    while results.len() < TASKS {
        assert!(
            Instant::now() < deadline,
            "{} of {TASKS} tasks ended in 3 minutes",
            results.len()
        );
        let open: Vec<_> = tasks
            .iter()
            .filter(|(id, _, _)| !results.contains_key(id))
            .take(100)
            .cloned()
            .collect();
        let polls = open.into_iter().enumerate().map(|(n, (id, _, _))| {
            let client = client.clone();
            let server = &replicas[1 + n % 2];
            async move {
                let task = client.status(server.addr, &id).await;
                (id, task)
            }
        });
        for (id, task) in futures::future::join_all(polls).await {
            if terminal(&task) {
                results.insert(id, task);
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Each completed with its own result.
    for (id, _, tables) in &tasks {
        let task = &results[id];
        assert_eq!(task["status"], "completed", "{task}");
        let expected: Vec<usize> = (0..*tables).collect();
        assert_eq!(
            task["result"]["content"][0]["text"],
            format!("migrated {tables} tables: {expected:?}"),
            "{task}"
        );
    }

    // The journal: each task's final step ran once, except perhaps for tasks of the
    // killed replica whose last step was cut off after it journaled; a table was done
    // again only on the killed replica's tasks, and at most the one in flight.
    let text = journal.text();
    let mut done: HashMap<&str, usize> = HashMap::new();
    let mut tables_done: HashMap<&str, usize> = HashMap::new();
    let mut tables_begun: HashMap<&str, usize> = HashMap::new();
    for line in text.lines() {
        let (label, rest) = line.split_once(' ').expect("a journal line");
        let counter = if rest == "done" {
            &mut done
        } else if rest.starts_with("began ") {
            &mut tables_begun
        } else {
            &mut tables_done
        };
        *counter.entry(label).or_default() += 1;
    }
    let mut redone_tables = 0;
    let mut redone_final_steps = 0;
    for (index, (_, on, tables)) in tasks.iter().enumerate() {
        let label = format!("t{index}");
        let finals = done.get(label.as_str()).copied().unwrap_or(0);
        let worked = tables_done.get(label.as_str()).copied().unwrap_or(0);
        let begun = tables_begun.get(label.as_str()).copied().unwrap_or(0);
        if *on == 0 {
            // The table under way when the replica died is begun again (and, had it
            // finished but not yet checkpointed, done again): nothing before it.
            assert!((1..=2).contains(&finals), "{label}: {finals} final steps");
            assert!(
                (*tables..=tables + 1).contains(&worked),
                "{label}: {worked} tables done for {tables}"
            );
            assert!(
                (*tables..=tables + 1).contains(&begun),
                "{label}: {begun} tables begun for {tables}"
            );
        } else {
            assert_eq!(finals, 1, "{label} of a surviving replica");
            assert_eq!(worked, *tables, "{label} of a surviving replica");
            assert_eq!(begun, *tables, "{label} of a surviving replica");
        }
        redone_tables += begun - tables;
        redone_final_steps += finals - 1;
    }
    let taken_over: usize = replicas[1..]
        .iter()
        .map(|replica| replica.stderr().matches("task taken over").count())
        .sum();
    assert!(taken_over > 0, "no task was taken over");
    assert!(taken_over <= TASKS / 3 + 1, "{taken_over} takeovers");
    println!(
        "{TASKS} tasks created in {creation_time:?} over 3 replicas; replica 1 killed with \
         {in_flight_at_kill} tables done in all; {taken_over} tasks taken over by the others, \
         {redone_tables} tables begun again and {redone_final_steps} final steps run again; every task \
         completed once with its own result"
    );
}

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
async fn rss_with_waiting_tasks(redis_url: Option<&str>, count: usize) -> [u64; 3] {
    let mut spawn = Spawn::new("migrate", KEY_HEX).env("SAGA_TASKS_PER_CLIENT", "20000");
    if let Some(url) = redis_url {
        spawn = spawn.env("SAGA_TASKS_REDIS", url);
    }
    let server = spawn.start();
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
    let memory = rss_with_waiting_tasks(None, WAITING).await;
    let redis = start_redis().await;
    let shared = rss_with_waiting_tasks(Some(&redis.url), WAITING).await;
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
