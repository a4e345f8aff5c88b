//! What every user's build compiles: saga's own benches and docs use a Prometheus exporter
//! and a tracing subscriber, which no user needs, so they are dev-dependencies only
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
        if !for_users {
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
