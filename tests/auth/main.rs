//! Authorization as MCP specifies it (`saga_runtime::serve::auth`), against a real
//! authorization server: `oidc-provider` (`saga_examples::harness::oidc`), issuing JWT
//! access tokens for this server's resource (RFC 8707, RFC 9068), opaque ones it
//! introspects (RFC 7662), and a second issuer with its own keys that plays the attacker.
//!
//! `cargo test -p saga-workspace --test auth` (Node.js and npm: the harness installs oidc-provider).

use std::net::SocketAddr;
use std::time::Duration;

use base64::Engine as _;
use saga_examples::deploy;
use saga_examples::harness::http::{
    Call, DEPLOYED, Post, StatusCode, complete, deploy_round2, deploy_to_the_end, input_required,
    verdict,
};
use saga_examples::harness::oidc::{Format, INTROSPECTOR, OTHER_CLIENT, Oidc};
use saga_examples::harness::serving::{Running, bind_local, serve_on};
use saga_examples::harness::session::Session;
use saga_runtime::prelude::*;
use saga_runtime::serve::auth::{Introspection, JwtVerifier, ResourceServer};
use serde_json::{Value, json};

const KEY_HEX: &str = "a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7";

/// The deploy example behind authorization by `oidc`, on a port of its own; `configure`
/// adds to the settings. Its resource URI is `http://ADDR/mcp`.
async fn serve(
    oidc: &Oidc,
    configure: impl FnOnce(ResourceServer) -> ResourceServer,
) -> (Running, String) {
    let listener = bind_local().await;
    let addr = listener.local_addr().expect("an address");
    serve_at(listener, addr, oidc, configure)
}

fn serve_at(
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
    oidc: &Oidc,
    configure: impl FnOnce(ResourceServer) -> ResourceServer,
) -> (Running, String) {
    let resource = format!("http://{addr}/mcp");
    let auth = ResourceServer::new(&resource)
        .expect("a resource URI")
        .authorization_server(&oidc.issuer)
        .verifier(JwtVerifier::new(&oidc.issuer))
        .tool_scopes("complex_tool", ["tools:deploy"])
        .tool_scopes("release", ["tools:deploy"]);
    let server = deploy::builder(KeyRing::parse(KEY_HEX).expect("a key"))
        .expect("a builder")
        .authorization(configure(auth))
        .build()
        .expect("the server builds");
    (serve_on(listener, server), resource)
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// The `WWW-Authenticate` challenge of a response.
fn challenge(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("www-authenticate")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// The status of a first round of the deploy saga with the bearer token `token`.
async fn status_with(addr: SocketAddr, token: &str) -> StatusCode {
    first_round(addr, Some(&bearer(token))).await.status()
}

/// A first round of the deploy saga with `authorization`: the raw response.
async fn first_round(addr: SocketAddr, authorization: Option<&str>) -> reqwest::Response {
    let call = match authorization {
        Some(who) => Call::deploy().authorization(who),
        None => Call::deploy(),
    };
    call.post(addr).response().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metadata_names_the_resource_and_its_authorization_server() {
    let oidc = Oidc::start().await;
    let (running, resource) = serve(&oidc, |auth| auth).await;
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let (status, metadata) = Post::mcp(running.addr)
            .method(saga_examples::harness::http::Method::GET)
            .path(path)
            .send()
            .await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(metadata["resource"], resource.as_str());
        assert_eq!(metadata["authorization_servers"], json!([oidc.issuer]));
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
        assert_eq!(metadata["scopes_supported"], json!(["tools:deploy"]));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_token_gets_a_challenge_that_says_where_to_get_one() {
    let oidc = Oidc::start().await;
    let (running, _) = serve(&oidc, |auth| auth).await;
    let response = first_round(running.addr, None).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let challenge = challenge(&response);
    assert!(
        challenge.starts_with(&format!(
            "Bearer resource_metadata=\"http://{}/.well-known/oauth-protected-resource/mcp\"",
            running.addr
        )),
        "{challenge}"
    );
    // Its body unread, the challenge names the scopes every request needs: none here.
    assert!(!challenge.contains("scope="), "{challenge}");
    assert!(
        !challenge.contains("error="),
        "no error code without a token: {challenge}"
    );
    // Another scheme is no bearer token.
    let response = first_round(running.addr, Some("Basic c2FnYTpzZWNyZXQ=")).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}

/// The deploy saga end to end with a token of the authorization server, over MRTR, across
/// a restart of the server (a new process's verifier fetches the keys again), with a
/// token refreshed between two rounds (the saga is bound to the subject, not to the
/// token's text).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deploy_saga_runs_with_a_token_across_a_restart_and_a_refresh() {
    let oidc = Oidc::start().await;
    let listener = bind_local().await;
    let addr = listener.local_addr().expect("an address");
    let (running, resource) = serve_at(listener, addr, &oidc, |auth| auth);
    let token = oidc.token(&resource, "tools:deploy").await;
    let call = Call::deploy().authorization(&bearer(&token));
    let state = deploy_round2(addr, &call).await;
    drop(running);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .expect("the same port again");
    let (_running, _) = serve_at(listener, addr, &oidc, |auth| auth);
    let refreshed = oidc.token(&resource, "tools:deploy").await;
    assert_ne!(refreshed, token);
    let call = Call::deploy().authorization(&bearer(&refreshed));
    let (status, body) = call.resume(state, verdict("Yes")).send(addr).await;
    assert_eq!(complete(status, &body).0, DEPLOYED);
}

/// Tokens the server must refuse, each with 401 `invalid_token`: for another resource,
/// of another issuer, signed with `none`, with an HMAC keyed by the issuer's public key,
/// naming a key id the issuer does not have, cut, or not a JWT.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_not_for_this_server_are_refused() {
    let oidc = Oidc::start().await;
    let attacker = Oidc::start().await;
    let (running, resource) = serve(&oidc, |auth| auth).await;
    let good = oidc.token(&resource, "tools:deploy").await;
    let (header, payload, _) = split(&good);
    let kid = header["kid"].as_str().expect("a kid").to_owned();
    let jwks = reqwest::get(format!("{}/jwks", oidc.issuer))
        .await
        .expect("jwks")
        .text()
        .await
        .expect("text");
    let hmac_key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, jwks.as_bytes());
    let hs256 = {
        let signing_input = format!(
            "{}.{}",
            b64(&json!({"alg": "HS256", "typ": "at+jwt", "kid": kid})),
            b64(&payload)
        );
        let tag = ring::hmac::sign(&hmac_key, signing_input.as_bytes());
        format!(
            "{signing_input}.{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(tag.as_ref())
        )
    };
    let none = format!(
        "{}.{}.",
        b64(&json!({"alg": "none", "typ": "at+jwt", "kid": kid})),
        b64(&payload)
    );
    let cases = [
        (
            "another resource",
            oidc.token("http://127.0.0.1:1/other", "tools:deploy").await,
        ),
        (
            "another issuer",
            attacker.token(&resource, "tools:deploy").await,
        ),
        ("alg none", none),
        ("HMAC with the public key", hs256),
        ("a forged kid", resign_kid(&good, "made-up-kid")),
        ("a cut signature", good[..good.len() - 4].to_owned()),
        ("not a JWT", "opaque-garbage".to_owned()),
    ];
    for (what, token) in cases {
        let response = first_round(running.addr, Some(&bearer(&token))).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{what}");
        let challenge = challenge(&response);
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "{what}: {challenge}"
        );
        assert!(
            challenge.contains("resource_metadata="),
            "{what}: {challenge}"
        );
    }
    // And the good one passes.
    let response = first_round(running.addr, Some(&bearer(&good))).await;
    assert_eq!(response.status(), StatusCode::OK);
}

/// An expired token is refused (here with no leeway, and a token of one second).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_refused() {
    let oidc = Oidc::start_with(1, Format::Jwt).await;
    let listener = bind_local().await;
    let addr = listener.local_addr().expect("an address");
    let resource = format!("http://{addr}/mcp");
    let auth = ResourceServer::new(&resource)
        .expect("a resource URI")
        .authorization_server(&oidc.issuer)
        .verifier(JwtVerifier::new(&oidc.issuer).leeway(Duration::ZERO));
    let server = deploy::builder(KeyRing::ephemeral())
        .expect("a builder")
        .authorization(auth)
        .build()
        .expect("the server builds");
    let _running = serve_on(listener, server);
    let token = oidc.token(&resource, "tools:deploy").await;
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    let response = first_round(addr, Some(&bearer(&token))).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(challenge(&response).contains("invalid_token"));
}

/// A flood of tokens naming made-up key ids fetches the issuer's keys at most once per
/// refresh interval (30 s): here 300 of them, and the issuer counts its fetches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn made_up_key_ids_do_not_make_the_server_fetch_keys_per_request() {
    let oidc = Oidc::start().await;
    let (running, resource) = serve(&oidc, |auth| auth).await;
    let good = oidc.token(&resource, "tools:deploy").await;
    assert_eq!(status_with(running.addr, &good).await, StatusCode::OK);
    let before = oidc.jwks_hits().await;
    let started = std::time::Instant::now();
    for n in 0..300 {
        let forged = resign_kid(&good, &format!("made-up-{n}"));
        let response = Call::deploy()
            .authorization(&bearer(&forged))
            .post(running.addr)
            .header("x-forwarded-for", "ignored")
            .response()
            .await;
        // Refused as invalid, or, past the address's 30 distinct failed credentials a
        // minute, before it is verified at all.
        assert!(
            [StatusCode::UNAUTHORIZED, StatusCode::TOO_MANY_REQUESTS].contains(&response.status()),
            "{}",
            response.status()
        );
    }
    // A token verified before still passes from this address, whatever it sent since.
    assert_eq!(status_with(running.addr, &good).await, StatusCode::OK);
    let fetched = oidc.jwks_hits().await - before;
    println!(
        "300 tokens with made-up key ids in {:?}: the issuer's keys fetched {fetched} more time(s)",
        started.elapsed()
    );
    assert!(fetched <= 1, "{fetched} fetches");
}

/// A router mounted without `ConnectInfo` (the caller's address unknown to saga): there is
/// no count to spend, so one caller's bad tokens lock nobody out (issue 72, finding 4: 35
/// bad tokens from one client made another's fresh valid token get 429), and a token
/// verified before passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_address_one_callers_bad_tokens_lock_nobody_out() {
    let oidc = Oidc::start().await;
    let listener = bind_local().await;
    let addr = listener.local_addr().expect("an address");
    let resource = format!("http://{addr}/mcp");
    let auth = ResourceServer::new(&resource)
        .expect("a resource URI")
        .authorization_server(&oidc.issuer)
        .verifier(JwtVerifier::new(&oidc.issuer))
        .tool_scopes("complex_tool", ["tools:deploy"])
        .tool_scopes("release", ["tools:deploy"]);
    let server = deploy::builder(KeyRing::parse(KEY_HEX).expect("a key"))
        .expect("a builder")
        .authorization(auth)
        .build()
        .expect("the server builds");
    // `axum::serve` without `into_make_service_with_connect_info`: no address.
    let router = server.router();
    tokio::spawn(async move { axum::serve(listener, router).await });
    let good = oidc.token(&resource, "tools:deploy").await;
    assert_eq!(status_with(addr, &good).await, StatusCode::OK);
    for n in 0..40 {
        // The issuer's key id, a signature that does not verify: a failed try each.
        let forged = bad_signature(&good, n);
        let status = status_with(addr, &forged).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "try {n}");
    }
    let fresh = oidc.token(&resource, "tools:deploy").await;
    assert_ne!(fresh, good);
    assert_eq!(
        status_with(addr, &fresh).await,
        StatusCode::OK,
        "another caller's token, never seen"
    );
    assert_eq!(
        status_with(addr, &good).await,
        StatusCode::OK,
        "a token verified before"
    );
}

/// With an address, the bound holds for bearer tokens: past 30 failed tokens, a new one is
/// refused unchecked (429, said as such), and a token verified before still passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_past_its_failed_tokens_is_refused_but_a_verified_token_passes() {
    let oidc = Oidc::start().await;
    let (running, resource) = serve(&oidc, |auth| auth).await;
    let good = oidc.token(&resource, "tools:deploy").await;
    assert_eq!(status_with(running.addr, &good).await, StatusCode::OK);
    let mut limited = 0;
    for n in 0..40 {
        let response = first_round(running.addr, Some(&bearer(&bad_signature(&good, n)))).await;
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            limited += 1;
            let body: Value = response.json().await.expect("JSON");
            assert_eq!(body["error"], "too_many_requests", "{body}");
        }
    }
    assert_eq!(limited, 10, "past the 30 failed credentials of a minute");
    assert_eq!(status_with(running.addr, &good).await, StatusCode::OK);
}

/// `token` with a signature that does not verify, distinct for each `n`.
fn bad_signature(token: &str, n: usize) -> String {
    let (header, payload, _) = split(token);
    let signature =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("not-a-signature-{n}"));
    format!("{}.{}.{signature}", b64(&header), b64(&payload))
}

/// Issue 72, finding 2: a key the issuer removed from its key set stops verifying within
/// the key set's age, in steady traffic: a token signed with it and never seen is refused,
/// and one verified with it before is dropped. The new key's tokens pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_removed_from_the_issuers_set_stops_verifying() {
    let mut oidc = Oidc::start().await;
    let (running, resource) = serve(&oidc, |auth| {
        auth.verifier(
            JwtVerifier::new(&oidc.issuer)
                .refresh_interval(Duration::from_millis(500))
                .max_key_age(Duration::from_secs(1)),
        )
    })
    .await;
    let seen = oidc.token(&resource, "tools:deploy").await;
    let unseen = oidc.token(&resource, "tools:deploy").await;
    assert_eq!(status_with(running.addr, &seen).await, StatusCode::OK);
    oidc.restart(true).await;
    // Steady traffic with the token verified before, until the keys are fetched again.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    assert_eq!(
        status_with(running.addr, &unseen).await,
        StatusCode::UNAUTHORIZED,
        "signed with the removed key"
    );
    assert_eq!(
        status_with(running.addr, &seen).await,
        StatusCode::UNAUTHORIZED,
        "verified with the removed key before: dropped"
    );
    let new = oidc.token(&resource, "tools:deploy").await;
    assert_eq!(status_with(running.addr, &new).await, StatusCode::OK);
}

/// Finding 2 with the default settings, as it was reproduced: rotate, drop the old key,
/// steady traffic with a token verified before, then a token signed with the removed key
/// is refused once the key set's default lifetime (30 s, the issuer sending no
/// `Cache-Control`) has passed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_key_stops_verifying_with_the_default_settings() {
    let mut oidc = Oidc::start().await;
    let (running, resource) = serve(&oidc, |auth| auth).await;
    let seen = oidc.token(&resource, "tools:deploy").await;
    let unseen = oidc.token(&resource, "tools:deploy").await;
    let started = std::time::Instant::now();
    assert_eq!(status_with(running.addr, &seen).await, StatusCode::OK);
    oidc.restart(true).await;
    while started.elapsed() < Duration::from_secs(31) {
        tokio::time::sleep(Duration::from_secs(2)).await;
        // Steady traffic: the token verified before, from the cache until the keys age.
        let _ = status_with(running.addr, &seen).await;
    }
    assert_eq!(
        status_with(running.addr, &unseen).await,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        status_with(running.addr, &seen).await,
        StatusCode::UNAUTHORIZED
    );
}

/// Issue 72, finding 8: while the issuer is down its valid tokens get 503 (retry), and
/// once it is back they pass within the failed fetch's backoff (5 s), not refused as
/// invalid for the whole refresh interval (30 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_an_issuer_outage_valid_tokens_pass_again_within_the_backoff() {
    let mut oidc = Oidc::start().await;
    let (running, resource) = serve(&oidc, |auth| auth).await;
    let token = oidc.token(&resource, "tools:deploy").await;
    oidc.stop();
    assert_eq!(
        status_with(running.addr, &token).await,
        StatusCode::SERVICE_UNAVAILABLE,
        "the issuer is down: retry later"
    );
    oidc.restart(false).await;
    let soon = status_with(running.addr, &token).await;
    assert!(
        [StatusCode::SERVICE_UNAVAILABLE, StatusCode::OK].contains(&soon),
        "never refused as invalid: {soon}"
    );
    tokio::time::sleep(Duration::from_millis(5_500)).await;
    assert_eq!(status_with(running.addr, &token).await, StatusCode::OK);
}

/// Issue 72, finding 8: a token of a key the issuer has just started to use, met while the
/// last fetch is too recent to fetch again, is refused without counting as a failed try:
/// its retry after the refresh interval fetches the keys and passes (it was locked out
/// for the minute).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_of_a_new_key_passes_on_its_retry_after_the_interval() {
    let mut oidc = Oidc::start().await;
    let interval = Duration::from_secs(8);
    let (running, resource) = serve(&oidc, |auth| {
        auth.verifier(JwtVerifier::new(&oidc.issuer).refresh_interval(interval))
    })
    .await;
    let old = oidc.token(&resource, "tools:deploy").await;
    let fetched = std::time::Instant::now();
    assert_eq!(status_with(running.addr, &old).await, StatusCode::OK);
    oidc.restart(true).await;
    let new = oidc.token(&resource, "tools:deploy").await;
    let first = status_with(running.addr, &new).await;
    assert!(
        [StatusCode::UNAUTHORIZED, StatusCode::OK].contains(&first),
        "{first}"
    );
    if let Some(left) = (interval + Duration::from_millis(500)).checked_sub(fetched.elapsed()) {
        tokio::time::sleep(left).await;
    }
    assert_eq!(
        status_with(running.addr, &new).await,
        StatusCode::OK,
        "its retry fetched the keys"
    );
}

/// Issue 72, finding 3: tokens shaped like JWTs sent to an introspecting server (whose
/// issuer answers 400 `unsupported_token_type`) are failed tries: past the address's
/// bound they are refused without an introspection each (all 500 were answered 503, each
/// introspected).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jwt_shaped_tokens_against_introspection_count_as_failed_tries() {
    let oidc = Oidc::start_with(300, Format::Opaque).await;
    let (running, _) = serve(&oidc, |auth| {
        auth.verifier(Introspection::new(
            &oidc.issuer,
            INTROSPECTOR.0,
            INTROSPECTOR.1,
        ))
    })
    .await;
    let before = oidc.introspections().await;
    let mut statuses = std::collections::BTreeMap::new();
    for n in 0..60 {
        let header = b64(&json!({"alg": "RS256", "typ": "at+jwt", "kid": "x"}));
        let payload = b64(&json!({"sub": format!("s{n}"), "iss": "x"}));
        let token = format!("{header}.{payload}.c2ln");
        let status = status_with(running.addr, &token).await;
        *statuses.entry(status.as_u16()).or_insert(0) += 1;
    }
    let asked = oidc.introspections().await - before;
    assert!(
        !statuses.contains_key(&503),
        "answered as an issuer outage: {statuses:?}"
    );
    assert_eq!(statuses.get(&429), Some(&30), "{statuses:?}");
    assert!(asked <= 30, "the issuer was asked {asked} times");
}

/// A token without a tool's scope gets 403 `insufficient_scope` naming every scope the
/// call needs; a broader scope the deployment declares grants the narrower ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tools_scopes_are_all_named_and_a_broader_scope_grants_them() {
    let oidc = Oidc::start().await;
    let (running, resource) = serve(&oidc, |auth| {
        auth.require_scopes(["tools:read"])
            .scope_implies("tools:admin", ["tools:deploy", "tools:read"])
    })
    .await;
    let read_only = oidc.token(&resource, "tools:read").await;
    let response = first_round(running.addr, Some(&bearer(&read_only))).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let challenge = challenge(&response);
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(
        challenge.contains("scope=\"tools:deploy tools:read\""),
        "every needed scope, in one challenge: {challenge}"
    );
    assert!(challenge.contains("resource_metadata="), "{challenge}");
    // tools/list needs only tools:read.
    let (status, _) = Post::mcp(running.addr)
        .rpc(&saga_examples::harness::http::with_meta(
            saga_examples::harness::http::request(1, "tools/list", json!({})),
        ))
        .header("authorization", &bearer(&read_only))
        .send()
        .await;
    assert_eq!(status, StatusCode::OK);
    let admin = oidc.token(&resource, "tools:admin").await;
    let call = Call::deploy().authorization(&bearer(&admin));
    assert_eq!(deploy_to_the_end(running.addr, &call).await, DEPLOYED);
}

/// A token in the query string is refused (MCP: the header only).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_in_the_query_string_is_refused() {
    let oidc = Oidc::start().await;
    let (running, resource) = serve(&oidc, |auth| auth).await;
    let token = oidc.token(&resource, "tools:deploy").await;
    let response = Call::deploy()
        .post(running.addr)
        .path(&format!("/mcp?access_token={token}"))
        .response()
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(challenge(&response).contains("invalid_request"));
}

/// A token of another subject (another client of the same issuer, with every scope)
/// cannot resume the first subject's saga.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_subjects_token_cannot_resume_a_saga() {
    let oidc = Oidc::start().await;
    let (running, resource) = serve(&oidc, |auth| auth).await;
    let mine = oidc.token(&resource, "tools:deploy").await;
    let theirs = oidc.token_of(OTHER_CLIENT, &resource, "tools:deploy").await;
    let call = Call::deploy().authorization(&bearer(&mine));
    let (status, body) = call.send(running.addr).await;
    let (state, _) = input_required(status, &body);
    let stolen = Call::deploy().authorization(&bearer(&theirs)).resume(
        state,
        saga_examples::harness::http::accept_target("production"),
    );
    let (status, body) = stolen.send(running.addr).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["error"]["code"], -32602, "{body}");
}

/// A 2025-11-25 session is bound to its subject: a request on it with another subject's
/// token is refused as an unknown session; its own subject completes the deploy saga in
/// it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_bound_to_its_subject() {
    let oidc = Oidc::start().await;
    let (running, resource) = serve(&oidc, |auth| auth).await;
    let mine = bearer(&oidc.token(&resource, "tools:deploy").await);
    let theirs = bearer(&oidc.token_of(OTHER_CLIENT, &resource, "tools:deploy").await);
    let url = running.url();
    let session = Session::open_as(
        &url,
        Some(&mine),
        json!({"elicitation": {}, "sampling": {}}),
    )
    .await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    let intruder = saga_examples::harness::session::in_session(&url, session.id(), Some(&theirs))
        .json(&list)
        .response()
        .await;
    assert_eq!(intruder.status(), StatusCode::NOT_FOUND);
    let answer = session.ask(list).await;
    assert!(answer["result"]["tools"].is_array(), "{answer}");
    // The deploy saga, in the session: the server asks during the call.
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "complex_tool", "arguments": {"initial_arg": "x"}}});
    let mut events = session.request(call).await;
    let result = loop {
        let message = events.next().await.expect("the call's messages");
        match message["method"].as_str() {
            Some("elicitation/create") => {
                session
                    .answer(
                        &message,
                        json!({"action": "accept", "content": {"target": "production"}}),
                    )
                    .await;
            }
            Some("sampling/createMessage") => {
                session
                    .answer(
                        &message,
                        json!({"role": "assistant", "content": {"type": "text", "text": "Yes."}, "model": "m"}),
                    )
                    .await;
            }
            _ if message["id"] == 7 => break message,
            _ => {}
        }
    };
    assert_eq!(result["result"]["content"][0]["text"], DEPLOYED, "{result}");
}

/// Opaque tokens, verified by introspection at the authorization server; one of another
/// resource is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opaque_tokens_are_introspected() {
    let oidc = Oidc::start_with(300, Format::Opaque).await;
    let (running, resource) = serve(&oidc, |auth| {
        auth.verifier(Introspection::new(
            &oidc.issuer,
            INTROSPECTOR.0,
            INTROSPECTOR.1,
        ))
    })
    .await;
    let token = oidc.token(&resource, "tools:deploy").await;
    assert_eq!(token.split('.').count(), 1, "an opaque token");
    let call = Call::deploy().authorization(&bearer(&token));
    assert_eq!(deploy_to_the_end(running.addr, &call).await, DEPLOYED);
    let elsewhere = oidc.token("http://127.0.0.1:1/other", "tools:deploy").await;
    let response = first_round(running.addr, Some(&bearer(&elsewhere))).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let response = first_round(running.addr, Some(&bearer("not-a-token-at-all"))).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    // One bad token sent again and again is introspected once: a repeat is refused as it
    // was, without asking the authorization server.
    let before = oidc.introspections().await;
    for _ in 0..50 {
        let response = first_round(running.addr, Some(&bearer("repeated-bad-token"))).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    }
    // A token longer than any issued is refused without being sent anywhere.
    let huge = "x".repeat(9 * 1024);
    let response = first_round(running.addr, Some(&bearer(&huge))).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let asked = oidc.introspections().await - before;
    assert_eq!(
        asked, 1,
        "the issuer was asked {asked} times about one token"
    );
}

/// A caller without a token is answered 401 from the headers alone: a body that never
/// comes (where scopes make the server read bodies) does not hold the connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_token_is_refused_before_the_body_is_read() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let oidc = Oidc::start().await;
    let (running, _) = serve(&oidc, |auth| auth).await;
    let mut stream = tokio::net::TcpStream::connect(running.addr)
        .await
        .expect("connected");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000000\r\n\r\n{{",
        running.addr
    );
    stream.write_all(head.as_bytes()).await.expect("sent");
    let mut answer = vec![0u8; 512];
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut answer))
        .await
        .expect("answered without the body")
        .expect("read");
    let answer = String::from_utf8_lossy(&answer[..read]);
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
}

/// `tools/resumeSaga` (seed 000) names its tool in its token: a token without the tool's
/// scope is refused (403) there too, and `requests/resume` needs every tool's scopes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saga_resumed_in_another_format_needs_its_tools_scopes() {
    let oidc = Oidc::start().await;
    let (running, resource) = serve(&oidc, |auth| auth).await;
    let full = bearer(&oidc.token(&resource, "tools:deploy").await);
    let partial = bearer(&oidc.token(&resource, "tools:read").await);
    let send = |who: &str, id: u64, method: &str, params: Value| {
        Post::mcp(running.addr)
            .rpc(&saga_examples::harness::http::with_meta(
                saga_examples::harness::http::request(id, method, params),
            ))
            .header("authorization", who)
            .response()
    };
    let called = send(
        &full,
        1,
        "tools/callSaga",
        json!({"name": "complex_tool", "arguments": {"initial_arg": "x"}}),
    )
    .await;
    assert_eq!(called.status(), StatusCode::OK);
    let body: Value = called.json().await.expect("JSON");
    let saga_token = body["result"]["sagaToken"]
        .as_str()
        .expect("a saga token")
        .to_owned();
    let resumed = send(
        &partial,
        2,
        "tools/resumeSaga",
        json!({"sagaToken": saga_token, "completedSteps": []}),
    )
    .await;
    assert_eq!(resumed.status(), StatusCode::FORBIDDEN);
    assert!(challenge(&resumed).contains("scope=\"tools:deploy\""));
    let resumed = send(&partial, 3, "requests/resume", json!({"resumeToken": "x"})).await;
    assert_eq!(resumed.status(), StatusCode::FORBIDDEN);
}

// ---------------------------------------------------------------------------------------
// Forging
// ---------------------------------------------------------------------------------------

fn b64(value: &Value) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
}

/// A JWT's header and payload, read, and its signature.
fn split(token: &str) -> (Value, Value, String) {
    let mut parts = token.split('.');
    let read = |part: Option<&str>| -> Value {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(part.expect("a part"))
            .expect("base64url");
        serde_json::from_slice(&bytes).expect("JSON")
    };
    let header = read(parts.next());
    let payload = read(parts.next());
    (
        header,
        payload,
        parts.next().expect("a signature").to_owned(),
    )
}

/// `token` with its header's key id replaced (its signature kept: it no longer verifies).
fn resign_kid(token: &str, kid: &str) -> String {
    let (mut header, payload, signature) = split(token);
    header["kid"] = json!(kid);
    format!("{}.{}.{signature}", b64(&header), b64(&payload))
}

/// With `hide_unauthorized_tools`, `tools/list` leaves out the tools the token lacks a
/// scope for; without, it lists them (and a call is answered 403).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_may_hide_what_the_token_cannot_call() {
    let oidc = Oidc::start().await;
    for hide in [true, false] {
        let (running, resource) = serve(&oidc, |auth| auth.hide_unauthorized_tools(hide)).await;
        let names = |token: String| {
            let addr = running.addr;
            async move {
                let (_, body) = Post::mcp(addr)
                    .rpc(&saga_examples::harness::http::with_meta(
                        saga_examples::harness::http::request(1, "tools/list", json!({})),
                    ))
                    .header("authorization", &bearer(&token))
                    .send()
                    .await;
                body["result"]["tools"]
                    .as_array()
                    .map(|tools| {
                        tools
                            .iter()
                            .filter_map(|t| t["name"].as_str().map(str::to_owned))
                            .collect::<Vec<_>>()
                    })
                    .unwrap_or_default()
            }
        };
        let without = names(oidc.token(&resource, "tools:read").await).await;
        let with = names(oidc.token(&resource, "tools:deploy").await).await;
        assert_eq!(with, ["complex_tool", "release"]);
        assert_eq!(without.is_empty(), hide, "hide {hide}: {without:?}");
        // A list filtered for the token is no intermediary's to serve to another caller
        // (issue 72, finding 5: both lists were `public` for 300 s).
        for scopes in ["tools:read", "tools:deploy"] {
            let (_, body) = Post::mcp(running.addr)
                .rpc(&saga_examples::harness::http::with_meta(
                    saga_examples::harness::http::request(1, "tools/list", json!({})),
                ))
                .header(
                    "authorization",
                    &bearer(&oidc.token(&resource, scopes).await),
                )
                .send()
                .await;
            let expected = if hide { "private" } else { "public" };
            assert_eq!(
                body["result"]["cacheScope"], expected,
                "hide {hide}, {scopes}: {body}"
            );
        }
    }
}

/// A task (tasks extension) runs to its end with a token, and is bound to its subject:
/// another subject's token neither reads nor cancels it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_subjects_token_cannot_read_a_task() {
    use saga_examples::harness::tasks::TaskClient;
    let oidc = Oidc::start().await;
    let listener = bind_local().await;
    let addr = listener.local_addr().expect("an address");
    let resource = format!("http://{addr}/mcp");
    let auth = ResourceServer::new(&resource)
        .expect("a resource URI")
        .authorization_server(&oidc.issuer)
        .verifier(JwtVerifier::new(&oidc.issuer));
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(saga_examples::migrate::migrate)
        .tasks(TaskStore::memory())
        .authorization(auth)
        .build()
        .expect("the server builds");
    let _running = serve_on(listener, server);
    let mine = bearer(&oidc.token(&resource, "tools:read").await);
    let theirs = bearer(&oidc.token_of(OTHER_CLIENT, &resource, "tools:read").await);
    let owner = TaskClient::new().authorization(&mine);
    let id = owner
        .create(
            addr,
            "migrate",
            json!({"tables": 2, "millis_per_table": 10, "label": "t"}),
        )
        .await;
    let settled = owner.settled(addr, &id, Duration::from_secs(20)).await;
    assert_eq!(
        settled["status"], "completed",
        "the owner's task ran: {settled}"
    );
    let stranger = TaskClient::new().authorization(&theirs);
    let answer = stranger
        .request(addr, "tasks/get", json!({"taskId": id}))
        .await;
    assert!(answer.get("result").is_none(), "{answer}");
    assert!(answer["error"]["code"].is_i64(), "{answer}");
    let cancel = stranger
        .request(addr, "tasks/cancel", json!({"taskId": id}))
        .await;
    assert!(cancel.get("result").is_none(), "{cancel}");
}

/// `saga call` with `--token` (or `SAGA_TOKEN`) completes the saga; without one, it says
/// where to get a token (the authorization server the metadata names) and the scopes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saga_call_sends_a_token_and_explains_a_challenge() {
    let oidc = Oidc::start().await;
    let (running, resource) = serve(&oidc, |auth| auth).await;
    let saga = saga_examples::harness::process::saga_cli();
    let answers = saga_examples::harness::process::AnswersFile::new(
        "auth",
        r#"{"elicit-1": {"target": "production"}, "sample-2": "Yes."}"#,
    );
    let call = |token: Option<String>| {
        let mut command = tokio::process::Command::new(&saga);
        command
            .arg("call")
            .arg("--answers")
            .arg(answers.path())
            .arg(running.url())
            .args(["complex_tool", "initial_arg=x"])
            .env("NO_COLOR", "1")
            .env_remove("SAGA_TOKEN");
        if let Some(token) = token {
            command.env("SAGA_TOKEN", token);
        }
        command.output()
    };
    let refused = call(None).await.expect("saga runs");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        stderr.contains(&format!("get one from {}", oidc.issuer)),
        "{stderr}"
    );
    assert!(stderr.contains("tools:deploy"), "{stderr}");
    assert!(stderr.contains("--token"), "{stderr}");
    // A read-only token: the session opens, the call is refused with 403; the CLI says
    // which scope is missing (issue 72, finding 9: it said only "Insufficient scope").
    let read_only = oidc.token(&resource, "tools:read").await;
    let refused = call(Some(read_only)).await.expect("saga runs");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(stderr.contains("lacks a scope"), "{stderr}");
    assert!(stderr.contains("\"tools:deploy\""), "{stderr}");
    let token = oidc.token(&resource, "tools:deploy").await;
    let done = call(Some(token)).await.expect("saga runs");
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert!(
        done.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(stdout.contains(DEPLOYED), "{stdout}");
}

/// `saga_runtime::testing::TestTokens` (issue 76): a tool's scopes tested without an
/// authorization server. A token without the tool's scope is refused with 403 and the
/// scope named, one with it runs the tool, and a token the verifier does not know gets
/// 401.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_tokens_stand_for_subjects_and_their_scopes() {
    use saga_runtime::testing::TestTokens;
    let listener = bind_local().await;
    let addr = listener.local_addr().expect("an address");
    let auth = ResourceServer::new(format!("http://{addr}/mcp"))
        .expect("a resource URI")
        .authorization_server(TestTokens::ISSUER)
        .verifier(
            TestTokens::new()
                .token("t-read", "alice", ["mcp:use"])
                .token("t-ops", "ops", ["mcp:use", "tools:deploy"]),
        )
        .tool_scopes("complex_tool", ["tools:deploy"])
        .tool_scopes("release", ["tools:deploy"]);
    let server = deploy::builder(KeyRing::parse(KEY_HEX).expect("a key"))
        .expect("a builder")
        .authorization(auth)
        .build()
        .expect("the server builds");
    let running = serve_on(listener, server);
    let response = first_round(running.addr, Some(&bearer("t-read"))).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(
        challenge(&response).contains("tools:deploy"),
        "{}",
        challenge(&response)
    );
    assert_eq!(status_with(running.addr, "t-ops").await, StatusCode::OK);
    assert_eq!(
        status_with(running.addr, "t-made-up").await,
        StatusCode::UNAUTHORIZED
    );
}
