use saga_runtime::prelude::*;

// A borrowing operand evaluated before a suspension in the same expression is kept in a
// temporary across it: one error, at the operand.
#[saga_tool]
async fn greet(name: String) -> Result<String, SagaError> {
    Ok(format!("{} {}", name.trim(), elicit::<String>("Greeting?").await?))
}

fn main() {}
