//! Faults: server processes killed with SIGKILL between and during rounds.
//!
//! The server keeps nothing between rounds, so a saga started on a process that is then
//! killed finishes on a fresh process with the same keys, and with three replicas any
//! round may go to any of them: when one dies, a request lost with it is sent again, with
//! the same token, to another.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use saga_examples::harness::http::{Call, DEPLOYED, StatusCode, accept_target, client, verdict};
use saga_examples::harness::process::ServerProcess;
use serde_json::Value;

const KEY_HEX: &str = "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3";

// ---------------------------------------------------------------------------------------
// The deploy saga over raw HTTP
// ---------------------------------------------------------------------------------------

/// Round `round` (0, 1, 2) of the deploy saga, resuming `token`.
fn round_call(round: usize, token: Option<&str>) -> Call {
    let mut call = Call::deploy().id(round + 1);
    if let Some(token) = token {
        call = call.state(token);
    }
    match round {
        0 => call,
        1 => call.answers(accept_target("production")),
        _ => call.answers(verdict("Yes, all systems are green.")),
    }
}

/// Sends `call` to `addr`; `Err` only for a transport-level failure (connection refused or
/// reset, or the response cut off).
async fn post(
    client: &reqwest::Client,
    addr: SocketAddr,
    call: &Call,
) -> Result<(StatusCode, Value), reqwest::Error> {
    call.post(addr).with_client(client).try_send().await
}

/// What a round answered: the next token, or the final text.
#[derive(Debug)]
enum Answer {
    Next(String),
    Done(String),
}

/// Checks round `round`'s answer: rounds 0 and 1 ask for `elicit-1` and `sample-2`, round
/// 2 completes.
fn answer(round: usize, status: StatusCode, body: &Value) -> Result<Answer, String> {
    let result = &body["result"];
    if status != StatusCode::OK || body.get("error").is_some() {
        return Err(format!("round {round}: HTTP {status}: {body}"));
    }
    let expected = ["elicit-1", "sample-2"];
    match (round, result["resultType"].as_str()) {
        (0 | 1, Some("input_required")) => {
            let keys: Vec<&String> = result["inputRequests"]
                .as_object()
                .map(|requests| requests.keys().collect())
                .unwrap_or_default();
            if keys != [expected[round]] {
                return Err(format!("round {round}: asked {keys:?}: {body}"));
            }
            result["requestState"]
                .as_str()
                .map(|token| Answer::Next(token.to_owned()))
                .ok_or_else(|| format!("round {round}: no requestState: {body}"))
        }
        (2, Some("complete")) => result["content"][0]["text"]
            .as_str()
            .map(|text| Answer::Done(text.to_owned()))
            .ok_or_else(|| format!("round {round}: no text: {body}")),
        _ => Err(format!("round {round}: unexpected result: {body}")),
    }
}

// ---------------------------------------------------------------------------------------
// kill -9 between rounds
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn a_saga_survives_kill_9_between_rounds() {
    let client = client();
    let mut first = ServerProcess::deploy(KEY_HEX);
    let (status, body) = post(&client, first.addr, &round_call(0, None))
        .await
        .expect("the first process answers");
    let Answer::Next(token) = answer(0, status, &body).unwrap() else {
        unreachable!()
    };
    let first_addr = first.addr;
    first.kill_9();
    assert!(
        post(&client, first_addr, &round_call(1, Some(&token)))
            .await
            .is_err(),
        "the killed process cannot answer"
    );

    let mut second = ServerProcess::deploy(KEY_HEX);
    assert_ne!(second.addr, first_addr);
    let (status, body) = post(&client, second.addr, &round_call(1, Some(&token)))
        .await
        .expect("the fresh process answers");
    let Answer::Next(token) = answer(1, status, &body).unwrap() else {
        unreachable!()
    };
    // And once more, for the last round.
    second.kill_9();
    let mut third = ServerProcess::deploy(KEY_HEX);
    let (status, body) = post(&client, third.addr, &round_call(2, Some(&token)))
        .await
        .expect("the fresh process answers");
    let Answer::Done(text) = answer(2, status, &body).unwrap() else {
        unreachable!()
    };
    assert_eq!(text, DEPLOYED);
    third.assert_alive();
}

// ---------------------------------------------------------------------------------------
// Three replicas, one killed part-way
// ---------------------------------------------------------------------------------------

const SAGAS: usize = 1_000;
const IN_FLIGHT: usize = 32;
const KILL_AFTER: usize = 300;
const VICTIM: usize = 1;
const REPLICAS: usize = 3;
const SEED: u64 = 0x5eed_2026_0728_0001;

/// xorshift64*: a small deterministic generator (no dependency).
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Everything the saga workers share.
struct Cluster {
    replicas: Vec<Mutex<ServerProcess>>,
    addrs: Vec<SocketAddr>,
    alive: Vec<AtomicBool>,
    next_saga: AtomicUsize,
    completed: AtomicUsize,
    /// Final results received, per saga.
    finals: Vec<AtomicUsize>,
    /// Transport-level failures (each retried on another replica), per replica.
    failures: Vec<AtomicUsize>,
    /// Rounds answered, per replica.
    served: Vec<AtomicUsize>,
    /// When the victim was killed: sagas completed so far.
    killed_at: AtomicUsize,
}

impl Cluster {
    /// A live replica other than `not`, chosen with `rng`.
    fn pick(&self, rng: &mut XorShift, not: Option<usize>) -> usize {
        let live: Vec<usize> = (0..REPLICAS)
            .filter(|&i| self.alive[i].load(Ordering::SeqCst) && Some(i) != not)
            .collect();
        assert!(!live.is_empty(), "no live replica left");
        live[rng.below(live.len())]
    }

    /// Kills the victim (SIGKILL) while other rounds are in flight, then stops routing
    /// to it: requests that reach it in between fail and are retried elsewhere.
    fn kill_victim(&self) {
        self.killed_at
            .store(self.completed.load(Ordering::SeqCst), Ordering::SeqCst);
        self.replicas[VICTIM]
            .lock()
            .expect("the replica lock")
            .kill_9();
        self.alive[VICTIM].store(false, Ordering::SeqCst);
    }

    /// Runs one saga, each round on a random live replica; returns its final text.
    async fn saga(&self, client: &reqwest::Client, id: usize) -> Result<String, String> {
        let mut rng = XorShift::new(SEED ^ (id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut token: Option<String> = None;
        for round in 0..3 {
            let call = round_call(round, token.as_deref());
            let mut replica = self.pick(&mut rng, None);
            let mut attempts = 0;
            let (status, response) = loop {
                attempts += 1;
                match post(client, self.addrs[replica], &call).await {
                    Ok(answered) => break answered,
                    Err(_) if attempts < 10 => {
                        // The same body, the same token, on another live replica.
                        self.failures[replica].fetch_add(1, Ordering::SeqCst);
                        replica = self.pick(&mut rng, Some(replica));
                    }
                    Err(error) => {
                        return Err(format!("saga {id} round {round}: gave up: {error}"));
                    }
                }
            };
            self.served[replica].fetch_add(1, Ordering::SeqCst);
            match answer(round, status, &response).map_err(|e| format!("saga {id}: {e}"))? {
                Answer::Next(next) => token = Some(next),
                Answer::Done(text) => {
                    self.finals[id].fetch_add(1, Ordering::SeqCst);
                    return Ok(text);
                }
            }
        }
        Err(format!("saga {id}: no final result after three rounds"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_sagas_over_three_replicas_survive_killing_one() {
    let replicas: Vec<ServerProcess> = (0..REPLICAS)
        .map(|_| ServerProcess::deploy(KEY_HEX))
        .collect();
    let cluster = Arc::new(Cluster {
        addrs: replicas.iter().map(|replica| replica.addr).collect(),
        replicas: replicas.into_iter().map(Mutex::new).collect(),
        alive: (0..REPLICAS).map(|_| AtomicBool::new(true)).collect(),
        next_saga: AtomicUsize::new(0),
        completed: AtomicUsize::new(0),
        finals: (0..SAGAS).map(|_| AtomicUsize::new(0)).collect(),
        failures: (0..REPLICAS).map(|_| AtomicUsize::new(0)).collect(),
        served: (0..REPLICAS).map(|_| AtomicUsize::new(0)).collect(),
        killed_at: AtomicUsize::new(0),
    });
    let client = client();

    let mut workers = Vec::new();
    for _ in 0..IN_FLIGHT {
        let (cluster, client) = (cluster.clone(), client.clone());
        workers.push(tokio::spawn(async move {
            let mut errors = Vec::new();
            loop {
                let id = cluster.next_saga.fetch_add(1, Ordering::SeqCst);
                if id >= SAGAS {
                    break errors;
                }
                match cluster.saga(&client, id).await {
                    Ok(text) if text == DEPLOYED => {}
                    Ok(text) => errors.push(format!("saga {id}: final text {text:?}")),
                    Err(error) => errors.push(error),
                }
                // The worker completing the 300th saga kills a replica; the other 31 are
                // mid-saga at that moment.
                if cluster.completed.fetch_add(1, Ordering::SeqCst) + 1 == KILL_AFTER {
                    cluster.kill_victim();
                }
            }
        }));
    }
    let mut errors = Vec::new();
    for worker in workers {
        errors.extend(worker.await.expect("a worker finishes"));
    }

    let count = |counters: &[AtomicUsize]| -> Vec<usize> {
        counters.iter().map(|c| c.load(Ordering::SeqCst)).collect()
    };
    let failures = count(&cluster.failures);
    let retries: usize = failures.iter().sum();
    eprintln!(
        "{SAGAS} sagas, {IN_FLIGHT} in flight, over {REPLICAS} replicas; replica {VICTIM} killed \
         (SIGKILL) after {} sagas completed; rounds served per replica {:?}; transport-level \
         retries {retries} (per replica they first went to: {failures:?})",
        cluster.killed_at.load(Ordering::SeqCst),
        count(&cluster.served),
    );
    assert!(
        errors.is_empty(),
        "{} sagas failed: {:#?}",
        errors.len(),
        &errors[..errors.len().min(5)]
    );
    assert_eq!(cluster.completed.load(Ordering::SeqCst), SAGAS);
    let finals = count(&cluster.finals);
    let not_once: Vec<(usize, usize)> = finals
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, n)| n != 1)
        .collect();
    assert!(
        not_once.is_empty(),
        "sagas without exactly one final result: {not_once:?}"
    );
    assert!(!cluster.alive[VICTIM].load(Ordering::SeqCst));
    for (i, failed) in failures.iter().enumerate() {
        if i != VICTIM {
            assert_eq!(
                *failed, 0,
                "replica {i} was never killed but failed requests"
            );
        }
    }
    // The survivors are still up, and served rounds after the kill.
    for (i, replica) in cluster.replicas.iter().enumerate() {
        if i != VICTIM {
            replica.lock().expect("the replica lock").assert_alive();
        }
    }
    assert_eq!(
        count(&cluster.served).iter().sum::<usize>(),
        3 * SAGAS,
        "every round answered exactly once"
    );
}

/// A server that cannot serve says why: `serve_http` on an address another listener
/// holds stops at once with `ServeError::Listen`, the I/O error kept as its source, and
/// found again under the `anyhow::Error` a `main` returns with `?`.
#[tokio::test]
async fn serving_on_a_taken_address_is_an_io_error() {
    use saga_runtime::prelude::*;
    use saga_runtime::serve::ServeError;
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let addr = taken.local_addr().expect("its address");
    let server = saga_examples::deploy::server(KeyRing::ephemeral()).expect("the server builds");
    let error = server
        .serve_http(addr)
        .await
        .expect_err("the address is taken");
    let ServeError::Listen(io) = &error else {
        panic!("not a listen error: {error:?}");
    };
    assert_eq!(io.kind(), std::io::ErrorKind::AddrInUse, "{error:?}");
    let source = std::error::Error::source(&error).expect("the cause is kept");
    assert_eq!(source.to_string(), io.to_string());
    let error = anyhow::Error::from(error);
    let io = error
        .chain()
        .find_map(|cause| cause.downcast_ref::<std::io::Error>())
        .expect("the I/O error under anyhow's");
    assert_eq!(io.kind(), std::io::ErrorKind::AddrInUse, "{error:?}");
}
