use std::collections::HashMap;

use saga_runtime::prelude::*;

/// A `for` over a borrowed HashMap's values, asking inside: a hash-ordered collection
/// resumes by the keys still to visit, which its values do not give.
#[saga_tool]
async fn review(scores: HashMap<String, i64>) -> Result<String, SagaError> {
    let mut accepted = Vec::new();
    for score in scores.values() {
        if elicit::<bool>(format!("accept {score}?")).await? {
            accepted.push(*score);
        }
    }
    Ok(format!("{accepted:?}"))
}

fn main() {}
