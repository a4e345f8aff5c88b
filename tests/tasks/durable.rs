//! Tasks through a `kill -9`, on every durable store, with real processes: the migrate
//! example (`examples/support/migrate.rs`) checkpoints after each table and journals each
//! table begun and done and each final step, so that the test sees which work ran twice.
//!
//! - Redis: 1,000 tasks over three replicas, one killed part-way.
//! - Postgres: 300 tasks over three replicas, one killed part-way.
//! - SQLite: the only server killed part-way, and started again on the same file.
//!
//! Every task completes with its own result; the tables in flight at the kill are begun
//! again and nothing before them; no final step runs twice.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use saga_examples::harness::journal::Journal;
use saga_examples::harness::postgres::start_postgres;
use saga_examples::harness::process::ServerProcess;
use saga_examples::harness::redis::start_redis;
use saga_examples::harness::tasks::TaskClient;
use serde_json::{Value, json};

const KEY_HEX: &str = "e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5";

fn terminal(task: &Value) -> bool {
    matches!(
        task["status"].as_str(),
        Some("completed" | "failed" | "cancelled")
    )
}

/// A run: how many tasks, over how many replicas sharing `store` (`SAGA_TASKS`), the
/// first killed with SIGKILL part-way and, if `restart`, started again.
struct Run<'a> {
    name: &'a str,
    tasks: usize,
    replicas: usize,
    store: String,
    restart: bool,
    /// Whether a final step of the killed replica's tasks may have run twice: when the
    /// creation of the tasks may take longer than the kill's delay, the first tasks may be
    /// at their final step when it lands.
    final_may_repeat: bool,
    /// The workers' lease (`SAGA_TASK_LEASE_MS`).
    lease_ms: &'a str,
}

async fn kill_one_part_way(run: Run<'_>) {
    let journal = Journal::new(run.name);
    let replica = || {
        journal
            .migrate(KEY_HEX)
            .env("SAGA_TASKS_PER_CLIENT", "5000")
            // Every task of a replica runs at once, so that only the kill moves tasks.
            .env("SAGA_TASK_WORKERS", "1000")
            .env("SAGA_TASK_WORKERS_PER_CLIENT", "1000")
            .env("SAGA_TASKS", &run.store)
            .env("SAGA_TASK_LEASE_MS", run.lease_ms)
            .log("saga_runtime::tasks=info")
            .capture_stderr()
            .start()
    };
    let mut replicas: Vec<ServerProcess> = (0..run.replicas).map(|_| replica()).collect();
    let client = TaskClient::new();

    // Each task migrates 3 to 5 tables, 2 s each: longer than creating them all takes,
    // so that the kill finds every task of its replica in flight; a checkpoint after every
    // table.
    let mut tasks: Vec<(String, usize, usize)> = Vec::new(); // (id, replica, tables)
    let created = Instant::now();
    let indexes: Vec<usize> = (0..run.tasks).collect();
    for chunk in indexes.chunks(50) {
        let mut creations = Vec::new();
        for &index in chunk {
            let client = client.clone();
            let on = index % run.replicas;
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

    // Part-way through: kill the first replica, its tasks in flight, most with a table or
    // two behind them and one under way.
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let in_flight_at_kill = journal
        .text()
        .lines()
        .filter(|line| line.contains(" table ") && !line.contains(" began "))
        .count();
    replicas[0].kill_9();
    let live = if run.restart {
        replicas[0] = replica();
        0
    } else {
        1
    };

    // Every task completes, as seen from the live replicas.
    let deadline = Instant::now() + Duration::from_secs(180);
    let mut results: HashMap<String, Value> = HashMap::new();
    while results.len() < run.tasks {
        assert!(
            Instant::now() < deadline,
            "{} of {} tasks ended in 3 minutes",
            results.len(),
            run.tasks
        );
        let open: Vec<_> = tasks
            .iter()
            .filter(|(id, _, _)| !results.contains_key(id))
            .take(100)
            .cloned()
            .collect();
        let polls = open.into_iter().enumerate().map(|(n, (id, _, _))| {
            let client = client.clone();
            let server = &replicas[live + n % (run.replicas - live)];
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

    // The journal: a table was begun again only on the killed replica's tasks, and at
    // most the one in flight; a final step ran once.
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
            let finals_allowed = if run.final_may_repeat { 2 } else { 1 };
            assert!(
                (1..=finals_allowed).contains(&finals),
                "{label}: {finals} final steps"
            );
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
    let taken_over: usize = replicas[live..]
        .iter()
        .map(|replica| replica.stderr().matches("task taken over").count())
        .sum();
    let killed_tasks = tasks.iter().filter(|(_, on, _)| *on == 0).count();
    assert!(taken_over > 0, "no task was taken over");
    assert!(
        taken_over <= killed_tasks + 1,
        "{taken_over} takeovers for {killed_tasks} tasks"
    );
    println!(
        "{}: {} tasks created in {creation_time:?} over {} replica(s); replica 1 killed with \
         {in_flight_at_kill} tables done in all{}; {taken_over} tasks taken over, \
         {redone_tables} tables begun again and {redone_final_steps} final steps run again; \
         every task completed once with its own result",
        run.name,
        run.tasks,
        run.replicas,
        if run.restart {
            ", and started again"
        } else {
            ""
        },
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_a_thousand_tasks_survive_a_replica_killed_part_way() {
    let redis = start_redis().await;
    kill_one_part_way(Run {
        name: "durable-redis",
        tasks: 1000,
        replicas: 3,
        store: redis.url.clone(),
        restart: false,
        final_may_repeat: true,
        lease_ms: "3000",
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_three_hundred_tasks_survive_a_replica_killed_part_way() {
    let postgres = start_postgres().await;
    kill_one_part_way(Run {
        name: "durable-postgres",
        tasks: 300,
        replicas: 3,
        store: postgres.url.clone(),
        restart: false,
        final_may_repeat: false,
        lease_ms: "3000",
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_tasks_survive_the_only_server_killed_and_started_again() {
    let dir = std::env::temp_dir().join(format!("saga-durable-sqlite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    kill_one_part_way(Run {
        name: "durable-sqlite",
        tasks: 150,
        replicas: 1,
        store: format!("sqlite:{}", dir.join("tasks.db").display()),
        restart: true,
        final_may_repeat: false,
        // An hour: the tasks complete within the test's three minutes only because the
        // restarted server sees that their worker's process is gone (its lock beside the
        // file was released by the kernel) and takes them over at once.
        lease_ms: "3600000",
    })
    .await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server whose Postgres goes away: its calls fail whole with `-32603` while the
/// database is gone (no task half-created), and the tasks it ran before go on and
/// complete once it is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_whose_postgres_goes_away_fails_calls_cleanly_and_resumes() {
    let mut postgres = start_postgres().await;
    let journal = Journal::new("durable-postgres-away");
    let server = journal
        .migrate(KEY_HEX)
        .env("SAGA_TASKS", &postgres.url)
        .env("SAGA_TASK_LEASE_MS", "2000")
        .start();
    let client = TaskClient::new();
    let arguments = |label: &str| json!({"tables": 3, "millis_per_table": 1500, "label": label});
    let before = client
        .create(server.addr, "migrate", arguments("before"))
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    postgres.stop();

    let created = client
        .request(
            server.addr,
            "tools/call",
            json!({"name": "migrate", "arguments": arguments("during")}),
        )
        .await;
    assert_eq!(created["error"]["code"], -32603, "{created}");
    let polled = client
        .request(server.addr, "tasks/get", json!({"taskId": before}))
        .await;
    assert_eq!(polled["error"]["code"], -32603, "{polled}");
    // Longer than a table and a lease: the worker's checkpoint write fails meanwhile.
    tokio::time::sleep(Duration::from_millis(4000)).await;

    postgres.start().await;
    let deadline = Instant::now() + Duration::from_secs(90);
    let task = loop {
        let task = client.status(server.addr, &before).await;
        if terminal(&task) {
            break task;
        }
        assert!(Instant::now() < deadline, "not ended: {task}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(
        task["result"]["content"][0]["text"],
        "migrated 3 tables: [0, 1, 2]"
    );
    assert_eq!(journal.text().matches("before done").count(), 1);
    assert!(
        !journal.text().contains("during"),
        "a call refused while the database was gone ran"
    );
    // And new work is served again.
    let after = client
        .create(server.addr, "migrate", arguments("after"))
        .await;
    assert!(!after.is_empty());
}
