use saga_runtime::prelude::*;

#[derive(Elicit, Serialize, Deserialize)]
struct Target {
    target: String,
}

#[saga_tool]
async fn deploy() -> Result<String, SagaError> {
    let answer = elicit("Where to?").await?;
    Ok(answer.target)
}

fn main() {}
