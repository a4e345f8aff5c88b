use saga_runtime::prelude::*;

/// Greets someone by a trimmed, borrowed name, after asking for a greeting.
#[saga_tool]
async fn greet(owned: String) -> Result<String, SagaError> {
    let name: &str = owned.trim();
    let greeting: String = elicit("How should they be greeted?").await?;
    Ok(format!("{greeting}, {name}!"))
}

fn main() {}
