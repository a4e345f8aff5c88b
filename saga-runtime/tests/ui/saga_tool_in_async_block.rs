use saga_runtime::prelude::*;

/// Asks for a name inside an async block.
#[saga_tool]
async fn ask_name() -> Result<String, SagaError> {
    let pending = async {
        let name: String = elicit("What is your name?").await?;
        Ok::<_, SagaError>(name)
    };
    let name = pending.await?;
    Ok(format!("Hello, {name}"))
}

fn main() {}
