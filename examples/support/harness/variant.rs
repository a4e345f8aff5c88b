//! Another build's copy of a tool, written by hand against `SagaTool`: the same code under
//! another name or at another version, or a wrapper that forwards all but the version.

use saga_runtime::engine::{
    Answers, LayoutError, Request, SagaContext, SagaTool, StateLayout, Step,
};
use saga_runtime::rmcp::ErrorData;
use saga_runtime::rmcp::model::{JsonObject, Tool};

/// `tool`'s name (unless renamed), layout, start and steps, at version 0 unless told
/// otherwise: it forwards neither the version nor anything else.
pub struct Variant<T> {
    tool: T,
    name: Option<&'static str>,
    version: u16,
}

impl<T: SagaTool> Variant<T> {
    /// `tool`, at version 0 whatever its own.
    pub fn of(tool: T) -> Self {
        Self {
            tool,
            name: None,
            version: 0,
        }
    }

    /// Under the name `name`.
    pub fn named(mut self, name: &'static str) -> Self {
        self.name = Some(name);
        self
    }

    /// At `version`.
    pub fn at_version(mut self, version: u16) -> Self {
        self.version = version;
        self
    }
}

impl<T: SagaTool> SagaTool for Variant<T> {
    type State = T::State;

    fn tool(&self) -> Tool {
        let mut tool = self.tool.tool();
        if let Some(name) = self.name {
            tool.name = name.into();
        }
        tool
    }

    fn version(&self) -> u16 {
        self.version
    }

    fn layout(&self) -> Result<StateLayout, LayoutError> {
        self.tool.layout()
    }

    fn start(&self, arguments: JsonObject) -> Result<Self::State, ErrorData> {
        self.tool.start(arguments)
    }

    async fn step(
        &self,
        state: Self::State,
        answers: Answers,
        cx: &SagaContext,
    ) -> Step<Self::State> {
        self.tool.step(state, answers, cx).await
    }

    fn restate(&self, state: Self::State, cx: &SagaContext) -> Option<Vec<Request>> {
        self.tool.restate(state, cx)
    }
}
