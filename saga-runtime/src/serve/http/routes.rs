//! The routes of the application's own served beside `/mcp`
//! ([`SagaServerBuilder::routes`](crate::serve::SagaServerBuilder::routes): a health
//! check, `/metrics`): they answer the same hosts as `/mcp` (a page on another site that
//! rebinds its name to this server's address is refused, as for MCP), and hold one of a
//! bounded number of places while they run (global: the server's
//! `max_concurrent_requests` again, apart from MCP's), so that a flood of them cannot
//! take the server's memory or threads.

use std::sync::Arc;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::{Request, StatusCode};
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use tokio::sync::Semaphore;

use super::hosts::{Authority, host_admitted};

/// `routes`, behind the Host rules of `config` and `places` places at once.
pub(super) fn guarded(
    routes: axum::Router,
    config: &StreamableHttpServerConfig,
    places: usize,
) -> axum::Router {
    // A list of blank entries admits no host (as rmcp reads it).
    let allowed: Option<Arc<[Authority]>> = super::hosts::allowed(config);
    let places = Arc::new(Semaphore::new(places.max(1)));
    routes.layer(axum::middleware::from_fn(
        move |request: Request<Body>, next: axum::middleware::Next| {
            let allowed = allowed.clone();
            let places = places.clone();
            async move {
                let (parts, body) = request.into_parts();
                let admitted = allowed
                    .as_deref()
                    .is_some_and(|allowed| host_admitted(allowed, &parts));
                if !admitted {
                    return (
                        StatusCode::FORBIDDEN,
                        "Forbidden: Host header is not allowed",
                    )
                        .into_response();
                }
                let Ok(_place) = places.try_acquire_owned() else {
                    return (
                        StatusCode::SERVICE_UNAVAILABLE,
                        [(http::header::RETRY_AFTER, "1")],
                        "the server is busy; retry later",
                    )
                        .into_response();
                };
                let response: Response = next.run(Request::from_parts(parts, body)).await;
                response
            }
        },
    ))
}
