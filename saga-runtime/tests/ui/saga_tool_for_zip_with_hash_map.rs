use std::collections::HashMap;

use saga_runtime::prelude::*;

/// A `for` over a borrowed Vec zipped with a borrowed HashMap, asking inside: the loop
/// resumes by position, and the map's order is not kept once read back.
#[saga_tool]
async fn review(names: Vec<String>, scores: HashMap<String, i64>) -> Result<String, SagaError> {
    let mut accepted = Vec::new();
    for (name, (_, score)) in names.iter().zip(&scores) {
        if elicit::<bool>(format!("accept {name} at {score}?")).await? {
            accepted.push(*score);
        }
    }
    Ok(format!("{accepted:?}"))
}

fn main() {}
