//! A question bank of `&'static str`, a form choosing the track, a summary sample.
use saga_runtime::prelude::*;

#[derive(Debug, Elicit, Serialize, Deserialize)]
pub struct Choice {
    /// backend, frontend or data
    pub track: String,
}

const BACKEND: &[&str] = &[
    "Design a rate limiter",
    "Explain a B-tree",
    "Debug a deadlock",
];
const FRONTEND: &[&str] = &["Build a form", "Explain the event loop"];
const DATA: &[&str] = &["Model a star schema", "Explain a window function"];

/// Runs an interview: the track, a score per question, and a written summary.
#[saga_tool]
pub async fn interview_kit(candidate: String) -> Result<String, SagaError> {
    let choice: Choice = elicit(format!("Which track for {candidate}?")).await?;
    let bank: &[&str] = match choice.track.as_str() {
        "frontend" => FRONTEND,
        "data" => DATA,
        _ => BACKEND,
    };
    let bank: Vec<String> = bank.iter().map(|q| q.to_string()).collect();
    let mut notes = Vec::new();
    for question in &bank {
        let score: i64 = elicit(format!("{candidate} on '{question}': score 1-5?")).await?;
        notes.push(format!("{question}: {score}"));
    }
    let summary = sample(format!(
        "Summarise for a hiring panel: {}",
        notes.join("; ")
    ))
    .max_tokens(250)
    .await?;
    Ok(format!(
        "{}\n{}\n{}",
        choice.track,
        notes.join("\n"),
        summary.text()
    ))
}
