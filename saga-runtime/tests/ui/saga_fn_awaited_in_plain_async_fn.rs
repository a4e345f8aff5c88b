use saga_runtime::prelude::*;

#[saga_fn]
async fn confirm(what: String) -> Result<bool, SagaError> {
    elicit::<bool>(format!("Confirm {what}?")).await
}

// A plain helper that awaits a #[saga_fn] helper: one error, which says to mark this one
// #[saga_fn] too.
async fn confirm_twice(what: String) -> Result<bool, SagaError> {
    Ok(confirm(what.clone()).await? && confirm(what).await?)
}

#[saga_tool]
async fn cleanup(path: String) -> Result<String, SagaError> {
    let sure = confirm_twice(path.clone()).await?;
    Ok(format!("{path}: {sure}"))
}

fn main() {}
