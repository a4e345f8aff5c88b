use saga_runtime::prelude::*;

// Helpers that suspend at a sample, at the roots and at a checkpoint, written without
// #[saga_fn]: each `.await` is one error that names #[saga_fn].
async fn summarise(text: String) -> Result<String, SagaError> {
    Ok(sample(format!("Summarise {text}")).await?.text().to_owned())
}

async fn roots() -> Result<usize, SagaError> {
    Ok(list_roots().await?.len())
}

async fn pause() {
    checkpoint().await
}

#[saga_tool]
async fn report(text: String) -> Result<String, SagaError> {
    let summary = summarise(text).await?;
    let count = roots().await?;
    pause().await;
    Ok(format!("{summary} ({count} roots)"))
}

fn main() {}
