//! End-to-end throughput of the three-round deploy saga over Streamable HTTP: saga against
//! a hand-written rmcp MRTR server doing the same exchange, same load generator, same run.
//!
//! Run with `cargo bench -p saga-runtime --bench e2e`. It prints markdown tables; it
//! asserts nothing about timings (only that every saga completes with the expected text
//! and that both servers ask exactly the same questions).
//!
//! # The two servers
//!
//! * **saga**: the `complex_tool` of `examples/support/deploy_tool.rs` (included below; the
//!   example's `main` needs the root package), served by `SagaServer::serve_listener`,
//!   i.e. `SagaServer::router()` on axum: rmcp's `StreamableHttpService` with
//!   `default_http_config()` (no legacy sessions, JSON responses, per-request metadata).
//! * **rmcp by hand**: a `ServerHandler` whose `call_tool` derives the round from its
//!   `requestState`, sealed with rmcp's own `RequestStateCodec` (HMAC-SHA256 over JSON,
//!   600 s TTL, bound through `associated_data` to a SHA-256 of tool, method and the
//!   arguments), served by the same `StreamableHttpService` with the same config and
//!   the same `NeverSessionManager` on axum. It asks the same `elicit-1` form and the same
//!   `sample-2` message as saga (checked at start-up, JSON against JSON), checks the
//!   answers, and completes with the same text.
//!
//! * **the floor**: a bare hyper HTTP/1 server that reads each body, parses it as JSON,
//!   picks the round from `requestState` and `inputResponses`, and answers the response
//!   saga gave for that round, recorded at start-up (with the request's `id`). No MCP
//!   checks, no state, no crypto: what any server of this exchange must at least do, so
//!   saga's CPU over the floor's is what saga adds.
//!
//! # The load generator
//!
//! `VUS` virtual users (tokio tasks, one reqwest client with keep-alive connections each)
//! each run complete sagas back to back: round 1 `tools/call`, round 2 with the
//! elicitation answer and the token, round 3 with the sampling answer and the token; the
//! final text is checked. Each measurement runs for `SECONDS` after a 1 s warm-up, and the
//! two servers alternate for `TRIALS` trials each; the table gives every trial and the
//! median. Server and client run in separate tokio runtimes in this process; with
//! `PIN=1` (the default when the machine has 2+ CPUs) the server's worker threads are
//! pinned to the first half of the CPUs and the client's to the second half, so the two
//! do not steal each other's cores. The server threads' CPU time (from
//! `/proc/self/task/*/stat`) is reported per completed saga, which stays meaningful
//! even if the client, not the server, is the bottleneck.
//!
//! Environment: `VUS` (default 32), `SECONDS` (5), `TRIALS` (3), `SERVER_THREADS`
//! (half the CPUs, at least 1), `CLIENT_THREADS` (the rest, at least 1), `PIN`.

// Sampling is deprecated by MCP 2026-07-28 (SEP-2577) but the deploy saga uses it.
#![allow(deprecated)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use saga_runtime::prelude::*;
use serde_json::Value;

// Shared with the `http_load` bench, which uses other parts of them.
#[allow(dead_code)]
mod support {
    pub mod drive;
    pub mod peers;
    pub mod raw;
}
use support::drive::{
    Client, KEY, TTL, cpu_ticks, current_tid, env_or, median, new_client, one_saga,
    pin_current_thread, requests_of, run_load,
};
use support::peers::{Canned, hand_router, serve_floor};

// ---------------------------------------------------------------------------------------
// The saga: the deploy example's own file (it uses nothing but saga-runtime).
// ---------------------------------------------------------------------------------------

#[path = "../../examples/support/deploy_tool.rs"]
mod deploy;
use deploy::complex_tool;

fn saga_server() -> SagaServer {
    SagaServer::builder()
        .info("deploy-server", "0.1.0")
        .keys(KeyRing::from_keys([KEY]).unwrap())
        .ttl(TTL)
        .tool(complex_tool)
        .build()
        .unwrap()
}
fn runtime(
    name: &str,
    threads: usize,
    cpus: Vec<usize>,
    tids: Arc<Mutex<Vec<i32>>>,
) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name(name)
        .enable_all()
        .on_thread_start(move || {
            if !cpus.is_empty() {
                pin_current_thread(&cpus);
            }
            tids.lock().unwrap().push(current_tid());
        })
        .build()
        .unwrap()
}

fn main() {
    let started = Instant::now();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let vus: usize = env_or("VUS", 32);
    let seconds: f64 = env_or("SECONDS", 5.0);
    let trials: usize = env_or("TRIALS", 3);
    let server_threads: usize = env_or("SERVER_THREADS", (cpus / 2).max(1));
    let client_threads: usize = env_or("CLIENT_THREADS", (cpus - server_threads.min(cpus)).max(1));
    let pin: bool = env_or("PIN", u8::from(cpus >= 2)) == 1;
    let (server_cpus, client_cpus): (Vec<usize>, Vec<usize>) = if pin {
        let split = server_threads.min(cpus - 1).max(1);
        ((0..split).collect(), (split..cpus).collect())
    } else {
        (Vec::new(), Vec::new())
    };

    let server_tids = Arc::new(Mutex::new(Vec::new()));
    let server_rt = runtime(
        "server",
        server_threads,
        server_cpus.clone(),
        server_tids.clone(),
    );
    let client_rt = runtime(
        "client",
        client_threads,
        client_cpus.clone(),
        Arc::new(Mutex::new(Vec::new())),
    );

    // Both servers on ephemeral loopback ports, for the whole run.
    let (saga_addr, hand_addr): (SocketAddr, SocketAddr) = server_rt.block_on(async {
        let saga_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let hand_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addrs = (
            saga_listener.local_addr().unwrap(),
            hand_listener.local_addr().unwrap(),
        );
        tokio::spawn(async move {
            // As users serve it (`serve_http`): saga's own HTTP/1 listener, with its
            // connection bounds.
            saga_server()
                .serve_listener(saga_listener, std::future::pending())
                .await
                .unwrap();
        });
        tokio::spawn(async move {
            axum::serve(hand_listener, hand_router()).await.unwrap();
        });
        addrs
    });
    let saga_url = format!("http://{saga_addr}/mcp");
    let hand_url = format!("http://{hand_addr}/mcp");
    let tids = server_tids;

    // Check, untimed, that both run the same exchange.
    let (saga_rounds, hand_rounds) = client_rt.block_on(async {
        let client = new_client();
        let mut id = 0;
        (
            one_saga(&client, &saga_url, &mut id).await,
            one_saga(&client, &hand_url, &mut id).await,
        )
    });
    for round in 0..3 {
        let (saga, hand) = (
            requests_of(&saga_rounds[round]),
            requests_of(&hand_rounds[round]),
        );
        if saga != hand {
            println!(
                "WARNING: the two servers do not run the same exchange; the comparison is void"
            );
            println!(
                "WARNING: round {} differs\n  saga: {saga}\n  rmcp: {hand}",
                round + 1
            );
        }
    }
    let token_lengths = |rounds: &[Value; 3]| {
        [0, 1].map(|round| rounds[round]["requestState"].as_str().unwrap().len())
    };
    let (saga_tokens, hand_tokens) = (token_lengths(&saga_rounds), token_lengths(&hand_rounds));
    println!(
        "Both servers return identical results in all three rounds apart from `requestState`."
    );
    for round in 0..2 {
        println!("round {} result (saga): {}", round + 1, saga_rounds[round]);
        println!("round {} result (rmcp): {}", round + 1, hand_rounds[round]);
    }

    // The floor answers what saga answered, round by round.
    let canned = Arc::new(Canned {
        rounds: saga_rounds.clone().map(|round| round.to_string()),
    });
    let floor_addr: SocketAddr = server_rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(serve_floor(listener, canned));
        addr
    });
    let floor_url = format!("http://{floor_addr}/mcp");
    let floor_rounds = client_rt.block_on(one_saga(&new_client(), &floor_url, &mut 0));
    assert_eq!(
        floor_rounds, saga_rounds,
        "the floor answers what saga answered"
    );

    let mut saga_trials = Vec::new();
    let mut hand_trials = Vec::new();
    let mut floor_trials = Vec::new();
    let only = std::env::var("ONLY").unwrap_or_default();
    for _ in 0..trials {
        if only.is_empty() || only == "saga" {
            saga_trials.push(client_rt.block_on(run_load(
                Client::Reqwest,
                saga_url.clone(),
                vus,
                seconds,
                || cpu_ticks(&tids.lock().unwrap()),
            )));
        }
        if only.is_empty() || only == "rmcp" {
            hand_trials.push(client_rt.block_on(run_load(
                Client::Reqwest,
                hand_url.clone(),
                vus,
                seconds,
                || cpu_ticks(&tids.lock().unwrap()),
            )));
        }
        if only.is_empty() || only == "floor" {
            floor_trials.push(client_rt.block_on(run_load(
                Client::Reqwest,
                floor_url.clone(),
                vus,
                seconds,
                || cpu_ticks(&tids.lock().unwrap()),
            )));
        }
    }
    if !only.is_empty() {
        let trials = match only.as_str() {
            "saga" => &saga_trials,
            "floor" => &floor_trials,
            _ => &hand_trials,
        };
        for trial in trials {
            println!(
                "{only}: {:.0} sagas/s, server CPU {:.0} µs/saga ({:.0} of it in the kernel)",
                trial.sagas_per_s, trial.server_cpu_us_per_saga, trial.server_system_us_per_saga
            );
        }
        return;
    }

    println!(
        "\n### Deploy saga end to end over Streamable HTTP (loopback; {vus} virtual users; {seconds} s per trial; server {server_threads} thread(s) on CPUs {server_cpus:?}, client {client_threads} thread(s) on CPUs {client_cpus:?})\n"
    );
    println!(
        "| trial | saga sagas/s | rmcp by hand sagas/s | floor sagas/s | saga server CPU µs/saga | rmcp server CPU µs/saga | floor server CPU µs/saga | saga/rmcp CPU | saga/floor CPU | saga p50 / p99 ms | rmcp p50 / p99 ms |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (index, ((saga, hand), floor)) in saga_trials
        .iter()
        .zip(&hand_trials)
        .zip(&floor_trials)
        .enumerate()
    {
        println!(
            "| {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.3} | {:.3} | {:.2} / {:.2} | {:.2} / {:.2} |",
            index + 1,
            saga.sagas_per_s,
            hand.sagas_per_s,
            floor.sagas_per_s,
            saga.server_cpu_us_per_saga,
            hand.server_cpu_us_per_saga,
            floor.server_cpu_us_per_saga,
            saga.server_cpu_us_per_saga / hand.server_cpu_us_per_saga,
            saga.server_cpu_us_per_saga / floor.server_cpu_us_per_saga,
            saga.p50_ms,
            saga.p99_ms,
            hand.p50_ms,
            hand.p99_ms,
        );
    }
    let (saga_rate, hand_rate) = (
        median(&saga_trials, |t| t.sagas_per_s),
        median(&hand_trials, |t| t.sagas_per_s),
    );
    let floor_rate = median(&floor_trials, |t| t.sagas_per_s);
    let (saga_cpu, hand_cpu, floor_cpu) = (
        median(&saga_trials, |t| t.server_cpu_us_per_saga),
        median(&hand_trials, |t| t.server_cpu_us_per_saga),
        median(&floor_trials, |t| t.server_cpu_us_per_saga),
    );
    println!(
        "| **median** | **{saga_rate:.0}** | **{hand_rate:.0}** | **{floor_rate:.0}** | **{saga_cpu:.0}** | **{hand_cpu:.0}** | **{floor_cpu:.0}** | **{:.3}** | **{:.3}** | | |",
        saga_cpu / hand_cpu,
        saga_cpu / floor_cpu,
    );
    println!(
        "\nServer CPU per saga (medians): saga/rmcp {:.3}, saga/floor {:.3}. Tokens (chars), rounds 2 and 3: saga {:?} = {}, rmcp {:?} = {}: saga/rmcp {:.3}.",
        saga_cpu / hand_cpu,
        saga_cpu / floor_cpu,
        saga_tokens,
        saga_tokens.iter().sum::<usize>(),
        hand_tokens,
        hand_tokens.iter().sum::<usize>(),
        saga_tokens.iter().sum::<usize>() as f64 / hand_tokens.iter().sum::<usize>() as f64,
    );
    println!(
        "Of it in the kernel (stime, medians): saga {:.0}, rmcp {:.0}, floor {:.0} µs/saga.",
        median(&saga_trials, |t| t.server_system_us_per_saga),
        median(&hand_trials, |t| t.server_system_us_per_saga),
        median(&floor_trials, |t| t.server_system_us_per_saga),
    );
    println!("\n(finished in {:.1} s)", started.elapsed().as_secs_f64());
    drop(client_rt);
    server_rt.shutdown_timeout(Duration::from_secs(1));
}
