//! A sample per borrowed item, its answer matched on, results gathered.
use saga_runtime::prelude::*;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Alert {
    pub service: String,
    pub message: String,
    pub count: u32,
}

/// Triages alerts with the model, asking the person about the ones it calls severe.
#[saga_tool]
pub async fn incident_triage(alerts: Vec<Alert>) -> Result<String, SagaError> {
    let mut pages = Vec::new();
    let mut ignored = 0usize;
    for alert in &alerts {
        let verdict = sample(format!(
            "Service {} logged {} times: {}. Answer severe, minor or noise.",
            alert.service, alert.count, alert.message
        ))
        .max_tokens(10)
        .await?;
        match verdict.text().trim() {
            "severe" => {
                let page: bool = elicit(format!("Page the on-call for {}?", alert.service)).await?;
                if page {
                    pages.push(alert.service.clone());
                }
            }
            "minor" => checkpoint().await,
            _ => ignored += 1,
        }
    }
    Ok(format!("paged {:?}, ignored {ignored}", pages))
}
