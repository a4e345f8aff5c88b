//! The direct path: an MRTR `tools/call`, a stateless listing (`tools/list`,
//! `prompts/list`, `resources/list`, `resources/templates/list`, `server/discover`:
//! `super::lists`), catalog request (`prompts/get`, `resources/read`:
//! `super::catalog_requests`), task request (`tasks/get`, `tasks/update`,
//! `tasks/cancel`: `super::task_requests`) or request of a method saga does not serve
//! (`ping`, `completion/complete`, `logging/setLevel`, `resources/subscribe`,
//! `resources/unsubscribe`, `subscriptions/listen`: `super::unserved`), seed 000's
//! `tools/callSaga` and `tools/resumeSaga` (`super::seed_calls`), or a client's
//! notification (`super::client_notices`) that rmcp's transport would accept exactly as
//! it is, served by saga without rmcp's per-request service.
//!
//! Why: for each stateless request rmcp builds a service, a peer, a one-shot transport and
//! two tasks, and writes the message back into a JSON value to check its headers. On the
//! deploy saga that machinery cost more than the whole saga transition, sealing included
//! (BENCHMARKS.md, "The direct path").
//!
//! How it stays one validation path: this path never refuses anything. It serves a request
//! only after finding that every check rmcp's transport makes would pass, and hands any
//! other request to rmcp unchanged, which answers it as it answers any request. "Would
//! pass" is read narrowly: a header this module does not read as rmcp does (a quoted
//! `Accept` parameter) sends the request to rmcp rather than being interpreted here. What
//! is checked, in rmcp's order:
//!
//! 1. the path is the MCP endpoint's; the `Host` is one of the config's allowed hosts and
//!    the `Origin`, if any, one of its allowed origins, or any when the config has none
//!    and was not told to check without (rmcp's DNS-rebinding check, `hosts.rs`);
//! 2. `Accept` admits both `application/json` and `text/event-stream` (the guard already
//!    checked `Content-Type`);
//! 3. the body is a JSON-RPC request of the method `Mcp-Method` names, read with rmcp's
//!    own types for each member and more strictly than rmcp reads it ([`CallMessage`],
//!    and one message type in each module named above);
//! 4. `MCP-Protocol-Version` is `2026-07-28` and so is the body's `_meta` version, and
//!    `_meta` has every key 2026-07-28 requires (so the request is stateless, not a
//!    session's);
//! 5. `Mcp-Method` and, for a call, a catalog or a task request or a subscription's
//!    method, `Mcp-Name` (SEP-2243) are single and match the body (the tool's or prompt's
//!    name, the resource's URI, the task's id; a name in SEP-2243's Base64
//!    wrapper decoded as rmcp decodes it), and each `Mcp-Param-*` header a called tool's
//!    schema names matches its argument (`serve::param_headers`; rmcp reads no other, so
//!    any other is ignored here as there);
//! 6. nothing more: a call whose `_meta` asks for progress or log messages gets them,
//!    written as rmcp writes them ([`super::notified`]), or, for a client that asked to be
//!    streamed through the call's checkpoints (`resumableRequests`), in that stream
//!    (`serve::streamed`).
//!
//! Then the handler's own rules apply as rmcp applies them around `call_tool` (a task
//! result only for a client that declared tasks, cache hints; a call's error as the
//! handler made it), and the response is the JSON message with rmcp's status. A
//! listing is answered as `SagaServer`'s handler answers it (tools for the caller's token,
//! in its own MCP server span), a tool list with the task support the guard adds to
//! rmcp's answer; a catalog request runs its saga as a call does, its notifications
//! written as a call's are; a task request is answered after the tasks
//! extension's checks rmcp makes first; an unserved method is refused as rmcp refuses it;
//! a seed-000 request runs as the handler runs it; a notification is accepted, and
//! ignored, as rmcp's transport accepts it.
//!
//! `tests/http/direct.rs` sends the same requests, valid and not, to a server with and without
//! this path and requires the same answers.

use std::sync::Arc;

use axum::response::Response;
use futures::future::{BoxFuture, FutureExt as _};
use http::request::Parts;
use http::{HeaderMap, HeaderName, header};
use rmcp::model::{
    CallToolRequestMethod, CallToolResponse, ClientCapabilities, DiscoverResult, JsonRpcVersion2_0,
    ProtocolVersion, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::{ErrorData, model::CallToolRequestParams};

use super::catalog_requests::{CatalogMethod, CatalogRequest};
use super::client_notices::{AcceptedNotice, ClientNotice};
use super::hosts::{Authority, Origins, host_admitted};
use super::lists::{List, Listing, Sources};
use super::message::{
    CallId, Notices, ServedMethod, answered, names_2026_07_28, notifying, one_pass, params_object,
    respond, written,
};
use super::notified::Answer;
use super::seed_calls::{SeedCall, SeedMethod};
use super::task_requests::{TaskMethod, TaskRequest};
use super::unserved::{Unserved, UnservedRequest};
use crate::engine::caller::pool::Caller;
use crate::engine::runner::family::Saga;
use crate::engine::{Call, SagaContext, StatelessMeta};
use crate::serve::json_check::JsonBudget;
use crate::serve::param_headers;
use crate::serve::route::{self, Door, Route, Routed};
use crate::serve::streamed;
use crate::serve::tools::SagaTools;
use crate::serve::wire::WireCall;
use crate::serve::wire::resumable::{self, GET_STATUS, RESUME};

// Header names, not strings: a string is parsed into a name at every lookup.
const PROTOCOL_VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
const METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
const NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");
const TOOLS_CALL: &str = "tools/call";

/// A JSON-RPC `tools/call` request, read with rmcp's own types for every field.
///
/// rmcp reads a message by buffering it, classifying its shape and dispatching on the
/// method; that costs more than the rest of a round (BENCHMARKS.md). This reads the one
/// shape served here, and only more strictly: exactly these four members, each once (so
/// a stray `result` or `error`, which rmcp refuses, is refused here too), `jsonrpc`
/// exactly `"2.0"`, `method` exactly `"tools/call"`. The values are those rmcp would
/// build; anything this refuses goes to rmcp, which decides.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CallMessage {
    #[allow(dead_code)] // read to be checked
    jsonrpc: JsonRpcVersion2_0,
    id: CallId,
    #[allow(dead_code)] // read to be checked
    method: CallToolRequestMethod,
    #[serde(deserialize_with = "params_object")]
    params: CallToolRequestParams,
}

/// A `tools/call` the direct path serves: read, and found to pass every check.
struct DirectCall {
    id: RequestId,
    params: CallToolRequestParams,
    cx: SagaContext,
    /// Its `_meta` asks for progress or log messages: its response is written by
    /// [`super::notified`] (or, streamed through its checkpoints, by `serve::streamed`).
    notifies: bool,
}

/// What the direct path serves, read and checked by [`Direct::read_within`].
// The call is the large variant and nearly every request's: boxed, it would cost every
// call an allocation (the guard's `Posted` says the same).
#[allow(clippy::large_enum_variant)]
enum DirectRequest {
    Call(DirectCall),
    List(List),
    Catalog(CatalogRequest),
    Task(TaskRequest),
    Unserved(UnservedRequest),
    Seed(SeedCall),
    Notice(AcceptedNotice),
}

impl DirectRequest {
    /// Its JSON-RPC method, as the request's log span records it.
    pub(crate) fn method(&self) -> &'static str {
        match self {
            DirectRequest::Call(_) => TOOLS_CALL,
            DirectRequest::List(list) => list.method(),
            DirectRequest::Catalog(catalog) => catalog.method(),
            DirectRequest::Task(task) => task.method(),
            DirectRequest::Unserved(unserved) => unserved.method(),
            DirectRequest::Seed(seed) => seed.method(),
            DirectRequest::Notice(notice) => notice.method(),
        }
    }
}

/// A stateless `requests/resume` or `requests/getStatus` the direct path serves: read,
/// and found to pass every check.
pub(crate) struct Resumption {
    id: RequestId,
    cx: SagaContext,
    /// The params without their `_meta` (read into `cx`).
    params: serde_json::Value,
    /// `requests/getStatus`: the token's status, nothing run.
    status_only: bool,
}

/// The direct path of one router: its tools and what rmcp's config would check.
#[derive(Clone)]
pub(crate) struct Direct {
    tools: SagaTools,
    /// The config's allowed hosts, parsed once; empty allows any host, as in rmcp.
    allowed_hosts: Arc<[Authority]>,
    /// How often a quiet stream of notifications gets a comment (the config's).
    keep_alive: Option<std::time::Duration>,
    /// rmcp's `Origin` check under the config.
    origins: Arc<Origins>,
    /// The server's answer to `server/discover`, made once.
    discovery: Arc<DiscoverResult>,
}

impl Direct {
    /// The direct path for `tools` under `config`, or `None` when the config makes rmcp
    /// answer in a way this path does not reproduce (SSE responses to plain calls).
    pub(crate) fn new(
        tools: SagaTools,
        discovery: DiscoverResult,
        config: &StreamableHttpServerConfig,
    ) -> Option<Self> {
        if !config.json_response {
            return None;
        }
        let allowed_hosts = super::hosts::allowed(config)?;
        Some(Self {
            tools,
            allowed_hosts,
            keep_alive: config.sse_keep_alive,
            origins: Arc::new(Origins::of(config)),
            discovery: Arc::new(discovery),
        })
    }

    /// Claims a request this path serves ([`Direct::read_within`]): its method, and the
    /// future of its response, read and made in one call so that the request is decided
    /// and handed to its run in one place; `None` leaves the request to rmcp, untouched.
    pub(crate) fn claim(
        &self,
        parts: &Parts,
        body: &[u8],
        budget: JsonBudget,
        caller: &mut Option<Caller>,
    ) -> Option<(&'static str, BoxFuture<'_, Response>)> {
        let request = self.read_within(parts, body, budget, caller)?;
        Some((request.method(), self.run(request)))
    }

    /// A request this path serves (a `tools/call` or a listing), read from a body that has
    /// not been through the guard's JSON checks: they are made in the same pass
    /// ([`crate::serve::json_check::typed::read_within`]), and a body they would refuse
    /// is `None`, as is any body this path does not serve (rmcp answers it).
    ///
    /// `caller` is the one the guard resolved: taken into the call's context when the
    /// call is served here, left for the request's extensions otherwise (put there, then
    /// cloned out again, it cost an allocation, a map insert and a lookup per request).
    fn read_within(
        &self,
        parts: &Parts,
        body: &[u8],
        budget: JsonBudget,
        caller: &mut Option<Caller>,
    ) -> Option<DirectRequest> {
        let headers = &parts.headers;
        // The guard also answers below the MCP path (`/mcp/…`), which rmcp's transport
        // serves as it serves any path: only the MCP path itself is served here.
        if !self.transport_admits(parts)
            || sole(headers, PROTOCOL_VERSION_HEADER)? != ProtocolVersion::V_2026_07_28.as_str()
        {
            return None;
        }
        // rmcp requires `Mcp-Method` to name the body's method: the header says which
        // message the body must be, and a body that is another is rmcp's to refuse.
        match sole(headers, METHOD_HEADER)? {
            TOOLS_CALL => self
                .read_call(parts, caller, || one_pass(body, budget))
                .map(DirectRequest::Call),
            method => {
                if let Some(listing) = Listing::of_method(method) {
                    return List::read(self.sources(), parts, listing, one_pass(body, budget)?)
                        .map(DirectRequest::List);
                }
                // rmcp requires `Mcp-Name` to name the prompt, the resource or the task.
                if let Some(catalog) = CatalogMethod::of_method(method) {
                    let name = param_headers::decode(sole(headers, NAME_HEADER)?)?;
                    let context = |meta, capabilities, id: &RequestId| {
                        self.stateless_context(parts, meta, capabilities, id, caller.take())
                    };
                    return CatalogRequest::read(catalog, &name, body, budget, context)
                        .map(DirectRequest::Catalog);
                }
                if let Some(notice) = ClientNotice::of_method(method) {
                    return AcceptedNotice::read(notice, body, budget).map(DirectRequest::Notice);
                }
                if let Some(seed) = SeedMethod::of_method(method) {
                    let context = |meta, capabilities, id: &RequestId| {
                        self.stateless_context(parts, meta, capabilities, id, caller.take())
                    };
                    return SeedCall::read(seed, body, budget, context).map(DirectRequest::Seed);
                }
                if let Some(unserved) = Unserved::of_method(method) {
                    // rmcp reads `Mcp-Name` only for a method that has one.
                    let name = match unserved.named() {
                        true => Some(param_headers::decode(sole(headers, NAME_HEADER)?)?),
                        false => None,
                    };
                    let completes = self.discovery.capabilities.completions.is_some();
                    return UnservedRequest::read(
                        parts,
                        unserved,
                        name.as_deref(),
                        body,
                        budget,
                        completes,
                    )
                    .map(DirectRequest::Unserved);
                }
                let task = TaskMethod::of_method(method)?;
                let name = param_headers::decode(sole(headers, NAME_HEADER)?)?;
                let principal = || self.tools.head(Some(parts), caller.take()).principal;
                let message = one_pass(body, budget)?;
                TaskRequest::read(&self.tools, parts, task, &name, message, principal)
                    .map(DirectRequest::Task)
            }
        }
    }

    /// What the lists are answered from.
    fn sources(&self) -> Sources<'_> {
        Sources {
            tools: &self.tools,
            discovery: &self.discovery,
        }
    }

    /// Serves a request read by [`Direct::read_within`].
    fn run(&self, request: DirectRequest) -> BoxFuture<'_, Response> {
        match request {
            DirectRequest::Call(call) => self.run_call(call),
            DirectRequest::List(list) => list.respond(&self.tools).boxed(),
            DirectRequest::Catalog(catalog) => catalog.respond(&self.tools, self.keep_alive),
            DirectRequest::Task(task) => task.respond(&self.tools).boxed(),
            DirectRequest::Unserved(unserved) => unserved.respond().boxed(),
            DirectRequest::Seed(seed) => seed.respond(&self.tools, self.keep_alive),
            DirectRequest::Notice(notice) => futures::future::ready(notice.respond()).boxed(),
        }
    }

    /// Runs a call read by [`Direct::read_within`].
    ///
    /// A plain function that returns the call's future boxed, not an `async fn`: an
    /// `async fn` keeps its argument (the read call, 920 bytes) and again the parts it
    /// is taken apart into, and its caller boxes what it is given. Here the box holds the
    /// parts once (BENCHMARKS.md).
    fn run_call(&self, call: DirectCall) -> BoxFuture<'_, Response> {
        if call.notifies {
            return self.run_notifying(call);
        }
        let DirectCall { id, params, cx, .. } = call;
        async move {
            let declared_tasks = cx.capabilities().supports_tasks();
            // The call is made and routed into the run's future, never a local of this one:
            // a local would keep a second copy of it (256 bytes) in every request's future.
            let run = match route::call_of(params, WireCall::default())
                .and_then(|call| route::routed(&self.tools, call, &cx, Door::StreamableCall))
            {
                Ok(Routed::Run(run)) => run,
                // The stream owns its context; this one stays lent to `routed`'s type.
                Ok(Routed::Streamed(saga, call)) => {
                    return self.streamed(id, saga, call, cx.clone());
                }
                Err(error) => return self.answer(Err(error), id, declared_tasks),
            };
            let result = run.await;
            self.answer(result, id, declared_tasks)
        }
        .boxed()
    }

    /// Runs a call whose `_meta` asks for progress or log messages: its notifications go
    /// to its response, which [`super::notified`] writes, or, for a call streamed through
    /// its checkpoints, to that stream (`serve::streamed`). The call's future owns what it
    /// uses (the tools, not a borrow of them): it runs in a task of its own.
    fn run_notifying(&self, call: DirectCall) -> BoxFuture<'_, Response> {
        let DirectCall { id, params, cx, .. } = call;
        let failed_id = id.clone();
        let direct = self.clone();
        let run = |cx: SagaContext| async move {
            let declared_tasks = cx.capabilities().supports_tasks();
            let result = match route::call_of(params, WireCall::default())
                .and_then(|call| route::routed(&direct.tools, call, &cx, Door::StreamableCall))
            {
                Ok(Routed::Run(run)) => run.await,
                Ok(Routed::Streamed(saga, call)) => {
                    return Answer::Own(direct.streamed(id, saga, call, cx.clone()));
                }
                Err(error) => Err(error),
            };
            let (message, server_info) = direct.message(result, id, declared_tasks);
            Answer::Written(written(&message, server_info))
        };
        notifying(cx, failed_id, self.keep_alive, run).boxed()
    }

    /// The response to a call's `result`, as rmcp writes it around `call_tool`.
    fn answer(
        &self,
        result: Result<CallToolResponse, ErrorData>,
        id: RequestId,
        declared_tasks: bool,
    ) -> Response {
        let (message, server_info) = self.message(result, id, declared_tasks);
        written(&message, server_info).into_response()
    }

    /// The message answering a call's `result`, as rmcp makes it around `call_tool`, and
    /// the `serverInfo` stamp the reply writer writes into it, if any.
    fn message(
        &self,
        result: Result<CallToolResponse, ErrorData>,
        id: RequestId,
        declared_tasks: bool,
    ) -> (ServerJsonRpcMessage, Option<&[u8]>) {
        // The usual result asks for input or completes, and carries no `_meta` of its own:
        // the reply writer writes its stamp. Any other result is stamped here.
        let (result, server_info) = match result {
            Ok(CallToolResponse::InputRequired(result))
                if result.meta.is_none() && super::reply::stamps_unstamped() =>
            {
                let server_info = self.tools.server_info_stamp();
                (Ok(CallToolResponse::InputRequired(result)), server_info)
            }
            Ok(CallToolResponse::Complete(result))
                if result.meta.is_none() && super::reply::stamps_unstamped() =>
            {
                let server_info = self.tools.server_info_stamp();
                (Ok(CallToolResponse::Complete(result)), server_info)
            }
            other => (other.map(|response| self.tools.stamped(response)), None),
        };
        let message = match result {
            Ok(CallToolResponse::Task(_)) if !declared_tasks => ServerJsonRpcMessage::error(
                ErrorData::missing_required_client_capability(
                    ClientCapabilities::builder().enable_tasks().build(),
                ),
                Some(id),
            ),
            Ok(response) => answered(Ok(ServerResult::from(response)), id),
            // rmcp's `call_tool` branch returns the handler's error with `?`, before the
            // 2026-07-28 code mapping the other methods get: a call's error (a tool's own
            // `-32002`, say) is passed on as it is.
            Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
        };
        (message, server_info)
    }

    /// A stateless `requests/resume` or `requests/getStatus` (seed 002 in the 2026-07-28
    /// era, see `serve::streamed`) this path serves: every transport check of the module
    /// docs passes. `None` hands the request to rmcp. `body` has passed the guard's JSON
    /// check.
    pub(crate) fn read_resumption(&self, parts: &Parts, body: &[u8]) -> Option<Resumption> {
        let headers = &parts.headers;
        let method = sole(headers, METHOD_HEADER)?;
        if method != RESUME && method != GET_STATUS {
            return None;
        }
        if !self.transport_admits(parts)
            || sole(headers, PROTOCOL_VERSION_HEADER)? != ProtocolVersion::V_2026_07_28.as_str()
        {
            return None;
        }
        let message: ResumeMessage = serde_json::from_slice(body).ok()?;
        if message.method != method {
            return None;
        }
        let mut params = message.params?;
        // Shifted out, not swapped: the other params keep their order (`seed_calls`).
        let meta = params.as_object_mut()?.shift_remove("_meta")?;
        let meta: rmcp::model::RequestMetaObject = serde_json::from_value(meta).ok()?;
        let capabilities = resumable::capabilities_of(&meta)?;
        if !names_2026_07_28(&meta) {
            return None;
        }
        let log_level = meta.log_level();
        let cx = self
            .stateless_context(parts, meta, capabilities, &message.id, None)
            .with_min_log_level(log_level);
        Some(Resumption {
            id: message.id,
            cx,
            params,
            status_only: method == GET_STATUS,
        })
    }

    /// Answers a resumption read by [`Direct::read_resumption`]: its status, or the call
    /// its token continues, streamed.
    pub(crate) fn resume(&self, resumption: Resumption) -> Response {
        let Resumption {
            id,
            cx,
            params,
            status_only,
        } = resumption;
        let codec = self.tools.codec();
        if status_only {
            let message = match resumable::open(codec, Some(params), None, cx.principal()) {
                Ok(ticket) => custom_result(resumable::status(&ticket), id),
                Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
            };
            return respond(&message);
        }
        let ticket = match resumable::open(codec, Some(params), Some(&id), cx.principal()) {
            Ok(ticket) => ticket,
            Err(error) => return respond(&ServerJsonRpcMessage::error(error, Some(id))),
        };
        if ticket.method != TOOLS_CALL {
            let error = ErrorData::invalid_request(
                "requests/resume without a session continues a tools/call; a prompt or a \
                 resource continues in a session",
                None,
            );
            return respond(&ServerJsonRpcMessage::error(error, Some(id)));
        }
        let call = Call {
            method: TOOLS_CALL.to_owned(),
            name: ticket.name,
            arguments: ticket.arguments,
            request_state: Some(ticket.state),
            ..Call::default()
        };
        let error = match route::route(&self.tools, &call, &cx, Door::Resume) {
            Ok(Route::Streamed(saga)) => return self.streamed(id, saga, call, cx),
            Ok(_) => ErrorData::internal_error("a resumed call is always streamed", None),
            Err(error) => error,
        };
        respond(&ServerJsonRpcMessage::error(error, Some(id)))
    }

    /// The streamed response of `call` (seed 002, `serve::streamed`), request `id`, or the
    /// error it was refused with.
    fn streamed(&self, id: RequestId, saga: &Saga, call: Call, cx: SagaContext) -> Response {
        streamed::respond(self.tools.clone(), id.clone(), saga.clone(), call, cx)
            .unwrap_or_else(|error| respond(&ServerJsonRpcMessage::error(error, Some(id))))
    }

    /// The checks every request this path serves passes first: the MCP endpoint's path, no
    /// `Origin` rmcp would judge, an allowed `Host`, an `Accept` of both JSON and SSE.
    fn transport_admits(&self, parts: &Parts) -> bool {
        let headers = &parts.headers;
        parts.uri.path() == super::MCP_PATH
            && self.origin_passes(headers)
            && host_admitted(&self.allowed_hosts, parts)
            && accepts_json_and_sse(headers)
    }

    /// No `Origin`, or one rmcp's check lets pass (any, under its default config).
    fn origin_passes(&self, headers: &HeaderMap) -> bool {
        self.origins.admit(headers)
    }

    /// A call's id, params and context, when every check of the module docs passes
    /// (the transport's already have: [`Direct::read_within`]).
    fn read_call(
        &self,
        parts: &Parts,
        caller: &mut Option<Caller>,
        message: impl FnOnce() -> Option<CallMessage>,
    ) -> Option<DirectCall> {
        let headers = &parts.headers;
        let name_header = param_headers::decode(sole(headers, NAME_HEADER)?)?;
        let CallMessage {
            id: CallId(id),
            mut params,
            ..
        } = message()?;
        // rmcp keeps `_meta` beside the params, in the request's extensions, and its
        // service loop moves it to the request's context: here it leaves the params too.
        let meta = params.meta.take().unwrap_or_default();
        // 2026-07-28's required `_meta` keys are the version, checked here, and the
        // capabilities, read once: `missing_required_keys` would read them a second time.
        let capabilities = resumable::capabilities_of(&meta)?;
        if !names_2026_07_28(&meta)
            || *params.name != *name_header
            || !self
                .tools
                .headers_pass(&params.name, headers, params.arguments.as_ref())
        {
            return None;
        }
        let notices = Notices::asked_in(&meta);
        let cx = self
            .stateless_context(parts, meta, capabilities, &id, caller.take())
            .with_min_log_level(notices.log_level);
        Some(DirectCall {
            id,
            params,
            cx,
            notifies: notices.any(),
        })
    }

    /// What rmcp's request context answers for a stateless request: the capabilities of
    /// `_meta`, its client info or else an empty one, its version, the request's id.
    fn stateless_context(
        &self,
        parts: &Parts,
        meta: rmcp::model::RequestMetaObject,
        capabilities: ClientCapabilities,
        id: &RequestId,
        caller: Option<Caller>,
    ) -> SagaContext {
        let request = StatelessMeta {
            capabilities,
            client_info: meta.client_info(),
            protocol_version: ProtocolVersion::V_2026_07_28,
            meta,
            request_id: id.clone(),
        };
        SagaContext::stateless(self.tools.head(Some(parts), caller), request)
    }
}

/// A JSON-RPC `requests/resume` or `requests/getStatus` request: exactly these members.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ResumeMessage {
    #[allow(dead_code)] // read to be checked
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    method: String,
    params: Option<serde_json::Value>,
}

/// A result that is a JSON object of its own (`requests/getStatus`).
fn custom_result(result: serde_json::Value, id: RequestId) -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::response(
        ServerResult::CustomResult(rmcp::model::CustomResult(result)),
        id,
    )
}

/// The only value of the header `name`, as text; `None` when it is absent, repeated or
/// not visible ASCII.
fn sole(headers: &HeaderMap, name: HeaderName) -> Option<&str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok()
}

/// Whether `Accept` admits both JSON and SSE, read as rmcp reads it; an `Accept` with a
/// quoted string or bytes that are not text is left to rmcp.
fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        // What the SDKs send, matched whole before the general reading below.
        if value.as_bytes() == b"application/json, text/event-stream" {
            (json, sse) = (true, true);
            continue;
        }
        let Ok(value) = value.to_str() else {
            return false;
        };
        if value.contains('"') {
            return false;
        }
        for entry in value.split(',') {
            let mut pieces = entry.split(';');
            let essence = pieces.next().unwrap_or_default().trim();
            let weighted_out = pieces.any(|parameter| {
                parameter.split_once('=').is_some_and(|(name, value)| {
                    name.trim().eq_ignore_ascii_case("q") && is_zero_weight(value.trim())
                })
            });
            if weighted_out {
                continue;
            }
            json |= essence.eq_ignore_ascii_case("application/json");
            sse |= essence.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && sse
}

/// A weight of zero (`0`, `0.0`, `0.000`): RFC 9110 allows three decimals. A weight
/// outside that grammar does not exclude its media range, as in rmcp.
fn is_zero_weight(weight: &str) -> bool {
    let (whole, fraction) = weight.split_once('.').unwrap_or((weight, ""));
    fraction.len() <= 3 && fraction.bytes().all(|digit| digit == b'0') && whole == "0"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::json_check;

    const BUDGET: JsonBudget = JsonBudget {
        max_depth: 64,
        max_values: 100_000,
    };

    /// The guard reads the usual call in one pass: the message is one that pass reads,
    /// and it reads the values that rmcp's types read from it.
    #[test]
    fn the_usual_call_is_read_in_one_pass_as_it_is_read_in_two() {
        let body = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{
            "name":"deploy","arguments":{"initial_arg":"x","replicas":3},
            "requestState":"abc","inputResponses":{"elicit-1":{"action":"accept","content":{"ok":true}}},
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                     "io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}"#;
        let once: CallMessage =
            json_check::typed::read_within(body, BUDGET).expect("read in one pass");
        let twice: CallMessage = serde_json::from_slice(body).expect("read in two");
        assert_eq!(once.id.0, twice.id.0);
        assert_eq!(once.id.0, RequestId::Number(7));
        assert_eq!(once.params, twice.params);
        assert!(once.params.meta.is_some() && once.params.input_responses.is_some());
    }

    /// rmcp reads params from an object only; so do both reads here.
    #[test]
    fn params_are_an_object() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"t",{"a":1},null,null]}"#;
        assert!(json_check::typed::read_within::<CallMessage>(body, BUDGET).is_none());
        assert!(serde_json::from_slice::<CallMessage>(body).is_err());
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":1}}}"#;
        let read: CallMessage = json_check::typed::read_within(body, BUDGET).expect("an object");
        assert_eq!(read.params.name, "t");
    }

    /// An id is what its JSON token is: rmcp reads `3.0` as the integer 3, where the
    /// guard's envelope check refuses it, so neither read takes it.
    #[test]
    fn an_id_is_an_integer_or_a_string_by_its_token() {
        let with_id = |id: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t"}}}}"#
            )
        };
        for (id, read) in [
            ("3", Some(RequestId::Number(3))),
            ("-3", Some(RequestId::Number(-3))),
            (r#""x""#, Some(RequestId::String("x".into()))),
            (r#""x""#, Some(RequestId::String("x".into()))),
            ("9223372036854775807", Some(RequestId::Number(i64::MAX))),
            ("9223372036854775808", None),
            ("3.0", None),
            ("3e0", None),
            ("null", None),
            ("[3]", None),
        ] {
            let body = with_id(id);
            let once = json_check::typed::read_within::<CallMessage>(body.as_bytes(), BUDGET);
            assert_eq!(once.map(|message| message.id.0), read, "{id}");
            let twice = serde_json::from_slice::<CallMessage>(body.as_bytes()).ok();
            assert_eq!(twice.map(|message| message.id.0), read, "{id}");
        }
    }

    fn accept(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(header::ACCEPT, value.parse().unwrap());
        }
        headers
    }

    #[test]
    fn accept_is_read_as_rmcp_reads_it() {
        assert!(accepts_json_and_sse(&accept(&[
            "application/json, text/event-stream"
        ])));
        assert!(accepts_json_and_sse(&accept(&[
            "application/json",
            "TEXT/EVENT-STREAM;q=0.5"
        ])));
        assert!(accepts_json_and_sse(&accept(&[
            "application/json;q=abc, text/event-stream;q=0.0001"
        ])));
        assert!(!accepts_json_and_sse(&accept(&["application/json"])));
        assert!(!accepts_json_and_sse(&accept(&[
            "application/json;q=0, text/event-stream"
        ])));
        assert!(!accepts_json_and_sse(&accept(&[
            "application/json;q=0.000, text/event-stream"
        ])));
        assert!(!accepts_json_and_sse(&accept(&["*/*"])));
        // Quoted parameters are left to rmcp.
        assert!(!accepts_json_and_sse(&accept(&[
            r#"application/json;profile="a,b", text/event-stream"#
        ])));
    }

    fn parts(host: Option<&str>) -> Parts {
        let mut request = http::Request::builder().uri("/mcp");
        if let Some(host) = host {
            request = request.header(header::HOST, host);
        }
        request.body(()).unwrap().into_parts().0
    }

    #[test]
    fn a_host_that_does_not_parse_is_refused_even_when_any_host_is_allowed() {
        let any: [Authority; 0] = [];
        assert!(host_admitted(&any, &parts(Some("localhost:3000"))));
        assert!(host_admitted(&any, &parts(Some("[::1]:3000"))));
        for host in [
            Some("a b"),
            Some("localhost:80:80"),
            Some("ex%41mple"),
            None,
        ] {
            assert!(!host_admitted(&any, &parts(host)), "{host:?}");
        }
        let local = [Authority::allowed("localhost").unwrap()];
        assert!(host_admitted(&local, &parts(Some("LOCALHOST:1"))));
        assert!(!host_admitted(&local, &parts(Some("example.com"))));
        assert!(!host_admitted(&local, &parts(Some("a b"))));
    }

    /// What the direct path makes of a POST to `/mcp` with the usual headers, `method` in
    /// `Mcp-Method`, and `body`: the method it serves, or `None` (rmcp answers).
    fn served(method: &str, body: &str) -> Option<&'static str> {
        served_named(method, None, body)
    }

    /// As [`served`], with `name` in `Mcp-Name` when given.
    fn served_named(method: &str, name: Option<&str>, body: &str) -> Option<&'static str> {
        let tools = SagaTools::builder()
            .keys(crate::state::KeyRing::ephemeral())
            .build()
            .expect("no tools is a registry");
        let direct = Direct::new(
            tools,
            DiscoverResult::from_server_info(
                Vec::new(),
                rmcp::model::ServerConfig::new(Default::default()),
            ),
            &super::super::default_http_config(),
        )
        .expect("served");
        let parts = http::Request::builder()
            .method("POST")
            .uri("/mcp")
            .header(header::HOST, "localhost:3000")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .header(PROTOCOL_VERSION_HEADER, "2026-07-28")
            .header(METHOD_HEADER, method);
        let (parts, ()) = match name {
            Some(name) => parts.header(NAME_HEADER, name),
            None => parts,
        }
        .body(())
        .expect("a request")
        .into_parts();
        direct
            .read_within(&parts, body.as_bytes(), BUDGET, &mut None)
            .map(|request| request.method())
    }

    /// A stateless listing (`tools/list`, `prompts/list`, …, `server/discover`) is served
    /// here when rmcp would take it as it is, and left to rmcp (which refuses or answers
    /// it) otherwise.
    #[test]
    fn a_list_is_served_only_as_rmcp_would_take_it() {
        const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        let of = |method: &str, params: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":"l-1","method":"{method}","params":{params}}}"#)
        };
        let list = |params: &str| of("tools/list", params);
        for method in [
            "tools/list",
            "prompts/list",
            "resources/list",
            "resources/templates/list",
            "server/discover",
        ] {
            let pages = method != "server/discover";
            for (params, taken) in [
                (format!(r#"{{"_meta":{META}}}"#), true),
                (format!(r#"{{"_meta":{META},"cursor":"next"}}"#), pages),
                (format!(r#"{{"_meta":{META},"cursor":null}}"#), pages),
                // rmcp ignores it in a list, and refuses it in `server/discover`.
                (format!(r#"{{"_meta":{META},"unknown":[1]}}"#), false),
            ] {
                assert_eq!(
                    served(method, &of(method, &params)),
                    taken.then_some(method),
                    "{method}: {params}"
                );
            }
        }
        let without_capabilities =
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#;
        let of_another_era = META.replace("2026-07-28", "2025-11-25");
        let valid = list(&format!(r#"{{"_meta":{META}}}"#));
        for (case, method, body) in [
            (
                "no params",
                "tools/list",
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_owned(),
            ),
            ("no _meta", "tools/list", list("{}")),
            ("no capabilities", "tools/list", list(without_capabilities)),
            (
                "another era",
                "tools/list",
                list(&format!(r#"{{"_meta":{of_another_era}}}"#)),
            ),
            (
                "a cursor that is no string",
                "tools/list",
                list(&format!(r#"{{"_meta":{META},"cursor":5}}"#)),
            ),
            (
                "params as an array",
                "tools/list",
                list(&format!("[{META}]")),
            ),
            (
                "a stray member",
                "tools/list",
                list(&format!(r#"{{"_meta":{META}}},"error":{{}}"#)),
            ),
            ("a header naming a call", "tools/call", valid.clone()),
            (
                "a header naming another list",
                "prompts/list",
                valid.clone(),
            ),
            (
                "a method served nowhere here",
                "tasks/list",
                of("tasks/list", &format!(r#"{{"_meta":{META}}}"#)),
            ),
        ] {
            assert_eq!(served(method, &body), None, "{case}: {body}");
        }
    }

    /// A stateless `tasks/get`, `tasks/update` or `tasks/cancel` is served here when rmcp
    /// would take it as it is: its `Mcp-Name` its task's id, its params only its own.
    #[test]
    fn a_task_request_is_served_only_as_rmcp_would_take_it() {
        const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        let of = |method: &str, params: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":3,"method":"{method}","params":{params}}}"#)
        };
        let answers = r#""inputResponses":{"k":{"action":"decline"}}"#;
        for (method, extra) in [
            ("tasks/get", String::new()),
            ("tasks/update", format!(",{answers}")),
            ("tasks/cancel", String::new()),
        ] {
            let params = format!(r#"{{"_meta":{META},"taskId":"t-1"{extra}}}"#);
            let body = of(method, &params);
            assert_eq!(
                served_named(method, Some("t-1"), &body),
                Some(method),
                "{body}"
            );
            assert_eq!(
                served_named(method, Some("=?base64?dC0x?="), &body),
                Some(method),
                "a Base64-wrapped name: {body}"
            );
            for (case, name, body) in [
                ("no Mcp-Name", None, body.clone()),
                ("another task's Mcp-Name", Some("t-2"), body.clone()),
                (
                    "an unknown param",
                    Some("t-1"),
                    of(method, &params.replacen('{', r#"{"extra":1,"#, 1)),
                ),
                (
                    "no _meta",
                    Some("t-1"),
                    of(method, &format!(r#"{{"taskId":"t-1"{extra}}}"#)),
                ),
            ] {
                assert_eq!(served_named(method, name, &body), None, "{case}: {body}");
            }
        }
        // Answers belong to an update only; an update has them.
        let get_with_answers = of(
            "tasks/get",
            &format!(r#"{{"_meta":{META},"taskId":"t-1",{answers}}}"#),
        );
        assert_eq!(
            served_named("tasks/get", Some("t-1"), &get_with_answers),
            None
        );
        let bare_update = of(
            "tasks/update",
            &format!(r#"{{"_meta":{META},"taskId":"t-1"}}"#),
        );
        assert_eq!(
            served_named("tasks/update", Some("t-1"), &bare_update),
            None
        );
    }

    /// A stateless `prompts/get` or `resources/read` is served here when rmcp would take it
    /// as it is (its `Mcp-Name` the prompt's name or the resource's URI), and asks for no
    /// progress or log messages.
    #[test]
    fn a_catalog_request_is_served_only_as_rmcp_would_take_it() {
        const META: &str = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}"#;
        for (method, key, name) in [
            ("prompts/get", "name", "greet"),
            ("resources/read", "uri", "note://one"),
        ] {
            let of = |meta: &str| {
                format!(
                    r#"{{"jsonrpc":"2.0","id":3,"method":"{method}","params":{{"{key}":"{name}","_meta":{{{meta}}}}}}}"#
                )
            };
            let body = of(META);
            // Plain, or asking for progress or log messages (written as a call's are).
            for body in [
                body.clone(),
                of(&format!(r#"{META},"progressToken":1"#)),
                of(&format!(
                    r#"{META},"io.modelcontextprotocol/logLevel":"info""#
                )),
            ] {
                assert_eq!(
                    served_named(method, Some(name), &body),
                    Some(method),
                    "{body}"
                );
            }
            for (case, header, body) in [
                ("no Mcp-Name", None, body.clone()),
                ("another Mcp-Name", Some("other"), body.clone()),
                (
                    "no capabilities",
                    Some(name),
                    of(r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#),
                ),
            ] {
                assert_eq!(served_named(method, header, &body), None, "{case}: {body}");
            }
        }
    }

    /// A method saga does not serve (`ping`, `logging/setLevel`, …) is refused here when
    /// rmcp would read it as it is, and left to rmcp (which refuses it otherwise) when its
    /// params are not the method's, its `Mcp-Name` is not its resource's, or its `_meta`
    /// lacks a key 2026-07-28 requires.
    #[test]
    fn an_unserved_method_is_refused_here_only_as_rmcp_would_read_it() {
        const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        let of = |method: &str, params: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":4,"method":"{method}","params":{{{params}}}}}"#)
        };
        let complete =
            r#""ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"b"}"#;
        for (method, name, params) in [
            ("ping", None, META.to_owned()),
            ("ping", Some("ignored"), format!(r#"{META},"extra":1"#)),
            ("completion/complete", None, format!("{META},{complete}")),
            (
                "logging/setLevel",
                None,
                format!(r#"{META},"level":"info""#),
            ),
            (
                "resources/subscribe",
                Some("note://a"),
                format!(r#"{META},"uri":"note://a""#),
            ),
            (
                "resources/unsubscribe",
                Some("note://a"),
                format!(r#"{META},"uri":"note://a""#),
            ),
            (
                "subscriptions/listen",
                None,
                format!(r#"{META},"notifications":{{}}"#),
            ),
        ] {
            let body = of(method, &params);
            assert_eq!(served_named(method, name, &body), Some(method), "{body}");
        }
        for (case, method, name, params) in [
            ("no _meta", "ping", None, String::new()),
            ("no capabilities", "ping", None, r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":1}"#.to_owned()),
            ("no argument", "completion/complete", None, format!(r#"{META},"ref":{{"type":"ref/prompt","name":"p"}}"#)),
            ("a level that is not one", "logging/setLevel", None, format!(r#"{META},"level":"loud""#)),
            ("no Mcp-Name", "resources/subscribe", None, format!(r#"{META},"uri":"note://a""#)),
            ("another Mcp-Name", "resources/unsubscribe", Some("note://b"), format!(r#"{META},"uri":"note://a""#)),
            ("no filter", "subscriptions/listen", None, META.to_owned()),
        ] {
            let body = of(method, &params);
            assert_eq!(served_named(method, name, &body), None, "{case}: {body}");
        }
        // The body's method is the one `Mcp-Method` names.
        assert_eq!(served("completion/complete", &of("ping", META)), None);
    }

    /// Seed 000's `tools/callSaga` and `tools/resumeSaga` are served here with their
    /// params an object holding a 2026-07-28 `_meta` (the format's decoder judges the
    /// rest, on either path), and left to rmcp otherwise.
    #[test]
    fn a_seed_call_is_served_only_as_rmcp_would_take_it() {
        const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        let of = |method: &str, params: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":4,"method":"{method}","params":{params}}}"#)
        };
        for (method, params) in [
            ("tools/callSaga", format!(r#"{{{META},"name":"t"}}"#)),
            ("tools/callSaga", format!(r#"{{{META},"anything":[1]}}"#)),
            (
                "tools/resumeSaga",
                format!(r#"{{{META},"sagaToken":"a.b"}}"#),
            ),
            (
                "tools/callSaga",
                format!(r#"{{{META},"name":"t"}}"#).replace("{}},", r#"{},"progressToken":1},"#),
            ),
        ] {
            let body = of(method, &params);
            assert_eq!(served(method, &body), Some(method), "{body}");
        }
        for (case, method, params) in [
            ("no _meta", "tools/callSaga", r#"{"name":"t"}"#.to_owned()),
            ("params not an object", "tools/callSaga", "[1]".to_owned()),
            (
                "an _meta not an object",
                "tools/callSaga",
                r#"{"_meta":1,"name":"t"}"#.to_owned(),
            ),
            (
                "another version",
                "tools/callSaga",
                format!(r#"{{{META},"name":"t"}}"#).replace("2026-07-28", "2025-11-25"),
            ),
        ] {
            let body = of(method, &params);
            assert_eq!(served(method, &body), None, "{case}: {body}");
        }
        let body = of("tools/callSaga", &format!(r#"{{{META},"name":"t"}}"#));
        assert_eq!(served("tools/resumeSaga", &body), None);
    }

    /// A client's notification of a method rmcp's types name is accepted here, with or
    /// without params; a message with an id, a custom method, a body naming a key twice
    /// and a method other than `Mcp-Method`'s are left to rmcp.
    #[test]
    fn a_notification_is_accepted_only_as_rmcp_would_read_it() {
        for (method, body) in [
            (
                "notifications/cancelled",
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
            ),
            (
                "notifications/cancelled",
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"nothing":1}}"#,
            ),
            (
                "notifications/initialized",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            ),
            (
                "notifications/roots/list_changed",
                r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":{}}"#,
            ),
        ] {
            assert_eq!(served(method, body), Some(method), "{body}");
        }
        for (case, method, body) in [
            (
                "an id",
                "notifications/initialized",
                r#"{"jsonrpc":"2.0","id":1,"method":"notifications/initialized"}"#,
            ),
            (
                "a custom method",
                "notifications/custom",
                r#"{"jsonrpc":"2.0","method":"notifications/custom"}"#,
            ),
            (
                "another method",
                "notifications/cancelled",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            ),
            (
                "a key twice",
                "notifications/initialized",
                r#"{"jsonrpc":"2.0","jsonrpc":"2.0","method":"notifications/initialized"}"#,
            ),
            (
                "another member",
                "notifications/initialized",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized","result":{}}"#,
            ),
        ] {
            assert_eq!(served(method, body), None, "{case}: {body}");
        }
    }

    #[test]
    fn a_header_given_twice_is_not_sole() {
        let mut headers = HeaderMap::new();
        // As a client may spell it: header names are case-insensitive.
        headers.append("Mcp-Method", "tools/call".parse().unwrap());
        assert_eq!(sole(&headers, METHOD_HEADER), Some("tools/call"));
        headers.append(METHOD_HEADER, "tools/call".parse().unwrap());
        assert_eq!(sole(&headers, METHOD_HEADER), None);
        assert_eq!(sole(&headers, NAME_HEADER), None);
    }
}
