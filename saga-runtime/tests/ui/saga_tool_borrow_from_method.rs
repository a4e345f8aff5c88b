use saga_runtime::prelude::*;

// A borrow made by a method saga does not know (not an accessor of a standard
// collection), kept across a suspension: the note says to own it.
#[saga_tool]
async fn greet(names: Vec<String>) -> Result<String, SagaError> {
    let first = names.iter().max().unwrap();
    let greeting: String = elicit("Greeting?").await?;
    Ok(format!("{greeting}, {first}"))
}

fn main() {}
