//! Nested loops over a borrowed map and an owned copy of each value, with labels, `break` and `continue`.
use std::collections::BTreeMap;

use saga_runtime::prelude::*;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Count {
    pub bin: String,
    pub expected: i64,
}

/// Recounts each bin of each SKU, stopping at a negative count.
#[saga_tool]
pub async fn recount(by_sku: BTreeMap<String, Vec<Count>>) -> Result<String, SagaError> {
    let mut log = Vec::new();
    'outer: for (sku, counts) in &by_sku {
        for c in counts.clone() {
            let n: i64 = elicit(format!("Recount {sku} in {}", c.bin)).await?;
            if n < 0 {
                log.push(format!("stop at {sku}/{}", c.bin));
                break 'outer;
            }
            if n == c.expected {
                continue;
            }
            log.push(format!("{sku}/{}: {} -> {n}", c.bin, c.expected));
        }
        log.push(format!("{sku} done ({} bins)", counts.len()));
    }
    Ok(log.join(", "))
}
