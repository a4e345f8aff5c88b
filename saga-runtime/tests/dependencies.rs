//! What every user's build compiles: saga's own benches and docs use a Prometheus exporter
//! and a tracing subscriber, which no user needs, so they are dev-dependencies only (or
//! optional, behind the feature that needs them: `otel`'s exporter installs a subscriber)
//! (a user crate: 146 crates and 104 s of clean release build with them, 120 and 90 s
//! without; BENCHMARKS.md).

/// The crates only saga's benches, tests and doctests use.
const DEV_ONLY: &[&str] = &["metrics-exporter-prometheus", "tracing-subscriber"];

#[test]
fn bench_and_doc_crates_are_not_dependencies_of_users() {
    let manifest = include_str!("../Cargo.toml");
    let mut section = String::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line.to_owned();
            continue;
        }
        // `[dependencies]` and `[target.'cfg(..)'.dependencies]`: what users compile.
        let for_users = section == "[dependencies]"
            || (section.starts_with("[target.") && section.ends_with(".dependencies]"));
        // An optional dependency is compiled only by a build that asks for its feature
        // (`otel` brings a tracing subscriber, for the exporter's own).
        if !for_users || line.contains("optional = true") {
            continue;
        }
        for name in DEV_ONLY {
            assert!(
                !line.starts_with(&format!("{name} ")) && !line.starts_with(&format!("{name}=")),
                "{name} is a dependency of every user's build ({section}); make it a \
                 dev-dependency"
            );
        }
    }
}

/// The `[features]` section of saga-runtime's manifest: each feature and what it turns on.
fn features() -> Vec<(String, String)> {
    let manifest = include_str!("../Cargo.toml");
    let mut inside = false;
    let mut features = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[features]";
            continue;
        }
        if inside && let Some((name, value)) = line.split_once(" = ") {
            features.push((name.to_owned(), value.to_owned()));
        }
    }
    features
}

/// A stdio-only server (`default-features = false`) compiles no HTTP stack: axum, hyper,
/// hyper-util and tower are optional, and the default `http` feature is what turns them
/// on (`openai` and `oauth` bring hyper's client).
#[test]
fn the_http_stack_is_the_http_features() {
    let manifest = include_str!("../Cargo.toml");
    for name in ["axum", "hyper", "hyper-util", "tower"] {
        let line = manifest
            .lines()
            .find(|line| line.starts_with(&format!("{name} = ")))
            .unwrap_or_else(|| panic!("{name} is a dependency"));
        assert!(line.contains("optional = true"), "{line}");
    }
    let features = features();
    let feature = |name: &str| {
        features
            .iter()
            .find(|(feature, _)| feature == name)
            .map(|(_, value)| value.clone())
            .unwrap_or_else(|| panic!("feature {name}"))
    };
    assert_eq!(feature("default"), r#"["http"]"#);
    for name in ["dep:axum", "dep:hyper", "dep:hyper-util", "dep:tower"] {
        assert!(feature("http").contains(name), "http turns on {name}");
    }
}

/// The guide's table of features (docs/guide/src/writing-tools.md) names each feature of
/// the manifest, and no other.
#[test]
fn the_guide_names_every_feature() {
    let guide = include_str!("../../docs/guide/src/writing-tools.md");
    let listed: Vec<&str> = guide
        .lines()
        .filter(|line| line.starts_with("| `") && !line.starts_with("| `#["))
        .flat_map(|line| line.split('|').nth(1))
        .flat_map(|cell| cell.split('`').skip(1).step_by(2))
        .collect();
    let mut manifest: Vec<String> = features()
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| name != "default")
        .collect();
    manifest.sort();
    let mut listed: Vec<String> = listed.into_iter().map(str::to_owned).collect();
    listed.sort();
    assert_eq!(
        listed, manifest,
        "the guide's features table against saga-runtime's"
    );
}
