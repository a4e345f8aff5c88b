use saga_runtime::prelude::*;

// `?` on an error the tool's error type cannot be made from: rustc's own message, once,
// at the `?`.
#[saga_tool]
async fn parse(name: String) -> Result<String, SagaError> {
    let answer: String = elicit("A number?").await?;
    let n: u32 = answer.parse()?;
    Ok(format!("{name} {n}"))
}

fn main() {}
