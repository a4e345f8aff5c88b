use saga_runtime::prelude::*;

#[saga_fn]
async fn countdown(n: u32) -> Result<u32, SagaError> {
    if n == 0 {
        return Ok(0);
    }
    let go: bool = elicit(format!("{n}, go on?")).await?;
    if go { countdown(n - 1).await } else { Ok(n) }
}

fn main() {}
