//! Load: 10,000 deploy sagas held in flight at once (each suspended after its first
//! round, its token held by the client), then all finished; the server's resident memory
//! before, during and after, and the error count. The server is the `deploy` example as
//! its own process, so its memory is its own.
//!
//! ```text
//! cargo build --release -p saga-workspace --example deploy && cargo bench -p saga-workspace --bench load
//! ```
//! `SAGAS=1000` for a shorter run.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use serde_json::{Value, json};
use tokio::sync::Semaphore;

const CONCURRENCY: usize = 64;

struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> Server {
    let binary = std::env::current_dir()
        .expect("a working directory")
        .join("target/release/examples/deploy");
    assert!(
        binary.exists(),
        "{} is missing: run `cargo build --release -p saga-workspace --example deploy` first",
        binary.display()
    );
    let mut child = Command::new(binary)
        .args(["--http", "127.0.0.1:0"])
        .env("SAGA_KEYS", "42".repeat(32))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the deploy example starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut server = Server {
        child,
        url: String::new(),
    };
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("readable stdout");
        if let Some(url) = line.strip_prefix("listening on ") {
            server.url = url.to_owned();
            return server;
        }
    }
    panic!("the server exited before listening");
}

/// VmRSS of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap_or(0)
}

async fn call(
    client: &reqwest::Client,
    url: &str,
    state: Option<&str>,
    answers: Option<Value>,
) -> Option<Value> {
    let mut params = json!({
        "name": "complex_tool",
        "arguments": {"initial_arg": "load"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}}
        }
    });
    if let Some(state) = state {
        params["requestState"] = json!(state);
    }
    if let Some(answers) = answers {
        params["inputResponses"] = answers;
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let response = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "complex_tool")
        .json(&body)
        .send()
        .await
        .ok()?;
    let reply: Value = response.json().await.ok()?;
    reply.get("result").cloned()
}

#[tokio::main]
async fn main() {
    let sagas: usize = std::env::var("SAGAS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let server = start();
    let pid = server.child.id();
    let client = reqwest::Client::new();
    let errors = Arc::new(AtomicUsize::new(0));
    let limit = Arc::new(Semaphore::new(CONCURRENCY));
    let before = rss_kib(pid);

    // Phase 1: start every saga; each suspends, waiting for its target.
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(sagas);
    for _ in 0..sagas {
        let (client, url, errors, limit) = (
            client.clone(),
            server.url.clone(),
            errors.clone(),
            limit.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let _permit = limit.acquire_owned().await.expect("open semaphore");
            match call(&client, &url, None, None).await {
                Some(result) if result["resultType"] == "input_required" => {
                    result["requestState"].as_str().map(str::to_owned)
                }
                _ => {
                    errors.fetch_add(1, Ordering::Relaxed);
                    None
                }
            }
        }));
    }
    let mut tokens = Vec::with_capacity(sagas);
    for task in tasks {
        if let Some(token) = task.await.expect("a task") {
            tokens.push(token);
        }
    }
    let suspended = started.elapsed();
    let during = rss_kib(pid);

    let held: usize = tokens.iter().map(String::len).sum();
    let in_flight = tokens.len();

    // Phase 2: finish them all (target, then verdict).
    let finished = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(in_flight);
    for token in tokens {
        let (client, url, errors, limit, finished) = (
            client.clone(),
            server.url.clone(),
            errors.clone(),
            limit.clone(),
            finished.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let _permit = limit.acquire_owned().await.expect("open semaphore");
            let target = json!({"elicit-1": {"action": "accept", "content": {"target": "production"}}});
            let Some(round2) = call(&client, &url, Some(&token), Some(target)).await else {
                errors.fetch_add(1, Ordering::Relaxed);
                return;
            };
            let Some(next) = round2["requestState"].as_str() else {
                errors.fetch_add(1, Ordering::Relaxed);
                return;
            };
            let verdict = json!({"sample-2": {"role": "assistant", "content": {"type": "text", "text": "Yes"}, "model": "m"}});
            match call(&client, &url, Some(next), Some(verdict)).await {
                Some(done) if done["resultType"] == "complete" => {
                    finished.fetch_add(1, Ordering::Relaxed);
                }
                _ => {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for task in tasks {
        task.await.expect("a task");
    }
    let completed = started.elapsed();
    let after = rss_kib(pid);

    println!("| measure | value |");
    println!("|---|---|");
    println!("| sagas started and suspended | {in_flight} in {suspended:.2?} |");
    println!(
        "| sagas finished | {} in {:.2?} |",
        finished.load(Ordering::Relaxed),
        completed
    );
    println!("| errors | {} |", errors.load(Ordering::Relaxed));
    println!("| server RSS before | {:.1} MiB |", before as f64 / 1024.0);
    println!(
        "| server RSS with {sagas} sagas in flight | {:.1} MiB |",
        during as f64 / 1024.0
    );
    println!("| server RSS after | {:.1} MiB |", after as f64 / 1024.0);
    println!(
        "| state held by the client (tokens) | {:.1} MiB |",
        held as f64 / 1024.0 / 1024.0
    );
}
