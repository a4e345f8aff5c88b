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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CreateMessageRequest,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequest, ElicitRequestParams, ErrorData,
    InputRequest, InputRequests, InputRequiredResult, ProtocolVersion, SamplingMessage,
    ServerCapabilities, ServerConfig,
};
use rmcp::model::{ElicitationSchema, MetaObject, RequestStateCodec, SealOptions};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use saga_runtime::prelude::*;
use saga_runtime::serve::default_http_config;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

// ---------------------------------------------------------------------------------------
// The saga: the deploy example's own file (it uses nothing but saga-runtime).
// ---------------------------------------------------------------------------------------

#[path = "../../examples/support/deploy_tool.rs"]
mod deploy;
use deploy::complex_tool;

const KEY: [u8; 32] = [7u8; 32];
const TTL: Duration = Duration::from_secs(600);
const TOOL: &str = "complex_tool";
const PROTOCOL_VERSION: &str = "2026-07-28";
const DONE_TEXT: &str = "Deployment to production initiated successfully based on confirmation.";

fn saga_server() -> SagaServer {
    SagaServer::builder()
        .info("deploy-server", "0.1.0")
        .keys(KeyRing::from_keys([KEY]).unwrap())
        .ttl(TTL)
        .tool(complex_tool)
        .build()
        .unwrap()
}

// ---------------------------------------------------------------------------------------
// The same exchange, written by hand on rmcp, state sealed with `RequestStateCodec`.
// ---------------------------------------------------------------------------------------

/// What the hand-written server keeps in its `requestState` (sealed as JSON).
#[derive(Serialize, Deserialize)]
#[serde(tag = "round")]
enum Round {
    /// `elicit-1` was asked.
    AskedTarget,
    /// `sample-2` was asked about `target`.
    AskedVerdict { target: String },
}

#[derive(Deserialize)]
struct DeployArguments {
    #[allow(dead_code)]
    initial_arg: String,
    #[allow(dead_code)]
    replicas: Option<u32>,
}

#[derive(Clone)]
struct HandServer {
    codec: Arc<RequestStateCodec>,
    target_schema: Arc<ElicitationSchema>,
    /// `_meta` of every result: MCP 2026-07-28 results SHOULD name the server (saga
    /// sends it too), built once.
    meta: Arc<MetaObject>,
}

impl HandServer {
    fn new() -> Self {
        let schema = serde_json::from_value(json!({
            "type": "object",
            "properties": {"target": {"type": "string"}},
            "required": ["target"]
        }))
        .unwrap();
        Self {
            codec: Arc::new(
                RequestStateCodec::new_with_keyring("k1", [("k1", KEY.to_vec())]).unwrap(),
            ),
            target_schema: Arc::new(schema),
            meta: Arc::new(MetaObject(
                json!({"io.modelcontextprotocol/serverInfo": {"name": "deploy-server", "version": "0.1.0"}})
                    .as_object()
                    .unwrap()
                    .clone(),
            )),
        }
    }

    fn ask_target(&self, context: &[u8]) -> Result<CallToolResponse, ErrorData> {
        let mut requests = InputRequests::new();
        requests.insert(
            "elicit-1".into(),
            InputRequest::Elicitation(ElicitRequest::new(
                ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: "Please provide the deployment target:".into(),
                    requested_schema: (*self.target_schema).clone(),
                },
            )),
        );
        let state = self.seal(&Round::AskedTarget, context)?;
        let mut result = InputRequiredResult::new(Some(requests), Some(state));
        result.meta = Some((*self.meta).clone());
        Ok(result.into())
    }

    fn ask_verdict(&self, target: String, context: &[u8]) -> Result<CallToolResponse, ErrorData> {
        let mut requests = InputRequests::new();
        requests.insert(
            "sample-2".into(),
            InputRequest::CreateMessage(CreateMessageRequest::new(
                CreateMessageRequestParams::new(
                    vec![SamplingMessage::user_text(format!(
                        "Is deploying to '{target}' safe right now?"
                    ))],
                    100,
                ),
            )),
        );
        let state = self.seal(&Round::AskedVerdict { target }, context)?;
        let mut result = InputRequiredResult::new(Some(requests), Some(state));
        result.meta = Some((*self.meta).clone());
        Ok(result.into())
    }

    fn seal(&self, round: &Round, context: &[u8]) -> Result<String, ErrorData> {
        let options = SealOptions::new().associated_data(context).ttl(TTL);
        self.codec
            .seal_json_with(round, &options)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))
    }
}

fn invalid_state() -> ErrorData {
    ErrorData::invalid_params("Invalid or expired requestState", None)
}

impl ServerHandler for HandServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.protocol_version = ProtocolVersion::V_2026_07_28;
        info
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != TOOL {
            return Err(ErrorData::invalid_params("unknown tool", None));
        }
        let arguments = request.arguments.unwrap_or_default();
        // The token is bound to the tool, the method and the arguments (serde_json's map
        // is sorted, so this serialization is canonical).
        let canonical = serde_json::to_vec(&arguments).unwrap();
        let context: [u8; 32] = Sha256::new()
            .chain_update(TOOL)
            .chain_update([0])
            .chain_update("tools/call")
            .chain_update([0])
            .chain_update(&canonical)
            .finalize()
            .into();
        let _: DeployArguments =
            serde_json::from_value(Value::Object(arguments)).map_err(|error| {
                ErrorData::invalid_params(format!("invalid arguments: {error}"), None)
            })?;
        let Some(token) = request.request_state else {
            return self.ask_target(&context);
        };
        let round: Round = self
            .codec
            .open_json_with(&token, &context)
            .map_err(|_| invalid_state())?;
        let responses = request.input_responses.unwrap_or_default();
        match round {
            Round::AskedTarget => {
                let answer = responses.get("elicit-1");
                let target = answer
                    .filter(|answer| answer["action"] == "accept")
                    .and_then(|answer| answer["content"]["target"].as_str());
                match target {
                    Some(target) => self.ask_verdict(target.to_owned(), &context),
                    None => self.ask_target(&context),
                }
            }
            Round::AskedVerdict { target } => {
                let verdict = responses.get("sample-2").and_then(|answer| {
                    serde_json::from_value::<CreateMessageResult>(answer.clone()).ok()
                });
                let Some(verdict) = verdict else {
                    return self.ask_verdict(target, &context);
                };
                let text = verdict
                    .message
                    .content
                    .first()
                    .and_then(|content| content.as_text())
                    .map(|text| text.text.as_str())
                    .unwrap_or_default();
                let outcome = if text.starts_with("Yes") {
                    format!("Deployment to {target} initiated successfully based on confirmation.")
                } else {
                    "Deployment postponed.".into()
                };
                let mut result = CallToolResult::success(vec![ContentBlock::text(outcome)]);
                result.meta = Some((*self.meta).clone());
                Ok(result.into())
            }
        }
    }
}

fn hand_router() -> axum::Router {
    let server = HandServer::new();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        default_http_config(),
    );
    axum::Router::new().nest_service("/mcp", service)
}

// ---------------------------------------------------------------------------------------
// The floor: HTTP, a JSON parse of each body, canned answers.
// ---------------------------------------------------------------------------------------

/// The results saga gave for each round, as JSON text, answered by the floor.
struct Canned {
    rounds: [String; 3],
}

impl Canned {
    /// The response to the request `body`: its round's result, under its `id`.
    fn answer(&self, body: &[u8]) -> Vec<u8> {
        let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let params = &request["params"];
        let round = match (
            params.get("requestState"),
            params["inputResponses"].get("elicit-1"),
        ) {
            (None, _) => 0,
            (Some(_), Some(_)) => 1,
            (Some(_), None) => 2,
        };
        let id = serde_json::to_string(&request["id"]).unwrap_or_default();
        let result = &self.rounds[round];
        let mut response = Vec::with_capacity(40 + id.len() + result.len());
        response.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        response.extend_from_slice(id.as_bytes());
        response.extend_from_slice(br#","result":"#);
        response.extend_from_slice(result.as_bytes());
        response.push(b'}');
        response
    }
}

async fn serve_floor(listener: tokio::net::TcpListener, canned: Arc<Canned>) {
    use http_body_util::{BodyExt as _, Full};
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let canned = canned.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(
                move |request: hyper::Request<hyper::body::Incoming>| {
                    let canned = canned.clone();
                    async move {
                        let body = request.into_body().collect().await?.to_bytes();
                        let response = hyper::Response::builder()
                            .header("content-type", "application/json")
                            .body(Full::new(hyper::body::Bytes::from(canned.answer(&body))))
                            .unwrap_or_default();
                        Ok::<_, hyper::Error>(response)
                    }
                },
            );
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

// ---------------------------------------------------------------------------------------
// The load generator.
// ---------------------------------------------------------------------------------------

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
    })
}

fn round_body(id: u64, token: Option<&str>, answers: Option<Value>) -> Vec<u8> {
    let mut params = json!({
        "name": TOOL,
        "arguments": {"initial_arg": "x", "replicas": 3},
        "_meta": meta(),
    });
    if let Some(token) = token {
        params["requestState"] = json!(token);
    }
    if let Some(answers) = answers {
        params["inputResponses"] = answers;
    }
    serde_json::to_vec(
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
    )
    .unwrap()
}

fn target_answer() -> Value {
    json!({"elicit-1": {"action": "accept", "content": {"target": "production"}}})
}

fn verdict_answer() -> Value {
    json!({"sample-2": {
        "role": "assistant",
        "content": {"type": "text", "text": "Yes, it is safe."},
        "model": "test-model",
        "stopReason": "endTurn"
    }})
}

async fn post(client: &reqwest::Client, url: &str, body: Vec<u8>) -> Value {
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", PROTOCOL_VERSION)
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", TOOL)
        .body(body)
        .send()
        .await
        .expect("the server answers");
    let bytes = response.bytes().await.expect("a body");
    serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&bytes)))
}

fn result_of(body: &Value) -> &Value {
    assert!(body.get("error").is_none(), "error: {body}");
    &body["result"]
}

/// One complete saga: three rounds. Returns the three results (for the start-up check).
async fn one_saga(client: &reqwest::Client, url: &str, id: &mut u64) -> [Value; 3] {
    *id += 1;
    let first = post(client, url, round_body(*id, None, None)).await;
    let first = result_of(&first).clone();
    let token = first["requestState"].as_str().expect("a token").to_owned();
    *id += 1;
    let second = post(
        client,
        url,
        round_body(*id, Some(&token), Some(target_answer())),
    )
    .await;
    let second = result_of(&second).clone();
    let token = second["requestState"].as_str().expect("a token").to_owned();
    *id += 1;
    let third = post(
        client,
        url,
        round_body(*id, Some(&token), Some(verdict_answer())),
    )
    .await;
    let third = result_of(&third).clone();
    assert_eq!(third["content"][0]["text"], DONE_TEXT, "{third}");
    [first, second, third]
}

fn new_client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(4)
        .build()
        .unwrap()
}

struct Trial {
    sagas_per_s: f64,
    server_cpu_us_per_saga: f64,
    /// The part of it spent in the kernel (stime).
    server_system_us_per_saga: f64,
    p50_ms: f64,
    p99_ms: f64,
}

async fn run_load(url: String, vus: usize, seconds: f64, server_tids: &Mutex<Vec<i32>>) -> Trial {
    let server_tids = server_tids.lock().unwrap().clone();
    let stop = Arc::new(AtomicBool::new(false));
    let measuring = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let latencies = Arc::new(Mutex::new(Vec::<f64>::new()));
    let mut tasks = Vec::new();
    for _ in 0..vus {
        let (url, stop, measuring, done, latencies) = (
            url.clone(),
            stop.clone(),
            measuring.clone(),
            done.clone(),
            latencies.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let client = new_client();
            let mut id = 0u64;
            let mut mine = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let start = Instant::now();
                one_saga(&client, &url, &mut id).await;
                if measuring.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                    done.fetch_add(1, Ordering::Relaxed);
                    mine.push(start.elapsed().as_secs_f64() * 1e3);
                }
            }
            latencies.lock().unwrap().extend(mine);
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let cpu_before = cpu_ticks(&server_tids);
    measuring.store(true, Ordering::Relaxed);
    let start = Instant::now();
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let elapsed = start.elapsed().as_secs_f64();
    let cpu_after = cpu_ticks(&server_tids);
    for task in tasks {
        task.await.unwrap();
    }
    let completed = done.load(Ordering::Relaxed) as f64;
    let per_saga = |ticks: u64| ticks as f64 / ticks_per_second() * 1e6 / completed;
    let (user, system) = (cpu_after.0 - cpu_before.0, cpu_after.1 - cpu_before.1);
    let mut latencies = std::mem::take(&mut *latencies.lock().unwrap());
    latencies.sort_by(f64::total_cmp);
    let pick = |q: f64| latencies[((latencies.len() as f64 - 1.0) * q) as usize];
    Trial {
        sagas_per_s: completed / elapsed,
        server_cpu_us_per_saga: per_saga(user + system),
        server_system_us_per_saga: per_saga(system),
        p50_ms: pick(0.5),
        p99_ms: pick(0.99),
    }
}

// ---------------------------------------------------------------------------------------
// Threads: pinning and CPU time.
// ---------------------------------------------------------------------------------------

fn pin_current_thread(cpus: &[usize]) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the calls only read it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn current_tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) as f64 }
}

/// utime and stime of the given threads of this process, in clock ticks.
fn cpu_ticks(tids: &[i32]) -> (u64, u64) {
    tids.iter()
        .map(|tid| {
            let stat =
                std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap_or_default();
            // Fields after the `(comm)`: state is field 3; utime, stime are 14, 15.
            let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
            (field(14).unwrap_or(0), field(15).unwrap_or(0))
        })
        .fold((0, 0), |(user, system), (u, s)| (user + u, system + s))
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

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// A result without its token (everything else must be identical).
fn requests_of(result: &Value) -> Value {
    let mut result = result.clone();
    result.as_object_mut().unwrap().remove("requestState");
    result
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
            saga_trials.push(client_rt.block_on(run_load(saga_url.clone(), vus, seconds, &tids)));
        }
        if only.is_empty() || only == "rmcp" {
            hand_trials.push(client_rt.block_on(run_load(hand_url.clone(), vus, seconds, &tids)));
        }
        if only.is_empty() || only == "floor" {
            floor_trials.push(client_rt.block_on(run_load(floor_url.clone(), vus, seconds, &tids)));
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
    let median = |trials: &[Trial], f: fn(&Trial) -> f64| {
        let mut values: Vec<f64> = trials.iter().map(f).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };

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
