use saga_runtime::prelude::*;

/// Greets someone, but is not async.
#[saga_tool]
fn greet(name: String) -> Result<String, SagaError> {
    Ok(format!("Hello, {name}"))
}

fn main() {}
