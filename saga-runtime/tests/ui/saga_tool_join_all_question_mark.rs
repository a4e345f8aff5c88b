use saga_runtime::prelude::*;

// `?` on `join_all(..).await`, a `Vec` of answers: one error, at the `?`, with the fix.
#[saga_tool]
async fn keep(names: Vec<String>) -> Result<String, SagaError> {
    let kept: Vec<bool> = join_all(names.iter().map(|n| elicit::<bool>(format!("Keep {n}?")))).await?;
    Ok(format!("{kept:?}"))
}

fn main() {}
