use saga_runtime::prelude::*;

fn longest(names: &[String]) -> &String {
    names.iter().max_by_key(|name| name.len()).unwrap()
}

// A reference returned by a function, kept across a suspension: saga cannot tell what it
// borrows, so it must be owned.
#[saga_tool]
async fn greet(names: Vec<String>) -> Result<String, SagaError> {
    let chosen = longest(&names);
    let greeting: String = elicit("Greeting?").await?;
    Ok(format!("{greeting}, {chosen}"))
}

fn main() {}
