//! Early returns inside loops, sums kept across questions, a tuple pattern.
use saga_runtime::prelude::*;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Line {
    pub what: String,
    pub cents: i64,
    pub receipt: bool,
}

/// Approves an expense report line by line; a rejected line ends the review.
#[saga_tool]
pub async fn expense_report(
    owner: String,
    lines: Vec<Line>,
    limit: i64,
) -> Result<String, SagaError> {
    let mut approved = 0i64;
    for (n, line) in lines.iter().enumerate() {
        match (line.receipt, line.cents > limit) {
            (true, false) => approved += line.cents,
            (false, _) | (_, true) => {
                let ok: bool = elicit(format!(
                    "Line {} of {owner}: {} for {} cents{}. Approve?",
                    n + 1,
                    line.what,
                    line.cents,
                    if line.receipt {
                        ""
                    } else {
                        " without a receipt"
                    }
                ))
                .await?;
                if !ok {
                    return Ok(format!("{owner}'s report rejected at line {}", n + 1));
                }
                approved += line.cents;
            }
        }
    }
    Ok(format!("{owner}: {approved} cents approved"))
}
