//! A sample per file with a string slice of it, the verdicts kept as a struct.
use saga_runtime::prelude::*;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileDiff {
    pub path: String,
    pub diff: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Verdicts {
    pub approved: Vec<String>,
    pub comments: Vec<(String, String)>,
}

/// Reviews each file's diff with the model; the person settles disagreements.
#[saga_tool]
pub async fn code_review(files: Vec<FileDiff>, max_chars: usize) -> Result<String, SagaError> {
    let mut verdicts = Verdicts::default();
    for file in &files {
        let head = &file.diff[..file.diff.len().min(max_chars)];
        let review = sample(format!("Review {}:\n{head}", file.path))
            .max_tokens(300)
            .await?;
        if review.text().starts_with("LGTM") {
            verdicts.approved.push(file.path.clone());
            continue;
        }
        let keep: bool = elicit(format!(
            "{}: {}\nKeep this comment?",
            file.path,
            review.text()
        ))
        .await?;
        if keep {
            verdicts
                .comments
                .push((file.path.clone(), review.text().to_owned()));
        }
    }
    Ok(format!(
        "{} approved, {} comments",
        verdicts.approved.len(),
        verdicts.comments.len()
    ))
}
