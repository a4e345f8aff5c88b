use saga_runtime::prelude::*;

/// A `for` over borrowed items whose chain reads a `mut` local: it could read another
/// value after a restore, so the loop is not made again, and its items must be saved.
#[saga_tool]
async fn review(names: Vec<String>, shortest: usize) -> Result<String, SagaError> {
    let mut min = shortest;
    min += 1;
    let mut accepted = Vec::new();
    for name in names.iter().filter(|name| name.len() >= min) {
        if elicit::<bool>(format!("accept {name}?")).await? {
            accepted.push(name.clone());
        }
    }
    Ok(accepted.join(", "))
}

fn main() {}
