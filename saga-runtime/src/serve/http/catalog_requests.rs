//! The catalog's requests of a stateless (MCP 2026-07-28) client, served by the direct
//! path (`super::direct`): `prompts/get` and `resources/read`, each run through the engine
//! as a tool's call is (`SagaTools::get_prompt_in`, `SagaTools::read_resource_in`, one
//! code for both transports) and answered as rmcp's service answers `SagaServer`'s
//! handler: cache hints filled, the 2026-07-28 error code for a missing resource.
//!
//! A catalog method is one [`CatalogMethod`]; adding one is a variant, its method's name,
//! its params and its run.

use std::time::Duration;

use axum::response::Response;
use futures::future::BoxFuture;
use rmcp::model::{
    ClientCapabilities, GetPromptRequestParams, ReadResourceRequestParams, RequestId,
    RequestMetaObject, ServerResult,
};

use super::message::{
    Notices, RequestMessage, ServedMethod, answered, answering, names_2026_07_28, one_pass, written,
};
use super::notified::Written;
use crate::engine::SagaContext;
use crate::serve::json_check::JsonBudget;
use crate::serve::tools::SagaTools;

/// A request of the catalog (prompts, resources) served here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CatalogMethod {
    GetPrompt,
    ReadResource,
}

impl ServedMethod for CatalogMethod {
    const ALL: &'static [Self] = &[CatalogMethod::GetPrompt, CatalogMethod::ReadResource];

    fn method(self) -> &'static str {
        match self {
            CatalogMethod::GetPrompt => "prompts/get",
            CatalogMethod::ReadResource => "resources/read",
        }
    }
}

/// What a catalog request asks for: its params, `_meta` taken out into its context.
enum Asked {
    Prompt(GetPromptRequestParams),
    Resource(ReadResourceRequestParams),
}

/// A stateless catalog request the direct path serves: read, and found to pass every
/// check.
pub(crate) struct CatalogRequest {
    method: CatalogMethod,
    id: RequestId,
    asked: Asked,
    cx: SagaContext,
    /// Its `_meta` asks for progress or log messages: they go to its response, which
    /// [`super::notified`] writes.
    notifies: bool,
}

impl CatalogRequest {
    /// The request `body` is, read in one pass within `budget`, when it is the `method`
    /// its `Mcp-Method` header names, its `Mcp-Name` (`name`, decoded) is its prompt's
    /// name or its resource's URI, and its `_meta` has every key 2026-07-28 requires (the
    /// progress or log messages it may ask for go to its response); the transport's
    /// checks have passed (`super::direct::Direct::read_within`). `context` makes the
    /// caller's context once the request is found to be served here.
    pub(super) fn read(
        method: CatalogMethod,
        name: &str,
        body: &[u8],
        budget: JsonBudget,
        context: impl FnOnce(RequestMetaObject, ClientCapabilities, &RequestId) -> SagaContext,
    ) -> Option<Self> {
        let (id, named, meta, asked) = match method {
            CatalogMethod::GetPrompt => {
                let message: RequestMessage<GetPromptRequestParams> = one_pass(body, budget)?;
                let mut params = message.params;
                if params.name != name {
                    return None;
                }
                let meta = params.meta.take()?;
                (message.id.0, message.method, meta, Asked::Prompt(params))
            }
            CatalogMethod::ReadResource => {
                let message: RequestMessage<ReadResourceRequestParams> = one_pass(body, budget)?;
                let mut params = message.params;
                if params.uri != name {
                    return None;
                }
                let meta = params.meta.take()?;
                (message.id.0, message.method, meta, Asked::Resource(params))
            }
        };
        if named != method.method() || !names_2026_07_28(&meta) {
            return None;
        }
        let capabilities = crate::serve::wire::resumable::capabilities_of(&meta)?;
        let notices = Notices::asked_in(&meta);
        let cx = context(meta, capabilities, &id).with_min_log_level(notices.log_level);
        Some(Self {
            method,
            id,
            asked,
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
        let CatalogRequest {
            id,
            asked,
            cx,
            notifies,
            ..
        } = self;
        let failed_id = id.clone();
        let run = |tools: SagaTools, cx| async move { answer(&tools, id, asked, &cx).await };
        answering(tools, cx, failed_id, notifies, keep_alive, run)
    }
}

/// The handler's answer to request `id` asking `asked` for the caller `cx`, written as
/// rmcp writes it.
async fn answer(tools: &SagaTools, id: RequestId, asked: Asked, cx: &SagaContext) -> Written {
    let answer = match asked {
        Asked::Prompt(params) => Box::pin(tools.get_prompt_in(params, cx))
            .await
            .map(ServerResult::from),
        Asked::Resource(params) => Box::pin(tools.read_resource_in(params, cx))
            .await
            .map(ServerResult::from),
    };
    written(&answered(answer, id), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_catalog_method_is_named_by_its_method_and_only_it() {
        for &method in CatalogMethod::ALL {
            assert_eq!(CatalogMethod::of_method(method.method()), Some(method));
        }
        for other in [
            "prompts/list",
            "resources/list",
            "resources/subscribe",
            "tools/call",
        ] {
            assert_eq!(CatalogMethod::of_method(other), None, "{other}");
        }
    }
}
