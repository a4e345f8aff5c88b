//! The transport: the router of `/mcp` behind the guard, and the listener that serves it.

use std::net::SocketAddr;
use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::{TcpListener, ToSocketAddrs};

use super::{MCP_PATH, direct, guard, listener, owners, routes};
use crate::serve::error::ServeError;
use crate::serve::limits::DEFAULT_MAX_BODY_BYTES;
use crate::serve::server::SagaServer;
use crate::serve::tries;

/// A `tracing` filter directive that keeps session ids out of the log: rmcp logs each new
/// session's id at INFO (target `rmcp::transport::streamable_http_server::session::local`).
/// saga never logs one; a session answers only to the principal that opened it, but its id
/// is still the client's to keep. Add the directive to your filter, after the rest:
///
/// ```
/// # use saga_runtime::serve::QUIET_SESSION_IDS;
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let directive: tracing_subscriber::filter::Directive = QUIET_SESSION_IDS.parse()?;
/// let filter = tracing_subscriber::EnvFilter::new("info").add_directive(directive);
/// # Ok(()) }
/// ```
pub const QUIET_SESSION_IDS: &str = "rmcp::transport::streamable_http_server::session::local=warn";

/// The rmcp transport settings saga serves with: MCP 2026-07-28 statelessly with plain
/// JSON responses and per-request protocol metadata required, sessions for clients that
/// open one with `initialize` (2025-11-25, 2025-06-18; their calls stream as SSE), SSE
/// keep-alive comments every 15 s, and a 1 MiB body limit ([`DEFAULT_MAX_BODY_BYTES`]). Host and Origin checks keep rmcp's
/// defaults (loopback hosts only); a public deployment widens them with
/// [`SagaServer::router_with`].
pub fn default_http_config() -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default()
        .with_legacy_session_mode(true)
        .with_json_response(true)
        .with_stateless_protocol_metadata_required(true)
        .with_sse_keep_alive(Some(std::time::Duration::from_secs(15)))
        .with_max_request_body_bytes(DEFAULT_MAX_BODY_BYTES)
}

impl SagaServer {
    /// An `axum::Router` serving MCP at `/mcp`, to mount in an application or serve as is.
    /// Its body limit is [`HttpLimits::max_body_bytes`](crate::serve::HttpLimits::max_body_bytes).
    pub fn router(&self) -> axum::Router {
        self.router_with(self.http_config())
    }

    /// [`default_http_config`] with the body limit and keep-alive of [`HttpLimits`](crate::serve::HttpLimits).
    fn http_config(&self) -> StreamableHttpServerConfig {
        let limits = self.http_limits();
        default_http_config()
            .with_max_request_body_bytes(limits.max_body_bytes)
            .with_sse_keep_alive(Some(limits.sse_keep_alive))
    }

    /// [`SagaServer::router`] with rmcp transport settings of your own (allowed hosts and
    /// origins, body size limit, …). The body limit is the config's
    /// `max_request_body_bytes`; the other bounds come from [`HttpLimits`](crate::serve::HttpLimits).
    ///
    /// Every request to the MCP path (and below it), in every wire format, passes the same
    /// checks: the limits, then rmcp's validation of the transport and the JSON-RPC
    /// message, then the handler. Any other path not among the builder's routes is a 404.
    /// An MRTR `tools/call` that passes rmcp's checks as it is runs without rmcp's
    /// per-request service (see [`SagaServerBuilder::direct_calls`]); anything else, and
    /// every refusal, is rmcp's.
    ///
    /// [`SagaServerBuilder::direct_calls`]: super::super::SagaServerBuilder::direct_calls
    pub fn router_with(&self, config: StreamableHttpServerConfig) -> axum::Router {
        self.routes_with(config).router
    }

    /// The router of [`SagaServer::router_with`], and the guard at its MCP path when
    /// nothing stands in front of it (authorization does), for a listener to hand that
    /// path's requests to directly (see [`listener::Front`]).
    fn routes_with(&self, config: StreamableHttpServerConfig) -> listener::Routes {
        let limits = self.http_limits();
        #[cfg(feature = "oauth")]
        let max_body_bytes = config.max_request_body_bytes;
        // The routes of the application's own answer the hosts MCP answers.
        let own_routes = self
            .extra_routes()
            .map(|routes| routes::guarded(routes.clone(), &config, limits.max_concurrent_requests));
        self.tools().start_background();
        let guard = guard::GuardService(Arc::new(self.guard(config)));
        // The guard answers at every path `nest_service` gives rmcp's transport (the path,
        // with a slash, and below it) and hands rmcp what it does not serve itself; any
        // other path is a plain 404.
        let mcp = [
            MCP_PATH.to_owned(),
            format!("{MCP_PATH}/"),
            format!("{MCP_PATH}/{{*rest}}"),
        ]
        .iter()
        .fold(axum::Router::new(), |router, path| {
            router.route_service(path, guard.clone())
        });
        // Authorization, its own layer in front of the guard, and its metadata routes.
        // Without the `oauth` feature nothing takes the guard's place.
        #[cfg_attr(not(feature = "oauth"), allow(unused_mut))]
        let mut guard = Some(guard);
        #[cfg(feature = "oauth")]
        let mcp = match &self.authorization {
            Some(server) => {
                guard = None;
                crate::serve::auth::layer::protect(
                    mcp,
                    crate::serve::auth::layer::Authorize {
                        server: (**server).clone(),
                        max_body_bytes,
                        body_read_timeout: limits.body_read_timeout,
                        tries: tries::Tries::new(limits.max_failed_credentials_per_minute),
                        proxies: crate::serve::forwarded::TrustedProxies::new(
                            &limits.trusted_proxies,
                        ),
                    },
                )
                .merge(crate::serve::auth::layer::metadata_routes(server))
            }
            None => mcp,
        };
        let router = match own_routes {
            Some(routes) => mcp.merge(routes),
            None => mcp,
        };
        listener::Routes { router, guard }
    }

    /// The guard in front of rmcp's transport under `config`: the checks and bounds of
    /// every request to the MCP path, the direct path, and rmcp's transport behind them.
    fn guard(&self, config: StreamableHttpServerConfig) -> guard::Guard {
        let limits = self.http_limits();
        // Each session gets its own server value (its log level, its subscriptions);
        // stateless requests get a fresh one each time, which costs a few clones.
        let mut sessions = LocalSessionManager::default();
        sessions.session_config.keep_alive = Some(self.session_idle_timeout());
        let sessions = Arc::new(sessions);
        let direct = self
            .direct_calls()
            .then(|| direct::Direct::new(self.tools().clone(), self.discovery(), &config))
            .flatten();
        let max_body_bytes = config.max_request_body_bytes;
        let server = self.clone();
        let service =
            StreamableHttpService::new(move || Ok(server.for_session()), sessions.clone(), config);
        guard::Guard {
            owners: owners::Owners::new(sessions, limits),
            stream_idle_timeout: limits.stream_idle_timeout,
            tools: self.tools().clone(),
            places: crate::engine::caller::pool::Shares::new(
                limits.max_concurrent_requests,
                limits.max_requests_per_principal,
            ),
            queue_timeout: limits.queue_timeout,
            body_read_timeout: limits.body_read_timeout,
            max_body_bytes,
            budget: limits.json_budget(),
            direct,
            rmcp: axum::Router::new().nest_service(MCP_PATH, service),
            tries: self
                .tools()
                .authenticates()
                .then(|| tries::Tries::new(limits.max_failed_credentials_per_minute)),
            proxies: crate::serve::forwarded::TrustedProxies::new(&limits.trusted_proxies),
        }
    }

    /// Serves Streamable HTTP on `addr` until SIGTERM or Ctrl-C, then stops gracefully: no
    /// new connection is accepted, the requests in flight and the rounds that go on after
    /// their clients left finish within the shutdown grace
    /// ([`SagaServerBuilder::shutdown_grace`](crate::serve::SagaServerBuilder::shutdown_grace),
    /// 25 s) and record their outcomes, and it returns; a second signal exits at once.
    /// Prints `listening on http://ADDR/mcp` on stdout once it accepts requests.
    pub async fn serve_http(self, addr: impl ToSocketAddrs) -> Result<(), ServeError> {
        let stop = super::super::shutdown::from_signals();
        let listener = TcpListener::bind(addr).await.map_err(ServeError::Listen)?;
        self.serve_erased_listener(listener, Box::pin(stop)).await
    }

    /// [`SagaServer::serve_http`], stopping gracefully when `shutdown` completes instead of
    /// on a signal (combine it with [`shutdown_signal`](crate::serve::shutdown_signal) to
    /// stop on either).
    pub async fn serve_http_until(
        self,
        addr: impl ToSocketAddrs,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let listener = TcpListener::bind(addr).await.map_err(ServeError::Listen)?;
        self.serve_erased_listener(listener, Box::pin(shutdown))
            .await
    }

    /// Says, once as it starts serving, which stores it was given keep nothing across a
    /// restart: on stderr (seen without a log subscriber) and in the log. A call whose
    /// state such a store keeps fails after a restart ("no longer kept by the server").
    fn warn_of_volatile_stores(&self) {
        for what in &self.volatile {
            let advice = "use TaskStore::sqlite(path) on one server (feature `sqlite`), or \
                          TaskStore::redis(..) / TaskStore::postgres(..) shared by replicas";
            eprintln!(
                "warning: the {what} keeps everything in memory: a restart of this server \
                 loses what it holds; {advice}"
            );
            tracing::warn!(store = what, "a store in memory serves over HTTP: {advice}");
        }
    }

    /// Serves Streamable HTTP on a bound listener until `shutdown` completes, then stops
    /// gracefully as [`SagaServer::serve_http`] does, with the connection bounds of
    /// [`HttpLimits`](crate::serve::HttpLimits) (header read timeout, connection limit).
    pub async fn serve_listener(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        self.serve_erased_listener(listener, Box::pin(shutdown))
            .await
    }

    /// The server's future, built and compiled once, here: an `async fn`'s body is
    /// compiled again in every crate that awaits it, so the public entry points only
    /// box their generic arguments and await this.
    fn serve_erased_listener(
        self,
        listener: TcpListener,
        shutdown: BoxFuture<'static, ()>,
    ) -> BoxFuture<'static, Result<(), ServeError>> {
        Box::pin(async move {
            let local: SocketAddr = listener.local_addr().map_err(ServeError::Listen)?;
            let routes = self.routes_with(self.http_config());
            tracing::info!(%local, "serving MCP over Streamable HTTP");
            println!("listening on http://{local}{MCP_PATH}");
            self.warn_of_volatile_stores();
            let deadline = listener::serve(
                listener,
                routes,
                self.http_limits(),
                shutdown,
                self.shutdown_grace(),
            )
            .await
            .map_err(ServeError::Io)?;
            // The connections are closed: the rounds that go on after their clients left
            // finish (their outcomes recorded) within what is left of the grace.
            self.tools().drain(deadline).await;
            tracing::info!("stopped");
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every request's future is created, moved and boxed at its full size, whichever
    /// path it takes: the guard boxes its rare paths (sessions, rmcp, GETs) so that the
    /// usual call does not pay for them. Unboxed they made it 4,848 bytes (this test's
    /// build, rustc 1.95), and `async fn`s that kept the request's parts twice 2,016; it
    /// was 1,504 (1,424 before the guard took the peer's address as a value, for its
    /// admission), and is 1,320 since a POST is decided once (`Guard::posted`): the
    /// format, the direct read and the JSON check no longer each have a path of their own
    /// in the future. This fails if a path is added unboxed or an `async fn` keeps a large
    /// argument twice again. The bound leaves room for compiler changes.
    #[test]
    fn a_requests_future_does_not_hold_the_rare_paths() {
        let server = SagaServer::builder()
            .keys(crate::state::KeyRing::ephemeral())
            .build()
            .expect("a server of no tools");
        let guard = Arc::new(server.guard(default_http_config()));
        let request = axum::extract::Request::new(axum::body::Body::empty());
        let future = guard.run(request, None);
        let size = std::mem::size_of_val(&future);
        assert!(size <= 2_048, "a request's future is {size} bytes");
    }
}
