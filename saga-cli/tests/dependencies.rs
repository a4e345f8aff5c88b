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

/// The packages the workspace's release profile leaves unoptimized (`[profile.release.
/// package.NAME]` in the root Cargo.toml), for the CLI's install.
fn unoptimized_in_release() -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let manifest = std::fs::read_to_string(root).expect("the workspace's Cargo.toml");
    manifest
        .lines()
        .filter_map(|line| line.trim().strip_prefix("[profile.release.package."))
        .map(|rest| rest.trim_end_matches(']').trim_matches('"').to_owned())
        .collect()
}

/// The release profile builds the CLI's own code and its terminal crates unoptimized,
/// which took 20 s off the install (BENCHMARKS.md). A crate a server also compiles must
/// not be among them: the benches' release servers, and users' servers built in this
/// workspace, would run it unoptimized.
#[test]
fn only_the_clis_own_crates_are_left_unoptimized() {
    let unoptimized = unoptimized_in_release();
    assert!(
        unoptimized.iter().any(|name| name == "saga-cli"),
        "the release profile names the CLI: {unoptimized:?}"
    );
    let cli = normal_dependencies();
    let stale: Vec<&String> = unoptimized
        .iter()
        .filter(|name| !cli.contains(name))
        .collect();
    assert!(
        stale.is_empty(),
        "{stale:?} is in the release profile's list but not in the CLI's graph"
    );
    let server: Vec<String> = cargo_tree(&[
        "-p",
        "saga-runtime",
        "-e",
        "normal",
        "--all-features",
        "--format",
        "{p}",
    ])
    .lines()
    .filter_map(|line| line.split_whitespace().next())
    .map(str::to_owned)
    .collect();
    let shared: Vec<&String> = unoptimized
        .iter()
        .filter(|name| server.contains(name))
        .collect();
    assert!(
        shared.is_empty(),
        "{shared:?} is left unoptimized in release, but a server compiles it too"
    );
}
