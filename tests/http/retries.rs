//! Retries that are safe: with a single-use store, a request whose response was lost and
//! that the client sends again gets the same response, and the round (and its side
//! effect) runs once; the same token with other answers is refused; duplicates sent at
//! once run the round once. Against every store: memory, a SQLite file, a real
//! `redis-server` and a real `postgres`, with one server and with two replicas. The
//! response is lost in a proxy of this test, between the client and the server, after the
//! server answered.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

use saga_examples::harness::http::Call;
use saga_examples::harness::postgres::start_postgres;
use saga_examples::harness::redis::start_redis;
use saga_examples::harness::serving::{Running, serve_local};
use saga_runtime::prelude::*;
use saga_runtime::state::{MemoryStore, PostgresStore, RedisStore, SqliteStore, TokenStore};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::single_use::{refused, token};

const KEY: [u8; 32] = [12; 32];

/// Refunds issued, by order: the side effect whose count the tests read.
static REFUNDS: Mutex<Option<HashMap<String, usize>>> = Mutex::new(None);

/// Issues a refund for `order` (counted); its number among the order's refunds.
fn issue_refund(order: &str) -> usize {
    let mut refunds = REFUNDS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let count = refunds
        .get_or_insert_with(HashMap::new)
        .entry(order.to_owned())
        .or_default();
    *count += 1;
    *count
}

fn refunds_of(order: &str) -> usize {
    REFUNDS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .as_ref()
        .and_then(|refunds| refunds.get(order).copied())
        .unwrap_or(0)
}

/// Asks whether to refund, refunds (a side effect), then asks for a note.
#[saga_tool]
async fn refund(order: String, slow_ms: Option<u64>) -> Result<String, SagaError> {
    let go: bool = elicit(format!("Refund order {order}?")).await?;
    if !go {
        return Ok(format!("order {order} kept"));
    }
    if let Some(slow_ms) = slow_ms {
        tokio::time::sleep(Duration::from_millis(slow_ms)).await;
    }
    let number = issue_refund(&order);
    let note: String = elicit(format!("Refund {number} of {order} issued. A note?")).await?;
    Ok(format!("refund {number} of {order}: {note}"))
}

fn server(store: impl TokenStore) -> SagaServer {
    SagaServer::builder()
        .keys(KeyRing::from_keys([KEY]).expect("a key"))
        .single_use(store)
        .tool(refund)
        .build()
        .expect("the server builds")
}

fn call(order: &str) -> Call {
    Call::new("refund", json!({"order": order}))
}

fn slow_call(order: &str, slow_ms: u64) -> Call {
    Call::new("refund", json!({"order": order, "slow_ms": slow_ms}))
}

fn yes() -> Value {
    json!({"elicit-1": {"action": "accept", "content": {"value": true}}})
}

fn no() -> Value {
    json!({"elicit-1": {"action": "accept", "content": {"value": false}}})
}

fn note(text: &str) -> Value {
    json!({"elicit-2": {"action": "accept", "content": {"value": text}}})
}

/// The body `call` gets from `addr`, as bytes.
async fn body(call: &Call, addr: SocketAddr) -> Vec<u8> {
    call.post(addr)
        .response()
        .await
        .bytes()
        .await
        .expect("a body")
        .to_vec()
}

fn json_of(body: &[u8]) -> Value {
    serde_json::from_slice(body)
        .unwrap_or_else(|error| panic!("not JSON ({error}): {}", String::from_utf8_lossy(body)))
}

/// A proxy in front of `upstream` that passes each request on and drops its response:
/// the server answers, the client's connection is closed without it. The responses it
/// dropped are sent to the receiver, bodies only.
async fn dropping_proxy(
    upstream: SocketAddr,
) -> (SocketAddr, tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port is free");
    let addr = listener.local_addr().expect("an address");
    let (dropped, receiver) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let dropped = dropped.clone();
            tokio::spawn(async move {
                let Ok(server) = tokio::net::TcpStream::connect(upstream).await else {
                    return;
                };
                let (mut from_server, mut to_server) = server.into_split();
                let (mut from_client, _to_client) = client.split();
                let forward = async {
                    let mut buffer = [0u8; 16 * 1024];
                    loop {
                        match from_client.read(&mut buffer).await {
                            Ok(0) | Err(_) => break,
                            Ok(read) => {
                                if to_server.write_all(&buffer[..read]).await.is_err() {
                                    break;
                                }
                            }
                        }
                    }
                };
                let response = read_response(&mut from_server);
                tokio::select! {
                    () = forward => {}
                    response = response => {
                        let _ = dropped.send(response);
                    }
                }
                // The client's connection closes here, its response never written.
                drop(client);
            });
        }
    });
    (addr, receiver)
}

/// A proxy in front of `upstream` that passes each request on and then closes both
/// connections at once: a client that gives up before the server answers.
async fn hanging_up_proxy(upstream: SocketAddr) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port is free");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            tokio::spawn(async move {
                let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await else {
                    return;
                };
                let mut buffer = vec![0u8; 64 * 1024];
                let mut request = Vec::new();
                // The whole request (its head and its `content-length` bytes), then hang up.
                loop {
                    let Ok(read) = client.read(&mut buffer).await else {
                        return;
                    };
                    if read == 0 {
                        return;
                    }
                    request.extend_from_slice(&buffer[..read]);
                    let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") else {
                        continue;
                    };
                    let head = String::from_utf8_lossy(&request[..end]).to_ascii_lowercase();
                    let length = head
                        .lines()
                        .find_map(|line| line.strip_prefix("content-length:"))
                        .and_then(|length| length.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    if request.len() >= end + 4 + length {
                        break;
                    }
                }
                let _ = server.write_all(&request).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                drop(server);
                drop(client);
            });
        }
    });
    addr
}

/// One HTTP/1.1 response read from `stream`: its body (by `content-length`, or, without
/// one, what comes until the server is quiet for a moment).
async fn read_response(stream: &mut tokio::net::tcp::OwnedReadHalf) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut buffer = [0u8; 16 * 1024];
    loop {
        let read = match tokio::time::timeout(Duration::from_millis(500), stream.read(&mut buffer))
            .await
        {
            Ok(Ok(read)) if read > 0 => read,
            _ => break,
        };
        bytes.extend_from_slice(&buffer[..read]);
        let Some(end) = bytes.windows(4).position(|window| window == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
        let length = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .and_then(|length| length.trim().parse::<usize>().ok());
        if let Some(length) = length
            && bytes.len() >= end + 4 + length
        {
            return bytes[end + 4..end + 4 + length].to_vec();
        }
    }
    match bytes.windows(4).position(|window| window == b"\r\n\r\n") {
        Some(end) => bytes[end + 4..].to_vec(),
        None => bytes,
    }
}

/// The first round's token of `order`'s call on `addr`.
async fn first_token(order: &Call, addr: SocketAddr) -> String {
    token(&json_of(&body(order, addr).await))
}

/// A call's second round (the refund) sent through a proxy that loses its response, then
/// sent again to `retry_on`: the answer the client gets in the end, the one the proxy
/// dropped, and the request.
async fn lose_then_retry(
    start: &Call,
    first_on: SocketAddr,
    retry_on: SocketAddr,
) -> (Vec<u8>, Vec<u8>, Call) {
    let t1 = first_token(start, first_on).await;
    let (proxy, mut dropped) = dropping_proxy(first_on).await;
    let round = start.resume(t1, yes());
    let lost = round
        .post(proxy)
        .with_client(&saga_examples::harness::http::one_shot_client())
        .try_response()
        .await;
    match lost {
        Err(_) => {}
        Ok(response) => assert!(
            response.bytes().await.is_err(),
            "the proxy lets no response through"
        ),
    }
    let dropped = tokio::time::timeout(Duration::from_secs(10), dropped.recv())
        .await
        .expect("the server answered the lost request")
        .expect("a dropped response");
    (body(&round, retry_on).await, dropped, round)
}

/// The whole story on `one` (and `two`, a replica sharing its store, where the retries
/// go): the response lost, sent again, the same bytes; the refund issued once; other
/// answers refused; the call goes on from the retry's token and ends, once.
async fn a_lost_response_is_answered_again(one: &Running, two: &Running, order: &str) {
    let start = call(order);
    let (retried, dropped, round) = lose_then_retry(&start, one.addr, two.addr).await;
    assert_eq!(
        String::from_utf8_lossy(&retried),
        String::from_utf8_lossy(&dropped),
        "the retry gets the bytes the lost response had"
    );
    assert_eq!(refunds_of(order), 1, "the refund is issued once");
    let retried = json_of(&retried);
    assert!(
        retried["result"]["inputRequests"]["elicit-2"].is_object(),
        "{retried:#}"
    );

    // Sent again once more, on either replica, and with another JSON-RPC id: the same.
    let again = json_of(&body(&round.clone().id(2), one.addr).await);
    assert_eq!(again["id"], 2);
    assert_eq!(again["result"], retried["result"]);
    assert_eq!(refunds_of(order), 1, "still once");
    let t2 = token(&retried);

    // The call goes on from the retry's token.
    let done = json_of(&body(&start.resume(t2.clone(), note("sorry")), two.addr).await);
    assert_eq!(
        done["result"]["content"][0]["text"],
        format!("refund 1 of {order}: sorry"),
        "{done:#}"
    );
    // Its outcome recorded too: the end, sent again, is the same end.
    let end_again = json_of(&body(&start.resume(t2.clone(), note("sorry")), one.addr).await);
    assert_eq!(end_again["result"], done["result"]);
    // With other answers, the same token is refused.
    refused(&json_of(
        &body(&start.resume(t2, note("other")), one.addr).await,
    ));
    assert_eq!(refunds_of(order), 1);
}

/// The same token with other answers than its first request's: refused, and the round
/// does not run again.
async fn other_answers_are_refused(addr: SocketAddr, order: &str) {
    let start = call(order);
    let t1 = first_token(&start, addr).await;
    let first = json_of(&body(&start.resume(t1.clone(), yes()), addr).await);
    assert!(first["result"]["requestState"].is_string(), "{first:#}");
    refused(&json_of(&body(&start.resume(t1.clone(), no()), addr).await));
    // Answers in another order of keys are the same answers.
    let reordered = json!({"elicit-1": {"content": {"value": true}, "action": "accept"}});
    let same = json_of(&body(&start.resume(t1, reordered), addr).await);
    assert_eq!(same["result"], first["result"]);
    assert_eq!(refunds_of(order), 1);
}

/// Eight copies of one request sent at once, half to each replica: one runs the round,
/// each gets its answer.
async fn duplicates_at_once_run_once(one: SocketAddr, two: SocketAddr, order: &str) {
    let start = slow_call(order, 300);
    let t1 = first_token(&start, one).await;
    let round = start.resume(t1, yes());
    let sends = (0..8).map(|n| {
        let round = round.clone();
        async move { body(&round, if n % 2 == 0 { one } else { two }).await }
    });
    let bodies = futures::future::join_all(sends).await;
    for body in &bodies {
        assert_eq!(
            String::from_utf8_lossy(body),
            String::from_utf8_lossy(&bodies[0]),
            "every copy gets the one answer"
        );
    }
    assert!(json_of(&bodies[0])["result"]["requestState"].is_string());
    assert_eq!(refunds_of(order), 1, "the round ran once");
}

/// A client that hangs up before the answer (its timeout), then sends the request again:
/// the round it started ran to its end, once, and the retry gets its answer.
async fn a_client_that_hung_up_gets_the_answer(addr: SocketAddr, order: &str) {
    let start = slow_call(order, 500);
    let t1 = first_token(&start, addr).await;
    let round = start.resume(t1, yes());
    let proxy = hanging_up_proxy(addr).await;
    let hung_up = round
        .post(proxy)
        .with_client(&saga_examples::harness::http::one_shot_client())
        .try_response()
        .await;
    if let Ok(response) = hung_up {
        assert!(response.bytes().await.is_err(), "the proxy hangs up");
    }
    let retried = json_of(&body(&round, addr).await);
    assert!(
        retried["result"]["inputRequests"]["elicit-2"].is_object(),
        "the retry gets the round's answer: {retried:#}"
    );
    assert_eq!(refunds_of(order), 1, "the round ran once");
}

async fn every_case(one: &Running, two: &Running, store: &str) {
    a_lost_response_is_answered_again(one, one, &format!("{store}-one")).await;
    a_lost_response_is_answered_again(one, two, &format!("{store}-replicas")).await;
    other_answers_are_refused(two.addr, &format!("{store}-other")).await;
    duplicates_at_once_run_once(one.addr, two.addr, &format!("{store}-at-once")).await;
}

#[tokio::test]
async fn in_memory() {
    let one = serve_local(server(MemoryStore::new(1_000))).await;
    // One process: the "replica" is the same server.
    a_lost_response_is_answered_again(&one, &one, "memory").await;
    other_answers_are_refused(one.addr, "memory-other").await;
    duplicates_at_once_run_once(one.addr, one.addr, "memory-at-once").await;
    a_client_that_hung_up_gets_the_answer(one.addr, "memory-hung-up").await;
}

#[tokio::test]
async fn in_a_sqlite_file_shared_by_two_replicas() {
    let path = std::env::temp_dir().join(format!(
        "saga-retries-{}-{}.db",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.subsec_nanos())
    ));
    let one = serve_local(server(SqliteStore::open(&path).expect("opened"))).await;
    let two = serve_local(server(SqliteStore::open(&path).expect("opened"))).await;
    every_case(&one, &two, "sqlite").await;
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

#[tokio::test]
async fn in_redis_shared_by_two_replicas() {
    let redis = start_redis().await;
    let one = serve_local(server(
        RedisStore::connect(&redis.url).await.expect("connected"),
    ))
    .await;
    let two = serve_local(server(
        RedisStore::connect(&redis.url).await.expect("connected"),
    ))
    .await;
    every_case(&one, &two, "redis").await;
}

#[tokio::test]
async fn in_postgres_shared_by_two_replicas() {
    let postgres = start_postgres().await;
    let store = || async {
        PostgresStore::connect(&postgres.url)
            .await
            .expect("connected")
    };
    let one = serve_local(server(store().await)).await;
    let two = serve_local(server(store().await)).await;
    every_case(&one, &two, "postgres").await;
}

/// Counted runs of `ask_then_work`'s work, by order.
static WORKED: Mutex<Option<HashMap<String, usize>>> = Mutex::new(None);

/// `ask_then_work`'s second round for `order`, from `token`, sent by a client of the
/// tasks extension (its first checkpoint then begins a task).
async fn resumed_as_task(
    tasks: &saga_examples::harness::tasks::TaskClient,
    addr: SocketAddr,
    order: &str,
    token: &str,
) -> Value {
    tasks
        .request(
            addr,
            "tools/call",
            json!({"name": "ask_then_work", "arguments": {"order": order},
                   "requestState": token, "inputResponses": yes()}),
        )
        .await
}

/// How many times `ask_then_work` worked on `order`.
fn worked(order: &str) -> Option<usize> {
    WORKED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .as_ref()
        .and_then(|worked| worked.get(order).copied())
}

/// Asks, then works in a task (its first checkpoint begins it).
#[saga_tool(task)]
async fn ask_then_work(order: String) -> Result<String, SagaError> {
    let go: bool = elicit(format!("Work on {order}?")).await?;
    checkpoint().await;
    let mut worked = WORKED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    *worked
        .get_or_insert_with(HashMap::new)
        .entry(order.clone())
        .or_default() += 1;
    Ok(format!("{order}: {go}"))
}

/// A server of `ask_then_work` with recorded outcomes and tasks.
fn ask_then_work_server() -> SagaServer {
    SagaServer::builder()
        .keys(KeyRing::from_keys([KEY]).expect("a key"))
        .single_use(MemoryStore::new(1_000))
        .tool(ask_then_work)
        .tasks(TaskStore::memory())
        .build()
        .expect("the server builds")
}

/// Finding 1 of the retries' review: a request whose round began a task, sent again
/// without the tasks extension, was answered from its record, which held the state the
/// task's worker goes on from; the client could then run the task's rounds beside the
/// worker. Its token is spent instead, and the retry refused.
#[tokio::test]
async fn a_tasks_creation_sent_again_is_refused_not_forked() {
    let running = serve_local(ask_then_work_server()).await;
    let start = Call::new("ask_then_work", json!({"order": "fork"}));
    let t1 = first_token(&start, running.addr).await;
    let tasks = saga_examples::harness::tasks::TaskClient::new();
    let created = resumed_as_task(&tasks, running.addr, "fork", &t1).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned();
    // The same request, without the extension: refused, not the worker's state.
    refused(&json_of(
        &body(&start.resume(t1, yes()), running.addr).await,
    ));
    let done = tasks
        .settled(running.addr, &id, Duration::from_secs(30))
        .await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(worked("fork"), Some(1), "the task's work ran once");
}

/// The other way round: a round answered without the tasks extension, its answer
/// recorded, then sent again with the extension. A task begun from that recorded answer
/// would run the rounds the first answer already ran; the retry is refused instead, and
/// the work runs once.
#[tokio::test]
async fn a_recorded_answer_sent_again_as_a_tasks_creation_is_refused() {
    let running = serve_local(ask_then_work_server()).await;
    let start = Call::new("ask_then_work", json!({"order": "recorded"}));
    let t1 = first_token(&start, running.addr).await;
    let plain = json_of(&body(&start.resume(t1.clone(), yes()), running.addr).await);
    assert!(plain.get("error").is_none(), "{plain}");
    let tasks = saga_examples::harness::tasks::TaskClient::new();
    let again = resumed_as_task(&tasks, running.addr, "recorded", &t1).await;
    refused(&again);
    assert_eq!(
        worked("recorded"),
        Some(1),
        "the work ran once, for the first sending"
    );
}

#[tokio::test]
async fn a_store_that_keeps_no_outcome_refuses_the_retry() {
    // A memory store with no room for outcomes: single use as before outcomes existed.
    let one = serve_local(server(MemoryStore::new(1_000).with_outcome_bytes(0))).await;
    let start = call("unkept");
    let t1 = first_token(&start, one.addr).await;
    let first = json_of(&body(&start.resume(t1.clone(), yes()), one.addr).await);
    assert!(first["result"]["requestState"].is_string(), "{first:#}");
    refused(&json_of(&body(&start.resume(t1, yes()), one.addr).await));
    assert_eq!(refunds_of("unkept"), 1);
}
