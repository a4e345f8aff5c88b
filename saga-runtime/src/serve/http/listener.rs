//! Accepting connections with bounds: a connection must send its request headers within
//! the header read timeout (which also ends idle keep-alive connections), and at most
//! `max_connections` are open at once. Without these, connections that send half their
//! headers and stall (slowloris) would hold sockets forever and lock out real clients.

use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::limits::HttpLimits;

/// Serves `router` on `listener` until `shutdown` completes, then lets the connections in
/// flight finish their current request.
pub(crate) async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: &HttpLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let connections = Arc::new(Semaphore::new(limits.max_connections));
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let service = TowerToHyperService::new(router);
    tokio::pin!(shutdown);
    loop {
        // A slot first: at the limit, new connections wait in the kernel's backlog.
        let slot = tokio::select! {
            slot = connections.clone().acquire_owned() => slot,
            () = &mut shutdown => break,
        };
        let Ok(slot) = slot else { break };
        let stream = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let stream = match stream {
            Ok((stream, _peer)) => stream,
            Err(error) => {
                // Out of file descriptors or a connection reset before accept: wait a
                // little instead of spinning, as the slow connections time out.
                tracing::warn!(%error, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let connection = builder.serve_connection(TokioIo::new(stream), service.clone());
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "connection ended with an error");
            }
            drop(slot);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}
