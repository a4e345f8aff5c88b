//! Tools that keep JSON-shaped data across a suspension, as MCP tools hold it: a free-form
//! argument, a `json!` local, API types with the usual serde attributes, rmcp's model
//! types, types from chrono, uuid and url; in tools, in a `#[saga_fn]` helper and in a
//! task. Each asks one yes-or-no question keyed `ok` and then answers with what it kept,
//! as JSON. Served by `examples/keeps_json.rs`; the tests restart the server between the
//! rounds (`tests/formats/keeps_json.rs`).
//!
//! What postcard cannot read (a `serde_json::Value`, a tagged enum, `flatten`,
//! `skip_serializing_if`) is kept as MessagePack; the rest as postcard. The tools' code
//! does not say which: `#[saga_tool]` and the runtime choose.

use std::collections::{BTreeMap, HashMap};

use saga_runtime::prelude::*;
use serde_json::{Map, Value, json};

/// The confirmation every tool here asks for: `{"ok": {"action": "accept", "content":
/// {"value": true}}}` answers it.
const CONFIRM: &str = "Go on with this?";

/// Takes a free-form JSON document, asks before acting on it, then uses it: the example
/// of the guide and of `#[saga_tool]`'s docs.
#[saga_tool(task)]
pub async fn value_argument(
    #[arg(description = "Any JSON document")] payload: Value,
) -> Result<String, SagaError> {
    checkpoint().await;
    let ok: bool = elicit(format!("Apply {payload}?")).key("ok").await?;
    if !ok {
        return Ok("nothing applied".into());
    }
    let fields = payload.as_object().map_or(0, Map::len);
    Ok(json!({"applied": payload, "fields": fields}).to_string())
}

/// A `json!` local, kept across the question.
#[saga_tool(task)]
pub async fn value_local(name: String) -> Result<String, SagaError> {
    checkpoint().await;
    let document = json!({
        "name": name,
        "tags": ["a", "b"],
        "ratio": 1.5,
        "nothing": null,
        "nested": {"deep": [1, {"x": true}]},
    });
    let ok: bool = elicit(CONFIRM).key("ok").await?;
    Ok(json!({"ok": ok, "document": document}).to_string())
}

/// An API type with the most common serde attribute.
#[derive(Debug, Serialize, Deserialize)]
pub struct Draft {
    pub id: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
}

/// A struct with `skip_serializing_if`, kept across the question.
#[saga_tool(task)]
pub async fn skipping_struct(id: u32, note: Option<String>) -> Result<String, SagaError> {
    checkpoint().await;
    let draft = Draft {
        id,
        note,
        labels: Vec::new(),
    };
    let ok: bool = elicit(CONFIRM).key("ok").await?;
    Ok(json!({"ok": ok, "draft": draft}).to_string())
}

/// An internally tagged enum, as JSON APIs tag their variants.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    Delete { id: u64 },
    Rename { from: String, to: String },
    Noop,
}

/// An internally tagged enum, kept across the question.
#[saga_tool(task)]
pub async fn tagged_enum(kind: String) -> Result<String, SagaError> {
    checkpoint().await;
    let action = match kind.as_str() {
        "delete" => Action::Delete { id: 7 },
        "rename" => Action::Rename {
            from: "old".into(),
            to: "new".into(),
        },
        _ => Action::Noop,
    };
    let ok: bool = elicit(CONFIRM).key("ok").await?;
    Ok(json!({"ok": ok, "action": action}).to_string())
}

/// A record whose unknown fields are kept with `flatten`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Record {
    pub name: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A struct with `#[serde(flatten)]`, kept across the question.
#[saga_tool(task)]
pub async fn flattened(name: String, extra: Map<String, Value>) -> Result<String, SagaError> {
    checkpoint().await;
    let record = Record { name, extra };
    let ok: bool = elicit(CONFIRM).key("ok").await?;
    Ok(json!({"ok": ok, "record": record}).to_string())
}

/// A `HashMap<String, String>`, which postcard reads: it stays postcard.
#[saga_tool(task)]
pub async fn string_map(entries: HashMap<String, String>) -> Result<String, SagaError> {
    checkpoint().await;
    let ok: bool = elicit(CONFIRM).key("ok").await?;
    let sorted: BTreeMap<String, String> = entries.into_iter().collect();
    Ok(json!({"ok": ok, "entries": sorted}).to_string())
}

/// Untagged: a number or a text.
#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Loose {
    Number(i64),
    Text(String),
}

/// Adjacently tagged.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", content = "c")]
pub enum Adjacent {
    Point { x: i32, y: i32 },
    Label(String),
}

/// Fields with defaults.
#[derive(Debug, Serialize, Deserialize)]
pub struct Settings {
    #[serde(default)]
    pub retries: u32,
    #[serde(default = "default_region")]
    pub region: String,
}

fn default_region() -> String {
    "eu".into()
}

/// Every other JSON-shaped kind at once: untagged and adjacently tagged enums, defaults,
/// `Vec`, `Option` and maps of them, rmcp's `Content` and `CallToolResult`, and chrono,
/// uuid and url values.
#[saga_tool(task)]
pub async fn every_shape(text: String) -> Result<String, SagaError> {
    checkpoint().await;
    let loose = vec![Loose::Number(3), Loose::Text(text.clone())];
    let adjacent = Adjacent::Point { x: 1, y: -2 };
    let labelled = Some(Adjacent::Label(text.clone()));
    let settings: Settings = serde_json::from_value(json!({})).map_err(SagaError::msg)?;
    let values: Vec<Value> = vec![json!(1), json!({"a": [null]}), json!(text)];
    let maybe: Option<Draft> = Some(Draft {
        id: 1,
        note: None,
        labels: vec!["x".into()],
    });
    let by_name: BTreeMap<String, Value> = [("k".to_owned(), json!({"v": 2}))].into();
    let content = Content::text(format!("kept {text}"));
    let result = CallToolResult::success(vec![Content::text("inner")]);
    let when: chrono::DateTime<chrono::Utc> =
        "2026-07-28T12:30:00Z".parse().map_err(SagaError::msg)?;
    let id = uuid::Uuid::from_u128(0x1234_5678_9abc_def0_1234_5678_9abc_def0);
    let link = url::Url::parse("https://example.com/a?b=c#d").map_err(SagaError::msg)?;
    let ok: bool = elicit(CONFIRM).key("ok").await?;
    Ok(json!({
        "ok": ok,
        "loose": loose,
        "adjacent": adjacent,
        "labelled": labelled,
        "settings": settings,
        "values": values,
        "maybe": maybe,
        "by_name": by_name,
        "content": content,
        "result": result,
        "when": when,
        "id": id,
        "link": link,
    })
    .to_string())
}

/// A helper that keeps a JSON document across its own question.
#[saga_fn]
pub async fn confirmed(document: Value) -> Result<Value, SagaError> {
    let ok: bool = elicit(CONFIRM).key("ok").await?;
    Ok(json!({"ok": ok, "document": document}))
}

/// A tool whose JSON is kept in a `#[saga_fn]` helper's state, and in its own.
#[saga_tool(task)]
pub async fn helper_keeps_json(payload: Value) -> Result<String, SagaError> {
    checkpoint().await;
    let before = json!({"seen": payload.clone()});
    let answer = confirmed(payload).await?;
    Ok(json!({"before": before, "answer": answer}).to_string())
}

fn unlimited() -> u32 {
    u32::MAX
}

fn is_unlimited(n: &u32) -> bool {
    *n == u32::MAX
}

/// A `skip_serializing_if` no sample value takes (the samples are 0 and 1): postcard is
/// chosen for it, and the seal finds out, at `u32::MAX`, that it does not read back.
#[derive(Debug, Serialize, Deserialize)]
pub struct Limit {
    #[serde(default = "unlimited", skip_serializing_if = "is_unlimited")]
    pub max: u32,
    pub label: String,
}

/// Keeps a [`Limit`]: without `max`, its state is sealed in the tagged form.
#[saga_tool(task)]
pub async fn rare_skip(max: Option<u32>) -> Result<String, SagaError> {
    checkpoint().await;
    let limit = Limit {
        max: max.unwrap_or_else(unlimited),
        label: format!("max {max:?}"),
    };
    let ok: bool = elicit(CONFIRM).key("ok").await?;
    let unlimited = limit.max == u32::MAX;
    Ok(json!({"ok": ok, "limit": limit, "unlimited": unlimited}).to_string())
}

/// The same as [`value_argument`], run as a task.
#[saga_tool(task)]
pub async fn task_keeps_json(payload: Value) -> Result<String, SagaError> {
    checkpoint().await;
    let draft = Draft {
        id: 2,
        note: None,
        labels: Vec::new(),
    };
    let ok: bool = elicit(CONFIRM).key("ok").await?;
    Ok(json!({"ok": ok, "payload": payload, "draft": draft}).to_string())
}

/// A PATCH-style change, as JSON APIs write it: `Some(None)` clears a field, `None`
/// leaves it alone.
#[derive(Debug, Serialize, Deserialize)]
pub struct Patch {
    pub note: Option<Option<String>>,
    pub value: Option<Value>,
    pub extra: Value,
}

/// Options that hold nothing, kept across the question: `Some(Value::Null)`, `Some(None)`,
/// `Some(())`, bare and inside a struct and a `Vec` (issue 72: they came back `None`).
/// Answers with each one's `Debug`, which tells `Some(Null)` from `None`.
#[saga_tool(task)]
pub async fn keeps_options(clear: bool) -> Result<String, SagaError> {
    checkpoint().await;
    let body: Option<Value> = Some(Value::Null);
    let name: Option<Option<String>> = if clear { Some(None) } else { None };
    let seen: Option<()> = Some(());
    let patch = Patch {
        note: if clear {
            Some(None)
        } else {
            Some(Some("n".into()))
        },
        value: Some(Value::Null),
        extra: json!({"k": null}),
    };
    let list: Vec<Option<Value>> = vec![Some(Value::Null), None];
    let ok: bool = elicit(CONFIRM).key("ok").await?;
    Ok(json!({
        "ok": ok,
        "body": format!("{body:?}"),
        "name": format!("{name:?}"),
        "seen": format!("{seen:?}"),
        "patch": format!("{:?} {:?} {}", patch.note, patch.value, patch.extra),
        "list": format!("{list:?}"),
    })
    .to_string())
}

/// The server of these tools.
pub fn server(keys: KeyRing, store: TaskStore) -> anyhow::Result<SagaServer> {
    Ok(SagaServer::builder()
        .info("keeps-json", "1.0.0")
        .keys(keys)
        .tool(value_argument)
        .tool(value_local)
        .tool(skipping_struct)
        .tool(tagged_enum)
        .tool(flattened)
        .tool(string_map)
        .tool(every_shape)
        .tool(helper_keeps_json)
        .tool(rare_skip)
        .tool(task_keeps_json)
        .tool(keeps_options)
        .task_settings(crate::cli::task_settings(store))
        .build()?)
}
