//! The error paths of a saga served over Streamable HTTP, driven with raw HTTP requests:
//! every refused `requestState`, missing, extra, malformed and off-schema answers,
//! capability gating, declines, token freshness, unknown tools, discovery and listing.
//!
//! Each test starts its own in-process server on an ephemeral port and speaks plain
//! JSON-RPC to it with the harness's raw-HTTP client (`saga_examples::harness::http`), so
//! what is asserted is exactly what a client sees.

use std::net::SocketAddr;
use std::time::Duration;

use saga_examples::deploy;
use saga_examples::harness::http::{
    Call, DEPLOY, DEPLOYED, PROTOCOL_VERSION, Post, StatusCode, accept_target, asks, complete,
    deploy_round1, deploy_round2, deploy_token_refused_after, deploy_token_refused_then_taken,
    input_required, jsonrpc_error, meta, refused, request, verdict,
};
use saga_examples::harness::serving::{Running, serve_local};
use saga_examples::harness::variant::Variant;
use saga_runtime::serve::SagaServer;
use saga_runtime::state::KeyRing;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------
// Serving
// ---------------------------------------------------------------------------------------

fn key_ring() -> KeyRing {
    KeyRing::from_keys([[7u8; 32]]).expect("one fixed key is a valid ring")
}

/// The deploy example's server, with the fixed test key.
async fn deploy_server() -> Running {
    serve_local(deploy::server(key_ring()).expect("the deploy server builds")).await
}

/// Changes one character in the middle of a base64url token to another base64url one.
fn flip(token: &str, at: usize) -> String {
    let mut chars: Vec<char> = token.chars().collect();
    chars[at] = if chars[at] == 'A' { 'B' } else { 'A' };
    chars.into_iter().collect()
}

// ---------------------------------------------------------------------------------------
// Refused tokens
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn tampered_token_is_refused() {
    let server = deploy_server().await;
    let token = deploy_round1(server.addr, &Call::deploy()).await;
    // The format and key tag, the point, the expiry, the nonce, the ciphertext, the
    // tag: a change anywhere is refused.
    for at in [
        0,
        3,
        10,
        20,
        40,
        token.len() / 2,
        token.len() - 3,
        token.len() - 1,
    ] {
        let tampered = flip(&token, at);
        assert_ne!(tampered, token);
        let (status, body) = Call::deploy_target(tampered).send(server.addr).await;
        refused(status, &body);
    }
    // The untouched token still works.
    let (status, body) = Call::deploy_target(token).send(server.addr).await;
    asks(status, &body, &["sample-2"]);
}

#[tokio::test]
async fn truncated_token_is_refused() {
    let server = deploy_server().await;
    let token = deploy_round1(server.addr, &Call::deploy()).await;
    for keep in [token.len() - 1, token.len() - 4, token.len() / 2, 60, 10, 1] {
        let (status, body) = Call::deploy_target(&token[..keep]).send(server.addr).await;
        refused(status, &body);
    }
}

#[tokio::test]
async fn garbage_token_is_refused() {
    let server = deploy_server().await;
    for garbage in [
        "garbage",
        "not a token at all!",
        "%%%%",
        "AAAAAAAAAAAAAAAA",
        "eyJhbGciOiJIUzI1NiJ9.e30.ZRrHA1JJJW8opsbCGfG_HACGpVUMN_a9IV7pAx_Zmeo",
    ] {
        let (status, body) = Call::deploy_target(garbage).send(server.addr).await;
        refused(status, &body);
    }
}

#[tokio::test]
async fn empty_token_is_refused() {
    let server = deploy_server().await;
    let (status, body) = Call::deploy_target("").send(server.addr).await;
    refused(status, &body);
    let (status, body) = Call::deploy().state("").send(server.addr).await;
    refused(status, &body);
}

#[tokio::test]
async fn token_of_another_key_is_refused() {
    let ours = deploy_server().await;
    let theirs =
        serve_local(deploy::server(KeyRing::ephemeral()).expect("the deploy server builds")).await;
    let token = deploy_round1(theirs.addr, &Call::deploy()).await;
    let (status, body) = Call::deploy_target(token).send(ours.addr).await;
    refused(status, &body);
}

#[tokio::test]
async fn token_of_another_principal_is_refused() {
    let server = deploy_server().await;
    let (status, body) = Call::deploy()
        .authorization("Bearer alice")
        .send(server.addr)
        .await;
    let token = asks(status, &body, &["elicit-1"]);

    let resume = Call::deploy_target(token.clone());
    let (status, body) = resume
        .clone()
        .authorization("Bearer bob")
        .send(server.addr)
        .await;
    refused(status, &body);
    // Nor without any credential.
    let (status, body) = resume.clone().send(server.addr).await;
    refused(status, &body);
    // Alice herself may resume.
    let (status, body) = resume.authorization("Bearer alice").send(server.addr).await;
    asks(status, &body, &["sample-2"]);
}

#[tokio::test]
async fn token_for_another_tool_is_refused() {
    let server = serve_local(
        SagaServer::builder()
            .keys(key_ring())
            .tool(deploy::complex_tool)
            .tool(Variant::of(deploy::complex_tool).named("complex_tool_copy"))
            .build()
            .expect("the server builds"),
    )
    .await;
    let token = deploy_round1(server.addr, &Call::deploy()).await;
    let (status, body) = Call::deploy()
        .name("complex_tool_copy")
        .state(token.clone())
        .answers(accept_target("production"))
        .send(server.addr)
        .await;
    refused(status, &body);

    // And the other way round: the copy's token does not open the original.
    let (status, body) = Call::deploy()
        .name("complex_tool_copy")
        .send(server.addr)
        .await;
    let copy_token = asks(status, &body, &["elicit-1"]);
    let (status, body) = Call::deploy_target(copy_token).send(server.addr).await;
    refused(status, &body);
}

#[tokio::test]
async fn token_with_changed_arguments_is_refused() {
    let server = deploy_server().await;
    let token = deploy_round1(server.addr, &Call::deploy()).await;
    for arguments in [
        json!({"initial_arg": "y"}),
        json!({"initial_arg": "x", "replicas": 3}),
        json!({"initial_arg": "x "}),
        json!({}),
    ] {
        let (status, body) = Call::deploy()
            .arguments(arguments)
            .state(token.clone())
            .answers(accept_target("production"))
            .send(server.addr)
            .await;
        refused(status, &body);
    }
}

#[tokio::test]
async fn expired_token_is_refused() {
    let server = serve_local(
        SagaServer::builder()
            .keys(key_ring())
            .ttl(Duration::ZERO)
            .leeway(Duration::ZERO)
            .tool(deploy::complex_tool)
            .build()
            .expect("the server builds"),
    )
    .await;
    deploy_token_refused_after(server.addr, Duration::from_millis(2100)).await;
}

#[tokio::test]
async fn token_of_another_version_is_refused() {
    let old_build = deploy_server().await;
    let new_build = serve_local(
        SagaServer::builder()
            .keys(key_ring())
            .tool(Variant::of(deploy::complex_tool).at_version(2))
            .build()
            .expect("the server builds"),
    )
    .await;
    let same_build = deploy_server().await;

    let token = deploy_round1(old_build.addr, &Call::deploy()).await;
    // A replica of the same build with the same key takes the token: only the
    // version told the new build apart.
    deploy_token_refused_then_taken(token, new_build.addr, same_build.addr).await;
}

#[tokio::test]
async fn one_mebibyte_token_is_refused() {
    let server = deploy_server().await;
    // Over saga's 64 KiB token cap, under the 1 MiB body limit: refused by saga.
    let huge = "A".repeat(512 * 1024);
    let (status, body) = Call::deploy_target(huge).send(server.addr).await;
    refused(status, &body);
}

#[tokio::test]
async fn token_over_the_body_limit_is_refused_by_http() {
    let server = deploy_server().await;
    let huge = "A".repeat(5 * 1024 * 1024);
    let (status, body) = Call::deploy().state(huge).send(server.addr).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body:#}");
    assert!(body.get("result").is_none(), "{body:#}");
}

// ---------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn missing_answers_are_asked_again_with_a_new_token() {
    let server = deploy_server().await;
    let (status, first) = Call::deploy().send(server.addr).await;
    let (token, requests) = input_required(status, &first);

    for responses in [None, Some(json!({}))] {
        let mut call = Call::deploy().state(token.clone());
        if let Some(responses) = responses {
            call = call.answers(responses);
        }
        let (status, again) = call.send(server.addr).await;
        let (new_token, new_requests) = input_required(status, &again);
        assert_eq!(new_requests, requests, "the same requests, word for word");
        assert_ne!(new_token, token, "a re-ask issues a new token");

        // The new token finishes the saga.
        let (status, body) = Call::deploy_target(new_token).send(server.addr).await;
        let token = asks(status, &body, &["sample-2"]);
        let (status, body) = Call::deploy_verdict(token, "Yes").send(server.addr).await;
        assert_eq!(complete(status, &body), (DEPLOYED.to_owned(), false));
    }
}

#[tokio::test]
async fn missing_sampling_answer_is_asked_again() {
    let server = deploy_server().await;
    let (status, body) = Call::deploy().send(server.addr).await;
    let token = asks(status, &body, &["elicit-1"]);
    let (status, body) = Call::deploy_target(token).send(server.addr).await;
    let (token, requests) = input_required(status, &body);
    // The answer to the previous round is stale now: it counts as no answer.
    let (status, body) = Call::deploy_target(token.clone()).send(server.addr).await;
    let (again, again_requests) = input_required(status, &body);
    assert_eq!(again_requests, requests);
    assert_ne!(again, token);
    let (status, body) = Call::deploy_verdict(again, "Yes").send(server.addr).await;
    assert_eq!(complete(status, &body).0, DEPLOYED);
}

#[tokio::test]
async fn unknown_extra_answers_are_ignored() {
    let server = deploy_server().await;
    let token = deploy_round1(server.addr, &Call::deploy()).await;
    let mut answers = accept_target("production");
    answers["bogus"] = json!({"action": "accept", "content": {"anything": true}});
    answers["sample-2"] = json!("not yet asked");
    let (status, body) = Call::deploy()
        .state(token)
        .answers(answers)
        .send(server.addr)
        .await;
    let token = asks(status, &body, &["sample-2"]);

    let mut answers = verdict("Yes");
    answers["bogus"] = json!(42);
    answers["elicit-1"] = json!({"action": "decline"});
    let (status, body) = Call::deploy()
        .state(token)
        .answers(answers)
        .send(server.addr)
        .await;
    assert_eq!(complete(status, &body), (DEPLOYED.to_owned(), false));
}

/// `answers` to the round `token` asked for `key`: refused as bad params that name
/// `inputResponses` and `key`.
async fn malformed(addr: SocketAddr, token: &str, key: &str, answers: Value) {
    let (status, body) = Call::deploy()
        .resume(token, answers.clone())
        .send(addr)
        .await;
    let error = jsonrpc_error(status, &body);
    assert_eq!(status, StatusCode::OK, "{body:#}");
    assert_eq!(error["code"], -32602, "{answers}: {body:#}");
    let message = error["message"].as_str().expect("a message");
    assert!(message.contains("inputResponses"), "{answers}: {message}");
    assert!(message.contains(key), "{answers}: {message}");
}

#[tokio::test]
async fn malformed_answers_are_invalid_params() {
    let server = deploy_server().await;
    let token = deploy_round1(server.addr, &Call::deploy()).await;
    for answers in [
        json!({"elicit-1": {"action": "maybe"}}),
        json!({"elicit-1": 42}),
        json!({"elicit-1": "accept"}),
        json!({"elicit-1": null}),
        json!({"elicit-1": {"content": {"target": "production"}}}),
    ] {
        malformed(server.addr, &token, "elicit-1", answers).await;
    }

    let token = deploy_round2(server.addr, &Call::deploy()).await;
    for answers in [
        json!({"sample-2": {"action": "accept", "content": {"target": "production"}}}),
        json!({"sample-2": {"role": "assistant", "content": {"type": "text", "text": "Yes"}}}),
        json!({"sample-2": []}),
    ] {
        malformed(server.addr, &token, "sample-2", answers).await;
    }
}

#[tokio::test]
async fn off_schema_elicitation_is_asked_again() {
    let server = deploy_server().await;
    let (status, body) = Call::deploy().send(server.addr).await;
    let (token, requests) = input_required(status, &body);
    for content in [
        Some(json!({"target": 5})),
        Some(json!({})),
        Some(json!({"target": null})),
        Some(json!({"other": "production"})),
        Some(json!("production")),
        None,
    ] {
        let mut answer = json!({"action": "accept"});
        if let Some(content) = &content {
            answer["content"] = content.clone();
        }
        let (status, body) = Call::deploy()
            .state(token.clone())
            .answers(json!({"elicit-1": answer}))
            .send(server.addr)
            .await;
        let (again, mut again_requests) = input_required(status, &body);
        // The same request, its message ending with why the answer did not fit.
        let asked = requests["elicit-1"]["params"]["message"]
            .as_str()
            .expect("a message");
        let message = again_requests["elicit-1"]["params"]["message"]
            .as_str()
            .expect("a message")
            .to_owned();
        let reason = message
            .strip_prefix(asked)
            .and_then(|rest| rest.strip_prefix("\n\nYour last answer was not accepted: "))
            .unwrap_or_else(|| panic!("{content:?}: {message}"));
        assert!(!reason.is_empty(), "{content:?}");
        again_requests["elicit-1"]["params"]["message"] = json!(asked);
        assert_eq!(
            again_requests, requests,
            "{content:?} is asked again: {body:#}"
        );
        assert_ne!(again, token);
    }
}

#[tokio::test]
async fn declined_elicitation_completes_with_an_error() {
    let server = deploy_server().await;
    let token = deploy_round1(server.addr, &Call::deploy()).await;
    let (status, body) = Call::deploy()
        .state(token.clone())
        .answers(json!({"elicit-1": {"action": "decline"}}))
        .send(server.addr)
        .await;
    let (text, is_error) = complete(status, &body);
    assert!(is_error, "{body:#}");
    assert!(text.contains("declined"), "{text}");

    let (status, body) = Call::deploy()
        .state(token)
        .answers(json!({"elicit-1": {"action": "cancel"}}))
        .send(server.addr)
        .await;
    let (text, is_error) = complete(status, &body);
    assert!(is_error, "{body:#}");
    assert!(text.contains("cancelled"), "{text}");
}

// ---------------------------------------------------------------------------------------
// Capabilities
// ---------------------------------------------------------------------------------------

#[track_caller]
fn missing_capability(status: StatusCode, body: &Value) -> Value {
    let error = jsonrpc_error(status, body);
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body:#}");
    assert_eq!(error["code"], -32021, "{body:#}");
    error["data"]["requiredCapabilities"].clone()
}

#[tokio::test]
async fn elicitation_needs_the_elicitation_capability() {
    let server = deploy_server().await;
    for capabilities in [
        json!({}),
        json!({"sampling": {}}),
        json!({"elicitation": {"url": {}}}),
    ] {
        let (status, body) = Call::deploy()
            .capabilities(capabilities.clone())
            .send(server.addr)
            .await;
        let required = missing_capability(status, &body);
        assert!(
            required.get("elicitation").is_some(),
            "{capabilities}: {body:#}"
        );
        assert!(
            required.get("sampling").is_none(),
            "{capabilities}: {body:#}"
        );
    }
    for capabilities in [
        json!({"elicitation": {}}),
        json!({"elicitation": {"form": {}}}),
        json!({"elicitation": {"form": {}, "url": {}}}),
    ] {
        let (status, body) = Call::deploy()
            .capabilities(capabilities)
            .send(server.addr)
            .await;
        asks(status, &body, &["elicit-1"]);
    }
}

#[tokio::test]
async fn sampling_needs_the_sampling_capability() {
    let server = deploy_server().await;
    let token = deploy_round1(server.addr, &Call::deploy()).await;
    let resume = Call::deploy_target(token);
    let (status, body) = resume
        .clone()
        .capabilities(json!({"elicitation": {}}))
        .send(server.addr)
        .await;
    let required = missing_capability(status, &body);
    assert!(required.get("sampling").is_some(), "{body:#}");
    assert!(required.get("elicitation").is_none(), "{body:#}");

    // Capabilities are per request: the same round with sampling declared goes through,
    // and the refused attempt did not use the token up.
    let (status, body) = resume
        .capabilities(json!({"sampling": {}}))
        .send(server.addr)
        .await;
    asks(status, &body, &["sample-2"]);
}

#[tokio::test]
async fn asking_again_needs_the_capability_too() {
    let server = deploy_server().await;
    let token = deploy_round1(server.addr, &Call::deploy()).await;
    let (status, body) = Call::deploy()
        .capabilities(json!({}))
        .state(token)
        .send(server.addr)
        .await;
    let required = missing_capability(status, &body);
    assert!(required.get("elicitation").is_some(), "{body:#}");
}

// ---------------------------------------------------------------------------------------
// Tokens are fresh
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn every_round_issues_a_new_token() {
    let server = deploy_server().await;
    let first = deploy_round1(server.addr, &Call::deploy()).await;
    let again = deploy_round1(server.addr, &Call::deploy()).await;
    assert_ne!(
        first, again,
        "two sagas with the same arguments get different tokens"
    );

    let mut seen = vec![first.clone(), again];
    for _ in 0..3 {
        let (status, body) = Call::deploy().state(first.clone()).send(server.addr).await;
        let token = asks(status, &body, &["elicit-1"]);
        assert!(!seen.contains(&token), "re-asks issue new tokens");
        seen.push(token);
    }
    let (status, body) = Call::deploy_target(first).send(server.addr).await;
    let second = asks(status, &body, &["sample-2"]);
    assert!(!seen.contains(&second), "round 2 issues a new token");
}

// ---------------------------------------------------------------------------------------
// Requests the saga never sees
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn unknown_tool_is_invalid_params() {
    let server = deploy_server().await;
    let (status, body) = Call::deploy().name("no_such_tool").send(server.addr).await;
    let error = jsonrpc_error(status, &body);
    assert_eq!(error["code"], -32602, "{body:#}");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("no_such_tool"),
        "{body:#}"
    );

    // With a token, too: the tool is looked up before the token is opened.
    let token = deploy_round1(server.addr, &Call::deploy()).await;
    let (status, body) = Call::deploy()
        .name("no_such_tool")
        .state(token)
        .send(server.addr)
        .await;
    assert_eq!(jsonrpc_error(status, &body)["code"], -32602, "{body:#}");
}

#[tokio::test]
async fn invalid_arguments_are_invalid_params() {
    let server = deploy_server().await;
    for arguments in [
        json!({}),
        json!({"initial_arg": 5}),
        json!({"initial_arg": "x", "replicas": -1}),
    ] {
        let (status, body) = Call::deploy()
            .arguments(arguments.clone())
            .send(server.addr)
            .await;
        let error = jsonrpc_error(status, &body);
        assert_eq!(error["code"], -32602, "{arguments}: {body:#}");
    }
}

#[tokio::test]
async fn missing_meta_is_refused() {
    let server = deploy_server().await;
    let (status, body) = Call::deploy().without_meta().send(server.addr).await;
    let error = jsonrpc_error(status, &body);
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body:#}");
    assert_eq!(error["code"], -32602, "{body:#}");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("protocolVersion"),
        "{body:#}"
    );
}

// ---------------------------------------------------------------------------------------
// Happy paths, listing, discovery
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn happy_path_over_raw_http() {
    let server = deploy_server().await;
    let (status, body) = Call::deploy().send(server.addr).await;
    let (token, requests) = input_required(status, &body);
    let elicit = &requests["elicit-1"];
    assert_eq!(elicit["method"], "elicitation/create");
    assert_eq!(
        elicit["params"]["message"],
        "Please provide the deployment target:"
    );
    assert_eq!(
        elicit["params"]["requestedSchema"]["required"],
        json!(["target"])
    );

    let (status, body) = Call::deploy_target(token).send(server.addr).await;
    let (token, requests) = input_required(status, &body);
    let sample = &requests["sample-2"];
    assert_eq!(sample["method"], "sampling/createMessage", "{body:#}");
    assert_eq!(sample["params"]["maxTokens"], 100, "{body:#}");
    assert_eq!(
        sample["params"]["messages"][0]["content"]["text"],
        "Is deploying to 'production' safe right now?",
        "{body:#}"
    );

    let (status, body) = Call::deploy_verdict(token, "Yes, go ahead.")
        .send(server.addr)
        .await;
    assert_eq!(complete(status, &body), (DEPLOYED.to_owned(), false));
}

#[tokio::test]
async fn a_no_verdict_postpones() {
    let server = deploy_server().await;
    let token = deploy_round2(server.addr, &Call::deploy()).await;
    let (status, body) = Call::deploy_verdict(token, "No, not now.")
        .send(server.addr)
        .await;
    assert_eq!(
        complete(status, &body),
        ("Deployment postponed.".to_owned(), false)
    );
}

#[tokio::test]
async fn tools_list_has_the_tool_and_caching_hints() {
    let server = deploy_server().await;
    let capabilities = json!({"elicitation": {}, "sampling": {}});
    let body = request(7, "tools/list", json!({"_meta": meta(capabilities)}));
    let (status, body) = Post::mcp(server.addr).rpc(&body).send().await;
    assert_eq!(status, StatusCode::OK, "{body:#}");
    assert_eq!(body["id"], 7);
    let result = &body["result"];
    let tools = result["tools"].as_array().expect("a tools array");
    let tool = tools
        .iter()
        .find(|tool| tool["name"] == DEPLOY)
        .unwrap_or_else(|| panic!("no {DEPLOY}: {body:#}"));
    assert_eq!(tool["inputSchema"]["type"], "object", "{body:#}");
    assert!(
        tool["inputSchema"]["properties"]["initial_arg"].is_object(),
        "{body:#}"
    );
    assert!(result["ttlMs"].as_u64().is_some(), "{body:#}");
    assert_eq!(result["cacheScope"], "public", "{body:#}");
}

#[tokio::test]
async fn server_discover_has_the_version_and_caching_hints() {
    let server = deploy_server().await;
    let body = request(8, "server/discover", json!({"_meta": meta(json!({}))}));
    let (status, body) = Post::mcp(server.addr).rpc(&body).send().await;
    assert_eq!(status, StatusCode::OK, "{body:#}");
    let result = &body["result"];
    let versions = result["supportedVersions"]
        .as_array()
        .expect("supportedVersions");
    assert!(versions.contains(&json!(PROTOCOL_VERSION)), "{body:#}");
    assert!(result["ttlMs"].as_u64().is_some(), "{body:#}");
    assert_eq!(result["cacheScope"], "public", "{body:#}");
    assert_eq!(result["resultType"], "complete", "{body:#}");
    // The schema keeps serverInfo in the result's _meta, not at the top level.
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "deploy-server",
        "{body:#}"
    );
    assert!(result["capabilities"]["tools"].is_object(), "{body:#}");
}

/// Regression: rmcp answered these with -32601 "method not found" (HTTP 404).
#[tokio::test]
async fn mistyped_mrtr_params_are_invalid_params() {
    let server = deploy_server().await;
    let token = deploy_round1(server.addr, &Call::deploy()).await;
    for (request_state, input_responses) in [
        (json!(token), json!("nope")),
        (json!(token), json!([1, 2])),
        (json!(5), json!({})),
        (json!({"token": token}), json!(accept_target("production"))),
    ] {
        let (status, body) = Call::deploy()
            .param("requestState", request_state.clone())
            .param("inputResponses", input_responses.clone())
            .send(server.addr)
            .await;
        let error = jsonrpc_error(status, &body);
        // rmcp cannot decode the params as a `tools/call` and hands the request over as a
        // custom method; saga answers it as what it is, bad params of a known method.
        assert_eq!(status, StatusCode::OK, "{body:#}");
        assert_eq!(error["code"], -32602, "{body:#}");
        assert_eq!(
            error["message"], "invalid params for tools/call",
            "{body:#}"
        );
    }
}

/// A call without state starts afresh; answers it already carries are used for the
/// requests the saga makes from its start (the first round's are known, so it goes on to
/// the second).
#[tokio::test]
async fn null_request_state_starts_afresh_using_the_answers_it_carries() {
    let server = deploy_server().await;
    let (status, body) = Call::deploy()
        .answers(accept_target("production"))
        .param("requestState", Value::Null)
        .send(server.addr)
        .await;
    asks(status, &body, &["sample-2"]);
}

#[tokio::test]
async fn token_of_a_replica_with_a_longer_ttl_is_refused() {
    // Same key, same build, but this replica never seals tokens living past 10 s (+ 0 s
    // leeway): a token from the 10-minute deploy server expires too far in the future.
    let short = serve_local(
        SagaServer::builder()
            .keys(key_ring())
            .ttl(Duration::from_secs(10))
            .leeway(Duration::ZERO)
            .tool(deploy::complex_tool)
            .build()
            .expect("the server builds"),
    )
    .await;
    let long = deploy_server().await;
    let token = deploy_round1(long.addr, &Call::deploy()).await;
    let (status, body) = Call::deploy_target(token).send(short.addr).await;
    refused(status, &body);
    // The other way round is fine.
    let token = deploy_round1(short.addr, &Call::deploy()).await;
    let (status, body) = Call::deploy_target(token).send(long.addr).await;
    asks(status, &body, &["sample-2"]);
}

#[tokio::test]
async fn token_of_a_rotated_key_opens_while_the_key_is_in_the_ring() {
    let old = deploy_server().await;
    let rotated = serve_local(
        deploy::server(KeyRing::from_keys([[9u8; 32], [7u8; 32]]).expect("a valid ring"))
            .expect("the deploy server builds"),
    )
    .await;
    let retired = serve_local(
        deploy::server(KeyRing::from_keys([[9u8; 32]]).expect("a valid ring"))
            .expect("the deploy server builds"),
    )
    .await;
    let token = deploy_round1(old.addr, &Call::deploy()).await;
    let token = deploy_token_refused_then_taken(token, retired.addr, rotated.addr).await;
    // The rotated server seals with its new key, which the old server does not know.
    let (status, body) = Call::deploy_verdict(token, "Yes").send(old.addr).await;
    refused(status, &body);
}

/// The expiry a token carries in its authenticated header.
fn expiry_of(token: &str) -> u64 {
    saga_runtime::state::TokenHeader::parse(token)
        .expect("a token's header")
        .expires_at
}

#[tokio::test]
async fn asking_again_keeps_the_rounds_expiry() {
    let server = deploy_server().await;
    let token = deploy_round1(server.addr, &Call::deploy()).await;
    // Cross a second boundary, so that a fresh expiry would differ from the original.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (status, body) = Call::deploy().state(token.clone()).send(server.addr).await;
    let again = asks(status, &body, &["elicit-1"]);
    assert_ne!(again, token, "a new token every round");
    assert_eq!(
        expiry_of(&again),
        expiry_of(&token),
        "resending without answers must not extend the round's lifetime"
    );
}

/// POSTs a request outside any session, as a client naming MCP 2025-11-25 in its headers
/// and in `_meta` (with `capabilities`) would. Answered within 20 s or the test fails: a
/// call held open is the bug these tests guard against.
async fn post_sessionless_2025(
    addr: SocketAddr,
    method: &str,
    mut params: Value,
    capabilities: Value,
) -> (StatusCode, Value) {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2025-11-25",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let post = Post::mcp(addr)
        .header("mcp-protocol-version", "2025-11-25")
        .rpc(&request(1, method, params));
    tokio::time::timeout(Duration::from_secs(20), post.send())
        .await
        .expect("the request is answered, not held open")
}

/// A request outside any session whose `_meta` names a session-era version is answered at
/// once. It used to be driven as a session call: the elicitation went out on the response
/// stream, to a client with no session to answer through, and the call waited forever.
#[tokio::test]
async fn a_sessionless_request_naming_a_session_era_version_is_answered_not_held() {
    let server = deploy_server().await;
    let (status, body) = post_sessionless_2025(
        server.addr,
        "tools/call",
        json!({"name": DEPLOY, "arguments": {"initial_arg": "x"}}),
        json!({"elicitation": {}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["error"]["code"], -32600, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("2026-07-28")),
        "{body}"
    );
}

/// `logging/setLevel` exists only in a session. A stateless request naming a session-era
/// version in `_meta` is not one: it used to get `{}` back, setting a level on a server
/// value that lived for that request alone.
#[tokio::test]
async fn a_sessionless_request_cannot_set_a_sessions_log_level() {
    let server = deploy_server().await;
    let (_, body) = post_sessionless_2025(
        server.addr,
        "logging/setLevel",
        json!({"level": "debug"}),
        json!({}),
    )
    .await;
    assert_eq!(body["error"]["code"], -32601, "{body}");
    assert!(body.get("result").is_none(), "{body}");
}
