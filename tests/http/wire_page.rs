//! docs/guide/src/wire.md, the wire by hand: its `sh` blocks, exactly as the page shows
//! them, run in one bash against the deploy server, and each response is the one the
//! page shows after it (the parts it does not elide).

use std::process::Command;

use saga_examples::harness::process::ServerProcess;

const KEY_HEX: &str = "2222222222222222222222222222222222222222222222222222222222222222";

/// The page's `sh` blocks, in order, and the `json` block shown after each (if any).
fn blocks(page: &str) -> Vec<(String, Option<String>)> {
    let mut blocks: Vec<(String, Option<String>)> = Vec::new();
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        let kind = match line.trim() {
            "```sh" => "sh",
            "```json" => "json",
            _ => continue,
        };
        let body: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        let body = body.join("\n");
        match kind {
            "sh" => blocks.push((body, None)),
            _ => {
                if let Some(last) = blocks.last_mut() {
                    last.1 = Some(body);
                }
            }
        }
    }
    blocks
}

/// The fragments of a `json` block the page spells out: what lies between its `…`s, each
/// with the line breaks the page added for reading taken out.
fn shown_fragments(shown: &str) -> Vec<String> {
    let joined: String = shown.lines().map(str::trim).collect::<Vec<_>>().join("");
    joined
        .split('…')
        .map(|part| part.trim_matches(|c: char| c.is_whitespace() || "\",{}[]:".contains(c)))
        .filter(|part| part.len() > 8)
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_wire_pages_curl_session_runs_as_shown() {
    let page = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/guide/src/wire.md"
    ))
    .expect("the wire page");
    let blocks = blocks(&page);
    assert!(blocks.len() >= 6, "the page's sh blocks: {blocks:?}");
    let server = ServerProcess::deploy(KEY_HEX);
    let url = format!("http://{}/mcp", server.addr);

    // One bash runs every block in turn (the later ones use what the first defines),
    // printing a marker after each so that the output splits per block.
    let mut script = String::from("set -euo pipefail\n");
    for (index, (sh, _)) in blocks.iter().enumerate() {
        script.push_str(sh);
        script.push_str(&format!("\necho; echo '<<block {index}>>'\n"));
    }
    let output = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .env("URL", &url)
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the page's session failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut rest: &str = &stdout;
    for (index, (sh, shown)) in blocks.iter().enumerate() {
        let marker = format!("<<block {index}>>");
        let (printed, after) = rest.split_once(&marker).expect("each block's marker");
        rest = after;
        let Some(shown) = shown else { continue };
        for fragment in shown_fragments(shown) {
            assert!(
                printed.contains(&fragment),
                "block {index} ({sh}) printed\n{printed}\nwhich lacks what the page shows: {fragment}"
            );
        }
    }
}

#[test]
fn the_pages_fragments_are_what_a_json_block_spells_out() {
    let fragments = shown_fragments(
        "{\"a\":\"complete\",\"tools\":[{\"name\":\"complex_tool\", …}]}\n {\"x\":\"Invalid or expired requestState\"}",
    );
    assert_eq!(
        fragments,
        [
            "a\":\"complete\",\"tools\":[{\"name\":\"complex_tool",
            "x\":\"Invalid or expired requestState"
        ]
    );
}
