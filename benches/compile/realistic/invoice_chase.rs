//! A work queue drained with `while let`, items pushed back on a later answer.
use std::collections::VecDeque;

use saga_runtime::prelude::*;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Invoice {
    pub number: String,
    pub customer: String,
    pub days_late: u32,
}

/// Chases late invoices, deferring the ones the person wants to see again.
#[saga_tool]
pub async fn invoice_chase(invoices: Vec<Invoice>) -> Result<String, SagaError> {
    let mut queue: VecDeque<Invoice> = invoices.into_iter().collect();
    let mut sent = Vec::new();
    let mut deferred = 0;
    while let Some(invoice) = queue.pop_front() {
        if invoice.days_late < 30 {
            continue;
        }
        let action: String = elicit(format!(
            "{} ({}) is {} days late: send, defer or drop?",
            invoice.number, invoice.customer, invoice.days_late
        ))
        .await?;
        match action.as_str() {
            "send" => sent.push(invoice.number),
            "defer" if deferred < 5 => {
                deferred += 1;
                queue.push_back(invoice);
            }
            _ => {}
        }
    }
    Ok(format!("reminders sent for {}", sent.join(", ")))
}
