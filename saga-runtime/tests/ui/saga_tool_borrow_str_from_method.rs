use saga_runtime::prelude::*;

// A `&str` borrowed from an argument by a method saga does not know, kept across a
// suspension: one error, at the local (rustc alone says "implementation of `Deserialize`
// is not general enough", at the attribute, twice).
#[saga_tool]
async fn greet(name: String) -> Result<String, SagaError> {
    let first = name.trim_start();
    let greeting: String = elicit("Greeting?").await?;
    Ok(format!("{greeting}, {first}"))
}

fn main() {}
