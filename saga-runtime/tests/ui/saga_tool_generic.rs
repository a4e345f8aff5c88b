use saga_runtime::prelude::*;

/// Echoes any value back.
#[saga_tool]
async fn echo<T: Serialize>(value: T) -> Result<String, SagaError> {
    let note: String = elicit("Add a note?").await?;
    Ok(note)
}

fn main() {}
