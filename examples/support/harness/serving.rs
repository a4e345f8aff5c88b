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
    serve_on(listener, server)
}

/// A loopback listener bound now, for a server that must know its own address before it
/// is built (its canonical URI, as authorization names it).
pub async fn bind_local() -> tokio::net::TcpListener {
    tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port is free")
}

/// Serves `server` on `listener` in a background task.
pub fn serve_on(listener: tokio::net::TcpListener, server: SagaServer) -> Running {
    let addr = listener
        .local_addr()
        .expect("a bound listener has an address");
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(server.serve_listener(listener, async {
        let _ = stopped.await;
    }));
    Running { addr, _stop: stop }
}
