//! The seed's `complex_tool`: elicit the deployment target, ask the client's LLM whether
//! deploying there is safe, then finish. One straight-line async function; `#[saga_tool]`
//! turns it into a state machine whose state travels in the client's token.
//!
//! Written once and compiled into two crates: `saga_examples::deploy` (served by
//! `examples/deploy.rs`, `metrics.rs` and the tests) and the quickstart's own crate
//! (`quickstart/`), which depends on saga-runtime alone so that the first command of the
//! README builds only what it runs. It uses nothing but saga-runtime.

use saga_runtime::prelude::*;

/// The deployment target the user is asked for.
#[derive(Debug, Elicit, Serialize, Deserialize)]
pub struct Target {
    pub target: String,
}

/// Deploys a service after confirming with the user and an LLM.
#[saga_tool]
pub async fn complex_tool(initial_arg: String, replicas: Option<u32>) -> Result<String, SagaError> {
    let target: Target = elicit("Please provide the deployment target:").await?;
    let verdict = sample(format!(
        "Is deploying to '{}' safe right now?",
        target.target
    ))
    .max_tokens(100)
    .await?;
    if !verdict.text().starts_with("Yes") {
        return Ok("Deployment postponed.".into());
    }
    Ok(format!(
        "Deployment to {} initiated successfully based on confirmation.",
        target.target
    ))
}
