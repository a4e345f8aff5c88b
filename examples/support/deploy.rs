//! The deploy example's server: the seed's `complex_tool` (`deploy_tool.rs`) and `release`
//! (`release.rs`, the deployment started for real, once, as an effect), served by
//! `examples/deploy.rs` and `metrics.rs`, with the options the examples read from the
//! environment (API keys, authorization, a server-side model).

use saga_runtime::prelude::*;

#[path = "deploy_tool.rs"]
mod tool;

#[path = "release.rs"]
mod rollout;

pub use rollout::release;
pub use tool::{Target, complex_tool};

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
        .tool(release)
        // For `saga graph URL complex_tool` (off by default: a diagram shows the code).
        .diagrams_in_tool_list(true);
    builder = crate::cli::with_api_keys(builder);
    builder = crate::cli::with_authorization(builder)?;
    if let Some(model) = crate::cli::model()? {
        builder = builder.model(model);
    }
    Ok(builder)
}
