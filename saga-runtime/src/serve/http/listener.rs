//! Accepting connections with bounds: a connection must send its request headers within
//! the header read timeout (which also ends idle keep-alive connections), must take what
//! the server writes within the write timeout, and at most `max_connections` are open at
//! once. Without these, connections that send half their headers and stall (slowloris),
//! or that stop reading their responses, would hold sockets, request places and response
//! buffers forever and lock out real clients. Each request learns its peer's address
//! ([`PeerAddr`]), which pools the bounds of callers nobody verified.

use std::convert::Infallible;
use std::future::Future as _;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::Either;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::guard::GuardService;
use crate::engine::caller::pool::PeerAddr;
use crate::serve::limits::HttpLimits;

/// What a listener serves: the application's router, and the guard at its MCP path when
/// nothing stands in front of it there.
pub(crate) struct Routes {
    pub(crate) router: axum::Router,
    pub(crate) guard: Option<GuardService>,
}

/// Serves `routes` on `listener` until `shutdown` completes, then lets the connections in
/// flight finish their current request within `grace`; the deadline the grace ends at.
pub(crate) async fn serve(
    listener: TcpListener,
    routes: Routes,
    limits: &HttpLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    grace: Duration,
) -> std::io::Result<tokio::time::Instant> {
    let connections = Arc::new(Semaphore::new(limits.max_connections));
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        // A connection's permit first: at the limit, new connections wait in the
        // kernel's backlog.
        let permit = tokio::select! {
            permit = connections.clone().acquire_owned() => permit,
            () = &mut shutdown => break,
        };
        let Ok(permit) = permit else { break };
        let stream = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (stream, peer) = match stream {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of file descriptors or a connection reset before accept: wait a
                // little instead of spinning, as the slow connections time out.
                tracing::warn!(%error, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(Front {
            peer: PeerAddr(peer.ip()),
            router: routes.router.clone(),
            guard: routes.guard.clone(),
        });
        let stream = WriteDeadline::new(stream, limits.write_timeout);
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    let deadline = tokio::time::Instant::now() + grace;
    // Bounded: a stream a client keeps open (a session's GET stream) must not hold the
    // process past its grace.
    if tokio::time::timeout_at(deadline, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open at the end of the shutdown grace are closed");
    }
    Ok(deadline)
}

/// One connection's service: each request learns its peer's address, and a request to the
/// MCP path goes straight to the guard the router would route it to, when nothing stands
/// in front of the guard there.
///
/// Why not the router for every path: axum's routing of each request (the route's
/// lookup, a clone of the boxed route service, the matched path and the empty path
/// parameters inserted into its extensions, two more future layers) was about 3.5 % of a
/// deploy saga's instructions and 4 % of its instruction-cache misses, for a choice
/// made once per path (BENCHMARKS.md). Every other path, and the MCP path below it
/// (`/mcp/…`), is the router's, as before.
#[derive(Clone)]
struct Front {
    peer: PeerAddr,
    router: axum::Router,
    guard: Option<GuardService>,
}

impl tower::Service<http::Request<hyper::body::Incoming>> for Front {
    type Response = axum::response::Response;
    type Error = Infallible;
    type Future = Either<
        <GuardService as tower::Service<axum::extract::Request>>::Future,
        <axum::Router as tower::Service<axum::extract::Request>>::Future,
    >;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Both inner services are always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<hyper::body::Incoming>) -> Self::Future {
        let mut request = request.map(axum::body::Body::new);
        match &self.guard {
            // The peer as a value: only the guard's admission reads it.
            Some(guard) if request.uri().path() == super::MCP_PATH => {
                Either::Left(guard.call_from(request, self.peer))
            }
            _ => {
                request.extensions_mut().insert(self.peer);
                Either::Right(self.router.call(request))
            }
        }
    }
}

/// A connection whose writes must make progress: a write (or flush) that stays pending
/// for `timeout` fails, and hyper then closes the connection, which drops the response
/// and everything it holds (its request place, its run). hyper's own timeouts cover only
/// reading; a client that stops reading would otherwise hold its response for ever,
/// since nothing polls a response whose socket takes no more bytes.
struct WriteDeadline<T> {
    io: T,
    timeout: Duration,
    /// Armed while a write is pending.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<T> WriteDeadline<T> {
    fn new(io: T, timeout: Duration) -> Self {
        Self {
            io,
            timeout,
            stalled: None,
        }
    }

    /// `polled` as is if it is ready (the write made progress); if it is pending, the
    /// stall's deadline armed, and an error once it has passed.
    fn watch<R>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        if polled.is_ready() {
            self.stalled = None;
            return polled;
        }
        let timeout = self.timeout;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        if stalled.as_mut().poll(cx).is_ready() {
            tracing::info!(
                "closing a connection whose client stopped reading for the write timeout"
            );
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client took nothing for the write timeout",
            )));
        }
        Poll::Pending
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for WriteDeadline<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write(cx, buf);
        self.watch(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.watch(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.io).poll_flush(cx);
        self.watch(cx, polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.io).poll_shutdown(cx);
        self.watch(cx, polled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt as _;

    #[tokio::test(start_paused = true)]
    async fn a_write_the_peer_never_takes_fails_at_the_write_timeout() {
        // A pipe whose reader never reads: its buffer fills, then writes stay pending.
        let (_reader, writer) = tokio::io::duplex(64);
        let mut writer = WriteDeadline::new(writer, Duration::from_secs(30));
        let started = tokio::time::Instant::now();
        let error = writer
            .write_all(&[0; 4096])
            .await
            .expect_err("nothing reads the pipe");
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), Duration::from_secs(30));
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_reader_that_keeps_taking_is_not_cut_off() {
        let (mut reader, writer) = tokio::io::duplex(64);
        let mut writer = WriteDeadline::new(writer, Duration::from_secs(30));
        let reading = tokio::spawn(async move {
            let mut buf = [0; 64];
            let mut total = 0;
            while total < 4096 {
                // Slower than the write timeout in all, never stalled for that long.
                tokio::time::sleep(Duration::from_secs(20)).await;
                total += tokio::io::AsyncReadExt::read(&mut reader, &mut buf)
                    .await
                    .expect("reads");
            }
        });
        writer
            .write_all(&[0; 4096])
            .await
            .expect("the reader takes every byte");
        reading.await.expect("joined");
    }
}
