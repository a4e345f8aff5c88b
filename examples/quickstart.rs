//! The main job, with no set-up: serves the deploy saga, drives it with rmcp's client, and
//! restarts the server between every two rounds to show that nothing lives on the server.
//!
//! ```text
//! cargo run --example quickstart
//! ```
//!
//! The parent process generates a key, starts the deploy server as a child process on a
//! free port, and plays the client. Before each retry it kills the server and starts a new
//! one with the same key: the new process has never seen the saga, and finishes it from
//! the token alone. Each round is printed as it travels on the wire.

use std::process::Stdio;
use std::time::Duration;

use anyhow::Context as _;
use saga_examples::client::ScriptedClient;
use saga_examples::deploy;
use saga_runtime::rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const KEY_VAR: &str = "SAGA_KEYS";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    if std::env::args().nth(1).is_some() {
        // Started with --http/--stdio: this process is the server.
        saga_examples::cli::init_logging();
        return saga_examples::cli::serve(deploy::server(saga_examples::cli::keys()?)?).await;
    }

    let key = fresh_key()?;
    let addr = free_local_addr()?;
    let url = format!("http://{addr}/mcp");
    println!("saga quickstart: the deploy saga, with the server restarted between rounds\n");

    let mut server = Server::start(&addr, &key, 1).await?;
    let script = ScriptedClient::deploy();
    let client = script.clone().connect_http(&url).await?;

    let mut params = CallToolRequestParams::new("complex_tool").with_arguments(
        json!({"initial_arg": "value"})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    for round in 1.. {
        println!(
            "── round {round} ── server process {} (pid {})",
            server.generation,
            server.pid()
        );
        print_json("client → server  tools/call", &params)?;
        let response = client.call_tool_once(params.clone()).await?;
        match response {
            CallToolResponse::Complete(result) => {
                print_json("server → client  result", &result)?;
                let text = result
                    .content
                    .first()
                    .and_then(|c| c.as_text())
                    .map(|t| t.text.clone());
                println!("\nfinal result: {}", text.unwrap_or_default());
                println!(
                    "{round} rounds, {} server processes, nothing stored on any of them",
                    server.generation
                );
                break;
            }
            CallToolResponse::InputRequired(result) => {
                print_json("server → client  result", &result)?;
                let requests = result.input_requests.unwrap_or_default();
                let answers = script.fulfil(&requests);
                print_json("client fulfils inputRequests", &answers)?;
                params.input_responses = Some(answers);
                params.request_state = result.request_state;

                println!(
                    "\n   killing server process {} and starting a new one…\n",
                    server.generation
                );
                let next = server.generation + 1;
                server.kill().await?;
                server = Server::start(&addr, &key, next).await?;
            }
            other => anyhow::bail!("unexpected response {other:?}"),
        }
    }
    client.cancel().await?;
    server.kill().await
}

fn print_json(label: &str, value: &impl serde::Serialize) -> anyhow::Result<()> {
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
