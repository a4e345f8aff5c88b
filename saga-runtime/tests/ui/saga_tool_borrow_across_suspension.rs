use saga_runtime::prelude::*;

/// Greets the first of the given names, after asking for a greeting.
#[saga_tool]
async fn greet(names: Vec<String>) -> Result<String, SagaError> {
    let first = &names[0];
    let greeting: String = elicit("How should they be greeted?").await?;
    Ok(format!("{greeting}, {first}!"))
}

fn main() {}
