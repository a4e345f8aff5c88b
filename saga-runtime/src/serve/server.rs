//! `SagaServer`: an rmcp `ServerHandler` serving saga tools, and its builder.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, DiscoverResult,
    ErrorCode, GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, MetaObject,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig, SetLevelRequestParams, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};

use super::principal::PrincipalFn;
use super::tools::{BuildError, Registry, SagaTools, default_principal};
use crate::engine::SagaTool;
use crate::state::{KeyRing, StateCodec};

/// How long tokens live unless [`SagaServerBuilder::ttl`] says otherwise.
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
/// #     fn fingerprint(&self) -> [u8; 8] { [0; 8] }
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
///     .await
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct SagaServer {
    tools: SagaTools,
    info: Implementation,
    /// `info` as the `_meta` value every result carries, encoded once.
    info_meta: serde_json::Value,
    instructions: Option<String>,
    list_ttl: Duration,
    http_limits: super::HttpLimits,
}

/// Builds a [`SagaServer`].
#[must_use]
pub struct SagaServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    keys: Option<KeyRing>,
    ttl: Duration,
    list_ttl: Duration,
    max_token_len: Option<usize>,
    leeway: Option<Duration>,
    single_use: Option<Arc<dyn crate::state::TokenStore>>,
    principal: PrincipalFn,
    http_limits: super::HttpLimits,
    registry: Registry,
}

impl std::fmt::Debug for SagaServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SagaServerBuilder")
            .field("info", &self.info)
            .field("keys", &self.keys)
            .field("ttl", &self.ttl)
            .field(
                "tools",
                &self
                    .registry
                    .tools
                    .iter()
                    .map(|(tool, _)| &tool.name)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl SagaServer {
    /// Starts a builder.
    pub fn builder() -> SagaServerBuilder {
        SagaServerBuilder {
            info: Implementation::new("saga-server", env!("CARGO_PKG_VERSION")),
            instructions: None,
            keys: None,
            ttl: DEFAULT_TTL,
            list_ttl: DEFAULT_LIST_TTL,
            max_token_len: None,
            leeway: None,
            single_use: None,
            principal: default_principal(),
            http_limits: super::HttpLimits::default(),
            registry: Registry::default(),
        }
    }

    /// The HTTP bounds this server applies.
    pub fn http_limits(&self) -> &super::HttpLimits {
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
        request: &super::InspectRequest,
    ) -> Result<serde_json::Value, super::InspectError> {
        self.tools.inspect(token, request)
    }

    /// The protocol versions this server speaks.
    pub fn protocol_versions() -> &'static [ProtocolVersion] {
        &[ProtocolVersion::V_2026_07_28]
    }
}

impl SagaServerBuilder {
    /// The server's name and version, sent in `serverInfo`.
    pub fn info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Implementation::new(name, version);
        self
    }

    /// Instructions for the client's model, sent by `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// The keys that seal and open tokens. Required.
    pub fn keys(mut self, keys: KeyRing) -> Self {
        self.keys = Some(keys);
        self
    }

    /// How long a token stays valid after it is issued (default 10 minutes). Each round
    /// issues a fresh token, so this bounds the time a user may take to answer one round.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// How long clients may cache `tools/list` and `server/discover` (default 5 minutes).
    pub fn list_ttl(mut self, ttl: Duration) -> Self {
        self.list_ttl = ttl;
        self
    }

    /// The longest token accepted, in bytes (default 64 KiB); longer ones are refused
    /// before any decoding.
    pub fn max_token_len(mut self, max: usize) -> Self {
        self.max_token_len = Some(max);
        self
    }

    /// How long past its expiry a token is still accepted, for replicas whose clocks
    /// disagree (default 60 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = Some(leeway);
        self
    }

    /// Makes every token redeemable once, recorded in `store` (a [`MemoryStore`] for one
    /// process, a `RedisStore` for replicas): a replayed token is refused like a forged
    /// one. See SECURITY.md for the trade-off.
    ///
    /// [`MemoryStore`]: crate::state::MemoryStore
    pub fn single_use(mut self, store: impl crate::state::TokenStore) -> Self {
        self.single_use = Some(Arc::new(store));
        self
    }

    /// Derives the principal from the named request headers; see
    /// [`principal_from_headers`](super::principal_from_headers). For example
    /// `.principal_headers(["cookie"])` for a deployment whose callers are identified by a
    /// session cookie.
    pub fn principal_headers<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.principal = super::principal::principal_from_headers(names);
        self
    }

    /// The bounds on what one HTTP request, connection and the whole server may cost;
    /// see [`HttpLimits`](super::HttpLimits) for each default.
    pub fn http_limits(mut self, limits: super::HttpLimits) -> Self {
        self.http_limits = limits;
        self
    }

    /// Derives the principal bound into every token from the HTTP request head.
    ///
    /// The default is a digest of the `Authorization` header and nothing else. **If your
    /// deployment identifies callers another way** (a session cookie, an API-key header, a
    /// header set by an authenticating proxy), set this or
    /// [`principal_headers`](Self::principal_headers): otherwise every such caller is the
    /// same principal, and one could resume a token issued to another.
    pub fn principal<F>(mut self, principal: F) -> Self
    where
        F: Fn(&http::request::Parts) -> String + Send + Sync + 'static,
    {
        self.principal = Arc::new(principal);
        self
    }

    /// Adds a tool.
    pub fn tool<T: SagaTool>(mut self, tool: T) -> Self {
        let tool = Arc::new(tool);
        self.registry.tools.push((tool.tool(), tool));
        self
    }

    /// Adds a prompt written as a saga (`#[saga_prompt]`, returning [`Prompt`]): its
    /// function's name, doc comment and arguments (strings) describe the prompt, and
    /// `prompts/get` runs it, with input-required rounds if it suspends.
    ///
    /// [`Prompt`]: crate::engine::Prompt
    pub fn prompt<T: SagaTool>(mut self, prompt: T) -> Self {
        let prompt = Arc::new(prompt);
        let description = prompt.tool();
        self.registry
            .prompts
            .push((super::catalog::prompt_of(&description), prompt));
        self
    }

    /// Adds a resource at `uri` read by a saga (`#[saga_resource]`, taking `uri: String`
    /// and returning [`Contents`]).
    ///
    /// [`Contents`]: crate::engine::Contents
    pub fn resource<T: SagaTool>(mut self, uri: impl Into<String>, resource: T) -> Self {
        let resource = Arc::new(resource);
        let description = resource.tool();
        self.registry.resources.push((
            super::catalog::resource_of(uri.into(), &description),
            resource,
        ));
        self
    }

    /// Adds resources matching `uri_template` (e.g. `test://items/{id}`), read by a saga
    /// that takes `uri: String` and one `String` argument per template variable.
    pub fn resource_template<T: SagaTool>(
        mut self,
        uri_template: impl Into<String>,
        resource: T,
    ) -> Self {
        let resource = Arc::new(resource);
        let description = resource.tool();
        self.registry.templates.push((
            super::catalog::template_of(uri_template.into(), &description),
            resource,
        ));
        self
    }

    /// Builds the server.
    pub fn build(self) -> Result<SagaServer, BuildError> {
        let keys = self.keys.ok_or(BuildError::NoKeys)?;
        let mut codec = StateCodec::new(keys, self.ttl);
        if let Some(max) = self.max_token_len {
            codec = codec.with_max_token_len(max);
        }
        if let Some(leeway) = self.leeway {
            codec = codec.with_leeway(leeway);
        }
        if let Some(store) = self.single_use {
            codec = codec.with_single_use(store);
        }
        let list_ttl_ms = u64::try_from(self.list_ttl.as_millis()).unwrap_or(u64::MAX);
        Ok(SagaServer {
            tools: SagaTools::new(codec, self.registry, self.principal, list_ttl_ms)?,
            info_meta: serde_json::to_value(&self.info).unwrap_or_default(),
            info: self.info,
            instructions: self.instructions,
            http_limits: self.http_limits,
            list_ttl: self.list_ttl,
        })
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
        let mut config = ServerConfig::new(capabilities).with_server_info(self.info.clone());
        config.protocol_version = ProtocolVersion::V_2026_07_28;
        config.instructions = self.instructions.clone();
        config
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(Self::protocol_versions())
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let ttl_ms = u64::try_from(self.list_ttl.as_millis()).unwrap_or(u64::MAX);
        Ok(
            DiscoverResult::from_server_info(Self::protocol_versions().to_vec(), self.get_info())
                .with_ttl_ms(ttl_ms)
                .with_cache_scope(rmcp::model::CacheScope::Public),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(self.tools.list())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        match request.method.as_str() {
            super::wire::call_saga::CALL_SAGA | super::wire::call_saga::RESUME_SAGA => {
                let cx = super::wire::call_saga::context(&self.tools, &_context);
                let result = if request.method == super::wire::call_saga::CALL_SAGA {
                    super::wire::call_saga::call_saga(&self.tools, request.params, &cx).await
                } else {
                    super::wire::call_saga::resume_saga(&self.tools, request.params, &cx).await
                };
                return result.map(CustomResult);
            }
            _ => {}
        }
        // rmcp hands over as "custom" any request whose params do not decode as the
        // method's type, e.g. a `tools/call` with a numeric `requestState`. For a method
        // MCP defines that is bad params, not an unknown method.
        if MCP_METHODS.contains(&request.method.as_str()) {
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
        Ok(self.tools.list_prompts())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.tools.get_prompt(request, &context).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(self.tools.list_resources())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(self.tools.list_resource_templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.tools.read_resource(request, &context).await
    }

    async fn set_level(
        &self,
        _request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Removed in 2026-07-28: a request asks for logs with `_meta` instead.
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            "logging/setLevel",
            None,
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.get(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut response = self.tools.call(request, &context).await?;
        let meta = match &mut response {
            CallToolResponse::Complete(result) => &mut result.meta,
            CallToolResponse::InputRequired(result) => &mut result.meta,
            _ => return Ok(response),
        };
        // MCP 2026-07-28: results SHOULD name the server that produced them.
        meta.get_or_insert_with(MetaObject::default)
            .0
            .insert(SERVER_INFO_META_KEY.to_owned(), self.info_meta.clone());
        Ok(response)
    }
}

const SERVER_INFO_META_KEY: &str = "io.modelcontextprotocol/serverInfo";

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
