//! `SagaServer`: an rmcp `ServerHandler` serving saga tools (its builder,
//! `Builder<SagaServer>`, is in `builder.rs`).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, DiscoverResult,
    ErrorCode, GetPromptRequestParams, GetPromptResponse, Implementation, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, LoggingLevel, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SetLevelRequestParams, SubscribeRequestParams, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};

use super::head::SessionLogLevel;
use super::tools::SagaTools;
use super::wire::call_saga;
use super::wire::resumable;

/// How long tokens live unless [`SagaServerBuilder::ttl`](super::SagaServerBuilder::ttl) says otherwise.
pub const DEFAULT_TTL: Duration = Duration::from_secs(600);
/// How long clients may cache `tools/list` and `server/discover`.
pub const DEFAULT_LIST_TTL: Duration = Duration::from_secs(300);

/// A server of saga tools over MCP 2026-07-28.
///
/// It is an rmcp [`ServerHandler`], served by [`SagaServer::serve_http`],
/// [`SagaServer::serve_stdio`], or mounted with [`SagaServer::router`]. It keeps no state
/// between requests: cloning it is cheap and any clone (or replica holding the same keys)
/// can serve any round.
///
/// ```no_run
/// use saga_runtime::prelude::*;
/// # struct Noop;
/// # impl SagaTool for Noop {
/// #     type State = ();
/// #     fn tool(&self) -> saga_runtime::rmcp::model::Tool {
/// #         let schema = serde_json::json!({"type": "object"}).as_object().cloned().unwrap();
/// #         saga_runtime::rmcp::model::Tool::new("noop", "Does nothing.", std::sync::Arc::new(schema))
/// #     }
/// #     fn start(&self, _: saga_runtime::rmcp::model::JsonObject) -> Result<(), saga_runtime::rmcp::ErrorData> { Ok(()) }
/// #     async fn step(&self, _: (), _: Answers, _: &SagaContext) -> Step<()> { Step::done("ok") }
/// # }
/// # async fn run() -> anyhow::Result<()> {
/// SagaServer::builder()
///     .info("deploy-server", "1.0.0")
///     .keys(KeyRing::from_env("SAGA_KEYS")?)
///     .ttl(std::time::Duration::from_secs(600))
///     .tool(Noop)
///     .build()?
///     .serve_http("127.0.0.1:8080")
///     .await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct SagaServer {
    pub(super) tools: SagaTools,
    pub(super) info: Implementation,
    pub(super) instructions: Option<String>,
    pub(super) list_ttl: Duration,
    pub(super) http_limits: super::limits::HttpLimits,
    pub(super) session_idle_timeout: Duration,
    /// How long a server asked to stop lets what is in flight finish.
    pub(super) shutdown_grace: Duration,
    pub(super) direct_calls: bool,
    /// The stores given that keep nothing across a restart (`"state store"`, `"task
    /// store"` in memory): a server serving HTTP warns of them when it starts.
    pub(super) volatile: Vec<&'static str>,
    /// Routes served beside `/mcp`; see [`SagaServerBuilder::routes`](super::SagaServerBuilder::routes).
    #[cfg(feature = "http")]
    pub(super) routes: Option<axum::Router>,
    /// The server as an OAuth 2.1 resource server, if it authorizes (feature `oauth`).
    #[cfg(feature = "oauth")]
    pub(super) authorization: Option<Arc<super::auth::ResourceServer>>,
    /// What a session (MCP 2025-11-25) set: each session gets its own, see
    /// [`SagaServer::for_session`].
    pub(super) session: Arc<SessionState>,
}

/// What one session opened with `initialize` chooses for itself.
#[derive(Debug, Default)]
pub(super) struct SessionState {
    log_level: std::sync::Mutex<Option<LoggingLevel>>,
    subscriptions: std::sync::Mutex<std::collections::BTreeSet<String>>,
}

/// How many resources one session (MCP 2025-11-25) may be subscribed to at once. Each
/// names a resource of the server, so the set costs at most this many of its URIs.
pub const MAX_SUBSCRIPTIONS: usize = 256;

/// The longest URI a session may subscribe to (a template matches URIs of any length).
pub const MAX_SUBSCRIBED_URI_LEN: usize = 2048;

/// The most bytes of URIs one session's subscriptions hold together: 256 URIs of the
/// longest kind would hold 512 KiB (about 700 KiB with the set around them) in every
/// session; this keeps a session's subscriptions to a few dozen KiB.
pub const MAX_SUBSCRIBED_BYTES: usize = 16 * 1024;

/// How long an idle session (MCP 2025-11-25) is kept unless
/// [`SagaServerBuilder::session_idle_timeout`](super::SagaServerBuilder::session_idle_timeout) says otherwise.
pub(super) const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// A list result as the request's era has it: the caching hints (`ttlMs`, `cacheScope`)
/// are MCP 2026-07-28's, so a 2025-11-25 (or older) request gets the result without them,
/// as that era's schema has it.
macro_rules! of_its_era {
    ($result:expr, $context:expr) => {{
        let mut result = $result;
        if crate::engine::Era::is_session($context.protocol_version().as_ref()) {
            result.ttl_ms = None;
            result.cache_scope = None;
        }
        result
    }};
}

impl SagaServer {
    /// The routes served beside `/mcp` ([`SagaServerBuilder::routes`](super::SagaServerBuilder::routes)), if any.
    #[cfg(feature = "http")]
    pub(crate) fn extra_routes(&self) -> Option<&axum::Router> {
        self.routes.as_ref()
    }

    /// The HTTP bounds this server applies.
    pub fn http_limits(&self) -> &super::limits::HttpLimits {
        &self.http_limits
    }

    /// The tool registry, for use in another rmcp server.
    pub fn tools(&self) -> &SagaTools {
        &self.tools
    }

    /// Decodes a token's saga state as JSON with the tool's own types; see
    /// [`SagaTools::inspect`].
    pub fn inspect(
        &self,
        token: &str,
        request: &super::tools::InspectRequest,
    ) -> Result<serde_json::Value, crate::engine::caller::error::InspectError> {
        self.tools.inspect(token, request)
    }

    /// The protocol versions this server speaks: MCP 2026-07-28 statelessly, and the
    /// session era (2025-11-25, 2025-06-18) for clients that open a session with
    /// `initialize`.
    pub fn protocol_versions() -> &'static [ProtocolVersion] {
        &[
            ProtocolVersion::V_2026_07_28,
            ProtocolVersion::V_2025_11_25,
            ProtocolVersion::V_2025_06_18,
        ]
    }

    /// The answer to `server/discover`: the versions served, the server's info and
    /// capabilities, cacheable by anyone for the list TTL. The same for the server's life.
    pub(crate) fn discovery(&self) -> DiscoverResult {
        let ttl_ms = u64::try_from(self.list_ttl.as_millis()).unwrap_or(u64::MAX);
        DiscoverResult::from_server_info(Self::protocol_versions().to_vec(), self.get_info())
            .with_ttl_ms(ttl_ms)
            .with_cache_scope(rmcp::model::CacheScope::Public)
    }

    /// Whether MRTR `tools/call`s run without rmcp's per-request service over HTTP; see
    /// [`SagaServerBuilder::direct_calls`](super::SagaServerBuilder::direct_calls).
    pub(crate) fn direct_calls(&self) -> bool {
        self.direct_calls
    }

    /// How long an idle session is kept.
    pub(crate) fn session_idle_timeout(&self) -> Duration {
        self.session_idle_timeout
    }

    /// How long a server asked to stop lets what is in flight finish.
    pub(crate) fn shutdown_grace(&self) -> Duration {
        self.shutdown_grace
    }

    /// This server for one new session: the same tools and keys, with the session's own
    /// choices (log level, resource subscriptions).
    pub(crate) fn for_session(&self) -> Self {
        Self {
            session: Arc::default(),
            ..self.clone()
        }
    }

    /// Puts what the session chose where the registry reads it.
    fn with_session(&self, mut context: RequestContext<RoleServer>) -> RequestContext<RoleServer> {
        if let Ok(level) = self.session.log_level.lock()
            && let Some(level) = *level
        {
            context.extensions.insert(SessionLogLevel(level));
        }
        context
    }

    /// As `SagaContext::is_session`, for a request whose context is rmcp's: a
    /// session-era version over a session, not a stateless HTTP request naming one.
    fn is_session(context: &RequestContext<RoleServer>) -> bool {
        crate::engine::Era::is_session(context.protocol_version().as_ref())
            && !super::head::is_sessionless(context.extensions.get::<http::request::Parts>())
    }
}

impl SagaServer {
    /// `tools/callSaga` and `tools/resumeSaga` (seed 000): `super::saga_calls`, as the
    /// direct path runs them.
    async fn call_saga(
        &self,
        request: CustomRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<serde_json::Value, ErrorData> {
        let declared = context.meta.client_capabilities().is_some();
        let cx = self.tools.context(context);
        super::saga_calls::run(&self.tools, &request.method, request.params, cx, declared).await
    }

    /// `requests/resume` (seed 002): continues the request its token was issued for, in
    /// this session, on this replica or any other; the answer is that request's result.
    async fn resume(
        &self,
        params: Option<serde_json::Value>,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let cx = self.tools.context(&context);
        let ticket = resumable::open(
            self.tools.codec(),
            params,
            Some(&context.id),
            cx.principal(),
        )?;
        if !cx.is_session() {
            return Err(ErrorData::invalid_request(
                "requests/resume continues a request of a session: open one with initialize",
                None,
            ));
        }
        let method = ticket.method.clone();
        let params = resumable::original_params(ticket);
        let malformed =
            |error: serde_json::Error| ErrorData::internal_error(error.to_string(), None);
        let result = match method.as_str() {
            "prompts/get" => serde_json::to_value(rmcp::model::ServerResult::from(
                self.get_prompt(serde_json::from_value(params).map_err(malformed)?, context)
                    .await?,
            )),
            "resources/read" => serde_json::to_value(rmcp::model::ServerResult::from(
                self.read_resource(serde_json::from_value(params).map_err(malformed)?, context)
                    .await?,
            )),
            _ => serde_json::to_value(rmcp::model::ServerResult::from(
                self.call_tool(serde_json::from_value(params).map_err(malformed)?, context)
                    .await?,
            )),
        };
        result.map(CustomResult).map_err(malformed)
    }
}

impl SagaServer {
    /// The tasks and the caller's principal, for `tasks/*`.
    fn task_caller(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<(&Arc<crate::tasks::Tasks>, String), ErrorData> {
        let Some(tasks) = self.tools.tasks() else {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                "this server runs no tasks",
                None,
            ));
        };
        if !context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks())
        {
            return Err(crate::tasks::tasks_required());
        }
        Ok((tasks, self.tools.context(context).principal().to_owned()))
    }
}

impl ServerHandler for SagaServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder().enable_tools().build();
        if self.tools.has_prompts() {
            capabilities.prompts = Some(Default::default());
            capabilities.completions = Some(Default::default());
        }
        if self.tools.has_resources() {
            capabilities.resources = Some(Default::default());
        }
        if self.tools.tasks().is_some() {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(rmcp::model::TASKS_EXTENSION_ID.into(), Default::default());
        }
        let mut config = ServerConfig::new(capabilities).with_server_info(self.info.clone());
        config.protocol_version = ProtocolVersion::V_2026_07_28;
        config.instructions = self.instructions.clone();
        config
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        // Its MCP server span (feature `otel`): made before the body takes the context.
        let trace = crate::otel::MethodTrace::of("initialize", None, &context);
        trace
            .run(async move {
                context.peer.set_peer_info(request.clone());
                let mut result = self.negotiate_initialize(&request)?;
                // What only a session has: `logging/setLevel` and resource subscriptions (MCP
                // 2026-07-28 has neither, so `server/discover` does not advertise them).
                result.capabilities.logging = Some(Default::default());
                if let Some(resources) = result.capabilities.resources.as_mut() {
                    resources.subscribe = Some(true);
                }
                Ok(result)
            })
            .await
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(Self::protocol_versions())
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        // Its MCP server span (feature `otel`): made before the body takes the context.
        let trace = crate::otel::MethodTrace::of("server/discover", None, &_context);
        trace.run(async move { Ok(self.discovery()) }).await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // Its MCP server span (feature `otel`): made before the body takes the context.
        let trace = crate::otel::MethodTrace::of("tools/list", None, &_context);
        trace
            .run(async move {
                let parts = _context.extensions.get::<http::request::Parts>();
                Ok(of_its_era!(self.tools.list_seen_by(parts), _context))
            })
            .await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        match request.method.as_str() {
            call_saga::CALL_SAGA | call_saga::RESUME_SAGA => {
                // Boxed: rmcp's per-request task holds the future of whichever handler
                // is largest, so these (rarer) formats would size every `tools/call`'s.
                return Box::pin(self.call_saga(request, &_context))
                    .await
                    .map(CustomResult);
            }
            resumable::RESUME => return Box::pin(self.resume(request.params, _context)).await,
            resumable::GET_STATUS => {
                let cx = self.tools.context(&_context);
                let ticket =
                    resumable::open(self.tools.codec(), request.params, None, cx.principal())?;
                return Ok(CustomResult(resumable::status(&ticket)));
            }
            _ => {}
        }
        // rmcp hands over as "custom" any request whose params do not decode as the
        // method's type, e.g. a `tools/call` with a numeric `requestState`. For a method
        // MCP defines that is bad params, not an unknown method.
        let known = MCP_METHODS.contains(&request.method.as_str())
            || (Self::is_session(&_context) && SESSION_METHODS.contains(&request.method.as_str()));
        if known {
            tracing::info!(method = %crate::log::Escaped(&request.method), "request params do not match the method's schema");
            return Err(ErrorData::invalid_params(
                format!("invalid params for {}", request.method),
                None,
            ));
        }
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            request.method,
            None,
        ))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        // Its MCP server span (feature `otel`): made before the body takes the context.
        let trace = crate::otel::MethodTrace::of("prompts/list", None, &_context);
        trace
            .run(async move { Ok(of_its_era!(self.tools.prompts_listed()?, _context)) })
            .await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.tools
            .get_prompt_unboxed(request, &self.with_session(context))
            .await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        // Its MCP server span (feature `otel`): made before the body takes the context.
        let trace = crate::otel::MethodTrace::of("resources/list", None, &_context);
        trace
            .run(async move { Ok(of_its_era!(self.tools.resources_listed()?, _context)) })
            .await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        // Its MCP server span (feature `otel`): made before the body takes the context.
        let trace = crate::otel::MethodTrace::of("resources/templates/list", None, &_context);
        trace
            .run(async move {
                Ok(of_its_era!(
                    self.tools.resource_templates_listed()?,
                    _context
                ))
            })
            .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.tools
            .read_resource_unboxed(request, &self.with_session(context))
            .await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Its MCP server span (feature `otel`): made before the body takes the context.
        let trace = crate::otel::MethodTrace::of("logging/setLevel", None, &context);
        trace
            .run(async move {
                if !Self::is_session(&context) {
                    // Removed in 2026-07-28: a request asks for logs with `_meta` instead.
                    return Err(ErrorData::new(
                        ErrorCode::METHOD_NOT_FOUND,
                        "logging/setLevel",
                        None,
                    ));
                }
                if let Ok(mut level) = self.session.log_level.lock() {
                    *level = Some(request.level);
                }
                Ok(())
            })
            .await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Its MCP server span (feature `otel`): made before the body takes the context.
        let trace = crate::otel::MethodTrace::of("resources/subscribe", None, &context);
        trace
            .run(async move {
        if !Self::is_session(&context) {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                "resources/subscribe",
                None,
            ));
        }
        if request.uri.len() > MAX_SUBSCRIBED_URI_LEN {
            return Err(ErrorData::invalid_params(
                format!("a subscribed URI may be at most {MAX_SUBSCRIBED_URI_LEN} bytes long"),
                None,
            ));
        }
        if !self.tools.has_resource(&request.uri) {
            tracing::info!(uri = %crate::log::Escaped(&request.uri), "a subscription to an unknown resource");
            return Err(ErrorData::invalid_params(
                "unknown resource: a subscription names a resource of this server",
                Some(serde_json::json!({"uri": request.uri})),
            ));
        }
        let Ok(mut subscriptions) = self.session.subscriptions.lock() else {
            return Err(ErrorData::internal_error(
                "the session's state is poisoned",
                None,
            ));
        };
        if subscriptions.contains(&request.uri) {
            return Ok(());
        }
        if subscriptions.len() >= MAX_SUBSCRIPTIONS {
            return Err(ErrorData::invalid_request(
                format!(
                    "this session already holds {MAX_SUBSCRIPTIONS} subscriptions, the limit; \
                     unsubscribe from one first"
                ),
                None,
            ));
        }
        let held: usize = subscriptions.iter().map(String::len).sum();
        if held.saturating_add(request.uri.len()) > MAX_SUBSCRIBED_BYTES {
            return Err(ErrorData::invalid_request(
                format!(
                    "this session's subscriptions already hold {held} bytes of URIs, and may \
                     hold {MAX_SUBSCRIBED_BYTES}; unsubscribe from one first"
                ),
                None,
            ));
        }
        subscriptions.insert(request.uri);
        Ok(())
            })
            .await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Its MCP server span (feature `otel`): made before the body takes the context.
        let trace = crate::otel::MethodTrace::of("resources/unsubscribe", None, &context);
        trace
            .run(async move {
                if !Self::is_session(&context) {
                    return Err(ErrorData::new(
                        ErrorCode::METHOD_NOT_FOUND,
                        "resources/unsubscribe",
                        None,
                    ));
                }
                if let Ok(mut subscriptions) = self.session.subscriptions.lock() {
                    subscriptions.remove(&request.uri);
                }
                Ok(())
            })
            .await
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        // Its MCP server span (feature `otel`): made before the body takes the context.
        let trace = crate::otel::MethodTrace::of("tasks/get", None, &context);
        trace
            .run(async move {
                let (tasks, principal) = self.task_caller(&context)?;
                tasks.get(&self.tools, &request.task_id, &principal).await
            })
            .await
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Its MCP server span (feature `otel`): made before the body takes the context.
        let trace = crate::otel::MethodTrace::of("tasks/update", None, &context);
        trace
            .run(async move {
                let (tasks, principal) = self.task_caller(&context)?;
                // Boxed, as the other large handlers: see `on_custom_request`.
                Box::pin(tasks.update(
                    &self.tools,
                    &request.task_id,
                    &principal,
                    request.input_responses,
                ))
                .await
            })
            .await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Its MCP server span (feature `otel`): made before the body takes the context.
        let trace = crate::otel::MethodTrace::of("tasks/cancel", None, &context);
        trace
            .run(async move {
                let (tasks, principal) = self.task_caller(&context)?;
                Box::pin(tasks.cancel(&self.tools, &request.task_id, &principal)).await
            })
            .await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        // A retired-only tool is known here so that its tokens resume in every format;
        // it is never listed, and a call without a token is refused by its family.
        self.tools.definition(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let response =
            super::route::rmcp_call(&self.tools, request, &self.with_session(context)).await?;
        Ok(self.tools.stamped(response))
    }
}

/// Client-to-server request methods a session (MCP 2025-11-25) has beside those of
/// [`MCP_METHODS`]: with params that do not decode, they are bad params too.
const SESSION_METHODS: &[&str] = &[
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
];

/// Client-to-server request methods of MCP 2026-07-28 (removed ones, such as
/// `logging/setLevel`, are unknown methods whatever their params).
const MCP_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
    "subscriptions/listen",
];
