use saga_runtime::prelude::*;

#[saga_fn]
async fn accept(name: String) -> Result<bool, SagaError> {
    elicit::<bool>(format!("accept {name}?")).await
}

// A `for` over borrowed items whose body awaits a helper, with its item taken apart:
// one error, at the loop's collection.
#[saga_tool]
async fn review(names: Vec<String>) -> Result<String, SagaError> {
    let mut accepted = Vec::new();
    for (i, name) in names.iter().filter(|name| !name.is_empty()).enumerate() {
        if accept(name.clone()).await? {
            accepted.push(format!("{i}: {name}"));
        }
    }
    Ok(accepted.join(", "))
}

fn main() {}
