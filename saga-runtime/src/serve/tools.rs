//! The registry of saga tools, usable on its own inside any rmcp `ServerHandler`.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    CacheScope, CallToolResponse, Implementation, ListToolsResult, MetaObject, Resource,
    ResourceTemplate, Tool,
};
use rmcp::service::{RequestContext, RoleServer};

use super::principal::Identity;
use crate::engine::InspectError;
use crate::engine::runner::family::{DynTool, Family, Saga};
use crate::engine::{RequestHead, SagaContext};
use crate::state::ANONYMOUS;
use crate::state::{KeyRing, StateCodec};

/// Refuses a family whose builds have two points with equal headers and other identities.
fn check_headers(name: &str, family: &Family) -> Result<(), BuildError> {
    let builds = family.every_points();
    for (i, points) in builds.iter().enumerate() {
        for point in points.with_twins() {
            let clash = builds[..i].iter().any(|earlier| {
                earlier
                    .find(&point.key.header)
                    .is_some_and(|other| other.key.identity != point.key.identity)
            });
            if clash {
                return Err(BuildError::PointClash {
                    tool: name.to_owned(),
                    point: point.name.clone(),
                });
            }
        }
    }
    Ok(())
}

/// How long the in-process state of a session call stays valid between its rounds: as
/// long as a person may take to answer, bounded by the session's own idle timeout.
const SESSION_STATE_TTL: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// The request a token is bound to, which [`SagaTools::inspect`] needs to open it: the
/// token's tag covers the tool, the method, the principal and the arguments.
#[derive(Debug, Clone)]
pub struct InspectRequest {
    /// The tool's name; `None` tries every tool of the registry.
    pub tool: Option<String>,
    /// The JSON-RPC method (`tools/call` by default).
    pub method: String,
    /// The caller's principal ([`ANONYMOUS`] by default: no `Authorization` header).
    pub principal: String,
    /// The call's arguments, exactly as sent.
    pub arguments: Option<rmcp::model::JsonObject>,
}

impl Default for InspectRequest {
    fn default() -> Self {
        Self {
            tool: None,
            method: "tools/call".into(),
            principal: ANONYMOUS.into(),
            arguments: None,
        }
    }
}

/// A tool as the registry serves it: its listing, its builds, how it is reached.
pub(super) struct ServedTool {
    pub(super) tool: Tool,
    pub(super) saga: Saga,
    /// The arguments its schema puts in `Mcp-Param-*` headers (SEP-2243), checked as rmcp
    /// checks them: see [`SagaTools::headers_pass`].
    pub(super) param_headers: super::param_headers::ParamHeaders,
    /// Listed and callable; false for a tool only retired builds finish the calls of.
    pub(super) listed: bool,
    /// The tool's diagram when `tools/list` leaves it out (a listed one is in `tool`).
    pub(super) unlisted_diagram: Option<String>,
}

/// What a server serves: tools, and prompts and resources backed by sagas.
#[derive(Default)]
pub(crate) struct Registry {
    pub(crate) tools: Vec<(Tool, Saga)>,
    /// Earlier builds of tools, kept to finish their calls (see `.retired(..)`).
    pub(crate) retired: Vec<(Tool, Saga)>,
    /// What went wrong while tools were registered, reported by `build()`.
    pub(crate) errors: Vec<BuildError>,
    pub(crate) prompts: Vec<(rmcp::model::Prompt, Saga)>,
    pub(crate) resources: Vec<(Resource, Saga)>,
    pub(crate) templates: Vec<(ResourceTemplate, Saga)>,
    /// The server's model, which answers their `sample()`s where its policy says.
    pub(crate) model: Option<Arc<crate::engine::caller::model::ServerModel>>,
    /// The diagrams left out of `tools/list`, by tool, for [`SagaTools::diagram`].
    pub(crate) unlisted_diagrams: HashMap<String, String>,
}

/// The most rounds that run detached from their requests at once (a round whose outcome
/// is recorded runs in a task of its own, so that a client that hangs up does not stop
/// it), the server's whole: global, as each is also bounded by the run time. Over HTTP
/// each also keeps its request's place (its caller's share and the server's total) until
/// it ends, which bounds them first; past this bound (callers without a place:
/// `SagaTools::run`), a round is refused before its token is claimed (`-32600`,
/// retryable), never run attached where a hang-up would spend its token.
pub(crate) const MAX_DETACHED: usize = 256;

/// The saga tools of a server and the codec that seals their state.
///
/// [`SagaServer`](super::SagaServer) is built on it; it also plugs into a hand-written
/// rmcp `ServerHandler`:
///
/// ```no_run
/// # use saga_runtime::prelude::*;
/// # use saga_runtime::rmcp::{ErrorData, ServerHandler, model::*, service::{RequestContext, RoleServer}};
/// struct MyServer { sagas: SagaTools }
///
/// impl ServerHandler for MyServer {
///     async fn list_tools(&self, _: Option<PaginatedRequestParams>, _: RequestContext<RoleServer>)
///         -> Result<ListToolsResult, ErrorData> {
///         Ok(self.sagas.list())
///     }
///     async fn call_tool(&self, params: CallToolRequestParams, cx: RequestContext<RoleServer>)
///         -> Result<CallToolResponse, ErrorData> {
///         self.sagas.call(params, &cx).await
///     }
/// }
/// ```
#[derive(Clone)]
pub struct SagaTools {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) codec: StateCodec,
    /// Seals the state a session call keeps between its rounds in process: that state
    /// never leaves the server, so it has a key of its own and no single-use record.
    pub(super) session_codec: StateCodec,
    pub(super) entries: Vec<ServedTool>,
    pub(super) by_name: HashMap<String, usize, crate::engine::FnvBuild>,
    pub(super) prompts: Vec<(rmcp::model::Prompt, Saga)>,
    pub(super) resources: Vec<(Resource, Saga)>,
    pub(super) templates: Vec<(ResourceTemplate, Saga)>,
    /// Who is calling, and whether anyone verified it.
    pub(super) identity: Identity,
    pub(super) list_ttl_ms: u64,
    /// The registry's `serverInfo`, as the `_meta` value its results carry, encoded once.
    pub(super) info_meta: Option<serde_json::Value>,
    /// The `_meta` object of a result that carries only that stamp, written as JSON once
    /// ([`server_info_stamp`]).
    pub(super) info_stamp: Option<Box<[u8]>>,
    /// The tasks, when a store is configured.
    pub(super) tasks: Option<Arc<crate::tasks::Tasks>>,
    pub(super) bounds: CallBounds,
    pub(super) in_flight: super::in_flight::InFlight,
    /// Places for rounds run detached from their requests ([`MAX_DETACHED`]).
    pub(super) detached: Arc<tokio::sync::Semaphore>,
    /// The server's model, which answers `sample()` where its policy says.
    pub(super) model: Option<Arc<crate::engine::caller::model::ServerModel>>,
}

/// How long a call may run and wait, set with
/// [`SagaToolsBuilder::max_run_time`](super::SagaToolsBuilder::max_run_time) and
/// [`SagaToolsBuilder::client_request_timeout`](super::SagaToolsBuilder::client_request_timeout).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallBounds {
    pub(crate) max_run_time: std::time::Duration,
    pub(crate) client_request_timeout: std::time::Duration,
}

/// How long one request's run may take unless
/// [`SagaToolsBuilder::max_run_time`](super::SagaToolsBuilder::max_run_time) says otherwise.
pub const DEFAULT_MAX_RUN_TIME: std::time::Duration = std::time::Duration::from_secs(60);

/// How long a session waits for its client to answer one request (an elicitation, a
/// sampling request, `roots/list`) unless
/// [`SagaToolsBuilder::client_request_timeout`](super::SagaToolsBuilder::client_request_timeout)
/// says otherwise.
pub const DEFAULT_CLIENT_REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

impl Default for CallBounds {
    fn default() -> Self {
        Self {
            max_run_time: DEFAULT_MAX_RUN_TIME,
            client_request_timeout: DEFAULT_CLIENT_REQUEST_TIMEOUT,
        }
    }
}

impl std::fmt::Debug for SagaTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SagaTools")
            .field(
                "tools",
                &self
                    .inner
                    .entries
                    .iter()
                    .map(|e| &e.tool.name)
                    .collect::<Vec<_>>(),
            )
            .field("codec", &self.inner.codec)
            .finish_non_exhaustive()
    }
}

/// Why a registry could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two tools have the same name.
    #[error("two tools are named {0:?}")]
    DuplicateTool(String),
    /// A tool's input schema is not a JSON object schema.
    #[error("tool {0:?} has an input schema whose root is not `type: \"object\"`")]
    InputSchema(String),
    /// A sampling policy asks the server's model, and none was given.
    #[error("the sampling policy {0:?} asks the server's model: give one with .model(..)")]
    NoModel(crate::engine::caller::model::SamplingPolicy),
    /// The authorization settings are not whole (feature `oauth`).
    #[cfg(feature = "oauth")]
    #[error("authorization: {0}")]
    Authorization(super::auth::AuthError),
    /// The server's model may take as long as a whole run: a hung provider would end the
    /// request before the tool could handle the timeout.
    #[error(
        "the sampling timeout ({sample:?}) is not shorter than max_run_time ({run:?}): a hung \
         provider would end the request before the tool could handle the model's timeout; \
         set .sampling_limits(SamplingLimits::default().timeout(..)) below max_run_time"
    )]
    SampleTimeout {
        /// [`SamplingLimits::timeout`](crate::engine::caller::model::SamplingLimits::timeout).
        sample: std::time::Duration,
        /// [`SagaToolsBuilder::max_run_time`](super::SagaToolsBuilder::max_run_time).
        run: std::time::Duration,
    },
    /// `token_format` names a format no codec seals in
    /// ([`TokenFormat::Kept`](crate::state::TokenFormat::Kept) is a reference, written
    /// only for a state kept in a state store; [`TokenFormat::Traced`](crate::state::TokenFormat::Traced)
    /// is written for a traced saga by a codec that seals `TracedDeflated`).
    #[error(
        "token_format({0:?}) names no format a codec seals in: use TokenFormat::SEALED, \
         Deflated (no trace), Compact or Fixed (a state past the inline bound is kept by \
         .state_store(..); a traced saga's token is written by TokenFormat::SEALED)"
    )]
    SealFormat(crate::state::TokenFormat),
    /// `require_verified_for` names a tool the server does not have.
    #[error("require_verified_for names {0:?}, which is no tool of this server")]
    GatedToolUnknown(String),
    /// No key ring was given.
    #[error(
        "no keys: call .keys(KeyRing::from_env(\"SAGA_KEYS\")?) or .keys(KeyRing::ephemeral())"
    )]
    NoKeys,
    /// The layout of what a tool saves could not be traced, so its tokens could not be
    /// told from another build's.
    #[error("tool {tool:?}: {error}")]
    Layout {
        /// The tool's name.
        tool: String,
        /// Why.
        error: crate::engine::LayoutError,
    },
    /// Two builds of one tool have points whose 8 header bytes are equal but whose
    /// identities differ (a 1 in 65,536 chance per pair): a token could not say which
    /// build it belongs to.
    #[error(
        "tool {tool:?}: point {point} of two builds shares its header with another identity; \
         bump the current build's #[saga_tool(version = N)]"
    )]
    PointClash {
        /// The tool's name.
        tool: String,
        /// The point.
        point: String,
    },
}

impl SagaTools {
    pub(crate) fn new(
        codec: StateCodec,
        registry: Registry,
        identity: Identity,
        list_ttl_ms: u64,
        info: Option<Implementation>,
        tasks: Option<crate::tasks::TaskSettings>,
        bounds: CallBounds,
    ) -> Result<Self, BuildError> {
        let Registry {
            tools,
            retired,
            errors,
            prompts,
            resources,
            templates,
            model,
            mut unlisted_diagrams,
        } = registry;
        if let Some(error) = errors.into_iter().next() {
            return Err(error);
        }
        let tasks = tasks.map(|settings| Arc::new(crate::tasks::Tasks::new(settings, &codec)));
        let mut entries = Vec::with_capacity(tools.len());
        let mut by_name = HashMap::default();
        for (tool, saga) in tools {
            if tool.input_schema.get("type").and_then(|t| t.as_str()) != Some("object") {
                return Err(BuildError::InputSchema(tool.name.to_string()));
            }
            if by_name
                .insert(tool.name.to_string(), entries.len())
                .is_some()
            {
                return Err(BuildError::DuplicateTool(tool.name.to_string()));
            }
            let param_headers = super::param_headers::ParamHeaders::of(&tool.input_schema);
            let unlisted_diagram = unlisted_diagrams.remove(tool.name.as_ref());
            entries.push(ServedTool {
                tool,
                saga,
                param_headers,
                listed: true,
                unlisted_diagram,
            });
        }
        let mut families: Vec<(Tool, Vec<Saga>)> = Vec::new();
        for (tool, saga) in retired {
            match families
                .iter_mut()
                .find(|(known, _)| known.name == tool.name)
            {
                Some((_, builds)) => builds.push(saga),
                None => families.push((tool, vec![saga])),
            }
        }
        for (tool, builds) in families {
            let current = by_name.get(tool.name.as_ref()).copied();
            let family = Family::new(current.map(|index| entries[index].saga.clone()), builds);
            check_headers(&tool.name, &family)?;
            let saga: Saga = Arc::new(family);
            match current {
                Some(index) => entries[index].saga = saga,
                None => {
                    by_name.insert(tool.name.to_string(), entries.len());
                    // rmcp checks `Mcp-Param-*` headers against the schema it finds for
                    // the name, this retired build's (`SagaServer::get_tool`).
                    let param_headers = super::param_headers::ParamHeaders::of(&tool.input_schema);
                    entries.push(ServedTool {
                        tool,
                        saga,
                        param_headers,
                        listed: false,
                        unlisted_diagram: None,
                    });
                }
            }
        }
        if let Some(unknown) = identity
            .verified_tools
            .iter()
            .find(|name| !by_name.contains_key(name.as_str()))
        {
            return Err(BuildError::GatedToolUnknown(unknown.clone()));
        }
        let info_meta = info.and_then(|info| serde_json::to_value(info).ok());
        // One set of limits: a session's state, kept in this process between its rounds,
        // may seal as long as a state the server accepts back (a token, or with a state
        // store, a kept one), in the same format: a state that outgrew it would outgrow
        // a resume token too. It stays in memory: nothing of it is kept in the store.
        let session_codec = StateCodec::new(KeyRing::ephemeral(), SESSION_STATE_TTL)
            .with_max_token_len(codec.max_sealed_len())
            .with_max_state_bytes(codec.max_state_bytes())
            .with_format(codec.format());
        Ok(Self {
            inner: Arc::new(Inner {
                codec,
                session_codec,
                entries,
                by_name,
                prompts,
                resources,
                templates,
                identity,
                list_ttl_ms,
                info_stamp: info_meta.as_ref().map(server_info_stamp),
                info_meta,
                tasks,
                bounds,
                in_flight: super::in_flight::InFlight::default(),
                detached: Arc::new(tokio::sync::Semaphore::new(MAX_DETACHED)),
                model,
            }),
        })
    }

    /// The `tools/list` result: every tool, with caching hints (`ttlMs`, and
    /// `cacheScope: "public"`, since the list is the same for every caller). Those hints
    /// are MCP 2026-07-28's: a handler of your own that answers a 2025-11-25 session sets
    /// them to `None` (as [`SagaServer`](super::SagaServer) does).
    pub fn list(&self) -> ListToolsResult {
        ListToolsResult::with_all_items(self.tools().cloned().collect())
            .with_ttl_ms(self.inner.list_ttl_ms)
            .with_cache_scope(CacheScope::Public)
    }

    /// The `tools/list` result of the request whose HTTP head is `parts`: [`SagaTools::list`],
    /// without the tools its token's scopes hide (feature `oauth`).
    pub(crate) fn list_seen_by(&self, _parts: Option<&http::request::Parts>) -> ListToolsResult {
        #[cfg(feature = "oauth")]
        if let Some(hidden) =
            _parts.and_then(|parts| parts.extensions.get::<super::auth::HiddenTools>())
        {
            // Filtered for this token's scopes (even when nothing is hidden from it, the
            // next token's list may differ): no intermediary may serve it to another
            // caller (issue 72, finding 5).
            let mut list = self.list();
            list.tools
                .retain(|tool| !hidden.0.contains(tool.name.as_ref()));
            if list.cache_scope.is_some() {
                list.cache_scope = Some(CacheScope::Private);
            }
            return list;
        }
        self.list()
    }

    /// The tools' definitions (retired builds are not listed).
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.inner
            .entries
            .iter()
            .filter(|entry| entry.listed)
            .map(|entry| &entry.tool)
    }

    /// The definition of the tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        let index = *self.inner.by_name.get(name)?;
        let entry = &self.inner.entries[index];
        entry.listed.then_some(&entry.tool)
    }

    /// The diagram of the tool `name` (Mermaid `stateDiagram-v2` text) as a client would
    /// read it in `tools/list`, whether the server lists diagrams there or not
    /// ([`SagaToolsBuilder::diagrams_in_tool_list`](super::SagaToolsBuilder::diagrams_in_tool_list)):
    /// for a server's own `--graph`, a test, or an admin route. `None` for a tool that is
    /// not a `#[saga_tool]`, or not registered.
    pub fn diagram(&self, name: &str) -> Option<&str> {
        let index = *self.inner.by_name.get(name)?;
        let entry = &self.inner.entries[index];
        if !entry.listed {
            return None;
        }
        entry
            .unlisted_diagram
            .as_deref()
            .or_else(|| crate::engine::diagram_of(&entry.tool))
    }

    /// Whether a tool called `name` is registered (and not only retired).
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The definition of `name`, listed or only retired: what resuming one of its tokens
    /// needs (a retired-only tool still finishes its calls; it starts none).
    pub(crate) fn definition(&self, name: &str) -> Option<&Tool> {
        let index = *self.inner.by_name.get(name)?;
        Some(&self.inner.entries[index].tool)
    }

    /// Every suspension point this server can resume, by tool: the current build's and
    /// every retired build's, with their layouts. What [`crate::deploy`]'s layout file
    /// records.
    pub(crate) fn points(&self) -> Vec<&crate::engine::Points> {
        let sagas = self
            .inner
            .entries
            .iter()
            .map(|entry| &entry.saga)
            .chain(self.inner.prompts.iter().map(|(_, saga)| saga))
            .chain(self.inner.resources.iter().map(|(_, saga)| saga))
            .chain(self.inner.templates.iter().map(|(_, saga)| saga));
        sagas.flat_map(|saga| saga.every_points()).collect()
    }

    /// The codec of the state a session call keeps between its rounds in process.
    pub(super) fn session_codec(&self) -> &StateCodec {
        &self.inner.session_codec
    }

    /// The codec sealing the tools' state.
    pub(crate) fn codec(&self) -> &StateCodec {
        &self.inner.codec
    }

    /// Opens `token` as a server would for `request` (without redeeming it) and decodes
    /// the saga's state with the tool's own types: `{"tool", "expiresAt", "nextKey",
    /// "pending", "state"}`. The token must be unexpired and sealed by a key of this
    /// server for this build of the tool.
    pub fn inspect(
        &self,
        token: &str,
        request: &InspectRequest,
    ) -> Result<serde_json::Value, InspectError> {
        let candidates: Vec<&ServedTool> = match &request.tool {
            Some(name) => {
                let entry = self
                    .inner
                    .by_name
                    .get(name)
                    .and_then(|index| self.inner.entries.get(*index))
                    .ok_or_else(|| InspectError::UnknownTool(name.clone()))?;
                vec![entry]
            }
            None => self.inner.entries.iter().collect(),
        };
        let mut last = InspectError::UnknownTool(String::new());
        for entry in candidates {
            let binding = crate::state::Binding::new(
                &entry.tool.name,
                &request.method,
                &request.principal,
                request.arguments.as_ref(),
            );
            match entry.saga.inspect(&self.inner.codec, token, &binding) {
                Ok(mut value) => {
                    value["tool"] = serde_json::Value::String(entry.tool.name.to_string());
                    return Ok(value);
                }
                Err(error) => last = error,
            }
        }
        Err(last)
    }

    /// The listed tools, in order.
    pub(crate) fn listed(&self) -> impl Iterator<Item = &Tool> {
        self.inner
            .entries
            .iter()
            .filter(|entry| entry.listed)
            .map(|entry| &entry.tool)
    }

    /// `response` with the registry's `serverInfo` in its `_meta`, if it has one.
    pub(crate) fn stamped(&self, mut response: CallToolResponse) -> CallToolResponse {
        if let Some(info) = &self.inner.info_meta {
            stamp_server_info(&mut response, info);
        }
        response
    }

    /// The `_meta` that [`SagaTools::stamped`] gives a result without one, as JSON.
    pub(crate) fn server_info_stamp(&self) -> Option<&[u8]> {
        self.inner.info_stamp.as_deref()
    }

    /// The tool served under `name`, or `-32602`.
    pub(crate) fn saga(&self, name: &str) -> Result<&Saga, ErrorData> {
        match self.inner.by_name.get(name) {
            Some(&index) => Ok(&self.inner.entries[index].saga),
            None => {
                tracing::info!(tool = %crate::log::Escaped(name), "call of an unknown tool");
                Err(ErrorData::invalid_params(
                    format!("unknown tool: {name}"),
                    None,
                ))
            }
        }
    }

    /// Whether the principals are verified identities; see
    /// [`SagaToolsBuilder::verified_principals`](super::SagaToolsBuilder::verified_principals).
    pub(crate) fn principals_verified(&self) -> bool {
        self.inner.identity.verified
    }

    pub(crate) fn bounds(&self) -> CallBounds {
        self.inner.bounds
    }

    pub(crate) fn detached(&self) -> &Arc<tokio::sync::Semaphore> {
        &self.inner.detached
    }

    /// Waits, until `deadline`, for the rounds that go on after their clients left
    /// (recorded outcomes) to end and record their outcomes; past it they are cut. While
    /// it waits, new ones are refused as the server's bound refuses them (`-32600`,
    /// retryable): the client sends the request to another replica, or again later. Then
    /// the tasks this process runs are handed back to their store.
    pub(crate) async fn drain(&self, deadline: tokio::time::Instant) {
        self.drain_rounds(deadline).await;
        // Last: the tasks this process runs go back to the store for another replica.
        if let Some(tasks) = self.tasks() {
            tasks.hand_back().await;
        }
    }

    /// [`SagaTools::drain`]'s rounds.
    async fn drain_rounds(&self, deadline: tokio::time::Instant) {
        let all = u32::try_from(MAX_DETACHED).unwrap_or(u32::MAX);
        match tokio::time::timeout_at(deadline, self.detached().acquire_many(all)).await {
            Ok(_) => {}
            Err(_) => {
                let running = MAX_DETACHED - self.detached().available_permits();
                tracing::warn!(
                    running,
                    "rounds still running at the end of the shutdown grace are cut; their \
                     retries run them again where the store renews leases"
                );
            }
        }
    }

    pub(crate) fn in_flight(&self) -> &super::in_flight::InFlight {
        &self.inner.in_flight
    }

    /// The server's tasks, when a [`TaskStore`](crate::tasks::TaskStore) is configured.
    pub(crate) fn tasks(&self) -> Option<&Arc<crate::tasks::Tasks>> {
        self.inner.tasks.as_ref()
    }

    /// Starts what runs beside requests (the takeover of orphaned tasks), once the server
    /// serves, so that a replica restarted after a crash takes over tasks before any
    /// client asks it about one.
    pub(crate) fn start_background(&self) {
        if let Some(tasks) = self.tasks() {
            tasks.ensure_sweeper(self);
        }
    }

    /// The principal of an HTTP request: a verified one (see
    /// [`SagaServerBuilder::authenticate`](super::SagaServerBuilder::authenticate)) or the
    /// server's principal function's.
    pub(crate) fn principal_of(&self, parts: &http::request::Parts) -> String {
        self.inner.identity.resolve(parts).0
    }

    /// Whether an `authenticate` check verifies callers.
    pub(crate) fn authenticates(&self) -> bool {
        self.inner.identity.authenticate.is_some()
    }

    /// Whether callers nobody verified are refused over HTTP.
    pub(crate) fn requires_verified(&self) -> bool {
        self.inner.identity.required
    }

    /// Refuses a call of a tool only verified callers may call
    /// (`require_verified_for`), when nobody verified the caller.
    pub(crate) fn gate(&self, tool: &str, cx: &SagaContext) -> Result<(), ErrorData> {
        let gated = &self.inner.identity.verified_tools;
        if gated.is_empty()
            || !gated.iter().any(|name| name == tool)
            || cx.pool(self.principals_verified()).is_verified()
        {
            return Ok(());
        }
        tracing::info!(tool = %crate::log::Escaped(tool), "refused a call: its caller is not verified");
        Err(ErrorData::invalid_request(
            format!(
                "the tool {tool:?} serves only callers this server verifies, and this request \
                 carries no credentials it accepted"
            ),
            None,
        ))
    }

    /// The principal of an HTTP request from `peer` and the pool its bounds count it
    /// against.
    pub(crate) fn caller_of(
        &self,
        parts: &http::request::Parts,
        peer: Option<std::net::IpAddr>,
    ) -> crate::engine::caller::pool::Caller {
        self.inner.identity.caller_from(parts, peer)
    }

    /// The [`SagaContext`] of an rmcp request: the principal from the HTTP head (if any)
    /// and what the request's `_meta` declares.
    pub(crate) fn context(&self, context: &RequestContext<RoleServer>) -> SagaContext {
        super::head::context(&self.inner.identity, self.inner.model.clone(), context)
    }

    /// The server's model, if one is configured.
    pub(crate) fn server_model(&self) -> Option<Arc<crate::engine::caller::model::ServerModel>> {
        self.inner.model.clone()
    }

    /// What the HTTP head of a request (`None`: not HTTP) gives its context; `caller`
    /// when the guard hands over the one it resolved.
    pub(crate) fn head(
        &self,
        parts: Option<&http::request::Parts>,
        caller: Option<crate::engine::caller::pool::Caller>,
    ) -> RequestHead {
        super::head::head(
            &self.inner.identity,
            self.inner.model.clone(),
            parts,
            caller,
        )
    }

    /// Whether `name` is a tool (current or retired) whose `Mcp-Param-*` headers
    /// (SEP-2243) rmcp's transport would let pass for a `tools/call` with `arguments`,
    /// so that the direct path may serve it; `false` for an unknown name, which rmcp
    /// answers.
    pub(crate) fn headers_pass(
        &self,
        name: &str,
        headers: &http::HeaderMap,
        arguments: Option<&rmcp::model::JsonObject>,
    ) -> bool {
        self.inner.by_name.get(name).is_some_and(|&index| {
            self.inner.entries[index]
                .param_headers
                .pass(headers, arguments)
        })
    }
}

/// The `_meta` key naming the server that produced a result.
pub(crate) const SERVER_INFO_META_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The `_meta` object stamping a result without one gives it, `{"<key>": info}`, as
/// compact JSON: the same bytes as writing the stamped result's `_meta` (a test in
/// `serve::http::reply` compares them).
pub(crate) fn server_info_stamp(info: &serde_json::Value) -> Box<[u8]> {
    let mut meta = serde_json::Map::new();
    meta.insert(SERVER_INFO_META_KEY.to_owned(), info.clone());
    // A map of strings to a `Value` always writes.
    serde_json::to_vec(&meta)
        .unwrap_or_default()
        .into_boxed_slice()
}

/// MCP 2026-07-28: results SHOULD name the server that produced them.
pub(super) fn stamp_server_info(response: &mut CallToolResponse, info: &serde_json::Value) {
    stamp_meta(response, SERVER_INFO_META_KEY, info.clone());
}

/// Puts `value` under `key` in a result's `_meta`.
pub(super) fn stamp_meta(response: &mut CallToolResponse, key: &str, value: serde_json::Value) {
    let meta = match response {
        CallToolResponse::Complete(result) => &mut result.meta,
        CallToolResponse::InputRequired(result) => &mut result.meta,
        _ => return,
    };
    meta.get_or_insert_with(MetaObject::default)
        .0
        .insert(key.to_owned(), value);
}

impl crate::tasks::Host for SagaTools {
    fn saga(&self, name: &str) -> Result<&Saga, ErrorData> {
        SagaTools::saga(self, name)
    }

    fn codec(&self) -> &StateCodec {
        SagaTools::codec(self)
    }

    fn principals_verified(&self) -> bool {
        SagaTools::principals_verified(self)
    }

    fn model(&self) -> Option<Arc<crate::engine::caller::model::ServerModel>> {
        self.server_model()
    }
}
