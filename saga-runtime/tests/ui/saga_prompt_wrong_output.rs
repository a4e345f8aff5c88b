use saga_runtime::prelude::*;

/// Greets someone.
#[saga_prompt]
async fn greeting(name: String) -> Result<String, SagaError> {
    Ok(format!("Hello, {name}"))
}

fn main() {
    let _ = SagaServer::builder().prompt(greeting);
}
