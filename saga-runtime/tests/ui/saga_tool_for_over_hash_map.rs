use std::collections::HashMap;

use saga_runtime::prelude::*;

/// A `for` over a borrowed HashMap, asking inside: the map read back from the state would
/// iterate in another order.
#[saga_tool]
async fn review(scores: HashMap<String, i64>) -> Result<String, SagaError> {
    let mut accepted = Vec::new();
    for (name, score) in &scores {
        if elicit::<bool>(format!("accept {name} ({score})?")).await? {
            accepted.push(name.clone());
        }
    }
    Ok(accepted.join(", "))
}

fn main() {}
