//! A map of grants reviewed per user, a `join!` of two questions per user.
use std::collections::BTreeMap;

use saga_runtime::prelude::*;

/// Reviews each user's grants: keep them, and whether to notify.
#[saga_tool]
pub async fn access_review(grants: BTreeMap<String, Vec<String>>) -> Result<String, SagaError> {
    let mut revoked: Vec<String> = Vec::new();
    let mut notified = 0;
    for (user, roles) in &grants {
        if roles.is_empty() {
            continue;
        }
        let (keep, notify) = join!(
            elicit::<bool>(format!("Keep {user}'s roles {}?", roles.join(", "))),
            elicit::<bool>(format!("Notify {user}?"))
        );
        if !keep? {
            revoked.extend(roles.iter().map(|r| format!("{user}:{r}")));
        }
        if notify? {
            notified += 1;
        }
    }
    Ok(format!(
        "revoked {} ({notified} notified)",
        revoked.join(" ")
    ))
}
