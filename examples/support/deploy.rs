//! The seed's `complex_tool`: elicit the deployment target, ask the client's LLM whether
//! deploying there is safe, then finish. One straight-line async function; `#[saga_tool]`
//! turns it into a state machine whose state travels in the client's token. Served by
//! `examples/deploy.rs` (and `quickstart.rs`, `metrics.rs`).

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

/// The server of this example, with the given keys; with `SAGA_MODEL_URL` set, a
/// server-side model answers the tool's `sample()` for clients that cannot sample
/// ([`crate::cli::model`]).
pub fn server(keys: KeyRing) -> anyhow::Result<SagaServer> {
    Ok(builder(keys)?.build()?)
}

/// [`server`]'s builder, for a test that sets more (authorization, limits).
pub fn builder(keys: KeyRing) -> anyhow::Result<saga_runtime::serve::SagaServerBuilder> {
    let mut builder = SagaServer::builder()
        .info("deploy-server", env!("CARGO_PKG_VERSION"))
        .keys(keys)
        .ttl(std::time::Duration::from_secs(600))
        .tool(complex_tool)
        // For `saga graph URL complex_tool` (off by default: a diagram shows the code).
        .diagrams_in_tool_list(true);
    builder = crate::cli::with_api_keys(builder);
    builder = crate::cli::with_authorization(builder)?;
    if let Some(model) = crate::cli::model()? {
        builder = builder.model(model);
    }
    Ok(builder)
}
