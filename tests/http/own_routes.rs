//! The routes an application serves beside `/mcp` (`SagaServerBuilder::routes`: a
//! health check, `/metrics`) answer the hosts `/mcp` answers, and hold one of a bounded
//! number of places (finding 9 of the third hardening pass: the metrics example's
//! `/metrics` answered any `Host`, which a DNS-rebinding page could read).

use std::time::Duration;

use saga_examples::harness::http::{Method, Post, StatusCode};
use saga_examples::harness::serving::serve_local;
use saga_runtime::prelude::*;
use saga_runtime::serve::HttpLimits;

#[tokio::test]
async fn own_routes_answer_the_hosts_mcp_answers_and_are_bounded() {
    let routes = axum::Router::new()
        .route("/healthz", axum::routing::get(|| async { "ok" }))
        .route(
            "/slow",
            axum::routing::get(|| async {
                tokio::time::sleep(Duration::from_secs(2)).await;
                "slow"
            }),
        );
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .routes(routes)
        .http_limits(HttpLimits::default().max_concurrent_requests(1))
        .build()
        .expect("the server builds");
    let running = serve_local(server).await;
    let get = |path: &str| Post::mcp(running.addr).method(Method::GET).path(path);
    let ok = get("/healthz").response().await;
    assert_eq!(ok.status(), StatusCode::OK);
    let rebound = get("/healthz")
        .header("host", "evil.example")
        .response()
        .await;
    assert_eq!(rebound.status(), StatusCode::FORBIDDEN);
    // One place: a second request while the first runs is refused at once.
    let slow = tokio::spawn(get("/slow").response());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let busy = get("/healthz").response().await;
    assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(slow.await.expect("joined").status(), StatusCode::OK);
    assert_eq!(get("/healthz").response().await.status(), StatusCode::OK);
}
