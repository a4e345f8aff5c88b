use saga_runtime::prelude::*;

// A helper that suspends, written without #[saga_fn].
async fn confirm(what: &str) -> Result<bool, SagaError> {
    elicit::<bool>(format!("Confirm {what}?")).await
}

#[saga_tool]
async fn cleanup(path: String) -> Result<String, SagaError> {
    let sure = confirm(&path).await?;
    Ok(format!("{path}: {sure}"))
}

fn main() {}
