//! [`Builder`]: one builder for the registry of saga tools ([`SagaTools::builder`], for a
//! server of your own) and for a whole server ([`SagaServer::builder`]). The settings they
//! share (keys and tokens, who the caller is, the tools, prompts and resources, tasks and
//! sampling) are written once; a server's builder adds the server's own.

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::Implementation;

use super::principal::Identity;
use super::server::{DEFAULT_LIST_TTL, DEFAULT_TTL};
use super::server::{DEFAULT_SESSION_IDLE_TIMEOUT, SagaServer};
use super::tools::{BuildError, CallBounds, Registry, SagaTools};
use crate::engine::{SagaPrompt, SagaResource, SagaTool};
use crate::state::{KeyRing, StateCodec};

/// Builds a [`SagaTools`] registry ([`SagaToolsBuilder`]) or a [`SagaServer`]
/// ([`SagaServerBuilder`]): `B` is what [`build`](Builder::build) gives.
///
/// Every setter but the server's own (instructions, HTTP limits, sessions, routes) is
/// shared: a registry inside a server of your own is configured as a `SagaServer` is.
///
/// ```no_run
/// # use saga_runtime::prelude::*;
/// # #[saga_tool] async fn complex_tool() -> Result<String, SagaError> { Ok(String::new()) }
/// # fn run() -> anyhow::Result<()> {
/// let sagas = SagaTools::builder()
///     .keys(KeyRing::from_env("SAGA_KEYS")?)
///     .tool(complex_tool)
///     .build()?;
/// # Ok(()) }
/// ```
#[must_use]
pub struct Builder<B> {
    tools: ToolSettings,
    server: ServerSettings,
    built: PhantomData<fn() -> B>,
}

/// Builds a [`SagaTools`] registry: [`SagaTools::builder`].
pub type SagaToolsBuilder = Builder<SagaTools>;

/// Builds a [`SagaServer`]: [`SagaServer::builder`].
pub type SagaServerBuilder = Builder<SagaServer>;

/// What a registry needs, whether it serves alone or inside a [`SagaServer`].
struct ToolSettings {
    info: Option<Implementation>,
    keys: Option<KeyRing>,
    ttl: Duration,
    list_ttl: Duration,
    max_token_len: Option<usize>,
    max_state_values: Option<usize>,
    leeway: Option<Duration>,
    token_format: Option<crate::state::TokenFormat>,
    single_use: Option<Arc<dyn crate::state::TokenStore>>,
    state_store: Option<crate::tasks::StateSettings>,
    identity: Identity,
    registry: Registry,
    tasks: Option<crate::tasks::TaskSettings>,
    bounds: CallBounds,
    diagrams_listed: bool,
    model: Option<Arc<dyn crate::engine::caller::model::Model>>,
    sampling_policy: Option<crate::engine::caller::model::SamplingPolicy>,
    sampling_limits: crate::engine::caller::model::SamplingLimits,
}

/// What only a [`SagaServer`] has. A [`SagaToolsBuilder`] carries the defaults and never
/// reads them: no setter of its type writes them.
struct ServerSettings {
    instructions: Option<String>,
    http_limits: super::limits::HttpLimits,
    session_idle_timeout: Duration,
    shutdown_grace: Duration,
    direct_calls: bool,
    #[cfg(feature = "http")]
    routes: Option<axum::Router>,
    #[cfg(feature = "oauth")]
    authorization: Option<super::auth::ResourceServer>,
}

impl<B> std::fmt::Debug for Builder<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("info", &self.tools.info)
            .field("keys", &self.tools.keys)
            .field("ttl", &self.tools.ttl)
            .field(
                "tools",
                &self
                    .tools
                    .registry
                    .tools
                    .iter()
                    .map(|(tool, _)| &tool.name)
                    .collect::<Vec<_>>(),
            )
            .field("http_limits", &self.server.http_limits)
            .finish_non_exhaustive()
    }
}

impl<B> Default for Builder<B> {
    fn default() -> Self {
        Self {
            tools: ToolSettings {
                info: None,
                keys: None,
                ttl: DEFAULT_TTL,
                list_ttl: DEFAULT_LIST_TTL,
                max_token_len: None,
                max_state_values: None,
                leeway: None,
                token_format: None,
                single_use: None,
                state_store: None,
                identity: Identity::default(),
                registry: Registry::default(),
                tasks: None,
                bounds: CallBounds::default(),
                diagrams_listed: false,
                model: None,
                sampling_policy: None,
                sampling_limits: crate::engine::caller::model::SamplingLimits::default(),
            },
            server: ServerSettings {
                instructions: None,
                http_limits: super::limits::HttpLimits::default(),
                session_idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
                shutdown_grace: super::shutdown::DEFAULT_SHUTDOWN_GRACE,
                direct_calls: true,
                #[cfg(feature = "http")]
                routes: None,
                #[cfg(feature = "oauth")]
                authorization: None,
            },
            built: PhantomData,
        }
    }
}

impl<B> Builder<B> {
    /// The server's name and version, sent in `serverInfo` and in every result's
    /// `_meta`. Inside another rmcp server ([`SagaTools::router`]) that server's own
    /// `serverInfo` is used instead.
    pub fn info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.tools.info = Some(Implementation::new(name, version));
        self
    }

    /// The keys that seal and open tokens. Required.
    pub fn keys(mut self, keys: KeyRing) -> Self {
        self.tools.keys = Some(keys);
        self
    }

    /// How long a token stays valid after it is issued (default 10 minutes). Each round
    /// issues a fresh token, so this bounds the time a user may take to answer one round.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.tools.ttl = ttl;
        self
    }

    /// How long clients may cache `tools/list` and `server/discover` (default 5 minutes).
    pub fn list_ttl(mut self, ttl: Duration) -> Self {
        self.tools.list_ttl = ttl;
        self
    }

    /// The longest token accepted, in bytes (default 64 KiB); longer ones are refused
    /// before any decoding. The server never issues a token it would refuse: a state
    /// that would seal longer ends its call with the tool's error instead.
    ///
    /// A [`SagaServer`] seals no token longer than three quarters of
    /// [`HttpLimits::max_body_bytes`](super::HttpLimits::max_body_bytes) either, whatever
    /// this says: a client sends its token back inside a request body, beside the call's
    /// arguments and answers, so a longer one could not come back. Raise both together.
    pub fn max_token_len(mut self, max: usize) -> Self {
        self.tools.max_token_len = Some(max);
        self
    }

    /// The most values (scalars, sequences, maps, keys) a call's saved state may hold in
    /// its self-describing locals (`serde_json::Value`, a sampling history, any type kept
    /// as MessagePack): 100,000 by default, as many as one request may carry
    /// ([`HttpLimits::max_json_values`](super::HttpLimits::max_json_values)). A state's
    /// bytes are bounded by the token cap (or the state store's bound); its values cost
    /// memory out of proportion to its bytes once read back (a small number is one byte
    /// sealed and some 80 bytes read), so this bounds what one request's state costs the
    /// server. A round whose state would hold more ends its call with an error (the
    /// client's, `-32602`, when this request's answers are most of the state; else the
    /// tool's), and a token whose state holds more (sealed under a higher bound) is
    /// refused before it is read whole. Raise it for tools that keep large JSON documents,
    /// with the memory per request in mind (SECURITY.md, "What one request may cost").
    pub fn max_state_values(mut self, values: usize) -> Self {
        self.tools.max_state_values = Some(values);
        self
    }

    /// How long past its expiry a token is still accepted, for replicas whose clocks
    /// disagree (default 60 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.tools.leeway = Some(leeway);
        self
    }

    /// The newest format the server seals its tokens in (default [`TokenFormat::SEALED`]:
    /// 0x60 for a state that deflates smaller, 0x50 for any other, each led by the saga's
    /// trace, as 0x90 and 0x80, when its first round was traced with the `otel` feature).
    /// This build opens every one of them, but a build before 0x80 refuses a traced token,
    /// one before 0x60 a 0x60 token, and one before 0x50 a 0x50 token: while a fleet still
    /// runs such a build (a rolling deploy onto this one), set [`TokenFormat::Deflated`]
    /// (0x50 and 0x60, no trace), [`TokenFormat::Compact`] (0x50, never deflated) or
    /// [`TokenFormat::Fixed`] (0x40), so that any replica can take any round, and remove
    /// it once no replica of the older build is left.
    ///
    /// ```
    /// use saga_runtime::prelude::*;
    /// use saga_runtime::state::TokenFormat;
    ///
    /// let builder = SagaServer::builder()
    ///     .keys(KeyRing::ephemeral())
    ///     .token_format(TokenFormat::Fixed);
    /// # let _ = builder;
    /// ```
    ///
    /// [`TokenFormat::SEALED`]: crate::state::TokenFormat::SEALED
    /// [`TokenFormat::Fixed`]: crate::state::TokenFormat::Fixed
    /// [`TokenFormat::Compact`]: crate::state::TokenFormat::Compact
    /// [`TokenFormat::Deflated`]: crate::state::TokenFormat::Deflated
    pub fn token_format(mut self, format: crate::state::TokenFormat) -> Self {
        self.tools.token_format = Some(format);
        self
    }

    /// Makes every token redeemable once, recorded in `store` (a [`MemoryStore`] for one
    /// process, a `SqliteStore` file for one machine, a `RedisStore` or `PostgresStore`
    /// for replicas): its round runs once. A store that records outcomes (all of these)
    /// keeps the answer each token's request got: the same request sent again (its
    /// response was lost) gets that answer again, byte for byte, without running the round;
    /// with other answers it is refused like a forged token. See the guide's "Retries and
    /// effects" and SECURITY.md for what the store holds and for how long.
    ///
    /// [`MemoryStore`]: crate::state::MemoryStore
    pub fn single_use(mut self, store: impl crate::state::TokenStore) -> Self {
        self.tools.single_use = Some(Arc::new(store));
        self
    }

    /// Keeps a state too large for its token in `store`, by reference: a token longer
    /// than [`StateSettings::inline_max`] (8 KiB by default) is written to the store,
    /// sealed as it is, and the client carries a short reference to it, bound and
    /// checked as the token would be (its key, the state's SHA-256, the same seal). A
    /// kept state may then grow to 64 times the token cap (4 MiB of saved state by
    /// default, deflated first) instead of the cap itself; below the inline bound
    /// nothing changes. Every replica that serves the calls must share the store (Redis,
    /// Postgres, or SQLite on one machine). The store's byte bounds, per verified
    /// principal, per pool of unverified callers and for all of them together, are
    /// [`StateSettings`]'.
    ///
    /// ```no_run
    /// use saga_runtime::prelude::*;
    ///
    /// # fn build() -> anyhow::Result<()> {
    /// let server = SagaServer::builder()
    ///     .keys(KeyRing::from_env("SAGA_KEYS")?)
    ///     // TaskStore::sqlite("saga.db")? (feature `sqlite`), redis or postgres in production
    ///     .state_store(TaskStore::memory())
    ///     .build()?;
    /// # let _ = server;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// [`StateSettings::inline_max`]: crate::tasks::StateSettings::inline_max
    /// [`StateSettings`]: crate::tasks::StateSettings
    pub fn state_store(mut self, store: impl Into<crate::tasks::StateSettings>) -> Self {
        self.tools.state_store = Some(store.into());
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
        self.tools.identity.principal = super::principal::principal_from_headers(names);
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
        self.tools.identity.principal = Arc::new(principal);
        self
    }

    /// Says that the principals are verified identities: your
    /// [`principal`](Self::principal) function, or a proxy or middleware in front of
    /// saga, checks the credentials they are derived from (a proxy that refuses every
    /// request without a valid token). By default they are not: the default principal
    /// digests whatever `Authorization` header a request brings, and a client can make
    /// up as many as it likes. Each principal owns its tokens, sessions and tasks either
    /// way; what this changes is whom the bounds count a request against: a verified
    /// principal gets a share of its own of each bound, and everyone else shares the
    /// pool of unverified callers at their address (see [`authenticate`](Self::authenticate)
    /// and SECURITY.md). [`ANONYMOUS`] is never verified.
    ///
    /// [`ANONYMOUS`]: super::ANONYMOUS
    pub fn verified_principals(mut self, verified: bool) -> Self {
        self.tools.identity.verified = verified;
        self
    }

    /// Authenticates requests: `check` returns the name of the principal whose
    /// credentials a request carries, once your code has checked them (an API key looked
    /// up, an OAuth token's signature and audience verified), or `None` for a caller
    /// nobody verified. A verified request's principal is `verified:NAME` (bound into its
    /// tokens), and it counts against a share of its own of every bound; the others keep
    /// the [`principal`](Self::principal) function's principal and share the pool of
    /// unverified callers at their address, which takes at most
    /// [`UNVERIFIED_PART`](super::UNVERIFIED_PART) % of each global bound, so that made-up
    /// identities never lock verified principals out.
    ///
    /// A layer in front of [`SagaServer::router`](super::SagaServer::router) may instead
    /// put a [`VerifiedPrincipal`](super::VerifiedPrincipal) in the request's extensions.
    ///
    /// ```
    /// # use saga_runtime::serve::SagaToolsBuilder;
    /// let keys = ["k-7f3a9c".to_owned()];
    /// let tools = SagaToolsBuilder::default().authenticate(move |parts| {
    ///     let key = parts.headers.get("x-api-key")?.to_str().ok()?;
    ///     keys.iter().any(|known| known == key).then(|| format!("key-{}", &key[..4]))
    /// });
    /// ```
    pub fn authenticate<F>(mut self, check: F) -> Self
    where
        F: Fn(&http::request::Parts) -> Option<String> + Send + Sync + 'static,
    {
        self.tools.identity.authenticate = Some(Arc::new(check));
        self
    }

    /// Refuses, over HTTP, every request whose caller nobody verified: no
    /// [`authenticate`](Self::authenticate) check accepted its credentials (or it carried
    /// none), no layer in front put a [`VerifiedPrincipal`](super::VerifiedPrincipal) in
    /// it, and the server's principals are not [verified](Self::verified_principals). Such a
    /// request gets HTTP 401 with a JSON-RPC error that says so, before its body is read;
    /// nothing of it runs, and it holds no place of any bound.
    ///
    /// Without it, `authenticate` only tells verified callers apart: a caller it cannot
    /// verify is still served, as an unverified one (its tokens bound to the principal the
    /// [`principal`](Self::principal) function gives it, its bounds shared with every
    /// unverified caller at its address). Over stdio (`serve_stdio`) there are no
    /// credentials to check: the process that spawned the server is its only caller, and
    /// it is served.
    ///
    /// ```
    /// # use saga_runtime::prelude::*;
    /// let keys = ["k-7f3a9c".to_owned()];
    /// let server = SagaServer::builder()
    ///     .keys(KeyRing::ephemeral())
    ///     .authenticate(move |parts| {
    ///         let key = parts.headers.get("x-api-key")?.to_str().ok()?;
    ///         keys.iter().any(|known| known == key).then(|| "ops".to_owned())
    ///     })
    ///     .require_verified()
    ///     .build();
    /// # assert!(server.is_ok());
    /// ```
    pub fn require_verified(mut self) -> Self {
        self.tools.identity.required = true;
        self
    }

    /// Refuses a call of one of `tools` whose caller nobody verified (see
    /// [`require_verified`](Self::require_verified), which gates the whole server): such a
    /// call gets `-32600` saying the tool serves only verified callers, before anything of
    /// it runs, in every era and over every transport (over stdio nobody is verified, so
    /// such a tool is refused there). Every other tool serves any caller. Naming a tool the
    /// server does not have is a build error.
    ///
    /// ```
    /// # use saga_runtime::prelude::*;
    /// # #[saga_tool]
    /// # async fn deploy(service: String) -> Result<String, SagaError> { Ok(service) }
    /// let server = SagaServer::builder()
    ///     .keys(KeyRing::ephemeral())
    ///     .tool(deploy)
    ///     .authenticate(|parts| parts.headers.get("x-api-key").map(|_| "ops".to_owned()))
    ///     .require_verified_for(["deploy"])
    ///     .build();
    /// # assert!(server.is_ok());
    /// ```
    pub fn require_verified_for<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools
            .identity
            .verified_tools
            .extend(tools.into_iter().map(Into::into));
        self
    }

    /// Whether `tools/list` carries each tool's workflow diagram in its `_meta` (under
    /// `saga/diagram`, which `saga graph URL TOOL` reads); off by default. A diagram shows
    /// the tool's conditions, questions and format strings as written, to every client
    /// that lists the tools, so a server lists them only when it says so (a development
    /// server, or one whose code is public). `SagaTool::diagram()` and the rustdoc keep
    /// them either way.
    pub fn diagrams_in_tool_list(mut self, listed: bool) -> Self {
        self.tools.diagrams_listed = listed;
        self
    }

    /// Runs the `#[saga_tool(task)]` tools as durable tasks (MCP tasks extension) for the
    /// clients that declare it, their records in `store`: [`TaskStore::memory`] in this
    /// process, `TaskStore::redis(url)` shared by replicas. See [`crate::tasks`].
    ///
    /// [`TaskStore::memory`]: crate::tasks::TaskStore::memory
    pub fn tasks(self, store: crate::tasks::TaskStore) -> Self {
        self.task_settings(crate::tasks::TaskSettings::new(store))
    }

    /// [`tasks`](Self::tasks) with settings of your own (record lifetime, poll
    /// interval, lease).
    pub fn task_settings(mut self, settings: crate::tasks::TaskSettings) -> Self {
        self.tools.tasks = Some(settings);
        self
    }

    /// Adds a tool.
    pub fn tool<T: SagaTool>(mut self, tool: T) -> Self {
        let description = tool.tool();
        let saga = self.tools.compile(tool, &description.name);
        self.tools.register(description, saga);
        self
    }

    /// Keeps an earlier build of a tool to finish the calls and tasks it started: the
    /// previous code, with the types it saves and its `#[saga_fn]` helpers, copied
    /// unchanged into a module of its own, so that every name stays as it was (a saved
    /// type renamed is another layout). It is never listed and never starts a call; it
    /// resumes the tokens whose suspension point (name, version and saved layout) it has
    /// and the current build has not, and runs them to the end on its own code. Several
    /// may be kept. [`deploy::check_layout`](crate::deploy::check_layout) spells out the
    /// module for each tool whose calls a build would refuse.
    ///
    /// ```
    /// use saga_runtime::prelude::*;
    ///
    /// #[derive(Debug, Serialize, Deserialize)]
    /// struct Payment { to: String, cents: i64 }
    ///
    /// /// Pays, saving the amount in cents.
    /// #[saga_tool]
    /// async fn pay(to: String) -> Result<String, SagaError> {
    ///     let cents: i64 = elicit("How much, in cents?").await?;
    ///     let payment = Payment { to, cents };
    ///     let ok: bool = elicit(format!("Pay {} cents?", payment.cents)).await?;
    ///     Ok(format!("paid {ok} to {}", payment.to))
    /// }
    ///
    /// /// The build before, unchanged: its `Payment` saved dollars.
    /// mod pay_v0 {
    ///     use saga_runtime::prelude::*;
    ///
    ///     #[derive(Debug, Serialize, Deserialize)]
    ///     pub struct Payment { pub to: String, pub dollars: i64 }
    ///
    ///     #[saga_tool]
    ///     pub async fn pay(to: String) -> Result<String, SagaError> {
    ///         let dollars: i64 = elicit("How much, in dollars?").await?;
    ///         let payment = Payment { to, dollars };
    ///         let ok: bool = elicit(format!("Pay {} dollars?", payment.dollars)).await?;
    ///         Ok(format!("paid {ok} to {}", payment.to))
    ///     }
    /// }
    ///
    /// let tools = SagaTools::builder()
    ///     .keys(KeyRing::ephemeral())
    ///     .tool(pay)
    ///     .retired(pay_v0::pay)
    ///     .build()
    ///     .expect("builds");
    /// assert_eq!(tools.tools().count(), 1);
    /// ```
    pub fn retired<T: SagaTool>(mut self, tool: T) -> Self {
        let description = tool.tool();
        if let Some(saga) = self.tools.compile(tool, &description.name) {
            self.tools.registry.retired.push((description, saga));
        }
        self
    }

    /// Adds a prompt written as a saga (`#[saga_prompt]`, returning [`Prompt`]): its
    /// function's name, doc comment and arguments (strings) describe the prompt, and
    /// `prompts/get` runs it, with input-required rounds if it suspends.
    ///
    /// [`Prompt`]: crate::engine::Prompt
    pub fn prompt<T: SagaPrompt>(mut self, prompt: T) -> Self {
        let description = prompt.tool();
        if let Some(saga) = self.tools.compile(prompt, &description.name) {
            self.tools
                .registry
                .prompts
                .push((super::catalog::prompt_of(&description), saga));
        }
        self
    }

    /// Adds a resource at `uri` read by a saga (`#[saga_resource]`, taking `uri: String`
    /// and returning [`Contents`]).
    ///
    /// [`Contents`]: crate::engine::Contents
    pub fn resource<T: SagaResource>(mut self, uri: impl Into<String>, resource: T) -> Self {
        let description = resource.tool();
        if let Some(saga) = self.tools.compile(resource, &description.name) {
            self.tools
                .registry
                .resources
                .push((super::catalog::resource_of(uri.into(), &description), saga));
        }
        self
    }

    /// Adds resources matching `uri_template` (e.g. `test://items/{id}`), read by a saga
    /// that takes `uri: String` and one `String` argument per template variable.
    pub fn resource_template<T: SagaResource>(
        mut self,
        uri_template: impl Into<String>,
        resource: T,
    ) -> Self {
        let description = resource.tool();
        if let Some(saga) = self.tools.compile(resource, &description.name) {
            self.tools.registry.templates.push((
                super::catalog::template_of(uri_template.into(), &description),
                saga,
            ));
        }
        self
    }

    /// How long one request's run may take (default [`DEFAULT_MAX_RUN_TIME`], 60 s): a
    /// call still running then is stopped at its next `.await` and answered with
    /// `-32603`, so that no call holds a request place for longer. Work that takes longer
    /// belongs in a task (`#[saga_tool(task)]`), or in rounds: each MRTR round is a
    /// request of its own. A call of a session (MCP 2025-11-25) is bounded by
    /// [`client_request_timeout`](Self::client_request_timeout) instead while it waits
    /// for its client.
    ///
    /// [`DEFAULT_MAX_RUN_TIME`]: super::DEFAULT_MAX_RUN_TIME
    pub fn max_run_time(mut self, max: Duration) -> Self {
        self.tools.bounds.max_run_time = max;
        self
    }

    /// How long a session (MCP 2025-11-25) waits for its client to answer one request it
    /// sent (an elicitation, a sampling request, `roots/list`; default
    /// [`DEFAULT_CLIENT_REQUEST_TIMEOUT`], 5 minutes). The call then fails with
    /// `-32603`, and what it held is freed: a client that walks away cannot keep it.
    ///
    /// [`DEFAULT_CLIENT_REQUEST_TIMEOUT`]: super::DEFAULT_CLIENT_REQUEST_TIMEOUT
    pub fn client_request_timeout(mut self, timeout: Duration) -> Self {
        self.tools.bounds.client_request_timeout = timeout;
        self
    }

    /// A model the server calls to answer a tool's `sample()` when the client does not
    /// ([`crate::model`]): by default ([`SamplingPolicy::ClientFirst`]) for each request
    /// whose client did not declare sampling, in the same request, with no round trip.
    ///
    /// [`SamplingPolicy::ClientFirst`]: crate::engine::caller::model::SamplingPolicy::ClientFirst
    pub fn model(mut self, model: impl crate::engine::caller::model::Model) -> Self {
        self.tools.model = Some(Arc::new(model));
        self
    }

    /// Who answers a `sample()` ([`SamplingPolicy`](crate::engine::caller::model::SamplingPolicy)):
    /// client first by default with a model, the client only without one. A policy that
    /// asks the server's model needs [`model`](Self::model).
    pub fn sampling_policy(mut self, policy: crate::engine::caller::model::SamplingPolicy) -> Self {
        self.tools.sampling_policy = Some(policy);
        self
    }

    /// The bounds on the server's model ([`SamplingLimits`](crate::engine::caller::model::SamplingLimits)).
    pub fn sampling_limits(mut self, limits: crate::engine::caller::model::SamplingLimits) -> Self {
        self.tools.sampling_limits = limits;
        self
    }
}

impl Builder<SagaTools> {
    /// Builds the registry.
    pub fn build(self) -> Result<SagaTools, BuildError> {
        self.tools.build()
    }
}

/// The server's own settings.
impl Builder<SagaServer> {
    /// Instructions for the client's model, sent by `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.server.instructions = Some(text.into());
        self
    }

    /// The bounds on what one HTTP request, connection and the whole server may cost;
    /// see [`HttpLimits`](super::limits::HttpLimits) for each default.
    pub fn http_limits(mut self, limits: super::limits::HttpLimits) -> Self {
        self.server.http_limits = limits;
        self
    }

    /// How long a session opened with `initialize` (MCP 2025-11-25 and 2025-06-18) is kept
    /// without requests before it is closed (default 5 minutes).
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.server.session_idle_timeout = timeout;
        self
    }

    /// How long a server asked to stop (SIGTERM, Ctrl-C, or the future given to
    /// [`SagaServer::serve_http_until`]) lets the requests in flight, and the rounds that go
    /// on after their clients left, finish and record their outcomes before it returns
    /// (default 25 s, [`DEFAULT_SHUTDOWN_GRACE`](super::DEFAULT_SHUTDOWN_GRACE)). Keep it
    /// under the time your orchestrator waits before it kills the process (Kubernetes'
    /// `terminationGracePeriodSeconds`, 30 s by default), with room to flush telemetry.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.server.shutdown_grace = grace;
        self
    }

    /// Whether a stateless (MCP 2026-07-28) request over HTTP that rmcp's transport would
    /// accept exactly as it is runs without rmcp's per-request service (default: `true`):
    /// an MRTR `tools/call`, a listing (`tools/list`, `prompts/list`, `resources/list`,
    /// `resources/templates/list`, `server/discover`), `prompts/get`, `resources/read`,
    /// `tasks/get` / `update` / `cancel`, seed 000's `tools/callSaga` / `resumeSaga`, a
    /// client's notification, or a method saga does not serve statelessly (`ping`,
    /// `logging/setLevel`, …).
    ///
    /// rmcp still answers every other request and every refusal: a request is served
    /// directly only after the checks rmcp makes (allowed `Host` and `Origin`, `Accept`,
    /// the JSON-RPC message, `MCP-Protocol-Version` and `_meta`, `Mcp-Method` /
    /// `Mcp-Name` / `Mcp-Param-*`) are seen to pass. A request that asks for progress or log messages gets
    /// them as rmcp would send them: one JSON answer if it sent none, otherwise an SSE
    /// stream of its notifications, then its answer. The answers are the same either way;
    /// the direct path costs less CPU per call (BENCHMARKS.md). On it,
    /// [`SagaContext::peer`](crate::engine::SagaContext::peer) is `None`: use
    /// [`SagaContext::log`](crate::engine::SagaContext::log) and
    /// [`SagaContext::progress`](crate::engine::SagaContext::progress), which work on every
    /// path. Turn it off to serve every request through rmcp, for example to compare the
    /// two.
    pub fn direct_calls(mut self, enabled: bool) -> Self {
        self.server.direct_calls = enabled;
        self
    }

    /// Routes of your own served beside `/mcp` by [`SagaServer::router`] and
    /// [`SagaServer::serve_http`]: a health check, or metrics. They answer the hosts
    /// `/mcp` answers (rmcp's allowed hosts: a request naming another `Host` is refused
    /// with 403, as a DNS-rebinding page would be), and at most
    /// [`max_concurrent_requests`](super::limits::HttpLimits) of them run at once (503 beyond);
    /// the connection bounds of [`HttpLimits`](super::limits::HttpLimits) apply too. MCP's other
    /// checks do not: a route that must not be public (`/metrics` tells request counts
    /// and timings) needs its own authentication, or a listener only operators reach.
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
    ///     .await?;
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "http")]
    pub fn routes(mut self, routes: axum::Router) -> Self {
        self.server.routes = Some(match self.server.routes.take() {
            Some(earlier) => earlier.merge(routes),
            None => routes,
        });
        self
    }

    /// Authorization as MCP specifies it (feature `oauth`): the server as an OAuth 2.1
    /// resource server ([`crate::serve::auth`]). Every request to `/mcp` then needs a
    /// bearer token the [`ResourceServer`](super::auth::ResourceServer)'s verifier
    /// accepts, issued for its resource, and the scopes its operation needs; the token's
    /// issuer and subject are the request's verified principal. Its metadata is served at
    /// `/.well-known/oauth-protected-resource`.
    #[cfg(feature = "oauth")]
    pub fn authorization(mut self, resource_server: super::auth::ResourceServer) -> Self {
        self.server.authorization = Some(resource_server);
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
        let mut tools = self.tools;
        tools.info = Some(info.clone());
        let server = self.server;
        // One set of limits: a token the server issues is one it accepts back, so it fits
        // a request body with room for the call's arguments and answers beside it.
        let carried = server.http_limits.max_body_bytes / 4 * 3;
        let cap = tools
            .max_token_len
            .unwrap_or(crate::state::DEFAULT_MAX_TOKEN_LEN);
        if cap > carried {
            tracing::warn!(
                max_token_len = cap,
                max_body_bytes = server.http_limits.max_body_bytes,
                sealed_up_to = carried,
                "tokens are sealed up to three quarters of the request body limit: raise \
                 HttpLimits::max_body_bytes with max_token_len"
            );
            tools.max_token_len = Some(carried);
        }
        // What a restart would lose, said when the server starts serving HTTP.
        let volatile = [
            (
                "state store",
                tools.state_store.as_ref().map(|settings| &settings.store),
            ),
            (
                "task store",
                tools.tasks.as_ref().map(|settings| &settings.store),
            ),
        ]
        .into_iter()
        .filter(|(_, store)| store.is_some_and(|store| !store.backend().survives_restarts()))
        .map(|(what, _)| what)
        .collect();
        let tools = tools.build()?;
        #[cfg(feature = "oauth")]
        let authorization = match server.authorization {
            Some(authorization) => Some(Arc::new(
                authorization.checked().map_err(BuildError::Authorization)?,
            )),
            None => None,
        };
        Ok(SagaServer {
            tools,
            info,
            instructions: server.instructions,
            http_limits: server.http_limits,
            list_ttl,
            session_idle_timeout: server.session_idle_timeout,
            shutdown_grace: server.shutdown_grace,
            direct_calls: server.direct_calls,
            volatile,
            #[cfg(feature = "http")]
            routes: server.routes,
            #[cfg(feature = "oauth")]
            authorization,
            session: Arc::default(),
        })
    }
}

impl ToolSettings {
    /// Traces `tool`'s points; an error is kept for `build()` to report.
    fn compile<T: SagaTool>(
        &mut self,
        tool: T,
        name: &str,
    ) -> Option<crate::engine::runner::family::Saga> {
        match crate::engine::runner::family::Compiled::new(tool, name) {
            Ok(compiled) => Some(Arc::new(compiled)),
            Err(error) => {
                self.registry.errors.push(BuildError::Layout {
                    tool: name.to_owned(),
                    error,
                });
                None
            }
        }
    }

    /// Lists a compiled tool. Apart from [`Builder::tool`] so that it is compiled once,
    /// not once per tool.
    fn register(
        &mut self,
        mut description: rmcp::model::Tool,
        saga: Option<crate::engine::runner::family::Saga>,
    ) {
        let Some(saga) = saga else {
            return;
        };
        // The diagram the client sees draws no ordinary `async fn`'s call as a
        // suspension: the types (its point saves nothing) say it never suspends.
        let never = saga.points().never();
        if !never.is_empty()
            && let Some(diagram) = crate::engine::diagram_of(&description)
        {
            let never: Vec<&str> = never.iter().map(String::as_str).collect();
            let fixed = crate::engine::drop_states(diagram, &never);
            if let Some(meta) = description.meta.as_mut() {
                meta.0.insert(
                    crate::engine::DIAGRAM_META_KEY.to_owned(),
                    serde_json::Value::String(fixed),
                );
            }
        }
        self.registry.tools.push((description, saga));
    }

    /// The registry these settings describe.
    fn build(self) -> Result<SagaTools, BuildError> {
        use crate::engine::caller::model::SamplingPolicy;
        let policy = self.sampling_policy.unwrap_or(SamplingPolicy::ClientFirst);
        let sample_timeout = self.sampling_limits.timeout;
        if self.model.is_some() && sample_timeout >= self.bounds.max_run_time {
            return Err(BuildError::SampleTimeout {
                sample: sample_timeout,
                run: self.bounds.max_run_time,
            });
        }
        let model = match self.model {
            Some(model) => Some(Arc::new(crate::engine::caller::model::ServerModel::new(
                model,
                policy,
                self.sampling_limits,
            ))),
            None if policy == SamplingPolicy::ClientOnly || self.sampling_policy.is_none() => None,
            None => return Err(BuildError::NoModel(policy)),
        };
        let keys = self.keys.ok_or(BuildError::NoKeys)?;
        let mut codec = StateCodec::new(keys, self.ttl);
        if let Some(max) = self.max_token_len {
            codec = codec.with_max_token_len(max);
        }
        if let Some(values) = self.max_state_values {
            codec = codec.with_max_state_values(values);
        }
        // A retry waits for its first sending within its own run-time bound: in one
        // process it may wait twice (for the token's mark, then for its claim), so a third
        // of the bound each leaves the rest for opening and answering.
        codec = codec
            .with_retry_wait(crate::state::DEFAULT_RETRY_WAIT.min(self.bounds.max_run_time / 3));
        if let Some(leeway) = self.leeway {
            codec = codec.with_leeway(leeway);
        }
        if let Some(format) = self.token_format {
            // A reference, or a traced token of a codec that traces: what the codec seals
            // in is `TracedDeflated` (0x80/0x90 for traced sagas), never these themselves.
            if matches!(
                format,
                crate::state::TokenFormat::Kept | crate::state::TokenFormat::Traced
            ) {
                return Err(BuildError::SealFormat(format));
            }
            codec = codec.with_format(format);
        }
        if let Some(store) = self.single_use {
            // A claimed round is held for a request's longest run, and a minute more: a
            // retry past it is told its first request's answer is lost.
            codec = codec
                .with_single_use(store)
                .with_outcome_lease(self.bounds.max_run_time + Duration::from_secs(60));
        }
        if let Some(states) = &self.state_store {
            codec = codec.with_state_store(states.keeper(), states.inline_max);
        }
        let list_ttl_ms = u64::try_from(self.list_ttl.as_millis()).unwrap_or(u64::MAX);
        let mut registry = self.registry;
        registry.model = model;
        if !self.diagrams_listed {
            for (tool, _) in &mut registry.tools {
                if let Some(meta) = tool.meta.as_mut() {
                    if let Some(serde_json::Value::String(diagram)) =
                        meta.0.remove(crate::engine::DIAGRAM_META_KEY)
                    {
                        registry
                            .unlisted_diagrams
                            .insert(tool.name.to_string(), diagram);
                    }
                    if meta.0.is_empty() {
                        tool.meta = None;
                    }
                }
            }
        }
        SagaTools::new(
            codec,
            registry,
            self.identity,
            list_ttl_ms,
            self.info,
            self.tasks,
            self.bounds,
        )
    }
}

impl SagaTools {
    /// Starts a builder of the registry alone, for a server of your own; see
    /// [`SagaTools::router`] to add the tools to an rmcp `#[tool_router]` server.
    pub fn builder() -> SagaToolsBuilder {
        Builder::default()
    }
}

impl SagaServer {
    /// Starts a builder.
    pub fn builder() -> SagaServerBuilder {
        Builder::default()
    }
}
