use saga_runtime::prelude::*;

fn compute() -> usize {
    3
}

/// A suspension on the right of `+`.
#[saga_tool]
async fn measure() -> Result<String, SagaError> {
    let n = compute() + sample("Say something").await?.text().len();
    Ok(format!("{n}"))
}

fn combine(a: usize, b: String) -> String {
    format!("{a}{b}")
}

/// A suspension as a second argument.
#[saga_tool]
async fn joined() -> Result<String, SagaError> {
    Ok(combine(compute(), elicit::<String>("Suffix?").await?))
}

fn main() {}
