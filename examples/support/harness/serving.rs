//! Serving a `SagaServer` on a loopback port for the duration of a test.

use std::net::SocketAddr;

use saga_runtime::prelude::*;
use tokio::sync::oneshot;

/// A server running on an ephemeral loopback port; it stops when this is dropped.
#[derive(Debug)]
pub struct Running {
    /// Where it listens.
    pub addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

impl Running {
    /// The MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

/// Serves `server` on `127.0.0.1:0` in a background task.
pub async fn serve_local(server: SagaServer) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port is free");
    let addr = listener
        .local_addr()
        .expect("a bound listener has an address");
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(server.serve_listener(listener, async {
        let _ = stopped.await;
    }));
    Running { addr, _stop: stop }
}

/// The protocol version raw-HTTP tests speak.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// What MCP 2026-07-28 requires beside a JSON-RPC request, for tests that build messages
/// by hand (the older proposals' formats ride on the same transport): the
/// `_meta` declaring the protocol version and every client capability is added to
/// `message.params` when absent, and the returned headers are the transport's
/// (`MCP-Protocol-Version`, `Mcp-Method` and, for calls, `Mcp-Name`).
pub fn as_2026_request(message: &mut serde_json::Value) -> Vec<(&'static str, String)> {
    let method = message["method"].as_str().unwrap_or_default().to_owned();
    let mut headers = vec![
        ("MCP-Protocol-Version", PROTOCOL_VERSION.to_owned()),
        ("Mcp-Method", method.clone()),
    ];
    if let Some(name) = message["params"]["name"].as_str() {
        headers.push(("Mcp-Name", name.to_owned()));
    }
    if let Some(params) = message.get_mut("params").and_then(|p| p.as_object_mut()) {
        params.entry("_meta").or_insert_with(|| {
            serde_json::json!({
                "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
                "io.modelcontextprotocol/clientCapabilities":
                    {"elicitation": {}, "sampling": {}, "roots": {}},
            })
        });
    }
    headers
}
