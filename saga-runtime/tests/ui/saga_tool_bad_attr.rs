use saga_runtime::prelude::*;

/// Misspelled key.
#[saga_tool(nam = "greet")]
async fn greet_a() -> Result<String, SagaError> {
    Ok("hi".into())
}

/// Non-string value.
#[saga_tool(name = greet)]
async fn greet_b() -> Result<String, SagaError> {
    Ok("hi".into())
}

/// Invalid tool name.
#[saga_tool(name = "greet the user")]
async fn greet_c() -> Result<String, SagaError> {
    Ok("hi".into())
}

fn main() {}
