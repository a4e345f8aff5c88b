//! `join_all` over a borrowed list, answers zipped back to their questions.
use saga_runtime::prelude::*;

/// Asks every question at once and scores the answers.
#[saga_tool]
pub async fn survey(questions: Vec<String>, pass_mark: i64) -> Result<String, SagaError> {
    let answers = join_all(
        questions
            .iter()
            .map(|q| elicit::<i64>(format!("{q} (0-10)"))),
    )
    .await
    .into_iter()
    .collect::<Result<Vec<_>, _>>()?;
    let mut low = Vec::new();
    let mut total = 0;
    for (question, score) in questions.iter().zip(&answers) {
        total += score;
        if *score < pass_mark {
            low.push(question.as_str());
        }
    }
    Ok(format!(
        "total {total}; below {pass_mark}: {}",
        low.join(" | ")
    ))
}
