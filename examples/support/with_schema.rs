//! A saga tool listed with an input schema of its own choosing, for schemas the
//! arguments' types cannot say (JSON Schema 2020-12 keywords, SEP-2243's `x-mcp-header`):
//! used by the conformance server and the tests of the direct path.

use std::sync::Arc;

use saga_runtime::prelude::*;
use saga_runtime::rmcp::ErrorData;
use saga_runtime::rmcp::model::{JsonObject, Tool};

/// A saga tool listed with the given input schema instead of the one its arguments make.
pub struct WithInputSchema<T> {
    tool: T,
    schema: JsonObject,
}

impl<T: SagaTool> WithInputSchema<T> {
    /// `tool`, listed with `schema` (a JSON object; anything else panics).
    pub fn new(tool: T, schema: serde_json::Value) -> Self {
        let serde_json::Value::Object(schema) = schema else {
            panic!("an input schema is an object");
        };
        Self { tool, schema }
    }
}

impl<T: SagaTool> SagaTool for WithInputSchema<T> {
    type State = T::State;

    fn tool(&self) -> Tool {
        let mut tool = self.tool.tool();
        tool.input_schema = Arc::new(self.schema.clone());
        tool
    }

    fn version(&self) -> u16 {
        self.tool.version()
    }

    fn layout(
        &self,
    ) -> Result<saga_runtime::engine::StateLayout, saga_runtime::engine::LayoutError> {
        self.tool.layout()
    }

    fn build_tag(&self) -> u16 {
        self.tool.build_tag()
    }

    fn start(&self, arguments: JsonObject) -> Result<Self::State, ErrorData> {
        self.tool.start(arguments)
    }

    fn step(
        &self,
        state: Self::State,
        answers: Answers,
        cx: &SagaContext,
    ) -> impl Future<Output = Step<Self::State>> + Send {
        self.tool.step(state, answers, cx)
    }

    fn restate(
        &self,
        state: Self::State,
        cx: &SagaContext,
    ) -> Option<Vec<saga_runtime::engine::Request>> {
        self.tool.restate(state, cx)
    }
}
