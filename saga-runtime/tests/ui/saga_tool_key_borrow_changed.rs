use std::collections::BTreeMap;

use saga_runtime::prelude::*;

// A lookup whose key borrows a local that changes before the suspension: saga would look
// the entry up again after it with the key it borrows then, so the key must not change
// while the entry is kept (rustc says where), as it could not for a `for` loop's item.
#[saga_tool]
async fn walk(steps: BTreeMap<String, String>) -> Result<String, SagaError> {
    let mut current = String::from("start");
    let next = steps.get(current.as_str()).unwrap();
    current = next.clone();
    let ok: bool = elicit(format!("Run {current}?")).await?;
    Ok(format!("{next}: {ok}"))
}

fn main() {}
