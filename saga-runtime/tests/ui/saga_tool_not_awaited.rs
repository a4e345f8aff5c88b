use saga_runtime::prelude::*;

/// Prepares the request, then awaits it later.
#[saga_tool]
async fn greet_later() -> Result<String, SagaError> {
    let request = elicit::<String>("What is your name?");
    let name = request.await?;
    Ok(format!("Hello, {name}"))
}

/// Forgets to await the request.
#[saga_tool]
async fn greet_never() -> Result<String, SagaError> {
    elicit::<String>("What is your name?");
    Ok("Hello".into())
}

fn main() {}
