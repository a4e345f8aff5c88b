use saga_runtime::prelude::*;

/// Greets everyone by a borrow of a temporary, after asking for a greeting: the
/// temporary is not a place of the locals, so saga cannot borrow it again after the
/// suspension.
#[saga_tool]
async fn greet(names: Vec<String>) -> Result<String, SagaError> {
    let everyone = &names.join(" and ");
    let greeting: String = elicit("How should they be greeted?").await?;
    Ok(format!("{greeting}, {everyone}!"))
}

fn main() {}
