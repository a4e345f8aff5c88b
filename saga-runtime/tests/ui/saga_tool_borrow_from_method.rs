use saga_runtime::prelude::*;

// A borrow made by a method, kept across a suspension: the note says to own it.
#[saga_tool]
async fn greet(names: Vec<String>) -> Result<String, SagaError> {
    let first = names.first().unwrap();
    let greeting: String = elicit("Greeting?").await?;
    Ok(format!("{greeting}, {first}"))
}

fn main() {}
