use saga_runtime::prelude::*;

#[saga_fn]
async fn ask_twice(prompt: &str) -> Result<String, SagaError> {
    let first: String = elicit(format!("{prompt} (1)?")).await?;
    let second: String = elicit(format!("{prompt} (2)?")).await?;
    Ok(first + &second)
}

fn main() {}
