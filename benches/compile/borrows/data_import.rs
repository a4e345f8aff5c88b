//! Rows checked in batches, a checkpoint between batches, errors collected.
use saga_runtime::prelude::*;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Row {
    pub id: u64,
    pub email: String,
    pub country: Option<String>,
}

/// Imports rows, asking about the ones that do not validate.
#[saga_tool]
pub async fn data_import(rows: Vec<Row>) -> Result<String, SagaError> {
    let mut imported = 0;
    let mut skipped: Vec<u64> = Vec::new();
    for batch in rows.chunks(50) {
        for row in batch {
            let valid = row.email.contains('@') && row.country.is_some();
            if valid {
                imported += 1;
                continue;
            }
            let fix: String = elicit(format!(
                "Row {} ({}) does not validate. Corrected email, or empty to skip?",
                row.id, row.email
            ))
            .await?;
            if fix.is_empty() {
                skipped.push(row.id);
            } else {
                imported += 1;
            }
        }
        checkpoint().await;
    }
    Ok(format!("imported {imported}, skipped {skipped:?}"))
}
