//! What a large state costs a round (issue 99): kept in a state store against the same
//! state carried inline, per store and size; deflate's cost per KiB sealed and opened; and
//! a kept round's cost with many states already in the store.
//!
//! ```text
//! cargo bench -p saga-workspace --bench states
//! CALLS=400 PRESTORED_STATES=20000 cargo bench -p saga-workspace --bench states
//! ONLY=deflate cargo bench -p saga-workspace --bench states   # the deflate table alone
//! ```
//!
//! # What is measured
//!
//! * **A call of two rounds** of the tool `hold`, run in process (`TestClient`, as
//!   `SagaTools::run` serves it: no HTTP): round 1 builds a state of `kb` KiB of log
//!   lines and suspends at an `elicit`, round 2 opens it and answers. The state crosses the
//!   suspension once: sealed (deflated when that makes it smaller), then opened. *Inline*,
//!   the client carries the token; *kept*, the server writes the token to the store
//!   (`inline_max(0)`: every state is kept) and the client carries a reference, which
//!   round 2 follows with one read. The figure is the median time of a call (`CALLS`
//!   calls one after another, after 20 to warm up); "kept ÷ inline" is what keeping costs
//!   over carrying the same state below the inline bound.
//! * **Deflate per KiB**: the codec's `seal` and `open` of the same state with the
//!   token format that deflates (the default) and with the compact one that does not,
//!   for text that compresses (log lines) and bytes that do not (random): a state that
//!   does not compress is sealed as it is, and what it costs is the attempt (past 16 KiB,
//!   a 4 KiB sample deflated at level 1).
//! * **Kept states already stored**: the kept call again with `PRESTORED_STATES` (10,000)
//!   other calls' states in the store: a round's cost must not grow with them.
//!
//! Stores: memory, a SQLite file (WAL, `synchronous = FULL`), a `redis-server` and a
//! `postgres` of the bench's own on loopback (installed as the stores bench installs
//! them). It asserts nothing about timings: only that every call answers what the tool
//! computes.

use std::hint::black_box;
use std::time::{Duration, Instant};

use saga_examples::harness::postgres::start_postgres;
use saga_examples::harness::redis::start_redis;
use saga_runtime::prelude::*;
use saga_runtime::state::{Binding, PointKey, StateCodec, TokenFormat};
use saga_runtime::tasks::StateSettings;
use saga_runtime::testing::{Answer, TestClient};
use serde_json::json;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// `kb` KiB of log lines, which compress as real logs do.
fn payload(kb: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut len = 0;
    while len < kb * 1024 {
        let line = format!(
            "2026-11-30T06:{:02}:{:02}Z INFO request {} served in {} ms",
            lines.len() / 60 % 60,
            lines.len() % 60,
            lines.len(),
            lines.len() * 7 % 113
        );
        len += line.len();
        lines.push(line);
    }
    lines
}

/// `kb` KiB of bytes that do not compress (an encrypted blob, an image): xorshift's.
fn random_bytes(kb: usize) -> Vec<u8> {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    (0..kb * 1024)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed.to_le_bytes()[3]
        })
        .collect()
}

/// Holds `kb` KiB of log lines across one question, then answers with their length.
#[saga_tool]
async fn hold(kb: usize) -> Result<String, SagaError> {
    let lines = payload(kb);
    let go_on: bool = elicit("Go on?").await?;
    let bytes: usize = lines.iter().map(String::len).sum();
    Ok(format!("{go_on} {bytes}"))
}

/// One `hold` call of `kb` KiB through `client`, answered: its text.
async fn hold_call(client: &TestClient, kb: usize) -> String {
    client
        .call("hold", json!({"kb": kb}))
        .then(Answer::accept(json!({"value": true})))
        .run()
        .await
        .expect("the call completes")
        .text()
}

/// Median time of one `hold` call of `kb` KiB through `client`, over `calls` calls.
async fn call_time(client: &TestClient, kb: usize, calls: usize) -> Duration {
    let expected = format!(
        "true {}",
        payload(kb).iter().map(String::len).sum::<usize>()
    );
    let one = || async { assert_eq!(hold_call(client, kb).await, expected) };
    for _ in 0..20 {
        one().await;
    }
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let began = Instant::now();
        one().await;
        times.push(began.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

/// Calls per second of `kb` KiB through `client`, `at_once` at a time (one task, as one
/// connection's worth of concurrent requests): a store's group commit shares a flush
/// between the writes waiting for it.
async fn throughput(client: &TestClient, kb: usize, calls: usize, at_once: usize) -> f64 {
    let began = Instant::now();
    // At least one call a lane, however few `CALLS` asks for.
    let each = (calls / at_once).max(1);
    let lanes = (0..at_once).map(|_| async {
        for _ in 0..each {
            black_box(hold_call(client, kb).await);
        }
    });
    futures::future::join_all(lanes).await;
    (each * at_once) as f64 / began.elapsed().as_secs_f64()
}

fn tools(store: Option<StateSettings>) -> TestClient {
    let mut builder = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        // Room for the largest inline state measured.
        .max_token_len(1 << 20)
        .tool(hold);
    if let Some(store) = store {
        builder = builder.state_store(store);
    }
    TestClient::with_tools(builder.build().expect("builds"))
}

fn micros(time: Duration) -> String {
    format!("{:.1}", time.as_secs_f64() * 1e6)
}

/// Median nanoseconds of `f` over 15 batches of about 20 ms.
fn measure(mut f: impl FnMut()) -> f64 {
    let began = Instant::now();
    let mut warm = 0u64;
    while began.elapsed() < Duration::from_millis(100) {
        f();
        warm += 1;
    }
    let per = began.elapsed().as_secs_f64() / warm as f64;
    let batch = ((0.02 / per) as u64).max(1);
    let mut each: Vec<f64> = (0..15)
        .map(|_| {
            let began = Instant::now();
            for _ in 0..batch {
                f();
            }
            began.elapsed().as_secs_f64() * 1e9 / batch as f64
        })
        .collect();
    each.sort_by(f64::total_cmp);
    each[each.len() / 2]
}

/// The deflate table: seal and open per KiB, deflating and not, compressible or not.
fn deflate_table() {
    println!("\n### Deflate: the codec's seal and open of a state, per KiB of state\n");
    println!(
        "| state | size | token (deflated / compact), chars | seal ns/KiB, deflated / compact | open ns/KiB, deflated / compact |"
    );
    println!("|---|---:|---:|---:|---:|");
    let point = PointKey {
        header: *b"pt-bench",
        identity: [7; 32],
    };
    let binding = Binding::new("hold", "tools/call", "anonymous", None);
    let codec = |format| {
        StateCodec::new(KeyRing::ephemeral(), Duration::from_secs(600))
            .with_max_token_len(1 << 24)
            .with_format(format)
    };
    let (deflating, compact) = (codec(TokenFormat::Deflated), codec(TokenFormat::Compact));
    for random in [false, true] {
        for kb in [4, 64, 256] {
            let plaintext = if random {
                random_bytes(kb)
            } else {
                postcard::to_allocvec(&payload(kb)).expect("encoded")
            };
            let per_kb = plaintext.len() as f64 / 1024.0;
            let mut row = Vec::new();
            let mut tokens = Vec::new();
            for codec in [&deflating, &compact] {
                let token = codec.seal(&point, &binding, &plaintext);
                let opened = codec.open(&token, &point, &binding).expect("opens");
                assert_eq!(opened.plaintext, plaintext);
                tokens.push(token.len());
                let seal = measure(|| {
                    black_box(codec.seal(&point, black_box(&binding), black_box(&plaintext)));
                });
                let open = measure(|| {
                    black_box(codec.open(black_box(&token), &point, &binding).is_ok());
                });
                row.push((seal / per_kb, open / per_kb));
            }
            println!(
                "| {} | {:.0} KiB | {} / {} | {:.0} / {:.0} | {:.0} / {:.0} |",
                if random { "random bytes" } else { "log lines" },
                per_kb,
                tokens[0],
                tokens[1],
                row[0].0,
                row[1].0,
                row[0].1,
                row[1].1
            );
        }
    }
}

#[tokio::main]
async fn main() {
    let calls = env("CALLS", 200).max(1);
    let prestored = env("PRESTORED_STATES", 10_000);
    deflate_table();
    if std::env::var("ONLY").is_ok_and(|only| only == "deflate") {
        return;
    }

    let redis = start_redis().await;
    let postgres = start_postgres().await;
    let file = std::env::temp_dir().join(format!("saga-bench-states-{}.db", std::process::id()));
    let stores =
        saga_examples::harness::stores::every_task_store(&file, &redis.url, &postgres.url).await;

    println!(
        "\n### A call of two rounds whose state crosses one suspension: kept in a store against carried inline ({calls} calls, median µs)\n"
    );
    println!(
        "| store | state | inline µs | kept µs | kept ÷ inline | kept − inline, µs per KiB | 16 at a time: inline / kept calls/s | ÷ |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let inline = tools(None);
    let sizes = [1, 4, 7, 64];
    let mut inline_times = Vec::new();
    for kb in sizes {
        inline_times.push((
            call_time(&inline, kb, calls).await,
            throughput(&inline, kb, calls, 16).await,
        ));
    }
    let mut kept_clients = Vec::new();
    for (name, store) in stores {
        let kept = tools(Some(StateSettings::new(store).inline_max(0)));
        for (kb, (inline_time, inline_rate)) in sizes.iter().zip(&inline_times) {
            let kept_time = call_time(&kept, *kb, calls).await;
            let kept_rate = throughput(&kept, *kb, calls, 16).await;
            println!(
                "| {name} | {kb} KiB | {} | {} | {:.2}× | {:.2} | {:.0} / {:.0} | {:.2}× |",
                micros(*inline_time),
                micros(kept_time),
                kept_time.as_secs_f64() / inline_time.as_secs_f64(),
                (kept_time.as_secs_f64() - inline_time.as_secs_f64()) * 1e6 / *kb as f64,
                inline_rate,
                kept_rate,
                inline_rate / kept_rate
            );
        }
        kept_clients.push((name, kept));
    }

    println!(
        "\n### The kept call of 4 KiB again with {prestored} other calls' states in the store (median µs)\n"
    );
    println!("| store | empty store | with {prestored} states | ratio |");
    println!("|---|---:|---:|---:|");
    for (name, kept) in &kept_clients {
        let before = call_time(kept, 4, calls).await;
        // Each first round keeps its state and is never resumed: it stays until its
        // token expires (ten minutes), as an abandoned call's does.
        for _ in 0..prestored {
            let run = kept
                .call("hold", json!({"kb": 4}))
                .max_rounds(1)
                .run()
                .await;
            black_box(run.is_ok());
        }
        let after = call_time(kept, 4, calls).await;
        println!(
            "| {name} | {} | {} | {:.2}× |",
            micros(before),
            micros(after),
            after.as_secs_f64() / before.as_secs_f64()
        );
    }
    drop(kept_clients);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}
