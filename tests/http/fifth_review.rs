//! The fifth hardening review (issue 93), each finding in the shape it was found, over
//! HTTP: a small token grown by answers that deflate well, rounds whose clients hang up,
//! and a retry on a replica whose run-time bound is short. (The spans that quoted clients
//! are `tests/otel`'s.) Run with `cargo test -p saga-workspace --test http fifth_review::
//! -- --nocapture` for the figures SECURITY.md quotes.

// Sampling is deprecated by MCP 2026-07-28 (SEP-2577); the research loop it drives uses it.
#![allow(deprecated)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use saga_examples::harness::http::{Call, client, one_shot_client};
use saga_examples::harness::process::Spawn;
use saga_examples::harness::serving::serve_local;
use saga_runtime::prelude::*;
use saga_runtime::serve::HttpLimits;
use saga_runtime::state::{MemoryStore, SqliteStore};
use serde_json::{Value, json};

const KEY_HEX: &str = "9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d";
const KEY: [u8; 32] = [0x9d; 32];

// ---------------------------------------------------------------------------------------
// 1. A small token that costs a GiB to open
// ---------------------------------------------------------------------------------------

/// The review's answer to every sampling turn of the research loop: a tool use whose
/// input pads 99,000 zeros (some 200 KB of JSON, under the request's 100,000 values,
/// deflated into a few hundred bytes of token).
fn padded_turn(turn: usize) -> Value {
    let pad = vec![0; 99_000];
    json!({"role": "assistant", "model": "scripted", "stopReason": "toolUse", "content": [
        {"type": "tool_use", "id": format!("t{turn}"), "name": "search", "input": {"query": "saga", "pad": pad}}
    ]})
}

/// The one key an `input_required` answer asks under.
fn asked_key(body: &Value) -> String {
    let requests = body["result"]["inputRequests"]
        .as_object()
        .unwrap_or_else(|| panic!("input_required: {body:#}"));
    assert_eq!(requests.len(), 1, "{body:#}");
    requests.keys().next().cloned().unwrap_or_default()
}

/// The research loop answered with [`padded_turn`] at every turn, 22 turns as the review
/// ran it, then 16 of its requests at once: the state's values are bounded, so the call is
/// refused (the client's error: its answers grew it) before the state outgrows what one
/// request may hold, and the server's peak RSS stays within the bound SECURITY.md states.
/// Before: 1,000–1,050 MiB after 22 rounds.
#[tokio::test]
async fn answers_that_deflate_well_cannot_grow_a_small_token_past_what_a_request_holds() {
    let mut server = Spawn::new("research", KEY_HEX).start();
    let http = client();
    let before = server.rss_kib();
    let capabilities = json!({"elicitation": {}, "sampling": {"tools": {}}});
    let start = Call::new("research", json!({"question": "What is saga?"}))
        .capabilities(capabilities.clone());
    let (_, body) = start.send_with(&http, server.addr).await;
    let mut token = body["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("a token: {body:#}"))
        .to_owned();
    let mut refused = None;
    let mut last_good = token.clone();
    // The key each turn asks under (`sample-1`, `sample-2`, …).
    let mut key = asked_key(&body);
    let mut last_key = key.clone();
    for turn in 0..22 {
        let round = start.resume(token.clone(), json!({ key.clone(): padded_turn(turn) }));
        let (_, body) = round.send_with(&http, server.addr).await;
        if let Some(error) = body.get("error") {
            refused = Some((turn, error.clone()));
            break;
        }
        let next = body["result"]["requestState"]
            .as_str()
            .unwrap_or_else(|| panic!("turn {turn}: {body:#}"));
        println!(
            "turn {turn}: token {} characters, RSS {} KiB",
            next.len(),
            server.rss_kib()
        );
        last_good = token;
        last_key = key;
        token = next.to_owned();
        key = asked_key(&body);
    }
    let (turn, error) = refused.expect("the growth is refused");
    println!("refused at turn {turn}: {error}");
    assert!(turn <= 2, "refused only at turn {turn}");
    assert_eq!(error["code"], -32602, "{error}");
    assert!(
        error["message"].as_str().is_some_and(
            |message| message.contains("values") && message.contains("send smaller answers")
        ),
        "{error}"
    );
    // Sixteen of the last turns at once (the token that was refused, and the one before).
    let requests: Vec<_> = (0..16)
        .map(|n| {
            let (token, key) = if n % 2 == 0 {
                (&token, &key)
            } else {
                (&last_good, &last_key)
            };
            let round = start.resume(token.clone(), json!({ key.clone(): padded_turn(n) }));
            let http = http.clone();
            let addr = server.addr;
            tokio::spawn(async move { round.send_with(&http, addr).await })
        })
        .collect();
    for request in requests {
        let (status, _) = request.await.expect("joined");
        assert_eq!(status, 200);
    }
    let peak = server.memory_kib("VmHWM");
    println!(
        "memory: RSS before {before} KiB, after {} KiB, peak {peak} KiB",
        server.rss_kib()
    );
    assert!(peak < 200 * 1024, "peak RSS {peak} KiB");
    server.assert_alive();
}

/// A token sealed by a replica with a higher bound on a state's values, resumed on one
/// with the default: refused as an invalid token before the state is read whole, and read
/// by a replica with the bound it was sealed under.
#[tokio::test]
async fn a_token_holding_more_values_than_its_readers_bound_is_refused() {
    #[saga_tool]
    async fn keeps_items(items: Vec<Value>) -> Result<String, SagaError> {
        let _go: bool = elicit(format!("Keep {} items?", items.len())).await?;
        Ok(format!("{} items kept", items.len()))
    }
    let server = |values: Option<usize>| {
        let mut builder = SagaServer::builder()
            .keys(KeyRing::from_keys([KEY]).expect("a key"))
            .tool(keeps_items)
            .http_limits(HttpLimits::default().max_json_values(500_000));
        if let Some(values) = values {
            builder = builder.max_state_values(values);
        }
        builder.build().expect("the server builds")
    };
    let raised = serve_local(server(Some(200_000))).await;
    let default = serve_local(server(None)).await;
    let http = client();
    let start = Call::new("keeps_items", json!({"items": vec![0; 150_000]}));
    let (_, body) = start.send_with(&http, raised.addr).await;
    let token = body["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("a token: {body:#}"))
        .to_owned();
    let yes = json!({"elicit-1": {"action": "accept", "content": {"value": true}}});
    let (_, body) = start
        .resume(token.clone(), yes.clone())
        .send_with(&http, default.addr)
        .await;
    assert_eq!(body["error"]["code"], -32602, "{body:#}");
    let (_, body) = start.resume(token, yes).send_with(&http, raised.addr).await;
    assert_eq!(
        body["result"]["content"][0]["text"], "150000 items kept",
        "{body:#}"
    );
}

// ---------------------------------------------------------------------------------------
// 2. Rounds whose client hangs up
// ---------------------------------------------------------------------------------------

/// Calls of [`release`] running their downstream work now, and the most at once.
static RUNNING: AtomicUsize = AtomicUsize::new(0);
static MOST: AtomicUsize = AtomicUsize::new(0);
static RELEASED: AtomicUsize = AtomicUsize::new(0);

/// Asks, then calls a slow downstream service (1.5 s) whose concurrency is counted.
#[saga_tool]
async fn release(target: String) -> Result<String, SagaError> {
    let go: bool = elicit(format!("Release {target}?")).await?;
    if !go {
        return Ok(format!("{target} kept"));
    }
    let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    MOST.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    RUNNING.fetch_sub(1, Ordering::SeqCst);
    RELEASED.fetch_add(1, Ordering::SeqCst);
    Ok(format!("{target} released"))
}

fn yes() -> Value {
    json!({"elicit-1": {"action": "accept", "content": {"value": true}}})
}

/// One address opens at most 16 connections, sends `release` rounds and hangs up on each
/// after 0.15 s, 300 rounds in all, against a server that records outcomes: the rounds go
/// on after their clients left, but inside the address's share of the places (16), so the
/// downstream service sees at most 16 at once (before: 245–308); and a victim at another
/// address that hangs up meanwhile gets its answer when it sends the same request again,
/// never a spent token.
#[tokio::test]
async fn one_address_hanging_up_on_300_rounds_stays_within_its_share() {
    let server = SagaServer::builder()
        .keys(KeyRing::from_keys([KEY]).expect("a key"))
        .single_use(MemoryStore::new(10_000))
        .tool(release)
        .build()
        .expect("the server builds");
    let running = serve_local(server).await;
    let addr = running.addr;
    let http = client();
    // The attacker's first rounds, one token per call.
    let mut tokens = Vec::new();
    for n in 0..300 {
        let start = Call::new("release", json!({"target": format!("t{n}")}));
        let (_, body) = start.send_with(&http, addr).await;
        tokens.push((
            start,
            body["result"]["requestState"]
                .as_str()
                .expect("a token")
                .to_owned(),
        ));
    }
    let permits = std::sync::Arc::new(tokio::sync::Semaphore::new(16));
    let mut hangups = Vec::new();
    for (start, token) in tokens {
        let permit = std::sync::Arc::clone(&permits)
            .acquire_owned()
            .await
            .expect("permits");
        let round = start.resume(token, yes());
        hangups.push(tokio::spawn(async move {
            let post = round.post(addr).with_client(&one_shot_client());
            let _ = tokio::time::timeout(Duration::from_millis(150), post.try_response()).await;
            drop(permit);
        }));
    }
    // The victim, at another address, hangs up on its round meanwhile, then sends it again.
    let victim = Call::new("release", json!({"target": "victim"}));
    let (_, body) = victim
        .post(addr)
        .with_client(&saga_examples::harness::http::client_at("127.0.0.2"))
        .send()
        .await;
    let token = body["result"]["requestState"]
        .as_str()
        .expect("a token")
        .to_owned();
    let round = victim.resume(token, yes());
    let post = round
        .post(addr)
        .with_client(&saga_examples::harness::http::client_at("127.0.0.2"));
    let _ = tokio::time::timeout(Duration::from_millis(150), post.try_response()).await;
    for hangup in hangups {
        hangup.await.expect("joined");
    }
    let answered = loop {
        let (_, body) = round
            .post(addr)
            .with_client(&saga_examples::harness::http::client_at("127.0.0.2"))
            .send()
            .await;
        if body["error"]["data"]["retryable"] == true {
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        }
        break body;
    };
    assert_eq!(
        answered["result"]["content"][0]["text"], "victim released",
        "{answered:#}"
    );
    let most = MOST.load(Ordering::SeqCst);
    println!(
        "hang-ups: at most {most} downstream calls at once; {} released",
        RELEASED.load(Ordering::SeqCst)
    );
    // The address's share, and the victim's round.
    assert!(most <= 16 + 1, "{most} downstream calls at once");
    assert!(RELEASED.load(Ordering::SeqCst) >= 1);
}

// ---------------------------------------------------------------------------------------
// 5. A retry on a replica whose run-time bound is short
// ---------------------------------------------------------------------------------------

/// Holds its downstream call for a minute.
#[saga_tool]
async fn stuck(target: String) -> Result<String, SagaError> {
    let _go: bool = elicit(format!("Go on with {target}?")).await?;
    tokio::time::sleep(Duration::from_secs(60)).await;
    Ok(format!("{target} done"))
}

/// A round still running on one replica, sent again to another whose `max_run_time` is
/// 2 s: told to send it again later (`-32600`, retryable), not `-32603` "ran longer than
/// this server allows" (the retry waited 10 s for the first, past its own bound).
#[tokio::test]
async fn a_retry_on_a_replica_with_a_short_run_time_is_told_to_retry() {
    let path = std::env::temp_dir().join(format!(
        "saga-fifth-review-{}-{}.db",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.subsec_nanos())
    ));
    let replica = |max_run_time: Duration| {
        SagaServer::builder()
            .keys(KeyRing::from_keys([KEY]).expect("a key"))
            .single_use(SqliteStore::open(&path).expect("opened"))
            .max_run_time(max_run_time)
            .tool(stuck)
            .build()
            .expect("the server builds")
    };
    let slow = serve_local(replica(Duration::from_secs(600))).await;
    let short = serve_local(replica(Duration::from_secs(2))).await;
    let http = client();
    let start = Call::new("stuck", json!({"target": "db"}));
    let (_, body) = start.send_with(&http, slow.addr).await;
    let token = body["result"]["requestState"]
        .as_str()
        .expect("a token")
        .to_owned();
    let round = start.resume(token, yes());
    // The first sending runs on the slow replica (its client hangs up)...
    let post = round.post(slow.addr).with_client(&one_shot_client());
    let _ = tokio::time::timeout(Duration::from_millis(300), post.try_response()).await;
    // ...and the retry reaches the other one.
    let started = std::time::Instant::now();
    let (_, body) = round.send_with(&http, short.addr).await;
    println!("retry answered in {:?}: {body}", started.elapsed());
    assert_eq!(body["error"]["code"], -32600, "{body:#}");
    assert_eq!(body["error"]["data"]["retryable"], true, "{body:#}");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}
