//! The values a saved state holds (the fifth hardening review, finding 1): a state's bytes
//! are bounded, but what its self-describing values (`serde_json::Value`, a sampling
//! history) decode to is not in proportion to them, so their number is bounded where the
//! state is sealed and where it is read. Past the bound the round ends with the error of
//! whoever grew it; the bound can be raised (`SagaServerBuilder::max_state_values`). (A
//! token whose state holds more than its reader's bound: `tests/http/fifth_review.rs`.)

use saga_runtime::prelude::*;
use saga_runtime::testing::{Answer, Failed, TestClient};
use serde_json::{Value, json};

const KEY: [u8; 32] = [41; 32];

/// Keeps its arguments' items (the client's values) across a question.
#[saga_tool]
async fn keeps_items(items: Vec<Value>) -> Result<String, SagaError> {
    let _go: bool = elicit(format!("Keep {} items?", items.len())).await?;
    Ok(format!("{} items kept", items.len()))
}

/// Makes `count` values itself and keeps them across a question.
#[saga_tool]
async fn makes_items(count: usize) -> Result<String, SagaError> {
    let items: Vec<Value> = vec![Value::from(0); count];
    let _go: bool = elicit(format!("Keep {} items?", items.len())).await?;
    Ok(format!("{} items kept", items.len()))
}

fn tools(max_state_values: Option<usize>) -> SagaTools {
    let mut builder = SagaTools::builder()
        .keys(KeyRing::from_keys([KEY]).expect("a key"))
        .tool(keeps_items)
        .tool(makes_items);
    if let Some(values) = max_state_values {
        builder = builder.max_state_values(values);
    }
    builder.build().expect("the registry builds")
}

fn zeros(count: usize) -> Value {
    Value::Array(vec![Value::from(0); count])
}

#[tokio::test]
async fn a_state_past_the_bound_by_the_clients_values_is_the_clients_error() {
    let client = TestClient::with_tools(tools(None));
    let failed = client
        .call("keeps_items", json!({"items": zeros(120_000)}))
        .then(Answer::accept(json!(true)))
        .run()
        .await;
    let Err(Failed::Server { error, rounds }) = failed else {
        panic!("not refused: {}", failed.is_ok());
    };
    assert_eq!(error.code.0, -32602, "{}", error.message);
    assert!(
        error.message.contains("120001 values")
            && error.message.contains("over the 100000")
            && error.message.contains("send smaller answers"),
        "{}",
        error.message
    );
    // Refused where it would be sealed: no token was handed out.
    assert!(rounds.is_empty(), "{} rounds", rounds.len());

    // Just under the bound, the same call goes on.
    let run = client
        .call("keeps_items", json!({"items": zeros(99_000)}))
        .then(Answer::accept(json!(true)))
        .run()
        .await
        .expect("within the bound");
    assert_eq!(run.text(), "99000 items kept");
}

#[tokio::test]
async fn a_state_past_the_bound_by_the_tools_values_is_the_tools_error_with_its_fix() {
    let client = TestClient::with_tools(tools(None));
    let failed = client
        .call("makes_items", json!({"count": 150_000}))
        .then(Answer::accept(json!(true)))
        .run()
        .await;
    let Err(Failed::Server { error, .. }) = failed else {
        panic!("not refused: {}", failed.is_ok());
    };
    assert_eq!(error.code.0, -32603, "{}", error.message);
    assert!(
        error.message.contains("150001 values")
            && error
                .message
                .contains("SagaServerBuilder::max_state_values"),
        "{}",
        error.message
    );

    // The advice, as written: the bound raised, the call completes.
    let raised = TestClient::with_tools(tools(Some(200_000)));
    let run = raised
        .call("makes_items", json!({"count": 150_000}))
        .then(Answer::accept(json!(true)))
        .run()
        .await
        .expect("within the raised bound");
    assert_eq!(run.text(), "150000 items kept");
}
