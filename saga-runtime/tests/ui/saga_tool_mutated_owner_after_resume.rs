use saga_runtime::prelude::*;

// A saved local's owner changed while a borrow of it is alive, after a suspension (in the
// continuation, where the local is read back from the state): rustc's error names the
// local as the function as written does.
#[saga_tool]
async fn greet(seed: Vec<String>) -> Result<String, SagaError> {
    let mut names = seed.clone();
    let greeting: String = elicit("Greeting?").await?;
    let first = &names[0];
    names.push("guest".to_owned());
    Ok(format!("{greeting}, {first}"))
}

fn main() {}
