//! A `SagaServer` serving Streamable HTTP on an ephemeral loopback port, in this process,
//! until the returned handle is dropped.

use std::net::SocketAddr;

use saga_runtime::prelude::SagaServer;
use tokio::sync::oneshot;

pub struct Running {
    pub addr: SocketAddr,
    _shutdown: oneshot::Sender<()>,
}

pub async fn serve(server: SagaServer) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind an ephemeral port");
    let addr = listener.local_addr().expect("the listener's address");
    let (shutdown, stopped) = oneshot::channel::<()>();
    tokio::spawn(server.serve_listener(listener, async move {
        let _ = stopped.await;
    }));
    Running {
        addr,
        _shutdown: shutdown,
    }
}
