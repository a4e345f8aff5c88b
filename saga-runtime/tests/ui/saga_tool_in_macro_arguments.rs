use saga_runtime::prelude::*;

#[saga_tool]
async fn greet() -> Result<String, SagaError> {
    Ok(format!("Hello, {}!", elicit::<String>("Your name?").await?))
}

fn main() {}
