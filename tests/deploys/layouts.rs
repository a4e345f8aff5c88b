//! Every example carries the layout file of its build (`examples/layouts/`, and the
//! upgrade examples' own): a change to an example that would refuse the calls in flight at
//! a deploy fails here, naming the tool, the point and what changed, until the file is
//! rewritten (`SAGA_LAYOUT=overwrite cargo test --test deploys layouts::`, and the
//! binaries' `--write-layout FILE`).

use saga_examples::harness::process::example_binary;

const KEY: &str = "d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7";

/// The check as a user writes it: one line in a test.
#[test]
fn the_hand_written_deploy_tool_keeps_its_layout() {
    let tools = saga_runtime::serve::SagaTools::builder()
        .keys(saga_runtime::state::KeyRing::ephemeral())
        .tool(saga_examples::deploy_by_hand::ComplexToolByHand)
        .build()
        .expect("the tools build");
    saga_runtime::deploy::assert_layout(&tools, "examples/layouts/deploy_by_hand.layout");
}

/// Each serving example, as its own binary, against its committed file.
#[test]
fn every_example_matches_its_layout_file() {
    let root = env!("CARGO_MANIFEST_DIR");
    for (example, file) in [
        ("deploy", "examples/layouts/deploy.layout"),
        ("weather", "examples/layouts/weather.layout"),
        ("migrate", "examples/layouts/migrate.layout"),
        ("quickstart", "examples/layouts/quickstart.layout"),
        (
            "conformance_server",
            "examples/layouts/conformance_server.layout",
        ),
        ("upgrade_v1", "examples/upgrade_v1/saga.layout"),
        ("upgrade_v2", "examples/upgrade_v2/saga.layout"),
    ] {
        let output = std::process::Command::new(example_binary(example))
            .args(["--check-layout", &format!("{root}/{file}")])
            .env("SAGA_KEYS", KEY)
            .output()
            .expect("the example runs");
        assert!(
            output.status.success(),
            "{example} against {file}:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// The check fails on a file that records a point this build no longer resumes: it is
/// not a check that passes whatever the file says.
#[test]
fn a_stale_file_fails_the_check() {
    let dir = std::env::temp_dir().join(format!("saga-layouts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let file = dir.join("deploy.layout");
    let text = std::fs::read_to_string("examples/layouts/deploy.layout").expect("the file");
    std::fs::write(&file, text.replace("target: str", "target: u64")).expect("written");
    let output = std::process::Command::new(example_binary("deploy"))
        .args(["--check-layout", &file.to_string_lossy()])
        .env("SAGA_KEYS", KEY)
        .output()
        .expect("the example runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("tool `complex_tool`, point `AfterSampleVerdict`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`target: u64` became `target: str`"),
        "{stderr}"
    );
}
