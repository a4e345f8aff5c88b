//! The client's roots, one question per root, a borrow of an element at an index kept across it.
use saga_runtime::prelude::*;

/// Lists the client's roots and asks which to scan.
#[saga_tool]
pub async fn workspace_scan(pattern: String) -> Result<String, SagaError> {
    let roots = list_roots().await?;
    let mut chosen = Vec::new();
    let mut i = 0;
    while i < roots.len().min(20) {
        let root = &roots[i];
        let scan: bool = elicit(format!("Scan {} for {pattern}?", root.uri)).await?;
        if scan {
            chosen.push(root.uri.clone());
        }
        i += 1;
    }
    Ok(format!(
        "scanning {} of {} roots",
        chosen.len(),
        roots.len()
    ))
}
