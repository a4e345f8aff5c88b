//! The listing methods of a stateless (MCP 2026-07-28) client, served by the direct path
//! (`super::direct`): `tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list`, and `server/discover` (the server's listing of itself),
//! each answered as `SagaServer`'s handler answers it through rmcp's service, in its own
//! MCP server span.
//!
//! A listing method is one [`Listing`]; adding one is a variant, its method's name and its
//! answer.

use axum::response::Response;
use http::StatusCode;
use http::request::Parts;
use rmcp::ErrorData;
use rmcp::model::{DiscoverResult, RequestId, RequestMetaObject, ServerResult};

use super::message::{CallId, RequestMessage, ServedMethod, answered, names_2026_07_28, written};
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
    /// `server/discover`: the versions served, the server's info and capabilities.
    Server,
}

impl ServedMethod for Listing {
    const ALL: &'static [Self] = &[
        Listing::Tools,
        Listing::Prompts,
        Listing::Resources,
        Listing::ResourceTemplates,
        Listing::Server,
    ];

    fn method(self) -> &'static str {
        match self {
            Listing::Tools => "tools/list",
            Listing::Prompts => "prompts/list",
            Listing::Resources => "resources/list",
            Listing::ResourceTemplates => "resources/templates/list",
            Listing::Server => "server/discover",
        }
    }
}

impl Listing {
    /// Whether it takes a `cursor` param: `server/discover`'s params are `_meta` alone,
    /// and rmcp refuses any other member.
    fn pages(self) -> bool {
        self != Listing::Server
    }

    /// Its answer from `sources` to the caller whose HTTP head is `parts`, as
    /// `SagaServer`'s handler gives it to rmcp.
    fn answer(self, sources: Sources<'_>, parts: &Parts) -> Result<ServerResult, ErrorData> {
        let tools = sources.tools;
        Ok(match self {
            Listing::Tools => ServerResult::ListToolsResult(tools.list_seen_by(Some(parts))),
            Listing::Prompts => ServerResult::ListPromptsResult(tools.prompts_listed()?),
            Listing::Resources => ServerResult::ListResourcesResult(tools.resources_listed()?),
            Listing::ResourceTemplates => {
                ServerResult::ListResourceTemplatesResult(tools.resource_templates_listed()?)
            }
            Listing::Server => ServerResult::DiscoverResult(sources.discovery.clone()),
        })
    }
}

/// What the listings are answered from: the registry, and the server's discovery answer
/// (made once: `SagaServer::discovery`).
#[derive(Clone, Copy)]
pub(crate) struct Sources<'a> {
    pub(crate) tools: &'a SagaTools,
    pub(crate) discovery: &'a DiscoverResult,
}

/// A listing's params: `_meta` and a cursor, nothing else. rmcp ignores other members of
/// a list's params, but refuses them in `server/discover`'s; a request with one is rmcp's
/// to answer either way.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ListParams {
    #[serde(rename = "_meta")]
    meta: Option<RequestMetaObject>,
    /// `Some` when the member is there, even as `null`. It is read (a cursor that is not
    /// a string is rmcp's to refuse), and unused: each list is one page, as the handler
    /// answers it.
    #[serde(default, deserialize_with = "present")]
    cursor: Option<Option<String>>,
}

/// A member that is there, whatever its value (`null` too).
fn present<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<String>>, D::Error> {
    serde::Deserialize::deserialize(deserializer).map(Some)
}

/// A JSON-RPC request of a listing method: [`ListParams`] (`_meta` and a cursor only).
pub(super) type ListMessage = RequestMessage<ListParams>;

/// A stateless listing request the direct path serves: read, found to pass every check, and
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
    /// have passed: `super::direct::Direct::read_within`); answered for the caller whose
    /// HTTP head is `parts`.
    pub(super) fn read(
        sources: Sources<'_>,
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
        if method != listing.method() || (params.cursor.is_some() && !listing.pages()) {
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
            answer: listing.answer(sources, parts),
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
        let message = answered(trace.run(std::future::ready(answer)).await, id);
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
        for &listing in Listing::ALL {
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
