//! `saga` against a hostile server (tests/hostile_server.py, over stdio): no control
//! character of the server's reaches the terminal, and a tool list that never ends is not
//! followed forever.

use std::process::Command;

fn saga(args: &[&str], endless: bool) -> (bool, String, String) {
    saga_with(args, &[("HOSTILE_ENDLESS", if endless { "1" } else { "" })])
}

/// `saga` with `env` set (an empty value: unset).
fn saga_with(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let server = format!(
        "python3 {}/tests/hostile_server.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut full = vec![args[0], "--stdio", server.as_str()];
    full.extend_from_slice(&args[1..]);
    let mut command = Command::new(env!("CARGO_BIN_EXE_saga"));
    for (key, value) in env {
        if value.is_empty() {
            command.env_remove(key);
        } else {
            command.env(key, value);
        }
    }
    let output = command.args(&full).output().expect("saga runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Whether `text` holds anything a terminal would act on.
fn has_control(text: &str) -> bool {
    text.chars().any(|c| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

#[test]
fn an_endless_tool_list_is_not_followed_forever_and_nothing_raw_is_printed() {
    let (ok, stdout, stderr) = saga(&["tools"], true);
    assert!(!ok, "an endless list is an error: {stdout}");
    assert!(stderr.contains("past 100 pages"), "{stderr}");
    assert!(!has_control(&stdout), "{stdout:?}");
    assert!(!has_control(&stderr), "{stderr:?}");
}

#[test]
fn a_server_that_never_answers_a_page_is_given_up_on() {
    let started = std::time::Instant::now();
    let (ok, stdout, stderr) = saga_with(
        &["tools"],
        &[("HOSTILE_SILENT", "1"), ("SAGA_REQUEST_TIMEOUT", "1")],
    );
    assert!(!ok, "{stdout}");
    assert!(
        stderr.contains("tools/list: the server did not answer within 1 s"),
        "{stderr}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn a_result_full_of_control_sequences_is_shown_escaped() {
    let (_, stdout, stderr) = saga(&["tools"], false);
    assert!(stdout.contains("Looks harmless\\u{1b}]52;c;"), "{stdout}");
    // The title, output schema and task support, read off the wire, escaped as well.
    assert!(stdout.contains("  title: Title\\u{1b}]52;c;"), "{stdout}");
    assert!(stdout.contains("  output: {out\\u{1b}]52;c;"), "{stdout}");
    assert!(
        stdout.contains("  task support: optional\\u{1b}]52;c;"),
        "{stdout}"
    );
    assert!(!has_control(&stdout), "{stdout:?}");
    assert!(!has_control(&stderr), "{stderr:?}");
    let (_, stdout, stderr) = saga(&["call", "evil"], false);
    assert!(
        stdout.contains("done\\u{1b}"),
        "reached the result: {stdout}"
    );
    assert!(!has_control(&stdout), "{stdout:?}");
    assert!(!has_control(&stderr), "{stderr:?}");
}
