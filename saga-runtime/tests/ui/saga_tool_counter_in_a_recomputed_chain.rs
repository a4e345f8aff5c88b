use std::sync::atomic::{AtomicU32, Ordering};

use saga_runtime::prelude::*;

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Table {
    name: String,
}

// A counter written in a `filter` (an atomic, written through a shared reference): the
// chain is not made again after a restore (it would count again, and find another
// item), so its items are kept across the suspension, which borrows cannot be: refused
// here rather than at the resume, as it was.
#[saga_tool]
async fn counted(tables: Vec<Table>) -> Result<String, SagaError> {
    let calls = AtomicU32::new(0);
    let mut seen = Vec::new();
    for t in tables.iter().filter(|_| {
        let n = calls.fetch_add(1, Ordering::Relaxed) + 1;
        n % 2 == 1
    }) {
        let ok = elicit::<bool>(format!("{}?", t.name)).await?;
        seen.push(format!("{}{ok}", t.name));
    }
    Ok(seen.join(","))
}

fn main() {}
