use saga_runtime::prelude::*;

/// Migrates, maybe in the background.
#[saga_tool(task = "sometimes")]
async fn migrate() -> Result<String, SagaError> {
    checkpoint().await;
    Ok("done".into())
}

fn main() {}
