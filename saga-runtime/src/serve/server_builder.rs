//! [`SagaServerBuilder`]: a server's settings, its tools, prompts and resources, and the
//! routes it serves beside `/mcp`.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::Implementation;

use super::builder::SagaToolsBuilder;
use super::server::{DEFAULT_SESSION_IDLE_TIMEOUT, SagaServer};
use super::tools::BuildError;
use crate::engine::{SagaPrompt, SagaResource, SagaTool};
use crate::state::KeyRing;

/// Builds a [`SagaServer`].
#[must_use]
pub struct SagaServerBuilder {
    tools: SagaToolsBuilder,
    instructions: Option<String>,
    http_limits: super::HttpLimits,
    session_idle_timeout: Duration,
    direct_calls: bool,
    routes: Option<axum::Router>,
}

impl std::fmt::Debug for SagaServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SagaServerBuilder")
            .field("tools", &self.tools)
            .field("http_limits", &self.http_limits)
            .finish_non_exhaustive()
    }
}

impl SagaServer {
    /// Starts a builder.
    pub fn builder() -> SagaServerBuilder {
        SagaServerBuilder {
            tools: SagaToolsBuilder::default(),
            instructions: None,
            http_limits: super::HttpLimits::default(),
            session_idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
            direct_calls: true,
            routes: None,
        }
    }
}

impl SagaServerBuilder {
    /// The server's name and version, sent in `serverInfo` and in every result's `_meta`.
    pub fn info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.tools = self.tools.info(name, version);
        self
    }

    /// Instructions for the client's model, sent by `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// The bounds on what one HTTP request, connection and the whole server may cost;
    /// see [`HttpLimits`](super::HttpLimits) for each default.
    pub fn http_limits(mut self, limits: super::HttpLimits) -> Self {
        self.http_limits = limits;
        self
    }

    /// How long a session opened with `initialize` (MCP 2025-11-25 and 2025-06-18) is kept
    /// without requests before it is closed (default 5 minutes).
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.session_idle_timeout = timeout;
        self
    }

    /// Whether an MRTR `tools/call` over HTTP that rmcp's transport would accept exactly
    /// as it is runs without rmcp's per-request service (default: `true`).
    ///
    /// rmcp still answers every other request and every refusal: a call is served
    /// directly only after the checks rmcp makes (allowed `Host`, `Accept`, the JSON-RPC
    /// message, `MCP-Protocol-Version` and `_meta`, `Mcp-Method` / `Mcp-Name`) are seen
    /// to pass, and when it asks for neither progress nor log messages. The answers are
    /// the same either way; the direct path costs less CPU per call (BENCHMARKS.md).
    /// On it, [`SagaContext::peer`](crate::engine::SagaContext::peer) is `None`: a stateless call
    /// that asked for no notifications has nothing to send through one. Turn it off to
    /// serve every request through rmcp, for example to compare the two.
    pub fn direct_calls(mut self, enabled: bool) -> Self {
        self.direct_calls = enabled;
        self
    }

    /// The keys that seal and open tokens. Required. See [`SagaToolsBuilder::keys`].
    pub fn keys(mut self, keys: KeyRing) -> Self {
        self.tools = self.tools.keys(keys);
        self
    }

    /// How long a token stays valid; see [`SagaToolsBuilder::ttl`].
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.tools = self.tools.ttl(ttl);
        self
    }

    /// How long clients may cache lists; see [`SagaToolsBuilder::list_ttl`].
    pub fn list_ttl(mut self, ttl: Duration) -> Self {
        self.tools = self.tools.list_ttl(ttl);
        self
    }

    /// The longest token accepted; see [`SagaToolsBuilder::max_token_len`].
    pub fn max_token_len(mut self, max: usize) -> Self {
        self.tools = self.tools.max_token_len(max);
        self
    }

    /// Clock-skew allowance; see [`SagaToolsBuilder::leeway`].
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.tools = self.tools.leeway(leeway);
        self
    }

    /// How long one request's run may take; see [`SagaToolsBuilder::max_run_time`].
    pub fn max_run_time(mut self, max: Duration) -> Self {
        self.tools = self.tools.max_run_time(max);
        self
    }

    /// How long a session waits for its client's answer; see
    /// [`SagaToolsBuilder::client_request_timeout`].
    pub fn client_request_timeout(mut self, timeout: Duration) -> Self {
        self.tools = self.tools.client_request_timeout(timeout);
        self
    }

    /// Single-use tokens; see [`SagaToolsBuilder::single_use`].
    pub fn single_use(mut self, store: impl crate::state::TokenStore) -> Self {
        self.tools = self.tools.single_use(store);
        self
    }

    /// Whether the principals are verified identities; see
    /// [`SagaToolsBuilder::verified_principals`].
    pub fn verified_principals(mut self, verified: bool) -> Self {
        self.tools = self.tools.verified_principals(verified);
        self
    }

    /// Authenticates requests, so that verified principals get a share of their own of
    /// every bound; see [`SagaToolsBuilder::authenticate`].
    pub fn authenticate<F>(mut self, check: F) -> Self
    where
        F: Fn(&http::request::Parts) -> Option<String> + Send + Sync + 'static,
    {
        self.tools = self.tools.authenticate(check);
        self
    }

    /// The principal from named headers; see [`SagaToolsBuilder::principal_headers`].
    pub fn principal_headers<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.tools = self.tools.principal_headers(names);
        self
    }

    /// The principal bound into every token; see [`SagaToolsBuilder::principal`]. The
    /// default digests the `Authorization` header and nothing else.
    pub fn principal<F>(mut self, principal: F) -> Self
    where
        F: Fn(&http::request::Parts) -> String + Send + Sync + 'static,
    {
        self.tools = self.tools.principal(principal);
        self
    }

    /// Whether `tools/list` carries each tool's diagram; see
    /// [`SagaToolsBuilder::diagrams_in_tool_list`].
    pub fn diagrams_in_tool_list(mut self, listed: bool) -> Self {
        self.tools = self.tools.diagrams_in_tool_list(listed);
        self
    }

    /// A model that answers `sample()` when the client does not; see
    /// [`SagaToolsBuilder::model`].
    pub fn model(mut self, model: impl crate::engine::model::Model) -> Self {
        self.tools = self.tools.model(model);
        self
    }

    /// Who answers a `sample()`; see [`SagaToolsBuilder::sampling_policy`].
    pub fn sampling_policy(mut self, policy: crate::engine::model::SamplingPolicy) -> Self {
        self.tools = self.tools.sampling_policy(policy);
        self
    }

    /// The bounds on the server's model; see [`SagaToolsBuilder::sampling_limits`].
    pub fn sampling_limits(mut self, limits: crate::engine::model::SamplingLimits) -> Self {
        self.tools = self.tools.sampling_limits(limits);
        self
    }

    /// Runs `#[saga_tool(task)]` tools as durable tasks; see [`SagaToolsBuilder::tasks`].
    pub fn tasks(mut self, store: crate::tasks::TaskStore) -> Self {
        self.tools = self.tools.tasks(store);
        self
    }

    /// Tasks with settings of your own; see [`SagaToolsBuilder::task_settings`].
    pub fn task_settings(mut self, settings: crate::tasks::TaskSettings) -> Self {
        self.tools = self.tools.task_settings(settings);
        self
    }

    /// Adds a tool; see [`SagaToolsBuilder::tool`].
    pub fn tool<T: SagaTool>(mut self, tool: T) -> Self {
        self.tools = self.tools.tool(tool);
        self
    }

    /// Keeps an earlier build of a tool to finish its calls; see
    /// [`SagaToolsBuilder::retired`].
    pub fn retired<T: SagaTool>(mut self, tool: T) -> Self {
        self.tools = self.tools.retired(tool);
        self
    }

    /// Adds a prompt written as a saga; see [`SagaToolsBuilder::prompt`].
    pub fn prompt<T: SagaPrompt>(mut self, prompt: T) -> Self {
        self.tools = self.tools.prompt(prompt);
        self
    }

    /// Adds a resource read by a saga; see [`SagaToolsBuilder::resource`].
    pub fn resource<T: SagaResource>(mut self, uri: impl Into<String>, resource: T) -> Self {
        self.tools = self.tools.resource(uri, resource);
        self
    }

    /// Adds resources matching a template; see [`SagaToolsBuilder::resource_template`].
    pub fn resource_template<T: SagaResource>(
        mut self,
        uri_template: impl Into<String>,
        resource: T,
    ) -> Self {
        self.tools = self.tools.resource_template(uri_template, resource);
        self
    }

    /// Routes of your own served beside `/mcp` by [`SagaServer::router`] and
    /// [`SagaServer::serve_http`], outside MCP's checks and limits (the connection bounds
    /// of [`HttpLimits`](super::HttpLimits) still apply): a health check, or metrics.
    ///
    /// ```no_run
    /// # use saga_runtime::prelude::*;
    /// # async fn serve() -> anyhow::Result<()> {
    /// let health = axum::Router::new().route("/healthz", axum::routing::get(|| async { "ok" }));
    /// SagaServer::builder()
    ///     .keys(KeyRing::ephemeral())
    ///     .routes(health)
    ///     .build()?
    ///     .serve_http("127.0.0.1:8080")
    ///     .await
    /// # }
    /// ```
    pub fn routes(mut self, routes: axum::Router) -> Self {
        self.routes = Some(match self.routes.take() {
            Some(earlier) => earlier.merge(routes),
            None => routes,
        });
        self
    }

    /// Builds the server.
    pub fn build(self) -> Result<SagaServer, BuildError> {
        let info = self
            .tools
            .info
            .clone()
            .unwrap_or_else(|| Implementation::new("saga-server", env!("CARGO_PKG_VERSION")));
        let list_ttl = self.tools.list_ttl;
        let tools = self
            .tools
            .info(info.name.clone(), info.version.clone())
            .build()?;
        Ok(SagaServer {
            tools,
            info,
            instructions: self.instructions,
            http_limits: self.http_limits,
            list_ttl,
            session_idle_timeout: self.session_idle_timeout,
            direct_calls: self.direct_calls,
            routes: self.routes,
            session: Arc::default(),
        })
    }
}
