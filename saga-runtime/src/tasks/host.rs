//! What tasks need of the server that runs them. The server implements it, so that tasks,
//! a layer below the server, never name it.

use rmcp::ErrorData;

use crate::engine::runner::family::Saga;
use crate::state::StateCodec;

/// The tools a task's worker runs. A request's call never passes through here: the
/// server runs it to where its task begins, and hands the task over
/// ([`Tasks::begin`](super::Tasks::begin)).
pub(crate) trait Host: Clone + Send + Sync + 'static {
    /// The tool served under `name`, or `-32602`.
    fn saga(&self, name: &str) -> Result<&Saga, ErrorData>;

    /// The codec requests' tokens are sealed with.
    fn codec(&self) -> &StateCodec;

    /// Whether principals are verified (a quota per principal is then meaningful).
    fn principals_verified(&self) -> bool;

    /// The server's model, which answers a task's samples where its policy says.
    fn model(&self) -> Option<std::sync::Arc<crate::engine::caller::model::ServerModel>>;
}
