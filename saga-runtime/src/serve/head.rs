//! A request's head: what its transport knows of it besides the call (who sends it, from
//! which pool, in which session, where a session call's notices go) read into the
//! [`RequestHead`] a [`SagaContext`] is built from. Transports put what they know in the
//! request's extensions; this file alone reads them, so the registry and the route never
//! look at HTTP.

use std::sync::Arc;

use rmcp::model::LoggingLevel;
use rmcp::service::{RequestContext, RoleServer};
use tokio_util::sync::CancellationToken;

use super::principal::Identity;
use super::wire::WireCall;
use super::wire::resumable::CallNotices;
use crate::engine::caller::model::ServerModel;
use crate::engine::caller::pool::{Caller, Pool, SharedPlace};
use crate::engine::{RequestHead, SagaContext};
use crate::state::ANONYMOUS;

/// The HTTP header that names the session a request belongs to (a `HeaderName`: a
/// string would be parsed into a name at every lookup).
pub(crate) const SESSION_ID_HEADER: http::HeaderName =
    http::HeaderName::from_static("mcp-session-id");

/// Whether a request with this HTTP head (`None`: not HTTP) is outside any session: it
/// names none with `Mcp-Session-Id`, whatever version its `_meta` names.
pub(crate) fn is_sessionless(parts: Option<&http::request::Parts>) -> bool {
    parts.is_some_and(|parts| !parts.headers.contains_key(SESSION_ID_HEADER))
}

/// Cancelled when a request's session ends: put in the request's extensions by the HTTP
/// transport, read into its [`SagaContext`], so that a call of a deleted or expired
/// session stops.
#[derive(Debug, Clone)]
pub(crate) struct SessionGone(pub(crate) CancellationToken);

/// The log level a session chose with `logging/setLevel`, put in a request's extensions
/// by the server that keeps it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SessionLogLevel(pub(crate) LoggingLevel);

/// What a header-selected wire format's decoding left beside a `tools/call` (MRTR's
/// default without one).
pub(crate) fn wire_call(context: &RequestContext<RoleServer>) -> WireCall {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<WireCall>())
        .map_or_else(WireCall::default, WireCall::clone)
}

/// What the HTTP head of a request (`None`: not HTTP) gives its context, whichever path
/// builds the rest. `caller` is the one the guard resolved, handed over directly (the
/// direct path); otherwise it is read from the request, or resolved.
pub(crate) fn head(
    identity: &Identity,
    model: Option<Arc<ServerModel>>,
    parts: Option<&http::request::Parts>,
    caller: Option<Caller>,
) -> RequestHead {
    let caller = match (caller, parts) {
        (Some(caller), _) => caller,
        (None, Some(parts)) => identity.caller(parts),
        (None, None) => Caller {
            principal: ANONYMOUS.to_owned(),
            pool: Pool::of(ANONYMOUS, false, None),
        },
    };
    RequestHead {
        principal: caller.principal,
        pool: Some(caller.pool),
        sessionless: is_sessionless(parts),
        session_gone: parts
            .and_then(|parts| Some(parts.extensions.get::<SessionGone>()?.0.clone())),
        notices: parts.and_then(|parts| Some(parts.extensions.get::<CallNotices>()?.hook())),
        model,
        #[cfg(feature = "otel")]
        trace: parts.map_or_else(crate::otel::RequestTrace::default, |parts| {
            crate::otel::RequestTrace::of_headers(&parts.headers)
        }),
        place: parts.and_then(|parts| parts.extensions.get::<SharedPlace>().cloned()),
    }
}

/// The [`SagaContext`] of an rmcp request: its head, and what its `_meta` declares.
pub(crate) fn context(
    identity: &Identity,
    model: Option<Arc<ServerModel>>,
    context: &RequestContext<RoleServer>,
) -> SagaContext {
    let capabilities = context.client_capabilities();
    let version = context.protocol_version();
    let min_log_level = if crate::engine::Era::is_session(version.as_ref()) {
        // A session: what `logging/setLevel` chose, everything until it does.
        Some(
            context
                .extensions
                .get::<SessionLogLevel>()
                .map_or(LoggingLevel::Debug, |level| level.0),
        )
    } else {
        context.meta.log_level()
    };
    SagaContext::from(head(
        identity,
        model,
        context.extensions.get::<http::request::Parts>(),
        None,
    ))
    .with_cancellation(context.ct.clone())
    .with_min_log_level(min_log_level)
    .with_peer(Some(context.peer.clone()))
    .with_capabilities(capabilities.unwrap_or_default())
    .with_client_info(context.client_info())
    .with_protocol_version(version)
    .with_meta(context.meta.clone())
    .with_request_id(Some(context.id.clone()))
}
