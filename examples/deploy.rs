//! The seed's `complex_tool`: elicit the deployment target, ask the client's LLM whether
//! deploying there is safe, then finish.
//!
//! Written by hand against `SagaTool`, to show what the runtime needs from a saga: a
//! serializable state with one variant per suspension, and a step that runs from one
//! suspension to the next. `#[saga_tool]` generates the same from a straight-line async
//! function.
//!
//! ```text
//! cargo run --example deploy                 # Streamable HTTP on 127.0.0.1:8080/mcp
//! cargo run --example deploy -- --stdio      # stdio
//! ```

use saga_runtime::engine::parse_arguments;
use saga_runtime::prelude::*;
use saga_runtime::rmcp::ErrorData;
use saga_runtime::rmcp::handler::server::common::schema_for_type;
use saga_runtime::rmcp::model::{JsonObject, Tool};
use saga_runtime::state::Fingerprint;

/// The deployment target the user is asked for.
#[derive(Debug, Elicit, Serialize, Deserialize)]
pub struct Target {
    pub target: String,
}

/// The tool's arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Arguments {
    /// An opaque value passed by the caller.
    pub initial_arg: String,
    /// How many replicas to deploy.
    pub replicas: Option<u32>,
}

/// Where the saga is: one variant per suspension, holding what is still needed after it.
#[derive(Debug, Serialize, Deserialize)]
pub enum DeployState {
    /// Not started.
    Start,
    /// Waiting for the target.
    AfterElicitTarget,
    /// Waiting for the LLM's verdict on `target`.
    AfterSampleVerdict { target: Target },
}

/// The seed's `complex_tool`.
#[derive(Debug, Clone, Copy)]
pub struct ComplexTool;

/// Bump when `DeployState` or the step changes, so tokens of the old build are refused.
const FINGERPRINT: Fingerprint = *b"deploy01";

impl SagaTool for ComplexTool {
    type State = DeployState;

    fn tool(&self) -> Tool {
        Tool::new(
            "complex_tool",
            "Deploys a service after confirming with the user and an LLM.",
            schema_for_type::<Arguments>(),
        )
    }

    fn fingerprint(&self) -> Fingerprint {
        FINGERPRINT
    }

    fn start(&self, arguments: JsonObject) -> Result<DeployState, ErrorData> {
        // Neither argument is used after the first suspension, so neither is saved.
        let _arguments: Arguments = parse_arguments(arguments)?;
        Ok(DeployState::Start)
    }

    async fn step(
        &self,
        state: DeployState,
        mut answers: Answers,
        _cx: &SagaContext,
    ) -> Step<DeployState> {
        match state {
            DeployState::Start => Step::suspend(
                DeployState::AfterElicitTarget,
                [elicit::<Target>("Please provide the deployment target:")],
            ),
            DeployState::AfterElicitTarget => match answers.elicit::<Target>(0) {
                Ok(target) => {
                    let prompt = format!("Is deploying to '{}' safe right now?", target.target);
                    Step::suspend(
                        DeployState::AfterSampleVerdict { target },
                        [sample(prompt).max_tokens(100)],
                    )
                }
                Err(error) => Step::done(Err::<String, _>(error)),
            },
            DeployState::AfterSampleVerdict { target } => match answers.sampled(0) {
                Ok(verdict) if !verdict.text().starts_with("Yes") => {
                    Step::done("Deployment postponed.")
                }
                Ok(_) => Step::done(format!(
                    "Deployment to {} initiated successfully based on confirmation.",
                    target.target
                )),
                Err(error) => Step::done(Err::<String, _>(error)),
            },
        }
    }
}

/// The server of this example, with the given keys.
pub fn server(keys: KeyRing) -> anyhow::Result<SagaServer> {
    Ok(SagaServer::builder()
        .info("deploy-server", env!("CARGO_PKG_VERSION"))
        .keys(keys)
        .ttl(std::time::Duration::from_secs(600))
        .tool(ComplexTool)
        .build()?)
}

#[allow(dead_code)] // unused where another example or a test includes this file
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    saga_examples::cli::init_logging();
    saga_examples::cli::serve(server(saga_examples::cli::keys()?)?).await
}
