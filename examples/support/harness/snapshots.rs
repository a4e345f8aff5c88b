//! Snapshots of sagas' diagrams (`SagaTool::diagram`), in `tests/diagrams/`: a diagram
//! that differs from its snapshot, or has none, fails. `SAGA_SNAPSHOTS=overwrite` writes
//! them instead (read the diff, then commit them): the check is `saga-snapshot`'s, the
//! one every snapshot and golden file of the workspace goes through. `scripts/mermaid-check.sh` parses every snapshot with
//! Mermaid's own parser.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// The ids of the nodes that are not suspension points: the start, the choice nodes (of
/// each loop that suspends, and where paths meet before a branch), and the exits.
fn is_frame(id: &str) -> bool {
    let numbered = |prefix: &str| {
        id.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    matches!(id, "Start" | "Done" | "Failed")
        || numbered("Loop")
        || numbered("Choice")
        || numbered("Return")
}

/// Checks `diagram` (of the saga `name`, whose suspension points are `states`) against
/// `tests/diagrams/{dir}/{name}.mmd`, and that it is well formed: every suspension point
/// is one node of its own, named by its state, and no other node stands for one; every
/// edge joins nodes the diagram declares.
pub fn check(dir: &str, name: &str, diagram: &str, states: &[&str]) {
    well_formed(name, diagram, states);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/diagrams")
        .join(dir)
        .join(format!("{name}.mmd"));
    saga_snapshot::assert_snapshot(&path, name, diagram);
}

fn well_formed(name: &str, diagram: &str, states: &[&str]) {
    let mut lines = diagram.lines();
    assert_eq!(lines.next(), Some("stateDiagram-v2"), "{name}: the header");
    assert!(
        !diagram.contains("control flow not shown"),
        "{name}: the walk and the macro's sites disagree, so the diagram fell back to the \
         sites alone:\n{diagram}"
    );
    // Each node's declaration: its description lines, one after the other.
    let mut declared: Vec<String> = Vec::new();
    let mut edges: Vec<(String, String)> = Vec::new();
    for line in lines {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("state ") {
            let id = rest.split_whitespace().next().unwrap_or_default();
            assert!(rest.ends_with("<<choice>>"), "{name}: {line}");
            declared.push(id.to_owned());
        } else if let Some((from, rest)) = line.split_once(" --> ") {
            let to = rest.split(" : ").next().unwrap_or_default();
            edges.push((from.to_owned(), to.to_owned()));
        } else if let Some((id, _)) = line.split_once(" : ") {
            if declared.last().map(String::as_str) != Some(id) {
                declared.push(id.to_owned());
            }
        } else if !line.starts_with("%%") {
            panic!("{name}: a line of no known form: {line:?}");
        }
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for id in &declared {
        *counts.entry(id.as_str()).or_default() += 1;
        assert!(
            is_frame(id) || states.contains(&id.as_str()),
            "{name}: the node {id} is not one of the saga's states {states:?}"
        );
        assert!(
            id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{name}: {id} is not a plain identifier"
        );
    }
    for (id, count) in &counts {
        assert_eq!(*count, 1, "{name}: the node {id} is declared {count} times");
    }
    for state in states {
        assert_eq!(
            counts.get(state).copied(),
            Some(1),
            "{name}: the suspension point {state} is not exactly once in the diagram:\n{diagram}"
        );
    }
    for (from, to) in &edges {
        for end in [from, to] {
            assert!(
                end == "[*]" || counts.contains_key(end.as_str()),
                "{name}: an edge {from} --> {to} names an undeclared node"
            );
        }
    }
    assert!(
        edges
            .iter()
            .any(|(from, to)| from == "[*]" && to == "Start"),
        "{name}: no start"
    );
}
