use saga_runtime::prelude::*;

/// A `for` over borrowed items that saga cannot borrow again by position.
#[saga_tool]
async fn review(names: Vec<String>) -> Result<String, SagaError> {
    let mut accepted = Vec::new();
    for name in names.iter().filter(|name| !name.is_empty()) {
        if elicit::<bool>(format!("accept {name}?")).await? {
            accepted.push(name.clone());
        }
    }
    Ok(accepted.join(", "))
}

fn main() {}
