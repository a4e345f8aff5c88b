//! A sample that returns JSON, parsed and kept, then questions about it.
use saga_runtime::prelude::*;
use serde_json::Value;

/// Asks the model to compare vendors as JSON and the person to pick one.
#[saga_tool]
pub async fn vendor_compare(vendors: Vec<String>, need: String) -> Result<String, SagaError> {
    let answer = sample(format!(
        "Compare {} for {need}; answer a JSON object of vendor to score 0-10.",
        vendors.join(", ")
    ))
    .await?;
    let scores: Value = serde_json::from_str(answer.text())
        .map_err(|e| SagaError::Tool(format!("the model's answer is not JSON: {e}")))?;
    let mut best = None;
    for vendor in &vendors {
        let score = scores.get(vendor).and_then(Value::as_u64).unwrap_or(0);
        if score >= 7 {
            let pick: bool = elicit(format!("{vendor} scores {score}. Pick it?")).await?;
            if pick {
                best = Some(vendor.clone());
                break;
            }
        }
    }
    Ok(match best {
        Some(v) => format!("picked {v}"),
        None => format!("none picked from {scores}"),
    })
}
