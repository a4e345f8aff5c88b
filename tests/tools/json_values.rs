//! JSON-shaped values kept where a tool keeps them: a `for` loop over JSON items with a
//! question inside, a `join!` round, roots from the client, a helper's argument, a
//! `while let` stack; driven with `saga_runtime::testing`, which seals and opens the
//! state at every round as a server does.

use saga_runtime::prelude::*;
use saga_runtime::testing::{Answer, TestClient};
use serde_json::{Value, json};

/// Asks about each item of a JSON array, keeping the rest of the array and the answers.
#[saga_tool]
async fn review_items(items: Vec<Value>) -> Result<String, SagaError> {
    let mut kept: Vec<Value> = Vec::new();
    for item in items {
        let keep: bool = elicit(format!("Keep {item}?")).await?;
        if keep {
            kept.push(item);
        }
    }
    Ok(Value::Array(kept).to_string())
}

/// The same over a borrowed array, resumed by position.
#[saga_tool]
async fn review_borrowed(document: Value) -> Result<String, SagaError> {
    let items: Vec<Value> = document["items"].as_array().cloned().unwrap_or_default();
    let mut answers = serde_json::Map::new();
    for (index, item) in items.iter().enumerate() {
        let note: String = elicit(format!("Note for {item}?")).await?;
        answers.insert(format!("{index}"), json!({"item": item, "note": note}));
    }
    Ok(Value::Object(answers).to_string())
}

/// Two requests in one round, with JSON kept across it, and the client's roots (an rmcp
/// type with `skip_serializing_if`) kept across a later question.
#[saga_tool]
async fn roots_and_join(config: Value) -> Result<String, SagaError> {
    let roots = list_roots().await?;
    let (name, ok) = join!(elicit::<String>("Name?"), elicit::<bool>("Ok?"));
    let name = name?;
    let ok = ok?;
    let last: bool = elicit("Really?").await?;
    Ok(json!({"config": config, "roots": roots, "name": name, "ok": ok, "last": last}).to_string())
}

/// Works through a stack of JSON nodes, asking at each.
#[saga_tool]
async fn walk(tree: Value) -> Result<String, SagaError> {
    let mut stack: Vec<Value> = vec![tree];
    let mut seen: Vec<String> = Vec::new();
    while let Some(node) = stack.pop() {
        let name = node["name"].as_str().unwrap_or_default().to_owned();
        checkpoint().await;
        if let Some(children) = node["children"].as_array() {
            stack.extend(children.iter().cloned());
        }
        seen.push(name);
    }
    Ok(seen.join(","))
}

#[tokio::test]
async fn a_loop_over_json_items_keeps_the_rest_and_the_answers() {
    let items = json!([{"id": 1}, {"id": 2, "tags": ["x"]}, "three", null]);
    let run = TestClient::new(review_items)
        .call("review_items", json!({"items": items}))
        .respond(|asked| {
            let keep = !asked.message().unwrap_or_default().contains("null");
            Some(Answer::accept(json!({"value": keep})))
        })
        .run()
        .await
        .expect("runs");
    assert_eq!(
        serde_json::from_str::<Value>(&run.text()).expect("JSON"),
        json!([{"id": 1}, {"id": 2, "tags": ["x"]}, "three"])
    );
}

#[tokio::test]
async fn a_borrowed_loop_over_json_resumes_by_position() {
    let document = json!({"items": [{"a": 1}, {"b": [2]}]});
    let run = TestClient::new(review_borrowed)
        .call("review_borrowed", json!({"document": document}))
        .respond(|asked| {
            let note = asked.message().unwrap_or_default().len().to_string();
            Some(Answer::accept(json!({"value": note})))
        })
        .run()
        .await
        .expect("runs");
    assert_eq!(
        serde_json::from_str::<Value>(&run.text()).expect("JSON"),
        json!({"0": {"item": {"a": 1}, "note": "17"}, "1": {"item": {"b": [2]}, "note": "19"}})
    );
}

#[tokio::test]
async fn roots_and_json_are_kept_across_a_join_round() {
    let config = json!({"retries": 3, "mode": {"kind": "fast"}});
    let run = TestClient::new(roots_and_join)
        .call("roots_and_join", json!({"config": config}))
        .respond(|asked| match asked.method() {
            "roots/list" => Some(Answer::roots(["file:///work"])),
            _ => match asked.message() {
                Some("Name?") => Some(Answer::accept(json!({"value": "ada"}))),
                _ => Some(Answer::accept(json!({"value": true}))),
            },
        })
        .run()
        .await
        .expect("runs");
    let result: Value = serde_json::from_str(&run.text()).expect("JSON");
    assert_eq!(result["config"], config);
    assert_eq!(
        result["roots"],
        json!([{"uri": "file:///work", "name": null}])
    );
    assert_eq!(
        (&result["name"], &result["ok"], &result["last"]),
        (&json!("ada"), &json!(true), &json!(true))
    );
}

#[tokio::test]
async fn a_stack_of_json_nodes_is_kept_across_checkpoints() {
    let tree = json!({"name": "a", "children": [{"name": "b"}, {"name": "c", "children": [{"name": "d"}]}]});
    let run = TestClient::new(walk)
        .call("walk", json!({"tree": tree}))
        .run()
        .await
        .expect("runs");
    assert_eq!(run.text(), "a,c,d,b");
}
