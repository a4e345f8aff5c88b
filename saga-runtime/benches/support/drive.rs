//! The load generator of the `e2e` and `http_load` benches: virtual users running the
//! three-round deploy saga back to back over keep-alive HTTP/1.1, and the helpers that pin
//! threads and read CPU time from `/proc`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub const KEY: [u8; 32] = [7u8; 32];
pub const TTL: Duration = Duration::from_secs(600);
pub const TOOL: &str = "complex_tool";
pub const PROTOCOL_VERSION: &str = "2026-07-28";
pub const DONE_TEXT: &str =
    "Deployment to production initiated successfully based on confirmation.";

// ---------------------------------------------------------------------------------------
// The load generator.
// ---------------------------------------------------------------------------------------

pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
    })
}

pub fn round_body(id: u64, token: Option<&str>, answers: Option<Value>) -> Vec<u8> {
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

pub fn target_answer() -> Value {
    json!({"elicit-1": {"action": "accept", "content": {"target": "production"}}})
}

pub fn verdict_answer() -> Value {
    json!({"sample-2": {
        "role": "assistant",
        "content": {"type": "text", "text": "Yes, it is safe."},
        "model": "test-model",
        "stopReason": "endTurn"
    }})
}

pub async fn post(client: &reqwest::Client, url: &str, body: Vec<u8>) -> Value {
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

pub fn result_of(body: &Value) -> &Value {
    assert!(body.get("error").is_none(), "error: {body}");
    &body["result"]
}

/// One complete saga: three rounds. Returns the three results (for the start-up check).
pub async fn one_saga(client: &reqwest::Client, url: &str, id: &mut u64) -> [Value; 3] {
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

pub fn new_client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(4)
        .build()
        .unwrap()
}

pub struct Trial {
    pub sagas_per_s: f64,
    pub server_cpu_us_per_saga: f64,
    /// The part of it spent in the kernel (stime).
    pub server_system_us_per_saga: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

/// How the virtual users speak HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// reqwest, each result parsed as JSON and checked.
    Reqwest,
    /// [`super::raw::RawUser`]: prepared bytes, one connection, the results scanned.
    Raw,
}

/// Runs `vus` users against `url` for a 1 s warm-up and `seconds` measured; `server_cpu`
/// reads the server's user and system time in clock ticks.
pub async fn run_load(
    client: Client,
    url: String,
    vus: usize,
    seconds: f64,
    server_cpu: impl Fn() -> (u64, u64),
) -> Trial {
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
            let reqwest = new_client();
            let mut raw = match client {
                Client::Raw => Some(
                    super::raw::RawUser::connect(&url)
                        .await
                        .expect("connect to the server"),
                ),
                Client::Reqwest => None,
            };
            let mut id = 0u64;
            let mut mine = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let start = Instant::now();
                match &mut raw {
                    Some(user) => user.saga().await.expect("a complete saga"),
                    None => drop(one_saga(&reqwest, &url, &mut id).await),
                }
                if measuring.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                    done.fetch_add(1, Ordering::Relaxed);
                    mine.push(start.elapsed().as_secs_f64() * 1e3);
                }
            }
            latencies.lock().unwrap().extend(mine);
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let cpu_before = server_cpu();
    measuring.store(true, Ordering::Relaxed);
    let start = Instant::now();
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let elapsed = start.elapsed().as_secs_f64();
    let cpu_after = server_cpu();
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

pub fn pin_current_thread(cpus: &[usize]) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the calls only read it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

pub fn current_tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

pub fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) as f64 }
}

/// utime and stime of the given threads of this process, in clock ticks.
pub fn cpu_ticks(tids: &[i32]) -> (u64, u64) {
    tids.iter()
        .map(|tid| stat_ticks(&format!("/proc/self/task/{tid}/stat")))
        .fold((0, 0), |(user, system), (u, s)| (user + u, system + s))
}

/// utime and stime of every thread of process `pid`, in clock ticks.
pub fn process_cpu_ticks(pid: u32) -> (u64, u64) {
    stat_ticks(&format!("/proc/{pid}/stat"))
}

/// utime and stime (fields 14 and 15) of a `stat` file of `/proc`.
fn stat_ticks(path: &str) -> (u64, u64) {
    let stat = std::fs::read_to_string(path).unwrap_or_default();
    // Fields after the `(comm)`, which may hold spaces: state is field 3.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    (field(14).unwrap_or(0), field(15).unwrap_or(0))
}

/// A result without its token (everything else must be identical).
pub fn requests_of(result: &Value) -> Value {
    let mut result = result.clone();
    result.as_object_mut().unwrap().remove("requestState");
    result
}

/// The environment variable `name` parsed, or `default`.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// The median of `f` over `trials`.
pub fn median(trials: &[Trial], f: fn(&Trial) -> f64) -> f64 {
    let mut values: Vec<f64> = trials.iter().map(f).collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}
