use saga_runtime::prelude::*;

#[derive(Clone)]
struct Opaque {
    name: String,
}

// A `&T` parameter read after a suspension is kept as an owned copy, saved with the
// helper's state: `T` must be `Serialize + DeserializeOwned`. One error, at the parameter.
#[saga_fn]
async fn ask_twice(what: &Opaque) -> Result<String, SagaError> {
    let first: String = elicit(format!("{} (1)?", what.name)).await?;
    let second: String = elicit(format!("{} (2)?", what.name)).await?;
    Ok(first + &second)
}

fn main() {}
