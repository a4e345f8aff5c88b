//! The main job, with no set-up: serves the deploy saga, drives it as an MCP 2026-07-28
//! client, and restarts the server between every two rounds to show that nothing lives on
//! the server.
//!
//! ```text
//! cargo run --example quickstart
//! ```
//!
//! The parent process generates a key, starts the deploy server (this binary, with
//! `--http ADDR`) as a child process on a free port, and plays the client. Before each
//! retry it kills the server and starts a new one with the same key: the new process has
//! never seen the saga, and finishes it from the token alone. Each round is printed as it
//! travels on the wire. `--check-layout FILE` checks the tool's suspension points against
//! a layout file (`tests/deploys/layouts.rs`).

use std::process::Stdio;
use std::time::Duration;

use anyhow::Context as _;
use saga_quickstart::{deploy, fulfil, meta, post};
use saga_runtime::prelude::*;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const KEY_VAR: &str = "SAGA_KEYS";

fn server(keys: KeyRing) -> anyhow::Result<SagaServer> {
    Ok(SagaServer::builder()
        .info("deploy-server", env!("CARGO_PKG_VERSION"))
        .keys(keys)
        .ttl(Duration::from_secs(600))
        .tool(deploy::complex_tool)
        .build()?)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        // A child of the quickstart: this process is the server.
        ["--http", addr] => {
            server(KeyRing::from_env(KEY_VAR)?)?
                .serve_http(addr.to_string())
                .await?;
            return Ok(());
        }
        ["--check-layout", file] => {
            let server = server(KeyRing::ephemeral())?;
            return match saga_runtime::deploy::check_layout(server.tools(), file.as_ref()) {
                Ok(()) => {
                    println!("{file}: every recorded suspension point resumes on this build");
                    Ok(())
                }
                Err(message) => {
                    eprintln!("{message}");
                    std::process::exit(1);
                }
            };
        }
        [] => {}
        _ => anyhow::bail!("usage: quickstart [--http ADDR | --check-layout FILE]"),
    }

    let key = fresh_key()?;
    let addr = free_local_addr()?;
    println!("saga quickstart: the deploy saga, with the server restarted between rounds\n");

    let mut server = Server::start(&addr, &key, 1).await?;
    let mut params = json!({
        "name": "complex_tool",
        "arguments": {"initial_arg": "value"},
        "_meta": meta(),
    });
    for round in 1.. {
        println!(
            "── round {round} ── server process {} (pid {})",
            server.generation,
            server.pid()
        );
        print_json("client → server  tools/call", &without_meta(&params))?;
        let message =
            json!({"jsonrpc": "2.0", "id": round, "method": "tools/call", "params": params});
        let reply = post(&addr, &message).await?;
        let result = reply
            .get("result")
            .with_context(|| format!("the server answered with an error: {reply}"))?;
        print_json("server → client  result", &without_meta(result))?;
        match result["resultType"].as_str() {
            Some("complete") => {
                let text = result["content"][0]["text"].as_str().unwrap_or_default();
                println!("\nfinal result: {text}");
                println!(
                    "{round} rounds, {} server processes, nothing stored on any of them",
                    server.generation
                );
                break;
            }
            Some("input_required") => {
                let requests = result["inputRequests"]
                    .as_object()
                    .cloned()
                    .unwrap_or_default();
                let answers = fulfil(&requests);
                print_json("client fulfils inputRequests", &answers)?;
                params["inputResponses"] = answers;
                params["requestState"] = result["requestState"].clone();

                println!(
                    "\n   killing server process {} and starting a new one…\n",
                    server.generation
                );
                let next = server.generation + 1;
                server.kill().await?;
                server = Server::start(&addr, &key, next).await?;
            }
            _ => anyhow::bail!("unexpected result {result}"),
        }
    }
    server.kill().await
}

/// `value` without its `_meta`, which every message carries the same: the wire as it
/// matters.
fn without_meta(value: &Value) -> Value {
    let mut value = value.clone();
    if let Some(object) = value.as_object_mut() {
        object.remove("_meta");
    }
    value
}

fn print_json(label: &str, value: &Value) -> anyhow::Result<()> {
    println!("{label}\n{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

fn fresh_key() -> anyhow::Result<String> {
    use std::io::Read as _;
    let mut key = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut key)?;
    Ok(key.iter().map(|b| format!("{b:02x}")).collect())
}

fn free_local_addr() -> anyhow::Result<String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.to_string())
}

/// One server process.
struct Server {
    child: Child,
    generation: u32,
}

impl Server {
    async fn start(addr: &str, key: &str, generation: u32) -> anyhow::Result<Self> {
        let mut child = Command::new(std::env::current_exe()?)
            .args(["--http", addr])
            .env(KEY_VAR, key)
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let stdout = child.stdout.take().context("server stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let ready = async {
            while let Some(line) = lines.next_line().await? {
                if line.starts_with("listening on ") {
                    return anyhow::Ok(());
                }
            }
            anyhow::bail!("the server exited before listening")
        };
        tokio::time::timeout(Duration::from_secs(30), ready)
            .await
            .context("server start timed out")??;
        Ok(Self { child, generation })
    }

    fn pid(&self) -> u32 {
        self.child.id().unwrap_or_default()
    }

    async fn kill(mut self) -> anyhow::Result<()> {
        self.child.kill().await?;
        Ok(())
    }
}
