use saga_runtime::prelude::*;

// A `&'static str` chosen among literals, kept across a suspension: one error, at the
// local, saying to own it (`String::from(..)`).
#[saga_tool]
async fn deploy(fast: bool) -> Result<String, SagaError> {
    let mode = if fast { "fast" } else { "slow" };
    let target: String = elicit("Target?").await?;
    Ok(format!("deploying to {target} ({mode})"))
}

fn main() {}
