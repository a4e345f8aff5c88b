//! `tools/callSaga` and `tools/resumeSaga` (seed 000) run: decoded by their format
//! (`wire::call_saga`), run as any call (never as a task: the format has none), encoded
//! back. One function for both transports that read them: rmcp's handler (sessions, and
//! stateless requests it is handed) and the direct path.

use rmcp::ErrorData;

use super::route::{self, Door};
use super::tools::SagaTools;
use super::wire::call_saga;
use crate::engine::SagaContext;

/// Runs the seed-000 request `method` (either of the two) with `params` (without their
/// `_meta`) for the caller `cx` (as the transport made it: `call_saga::context` is applied
/// here, with `declared` whether the client declared its capabilities).
pub(crate) async fn run(
    tools: &SagaTools,
    method: &str,
    params: Option<serde_json::Value>,
    cx: SagaContext,
    declared: bool,
) -> Result<serde_json::Value, ErrorData> {
    let cx = call_saga::context(cx, declared);
    let (call, door) = if method == call_saga::CALL_SAGA {
        (call_saga::decode_call(params)?, Door::WithoutTasks)
    } else {
        let call = call_saga::decode_resume(params)?;
        if tools.definition(&call.name).is_none() {
            return Err(call_saga::unknown_tool(&call.name));
        }
        (call, Door::ResumeWithoutTasks)
    };
    let name = call.name.clone();
    let response = route::dispatch(tools, call, &cx, door).await?;
    call_saga::encode(&name, response)
}
