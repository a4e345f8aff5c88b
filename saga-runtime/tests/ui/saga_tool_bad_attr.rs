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

/// A version that is not a whole number.
#[saga_tool(version = "2")]
async fn greet_d() -> Result<String, SagaError> {
    Ok("hi".into())
}

/// A version out of range.
#[saga_tool(version = 70000)]
async fn greet_e() -> Result<String, SagaError> {
    Ok("hi".into())
}

fn main() {}
