//! Diagrams of sagas: see [`SagaTool::diagram`](crate::engine::SagaTool::diagram). The Mermaid
//! text itself is built by the macros, from the function as written.

use rmcp::model::{MetaObject, Tool};

pub use saga_wire::DIAGRAM_META_KEY;

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

/// `diagram` without the states named `dropped`, each edge through one joined up (its
/// labels kept, in order): the call sites of ordinary `async fn`s, which the macro draws
/// as a helper's suspension since the syntax cannot tell them from a `#[saga_fn]`'s, and
/// which the types show never suspend (they save nothing: no point has their name).
pub(crate) fn drop_states(diagram: &str, dropped: &[&str]) -> String {
    if dropped.is_empty() {
        return diagram.to_owned();
    }
    // Only a call's node: any other state of that name is the macro's own.
    let dropped: Vec<&str> = dropped
        .iter()
        .copied()
        .filter(|id| {
            diagram.lines().any(|line| {
                line.trim()
                    .strip_prefix(id)
                    .and_then(|rest| rest.strip_prefix(" : helper "))
                    .is_some_and(|rest| rest.ends_with(": see its own diagram"))
            })
        })
        .collect();
    let dropped = dropped.as_slice();
    struct Edge {
        from: String,
        to: String,
        label: String,
    }
    let mut states: Vec<(&str, &str)> = Vec::new();
    let mut edges: Vec<Edge> = Vec::new();
    let mut head = "";
    for line in diagram.lines() {
        let trimmed = line.trim();
        if let Some((from, rest)) = trimmed.split_once(" --> ") {
            let (to, label) = rest.split_once(" : ").unwrap_or((rest, ""));
            edges.push(Edge {
                from: from.to_owned(),
                to: to.to_owned(),
                label: label.to_owned(),
            });
        } else if trimmed.starts_with("stateDiagram") {
            head = line;
        } else if !trimmed.is_empty() {
            let id = trimmed
                .strip_prefix("state ")
                .unwrap_or(trimmed)
                .split([' ', ':'])
                .next()
                .unwrap_or_default();
            states.push((id, line));
        }
    }
    for &gone in dropped {
        let incoming: Vec<(String, String)> = edges
            .iter()
            .filter(|edge| edge.to == gone && edge.from != gone)
            .map(|edge| (edge.from.clone(), edge.label.clone()))
            .collect();
        let outgoing: Vec<(String, String)> = edges
            .iter()
            .filter(|edge| edge.from == gone && edge.to != gone)
            .map(|edge| (edge.to.clone(), edge.label.clone()))
            .collect();
        let at = edges
            .iter()
            .position(|edge| edge.from == gone || edge.to == gone);
        edges.retain(|edge| edge.from != gone && edge.to != gone);
        let joined = incoming.iter().flat_map(|(from, before)| {
            outgoing.iter().map(move |(to, after)| Edge {
                from: from.clone(),
                to: to.clone(),
                label: match (before.is_empty(), after.is_empty()) {
                    (true, _) => after.clone(),
                    (false, true) => before.clone(),
                    (false, false) => format!("{before}, then {after}"),
                },
            })
        });
        let joined: Vec<Edge> = joined
            .filter(|new| {
                !edges
                    .iter()
                    .any(|old| old.from == new.from && old.to == new.to && old.label == new.label)
            })
            .collect();
        let at = at.unwrap_or(edges.len()).min(edges.len());
        edges.splice(at..at, joined);
        states.retain(|(id, _)| *id != gone);
    }
    let mut out = String::from(if head.is_empty() {
        "stateDiagram-v2"
    } else {
        head
    });
    out.push('\n');
    for (_, line) in &states {
        out.push_str(line);
        out.push('\n');
    }
    for edge in &edges {
        if edge.label.is_empty() {
            out.push_str(&format!("    {} --> {}\n", edge.from, edge.to));
        } else {
            out.push_str(&format!(
                "    {} --> {} : {}\n",
                edge.from, edge.to, edge.label
            ));
        }
    }
    out
}

/// `text` with every character an identifier cannot hold (`-`, `.`, spaces, …) made `_`:
/// a state's id in a diagram, a tool's name as the fn of its code is likely named.
pub(crate) fn identifier_chars(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
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
        let id = identifier_chars(state);
        if !id.is_empty() {
            text.push_str(&format!("    {id}\n"));
        }
    }
    text.push_str("    [*] --> Start\n");
    text
}

#[cfg(test)]
mod drop_tests {
    use super::drop_states;

    #[test]
    fn a_dropped_state_is_joined_around() {
        let diagram = "stateDiagram-v2\n    A : ask a\n    B : plain().await\n    B : helper plain: see its own diagram\n    C : ask c\n    [*] --> A\n    A --> B : yes\n    B --> C\n    B --> [*] : ? error\n    C --> [*]\n";
        let dropped = drop_states(diagram, &["B"]);
        assert_eq!(
            dropped,
            "stateDiagram-v2\n    A : ask a\n    C : ask c\n    [*] --> A\n    A --> C : yes\n    A --> [*] : yes, then ? error\n    C --> [*]\n"
        );
        assert_eq!(drop_states(diagram, &[]), diagram);
        // The first state dropped: the start joins what follows it.
        let first = drop_states(
            "stateDiagram-v2\n    B : helper x: see its own diagram\n    A : y\n    [*] --> B\n    B --> A\n    A --> [*]\n",
            &["B"],
        );
        assert_eq!(
            first,
            "stateDiagram-v2\n    A : y\n    [*] --> A\n    A --> [*]\n"
        );
        // A state that is not a call's keeps its place, whatever its name.
        let kept = "stateDiagram-v2\n    B : ask\n    [*] --> B\n    B --> [*]\n";
        assert_eq!(drop_states(kept, &["B"]), kept);
    }
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
