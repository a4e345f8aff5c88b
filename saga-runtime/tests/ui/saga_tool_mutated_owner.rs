use saga_runtime::prelude::*;

// A borrow of a saved local kept across a suspension while its owner is changed before
// the suspension: refused as the function as written is (the borrow lives up to the
// suspension), never borrowed again from the changed owner.
#[saga_tool]
async fn greet(mut names: Vec<String>) -> Result<String, SagaError> {
    let first = &names[0];
    names.push("guest".to_owned());
    let greeting: String = elicit("Greeting?").await?;
    Ok(format!("{greeting}, {first}"))
}

fn main() {}
