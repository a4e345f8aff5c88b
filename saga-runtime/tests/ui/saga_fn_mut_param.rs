use saga_runtime::prelude::*;

// A `&mut` parameter changed after a suspension: a copy would lose the caller's changes.
#[saga_fn]
async fn collect(out: &mut Vec<String>) -> Result<(), SagaError> {
    let first: String = elicit("first?").await?;
    out.push(first);
    Ok(())
}

fn main() {}
