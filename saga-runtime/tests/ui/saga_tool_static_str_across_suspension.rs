use saga_runtime::prelude::*;

fn mode_of(fast: bool) -> &'static str {
    if fast { "fast" } else { "slow" }
}

// A `&'static str` returned by a function the macro cannot see, kept across a
// suspension: one error, at the local, saying to own it (`String::from(..)`).
#[saga_tool]
async fn deploy(fast: bool) -> Result<String, SagaError> {
    let mode = mode_of(fast);
    let target: String = elicit("Target?").await?;
    Ok(format!("deploying to {target} ({mode})"))
}

fn main() {}
