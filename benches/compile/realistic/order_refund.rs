//! An `Option` argument borrowed with `if let`, a choice enum elicited.
use saga_runtime::prelude::*;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Order {
    pub id: String,
    pub total_cents: u64,
    pub items: Vec<String>,
}

#[derive(Debug, Elicit, Serialize, Deserialize)]
pub struct Reason {
    /// Why the refund
    pub reason: String,
    /// Refund shipping too
    pub shipping: bool,
}

/// Refunds an order, partly when the person names items.
#[saga_tool]
pub async fn order_refund(order: Order, note: Option<String>) -> Result<String, SagaError> {
    let mut refunded = 0;
    if let Some(note) = &note {
        let full: bool = elicit(format!("Order {} says: {note}. Refund it all?", order.id)).await?;
        if full {
            refunded = order.total_cents;
        }
    }
    if refunded == 0 {
        for item in &order.items {
            let cents: i64 = elicit(format!("Refund for {item} (cents)?")).await?;
            refunded += u64::try_from(cents)
                .unwrap_or(0)
                .min(order.total_cents - refunded);
        }
    }
    let why: Reason = elicit(format!("Why refund {} cents?", refunded)).await?;
    Ok(format!(
        "refunded {refunded} of {} on {} ({}, shipping {})",
        order.total_cents, order.id, why.reason, why.shipping
    ))
}
