//! The log a saga leaves at `RUST_LOG=saga_runtime=debug`: one `saga.request` span per
//! HTTP request and one `saga.transition` span per transition, with their fields.

use saga_examples::client::ScriptedClient;
use saga_examples::deploy;
use saga_examples::harness::serving::serve_local;
use saga_runtime::prelude::*;
use saga_runtime::rmcp::model::CallToolRequestParams;
use serde_json::json;

use crate::Captured;

#[tokio::test]
async fn each_transition_has_a_span_with_its_fields() {
    let captured = Captured::default();
    let _guard = captured.install("saga_runtime=debug");

    let running = serve_local(deploy::server(KeyRing::ephemeral()).expect("a server")).await;
    let client = ScriptedClient::deploy()
        .connect_http(&running.url())
        .await
        .expect("connected");
    let arguments = json!({"initial_arg": "v"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    client
        .call_tool(CallToolRequestParams::new("complex_tool").with_arguments(arguments))
        .await
        .expect("the saga completes");
    client.cancel().await.expect("closed");

    let log = captured.text();
    let transitions: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("transition done"))
        .collect();
    assert_eq!(transitions.len(), 3, "{log}");
    for (round, outcome, entered, left) in [
        (1, "input_required", "Start", Some("AfterElicitTarget")),
        (
            2,
            "input_required",
            "AfterElicitTarget",
            Some("AfterSampleVerdict"),
        ),
        (3, "complete", "AfterSampleVerdict", None),
    ] {
        let line = transitions[round - 1];
        for field in [
            "saga.transition{".to_owned(),
            "saga.tool=complex_tool".to_owned(),
            "mcp.method.name=tools/call".to_owned(),
            "saga.era=\"2026-07-28\"".to_owned(),
            format!("saga.round={round}"),
            format!("saga.outcome=\"{outcome}\""),
            format!("saga.entered=\"{entered}\""),
            "saga.token_in=".to_owned(),
            "saga.micros=".to_owned(),
            "saga.request{".to_owned(),
        ] {
            assert!(line.contains(&field), "round {round}: no {field} in {line}");
        }
        if let Some(left) = left {
            assert!(line.contains(&format!("saga.left=\"{left}\"")), "{line}");
            assert!(line.contains("saga.token_out="), "{line}");
        }
    }
}

/// A subscriber that keeps events but no spans still gets each request's `request done`
/// event: the guard skips the span's clock and wrapper only when nothing would record
/// either.
#[tokio::test]
async fn request_events_reach_a_subscriber_that_records_no_spans() {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::{Layer as _, filter};
    let captured = Captured::default();
    let writer = captured.clone();
    let events_only = filter::filter_fn(|metadata| {
        metadata.is_event()
            && metadata.target().starts_with("saga_runtime")
            && *metadata.level() <= tracing::Level::DEBUG
    });
    let subscriber = tracing_subscriber::registry().with(
        tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .with_filter(events_only),
    );
    let _guard = tracing::subscriber::set_default(subscriber);
    tracing::callsite::rebuild_interest_cache();

    let running = serve_local(deploy::server(KeyRing::ephemeral()).expect("a server")).await;
    let client = ScriptedClient::deploy()
        .connect_http(&running.url())
        .await
        .expect("connected");
    let arguments = json!({"initial_arg": "v"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    client
        .call_tool(CallToolRequestParams::new("complex_tool").with_arguments(arguments))
        .await
        .expect("the saga completes");
    client.cancel().await.expect("closed");

    let log = captured.text();
    let done = log
        .lines()
        .filter(|line| line.contains("request done"))
        .count();
    assert!(done >= 3, "one per request, three rounds at least: {log}");
    assert!(
        !log.contains("saga.request{"),
        "no span was recorded: {log}"
    );
}
