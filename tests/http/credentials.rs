//! Wrong credentials are rate limited per address (finding 9 of the third hardening
//! pass: with an `authenticate` check, 2,400 wrong keys a second from one address were
//! each checked and served as an unverified caller's).

use saga_examples::harness::http::{Post, StatusCode, request, with_meta};
use saga_examples::harness::serving::{Running, serve_local};
use saga_runtime::prelude::*;
use saga_runtime::serve::HttpLimits;
use serde_json::json;

/// A server that verifies the key `k-right` in `X-Api-Key`, and takes `tries` wrong
/// keys a minute from one address.
async fn serve(tries: u32) -> Running {
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .authenticate(|parts| {
            let key = parts.headers.get("x-api-key")?.to_str().ok()?;
            (key == "k-right").then(|| "alice".to_owned())
        })
        .http_limits(HttpLimits::default().max_failed_credentials_per_minute(tries))
        .build()
        .expect("the server builds");
    serve_local(server).await
}

#[tokio::test]
async fn wrong_keys_from_one_address_are_refused_past_the_minutes_tries() {
    let running = serve(5).await;
    let list = with_meta(request(1, "tools/list", json!({})));
    let with_key = |key: &str| Post::mcp(running.addr).rpc(&list).header("x-api-key", key);
    for n in 0..5 {
        let (status, _) = with_key(&format!("k-wrong-{n}")).send().await;
        assert_eq!(status, StatusCode::OK, "try {n}");
    }
    let (status, _) = with_key("k-wrong-5").send().await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    // The right key too: the check is not run for the address this minute.
    let (status, _) = with_key("k-right").send().await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    // A request without a credential guesses nothing, and is served; nor does one that
    // repeats a key already refused (a client resending a token the server does not know).
    let (status, _) = Post::mcp(running.addr).rpc(&list).send().await;
    assert_eq!(status, StatusCode::OK);
    for _ in 0..10 {
        let (status, _) = with_key("k-wrong-0").send().await;
        assert_eq!(status, StatusCode::OK);
    }
}

/// The right key never counts as a failed try.
#[tokio::test]
async fn the_right_key_spends_no_tries() {
    let running = serve(2).await;
    let list = with_meta(request(1, "tools/list", json!({})));
    for _ in 0..10 {
        let (status, _) = Post::mcp(running.addr)
            .rpc(&list)
            .header("x-api-key", "k-right")
            .send()
            .await;
        assert_eq!(status, StatusCode::OK);
    }
}
