//! Borrowed slices of a sorted copy, `iter().rev()`, a running total kept.
use saga_runtime::prelude::*;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Pick {
    pub sku: String,
    pub aisle: u16,
    pub qty: i64,
}

/// Walks the picks aisle by aisle, asking for shortages.
#[saga_tool]
pub async fn warehouse_pick(picks: Vec<Pick>, reverse: bool) -> Result<String, SagaError> {
    let mut sorted = picks.clone();
    sorted.sort_by_key(|p| p.aisle);
    if reverse {
        sorted.reverse();
    }
    let mut short = Vec::new();
    let mut picked = 0i64;
    for pick in &sorted {
        let got: i64 = elicit(format!(
            "Aisle {}: how many {} of {}?",
            pick.aisle, pick.sku, pick.qty
        ))
        .await?;
        picked += got.min(pick.qty);
        if got < pick.qty {
            short.push(format!("{} short {}", pick.sku, pick.qty - got));
        }
    }
    Ok(format!("picked {picked}; {}", short.join(", ")))
}
