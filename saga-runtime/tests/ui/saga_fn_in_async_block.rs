use saga_runtime::prelude::*;

#[saga_fn]
async fn confirm(what: String) -> Result<bool, SagaError> {
    elicit::<bool>(format!("Confirm {what}?")).await
}

#[saga_tool]
async fn later(path: String) -> Result<String, SagaError> {
    let task = async move { confirm(path).await };
    let sure = task.await?;
    Ok(format!("{sure}"))
}

fn main() {}
