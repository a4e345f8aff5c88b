//! What the server's log keeps of a provider's failure (finding 7 of the third hardening
//! pass): a provider that echoes its request put `Bearer sk-…` in the log at WARN. The
//! key, and anything that reads as a credential, is redacted before it is logged.

#![allow(deprecated)] // sample(): deprecated by MCP 2026-07-28, tested here.

use std::time::Duration;

use saga_examples::harness::openai::{Behaviour, FakeOpenAi};
use saga_runtime::model::{OpenAiCompatible, SamplingLimits};
use saga_runtime::prelude::*;
use saga_runtime::rmcp::model::ClientCapabilities;
use saga_runtime::serve::SagaTools;
use saga_runtime::testing::TestClient;
use serde_json::json;

use crate::Captured;

const KEY: &str = "sk-log-0123456789abcdef";

/// Samples once.
#[saga_tool]
async fn says_hi() -> Result<String, SagaError> {
    Ok(sample("Say hi").await?.text().to_owned())
}

#[tokio::test]
async fn a_provider_that_echoes_its_request_does_not_put_the_key_in_the_log() {
    let captured = Captured::default();
    let _guard = captured.install("saga_runtime=info");
    let provider = FakeOpenAi::start(KEY).await;
    provider.behave(Behaviour::EchoHeaders(400));
    let model = OpenAiCompatible::new(&provider.base_url, KEY, "m").expect("a client");
    let tools = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .tool(says_hi)
        .model(model)
        .sampling_limits(SamplingLimits::default().timeout(Duration::from_secs(5)))
        .build()
        .expect("the tools build");
    let run = TestClient::with_tools(tools)
        .capabilities(ClientCapabilities::default())
        .call("says_hi", json!({}))
        .run()
        .await
        .expect("a result");
    assert!(run.text().contains("HTTP status 400"), "{}", run.text());
    let log = captured.text();
    assert!(
        log.contains("the server's model answered with an error"),
        "{log}"
    );
    assert!(log.contains("[redacted]"), "{log}");
    assert!(
        !log.contains("0123456789abcdef"),
        "the key is in the log: {log}"
    );
}
