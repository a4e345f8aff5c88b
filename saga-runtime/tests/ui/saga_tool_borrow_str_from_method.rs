use saga_runtime::prelude::*;

// A `&str` borrowed from an argument through a method's tuple (`split_at(..).1`), kept
// across a suspension: one error, at the local (rustc alone says "implementation of
// `Deserialize` is not general enough", at the attribute, twice).
#[saga_tool]
async fn greet(name: String) -> Result<String, SagaError> {
    let rest = name.split_at(1).1;
    let greeting: String = elicit("Greeting?").await?;
    Ok(format!("{greeting}, {rest}"))
}

fn main() {}
