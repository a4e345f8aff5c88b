//! Snapshots of sagas' diagrams (`SagaTool::diagram`), in `tests/diagrams/`: a diagram
//! that differs from its snapshot, or has none, fails. `SAGA_SNAPSHOTS=overwrite` writes
//! them instead (read the diff, then commit them), as it does for every snapshot and
//! golden file of the workspace. `scripts/mermaid-check.sh` parses every snapshot with
//! Mermaid's own parser.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
    matches_snapshot(&path, name, diagram);
}

/// `diagram` against the snapshot at `path`: missing or different, it fails; with
/// `SAGA_SNAPSHOTS=overwrite`, it is written there instead.
fn matches_snapshot(path: &Path, name: &str, diagram: &str) {
    if overwrite() {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("the snapshot directory can be made");
        }
        std::fs::write(path, diagram).expect("the snapshot can be written");
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_else(|error| {
        panic!(
            "{name}: no snapshot at {} ({error}); write it with SAGA_SNAPSHOTS=overwrite, read \
             it, and commit it",
            path.display()
        )
    });
    assert!(
        expected == diagram,
        "{name}: the diagram differs from {}; if the change is meant, rerun with \
         SAGA_SNAPSHOTS=overwrite and read the diff.\n--- expected\n{expected}\n--- got\n{diagram}",
        path.display()
    );
}

/// Whether snapshots are to be written rather than checked: `SAGA_SNAPSHOTS=overwrite`.
fn overwrite() -> bool {
    std::env::var_os("SAGA_SNAPSHOTS").is_some_and(|v| v == "overwrite")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(check: impl FnOnce() + std::panic::UnwindSafe) -> String {
        let payload = std::panic::catch_unwind(check).expect_err("the check fails");
        payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default()
    }

    /// A diagram without a snapshot fails: nothing passes for want of a file.
    #[test]
    fn a_missing_snapshot_fails_and_a_different_one_too() {
        if overwrite() {
            return; // writing them is what was asked
        }
        let dir = std::env::temp_dir().join(format!("saga-snapshots-{}", std::process::id()));
        let missing = dir.join("missing.mmd");
        let message = failure(|| matches_snapshot(&missing, "missing", "stateDiagram-v2\n"));
        assert!(message.contains("no snapshot at"), "{message}");
        assert!(
            !missing.exists(),
            "a failing check wrote {}",
            missing.display()
        );

        std::fs::create_dir_all(&dir).expect("a temp dir");
        let other = dir.join("other.mmd");
        std::fs::write(&other, "stateDiagram-v2\n").expect("written");
        let message = failure(|| matches_snapshot(&other, "other", "stateDiagram-v2\n  x\n"));
        assert!(message.contains("differs from"), "{message}");
        matches_snapshot(&other, "other", "stateDiagram-v2\n");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
