//! `&'static str` labels in a table, asked about one by one.
use saga_runtime::prelude::*;

const STEPS: [(&str, &str); 4] = [
    ("tests", "Did the test suite pass?"),
    ("changelog", "Is the changelog written?"),
    ("version", "Is the version bumped?"),
    ("tag", "Is the release tagged?"),
];

/// Walks a release checklist and reports what is missing.
#[saga_tool]
pub async fn release_checklist(version: String) -> Result<String, SagaError> {
    let mut missing: Vec<String> = Vec::new();
    for step in 0..STEPS.len() {
        let (label, question) = STEPS[step];
        let label = label.to_owned();
        let done: bool = elicit(format!("{version}: {question}")).await?;
        if !done {
            missing.push(label);
        }
    }
    if missing.is_empty() {
        Ok(format!("{version} is ready"))
    } else {
        Ok(format!("{version} is missing: {}", missing.join(", ")))
    }
}
