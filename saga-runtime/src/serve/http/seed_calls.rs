//! Seed 000's requests of a stateless (MCP 2026-07-28) client, served by the direct path
//! (`super::direct`): `tools/callSaga` and `tools/resumeSaga`, run by the one function
//! rmcp's handler runs them with (`serve::saga_calls::run`) and answered as rmcp's service
//! answers a custom request's result: cache hints filled, the 2026-07-28 error code for a
//! missing resource. A request that asks for progress or log messages gets them as a call
//! does (`super::notified`).
//!
//! A seed-000 method is one [`SeedMethod`]; adding one is a variant and its method's name.

use std::time::Duration;

use axum::response::Response;
use futures::future::BoxFuture;
use rmcp::model::{ClientCapabilities, CustomResult, RequestId, RequestMetaObject, ServerResult};
use serde_json::{Map, Value};

use super::message::{
    CallId, Notices, RequestMessage, ServedMethod, answered, answering, names_2026_07_28, one_pass,
    written,
};
use super::notified::Written;
use crate::engine::SagaContext;
use crate::serve::json_check::JsonBudget;
use crate::serve::tools::SagaTools;
use crate::serve::wire::call_saga::{CALL_SAGA, RESUME_SAGA};

/// A request of seed 000 served here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SeedMethod {
    CallSaga,
    ResumeSaga,
}

impl ServedMethod for SeedMethod {
    const ALL: &'static [Self] = &[SeedMethod::CallSaga, SeedMethod::ResumeSaga];

    fn method(self) -> &'static str {
        match self {
            SeedMethod::CallSaga => CALL_SAGA,
            SeedMethod::ResumeSaga => RESUME_SAGA,
        }
    }
}

/// A stateless seed-000 request the direct path serves: read, and found to pass every
/// check.
pub(crate) struct SeedCall {
    method: SeedMethod,
    id: RequestId,
    /// Its params without `_meta`, as rmcp hands a custom request's to the handler; the
    /// format's decoder reads them.
    params: Map<String, Value>,
    cx: SagaContext,
    /// Its `_meta` asks for progress or log messages.
    notifies: bool,
}

impl SeedCall {
    /// The request `body` is, read in one pass within `budget`, when it is the `method`
    /// its `Mcp-Method` header names, its params are an object, and their `_meta` has
    /// every key 2026-07-28 requires (the transport's checks have passed:
    /// `super::direct::Direct::read_within`; rmcp reads no `Mcp-Name` for these methods).
    /// `context` makes the caller's context once the request is found to be served here.
    pub(super) fn read(
        method: SeedMethod,
        body: &[u8],
        budget: JsonBudget,
        context: impl FnOnce(RequestMetaObject, ClientCapabilities, &RequestId) -> SagaContext,
    ) -> Option<Self> {
        let message: RequestMessage<Map<String, Value>> = one_pass(body, budget)?;
        let RequestMessage {
            id: CallId(id),
            method: named,
            mut params,
            ..
        } = message;
        if named != method.method() {
            return None;
        }
        // rmcp takes `_meta` out of a custom request's params into its context; an
        // `_meta` that is not an object is rmcp's to refuse. Shifted out, not swapped: the
        // other params keep their order, which decides the member a refusal names.
        let meta: RequestMetaObject = serde_json::from_value(params.shift_remove("_meta")?).ok()?;
        if !names_2026_07_28(&meta) {
            return None;
        }
        let capabilities = crate::serve::wire::resumable::capabilities_of(&meta)?;
        let notices = Notices::asked_in(&meta);
        let cx = context(meta, capabilities, &id).with_min_log_level(notices.log_level);
        Some(Self {
            method,
            id,
            params,
            cx,
            notifies: notices.any(),
        })
    }

    /// Its JSON-RPC method.
    pub(crate) fn method(&self) -> &'static str {
        self.method.method()
    }

    /// The response, as rmcp writes the handler's answer: one JSON message, or, for a
    /// request that asked for progress or log messages, what [`super::notified`] writes
    /// of them and of the answer (`keep_alive`: how often a quiet stream gets a comment).
    pub(super) fn respond(
        self,
        tools: &SagaTools,
        keep_alive: Option<Duration>,
    ) -> BoxFuture<'_, Response> {
        let SeedCall {
            method,
            id,
            params,
            cx,
            notifies,
        } = self;
        let failed_id = id.clone();
        let asked = Asked { method, params };
        let run = |tools: SagaTools, cx| async move { asked.answer(&tools, id, cx).await };
        answering(tools, cx, failed_id, notifies, keep_alive, run)
    }
}

/// What a seed-000 request asks to run.
struct Asked {
    method: SeedMethod,
    params: Map<String, Value>,
}

impl Asked {
    /// The handler's answer to request `id` for the caller `cx`, written as rmcp writes
    /// it.
    async fn answer(self, tools: &SagaTools, id: RequestId, cx: SagaContext) -> Written {
        let Asked { method, params } = self;
        let params = Some(Value::Object(params));
        // Boxed, as the rmcp handler's: the run's future is large.
        let result = Box::pin(crate::serve::saga_calls::run(
            tools,
            method.method(),
            params,
            cx,
            // Declared: a request is served here only with its capabilities read
            // (`capabilities_of` in `SeedCall::read`), so the format's assumed ones never
            // apply.
            true,
        ))
        .await;
        let answer = result.map(|result| ServerResult::CustomResult(CustomResult(result)));
        written(&answered(answer, id), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_seed_method_is_named_by_its_method_and_only_it() {
        for &method in SeedMethod::ALL {
            assert_eq!(SeedMethod::of_method(method.method()), Some(method));
        }
        for other in ["tools/call", "requests/resume", "tools/callsaga"] {
            assert_eq!(SeedMethod::of_method(other), None, "{other}");
        }
    }
}
