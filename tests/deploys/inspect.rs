//! `SagaServer::inspect`: a token of a real round opens for its own request (tool,
//! method, principal, arguments) and shows the saga's state with the tool's own types;
//! for any other request, or an unknown tool, it is refused.

#![allow(deprecated)] // sampling: deprecated in 2026-07-28, still served

use saga_examples::deploy_by_hand::ComplexToolByHand;
use saga_examples::harness::context;
use saga_runtime::engine::{Call, SagaContext};
use saga_runtime::prelude::*;
use saga_runtime::rmcp::model::CallToolResponse;
use saga_runtime::serve::{ANONYMOUS, InspectError, InspectRequest};
use serde_json::{Value, json};

fn server() -> SagaServer {
    SagaServer::builder()
        .info("inspect-test", "0")
        .keys(KeyRing::parse(&"44".repeat(32)).expect("key"))
        .tool(ComplexToolByHand)
        .build()
        .expect("server")
}

fn arguments() -> serde_json::Map<String, Value> {
    json!({"initial_arg": "x"})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

fn context(principal: &str) -> SagaContext {
    context::eliciting_and_sampling(principal)
}

/// Plays the first round and answers it; gives the token of the second round.
async fn second_round_token(server: &SagaServer, principal: &str) -> String {
    let cx = context(principal);
    let mut call = Call::tool("complex_tool", Some(arguments()));
    for round in 1..=2 {
        let response = server.tools().run(call.clone(), &cx).await.expect("round");
        let CallToolResponse::InputRequired(result) = response else {
            panic!("round {round} completed early");
        };
        if round == 2 {
            return result.request_state.expect("a token");
        }
        let requests = result.input_requests.expect("requests");
        let answers = requests
            .keys()
            .map(|key| {
                (
                    key.clone(),
                    json!({"action": "accept", "content": {"target": "production"}}),
                )
            })
            .collect();
        call.request_state = result.request_state;
        call.input_responses = Some(answers);
    }
    unreachable!()
}

#[tokio::test]
async fn shows_the_state_of_a_real_round_for_its_own_request_only() {
    let server = server();
    let token = second_round_token(&server, ANONYMOUS).await;
    let request = InspectRequest {
        arguments: Some(arguments()),
        ..InspectRequest::default()
    };
    let shown = server.inspect(&token, &request).expect("opens");
    assert_eq!(shown["tool"], "complex_tool");
    assert_eq!(
        shown["state"],
        json!({"AfterSampleVerdict": {"target": {"target": "production"}}}),
        "{shown:#}"
    );
    assert_eq!(
        shown["pending"][0]["request"]["method"],
        "sampling/createMessage"
    );

    // The same token, another request: refused.
    let other_arguments = InspectRequest {
        arguments: Some(
            json!({"initial_arg": "y"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        ),
        ..InspectRequest::default()
    };
    let other_principal = InspectRequest {
        principal: "mallory".into(),
        ..request.clone()
    };
    for wrong in [other_arguments, other_principal] {
        assert!(matches!(
            server.inspect(&token, &wrong),
            Err(InspectError::Refused(_))
        ));
    }
    let unknown = InspectRequest {
        tool: Some("nope".into()),
        ..request.clone()
    };
    assert!(matches!(
        server.inspect(&token, &unknown),
        Err(InspectError::UnknownTool(_))
    ));
    // Inspecting does not redeem: the server still finishes the saga from the token.
    let mut last = Call::tool("complex_tool", Some(arguments()));
    last.request_state = Some(token);
    last.input_responses = Some(
        shown["pending"][0]["key"]
            .as_str()
            .map(|key| {
                (
                    key.to_owned(),
                    json!({"role": "assistant", "content": {"type": "text", "text": "Yes."},
                           "model": "m"}),
                )
            })
            .into_iter()
            .collect(),
    );
    let done = server
        .tools()
        .run(last, &context(ANONYMOUS))
        .await
        .expect("third round");
    assert!(matches!(done, CallToolResponse::Complete(_)), "{done:?}");
}

/// Counts the runs of `audit`'s code after its first suspension: inspecting must run none.
static AUDIT_RESUMED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[derive(Serialize, Deserialize, Elicit)]
struct Reviewer {
    /// Who reviews.
    name: String,
}

/// Saves a Vec, a struct and an integer across its suspension.
#[saga_tool]
async fn audit(tables: Vec<String>, limit: u32) -> Result<String, SagaError> {
    let counted = tables.len() as u64 * 10;
    let reviewer: Reviewer = elicit("Who reviews?").await?;
    AUDIT_RESUMED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let note = sample(format!("Summarize {counted} rows for {}", reviewer.name)).await?;
    Ok(format!(
        "{} {} {limit} {} by {}",
        tables.join(","),
        counted,
        note.text(),
        reviewer.name
    ))
}

#[tokio::test]
async fn a_macro_tool_shows_its_saved_locals_with_their_own_types_and_runs_no_code() {
    let server = SagaServer::builder()
        .info("inspect-test", "0")
        .keys(KeyRing::parse(&"45".repeat(32)).expect("key"))
        .tool(audit)
        .build()
        .expect("server");
    let arguments = json!({"tables": ["users", "orders"], "limit": 7})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let cx = context(ANONYMOUS);
    let call = Call::tool("audit", Some(arguments.clone()));
    let CallToolResponse::InputRequired(first) =
        server.tools().run(call, &cx).await.expect("round 1")
    else {
        panic!("round 1 completed");
    };
    let token = first.request_state.expect("a token");
    let request = InspectRequest {
        arguments: Some(arguments.clone()),
        ..InspectRequest::default()
    };
    let shown = server.inspect(&token, &request).expect("opens");
    assert_eq!(
        shown["state"],
        json!({"AfterElicitReviewer": {"tables": ["users", "orders"], "limit": 7, "counted": 20}}),
        "{shown:#}"
    );
    assert_eq!(
        AUDIT_RESUMED.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "inspecting ran the tool's code"
    );

    // The state after the second suspension carries the elicited struct as itself.
    let key = first
        .input_requests
        .as_ref()
        .and_then(|requests| requests.keys().next().cloned())
        .expect("a request");
    let mut second = Call::tool("audit", Some(arguments));
    second.request_state = Some(token);
    second.input_responses =
        Some([(key, json!({"action": "accept", "content": {"name": "ada"}}))].into());
    let CallToolResponse::InputRequired(next) =
        server.tools().run(second, &cx).await.expect("round 2")
    else {
        panic!("round 2 completed");
    };
    assert_eq!(AUDIT_RESUMED.load(std::sync::atomic::Ordering::SeqCst), 1);
    let shown = server
        .inspect(&next.request_state.expect("a token"), &request)
        .expect("opens");
    let state = &shown["state"]["AfterSampleNote"];
    assert_eq!(state["reviewer"], json!({"name": "ada"}), "{shown:#}");
    assert_eq!(state["counted"], 20);
    // A later step on the same thread is not stopped by an inspection that came before.
    assert_eq!(AUDIT_RESUMED.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// Saved locals kept as MessagePack (a `serde_json::Value`, an internally tagged enum)
/// show as the JSON they hold, in either form a state is sealed in.
#[tokio::test]
async fn shows_values_kept_as_messagepack_as_their_json() {
    let server = saga_examples::keeps_json::server(
        KeyRing::parse(&"44".repeat(32)).expect("key"),
        TaskStore::memory(),
    )
    .expect("server");
    let cx = context(ANONYMOUS);
    for (tool, arguments, expected) in [
        (
            "value_argument",
            json!({"payload": {"a": [1, null, {"b": 2.5}]}}),
            json!({"AfterElicitOk": {"payload": {"a": [1, null, {"b": 2.5}]}}}),
        ),
        (
            "tagged_enum",
            json!({"kind": "delete"}),
            json!({"AfterElicitOk": {"action": {"kind": "delete", "id": 7}}}),
        ),
        // Sealed in the tagged form: `max` is skipped by a predicate no sample takes.
        (
            "rare_skip",
            json!({}),
            json!({"AfterElicitOk": {"limit": {"label": "max None"}}}),
        ),
    ] {
        let arguments = arguments.as_object().cloned();
        let mut call = Call::tool(tool, arguments.clone());
        let token = loop {
            let response = server.tools().run(call.clone(), &cx).await.expect("round");
            let CallToolResponse::InputRequired(result) = response else {
                panic!("{tool} completed early");
            };
            if result.input_requests.is_some() {
                break result.request_state.expect("a token");
            }
            // A checkpoint: go on.
            call.request_state = result.request_state;
        };
        let request = InspectRequest {
            tool: Some(tool.to_owned()),
            arguments,
            ..InspectRequest::default()
        };
        let shown = server.inspect(&token, &request).expect("opens");
        assert_eq!(shown["state"], expected, "{tool}: {shown:#}");
    }
}
