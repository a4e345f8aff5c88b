//! The task stores, in one run: tasks created, polled and checkpointed per second, with
//! the median and p99 latency of each, against memory, a SQLite file (WAL,
//! `synchronous = FULL`, in the temporary directory), a `redis-server` and a `postgres`
//! of the bench's own on loopback. What a server does per task: an insert when a task is
//! created, a read per `tasks/get`, an update (compare-and-set) per checkpoint.
//!
//! The second table: creates into a SQLite file and a Postgres database that already hold
//! `PRESTORED` tasks (10,000 and 1,000,000 by default, written with one SQL statement
//! each), to show that a create's cost does not grow with the store.
//!
//! The first table: the single-use stores (`TokenStore`), what each round of a server with
//! `.single_use(store)` costs: a plain redeem (a store that records no outcome), and a
//! claim then the record of a 2 KiB outcome (a store that records them: every one of
//! saga's), and a retry's claim, which reads that outcome back. `ONLY=tokens` runs it
//! alone.
//!
//! ```text
//! cargo bench -p saga-workspace --bench stores        # OPS=2000 CONCURRENCY=16 by default
//! ONLY=tokens cargo bench -p saga-workspace --bench stores
//! PRESTORED=10000,1000000 OPS=20000 cargo bench -p saga-workspace --bench stores
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use saga_examples::harness::postgres::start_postgres;
use saga_examples::harness::redis::start_redis;
use saga_runtime::rmcp::model::TaskStatus;
use saga_runtime::tasks::{Quota, TaskRecord, TaskStore};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn now_ms() -> u64 {
    saga_runtime::state::unix_now() * 1000
}

fn record(id: usize) -> TaskRecord {
    TaskRecord {
        id: format!("{id:032x}"),
        principal: format!("client-{}", id % 16),
        counted_as: None,
        tool: "migrate".into(),
        arguments: None,
        capabilities: Default::default(),
        status: TaskStatus::Working,
        // About what a checkpointing saga's sealed state weighs.
        state: Some("A".repeat(160)),
        pending: None,
        answers: Default::default(),
        model_answers: Default::default(),
        result: None,
        error: None,
        created_ms: now_ms(),
        updated_ms: now_ms(),
        ttl_ms: 3_600_000,
        worker: Some("worker".into()),
        lease_until_ms: now_ms() + 10_000,
        takeovers: 0,
        unresumable_since_ms: None,
        status_message: None,
        trace: None,
    }
}

/// What one operation measured: its rate and latencies.
struct Measured {
    per_second: f64,
    median: Duration,
    p99: Duration,
}

/// Runs `op(i)` for `i` in `0..ops`, `concurrency` at a time.
async fn measure<F, Fut>(ops: usize, concurrency: usize, op: F) -> Measured
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let op = Arc::new(op);
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let (op, next) = (Arc::clone(&op), Arc::clone(&next));
        workers.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= ops {
                    break latencies;
                }
                let began = Instant::now();
                op(i).await;
                latencies.push(began.elapsed());
            }
        }));
    }
    let mut latencies = Vec::new();
    for worker in workers {
        latencies.extend(worker.await.expect("a worker"));
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    Measured {
        per_second: ops as f64 / elapsed.as_secs_f64(),
        median: at(0.5),
        p99: at(0.99),
    }
}

async fn bench(store: TaskStore, ops: usize, concurrency: usize) -> [Measured; 3] {
    let quota = Quota::per_principal(1_000_000);
    let create = creates(store.clone(), ops, concurrency).await;
    let poll = {
        let store = store.clone();
        measure(ops, concurrency, move |i| {
            let store = store.clone();
            async move {
                let id = format!("{i:032x}");
                assert!(store.backend().get(&id).await.expect("read").is_some());
            }
        })
        .await
    };
    let checkpoint = {
        let store = store.clone();
        measure(ops, concurrency, move |i| {
            let store = store.clone();
            async move {
                let id = format!("{i:032x}");
                let step = |record: &mut TaskRecord| {
                    record.state = Some("B".repeat(160));
                    record.updated_ms = now_ms();
                    true
                };
                store
                    .backend()
                    .update(&id, &step, &quota)
                    .await
                    .expect("updated");
            }
        })
        .await
    };
    [create, poll, checkpoint]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let ops = env("OPS", 2000);
    let concurrency = env("CONCURRENCY", 16);
    let redis = start_redis().await;
    let postgres = start_postgres().await;
    let file = std::env::temp_dir().join(format!("saga-bench-stores-{}.db", std::process::id()));
    let stores =
        saga_examples::harness::stores::every_task_store(&file, &redis.url, &postgres.url).await;
    let cell = |m: &Measured| {
        format!(
            "{:.0}/s, {:.2} / {:.2} ms",
            m.per_second,
            m.median.as_secs_f64() * 1e3,
            m.p99.as_secs_f64() * 1e3
        )
    };
    token_stores(&redis.url, &postgres.url, ops, concurrency, &cell).await;
    if std::env::var("ONLY").is_ok_and(|only| only == "tokens") {
        return;
    }
    println!("{ops} tasks, {concurrency} at a time; per second, median / p99 latency\n");
    println!("| store | create | poll (`tasks/get`) | checkpoint (update) |");
    println!("|---|---|---|---|");
    for (name, store) in stores {
        let [create, poll, checkpoint] = bench(store, ops, concurrency).await;
        println!(
            "| {name} | {} | {} | {} |",
            cell(&create),
            cell(&poll),
            cell(&checkpoint)
        );
    }
    remove_sqlite(&file);

    let prestored: Vec<usize> = std::env::var("PRESTORED")
        .unwrap_or_else(|_| "10000,1000000".into())
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    println!(
        "\nCreates into a store that already holds N tasks ({ops} creates, {concurrency} at a time)\n"
    );
    println!("| store | N stored | create | filled in |");
    println!("|---|---:|---|---:|");
    for &n in &prestored {
        // In this process: filled through the store itself, whose inserts no longer sum
        // the records already held (issue 59), so a million takes seconds, not hours.
        let store = TaskStore::memory_with_capacity(n + ops + 1);
        let quota = Quota::per_principal(1_000_000);
        let began = Instant::now();
        for i in 0..n {
            store
                .backend()
                .insert(&record(1 << 40 | i), &quota)
                .await
                .expect("filled");
        }
        let filled = began.elapsed();
        let create = creates(store, ops, concurrency).await;
        println!(
            "| memory | {n} | {} | {:.1} s |",
            cell(&create),
            filled.as_secs_f64()
        );

        let file =
            std::env::temp_dir().join(format!("saga-bench-stores-{}-{n}.db", std::process::id()));
        let store = TaskStore::sqlite(&file).expect("opened");
        let began = Instant::now();
        rusqlite::Connection::open(&file)
            .expect("opened")
            .execute_batch(&prefill(n, "0"))
            .expect("filled");
        let filled = began.elapsed();
        let create = creates(store, ops, concurrency).await;
        println!(
            "| SQLite | {n} | {} | {:.1} s |",
            cell(&create),
            filled.as_secs_f64()
        );
        remove_sqlite(&file);

        let name = format!("prestored_{n}");
        let url = postgres.database(&name).await;
        let store = TaskStore::postgres(&url).await.expect("connected");
        let began = Instant::now();
        postgres.psql(&name, &prefill(n, "false"));
        let filled = began.elapsed();
        let create = creates(store, ops, concurrency).await;
        println!(
            "| Postgres | {n} | {} | {:.1} s |",
            cell(&create),
            filled.as_secs_f64()
        );
    }
}

/// The single-use stores' table: per round, a plain redeem, a claim and the record of its
/// outcome, and a retry's claim that reads it.
async fn token_stores(
    redis: &str,
    postgres: &str,
    ops: usize,
    concurrency: usize,
    cell: &dyn Fn(&Measured) -> String,
) {
    use saga_runtime::state::{MemoryStore, PostgresStore, RedisStore, SqliteStore, TokenStore};
    let file = std::env::temp_dir().join(format!("saga-bench-tokens-{}.db", std::process::id()));
    let stores: Vec<(&str, Arc<dyn TokenStore>)> = vec![
        ("memory", Arc::new(MemoryStore::new(ops * 4))),
        (
            "SQLite (WAL, synchronous=FULL)",
            Arc::new(SqliteStore::open(&file).expect("opened")),
        ),
        (
            "Redis",
            Arc::new(RedisStore::connect(redis).await.expect("connected")),
        ),
        (
            "Postgres",
            Arc::new(PostgresStore::connect(postgres).await.expect("connected")),
        ),
    ];
    println!(
        "Single-use stores: {ops} rounds, {concurrency} at a time; per second, median / p99 latency\n"
    );
    println!(
        "| store | redeem (no outcome) | claim + record a 2 KiB outcome | a retry's claim (reads it) |"
    );
    println!("|---|---|---|---|");
    let far = saga_runtime::state::unix_now() + 3_600;
    // Each run its own nonces: a chain per run, the op's number in the nonce's random part.
    let nonce = |run: u8, i: usize| {
        let mut nonce = [run; 24];
        nonce[12..20].copy_from_slice(&(i as u64).to_be_bytes());
        nonce
    };
    for (name, store) in stores {
        let redeem = {
            let store = Arc::clone(&store);
            measure(ops, concurrency, move |i| {
                let store = Arc::clone(&store);
                async move {
                    assert_eq!(store.redeem(&nonce(1, i), far).await, Ok(true));
                }
            })
            .await
        };
        let outcome: Arc<[u8]> = vec![7u8; 2048].into();
        let claimed = {
            let (store, outcome) = (Arc::clone(&store), Arc::clone(&outcome));
            measure(ops, concurrency, move |i| {
                let (store, outcome) = (Arc::clone(&store), Arc::clone(&outcome));
                async move {
                    let id = nonce(2, i);
                    let claim = store.claim(&id, far, far).await.expect("claimed");
                    assert_eq!(claim, saga_runtime::state::Claim::First);
                    store.record(&id, &outcome, far).await.expect("recorded");
                }
            })
            .await
        };
        let retried = {
            let store = Arc::clone(&store);
            measure(ops, concurrency, move |i| {
                let store = Arc::clone(&store);
                async move {
                    let claim = store.claim(&nonce(2, i), far, far).await.expect("read");
                    assert!(matches!(claim, saga_runtime::state::Claim::Recorded(_)));
                }
            })
            .await
        };
        println!(
            "| {name} | {} | {} | {} |",
            cell(&redeem),
            cell(&claimed),
            cell(&retried)
        );
    }
    remove_sqlite(&file);
    println!();
}

/// `n` unexpired rows of 1,000 principals, in one statement both databases read
/// (`shared` as the database writes false). Their records are not read by a create.
/// Then the table's statistics, as autovacuum (or `ANALYZE`) keeps them for a table that
/// grew over time: without them, a database that just received a million rows in one
/// statement plans as if the table were empty.
fn prefill(n: usize, shared: &str) -> String {
    let far = now_ms() + 3_600_000;
    format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {n})
         INSERT INTO saga_tasks (id, owner, shared, bytes, expires_ms, working,
             lease_until_ms, version, record)
         SELECT 'pre-' || i, 'client-' || (i % 1000), {shared}, 400, {far}, {shared}, 0, 0, '{{}}'
         FROM n;
         ANALYZE saga_tasks;"
    )
}

/// `ops` creates into `store`, `concurrency` at a time.
async fn creates(store: TaskStore, ops: usize, concurrency: usize) -> Measured {
    let quota = Quota::per_principal(1_000_000);
    measure(ops, concurrency, move |i| {
        let store = store.clone();
        async move {
            store
                .backend()
                .insert(&record(i), &quota)
                .await
                .expect("inserted");
        }
    })
    .await
}

fn remove_sqlite(file: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}
