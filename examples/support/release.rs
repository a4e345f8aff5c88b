//! The deploy example's `release`: the deployment of `complex_tool`, started for real. The
//! start is an [`effect`]: its result (the rollout's id) is saved before the tool goes on,
//! and the deploy service is handed the effect's key, so that a round run again (a task
//! taken over, a request sent again) never starts a second rollout.

use saga_runtime::prelude::*;

use crate::deploy::Target;

/// Releases a service to a target the user names, once they confirm: the rollout starts
/// once, however often the round runs.
#[saga_tool]
pub async fn release(
    #[arg(description = "The service to release.")] service: String,
    #[arg(description = "How many replicas.")] replicas: Option<u32>,
) -> Result<String, SagaError> {
    let target: Target = elicit("Please provide the deployment target:").await?;
    let go: bool = elicit(format!("Release {service} to {}?", target.target)).await?;
    if !go {
        return Ok("Release postponed.".into());
    }
    let replicas = replicas.unwrap_or(1);
    let place = target.target.clone();
    // ANCHOR: effect
    let rollout: Result<String, String> = effect("rollout", |key| async move {
        start_rollout(&place, replicas, key.as_str()).await
    })
    .await;
    // ANCHOR_END: effect
    let rollout = rollout.map_err(SagaError::msg)?;
    Ok(format!(
        "Rollout {rollout} of {service} to {} started ({replicas} replicas).",
        target.target
    ))
}

/// Starts a rollout at the deploy service `SAGA_DEPLOY_SERVICE_URL` (a `POST` with the
/// effect's key as `Idempotency-Key`, answered with the rollout's id); without one, a
/// rollout of this process's imagination, named after the key.
async fn start_rollout(target: &str, replicas: u32, key: &str) -> Result<String, String> {
    let Ok(url) = std::env::var("SAGA_DEPLOY_SERVICE_URL") else {
        tracing::info!(%target, replicas, %key, "rollout started (no deploy service set)");
        return Ok(format!("rollout-{}", &key[key.len().saturating_sub(8)..]));
    };
    let response = reqwest::Client::new()
        .post(url)
        .header("idempotency-key", key)
        .json(&serde_json::json!({"target": target, "replicas": replicas}))
        .send()
        .await
        .map_err(|error| format!("the deploy service cannot be reached: {error}"))?;
    if !response.status().is_success() {
        return Err(format!("the deploy service answered {}", response.status()));
    }
    response.text().await.map_err(|error| error.to_string())
}
