use saga_runtime::prelude::*;

fn greeting(name: &str, word: String) -> String {
    format!("{word}, {name}")
}

fn short(name: &str) -> &str {
    name.get(..3).unwrap_or(name)
}

// A borrowing operand evaluated before a suspension in the same expression is kept in a
// temporary across it: one error, at the operand. (A formatting macro's `&str` operand
// is kept as its `String`, which formats the same; a function's argument is not.)
#[saga_tool]
async fn greet(name: String) -> Result<String, SagaError> {
    Ok(greeting(short(&name), elicit::<String>("Greeting?").await?))
}

fn main() {}
