//! What `cargo install saga-cli` compiles (issue 78): the client and the token reader,
//! not the server. The CLI reads tokens and layout files with saga-wire alone; a
//! dependency on saga-runtime would put the whole server (and its wait for rmcp's build)
//! back on the install's critical path, and a store, model or OAuth crate would add
//! minutes for no command.

use std::process::Command;

/// What `cargo tree ARGS` prints (offline, from this crate's directory).
fn cargo_tree(args: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .arg("tree")
        .args(args)
        .args(["--prefix", "none", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The crates of saga-cli's normal dependency graph (`cargo tree -e normal`), by name.
fn normal_dependencies() -> Vec<String> {
    let mut names: Vec<String> = cargo_tree(&["-p", "saga-cli", "-e", "normal", "--format", "{p}"])
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The features of saga-wire that `package`'s normal graph turns on.
fn wire_features(package: &str) -> Vec<String> {
    cargo_tree(&["-p", package, "-e", "normal,features", "-i", "saga-wire"])
        .lines()
        .filter_map(|line| line.strip_prefix("saga-wire feature "))
        .map(|feature| {
            feature
                .trim_end_matches(" (*)")
                .trim_matches('"')
                .to_owned()
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[test]
fn the_cli_reads_tokens_without_sealing_them() {
    // The probe sees the feature where it is on: the runtime seals.
    assert!(
        wire_features("saga-runtime").iter().any(|f| f == "seal"),
        "the runtime's graph turns saga-wire's `seal` on"
    );
    let features = wire_features("saga-cli");
    assert!(
        features.is_empty(),
        "saga-cli's install would build saga-wire with {features:?}: the CLI never seals or \
         opens a token, and `seal` compiles ring, chacha20 and rand"
    );
}

#[test]
fn the_cli_builds_without_the_server_its_stores_models_oauth_or_ciphers() {
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
