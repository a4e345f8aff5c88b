//! The seed's `complex_tool` written by hand against `SagaTool`: what `#[saga_tool]`
//! generates from `examples/support/deploy.rs`, in the form a person would write it. It shows what
//! the runtime needs from a saga (a serializable state with one variant per suspension,
//! and a step that runs from one suspension to the next), and the tests run it next to
//! the generated one.

use saga_runtime::engine::parse_arguments;
use saga_runtime::prelude::*;
use saga_runtime::rmcp::ErrorData;
use saga_runtime::rmcp::handler::server::common::schema_for_type;
use saga_runtime::rmcp::model::{JsonObject, Tool};

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
pub struct ComplexToolByHand;

impl SagaTool for ComplexToolByHand {
    type State = DeployState;

    fn tool(&self) -> Tool {
        Tool::new(
            "complex_tool",
            "Deploys a service after confirming with the user and an LLM.",
            schema_for_type::<Arguments>(),
        )
    }

    /// Tokens name the point (`DeployState`'s variant) and its layout, traced from the
    /// type; a change of meaning that keeps the layout bumps this. (2: its rounds are
    /// restatable, so its tokens keep no requests.)
    fn version(&self) -> u16 {
        2
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
        // Each round's requests are built from the state by one function, so that they
        // can be stated again word for word and the token need not carry them.
        match state {
            DeployState::Start => {
                Step::suspend_restatable(DeployState::AfterElicitTarget, [ask_target()])
            }
            DeployState::AfterElicitTarget => match answers.elicit::<Target>(0) {
                Ok(target) => {
                    let verdict = ask_verdict(&target);
                    Step::suspend_restatable(DeployState::AfterSampleVerdict { target }, [verdict])
                }
                Err(SagaError::DoesNotFit(_)) => Step::AskAgain(vec![ask_target()]),
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

    /// A round stated again from its state, as `step` first stated it: the runtime asks
    /// when a request of the round had no answer, since the token keeps no copy.
    fn restate(&self, state: DeployState, _cx: &SagaContext) -> Option<Vec<Request>> {
        match state {
            DeployState::Start => None,
            DeployState::AfterElicitTarget => Some(vec![ask_target()]),
            DeployState::AfterSampleVerdict { target } => Some(vec![ask_verdict(&target)]),
        }
    }
}

fn ask_target() -> Request {
    elicit::<Target>("Please provide the deployment target:").into()
}

fn ask_verdict(target: &Target) -> Request {
    let prompt = format!("Is deploying to '{}' safe right now?", target.target);
    sample(prompt).max_tokens(100).into()
}
