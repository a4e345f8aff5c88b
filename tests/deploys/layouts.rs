//! Every example carries the layout file of its build (`examples/layouts/`, and the
//! upgrade examples' own): a change to an example that would refuse the calls in flight at
//! a deploy fails here, naming the tool, the point and what changed, until the file is
//! rewritten (`SAGA_LAYOUT=overwrite cargo test -p saga-workspace --test deploys layouts::`, and the
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
            .env("SAGA_TASKS", "memory")
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
    // The previous build's line: another identity, and what it showed then.
    let stale: String = text
        .lines()
        .map(|line| {
            let mut fields: Vec<String> = line.split('\t').map(str::to_owned).collect();
            if fields
                .get(2)
                .is_some_and(|point| point == "AfterSampleVerdict")
            {
                fields[5] = "0123456789abcdef".to_owned();
                fields[6] = fields[6].replace("target: str", "target: u64");
            }
            fields.join("\t") + "\n"
        })
        .collect();
    assert_ne!(stale, text);
    std::fs::write(&file, stale).expect("written");
    let output = std::process::Command::new(example_binary("deploy"))
        .env("SAGA_TASKS", "memory")
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

/// The build after: the saved struct gained a field.
mod after {
    use saga_runtime::prelude::*;

    #[derive(Debug, Serialize, Deserialize)]
    pub struct ExpenseReview {
        pub amount: u64,
        pub note: String,
        pub category: String,
    }

    #[saga_tool]
    pub async fn review_expense(amount: u64) -> Result<String, SagaError> {
        let review = ExpenseReview {
            amount,
            note: "draft".into(),
            category: "travel".into(),
        };
        let ok: bool = elicit(format!("Approve {}?", review.amount)).await?;
        Ok(format!("{} {} {ok}", review.note, review.category))
    }
}

/// The build before, where `review_expense` saves an `ExpenseReview` of two fields; and
/// what the failure says to write, written as it says: that code, moved unchanged into
/// `mod review_expense_v0`, registered with `.retired(..)`.
mod review_expense_v0 {
    use saga_runtime::prelude::*;

    #[derive(Debug, Serialize, Deserialize)]
    pub struct ExpenseReview {
        pub amount: u64,
        pub note: String,
    }

    #[saga_tool]
    pub async fn review_expense(amount: u64) -> Result<String, SagaError> {
        let review = ExpenseReview {
            amount,
            note: "draft".into(),
        };
        let ok: bool = elicit(format!("Approve {}?", review.amount)).await?;
        Ok(format!("{} {ok}", review.note))
    }
}

/// Point 1 of "a newcomer's second hour": the failure for a changed saved struct gave
/// advice (a renamed `…_v1` fn) that failed again, since the copy's struct had to be
/// renamed too. It now spells out the module for the tool at hand, and doing exactly
/// that keeps the calls in flight.
#[test]
fn the_advice_for_a_changed_saved_struct_works_as_written() {
    use saga_runtime::deploy::{LayoutFile, check_layout};
    use saga_runtime::serve::SagaTools;
    use saga_runtime::state::KeyRing;
    let build = |tools: saga_runtime::serve::SagaToolsBuilder| {
        tools
            .keys(KeyRing::ephemeral())
            .build()
            .expect("the tools build")
    };
    let dir = std::env::temp_dir().join(format!("saga-advice-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let file = dir.join("saga.layout");
    let first = build(SagaTools::builder().tool(review_expense_v0::review_expense));
    std::fs::write(&file, LayoutFile::of(&first).render()).expect("written");

    let changed = build(SagaTools::builder().tool(after::review_expense));
    let failure = check_layout(&changed, &file).expect_err("the change strands calls");
    assert!(failure.contains("mod review_expense_v0 {"), "{failure}");
    assert!(
        failure.contains(".retired(review_expense_v0::review_expense)"),
        "{failure}"
    );

    let kept = build(
        SagaTools::builder()
            .tool(after::review_expense)
            .retired(review_expense_v0::review_expense),
    );
    let failure = check_layout(&kept, &file).expect_err("the file lacks the new points");
    assert!(
        failure.contains("is out of date"),
        "no call is stranded: {failure}"
    );
    std::fs::write(&file, LayoutFile::of(&kept).render()).expect("rewritten");
    assert_eq!(check_layout(&kept, &file), Ok(()));
}
