//! Diagrams of sagas: see [`SagaTool::diagram`](super::SagaTool::diagram). The Mermaid
//! text itself is built by the macros, from the function as written.

use rmcp::model::{MetaObject, Tool};

/// The key of a tool's `_meta` in `tools/list` that holds its diagram.
pub const DIAGRAM_META_KEY: &str = "saga/diagram";

/// The diagram a tool's `tools/list` entry carries, if it carries one.
///
/// ```
/// use saga_runtime::engine::{diagram_of, DIAGRAM_META_KEY};
/// let schema = saga_runtime::rmcp::model::JsonObject::new();
/// let mut tool = saga_runtime::rmcp::model::Tool::new("t", "", schema);
/// assert_eq!(diagram_of(&tool), None);
/// let meta = serde_json::json!({ DIAGRAM_META_KEY: "stateDiagram-v2\n" });
/// tool.meta = serde_json::from_value(meta).ok();
/// assert_eq!(diagram_of(&tool), Some("stateDiagram-v2\n"));
/// ```
pub fn diagram_of(tool: &Tool) -> Option<&str> {
    tool.meta.as_ref()?.0.get(DIAGRAM_META_KEY)?.as_str()
}

/// `meta` with `diagram` under [`DIAGRAM_META_KEY`]: what `#[saga_tool]` puts in its
/// tool's `_meta`, next to what `meta = "…"` declares (which keeps its own value under
/// that key, if it sets one).
pub fn with_diagram(meta: Option<MetaObject>, diagram: &str) -> Option<MetaObject> {
    let mut meta = meta.unwrap_or_default();
    meta.0
        .entry(DIAGRAM_META_KEY.to_owned())
        .or_insert_with(|| serde_json::Value::String(diagram.to_owned()));
    Some(meta)
}

/// The diagram of a tool written by hand: its start, and its state names (when it gives
/// them) as states; no flow between them, which only the macro knows.
///
/// ```
/// let text = saga_runtime::engine::minimal_diagram("deploy", &["AskTarget", "AskVerdict"]);
/// assert!(text.starts_with("stateDiagram-v2\n"));
/// assert!(text.contains("    AskTarget\n"));
/// ```
pub fn minimal_diagram(name: &str, states: &[&str]) -> String {
    let mut text = String::from("stateDiagram-v2\n");
    let name: String = name
        .chars()
        .map(|c| match c {
            ';' => ';',
            ':' => '∶',
            '<' => '‹',
            '>' => '›',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect();
    text.push_str(&format!(
        "    Start : {name} (written by hand: its flow is not known)\n"
    ));
    for state in states {
        let id: String = state
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if !id.is_empty() {
            text.push_str(&format!("    {id}\n"));
        }
    }
    text.push_str("    [*] --> Start\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_diagram_joins_the_declared_meta() {
        let declared: MetaObject =
            serde_json::from_value(serde_json::json!({"team": "payments"})).unwrap();
        let meta = with_diagram(Some(declared), "stateDiagram-v2\n").unwrap();
        assert_eq!(meta.0["team"], "payments");
        assert_eq!(meta.0[DIAGRAM_META_KEY], "stateDiagram-v2\n");
        let own: MetaObject =
            serde_json::from_value(serde_json::json!({DIAGRAM_META_KEY: "mine"})).unwrap();
        let meta = with_diagram(Some(own), "generated").unwrap();
        assert_eq!(meta.0[DIAGRAM_META_KEY], "mine", "a declared value is kept");
        let meta = with_diagram(None, "generated").unwrap();
        assert_eq!(meta.0.len(), 1);
    }

    #[test]
    fn a_hand_written_tool_gets_its_start_and_states() {
        assert_eq!(
            minimal_diagram("t", &[]),
            "stateDiagram-v2\n    Start : t (written by hand: its flow is not known)\n    [*] --> Start\n"
        );
        let text = minimal_diagram("a;b", &["After Name", ""]);
        assert!(text.contains("Start : a;b"));
        assert!(text.contains("    After_Name\n"));
    }
}
