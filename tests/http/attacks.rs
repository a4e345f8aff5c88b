//! Attacks on the sealed `requestState` and on `inputResponses`, over raw HTTP.
//!
//! The token attacks and the hostile answers go to a running `deploy` example *process*
//! (spawned with a fixed `SAGA_KEYS`, killed by a guard at the end): every forged, cut,
//! stolen or rebound token must get the one refusal `-32602 Invalid or expired
//! requestState`, never a result and never HTTP 5xx, and the process must still be alive
//! and serving afterwards. Attacks that need a second tool, a second key or a second
//! build use in-process servers sharing one key.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use saga_examples::deploy;
use saga_examples::harness::http::{
    Call, DEPLOY, DEPLOYED, Post, StatusCode, accept_target, asks, client, complete, deploy_round1,
    deploy_round2, deploy_to_the_end, deploy_token_refused_after, deploy_token_refused_then_taken,
    one_shot_client, refusal_problem, refused, verdict,
};
use saga_examples::harness::process::ServerProcess;
use saga_examples::harness::serving::{Running, serve_local};
use saga_runtime::engine::SagaTool as _;
use saga_runtime::prelude::*;
use saga_runtime::serve::SagaServerBuilder;
use saga_runtime::state::DEFAULT_MAX_TOKEN_LEN;
use serde_json::{Value, json};

/// The fixed key of the spawned processes (hex), and the same key as bytes.
const KEY_HEX: &str = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a";
const KEY: [u8; 32] = [0x5a; 32];
/// Requests in flight at once in the bulk attacks.
const IN_FLIGHT: usize = 16;

/// A whole deploy saga on `addr`: the server is alive and serving.
async fn full_saga(addr: SocketAddr) {
    assert_eq!(deploy_to_the_end(addr, &Call::deploy()).await, DEPLOYED);
}

/// Sends round 3 of the saga with each of `tokens` (and a valid answer, so that a token
/// that wrongly opened would complete), `IN_FLIGHT` at a time; returns the failures.
async fn all_refused(addr: SocketAddr, tokens: Vec<String>) -> Vec<String> {
    let tokens = Arc::new(tokens);
    let next = Arc::new(AtomicUsize::new(0));
    let client = client();
    let mut workers = Vec::new();
    for _ in 0..IN_FLIGHT {
        let (tokens, next, client) = (tokens.clone(), next.clone(), client.clone());
        workers.push(tokio::spawn(async move {
            let mut failures = Vec::new();
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(token) = tokens.get(index) else {
                    break failures;
                };
                let (status, body) = Call::deploy_verdict(token.clone(), "Yes")
                    .send_with(&client, addr)
                    .await;
                if let Some(problem) = refusal_problem(status, &body) {
                    failures.push(format!("token #{index} {token:?}: {problem}"));
                }
            }
        }));
    }
    let mut failures = Vec::new();
    for worker in workers {
        failures.extend(worker.await.expect("a worker finishes"));
    }
    failures
}

/// Reports how many of `what` were not refused (`failures`), and fails on any.
#[track_caller]
fn none_got_through(what: &str, failures: Vec<String>) {
    eprintln!("{what}, {} not refused", failures.len());
    assert!(
        failures.is_empty(),
        "{:#?}",
        &failures[..failures.len().min(5)]
    );
}

// ---------------------------------------------------------------------------------------
// Tokens against the running process
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bit_flip_and_every_truncation_is_refused_by_a_running_server() {
    let mut server = ServerProcess::deploy(KEY_HEX);
    let token = deploy_round2(server.addr, &Call::deploy()).await;
    let bytes = URL_SAFE_NO_PAD
        .decode(&token)
        .expect("tokens are base64url without padding");

    let mut flipped = Vec::with_capacity(bytes.len() * 8);
    for bit in 0..bytes.len() * 8 {
        let mut forged = bytes.clone();
        forged[bit / 8] ^= 1 << (bit % 8);
        flipped.push(URL_SAFE_NO_PAD.encode(&forged));
    }
    let what = format!(
        "bit flips: {} attempts on a {}-byte ({}-char) round-2 token",
        flipped.len(),
        bytes.len(),
        token.len()
    );
    none_got_through(&what, all_refused(server.addr, flipped).await);

    let truncated: Vec<String> = (0..token.len())
        .map(|keep| token[..keep].to_owned())
        .collect();
    let what = format!(
        "truncations: {} attempts (every prefix, 0..{} chars)",
        truncated.len(),
        token.len()
    );
    none_got_through(&what, all_refused(server.addr, truncated).await);

    // Still alive, and the untouched token still finishes its saga.
    server.assert_alive();
    let (status, body) = Call::deploy_verdict(token, "Yes").send(server.addr).await;
    assert_eq!(complete(status, &body).0, DEPLOYED);
    full_saga(server.addr).await;
    server.assert_alive();
}

#[tokio::test]
async fn a_token_of_another_principal_or_other_arguments_is_refused_by_a_running_server() {
    let mut server = ServerProcess::deploy(KEY_HEX);
    let alice = deploy_round2(server.addr, &Call::deploy().authorization("Bearer alice")).await;
    let resume = Call::deploy_verdict(alice.clone(), "Yes");

    // The principal is a digest of the header's bytes, so any other spelling is another
    // principal. (A trailing space is not: HTTP strips it before the server sees it.)
    for thief in [
        Some("Bearer bob"),
        Some("Bearer Alice"),
        Some("bearer alice"),
        None,
    ] {
        let mut call = resume.clone();
        if let Some(thief) = thief {
            call = call.authorization(thief);
        }
        let (status, body) = call.send(server.addr).await;
        if let Some(problem) = refusal_problem(status, &body) {
            panic!("Alice's token presented as {thief:?}: {problem}");
        }
    }

    let theirs = deploy_round2(server.addr, &Call::deploy()).await;
    for arguments in [
        json!({"initial_arg": "y"}),
        json!({"initial_arg": "x", "replicas": 3}),
        json!({"initial_arg": "x", "replicas": null}),
        json!({"initial_arg": "X"}),
        json!({"initial_arg": ""}),
    ] {
        let (status, body) = Call::deploy()
            .arguments(arguments.clone())
            .state(theirs.clone())
            .answers(verdict("Yes"))
            .send(server.addr)
            .await;
        if let Some(problem) = refusal_problem(status, &body) {
            panic!("the token presented with {arguments}: {problem}");
        }
    }

    server.assert_alive();
    // The rightful holders finish.
    let (status, body) = resume.authorization("Bearer alice").send(server.addr).await;
    assert_eq!(complete(status, &body).0, DEPLOYED);
    let (status, body) = Call::deploy_verdict(theirs, "Yes").send(server.addr).await;
    assert_eq!(complete(status, &body).0, DEPLOYED);
    server.assert_alive();
}

// ---------------------------------------------------------------------------------------
// Tokens against in-process servers: another tool, expiry, a retired key, another build
// ---------------------------------------------------------------------------------------

/// A second tool with the deploy tool's arguments and first request.
#[saga_tool]
async fn rollback_tool(initial_arg: String, replicas: Option<u32>) -> Result<String, SagaError> {
    let target: deploy::Target = elicit("Please provide the deployment target:").await?;
    Ok(format!(
        "Rolled {initial_arg} back on {} ({} replicas).",
        target.target,
        replicas.unwrap_or(1)
    ))
}

/// Build 1 of the `release` tool.
mod build_1 {
    use saga_runtime::prelude::*;

    #[saga_tool(name = "release")]
    pub async fn release_v1(initial_arg: String) -> Result<String, SagaError> {
        let go: bool = elicit(format!("Release {initial_arg}?")).await?;
        Ok(if go { "released" } else { "held" }.into())
    }
}

/// Build 2 of the `release` tool: the same name and arguments, other code.
mod build_2 {
    use saga_runtime::prelude::*;

    #[saga_tool(name = "release")]
    pub async fn release_v2(initial_arg: String) -> Result<String, SagaError> {
        let go: bool = elicit(format!("Release {initial_arg} now?")).await?;
        Ok(if go { "released now" } else { "held" }.into())
    }
}

/// Build 3 of the `release` tool: it saves another local at the same point.
mod build_3 {
    use saga_runtime::prelude::*;

    #[saga_tool(name = "release")]
    pub async fn release_v3(initial_arg: String) -> Result<String, SagaError> {
        let asked_at = initial_arg.len() as u64;
        let go: bool = elicit(format!("Release {initial_arg}?")).await?;
        Ok(format!(
            "{} after {asked_at}",
            if go { "released" } else { "held" }
        ))
    }
}

/// Build 4 of the `release` tool: build 2's layout, another meaning (`version = 4`).
mod build_4 {
    use saga_runtime::prelude::*;

    #[saga_tool(name = "release", version = 4)]
    pub async fn release_v4(initial_arg: String) -> Result<String, SagaError> {
        let go: bool = elicit(format!("Hold {initial_arg}?")).await?;
        Ok(if go { "held" } else { "released" }.into())
    }
}

fn key_ring(keys: &[[u8; 32]]) -> KeyRing {
    KeyRing::from_keys(keys.iter().copied()).expect("a valid key ring")
}

async fn serve_tools(
    keys: &[[u8; 32]],
    configure: impl FnOnce(SagaServerBuilder) -> SagaServerBuilder,
) -> Running {
    let builder = SagaServer::builder().keys(key_ring(keys));
    serve_local(configure(builder).build().expect("the server builds")).await
}

#[tokio::test]
async fn a_token_of_one_tool_is_refused_by_another() {
    let server = serve_tools(&[KEY], |b| b.tool(deploy::complex_tool).tool(rollback_tool)).await;
    let addr = server.addr;
    let deploy_token = deploy_round1(addr, &Call::deploy()).await;
    let (status, body) = Call::deploy().name("rollback_tool").send(addr).await;
    let rollback_token = asks(status, &body, &["elicit-1"]);

    for (name, token) in [
        ("rollback_tool", deploy_token.clone()),
        (DEPLOY, rollback_token.clone()),
    ] {
        let (status, body) = Call::deploy()
            .name(name)
            .state(token)
            .answers(accept_target("production"))
            .send(addr)
            .await;
        refused(status, &body);
    }
    // Each token still works for its own tool.
    let (status, body) = Call::deploy_target(deploy_token).send(addr).await;
    asks(status, &body, &["sample-2"]);
    let (status, body) = Call::deploy()
        .name("rollback_tool")
        .state(rollback_token)
        .answers(accept_target("production"))
        .send(addr)
        .await;
    assert_eq!(
        complete(status, &body).0,
        "Rolled x back on production (1 replicas)."
    );
}

#[tokio::test]
async fn an_expired_token_is_refused() {
    let server = serve_tools(&[KEY], |b| {
        b.ttl(Duration::ZERO)
            .leeway(Duration::ZERO)
            .tool(deploy::complex_tool)
    })
    .await;
    deploy_token_refused_after(server.addr, Duration::from_millis(2100)).await;
}

#[tokio::test]
async fn a_token_of_a_retired_key_is_refused() {
    let old = [0x01; 32];
    let new = [0x02; 32];
    let before = serve_tools(&[old], |b| b.tool(deploy::complex_tool)).await;
    let after = serve_tools(&[new], |b| b.tool(deploy::complex_tool)).await;
    let during = serve_tools(&[new, old], |b| b.tool(deploy::complex_tool)).await;
    let token = deploy_round1(before.addr, &Call::deploy()).await;
    // While the old key was still in the ring, the same token opened.
    deploy_token_refused_then_taken(token, after.addr, during.addr).await;
}

#[tokio::test]
async fn a_token_of_an_older_build_resumes_where_the_point_saves_the_same_and_is_refused_elsewhere()
{
    assert_eq!(build_1::release_v1.tool().name, "release");
    assert_eq!(build_2::release_v2.tool().name, "release");

    let old = serve_tools(&[KEY], |b| b.tool(build_1::release_v1)).await;
    let new = serve_tools(&[KEY], |b| b.tool(build_2::release_v2)).await;
    let other_layout = serve_tools(&[KEY], |b| b.tool(build_3::release_v3)).await;
    let other_version = serve_tools(&[KEY], |b| b.tool(build_4::release_v4)).await;
    let yes = json!({"elicit-1": {"action": "accept", "content": {"value": true}}});

    let start = Call::deploy().name("release");
    let (status, body) = start.send(old.addr).await;
    let old_token = asks(status, &body, &["elicit-1"]);
    let (status, body) = start.send(new.addr).await;
    let new_token = asks(status, &body, &["elicit-1"]);

    let resume = |token: &str| start.clone().state(token).answers(yes.clone());
    // Only a message and the result changed: each build resumes the other's token, on
    // its own code (a rolling upgrade, in both directions).
    let (status, body) = resume(&old_token).send(new.addr).await;
    assert_eq!(complete(status, &body).0, "released now");
    let (status, body) = resume(&new_token).send(old.addr).await;
    assert_eq!(complete(status, &body).0, "released");
    // Another local saved at the point, or another version: refused before decoding.
    for server in [&other_layout, &other_version] {
        let (status, body) = resume(&old_token).send(server.addr).await;
        refused(status, &body);
    }
}

#[tokio::test]
async fn a_removed_tool_kept_only_as_a_retired_copy_finishes_its_calls_and_starts_none() {
    let old = serve_tools(&[KEY], |b| b.tool(build_1::release_v1)).await;
    let removed = serve_tools(&[KEY], |b| b.retired(build_1::release_v1)).await;
    let yes = json!({"elicit-1": {"action": "accept", "content": {"value": true}}});
    let start = Call::deploy().name("release");
    let (status, body) = start.send(old.addr).await;
    let token = asks(status, &body, &["elicit-1"]);
    let (status, body) = start
        .clone()
        .state(&token)
        .answers(yes)
        .send(removed.addr)
        .await;
    assert_eq!(complete(status, &body).0, "released");
    // A fresh call finds no tool.
    let (status, body) = start.send(removed.addr).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["error"]["code"], -32602, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("unknown tool")),
        "{body}"
    );
}

// ---------------------------------------------------------------------------------------
// Hostile inputResponses against the running process
// ---------------------------------------------------------------------------------------

/// What the server made of one hostile request.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// A JSON-RPC error with this code.
    Error(i64),
    /// `input_required` asking for these keys again.
    Asked(Vec<String>),
    /// An HTTP error status without a JSON-RPC body (only 4xx is acceptable).
    Http(u16),
}

/// Classifies `(status, body)`; panics on a result other than `input_required` and on
/// HTTP 5xx.
#[track_caller]
fn outcome(label: &str, status: StatusCode, body: &Value) -> Outcome {
    let shown = body.to_string();
    let shown = &shown[..shown.len().min(400)];
    assert!(!status.is_server_error(), "{label}: HTTP {status}: {shown}");
    if let Some(error) = body.get("error") {
        assert!(body.get("result").is_none(), "{label}: {shown}");
        return Outcome::Error(error["code"].as_i64().expect("an error code"));
    }
    if let Some(result) = body.get("result") {
        assert_eq!(
            result["resultType"], "input_required",
            "{label}: a hostile answer got a result: {shown}"
        );
        let keys = result["inputRequests"]
            .as_object()
            .map(|requests| requests.keys().cloned().collect())
            .unwrap_or_default();
        return Outcome::Asked(keys);
    }
    assert!(status.is_client_error(), "{label}: HTTP {status}: {shown}");
    Outcome::Http(status.as_u16())
}

/// What a body over the 4 MiB limit got: HTTP 413, or (when the server answered 413 and
/// closed the connection before the client finished uploading) a transport error.
#[track_caller]
fn over_the_limit(sent: Result<(StatusCode, Value), reqwest::Error>) -> String {
    match sent {
        Ok((status, body)) => {
            assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
            assert!(body.get("result").is_none(), "{body}");
            format!("HTTP {status}: {body}")
        }
        Err(error) => {
            assert!(error.is_request() || error.is_body(), "{error:?}");
            format!("connection closed during the upload: {error:?}")
        }
    }
}

/// A `tools/call` body resuming `token` whose `inputResponses` is the raw JSON text
/// `responses` (so that it can be nested deeper than a `Value` should be).
fn raw_resume(token: &str, responses: &str) -> String {
    let mut body = Call::deploy().state(token).message();
    body["params"]["inputResponses"] = json!("@RESPONSES@");
    serde_json::to_string(&body)
        .expect("a JSON body")
        .replace("\"@RESPONSES@\"", responses)
}

/// The round that sends `body` (a `tools/call` of the deploy tool) as it is.
fn raw_round(addr: SocketAddr, client: &reqwest::Client, body: String) -> Post {
    Call::deploy().post(addr).with_client(client).body(body)
}

#[tokio::test]
async fn hostile_input_responses_get_errors_or_are_asked_again() {
    const MIB: usize = 1024 * 1024;
    let mut server = ServerProcess::deploy(KEY_HEX);
    let addr = server.addr;
    let client = client();
    let token = deploy_round1(addr, &Call::deploy()).await;
    let rss_before = server.rss_kib();

    // Just under the default 1 MiB body limit, so that the request reaches the saga.
    let huge = "x".repeat(MIB - 4096);
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let deep_objects = format!("{}1{}", "{\"a\":".repeat(10_000), "}".repeat(10_000));
    let mut many_keys = serde_json::Map::new();
    for i in 0..20_000 {
        many_keys.insert(
            format!("extra-{i}"),
            json!({"action": "accept", "content": {"target": i}}),
        );
    }
    let many_keys = Value::Object(many_keys);
    let mut many_keys_and_answer = many_keys.clone();
    many_keys_and_answer["elicit-1"] = json!("accept");

    let cases: Vec<(&str, String)> = vec![
        ("null inputResponses", "null".into()),
        ("a number", "5".into()),
        ("an array", "[1, 2, 3]".into()),
        ("a string", "\"accept\"".into()),
        ("elicit-1: null", r#"{"elicit-1": null}"#.into()),
        ("elicit-1: a number", r#"{"elicit-1": 42}"#.into()),
        (
            "elicit-1: an array",
            r#"{"elicit-1": [{"action": "accept"}]}"#.into(),
        ),
        ("elicit-1: a string", r#"{"elicit-1": "accept"}"#.into()),
        ("elicit-1: a bool", r#"{"elicit-1": true}"#.into()),
        ("action: a number", r#"{"elicit-1": {"action": 1}}"#.into()),
        (
            "content: a number",
            r#"{"elicit-1": {"action": "accept", "content": 7}}"#.into(),
        ),
        (
            "content: an array",
            r#"{"elicit-1": {"action": "accept", "content": ["production"]}}"#.into(),
        ),
        (
            "target: an object",
            r#"{"elicit-1": {"action": "accept", "content": {"target": {"$ne": null}}}}"#.into(),
        ),
        (
            "a sampling answer for the elicitation",
            format!(r#"{{"elicit-1": {}}}"#, verdict("Yes")["sample-2"]),
        ),
        (
            "1 MiB string as the ElicitResult",
            format!(r#"{{"elicit-1": "{huge}"}}"#),
        ),
        (
            "1 MiB string as the action",
            format!(r#"{{"elicit-1": {{"action": "{huge}"}}}}"#),
        ),
        (
            "1 MiB string as the content",
            format!(r#"{{"elicit-1": {{"action": "accept", "content": "{huge}"}}}}"#),
        ),
        (
            "1 MiB key",
            format!(r#"{{"{huge}": {{"action": "accept"}}}}"#),
        ),
        (
            "10,000 nested arrays as the content",
            format!(r#"{{"elicit-1": {{"action": "accept", "content": {deep}}}}}"#),
        ),
        (
            "10,000 nested objects as the content",
            format!(r#"{{"elicit-1": {{"action": "accept", "content": {deep_objects}}}}}"#),
        ),
        ("10,000 nested arrays as inputResponses", deep.clone()),
        ("20,000 extra keys", many_keys.to_string()),
        (
            "20,000 extra keys and a malformed answer",
            many_keys_and_answer.to_string(),
        ),
    ];

    let mut report = Vec::new();
    for (label, responses) in &cases {
        let body = raw_resume(&token, responses);
        let size = body.len();
        let (status, body) = raw_round(addr, &client, body)
            .try_send()
            .await
            .unwrap_or_else(|error| panic!("{label}: {error:?}"));
        let got = outcome(label, status, &body);
        match &got {
            Outcome::Error(_) => {}
            Outcome::Asked(keys) => assert_eq!(keys, &["elicit-1"], "{label}: {body}"),
            // The nesting limit (64) stops the body before JSON-RPC sees it.
            Outcome::Http(400) if label.contains("nested") => {}
            Outcome::Http(code) => panic!("{label}: HTTP {code} under the body limit: {body}"),
        }
        report.push(format!("{label} ({size} bytes): {got:?}"));
        server.assert_alive();
    }

    // A target of almost 1 MiB is a valid string: the saga may go on (asking `sample-2`), or
    // refuse; it must not answer with a result or fail.
    let body = raw_resume(
        &token,
        &format!(r#"{{"elicit-1": {{"action": "accept", "content": {{"target": "{huge}"}}}}}}"#),
    );
    let size = body.len();
    let (status, body) = raw_round(addr, &client, body).send().await;
    let got = outcome("1 MiB target", status, &body);
    let next_token_len = body["result"]["requestState"].as_str().map(str::len);
    report.push(format!(
        "1 MiB target ({size} bytes): {got:?}, response {} bytes, next token {next_token_len:?} \
         chars (cap {DEFAULT_MAX_TOKEN_LEN}; see `the_server_never_issues_a_token_over_its_own_cap`)",
        body.to_string().len()
    ));
    if let Some(next) = body["result"]["requestState"].as_str() {
        // What it issued goes on: the target (one letter, repeated) is deflated into a
        // token far under the cap, which comes back in a body far under the limit.
        assert!(next.len() < 16 * 1024, "{} characters", next.len());
        let body = Call::deploy_verdict(next, "No").message();
        let body = serde_json::to_string(&body).expect("a JSON body");
        let size = body.len();
        let (status, reply) = raw_round(addr, &one_shot_client(), body).send().await;
        assert_eq!(status, StatusCode::OK, "{reply}");
        assert_eq!(
            reply["result"]["content"][0]["text"], "Deployment postponed.",
            "{reply}"
        );
        report.push(format!("  its next round ({size} bytes): HTTP {status}"));
    }
    server.assert_alive();

    // Over rmcp's 4 MiB body limit.
    let over = "y".repeat(5 * MIB);
    let body = raw_resume(
        &token,
        &format!(r#"{{"elicit-1": {{"action": "accept", "content": {{"target": "{over}"}}}}}}"#),
    );
    let size = body.len();
    let got = over_the_limit(raw_round(addr, &one_shot_client(), body).try_send().await);
    report.push(format!("5 MiB content ({size} bytes): {got}"));
    server.assert_alive();

    let rss_after = server.rss_kib();
    for line in &report {
        eprintln!("hostile: {line}");
    }
    eprintln!(
        "server RSS: {rss_before} KiB before the hostile batch, {rss_after} KiB after ({} requests)",
        cases.len() + 2
    );
    assert!(rss_after < 1024 * 1024, "RSS {rss_after} KiB is over 1 GiB");

    // Still serving: the original token and a fresh saga both finish.
    let (status, body) = Call::deploy_target(token).send_with(&client, addr).await;
    asks(status, &body, &["sample-2"]);
    full_saga(addr).await;
    server.assert_alive();
}

/// A 900 KiB form answer (under the 1 MiB body limit) is a valid `target`, and the next
/// round's token would carry it (in the saved local and in the sampling prompt): over
/// 2 MiB, far over the server's own 64 KiB cap, so no client could send it back (with a
/// 3 MiB answer a request once got an 11 MiB answer: the bug this test found). The server
/// now refuses to seal a token it would refuse to open.
#[tokio::test]
async fn the_server_never_issues_a_token_over_its_own_cap() {
    let server = serve_tools(&[KEY], |b| b.tool(deploy::complex_tool)).await;
    let token = deploy_round1(server.addr, &Call::deploy()).await;
    // 900 KB that do not deflate (a state of them cannot shrink under the cap).
    let noise = saga_examples::harness::noise::noise(1, 900 * 1024);
    let (status, body) = Call::deploy()
        .state(token.clone())
        .answers(accept_target(noise))
        .send(server.addr)
        .await;
    assert!(!status.is_server_error(), "HTTP {status}");
    if let Some(next) = body["result"]["requestState"].as_str() {
        assert!(
            next.len() <= DEFAULT_MAX_TOKEN_LEN,
            "the server issued a {}-char requestState; it refuses any over {DEFAULT_MAX_TOKEN_LEN}",
            next.len()
        );
    }
    // Regression: it used to seal an 8 MiB token it would then refuse. Now the round is
    // refused as too large, as the client's doing: its answer is most of the state.
    assert_eq!(body["error"]["code"], -32602, "{body:#}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("send smaller answers")),
        "{body:#}"
    );
    // The same size of answer that deflates (one letter, 900 KB) seals into a token
    // well under the cap, which the server takes back.
    let (status, body) = Call::deploy()
        .state(token)
        .answers(accept_target("x".repeat(900 * 1024)))
        .send(server.addr)
        .await;
    assert!(status.is_success(), "HTTP {status}");
    let next = body["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("a next round: {body:#}"));
    assert!(next.len() < 16 * 1024, "{} characters", next.len());
}
