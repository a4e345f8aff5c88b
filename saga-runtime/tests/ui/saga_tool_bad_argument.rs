use saga_runtime::prelude::*;

/// A destructured argument.
#[saga_tool]
async fn add((a, b): (u32, u32)) -> Result<String, SagaError> {
    Ok(format!("{}", a + b))
}

/// A borrowed argument.
#[saga_tool]
async fn greet(name: &str) -> Result<String, SagaError> {
    Ok(format!("Hello, {name}"))
}

fn main() {}
