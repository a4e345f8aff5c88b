//! Seed 002 (SEP-975): transport-agnostic resumable requests, over sealed state.
//!
//! A client that declares the `resumableRequests` capability in `initialize` receives,
//! while a call of its session is suspended or checkpointing,
//! `notifications/requests/resumePolicy` with a `resumeToken` and `maxWait` (seconds). The
//! token is the saga's sealed state at that point, with the request it belongs to (its
//! JSON-RPC id, method, tool and arguments), sealed again for the principal: the server
//! keeps nothing. After a disconnect or a restart, `requests/resume` with the original
//! request's id and the token, on any replica that holds the key, re-sends what was pending
//! (the server-to-client requests of that round) and completes the original request;
//! `requests/getStatus` answers from the token alone. A token that does not open, has
//! expired, or is presented under another id or principal is `-32602`.
//!
//! Over Streamable HTTP the notification rides the call's own SSE stream, ahead of the
//! requests of its round (the HTTP layer merges it in: rmcp routes other notifications
//! to the session's standalone stream); over stdio there is one stream anyway.

use std::sync::{Arc, Mutex};

use futures::task::AtomicWaker;
use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, CustomNotification, JsonObject, RequestId, ServerNotification,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::engine::{Call, SagaContext};
use crate::state::{Binding, PointKey, StateCodec};

/// The capability a client declares to receive resume tokens.
pub(crate) const CAPABILITY: &str = "resumableRequests";
/// Continues a request after a disconnect.
pub(crate) const RESUME: &str = "requests/resume";
/// Reports a request's status without continuing it.
pub(crate) const GET_STATUS: &str = "requests/getStatus";
/// Carries the resume token of a request.
pub(crate) const RESUME_POLICY: &str = "notifications/requests/resumePolicy";

/// What the outer seal of a resume token binds to, besides the principal: resume tokens
/// open only as resume tokens, never as a saga's state.
/// What a resume ticket's header and associated data name: a ticket is JSON, read by
/// name, so it has one point of its own.
const TICKET_POINT: PointKey = PointKey {
    header: *b"sep-975\0",
    identity: *b"saga resume ticket, JSON, v1\0\0\0\0",
};

/// A resume token's content: the request it continues and the saga's sealed state.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Ticket {
    /// The JSON-RPC id of the original request; `requests/resume` must carry the same.
    pub(crate) id: RequestId,
    /// `tools/call`, `prompts/get` or `resources/read`.
    pub(crate) method: String,
    /// The tool or prompt name, or the resource URI.
    pub(crate) name: String,
    /// The original request's arguments.
    pub(crate) arguments: Option<JsonObject>,
    /// The saga's state, sealed under the server's keys for the original request.
    pub(crate) state: String,
    /// Whether the round asked the client something (`false`: a checkpoint).
    pub(crate) asks: bool,
}

/// Whether a client declared `resumableRequests`: in `experimental` (or `extensions`),
/// where rmcp keeps it; a top-level declaration is moved there on its way in
/// ([`promote_capability`]).
pub(crate) fn declared(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .experimental
        .as_ref()
        .is_some_and(|experimental| experimental.contains_key(CAPABILITY))
        || capabilities
            .extensions
            .as_ref()
            .is_some_and(|extensions| extensions.contains_key(CAPABILITY))
}

/// The client capabilities a stateless request's `_meta` declares, with a top-level
/// `resumableRequests` (where seed 002 puts it) moved where rmcp keeps it, as
/// [`promote_capability`] does for `initialize`.
pub(crate) fn capabilities_of(meta: &rmcp::model::RequestMetaObject) -> Option<ClientCapabilities> {
    let mut capabilities = meta.client_capabilities()?;
    let top_level = (meta.0)
        .0
        .get("io.modelcontextprotocol/clientCapabilities")
        .and_then(|declared| declared.get(CAPABILITY));
    if let Some(declared) = top_level {
        capabilities
            .experimental
            .get_or_insert_with(Default::default)
            .insert(
                CAPABILITY.to_owned(),
                declared.as_object().cloned().unwrap_or_default(),
            );
    }
    Some(capabilities)
}

/// Moves a top-level `capabilities.resumableRequests` of an `initialize` message into
/// `capabilities.experimental`, where rmcp's typed capabilities keep it. Returns whether
/// it changed the message.
pub(crate) fn promote_capability(message: &mut Value) -> bool {
    if message.get("method").and_then(Value::as_str) != Some("initialize") {
        return false;
    }
    let Some(capabilities) = message
        .get_mut("params")
        .and_then(|params| params.get_mut("capabilities"))
        .and_then(Value::as_object_mut)
    else {
        return false;
    };
    let Some(declared) = capabilities.remove(CAPABILITY) else {
        return false;
    };
    let experimental = capabilities
        .entry("experimental")
        .or_insert_with(|| json!({}));
    match experimental.as_object_mut() {
        Some(experimental) => {
            experimental.insert(CAPABILITY.into(), declared);
            true
        }
        None => false,
    }
}

/// [`promote_capability`] on a raw message: the rewritten JSON when `bytes` is an
/// `initialize` that declares the capability at the top level, `None` otherwise. Messages
/// that cannot mention it are passed over without being parsed.
pub(crate) fn promote_in_bytes(bytes: &[u8]) -> Option<Vec<u8>> {
    let mentions = |needle: &[u8]| bytes.windows(needle.len()).any(|window| window == needle);
    if !mentions(b"initialize") || !mentions(CAPABILITY.as_bytes()) {
        return None;
    }
    let mut message = serde_json::from_slice::<Value>(bytes).ok()?;
    promote_capability(&mut message).then(|| message.to_string().into_bytes())
}

/// The latest notification a call has for its own HTTP stream. Only the newest resume
/// policy matters (each supersedes the last), so it holds one.
#[derive(Debug, Clone, Default)]
pub(crate) struct CallNotices(Arc<NoticeSlot>);

#[derive(Debug, Default)]
struct NoticeSlot {
    latest: Mutex<Option<Value>>,
    waker: AtomicWaker,
}

impl crate::engine::Notices for NoticeSlot {
    fn put(&self, message: Value) {
        if let Ok(mut latest) = self.latest.lock() {
            *latest = Some(message);
        }
        self.waker.wake();
    }
}

impl CallNotices {
    /// The engine's side of the slot: the same allocation, seen as the hook it puts into.
    pub(crate) fn hook(&self) -> Arc<dyn crate::engine::Notices> {
        self.0.clone()
    }

    /// The waiting message, if any; otherwise wakes `cx` when one arrives.
    pub(crate) fn poll_take(&self, cx: &mut std::task::Context<'_>) -> Option<Value> {
        self.0.waker.register(cx.waker());
        self.0
            .latest
            .lock()
            .ok()
            .and_then(|mut latest| latest.take())
    }
}

/// After a transition that left `state` (asking the client something, or not), sends a
/// client that declared `resumableRequests` the token to resume `call` from there.
/// `keep` gets that token before the client does: the call's work from there on is this
/// run's while it lasts.
pub(crate) async fn announce(
    codec: &StateCodec,
    sealed_with: &StateCodec,
    call: &Call,
    (state, point): (&str, &PointKey),
    asks: bool,
    cx: &SagaContext,
    keep: impl FnOnce(&str),
) {
    let Some(peer) = cx.peer() else { return };
    let Some((params, announced)) =
        policy(codec, sealed_with, call, (state, point), asks, cx).await
    else {
        return;
    };
    // The token is the call's own before the client can see it: a client that resumes
    // the moment the notification arrives must find the call still running.
    keep(&announced);
    match cx.notices() {
        Some(notices) => notices.put(policy_message(params)),
        None => {
            let notification = CustomNotification::new(RESUME_POLICY, Some(params));
            if let Err(error) = peer
                .send_notification(ServerNotification::CustomNotification(notification))
                .await
            {
                tracing::debug!(%error, "a resume policy could not be sent");
            }
        }
    }
}

/// The JSON-RPC notification `notifications/requests/resumePolicy` with `params`.
pub(crate) fn policy_message(params: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": RESUME_POLICY,
        "params": params,
    })
}

/// The params of the `notifications/requests/resumePolicy` that lets the client resume
/// `call` from `state`, and the state its token resumes from; `None` for a client that did
/// not declare `resumableRequests`, or a call without a request id.
pub(crate) async fn policy(
    codec: &StateCodec,
    sealed_with: &StateCodec,
    call: &Call,
    (state, point): (&str, &PointKey),
    asks: bool,
    cx: &SagaContext,
) -> Option<(Value, String)> {
    if !declared(cx.capabilities()) {
        return None;
    }
    let id = cx.request_id()?;
    let binding = call.binding(cx.principal());
    let portable = match codec
        .reseal(sealed_with, state, point, &binding, &cx.state_owner())
        .await
    {
        Ok(portable) => portable,
        Err(error) => {
            tracing::warn!(%error, "a session state could not be sealed for resuming");
            return None;
        }
    };
    // With single use, the call's earlier tokens die as this one is handed out: the
    // client resumes from the newest only. Unrecorded, no newer token is handed out.
    if let Err(error) = codec.retire_token(&portable, false).await {
        tracing::error!(%error, "cannot retire a call's earlier tokens; no resume policy is sent");
        return None;
    }
    let ticket = Ticket {
        id: id.clone(),
        method: call.method.clone(),
        name: call.name.clone(),
        arguments: call.arguments.clone(),
        state: portable,
        asks,
    };
    let Ok(plaintext) = serde_json::to_vec(&ticket) else {
        return None;
    };
    let token = codec.seal(&TICKET_POINT, &ticket_binding(cx.principal()), &plaintext);
    let params = json!({
        "requestId": id,
        "resumeToken": token,
        "maxWait": codec.ttl().as_secs(),
    });
    tracing::debug!(request_id = %id, bytes = token.len(), "resume policy issued");
    Some((params, ticket.state))
}

fn ticket_binding(principal: &str) -> Binding {
    Binding::new("", RESUME, principal, None)
}

/// The params of `requests/resume` and `requests/getStatus`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TicketParams {
    resume_token: String,
    /// `requests/getStatus` names the request; `requests/resume` is sent under its id.
    #[serde(default)]
    request_id: Option<RequestId>,
}

/// Opens the resume token in `params` for `principal` and the request `id` (for
/// `requests/resume`, its own id; for `requests/getStatus`, `None`: the `requestId` its
/// params name). Every refusal is the same `-32602`, its reason in the log.
pub(crate) fn open(
    codec: &StateCodec,
    params: Option<Value>,
    id: Option<&RequestId>,
    principal: &str,
) -> Result<Ticket, ErrorData> {
    let params: TicketParams = params
        .and_then(|params| serde_json::from_value(params).ok())
        .ok_or_else(|| ErrorData::invalid_params("params must carry a string resumeToken", None))?;
    let id = id.or(params.request_id.as_ref());
    let refused = |reason: &dyn crate::metrics::AsRefusal| -> ErrorData {
        crate::engine::invalid_state(RESUME, reason).into()
    };
    let opened = codec
        .open(
            &params.resume_token,
            &TICKET_POINT,
            &ticket_binding(principal),
        )
        .map_err(|error| refused(&error))?;
    let ticket: Ticket =
        serde_json::from_slice(&opened.plaintext).map_err(|error| refused(&error))?;
    if id != Some(&ticket.id) {
        return Err(refused(&"the resume token belongs to another request id"));
    }
    Ok(ticket)
}

/// The `requests/getStatus` result for a ticket: the request is suspended (a token exists
/// only for a request that has not finished), and has input requests pending unless it
/// was checkpointing.
pub(crate) fn status(ticket: &Ticket) -> Value {
    json!({
        "status": "processing",
        "hasInputRequest": ticket.asks,
        "hasPendingMessage": ticket.asks,
    })
}

/// The original request that `ticket` continues, as the JSON-RPC params of its method.
pub(crate) fn original_params(ticket: Ticket) -> Value {
    match ticket.method.as_str() {
        "resources/read" => json!({"uri": ticket.name, "requestState": ticket.state}),
        _ => json!({
            "name": ticket.name,
            "arguments": ticket.arguments,
            "requestState": ticket.state,
        }),
    }
}

/// A call that runs in this process (a session's, or seed 002's streamed) has ended with
/// its result: with single use, every token it handed out dies, so none can run its work
/// again. `last` is the state it last ran from, whose link is at or past every one handed
/// out.
pub(crate) async fn ended(codec: &StateCodec, last: Option<&str>) {
    let Some(last) = last else { return };
    if let Err(error) = codec.retire_token(last, true).await {
        tracing::error!(%error, "cannot retire the tokens of a call that ended");
    }
}
