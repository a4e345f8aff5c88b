//! The per-request context a saga can read: who is calling and what their client can do.

use super::state_size::{StateSize, StateSizeCell};
use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

use rmcp::model::{
    ClientCapabilities, Implementation, LoggingLevel, LoggingMessageNotificationParam,
    Notification, ProgressNotificationParam, ProtocolVersion, RequestId, RequestMetaObject,
    ServerNotification,
};
use rmcp::service::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use crate::engine::caller::era::Era;

/// What the current request says about its sender.
///
/// A tool receives it as a `&SagaContext` parameter. It is built anew on every request from
/// that request alone (MRTR servers never infer capabilities from an earlier request) and
/// is never saved in a token.
///
/// ```
/// use saga_runtime::prelude::*;
/// use saga_runtime::rmcp::model::{ClientCapabilities, ElicitationCapability};
///
/// let mut caps = ClientCapabilities::default();
/// caps.elicitation = Some(ElicitationCapability::default());
/// let cx = SagaContext::new("alice").with_capabilities(caps);
/// assert!(cx.can_elicit());
/// assert!(!cx.can_elicit_url());
/// assert!(!cx.can_sample());
/// ```
#[derive(Debug, Clone, Default)]
pub struct SagaContext {
    peer: Option<Peer<RoleServer>>,
    principal: String,
    /// The pool the bounds count this request against (see `serve::pool`); `None` for
    /// a context built by hand.
    pool: Option<crate::engine::caller::pool::Pool>,
    /// What the request declared of itself: shared, so that a clone of the context (a
    /// round that goes on after its client left takes one) copies none of its maps.
    declared: Shared,
    protocol_version: Option<ProtocolVersion>,
    cancellation: Option<CancellationToken>,
    /// Cancelled when the request's session ends (deleted or expired): a session call
    /// stops, as its client can no longer take its answers.
    session_gone: Option<CancellationToken>,
    /// Where a task's progress goes (its `statusMessage`): a task runs in no request
    /// whose client could take notifications.
    progress_sink: Option<Arc<dyn ProgressSink>>,
    min_log_level: Option<LoggingLevel>,
    request_id: Option<RequestId>,
    notices: Option<Arc<dyn Notices>>,
    /// Where this request's progress and log notifications go when saga writes its
    /// response itself (a stateless call without rmcp's peer; see `outbox`).
    outbox: Option<super::outbox::Outbox>,
    /// An HTTP request outside any session: whatever version its `_meta` names, it has
    /// no session through which its client could answer requests sent during the call.
    sessionless: bool,
    /// The server's model, which answers a `sample()` when its policy says so.
    model: Option<Arc<crate::engine::caller::model::ServerModel>>,
    /// The size of the state this round resumed from, set by the transition.
    state_size: StateSizeCell,
    /// The request's trace (feature `otel`): its context when `_meta` has none, and its
    /// call's span.
    #[cfg(feature = "otel")]
    trace: crate::otel::RequestTrace,
    /// The HTTP request's place among the bounds, which a round that goes on after its
    /// client left takes over (`serve::route::detached`).
    place: Option<crate::engine::caller::pool::SharedPlace>,
}

// SAFETY: every field of `SagaContext` is `Send` and `Sync`: `fields_are_send_sync` names
// each one in an exhaustive pattern (a new field must be named there too) and does not
// compile otherwise, so these are the impls rustc would derive. They are written out
// for the build's sake: a `#[saga_tool]`'s or `#[saga_fn]`'s step holds a `&SagaContext`
// across its awaits, so its future's `Send` needs `SagaContext: Sync`, and rustc proved
// that again for every step, down through rmcp's `Peer` and model types (the proof is
// not shared between the steps' parameter environments): 29 ms of trait solving per
// tool with one helper, measured with `-Z self-profile` on `scripts/bench-compile.sh`'s
// 22-tool crate (728 ms in all, 92 ms with these impls). Written here, each step finds
// the impl at once.
unsafe impl Send for SagaContext {}
// SAFETY: as for `Send` above.
unsafe impl Sync for SagaContext {}

/// Does not compile unless each of `SagaContext`'s fields is `Send` and `Sync` (see the
/// impls above). Never called.
#[allow(dead_code)]
fn fields_are_send_sync(context: &SagaContext) {
    fn send_sync<T: Send + Sync + ?Sized>(_: &T) {}
    let SagaContext {
        peer,
        principal,
        pool,
        declared,
        protocol_version,
        cancellation,
        session_gone,
        progress_sink,
        min_log_level,
        request_id,
        notices,
        outbox,
        sessionless,
        model,
        state_size,
        #[cfg(feature = "otel")]
        trace,
        place,
    } = context;
    #[cfg(feature = "otel")]
    send_sync(trace);
    send_sync(peer);
    send_sync(principal);
    send_sync(pool);
    send_sync(declared);
    send_sync(protocol_version);
    send_sync(cancellation);
    send_sync(session_gone);
    send_sync(progress_sink);
    send_sync(min_log_level);
    send_sync(request_id);
    send_sync(notices);
    send_sync(outbox);
    send_sync(sessionless);
    send_sync(model);
    send_sync(state_size);
    send_sync(place);
}

/// What an HTTP request's head gives its context, whichever path reads the rest.
pub(crate) struct RequestHead {
    pub(crate) principal: String,
    pub(crate) pool: Option<crate::engine::caller::pool::Pool>,
    pub(crate) sessionless: bool,
    pub(crate) session_gone: Option<CancellationToken>,
    pub(crate) notices: Option<Arc<dyn Notices>>,
    pub(crate) model: Option<Arc<crate::engine::caller::model::ServerModel>>,
    /// What its transport says of its trace (feature `otel`).
    #[cfg(feature = "otel")]
    pub(crate) trace: crate::otel::RequestTrace,
    /// Its place among the HTTP bounds, which the guard put in its extensions.
    pub(crate) place: Option<crate::engine::caller::pool::SharedPlace>,
}

/// rmcp's `Implementation::default()`, made once: it is the same value every time (the
/// name and version rmcp was built with).
static DEFAULT_CLIENT_INFO: LazyLock<Implementation> = LazyLock::new(Implementation::default);

/// What a request declared of itself, read by the call and never changed by it: its
/// capabilities, its client's self-description and its `_meta`.
#[derive(Debug, Clone, Default)]
struct Declared {
    capabilities: ClientCapabilities,
    /// Borrowed when it is the default a stateless request without one gets
    /// ([`StatelessMeta::client_info`]): building that default allocated for every request.
    client_info: Option<Cow<'static, Implementation>>,
    meta: RequestMetaObject,
}

/// A context's [`Declared`], shared by its clones.
#[derive(Debug, Clone)]
struct Shared(Arc<Declared>);

/// The declarations of a context that has none (built by hand, or before a request's are
/// known), shared by all of them: a context's default allocates nothing.
static UNDECLARED: LazyLock<Arc<Declared>> = LazyLock::new(Arc::default);

impl Default for Shared {
    fn default() -> Self {
        Shared(Arc::clone(&UNDECLARED))
    }
}

/// What a stateless request's `_meta` and id give its context.
pub(crate) struct StatelessMeta {
    pub(crate) capabilities: ClientCapabilities,
    /// `None` when `_meta` names no client: the context then holds rmcp's default, as
    /// rmcp's context of a stateless request does.
    pub(crate) client_info: Option<Implementation>,
    pub(crate) protocol_version: ProtocolVersion,
    pub(crate) meta: RequestMetaObject,
    pub(crate) request_id: RequestId,
}

impl From<RequestHead> for SagaContext {
    fn from(head: RequestHead) -> Self {
        Self {
            principal: head.principal,
            pool: head.pool,
            sessionless: head.sessionless,
            session_gone: head.session_gone,
            notices: head.notices,
            model: head.model,
            #[cfg(feature = "otel")]
            trace: head.trace,
            place: head.place,
            ..Self::default()
        }
    }
}

impl SagaContext {
    /// The context of a stateless request, built in one piece: each builder method moves
    /// the whole context (over 600 bytes), and the HTTP direct path builds one for every
    /// request.
    pub(crate) fn stateless(head: RequestHead, request: StatelessMeta) -> Self {
        Self {
            declared: Shared(Arc::new(Declared {
                capabilities: request.capabilities,
                client_info: Some(match request.client_info {
                    Some(info) => Cow::Owned(info),
                    None => Cow::Borrowed(&*DEFAULT_CLIENT_INFO),
                }),
                meta: request.meta,
            })),
            protocol_version: Some(request.protocol_version),
            request_id: Some(request.request_id),
            ..Self::from(head)
        }
    }
}

impl SagaContext {
    /// A context for `principal` with no declared capabilities.
    pub fn new(principal: impl Into<String>) -> Self {
        Self {
            principal: principal.into(),
            ..Self::default()
        }
    }

    /// The HTTP request's place among the bounds, taken over by a round that goes on
    /// after its client left; `None` outside HTTP, or once taken.
    pub(crate) fn take_place(&self) -> Option<crate::engine::caller::pool::Place> {
        self.place.as_ref()?.take()
    }

    /// Sets the pool the bounds count this request against: for a task's run, the pool of
    /// the request that created it (its record's quota owner), so that identities made up
    /// at one address share its budgets there too.
    pub(crate) fn with_pool(mut self, pool: crate::engine::caller::pool::Pool) -> Self {
        self.pool = Some(pool);
        self
    }

    /// Sets the server's model (see [`crate::model`]).
    pub(crate) fn with_model(
        mut self,
        model: Option<Arc<crate::engine::caller::model::ServerModel>>,
    ) -> Self {
        self.model = model;
        self
    }

    /// The server's model, when it answers this request's samples without tools: there is
    /// one, and its policy says so for a client that can (or cannot) sample.
    pub(crate) fn server_model(&self) -> Option<&crate::engine::caller::model::ServerModel> {
        self.server_model_for(false)
    }

    /// The server's model, when it answers this request's samples that offer tools
    /// (`tools`) or not: there is one, and its policy says so for a client that can (or
    /// cannot) take such a sample.
    pub(crate) fn server_model_for(
        &self,
        tools: bool,
    ) -> Option<&crate::engine::caller::model::ServerModel> {
        let client_can = if tools {
            self.client_can_sample_with_tools()
        } else {
            self.client_can_sample()
        };
        self.model
            .as_deref()
            .filter(|model| model.policy.server_answers(client_can))
    }

    /// Sets the capabilities the request declared.
    pub fn with_capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        Arc::make_mut(&mut self.declared.0).capabilities = capabilities;
        self
    }

    /// Sets the client's self-description.
    pub(crate) fn with_client_info(mut self, info: Option<Implementation>) -> Self {
        Arc::make_mut(&mut self.declared.0).client_info = info.map(Cow::Owned);
        self
    }

    /// Sets the protocol version the request declared.
    pub fn with_protocol_version(mut self, version: Option<ProtocolVersion>) -> Self {
        self.protocol_version = version;
        self
    }

    /// The request's trace (feature `otel`).
    #[cfg(feature = "otel")]
    pub(crate) fn trace(&self) -> &crate::otel::RequestTrace {
        &self.trace
    }

    /// Sets the request's trace (feature `otel`): a task's worker step's.
    #[cfg(feature = "otel")]
    pub(crate) fn with_trace(mut self, trace: crate::otel::RequestTrace) -> Self {
        self.trace = trace;
        self
    }

    /// The trace a saga's first round keeps (its call's span's ids), when a trace is
    /// recorded (feature `otel`); `None` otherwise.
    #[inline]
    pub(crate) fn first_round_trace(&self) -> Option<crate::state::SagaTrace> {
        #[cfg(feature = "otel")]
        return crate::otel::first_round(&self.trace);
        #[cfg(not(feature = "otel"))]
        None
    }

    /// A later round of the saga whose first span `trace` names: its call's span links to
    /// it (feature `otel`; nothing otherwise).
    #[inline]
    pub(crate) fn resumed_saga(&self, trace: Option<&crate::state::SagaTrace>) {
        #[cfg(feature = "otel")]
        crate::otel::resumed(&self.trace, trace);
        #[cfg(not(feature = "otel"))]
        let _ = trace;
    }

    /// The `traceparent` task `task`, created by this request, keeps of it (feature
    /// `otel`); the task's id is recorded on the request's span.
    #[inline]
    pub(crate) fn task_traceparent(&self, task: &str) -> Option<String> {
        #[cfg(feature = "otel")]
        return crate::otel::task_trace(&self.trace, task);
        #[cfg(not(feature = "otel"))]
        {
            let _ = task;
            None
        }
    }

    /// Records on this request's call span (feature `otel`) how the request ended after
    /// its drive: `outcome`, or the JSON-RPC `error` code it answered instead.
    #[inline]
    pub(crate) fn call_ended(&self, outcome: &'static str, error: Option<i32>) {
        #[cfg(feature = "otel")]
        crate::otel::call_ended(&self.trace, outcome, error);
        #[cfg(not(feature = "otel"))]
        let _ = (outcome, error);
    }

    /// Runs `f` in this request's call span (feature `otel`), so that what it starts is
    /// that span's child; otherwise runs it.
    #[inline]
    pub(crate) fn in_call_span<R>(&self, f: impl FnOnce() -> R) -> R {
        #[cfg(feature = "otel")]
        return crate::otel::in_call(&self.trace, f);
        #[cfg(not(feature = "otel"))]
        f()
    }

    /// Sets the request's `_meta`.
    pub(crate) fn with_meta(mut self, meta: RequestMetaObject) -> Self {
        Arc::make_mut(&mut self.declared.0).meta = meta;
        self
    }

    /// Sets the connection that notifications of this request go to.
    pub(crate) fn with_peer(mut self, peer: Option<Peer<RoleServer>>) -> Self {
        self.peer = peer;
        self
    }

    /// Sets where this request's progress and log notifications go when it has no peer
    /// (see [`super::outbox`]).
    pub(crate) fn with_outbox(mut self, outbox: super::outbox::Outbox) -> Self {
        self.outbox = Some(outbox);
        self
    }

    /// Sets the token that is cancelled when the client cancels this request.
    pub(crate) fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Sets the least severe log level the client wants as `notifications/message`
    /// (`None`: none).
    pub(crate) fn with_min_log_level(mut self, level: Option<LoggingLevel>) -> Self {
        self.min_log_level = level;
        self
    }

    /// Sets the JSON-RPC id of the request (for seed 002's resume tokens, which only the
    /// request of the same id may redeem).
    pub(crate) fn with_request_id(mut self, id: Option<RequestId>) -> Self {
        self.request_id = id;
        self
    }

    /// The JSON-RPC id of the request, when it came through a connection.
    pub fn request_id(&self) -> Option<&RequestId> {
        self.request_id.as_ref()
    }

    /// Where a notification of this request goes to ride the request's own HTTP stream.
    pub(crate) fn notices(&self) -> Option<&dyn Notices> {
        self.notices.as_deref()
    }

    /// The request's era, by the protocol version it names.
    pub fn era(&self) -> Option<Era> {
        self.protocol_version.as_ref().map(Era::of)
    }

    /// Whether this is a request of a session, with a peer to send requests to. A
    /// stateless HTTP request whose `_meta` names a session-era version is not: its client
    /// has no session to answer through, so a call driven as a session's would wait for
    /// answers that cannot come.
    pub(crate) fn is_session(&self) -> bool {
        self.peer.is_some() && self.era() == Some(Era::Session) && !self.sessionless
    }

    /// The connection to the client, when the request came through one.
    ///
    /// `None` for an MRTR `tools/call` served over HTTP without rmcp's per-request service
    /// (see `SagaServerBuilder::direct_calls`): saga writes that call's response itself,
    /// its progress and log notifications included, and a stateless request has no other
    /// use for a connection. Use [`SagaContext::log`] and [`SagaContext::progress`], which
    /// work on every path.
    pub fn peer(&self) -> Option<&Peer<RoleServer>> {
        self.peer.as_ref()
    }

    /// Whether the client cancelled this request (`notifications/cancelled`), or its
    /// session ended (deleted, or expired).
    pub fn is_cancelled(&self) -> bool {
        [&self.cancellation, &self.session_gone]
            .into_iter()
            .flatten()
            .any(CancellationToken::is_cancelled)
    }

    /// Completes when the client cancels this request or its session ends; never, if
    /// neither can happen.
    pub async fn cancelled(&self) {
        let wait = |token: &Option<CancellationToken>| {
            let token = token.clone();
            async move {
                match token {
                    Some(token) => token.cancelled_owned().await,
                    None => std::future::pending().await,
                }
            }
        };
        tokio::select! {
            () = wait(&self.cancellation) => {}
            () = wait(&self.session_gone) => {}
        }
    }

    /// Sends a log message to the client (`notifications/message`) if it asked for
    /// messages of this level: in a 2025-11-25 session, by `logging/setLevel` (all levels
    /// until it does); in MCP 2026-07-28, by the request's `_meta` log level. Otherwise
    /// does nothing. `data` is any JSON value, usually a string.
    pub async fn log(&self, level: LoggingLevel, data: impl Into<serde_json::Value>) {
        let Some(min) = self.min_log_level else {
            return;
        };
        if severity(level) < severity(min) || !self.can_notify() {
            return;
        }
        let param = LoggingMessageNotificationParam::new(level, data.into());
        self.notify(ServerNotification::LoggingMessageNotification(
            Notification::new(param),
        ))
        .await;
    }

    /// Reports progress on this request, if the client asked for it (a `progressToken`
    /// in `_meta`); otherwise does nothing. Over HTTP the response becomes an SSE stream
    /// that carries the notifications before the result.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(sink) = &self.progress_sink {
            let mut text = match total {
                Some(total) => format!("{progress}/{total}"),
                None => format!("{progress}"),
            };
            if let Some(message) = message {
                text.push(' ');
                text.push_str(&message);
            }
            sink.report(text);
            return;
        }
        if !self.can_notify() {
            return;
        }
        let Some(token) = self.declared.0.meta.get_progress_token() else {
            return;
        };
        let mut param = ProgressNotificationParam::new(token, progress);
        param.total = total;
        param.message = message;
        self.notify(ServerNotification::ProgressNotification(Notification::new(
            param,
        )))
        .await;
    }

    /// Whether a notification of this request reaches anyone: its session's peer (or
    /// rmcp's per-request one), or the response saga writes itself (`outbox`).
    fn can_notify(&self) -> bool {
        self.peer.is_some() || self.outbox.is_some()
    }

    /// Sends `notification` where this request's notifications go ([`Self::can_notify`]).
    async fn notify(&self, notification: ServerNotification) {
        if let Some(peer) = &self.peer {
            if let Err(error) = peer.send_notification(notification).await {
                tracing::debug!(%error, "a notification could not be sent");
            }
        } else if let Some(outbox) = &self.outbox {
            outbox.send(notification).await;
        }
    }

    /// The size of the state this round resumed from, and the cap its token is held
    /// to: a tool that keeps a growing history reads it to trim that history itself
    /// (see [`StateSize`]).
    pub fn state_size(&self) -> StateSize {
        self.state_size.get()
    }

    /// Sets what [`SagaContext::state_size`] answers, for the round about to step.
    pub(crate) fn set_state_size(&self, size: StateSize) {
        self.state_size.set(size);
    }

    /// The authenticated identity every token of this request is bound to.
    pub fn principal(&self) -> &str {
        &self.principal
    }

    /// The pool the bounds count this request against: the one its server resolved, or
    /// for a context built by hand, the principal as the server's flag says.
    pub(crate) fn pool(&self, verified: bool) -> crate::engine::caller::pool::Pool {
        self.pool.clone().unwrap_or_else(|| {
            crate::engine::caller::pool::Pool::of(
                &self.principal,
                verified && self.principal != crate::state::ANONYMOUS,
                None,
            )
        })
    }

    /// Whose a state kept in the server's state store is: this request's pool (a
    /// context built by hand counts as unverified, in the shared part).
    pub(crate) fn state_owner(&self) -> crate::state::StateOwner {
        let pool = self.pool(false);
        crate::state::StateOwner {
            key: pool.key(),
            shared: !pool.is_verified(),
        }
    }

    /// The capabilities declared by this request.
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.declared.0.capabilities
    }

    /// The client's name and version, when it sent them.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.declared.0.client_info.as_deref()
    }

    /// The protocol version of this request.
    pub fn protocol_version(&self) -> Option<&ProtocolVersion> {
        self.protocol_version.as_ref()
    }

    /// The request's `_meta` object.
    pub fn meta(&self) -> &RequestMetaObject {
        &self.declared.0.meta
    }
}

/// RFC 5424 order, least severe first.
fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// Where a task's progress goes: the worker keeps the latest and writes it to the task's
/// record as its `statusMessage`.
pub(crate) trait ProgressSink: Send + Sync + std::fmt::Debug {
    /// Keeps `text` (`2/5 table 1`); a later report replaces one not yet written.
    fn report(&self, text: String);
}

impl SagaContext {
    /// Sends this context's progress to `sink` instead of a request's client.
    pub(crate) fn with_progress_sink(mut self, sink: Arc<dyn ProgressSink>) -> Self {
        self.progress_sink = Some(sink);
        self
    }
}

/// Where a call's notifications go when its transport carries them on the call's own
/// response stream (the HTTP layer's, for a resume policy), rather than the session's.
/// The engine only puts; the transport that set the hook takes.
pub(crate) trait Notices: Send + Sync + std::fmt::Debug {
    /// Keeps `message` for the stream; a later message replaces one not yet taken.
    fn put(&self, message: serde_json::Value);
}
