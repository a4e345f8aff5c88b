use saga_runtime::prelude::*;

/// Joins a single request.
#[saga_tool]
async fn one() -> Result<String, SagaError> {
    let (name,) = join!(elicit::<String>("What is your name?"));
    Ok(name?)
}

fn lookup() -> String {
    "x".into()
}

/// Joins something that is not a request.
#[saga_tool]
async fn not_request() -> Result<String, SagaError> {
    let (name, other) = join!(elicit::<String>("What is your name?"), lookup());
    Ok(format!("{}{}", name?, other))
}

fn main() {}
