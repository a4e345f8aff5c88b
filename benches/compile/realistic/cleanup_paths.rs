//! A `#[saga_fn]` helper called on each borrowed item.
use saga_runtime::prelude::*;

#[saga_fn]
async fn confirm_removal(path: &str, size: u64) -> Result<bool, SagaError> {
    if size == 0 {
        return Ok(true);
    }
    elicit::<bool>(format!("Remove {path} ({size} bytes)?")).await
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Entry {
    pub path: String,
    pub size: u64,
}

/// Removes the entries the person confirms.
#[saga_tool]
pub async fn cleanup_paths(entries: Vec<Entry>) -> Result<String, SagaError> {
    let mut removed = Vec::new();
    let mut freed = 0;
    for entry in &entries {
        if confirm_removal(&entry.path, entry.size).await? {
            removed.push(entry.path.clone());
            freed += entry.size;
        }
    }
    Ok(format!("removed {} ({freed} bytes)", removed.join(", ")))
}
