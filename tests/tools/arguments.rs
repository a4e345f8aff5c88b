//! A `#[saga_tool]`'s arguments are read from the call's object as `parse_arguments`
//! reads them (the macro reads the object itself, `parse_arguments` a `Value::Object`):
//! the same values, and for arguments that do not fit, the same `-32602` and message.

use saga_runtime::engine::parse_arguments;
use saga_runtime::prelude::*;
use saga_runtime::testing::{Failed, TestClient};
use serde::Deserialize;
use serde_json::{Value, json};

#[saga_tool]
async fn order(
    item: String,
    count: u32,
    note: Option<String>,
    extra: Value,
) -> Result<String, SagaError> {
    Ok(format!("{count} {item} {note:?} {extra}"))
}

/// What `parse_arguments` reads the same arguments as.
#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Order {
    item: String,
    count: u32,
    note: Option<String>,
    extra: Value,
}

async fn called(arguments: Value) -> Result<String, String> {
    match TestClient::new(order).call("order", arguments).run().await {
        Ok(run) => Ok(run.text()),
        Err(Failed::Server { error, .. }) => {
            assert_eq!(error.code.0, -32602, "{error:?}");
            Err(error.message.into_owned())
        }
        Err(other) => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn arguments_read_and_refuse_as_parse_arguments_does() {
    let read = called(json!({"item": "tea", "count": 2, "extra": [1, {"a": null}], "unknown": 1}))
        .await
        .expect("read");
    assert_eq!(read, r#"2 tea None [1,{"a":null}]"#);
    for bad in [
        json!({"item": "tea", "count": "two", "extra": 1}),
        json!({"item": "tea", "extra": 1}),
        json!({"item": 5, "count": 1, "extra": 1}),
        json!({"item": "tea", "count": -1, "extra": 1}),
        json!({"item": "tea", "count": 1, "note": 7, "extra": 1}),
    ] {
        let refused = called(bad.clone()).await.expect_err("refused");
        let Value::Object(object) = bad else {
            unreachable!()
        };
        let reference = parse_arguments::<Order>(object).expect_err("refused");
        assert_eq!(refused, reference.message, "{refused}");
        assert!(refused.starts_with("invalid arguments: "), "{refused}");
    }
}

#[tokio::test]
async fn an_argument_error_names_the_field() {
    let refused = called(json!({"item": "tea", "count": "seventy", "extra": 1}))
        .await
        .expect_err("refused");
    assert_eq!(
        refused,
        r#"invalid arguments: count: invalid type: string "seventy", expected u32"#
    );
    let refused = called(json!({"count": 1, "extra": 1}))
        .await
        .expect_err("refused");
    assert_eq!(refused, "invalid arguments: missing field `item`");
}

/// Refuses what it does not declare, as its schema says.
#[saga_tool(deny_unknown_arguments)]
async fn strict(count: u32) -> Result<String, SagaError> {
    Ok(count.to_string())
}

#[tokio::test]
async fn a_tool_that_denies_unknown_arguments_names_the_misspelled_one() {
    let client = TestClient::new(strict);
    let schema = serde_json::to_value(&*strict.tool().input_schema).expect("a schema");
    assert_eq!(schema["additionalProperties"], json!(false), "{schema}");
    match client
        .call("strict", json!({"count": 2, "cuont": 3}))
        .run()
        .await
    {
        Err(Failed::Server { error, .. }) => {
            assert_eq!(error.code.0, -32602);
            assert!(
                error
                    .message
                    .starts_with("invalid arguments: unknown field `cuont`, expected `count`"),
                "{}",
                error.message
            );
        }
        other => panic!("an unknown argument was accepted: {other:?}"),
    }
    let run = client
        .call("strict", json!({"count": 2}))
        .run()
        .await
        .expect("read");
    assert_eq!(run.text(), "2");
}
