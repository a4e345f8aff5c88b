use saga_runtime::prelude::*;

// A collection changed inside a `for` loop that borrows it, across a suspension: refused
// as the function as written is, never resumed at a position in the changed collection.
#[saga_tool]
async fn collect(mut names: Vec<String>) -> Result<String, SagaError> {
    for name in &names {
        let again: bool = elicit(format!("Again {name}?")).await?;
        if again {
            names.push(name.clone());
        }
    }
    Ok(names.join(", "))
}

fn main() {}
