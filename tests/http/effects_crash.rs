//! Effects once, whatever fails (issue 94), as a new user meets it: the deploy example's
//! `release`, whose rollout is an `effect` handed to a deploy service by its key, with
//! single use (recorded outcomes) on memory, a SQLite file, a real `redis-server` and a
//! real `postgres`.
//!
//! - The server is killed with `-9` while the deploy service works on the effect: the
//!   retry of the same request, on a new process, completes the call, and the service sees
//!   the effect at most twice, always under the same key, so it starts one rollout.
//!   (Before: the retry was told "still running" for the whole lease, then to start the
//!   call again, which made a new key: two rollouts.)
//! - The server is stopped with SIGTERM during the same round: the round finishes, its
//!   answer reaches the client and is recorded, and its retry on another replica gets it.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use saga_examples::harness::http::{Call, accept_target, client};
use saga_examples::harness::process::{ServerProcess, Spawn};
use saga_examples::harness::redis::start_redis;
use serde_json::{Value, json};

const KEY_HEX: &str = "3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c";

/// A deploy service that honours `Idempotency-Key`: the first request of a key starts a
/// rollout (after `delay`), a later one of the same key gets that rollout's id.
#[derive(Clone)]
struct DeployService {
    addr: SocketAddr,
    /// Every request's key, in order.
    keys: Arc<Mutex<Vec<String>>>,
    /// The rollout each key started.
    rollouts: Arc<Mutex<HashMap<String, String>>>,
}

impl DeployService {
    async fn start(delay: Duration) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let service = Self {
            addr: listener.local_addr().expect("an address"),
            keys: Arc::default(),
            rollouts: Arc::default(),
        };
        let state = service.clone();
        let app = axum::Router::new().route(
            "/rollouts",
            axum::routing::post(move |headers: axum::http::HeaderMap| {
                let state = state.clone();
                async move {
                    let key = headers
                        .get("idempotency-key")
                        .and_then(|key| key.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    state.keys.lock().expect("lock").push(key.clone());
                    tokio::time::sleep(delay).await;
                    let mut rollouts = state.rollouts.lock().expect("lock");
                    let next = rollouts.len() + 1;
                    rollouts
                        .entry(key)
                        .or_insert_with(|| format!("rollout-{next}"))
                        .clone()
                }
            }),
        );
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        service
    }

    fn url(&self) -> String {
        format!("http://{}/rollouts", self.addr)
    }

    fn keys(&self) -> Vec<String> {
        self.keys.lock().expect("lock").clone()
    }

    /// Rollouts started: one per distinct key.
    fn rollouts(&self) -> usize {
        self.rollouts.lock().expect("lock").len()
    }

    async fn wait_for_requests(&self, count: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.keys().len() < count {
            assert!(Instant::now() < deadline, "no request reached the service");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn release_server(store: &str, service: &DeployService) -> ServerProcess {
    Spawn::new("deploy", KEY_HEX)
        .env("SAGA_SINGLE_USE", store)
        .env("SAGA_DEPLOY_SERVICE_URL", &service.url())
        .start()
}

fn release() -> Call {
    Call::new("release", json!({"service": "api"}))
}

fn token_of(body: &Value) -> String {
    body["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("a token: {body:#}"))
        .to_owned()
}

/// The call up to the round whose answer starts the rollout: that round's request.
async fn to_the_effect(addr: SocketAddr) -> Call {
    let http = client();
    let (_, body) = release().send_with(&http, addr).await;
    let round = release().resume(token_of(&body), accept_target("production"));
    let (_, body) = round.send_with(&http, addr).await;
    release().resume(
        token_of(&body),
        json!({"elicit-2": {"action": "accept", "content": {"value": true}}}),
    )
}

/// Sends `round` to `addr` until it is answered with anything but "send it again"
/// (retryable), then follows checkpoints (`input_required` asking nothing) to the end;
/// the final body.
async fn answered(round: &Call, addr: SocketAddr) -> Value {
    let http = client();
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut body = loop {
        let (_, body) = round.send_with(&http, addr).await;
        if body["error"]["data"]["retryable"] == true {
            assert!(
                Instant::now() < deadline,
                "still retryable after 90 s: {body}"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        }
        break body;
    };
    while body["result"]["resultType"] == "input_required"
        && body["result"]["inputRequests"]
            .as_object()
            .is_none_or(serde_json::Map::is_empty)
    {
        let (_, next) = release()
            .resume(token_of(&body), json!({}))
            .send_with(&http, addr)
            .await;
        body = next;
    }
    body
}

fn released_text(body: &Value) -> String {
    let text = body["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a result: {body:#}"))
        .to_owned();
    assert!(text.starts_with("Rollout rollout-1 of api"), "{text}");
    text
}

/// Kills the server with `-9` while the deploy service works on the rollout, starts
/// another on the same store, and sends the same request again until it is answered.
async fn crash_inside_the_effect(store: &str) {
    let service = DeployService::start(Duration::from_secs(4)).await;
    let mut first = release_server(store, &service);
    let round = to_the_effect(first.addr).await;
    let sent = {
        let round = round.clone();
        let addr = first.addr;
        tokio::spawn(async move { round.post(addr).try_reply().await })
    };
    service.wait_for_requests(1).await;
    first.kill_9();
    let _ = sent.await;
    let started = Instant::now();
    let second = release_server(store, &service);
    let body = answered(&round, second.addr).await;
    println!(
        "{store}: answered {:?} after the crash; the service saw {:?}",
        started.elapsed(),
        service.keys()
    );
    released_text(&body);
    let keys = service.keys();
    assert!(
        (1..=2).contains(&keys.len()),
        "{store}: the effect reached the service {} times",
        keys.len()
    );
    assert!(
        keys.iter().all(|key| key == &keys[0]),
        "{store}: under one key: {keys:?}"
    );
    assert_eq!(service.rollouts(), 1, "{store}: one rollout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_inside_an_effect_with_single_use_in_memory_rolls_out_once() {
    crash_inside_the_effect("memory").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_inside_an_effect_with_single_use_in_sqlite_rolls_out_once() {
    let path = std::env::temp_dir().join(format!("saga-effects-crash-{}.db", std::process::id()));
    crash_inside_the_effect(&format!("sqlite:{}", path.display())).await;
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_inside_an_effect_with_single_use_in_redis_rolls_out_once() {
    let redis = start_redis().await;
    crash_inside_the_effect(&redis.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_inside_an_effect_with_single_use_in_postgres_rolls_out_once() {
    let postgres = saga_examples::harness::postgres::start_postgres().await;
    crash_inside_the_effect(&postgres.url).await;
}

/// SIGTERM while the rollout's round runs: the process lets it finish, answers it (the
/// client gets the rollout), records it, and exits; the same request sent to another
/// replica on the same store gets the recorded answer, and the service saw one request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_a_round_finishes_and_records_it() {
    let path = std::env::temp_dir().join(format!("saga-effects-term-{}.db", std::process::id()));
    let store = format!("sqlite:{}", path.display());
    let service = DeployService::start(Duration::from_secs(2)).await;
    let mut first = release_server(&store, &service);
    let round = to_the_effect(first.addr).await;
    let sent = {
        let round = round.clone();
        let addr = first.addr;
        tokio::spawn(async move { round.post(addr).reply().await })
    };
    service.wait_for_requests(1).await;
    first.terminate();
    let reply = sent.await.expect("joined");
    let status = first.wait_exit("SIGTERM", Duration::from_secs(30));
    assert!(status.success(), "exited cleanly: {status:?}");
    let body = reply.body;
    assert!(
        body.get("result").is_some(),
        "answered before the stop: {body:#}"
    );
    let second = release_server(&store, &service);
    // The retry on another replica gets the answer the client got, from the record.
    let (_, replayed) = round.send_with(&client(), second.addr).await;
    assert_eq!(replayed["result"], body["result"], "{replayed:#}");
    released_text(&answered(&round, second.addr).await);
    assert_eq!(service.keys().len(), 1, "{:?}", service.keys());
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

/// Charges counted by key: how often each key reached the payment service.
static CHARGES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Asks, charges (an effect), and keeps a large receipt across the checkpoint that saves
/// the charge: that checkpoint's state is kept in the state store, counted against the
/// caller's share.
#[saga_runtime::saga_tool]
async fn charge(order: String) -> Result<String, saga_runtime::prelude::SagaError> {
    use saga_runtime::prelude::*;
    let go: bool = elicit(format!("Charge order {order}?")).await?;
    if !go {
        return Ok("not charged".into());
    }
    // Bytes that do not deflate: the state is kept in the store.
    let receipt = saga_examples::harness::noise::noise(7, 3_000);
    let charged: String = effect("charge", |key| async move {
        CHARGES.lock().expect("lock").push(key.to_string());
        key.to_string()
    })
    .await;
    Ok(format!(
        "charged {order} ({} bytes of receipt) as {charged}",
        receipt.len()
    ))
}

/// Keeps a large state across a question: what other callers fill the share with.
#[saga_runtime::saga_tool]
async fn hoard(bytes: usize) -> Result<String, saga_runtime::prelude::SagaError> {
    use saga_runtime::prelude::*;
    let kept = saga_examples::harness::noise::noise(9, bytes);
    let _more: bool = elicit("More?").await?;
    Ok(format!("{} bytes", kept.len()))
}

/// Unverified callers at other addresses fill the unverified callers' share of the state
/// store; the victim's round runs its effect, and keeping the state it saved fails: the
/// victim is told to send the request again (retryable), its claim is given back, and once
/// the others' states expire its retry completes the call, the effect run under one key
/// only (before: `-32603` "share spent", then every retry `-32602`, and a restart under a
/// new key).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_share_others_spent_never_costs_the_victim_its_effects_key() {
    use saga_examples::harness::http::client_at;
    use saga_runtime::prelude::*;
    use saga_runtime::tasks::StateSettings;
    let server = SagaServer::builder()
        .keys(KeyRing::from_keys([[0x3c; 32]]).expect("a key"))
        .ttl(Duration::from_secs(4))
        .leeway(Duration::from_secs(1))
        .single_use(saga_runtime::state::MemoryStore::new(10_000))
        .state_store(
            StateSettings::new(TaskStore::memory())
                .inline_max(1_024)
                .unverified_bytes(12_000),
        )
        .tool(charge)
        .tool(hoard)
        .build()
        .expect("the server builds");
    let running = saga_examples::harness::serving::serve_local(server).await;
    let addr = running.addr;
    // Others, at two addresses, fill the unverified share.
    let mut filled = 0;
    for n in 0..8 {
        let address = format!("127.0.0.{}", 3 + n % 2);
        let (_, body) = Call::new("hoard", json!({"bytes": 3_000}))
            .post(addr)
            .with_client(&client_at(&address))
            .send()
            .await;
        if body["result"]["requestState"].is_string() {
            filled += 1;
        }
    }
    assert!(filled >= 2, "the share is filled: {filled}");
    // The victim comes a little later, at its own address: the others' states expire
    // (their tokens live 4 s, and a second) before its own token does.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let victim = client_at("127.0.0.2");
    let start = Call::new("charge", json!({"order": "o-1"}));
    let (_, body) = start.post(addr).with_client(&victim).send().await;
    let round = start.resume(
        token_of(&body),
        json!({"elicit-1": {"action": "accept", "content": {"value": true}}}),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut told_to_retry = 0;
    let started = Instant::now();
    let body = loop {
        let (_, body) = round.post(addr).with_client(&victim).send().await;
        if body["error"]["data"]["retryable"] == true {
            told_to_retry += 1;
            assert!(Instant::now() < deadline, "still refused: {body}");
            tokio::time::sleep(Duration::from_millis(300)).await;
            continue;
        }
        break body;
    };
    // Past the effect's checkpoint.
    let body = if body["result"]["resultType"] == "input_required" {
        let (_, next) = start
            .resume(token_of(&body), json!({}))
            .post(addr)
            .with_client(&victim)
            .send()
            .await;
        next
    } else {
        body
    };
    let text = body["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("completed: {body:#}"))
        .to_owned();
    let charges = CHARGES.lock().expect("lock").clone();
    println!(
        "share: told to retry {told_to_retry} times over {:?}; the effect ran {} times, under {:?}",
        started.elapsed(),
        charges.len(),
        charges.first()
    );
    assert!(told_to_retry >= 1, "the share was spent when the round ran");
    assert!(
        charges.iter().all(|key| key == &charges[0]),
        "one key: {charges:?}"
    );
    assert!(text.ends_with(&charges[0]), "{text}");
}
