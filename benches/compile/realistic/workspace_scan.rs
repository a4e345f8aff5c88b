//! The client's roots, one question per root, the first twenty of them.
use saga_runtime::prelude::*;

/// Lists the client's roots and asks which to scan.
#[saga_tool]
pub async fn workspace_scan(pattern: String) -> Result<String, SagaError> {
    let roots = list_roots().await?;
    let mut chosen = Vec::new();
    for (i, root) in roots.iter().enumerate() {
        if i >= 20 {
            break;
        }
        let scan: bool = elicit(format!("Scan {} for {pattern}?", root.uri)).await?;
        if scan {
            chosen.push(root.uri.clone());
        }
    }
    Ok(format!(
        "scanning {} of {} roots",
        chosen.len(),
        roots.len()
    ))
}
