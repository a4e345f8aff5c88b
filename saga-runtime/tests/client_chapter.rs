//! The guide's client chapter shows the official SDKs' code as plain markdown (what GitHub
//! shows), copied from the drivers CI runs against saga (`tests/clients`). Each block
//! follows a `<!-- PATH:ANCHOR -->` line naming where it comes from, and must equal that
//! anchor's lines (`ANCHOR: name` … `ANCHOR_END: name`), dedented: a driver changed
//! without its page fails here, so the page shows only code that passes.

/// The lines between `ANCHOR: name` and `ANCHOR_END: name` of `text`, dedented.
fn anchor(text: &str, name: &str) -> Option<String> {
    let mut lines = Vec::new();
    let mut inside = false;
    let mut found = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.ends_with(&format!("ANCHOR: {name}")) {
            inside = true;
            found = true;
        } else if trimmed.ends_with(&format!("ANCHOR_END: {name}")) {
            inside = false;
        } else if inside {
            lines.push(line);
        }
    }
    found.then(|| dedent(&lines))
}

/// `lines` without the indentation they share (blank lines aside), joined.
fn dedent(lines: &[&str]) -> String {
    let indent = lines
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|line| line.get(indent..).unwrap_or("").trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_block_of_the_client_chapter_is_its_drivers_code() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let chapter = std::fs::read_to_string(format!("{root}/docs/guide/src/clients.md"))
        .expect("the client chapter");
    assert!(
        !chapter.contains("{{#include"),
        "the chapter is plain markdown: no mdbook include"
    );
    let lines: Vec<&str> = chapter.lines().collect();
    let mut checked = 0;
    for (i, line) in lines.iter().enumerate() {
        let Some(source) = line
            .strip_prefix("<!-- ")
            .and_then(|rest| rest.strip_suffix(" -->"))
        else {
            continue;
        };
        let (path, name) = source.rsplit_once(':').expect("PATH:ANCHOR");
        let driver = std::fs::read_to_string(format!("{root}/{path}"))
            .unwrap_or_else(|error| panic!("{path}: {error}"));
        let expected = anchor(&driver, name).unwrap_or_else(|| panic!("no anchor {source}"));
        assert!(lines[i + 1].starts_with("```"), "a block follows {source}");
        let block: Vec<&str> = lines[i + 2..]
            .iter()
            .take_while(|line| !line.starts_with("```"))
            .copied()
            .collect();
        assert_eq!(
            dedent(&block),
            expected,
            "the block after `{line}` differs from its driver"
        );
        checked += 1;
    }
    // Both SDKs' client, handlers, agent turn and call, and both tasks.
    assert_eq!(checked, 10, "blocks checked");
    for limit in ["maxRounds: 50", "input_required_max_rounds=50"] {
        assert!(chapter.contains(limit), "the chapter shows {limit}");
    }
}
