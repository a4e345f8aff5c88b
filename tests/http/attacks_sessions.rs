//! The attacks of the issue "Hardening the new surface", re-run against the example
//! servers as their own processes with default settings: what one client can hold of
//! sessions, streams, waiting calls, subscriptions, the task store and the task workers.
//! The figures printed (RSS under each attack) are the ones SECURITY.md quotes; run with
//! `cargo test -p saga-workspace --test http attacks_sessions:: -- --nocapture --test-threads 1` to see them.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use saga_examples::harness::http::{Call, Method, Post, StatusCode, client_at, one_shot_client};
use saga_examples::harness::process::{ServerProcess, Spawn};
use saga_examples::harness::session::{self, session_id};
use saga_examples::harness::tasks::TaskClient;
use serde_json::{Value, json};

const KEY_HEX: &str = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a";
const KB_900: usize = 900 * 1024;
/// The API keys the example servers verify (`SAGA_API_KEYS`): `Bearer k-0` … `Bearer k-3`
/// are verified principals; every other caller is unverified.
const API_KEYS: &str = "k-0,k-1,k-2,k-3";

/// The deploy example with [`API_KEYS`].
/// These attacks make identities up by the hundred at each address, to test the other
/// bounds: the bound on the unverified credentials one address may send (30 a minute by
/// default) would refuse them first (`credentials.rs` tests it), so it is raised here.
const MADE_UP_IDENTITIES: &str = "100000";

fn deploy() -> ServerProcess {
    Spawn::new("deploy", KEY_HEX)
        .env("SAGA_API_KEYS", API_KEYS)
        .env("SAGA_FAILED_CREDENTIALS_PER_MINUTE", MADE_UP_IDENTITIES)
        .start()
}

fn http() -> reqwest::Client {
    one_shot_client()
}

fn url(addr: SocketAddr) -> String {
    format!("http://{addr}/mcp")
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// `initialize` as `who` (an `Authorization` value, or none); the status and session id.
async fn initialize(
    client: &reqwest::Client,
    addr: SocketAddr,
    who: Option<&str>,
) -> (StatusCode, Option<String>) {
    let response = session::initialize(&url(addr), json!({"elicitation": {}}))
        .header("authorization", who.unwrap_or_default())
        .with_client(client)
        .response()
        .await;
    let status = response.status();
    let id = session_id(&response);
    let _ = response.bytes().await;
    if let Some(id) = &id {
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = in_session(client, addr, id, who)
            .json(&initialized)
            .response()
            .await;
        assert!(response.status().is_success(), "{}", response.status());
    }
    (status, id)
}

fn in_session(client: &reqwest::Client, addr: SocketAddr, id: &str, who: Option<&str>) -> Post {
    session::in_session(&url(addr), id, who).with_client(client)
}

/// An MRTR call of the deploy example's `complex_tool` by a fresh client: its first round
/// must come back, whatever the attack holds.
async fn fresh_call_is_served(addr: SocketAddr) {
    let started = Instant::now();
    let (status, body) = Call::deploy().send_with(&http(), addr).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["result"]["resultType"], "input_required", "{body}");
    println!(
        "  a fresh client's call was answered in {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn one_client_cannot_open_sessions_without_end() {
    let server = deploy();
    let addr = server.addr;
    let before = server.rss_kib();
    let client = http();
    // One anonymous client: its first 100 sessions open, the rest are refused (429).
    let mut opened = 0;
    let mut refused = 0;
    for _ in 0..150 {
        match initialize(&client, addr, None).await {
            (StatusCode::OK, Some(_)) => opened += 1,
            (StatusCode::TOO_MANY_REQUESTS, None) => refused += 1,
            (status, _) => panic!("an unexpected answer: {status}"),
        }
    }
    assert_eq!((opened, refused), (100, 50));
    // Identities made up at the same address share its pool: none gets another session.
    for who in 0..10 {
        let who = format!("Bearer made-up-{who}");
        let (status, _) = initialize(&client, addr, Some(&who)).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{who}");
    }
    // Unverified callers at other addresses take their part of the server's cap (750 of
    // 1,000) and no more.
    let mut server_wide = opened;
    let mut unavailable = 0;
    for address in 2..10 {
        let client = client_at(&format!("127.0.0.{address}"));
        for n in 0..100 {
            let who = format!("Bearer made-up-{address}-{n}");
            match initialize(&client, addr, Some(&who)).await {
                (StatusCode::OK, Some(_)) => server_wide += 1,
                (StatusCode::SERVICE_UNAVAILABLE, None) => unavailable += 1,
                (status, _) => panic!("an unexpected answer: {status}"),
            }
        }
    }
    assert_eq!((server_wide, unavailable), (750, 800 - 650));
    // The rest is kept for verified principals, each with its own share of 100.
    for key in 0..3 {
        let who = format!("Bearer k-{key}");
        for _ in 0..100 {
            match initialize(&client, addr, Some(&who)).await {
                (StatusCode::OK, Some(_)) => server_wide += 1,
                (StatusCode::SERVICE_UNAVAILABLE, None) => unavailable += 1,
                (status, _) => panic!("an unexpected answer: {status}"),
            }
        }
    }
    assert_eq!(server_wide, 1_000);
    assert_eq!(unavailable, 150 + 50);
    let after = server.rss_kib();
    println!(
        "sessions: 1,390 initialize from 9 addresses and 3 verified keys, 1,000 opened; \
         RSS {:.1} → {:.1} MiB",
        mib(before),
        mib(after)
    );
    fresh_call_is_served(addr).await;
}

#[tokio::test]
async fn abandoned_session_calls_are_bounded() {
    let server = deploy();
    let addr = server.addr;
    let before = server.rss_kib();
    let client = http();
    // 300 calls of 900 KB that wait for an elicitation nobody answers, spread over 20
    // sessions of one client, each abandoned as soon as its stream starts.
    let mut sessions = Vec::new();
    for _ in 0..20 {
        let (status, id) = initialize(&client, addr, None).await;
        assert_eq!(status, StatusCode::OK);
        sessions.push(id.expect("a session id"));
    }
    let padding = "p".repeat(KB_900);
    let mut accepted = 0;
    let mut refused = 0;
    for call in 0..300 {
        let id = &sessions[call % sessions.len()];
        let response = in_session(&client, addr, id, None)
            .json(&json!({
                "jsonrpc": "2.0", "id": call + 1, "method": "tools/call",
                "params": {"name": "complex_tool", "arguments": {"initial_arg": padding}}
            }))
            .response()
            .await;
        match response.status() {
            // The stream is dropped unread: the call waits for its answer regardless.
            StatusCode::OK => accepted += 1,
            StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE => refused += 1,
            status => panic!("an unexpected answer: {status}"),
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = server.rss_kib();
    println!(
        "waiting calls: 300 of 900 KB, {accepted} held, {refused} refused; RSS {:.1} → {:.1} MiB",
        mib(before),
        mib(after)
    );
    assert_eq!(
        accepted, 32,
        "one client holds its own share of waiting calls"
    );
    assert_eq!(accepted + refused, 300);
    // Identities made up at the same address share its pool: not one more call.
    let calls_as = |client: reqwest::Client, who: String, sessions: usize| {
        let padding = padding.clone();
        async move {
            let mut held = 0;
            for _ in 0..sessions {
                let (status, id) = initialize(&client, addr, Some(&who)).await;
                if status != StatusCode::OK {
                    continue;
                }
                let id = id.expect("a session id");
                for call in 0..16 {
                    let response = in_session(&client, addr, &id, Some(&who))
                        .json(&json!({
                            "jsonrpc": "2.0", "id": call + 1, "method": "tools/call",
                            "params": {"name": "complex_tool", "arguments": {"initial_arg": padding}}
                        }))
                        .response()
                        .await;
                    if response.status() == StatusCode::OK {
                        held += 1;
                    }
                }
            }
            held
        }
    };
    let mut same_address = 0;
    for who in 0..4 {
        same_address += calls_as(client.clone(), format!("Bearer made-up-{who}"), 1).await;
    }
    assert_eq!(same_address, 0, "the address's pool holds its share");
    // Unverified callers at four more addresses take their part of the server's bound
    // (96 of 128) between them.
    let mut unverified = accepted;
    for address in 2..6 {
        let client = client_at(&format!("127.0.0.{address}"));
        unverified += calls_as(client, format!("Bearer made-up-{address}"), 2).await;
    }
    assert_eq!(unverified, 96, "the unverified callers' part");
    // Verified principals still get the rest.
    let mut verified = 0;
    for key in 0..2 {
        verified += calls_as(client.clone(), format!("Bearer k-{key}"), 1).await;
    }
    let spread_rss = server.rss_kib();
    println!(
        "waiting calls from 4 more addresses and 2 verified keys: {} held in all; RSS {:.1} MiB",
        unverified + verified,
        mib(spread_rss)
    );
    assert_eq!(unverified + verified, 128, "the server's bound");
    fresh_call_is_served(addr).await;
}

#[tokio::test]
async fn idle_get_streams_are_bounded() {
    let server = ServerProcess::deploy(KEY_HEX);
    let addr = server.addr;
    let client = http();
    let (status, id) = initialize(&client, addr, None).await;
    assert_eq!(status, StatusCode::OK);
    let id = id.expect("a session id");
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..200 {
        let response = in_session(&client, addr, &id, None)
            .method(Method::GET)
            .without("content-type")
            .header("accept", "text/event-stream")
            .response()
            .await;
        match response.status() {
            StatusCode::OK => held.push(response),
            StatusCode::TOO_MANY_REQUESTS => refused += 1,
            status => panic!("an unexpected answer: {status}"),
        }
    }
    println!(
        "GET streams in one session: 200 asked, {} open, {refused} refused",
        held.len()
    );
    assert_eq!(held.len(), 4);
    fresh_call_is_served(addr).await;
}

#[tokio::test]
async fn subscriptions_must_name_resources() {
    let server = Spawn::new("conformance_server", KEY_HEX).start();
    let addr = server.addr;
    let before = server.rss_kib();
    let client = http();
    let (status, id) = initialize(&client, addr, None).await;
    assert_eq!(status, StatusCode::OK);
    let id = id.expect("a session id");
    let made_up = format!("test://made-up/{}", "u".repeat(KB_900));
    for n in 0..300 {
        let response = in_session(&client, addr, &id, None)
            .json(&json!({
                "jsonrpc": "2.0", "id": n + 1, "method": "resources/subscribe",
                "params": {"uri": format!("{made_up}{n}")}
            }))
            .response()
            .await;
        let text = response.text().await.expect("a body");
        assert!(text.contains("-32602"), "{}", &text[..text.len().min(300)]);
    }
    let after = server.rss_kib();
    println!(
        "subscriptions: 300 to made-up URIs of 900 KB, all refused; RSS {:.1} → {:.1} MiB",
        mib(before),
        mib(after)
    );
    // A resource of the server can be subscribed to.
    let response = in_session(&client, addr, &id, None)
        .json(&json!({
            "jsonrpc": "2.0", "id": 999, "method": "resources/subscribe",
            "params": {"uri": "test://watched-resource"}
        }))
        .response()
        .await;
    let text = response.text().await.expect("a body");
    assert!(text.contains("\"result\""), "{text}");
}

/// Template URIs of the longest kind (finding 6 of the second hardening pass: 256 of them
/// held about 700 KiB in every session): a session's subscriptions hold at most
/// `MAX_SUBSCRIBED_BYTES` of URIs, and the one past it is refused with `-32600`.
#[tokio::test]
async fn a_sessions_subscriptions_are_bounded_in_bytes() {
    let server = Spawn::new("conformance_server", KEY_HEX).start();
    let addr = server.addr;
    let client = http();
    let (_, id) = initialize(&client, addr, None).await;
    let id = id.expect("a session id");
    let long = "i".repeat(1_900);
    let mut taken = 0usize;
    let mut refused = None;
    for n in 0..256 {
        let uri = format!("test://template/{long}{n}/data");
        let response = in_session(&client, addr, &id, None)
            .json(&json!({
                "jsonrpc": "2.0", "id": n + 1, "method": "resources/subscribe",
                "params": {"uri": uri}
            }))
            .response()
            .await;
        let text = response.text().await.expect("a body");
        if text.contains("\"result\"") {
            taken += uri.len();
        } else {
            refused = Some(text);
            break;
        }
    }
    let refused = refused.expect("a subscription past the bytes is refused");
    assert!(refused.contains("-32600"), "{refused}");
    assert!(refused.contains("bytes of URIs"), "{refused}");
    assert!(
        taken <= saga_runtime::serve::MAX_SUBSCRIBED_BYTES,
        "{taken} bytes held"
    );
    assert!(
        taken > saga_runtime::serve::MAX_SUBSCRIBED_BYTES - 2_000,
        "{taken}"
    );
}

/// A `tools/call` of `migrate` with the tasks extension declared, as `who`; the response.
async fn create_task(tasks: &TaskClient, addr: SocketAddr, who: &str, arguments: Value) -> Value {
    let params = json!({"name": "migrate", "arguments": arguments});
    tasks
        .clone()
        .authorization(who)
        .request(addr, "tools/call", params)
        .await
}

#[tokio::test]
async fn made_up_identities_cannot_fill_the_task_store() {
    let server = Spawn::new("migrate", KEY_HEX)
        .env("SAGA_API_KEYS", API_KEYS)
        .env("SAGA_FAILED_CREDENTIALS_PER_MINUTE", MADE_UP_IDENTITIES)
        .start();
    let addr = server.addr;
    let before = server.rss_kib();
    let tasks = TaskClient::new();
    // Tasks of 900 KB of arguments the tool ignores: a task keeps none of them.
    let padding = "p".repeat(KB_900);
    let mut created = 0;
    let mut quota = 0;
    for who in 0..11 {
        let who = format!("Bearer made-up-{who}");
        for n in 0..110 {
            let arguments = if n < 5 {
                json!({"tables": 0, "label": "x", "padding": padding})
            } else {
                json!({"tables": 0})
            };
            let answer = create_task(&tasks, addr, &who, arguments).await;
            if answer["result"]["resultType"] == "task" {
                created += 1;
            } else {
                let message = answer["error"]["message"].as_str().unwrap_or_default();
                assert!(message.contains("too many tasks"), "{answer}");
                quota += 1;
            }
        }
    }
    let after = server.rss_kib();
    println!(
        "tasks: 1,210 asked under 11 identities made up at one address (55 of 900 KB), \
         {created} kept, {quota} refused at the address's quota; RSS {:.1} → {:.1} MiB",
        mib(before),
        mib(after)
    );
    assert_eq!(
        created, 100,
        "identities made up at one address share its quota"
    );
    // A caller at another address, and a verified one, still get a task.
    let answer = create_task(
        &tasks.clone().from_address("127.0.0.2"),
        addr,
        "Bearer someone-else",
        json!({"tables": 0}),
    )
    .await;
    assert_eq!(answer["result"]["resultType"], "task", "{answer}");
    let answer = create_task(&tasks, addr, "Bearer k-0", json!({"tables": 0})).await;
    assert_eq!(answer["result"]["resultType"], "task", "{answer}");
}

#[tokio::test]
async fn one_callers_long_tasks_leave_workers_for_others() {
    // 40 workers; one pool's share is 32 of them (the default), and unverified callers
    // take 30 (75 %) together.
    let server = Spawn::new("migrate", KEY_HEX)
        .env("SAGA_TASK_WORKERS", "40")
        .env("SAGA_API_KEYS", API_KEYS)
        .env("SAGA_FAILED_CREDENTIALS_PER_MINUTE", MADE_UP_IDENTITIES)
        .start();
    let addr = server.addr;
    let tasks = TaskClient::new();
    // 100 tasks that each hold a worker for a minute, under made-up identities at one
    // address: more than every worker.
    for n in 0..100 {
        let answer = create_task(
            &tasks,
            addr,
            &format!("Bearer hog-{n}"),
            json!({"tables": 6, "millis_per_table": 10_000}),
        )
        .await;
        assert_eq!(answer["result"]["resultType"], "task", "{answer}");
    }
    // A verified client's short task runs now, not after the hog's.
    let answer = create_task(
        &tasks,
        addr,
        "Bearer k-1",
        json!({"tables": 1, "millis_per_table": 1}),
    )
    .await;
    let id = answer["result"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned();
    let started = Instant::now();
    loop {
        let status = tasks
            .clone()
            .authorization("Bearer k-1")
            .status(addr, &id)
            .await;
        if status["status"] == "completed" {
            println!(
                "workers: another client's task completed in {:?} beside 100 long ones",
                started.elapsed()
            );
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the other client's task waited behind the hog's: {status}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn session_ids_stay_out_of_the_info_log() {
    let server = Spawn::new("deploy", KEY_HEX)
        .log("info")
        .capture_stderr()
        .start();
    let (status, id) = initialize(&http(), server.addr, None).await;
    assert_eq!(status, StatusCode::OK);
    let id = id.expect("a session id");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let log = server.stderr();
    assert!(log.contains("INFO"), "the log is at INFO: {log}");
    assert!(!log.contains(&id), "the session id is in the log: {log}");
}

/// Finding 10 of the third hardening pass: sessions whose subscriptions are full cost
/// more than the sessions alone (218 MiB for 1,000, where SECURITY.md counted 77 MiB for
/// sessions without any). Measured here on 50 sessions of one address, each subscribed
/// to 256 templated URIs (16 KiB of them, the bound): what one such session costs is
/// bounded, and SECURITY.md states the measured figure. Most of it is not the
/// subscriptions but the buffers rmcp's session keeps once it has served requests, which
/// stop growing: 256, 1,024 and 2,048 pings a session measured 118, 121 and 111 KiB.
#[tokio::test]
async fn full_subscriptions_cost_a_bounded_amount_per_session() {
    let server = Spawn::new("conformance_server", KEY_HEX).start();
    let addr = server.addr;
    let client = http();
    let mut sessions = Vec::new();
    const SESSIONS: usize = 50;
    for _ in 0..SESSIONS {
        let (status, id) = initialize(&client, addr, None).await;
        assert_eq!(status, StatusCode::OK);
        sessions.push(id.expect("a session id"));
    }
    let opened = server.rss_kib();
    for (s, id) in sessions.iter().enumerate() {
        for n in 0..saga_runtime::serve::MAX_SUBSCRIPTIONS {
            // 60 bytes each: 256 of them fit the 16 KiB a session's URIs may hold.
            let uri = format!("test://template/{s:04}-{n:04}-{}/data", "x".repeat(24));
            let response = in_session(&client, addr, id, None)
                .json(&json!({
                    "jsonrpc": "2.0", "id": n + 1, "method": "resources/subscribe",
                    "params": {"uri": uri}
                }))
                .response()
                .await;
            assert!(response.status().is_success());
            let text = response.text().await.expect("a body");
            assert!(text.contains("\"result\""), "{text}");
        }
    }
    let subscribed = server.rss_kib();
    let per_session = subscribed.saturating_sub(opened) as f64 / SESSIONS as f64;
    println!(
        "subscriptions: {SESSIONS} sessions, 256 each; RSS {:.1} → {:.1} MiB, {per_session:.0} KiB a session",
        mib(opened),
        mib(subscribed)
    );
    assert!(
        per_session < 256.0,
        "{per_session:.0} KiB a session with full subscriptions"
    );
}
