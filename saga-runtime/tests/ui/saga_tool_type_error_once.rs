use saga_runtime::prelude::*;

// A type error in the body of a tool that suspends is reported once, at the user's code:
// rustc checks the body once (the plain copy the tests compare it with is not compiled
// in a user's crate).
#[saga_tool]
async fn count(name: String) -> Result<String, SagaError> {
    if name.is_empty() {
        return Err(SagaError::msg("no name"));
    }
    let greeting: String = elicit("Greeting?").await?;
    let total = greeting.len() as u32;
    Ok(total)
}

fn main() {}
