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

fn unlimited() -> u32 {
    u32::MAX
}

fn is_unlimited(n: &u32) -> bool {
    *n == u32::MAX
}

/// Skipped only at a value no sample takes: postcard is chosen, and a state holding that
/// value is sealed in the tagged form.
#[derive(Debug, Serialize, Deserialize)]
struct Cap {
    #[serde(default = "unlimited", skip_serializing_if = "is_unlimited")]
    max: u32,
}

/// Keeps a [`Cap`].
#[saga_tool]
async fn keeps_cap_a(max: u32) -> Result<String, SagaError> {
    let cap = Cap { max };
    let ok: bool = elicit("Ok?").await?;
    Ok(format!("{} {ok}", cap.max))
}

/// The same, another tool of the same module and the same saved types.
#[saga_tool]
async fn keeps_cap_b(max: u32) -> Result<String, SagaError> {
    let cap = Cap { max };
    let ok: bool = elicit("Ok?").await?;
    Ok(format!("{} {ok}", cap.max))
}

async fn cap_token_len(client: &TestClient, tool: &str, max: u32) -> usize {
    let run = client
        .call(tool, json!({"max": max}))
        .then(Answer::accept(json!({"value": true})))
        .run()
        .await
        .expect("runs");
    assert_eq!(run.text(), format!("{max} true"));
    run.rounds()[0].token_len().expect("a round with a token")
}

#[tokio::test]
async fn one_tools_tagged_state_leaves_another_tools_tokens_as_they_were() {
    let tools = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .tool(keeps_cap_a)
        .tool(keeps_cap_b)
        .build()
        .expect("builds");
    let client = TestClient::with_tools(tools);
    let plain = cap_token_len(&client, "keeps_cap_b", 3).await;
    // `keeps_cap_a` at the skipped value: sealed tagged, and finishes.
    let tagged = cap_token_len(&client, "keeps_cap_a", u32::MAX).await;
    assert!(tagged > plain, "{tagged} <= {plain}");
    // Its later seals stay tagged; `keeps_cap_b`'s do not.
    assert!(cap_token_len(&client, "keeps_cap_a", 3).await > plain);
    assert_eq!(cap_token_len(&client, "keeps_cap_b", 3).await, plain);
}

/// A field written with a length postcard cannot tell (an iterator's `collect_seq`).
#[derive(Debug, Serialize, Deserialize)]
struct Unsized {
    #[serde(serialize_with = "as_filtered")]
    items: Vec<u32>,
}

fn as_filtered<S: serde::Serializer>(items: &[u32], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(items.iter().filter(|_| true))
}

/// Keeps an [`Unsized`]: postcard cannot write it, and the state is sealed tagged.
#[saga_tool]
async fn keeps_unsized(items: Vec<u32>) -> Result<String, SagaError> {
    let kept = Unsized { items };
    let ok: bool = elicit("Ok?").await?;
    Ok(format!("{:?} {ok}", kept.items))
}

#[tokio::test]
async fn a_value_postcard_cannot_write_is_sealed_tagged_not_refused() {
    let run = TestClient::new(keeps_unsized)
        .call("keeps_unsized", json!({"items": [1, 2, 3]}))
        .then(Answer::accept(json!({"value": true})))
        .run()
        .await
        .expect("runs");
    assert_eq!(run.text(), "[1, 2, 3] true");
}

/// A helper that keeps a [`Cap`] across its question.
#[saga_fn]
async fn capped(max: u32) -> Result<u32, SagaError> {
    let cap = Cap { max };
    let ok: bool = elicit("Ok?").await?;
    Ok(if ok { cap.max } else { 0 })
}

/// Calls [`capped`], keeping a JSON value of its own across it.
#[saga_tool]
async fn calls_capped(max: u32) -> Result<String, SagaError> {
    let seen = json!({"asked": max});
    let got = capped(max).await?;
    Ok(format!("{} {}", seen["asked"], got))
}

#[tokio::test]
async fn a_helpers_tagged_state_is_sealed_in_a_tagged_caller() {
    let client = TestClient::new(calls_capped);
    let mut lengths = Vec::new();
    for max in [3, u32::MAX] {
        let run = client
            .call("calls_capped", json!({"max": max}))
            .then(Answer::accept(json!({"value": true})))
            .run()
            .await
            .expect("runs");
        assert_eq!(run.text(), format!("{max} {max}"));
        lengths.push(run.rounds()[0].token_len().expect("a token"));
    }
    // The caller's state is tagged too (each of its slots carries its encoding).
    assert!(lengths[1] > lengths[0], "{lengths:?}");
}

/// A `Box<RawValue>` kept across a suspension: the JSON text it holds comes back as it was.
#[saga_tool]
async fn keeps_raw(text: String) -> Result<String, SagaError> {
    let payload = serde_json::value::RawValue::from_string(text)
        .map_err(|error| SagaError::msg(error.to_string()))?;
    let ok: bool = elicit("Send it?").key("send").await?;
    Ok(format!("{ok}: {}", payload.get()))
}

#[tokio::test]
async fn a_raw_json_value_is_kept_as_its_text() {
    let run = TestClient::new(keeps_raw)
        .call(
            "keeps_raw",
            json!({"text": r#"{"b": [1, 2.50], "a": null}"#}),
        )
        .answer("send", Answer::accept(json!(true)))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), r#"true: {"b": [1, 2.50], "a": null}"#);
}

/// A struct holding raw JSON beside other fields, and a list of raw values.
#[derive(Serialize, Deserialize)]
struct Envelope {
    id: u32,
    body: Box<serde_json::value::RawValue>,
    parts: Vec<Box<serde_json::value::RawValue>>,
}

#[saga_tool]
async fn keeps_envelope(parts: Vec<String>) -> Result<String, SagaError> {
    let raw = |text: String| {
        serde_json::value::RawValue::from_string(text)
            .map_err(|error| SagaError::msg(error.to_string()))
    };
    let envelope = Envelope {
        id: 7,
        body: raw(r#"{"x": 1e400}"#.to_owned())?,
        parts: parts.into_iter().map(raw).collect::<Result<_, _>>()?,
    };
    checkpoint().await;
    let ok: bool = elicit("Send it?").key("send").await?;
    let parts: Vec<&str> = envelope.parts.iter().map(|part| part.get()).collect();
    Ok(format!(
        "{ok} {} {} {parts:?}",
        envelope.id,
        envelope.body.get()
    ))
}

#[tokio::test]
async fn raw_json_inside_a_saved_struct_is_kept_as_its_text() {
    let run = TestClient::new(keeps_envelope)
        .call("keeps_envelope", json!({"parts": ["[1,  2]", "\"s\""]}))
        .answer("send", Answer::accept(json!(true)))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), r#"true 7 {"x": 1e400} ["[1,  2]", "\"s\""]"#);
}

/// Finding 5 of the third hardening pass: a `#[serde(flatten)]` map the client fills
/// with a key of its struct's own (`{"name": "n", "extra": {"name": "evil"}}`) writes that
/// key twice in the saved state. It was sealed (release builds) and found unreadable when
/// the token came back, logged at ERROR at the client's will; now the round that would
/// seal it ends the call with a clear error, and a map without such a key is kept as
/// before.
#[tokio::test]
async fn a_flatten_map_that_repeats_a_field_is_refused_when_sealed() {
    let client = TestClient::new(saga_examples::keeps_json::flattened);
    let refused = client
        .call("flattened", json!({"name": "n", "extra": {"name": "evil"}}))
        .then(Answer::accept(json!({"value": true})))
        .run()
        .await
        .expect("the tool's error");
    assert!(refused.is_error(), "{}", refused.text());
    assert!(
        refused.text().contains("does not read back") && refused.text().contains("flatten"),
        "{}",
        refused.text()
    );
    assert_eq!(
        refused.rounds().len(),
        1,
        "refused in the round that would seal it"
    );
    let run = client
        .call("flattened", json!({"name": "n", "extra": {"color": "red"}}))
        .then(Answer::accept(json!({"value": true})))
        .run()
        .await
        .expect("kept");
    assert!(run.text().contains("\"color\":\"red\""), "{}", run.text());
}

/// Raw JSON beside an option that may hold `null`.
#[derive(Serialize, Deserialize)]
struct RawPatch {
    body: Box<serde_json::value::RawValue>,
    value: Option<serde_json::Value>,
}

#[saga_tool]
async fn keeps_raw_patch(value: serde_json::Value, clear: bool) -> Result<String, SagaError> {
    let patch = RawPatch {
        body: serde_json::value::RawValue::from_string("[1]".to_owned())
            .map_err(|error| SagaError::msg(error.to_string()))?,
        value: (!clear).then_some(value),
    };
    let ok: bool = elicit("Send it?").key("send").await?;
    Ok(format!("{ok} {} {:?}", patch.body.get(), patch.value))
}

/// Issue 72, for a type holding a `RawValue`: `Some(Value::Null)` is kept as itself, not
/// read back as `None`. (Until issue 80 such a type was kept as JSON, which has no option,
/// and the round that would seal `Some(Value::Null)` was refused; it is MessagePack now,
/// whose options are marked.) `None` and `Some` of anything else are kept too.
#[tokio::test]
async fn an_option_of_null_beside_raw_json_is_kept_as_itself() {
    let client = TestClient::new(keeps_raw_patch);
    for (arguments, expected) in [
        (
            json!({"value": null, "clear": false}),
            "true [1] Some(Null)",
        ),
        (json!({"value": null, "clear": true}), "true [1] None"),
        (
            json!({"value": 0, "clear": false}),
            "true [1] Some(Number(0))",
        ),
    ] {
        let run = client
            .call("keeps_raw_patch", arguments)
            .answer("send", Answer::accept(json!(true)))
            .run()
            .await
            .expect("kept");
        assert_eq!(run.rounds().len(), 2, "sealed, then resumed");
        assert_eq!(run.text(), expected);
    }
}
