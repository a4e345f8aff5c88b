//! Metrics for operators, scraped as Prometheus would: `examples/metrics.rs` runs as a
//! process, a client completes the deploy saga over HTTP and sends a tampered token, and
//! `/metrics` must count exactly that.

use saga_examples::client::ScriptedClient;
use saga_examples::harness::process::Spawn;
use saga_runtime::rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::json;

const KEY_HEX: &str = "6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b";

/// The value of the sample `name{labels}` in Prometheus text (labels in the exporter's
/// order, which is sorted by label name).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        line.strip_prefix(series)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

#[tokio::test]
async fn metrics_count_transitions_refusals_rounds_and_tokens() {
    let server = Spawn::new("metrics", KEY_HEX).start();
    let url = format!("http://{}/mcp", server.addr);

    let client = ScriptedClient::deploy()
        .connect_http(&url)
        .await
        .expect("connects");
    let arguments = json!({"initial_arg": "api"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let result = client
        .call_tool(CallToolRequestParams::new("complex_tool").with_arguments(arguments.clone()))
        .await
        .expect("the saga completes");
    assert_ne!(result.is_error, Some(true), "{result:?}");

    // One first round by hand, then its token tampered with and sent back.
    let first = client
        .call_tool_once(
            CallToolRequestParams::new("complex_tool").with_arguments(arguments.clone()),
        )
        .await
        .expect("asks");
    let CallToolResponse::InputRequired(required) = first else {
        panic!("the first round asks: {first:?}");
    };
    // A character inside the tag, not the last one: the last may carry padding bits, and
    // changing those makes the token malformed base64 rather than a tampered seal.
    let mut token = required.request_state.expect("a token");
    let at = token.len() - 8;
    let flipped = if token.as_bytes()[at] == b'A' {
        "B"
    } else {
        "A"
    };
    token.replace_range(at..=at, flipped);
    let mut tampered = CallToolRequestParams::new("complex_tool").with_arguments(arguments.clone());
    tampered.request_state = Some(token);
    assert!(client.call_tool_once(tampered).await.is_err(), "refused");

    // A call of a tool that does not exist, named with what a client may write: no label.
    let bogus = CallToolRequestParams::new("evil\"name{x=\"1\"}");
    assert!(client.call_tool_once(bogus).await.is_err());
    client.cancel().await.expect("closes");

    let text = reqwest::get(format!("http://{}/metrics", server.addr))
        .await
        .expect("/metrics answers")
        .text()
        .await
        .expect("text");
    let count =
        |series: &str| sample(&text, series).unwrap_or_else(|| panic!("{series} in\n{text}"));
    assert_eq!(
        count(
            r#"saga_transitions_total{tool="complex_tool",outcome="input_required",era="2026-07-28"}"#
        ),
        3.0,
        "two asking rounds of the saga and the first round asked by hand"
    );
    assert_eq!(
        count(r#"saga_transitions_total{tool="complex_tool",outcome="complete",era="2026-07-28"}"#),
        1.0
    );
    assert_eq!(
        count(
            r#"saga_transitions_total{tool="complex_tool",outcome="refused_invalid_params",era="2026-07-28"}"#
        ),
        1.0
    );
    assert_eq!(count(r#"saga_refusals_total{reason="tampered"}"#), 1.0);
    assert_eq!(count(r#"saga_rounds_count{tool="complex_tool"}"#), 1.0);
    assert_eq!(count(r#"saga_rounds_sum{tool="complex_tool"}"#), 3.0);
    // Histograms, not summaries: buckets that add up across replicas, with saga's bounds;
    // the deploy saga's tokens (about 100 bytes) all in the bucket up to 128 bytes.
    assert!(!text.contains("quantile="), "{text}");
    assert_eq!(
        count(r#"saga_token_bytes_bucket{direction="out",le="128"}"#),
        3.0
    );
    assert_eq!(
        count(r#"saga_token_bytes_bucket{direction="out",le="64"}"#),
        0.0
    );
    assert_eq!(
        count(r#"saga_rounds_bucket{tool="complex_tool",le="3"}"#),
        1.0
    );
    assert_eq!(
        count(r#"saga_rounds_bucket{tool="complex_tool",le="2"}"#),
        0.0
    );
    assert_eq!(
        count(r#"saga_transition_seconds_bucket{tool="complex_tool",le="+Inf"}"#),
        count(r#"saga_transition_seconds_count{tool="complex_tool"}"#)
    );
    assert_eq!(count(r#"saga_token_bytes_count{direction="out"}"#), 3.0);
    assert_eq!(count(r#"saga_token_bytes_count{direction="in"}"#), 3.0);
    assert_eq!(
        count(r#"saga_transition_seconds_count{tool="complex_tool"}"#),
        5.0
    );
    assert!(
        !text.contains("evil"),
        "a client's string became a label:\n{text}"
    );
}
