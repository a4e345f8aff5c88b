//! What tasks need of the server that runs them. The server implements it, so that tasks,
//! a layer below the server, never name it.

use std::future::Future;

use rmcp::ErrorData;
use rmcp::model::CallToolResponse;

use crate::engine::family::Saga;
use crate::engine::{Call, SagaContext};
use crate::state::StateCodec;

/// The tools a task runs, and how a request runs them.
pub(crate) trait Host: Clone + Send + Sync + 'static {
    /// Runs `call` as an ordinary request would, to its next suspension or its end.
    fn run(
        &self,
        call: Call,
        cx: &SagaContext,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send;

    /// As [`Host::run`], but a session call stops at its first checkpoint, where a task
    /// begins, instead of running on in process.
    fn run_until_checkpoint(
        &self,
        call: Call,
        cx: &SagaContext,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send;

    /// The tool served under `name`, or `-32602`.
    fn saga(&self, name: &str) -> Result<&Saga, ErrorData>;

    /// The codec requests' tokens are sealed with.
    fn codec(&self) -> &StateCodec;

    /// Whether principals are verified (a quota per principal is then meaningful).
    fn principals_verified(&self) -> bool;

    /// The server's model, which answers a task's samples where its policy says.
    fn model(&self) -> Option<std::sync::Arc<crate::engine::model::ServerModel>>;
}
