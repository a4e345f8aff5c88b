use saga_runtime::prelude::*;

// A plain function that returns a request, awaited in the tool: one error, at the call,
// saying what to write (rustc alone says "the method `kind` exists ... but its trait
// bounds were not satisfied").
fn ask(what: &str) -> ElicitForm<bool> {
    elicit(format!("Delete {what}?"))
}

#[saga_tool]
async fn cleanup(path: String) -> Result<String, SagaError> {
    let sure = ask(&path).await?;
    Ok(format!("{path}: {sure}"))
}

fn main() {}
