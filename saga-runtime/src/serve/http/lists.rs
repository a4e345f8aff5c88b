//! The list methods of a stateless (MCP 2026-07-28) client, served by the direct path
//! (`super::direct`): `tools/list`, `prompts/list`, `resources/list` and
//! `resources/templates/list`, each answered as `SagaServer`'s handler answers it through
//! rmcp's service, in its own MCP server span.
//!
//! A list method is one [`Listing`]; adding one is a variant, its method's name and its
//! answer.

use axum::response::Response;
use http::StatusCode;
use http::request::Parts;
use rmcp::ErrorData;
use rmcp::model::{
    JsonRpcVersion2_0, PaginatedRequestParams, RequestId, ServerJsonRpcMessage, ServerResult,
};

use super::message::{CallId, names_2026_07_28, params_object, written};
use super::notified::Written;
use crate::otel::MethodTrace;
use crate::serve::tools::SagaTools;

/// A list method served here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Listing {
    Tools,
    Prompts,
    Resources,
    ResourceTemplates,
}

impl Listing {
    const ALL: [Listing; 4] = [
        Listing::Tools,
        Listing::Prompts,
        Listing::Resources,
        Listing::ResourceTemplates,
    ];

    /// Its JSON-RPC method.
    pub(crate) fn method(self) -> &'static str {
        match self {
            Listing::Tools => "tools/list",
            Listing::Prompts => "prompts/list",
            Listing::Resources => "resources/list",
            Listing::ResourceTemplates => "resources/templates/list",
        }
    }

    /// The list method called `method`, if it is one.
    pub(crate) fn of_method(method: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|listing| listing.method() == method)
    }

    /// Its answer from `tools` to the caller whose HTTP head is `parts`, as
    /// `SagaServer`'s handler gives it to rmcp.
    fn answer(self, tools: &SagaTools, parts: &Parts) -> Result<ServerResult, ErrorData> {
        Ok(match self {
            Listing::Tools => ServerResult::ListToolsResult(tools.list_seen_by(Some(parts))),
            Listing::Prompts => ServerResult::ListPromptsResult(tools.prompts_listed()?),
            Listing::Resources => ServerResult::ListResourcesResult(tools.resources_listed()?),
            Listing::ResourceTemplates => {
                ServerResult::ListResourceTemplatesResult(tools.resource_templates_listed()?)
            }
        })
    }
}

/// A JSON-RPC request of a list method, read as the direct path reads a call: rmcp's
/// types for each member, exactly these four, `params` an object. rmcp also takes a list
/// without params, but a stateless request's params carry its required `_meta`, so one
/// without is rmcp's to refuse. The method is checked against the one `Mcp-Method` names
/// ([`List::read`]).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ListMessage {
    #[allow(dead_code)] // read to be checked
    jsonrpc: JsonRpcVersion2_0,
    id: CallId,
    method: String,
    // Its cursor is read (a cursor that is not a string is rmcp's to refuse), and
    // unused: each list is one page, as the handler answers it.
    #[serde(deserialize_with = "params_object")]
    params: PaginatedRequestParams,
}

/// A stateless list request the direct path serves: read, found to pass every check, and
/// answered for its caller.
pub(crate) struct List {
    listing: Listing,
    id: RequestId,
    answer: Result<ServerResult, ErrorData>,
    /// Its MCP server span and duration record, made as the handler makes them.
    trace: MethodTrace,
}

impl List {
    /// The list `message` asks for, when it is the `listing` its `Mcp-Method` header
    /// names and its `_meta` has every key 2026-07-28 requires (the transport's checks
    /// have passed: `super::direct::Direct::read_within`); answered for the caller whose HTTP head is
    /// `parts`.
    pub(super) fn read(
        tools: &SagaTools,
        parts: &Parts,
        listing: Listing,
        message: ListMessage,
    ) -> Option<Self> {
        let ListMessage {
            id: CallId(id),
            method,
            params,
            ..
        } = message;
        if method != listing.method() {
            return None;
        }
        let meta = params.meta?;
        if !names_2026_07_28(&meta) {
            return None;
        }
        // The other key 2026-07-28 requires: without it rmcp refuses the request.
        crate::serve::wire::resumable::capabilities_of(&meta)?;
        let trace = MethodTrace::stateless(listing.method(), None, &parts.headers, &meta, &id);
        Some(Self {
            listing,
            id,
            answer: listing.answer(tools, parts),
            trace,
        })
    }

    /// Its JSON-RPC method.
    pub(crate) fn method(&self) -> &'static str {
        self.listing.method()
    }

    /// The response, as rmcp writes the handler's answer: cache hints filled, and a tool
    /// list's task tools declaring their `execution.taskSupport` as the guard declares it
    /// in rmcp's answer (`super::tool_list`).
    pub(super) async fn respond(self, tools: &SagaTools) -> Response {
        let List {
            listing,
            id,
            answer,
            trace,
        } = self;
        let message = match trace.run(std::future::ready(answer)).await {
            Ok(mut result) => {
                result.fill_missing_cache_hints();
                ServerJsonRpcMessage::response(result, id)
            }
            Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
        };
        if listing != Listing::Tools || tools.tasks().is_none() {
            return written(&message, None).into_response();
        }
        let declared = serde_json::to_value(&message).map(|mut message| {
            super::tool_list::declare_task_support(&mut message, tools);
            message
        });
        let body = declared
            .and_then(|message| serde_json::to_vec(&message))
            .map_err(|error| error.to_string());
        Written {
            status: StatusCode::OK,
            body,
        }
        .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_listing_is_named_by_its_method_and_only_it() {
        for listing in Listing::ALL {
            assert_eq!(Listing::of_method(listing.method()), Some(listing));
        }
        for other in [
            "tools/call",
            "prompts/get",
            "resources/read",
            "",
            "tools/list ",
        ] {
            assert_eq!(Listing::of_method(other), None, "{other}");
        }
    }
}
