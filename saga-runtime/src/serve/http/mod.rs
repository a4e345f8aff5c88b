//! Streamable HTTP: one POST endpoint at `/mcp`, served statelessly through rmcp.

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::{TcpListener, ToSocketAddrs};

use super::SagaServer;

/// The path the MCP endpoint is mounted at.
pub const MCP_PATH: &str = "/mcp";

/// The rmcp transport settings saga serves with: no sessions (MCP 2026-07-28 has none),
/// plain JSON responses, and per-request protocol metadata required. Host and Origin
/// checks keep rmcp's defaults (loopback hosts only); a public deployment widens them with
/// [`SagaServer::router_with`].
pub fn default_http_config() -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_stateless_protocol_metadata_required(true)
        .with_sse_keep_alive(None)
}

impl SagaServer {
    /// An `axum::Router` serving MCP at `/mcp`, to mount in an application or serve as is.
    pub fn router(&self) -> axum::Router {
        self.router_with(default_http_config())
    }

    /// [`SagaServer::router`] with rmcp transport settings of your own (allowed hosts and
    /// origins, body size limit, …).
    pub fn router_with(&self, config: StreamableHttpServerConfig) -> axum::Router {
        let allowed_hosts = Arc::new(config.allowed_hosts.clone());
        let server = self.clone();
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        let tools = self.tools().clone();
        axum::Router::new()
            .nest_service(MCP_PATH, service)
            .layer(axum::middleware::from_fn(move |request, next| {
                super::result_format::layer(tools.clone(), allowed_hosts.clone(), request, next)
            }))
    }

    /// Serves Streamable HTTP on `addr` until Ctrl-C. Prints `listening on
    /// http://ADDR/mcp` on stdout once it accepts requests.
    pub async fn serve_http(self, addr: impl ToSocketAddrs) -> anyhow::Result<()> {
        let listener = TcpListener::bind(addr).await?;
        self.serve_listener(listener, shutdown_signal()).await
    }

    /// Serves Streamable HTTP on a bound listener until `shutdown` completes.
    pub async fn serve_listener(
        self,
        listener: TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let local: SocketAddr = listener.local_addr()?;
        let router = self.router();
        tracing::info!(%local, "serving MCP over Streamable HTTP");
        println!("listening on http://{local}{MCP_PATH}");
        axum::serve(listener, router)
            .with_graceful_shutdown(shutdown)
            .await?;
        Ok(())
    }
}

async fn shutdown_signal() {
    if tokio::signal::ctrl_c().await.is_err() {
        // No signal handler could be installed: serve until the process is killed.
        std::future::pending::<()>().await;
    }
}
