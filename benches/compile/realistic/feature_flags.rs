//! Values changed in place through `values_mut`, a summary built at the end.
use std::collections::BTreeMap;

use saga_runtime::prelude::*;

/// Asks for each flag's rollout percentage and returns the new table.
#[saga_tool]
pub async fn feature_flags(flags: BTreeMap<String, i64>, env: String) -> Result<String, SagaError> {
    let mut flags = flags;
    let mut changed = 0;
    for (name, percent) in flags.iter_mut() {
        let next: i64 = elicit(format!("{env}: {name} is at {percent}%. New percentage?")).await?;
        if next != *percent {
            *percent = next.clamp(0, 100);
            changed += 1;
        }
    }
    let table: Vec<String> = flags.iter().map(|(k, v)| format!("{k}={v}")).collect();
    Ok(format!("{changed} changed: {}", table.join(", ")))
}
