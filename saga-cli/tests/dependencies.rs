//! What `cargo install saga-cli` compiles (issue 78): the client and the token reader,
//! not the server. The CLI reads tokens and layout files with saga-wire alone; a
//! dependency on saga-runtime would put the whole server (and its wait for rmcp's build)
//! back on the install's critical path, and a store, model or OAuth crate would add
//! minutes for no command.

use std::process::Command;

/// The crates of saga-cli's normal dependency graph (`cargo tree -e normal`), by name.
fn normal_dependencies() -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args([
            "tree",
            "-p",
            "saga-cli",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_cli_builds_without_the_server_its_stores_models_or_oauth() {
    let names = normal_dependencies();
    assert!(
        names.iter().any(|name| name == "saga-wire"),
        "the CLI reads tokens with saga-wire: {names:?}"
    );
    assert!(
        names.iter().any(|name| name == "rmcp"),
        "the CLI speaks MCP with rmcp's client: {names:?}"
    );
    let server_only = [
        "saga-runtime",
        "saga-macros",
        "axum",
        "rusqlite",
        "redis",
        "tokio-postgres",
        "deadpool-postgres",
        "jsonwebtoken",
        "hyper-rustls",
        "rustls",
        "opentelemetry",
        "process-wrap",
        // saga-wire's `seal`: the CLI reads tokens, it never seals or opens one.
        "ring",
        "chacha20",
        "rand",
    ];
    let found: Vec<&str> = server_only
        .into_iter()
        .filter(|crate_name| names.iter().any(|name| name == crate_name))
        .collect();
    assert!(
        found.is_empty(),
        "saga-cli's install would compile {found:?}, which no command of it needs"
    );
}
