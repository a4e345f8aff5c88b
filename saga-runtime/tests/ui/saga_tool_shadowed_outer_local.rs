use saga_runtime::prelude::*;

#[saga_tool]
async fn shadow() -> Result<String, SagaError> {
    let v = 1;
    {
        let v = 7;
        checkpoint().await;
        let _ = v;
    }
    Ok(format!("{v}"))
}

fn main() {}
