//! The one path every HTTP request takes before rmcp's transport sees it: a slot among
//! the requests served at once, the body read under its size and time limits, the JSON
//! checked ([`crate::serve::json_check`]; for the usual MRTR call, in the pass that reads it
//! for the direct path) and, for a header-selected wire format, the message
//! rewritten into MRTR form ([`crate::serve::wire`]). rmcp then validates the request
//! exactly as it validates any other, and the response is rewritten back.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, Method, StatusCode, header};
use serde_json::Value;
use tower::ServiceExt as _;
use tracing::Instrument as _;

use super::owners::{BoundMet, Counted, Ownership};
use super::refuse::{refuse, refuse_id};
use super::streams;
use crate::engine::pool::{Pool, Shares};
use crate::serve::json_check::{Envelope, JsonBudget, JsonProblem};
use crate::serve::wire::resumable::{self, CallNotices};
use crate::serve::wire::{Format, WireCall};

/// The requests of a session whose response stream may carry a resume policy (seed 002).
const CALL_METHODS: [&str; 4] = [
    "tools/call",
    "prompts/get",
    "resources/read",
    resumable::RESUME,
];

/// How long a session request whose id is still in flight waits for that request to
/// leave before it is refused (see `guard_owned`). It waits holding its slot, so that
/// waiters count against the slots (and their bodies against the memory they bound).
const DUPLICATE_ID_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The answer to a request that names a session the caller did not open: the same as for
/// a session that does not exist, so that an id tells a stranger nothing.
fn session_not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

/// JSON-RPC's codes for the refusals made here.
const PARSE_ERROR: i32 = -32700;
const INVALID_REQUEST: i32 = -32600;
const SERVER_BUSY: i32 = -32603;

/// The guard's settings and its shared slots.
pub(crate) struct Guard {
    /// The requests served at once, split by pool.
    pub(crate) slots: Arc<Shares>,
    pub(crate) queue_timeout: Duration,
    pub(crate) body_read_timeout: Duration,
    pub(crate) max_body_bytes: usize,
    pub(crate) budget: JsonBudget,
    /// MRTR `tools/call`s that rmcp would accept as they are, run without rmcp's
    /// per-request service; `None` sends every request through rmcp.
    pub(crate) direct: Option<super::direct::Direct>,
    /// Who opened each session, and what each holds.
    pub(crate) owners: super::owners::Owners,
    /// How long a standalone stream stays open without an event.
    pub(crate) stream_idle_timeout: Duration,
    /// The tools, for the caller's principal.
    pub(crate) tools: crate::serve::SagaTools,
    /// rmcp's transport, mounted at the MCP path: what answers every request the guard
    /// lets through and the direct path does not serve.
    pub(crate) rmcp: axum::Router,
    /// Failed credentials by address, with an `authenticate` check.
    pub(crate) tries: Option<crate::serve::tries::Tries>,
}

impl Guard {
    pub(crate) async fn run(self: Arc<Self>, request: Request) -> Response {
        let span = tracing::debug_span!(
            "saga.request",
            http = %request.method(),
            method = tracing::field::Empty,
            format = tracing::field::Empty,
            bytes_in = tracing::field::Empty,
            status = tracing::field::Empty,
            micros = tracing::field::Empty,
        );
        if span.is_disabled() && !tracing::event_enabled!(tracing::Level::DEBUG) {
            // Nothing records the span or the event below: neither the clock nor the
            // wrapper is needed.
            return self.guard(request, &span).await;
        }
        let started = std::time::Instant::now();
        let response = self.guard(request, &span).instrument(span.clone()).await;
        span.record("status", response.status().as_u16());
        span.record("micros", started.elapsed().as_micros() as u64);
        span.in_scope(|| tracing::debug!("request done"));
        response
    }

    async fn guard(self: Arc<Self>, request: Request, span: &tracing::Span) -> Response {
        // Who is calling, resolved once: the principal a session answers to and every
        // token is bound to, and the pool every bound counts the request against.
        let (mut parts, body) = request.into_parts();
        // Only with an `authenticate` check: the address is looked up for no one else.
        let tries = self
            .tries
            .as_ref()
            .map(|tries| (tries, crate::engine::pool::peer_of(&parts)));
        if let Some((tries, peer)) = tries
            && tries.spent(&parts, peer)
        {
            return too_many_tries();
        }
        let caller = self.tools.caller_of(&parts);
        if let Some((tries, peer)) = tries {
            tries.note(&parts, caller.pool.is_verified(), peer);
        }
        let pool = caller.pool.clone();
        // A session answers only to the principal that opened it; only a live session of
        // the caller's lets a request give back its slot below.
        let session = parts
            .headers
            .get(crate::serve::head::SESSION_ID_HEADER)
            .and_then(|id| id.to_str().ok())
            .map(str::to_owned);
        let ownership = match &session {
            None => None,
            Some(id) => {
                let ownership = self.owners.of(id, &caller.principal).await;
                if ownership == Ownership::Other {
                    tracing::info!("a request named a session another principal opened");
                    return session_not_found();
                }
                Some(ownership)
            }
        };
        // Moved, not copied: what follows reads the caller from the request.
        parts.extensions.insert(caller);
        let request = Request::from_parts(parts, body);
        self.guard_owned(request, span, session, ownership, pool)
            .await
    }

    async fn guard_owned(
        self: Arc<Self>,
        request: Request,
        span: &tracing::Span,
        session: Option<String>,
        ownership: Option<Ownership>,
        pool: Pool,
    ) -> Response {
        if request.method() == Method::GET
            && ownership == Some(Ownership::Owned)
            && let Some(id) = &session
        {
            // A standalone stream: counted while it is open, and ended when idle.
            let held = match self.owners.hold(id, true, None) {
                Ok(held) => held,
                Err(refusal) => return over_limit(refusal),
            };
            let response = self.forward(request).await;
            return streams::held(response, held, Some(self.stream_idle_timeout));
        }
        if request.method() != Method::POST || !is_json(request.headers()) {
            // No body to look at, and nothing to run: rmcp answers these (405, 415).
            let deletes = request.method() == Method::DELETE;
            let mut response = self.forward(request).await;
            if deletes
                && response.status().is_success()
                && let Some(id) = &session
            {
                self.owners.closed(id);
                // rmcp answers 202 Accepted; the session is gone at once, which is 204
                // No Content, and clients check for it (the Python SDK warns at a 202).
                *response.status_mut() = http::StatusCode::NO_CONTENT;
                *response.body_mut() = Body::empty();
                response.headers_mut().remove(http::header::CONTENT_TYPE);
                response.headers_mut().remove(http::header::CONTENT_LENGTH);
            }
            return response;
        }
        // A slot of the caller's pool's share (a free one is taken at once, without
        // arming the queue's timer).
        let slot = match self.slots.take_within(&pool, self.queue_timeout).await {
            Ok(slot) => slot,
            Err(spent) if spent.is_the_callers() => {
                tracing::info!("refusing a request: its caller holds its share of the slots");
                return over_limit(BoundMet::Shared(Counted::Slots, spent));
            }
            Err(_) => {
                tracing::warn!("shedding a request: every slot stayed busy for the queue timeout");
                return busy();
            }
        };
        let (mut parts, body) = request.into_parts();
        let bytes = match self.read_body(body).await {
            Ok(bytes) => bytes,
            Err(response) => return response,
        };
        if ownership != Some(Ownership::Owned)
            && let Some(direct) = &self.direct
            && matches!(Format::from_headers(&parts.headers), Ok(Format::Mrtr))
            && let Some(call) = direct.read_within(&parts, &bytes, self.budget)
        {
            // The usual MRTR call, checked and read in one pass: what follows would find
            // its envelope sound, its method `tools/call` and its format MRTR, and hand it
            // to the direct path.
            span.record("bytes_in", bytes.len());
            span.record("method", "tools/call");
            span.record("format", tracing::field::debug(Format::Mrtr));
            let response = Box::pin(direct.run(call)).await;
            return super::streams::keeping(response, slot);
        }
        let envelope = match Envelope::read(&bytes, self.budget) {
            Ok(envelope) => envelope,
            Err(JsonProblem::Syntax(why)) => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    PARSE_ERROR,
                    &format!("Parse error: {why}"),
                );
            }
            Err(JsonProblem::Refused(why)) => {
                return refuse(StatusCode::BAD_REQUEST, INVALID_REQUEST, &why);
            }
        };
        span.record("bytes_in", bytes.len());
        if let Some(method) = &envelope.method {
            // Formatted only if the span is recorded: this runs on every request.
            span.record(
                "method",
                tracing::field::display(crate::log::Escaped(method)),
            );
        }
        if ownership == Some(Ownership::Owned)
            && let Some(id) = &session
        {
            // A request of a session (MCP 2025-11-25) may wait for its client, e.g. for a
            // person to answer an elicitation: it must not hold a slot meanwhile, or the
            // answers themselves could not get in. Its body is read and checked, and a
            // request (not a notification or an answer) is counted against the session
            // bounds until both its handler and its response are done. Its slot is given
            // back once it is counted, after any wait for its id (below).
            let held = if envelope.method.is_some() && envelope.has_id() {
                // The id as the envelope's walk kept it; a long one is read again.
                let request = envelope.id().or_else(|| request_id(&bytes));
                let text = request.as_ref().map(Value::to_string);
                let mut held = self.owners.hold(id, false, text.clone());
                // A client's retry of a request whose first try is still leaving (its
                // connection dropped while the answer was being written: an HTTP client
                // resends then, under the same id) gets in once that one is gone. Ids
                // stay unique among the requests in flight; only the race is waited out.
                let deadline = tokio::time::Instant::now() + DUPLICATE_ID_WAIT;
                while matches!(held, Err(BoundMet::DuplicateId))
                    && tokio::time::Instant::now() < deadline
                {
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    held = self.owners.hold(id, false, text.clone());
                }
                match held {
                    Ok(held) => {
                        parts.extensions.insert(held.session_gone());
                        parts.extensions.insert(held.clone());
                        Some(held)
                    }
                    Err(BoundMet::DuplicateId) => {
                        tracing::info!("refused a session request whose id is in flight");
                        return refuse_id(
                            StatusCode::CONFLICT,
                            request.as_ref().unwrap_or(&Value::Null),
                            INVALID_REQUEST,
                            &BoundMet::DuplicateId.to_string(),
                        );
                    }
                    Err(refusal) => return over_limit(refusal),
                }
            } else {
                None
            };
            drop(slot);
            let notices = envelope
                .method
                .as_deref()
                .is_some_and(|method| envelope.has_id() && CALL_METHODS.contains(&method))
                .then(CallNotices::default);
            if let Some(notices) = &notices {
                parts.extensions.insert(notices.clone());
            }
            let lists_tools = envelope.method.as_deref() == Some("tools/list");
            let response = self
                .forward(Request::from_parts(parts, Body::from(bytes)))
                .await;
            let response = if lists_tools {
                super::tool_list::with_task_support(response, &self.tools, self.response_limit())
                    .await
            } else {
                response
            };
            let response = match notices {
                Some(notices) => stream_notices(response, notices),
                None => response,
            };
            return match held {
                Some(held) => streams::held(response, held, None),
                None => response,
            };
        }
        let promoted = (envelope.method.as_deref() == Some("initialize"))
            .then(|| resumable::promote_in_bytes(&bytes))
            .flatten();
        let bytes = match promoted {
            Some(promoted) => {
                parts.headers.remove(header::CONTENT_LENGTH);
                Bytes::from(promoted)
            }
            None => bytes,
        };
        let slot = slot;
        let format = match Format::from_headers(&parts.headers) {
            Ok(format) => format,
            Err(unknown) => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    INVALID_REQUEST,
                    &unknown.to_string(),
                );
            }
        };
        span.record("format", tracing::field::debug(format));
        let is_tool_call = envelope.method.as_deref() == Some("tools/call") && envelope.has_id();
        let resumes = matches!(
            envelope.method.as_deref(),
            Some(resumable::RESUME | resumable::GET_STATUS)
        ) && envelope.has_id();
        if format == Format::Mrtr
            && (is_tool_call || (resumes && session.is_none()))
            && let Some(direct) = &self.direct
        {
            // Boxed: the call's future is most of a request's, and every future around
            // it (this one, axum's, hyper's) would otherwise hold and copy it.
            match Box::pin(direct.serve(parts, &bytes)).await {
                // A streamed response (seed 002 without a session) runs as its body is
                // read: the body keeps the request's slot until it ends.
                Ok(response) => return super::streams::keeping(response, slot),
                Err(untouched) => parts = untouched,
            }
        }
        let _slot = slot;
        if format == Format::Mrtr || !is_tool_call {
            let opening = if envelope.method.as_deref() == Some("initialize") {
                let principal = self.tools.principal_of(&parts);
                match self.owners.open(principal, pool.clone()).await {
                    Ok(opening) => Some(opening),
                    Err(refusal) => return over_limit(refusal),
                }
            } else {
                None
            };
            let lists_tools = envelope.method.as_deref() == Some("tools/list");
            let request = Request::from_parts(parts, Body::from(bytes));
            let response = self.forward(request).await;
            let response = if lists_tools {
                super::tool_list::with_task_support(response, &self.tools, self.response_limit())
                    .await
            } else {
                response
            };
            if let Some(opening) = opening
                && let Some(id) = response
                    .headers()
                    .get(crate::serve::head::SESSION_ID_HEADER)
                    .and_then(|id| id.to_str().ok())
            {
                opening.opened(id);
            }
            return response;
        }
        // Only now, with the body known to be small and sound, is a value built from it.
        let Ok(mut message) = serde_json::from_slice::<Value>(&bytes) else {
            return refuse(StatusCode::BAD_REQUEST, PARSE_ERROR, "Parse error");
        };
        drop(bytes);
        let wire: WireCall = format.decode(&mut message);
        parts.extensions.insert(wire);
        let body = Body::from(message.to_string());
        parts.headers.remove(header::CONTENT_LENGTH);
        let response = self.forward(Request::from_parts(parts, body)).await;
        self.encode(format, response).await
    }

    /// Hands `request` to rmcp's transport.
    async fn forward(&self, mut request: Request) -> Response {
        // The path the guard was matched at: rmcp's router matches the request again and
        // records its own (axum asserts it finds none there).
        request
            .extensions_mut()
            .remove::<axum::extract::MatchedPath>();
        match self.rmcp.clone().oneshot(request).await {
            Ok(response) => response,
            Err(infallible) => match infallible {},
        }
    }

    /// How much of rmcp's own response is read when the guard rewrites one.
    fn response_limit(&self) -> usize {
        64 * self.max_body_bytes.max(1 << 20)
    }

    async fn read_body(&self, body: Body) -> Result<Bytes, Response> {
        let read = axum::body::to_bytes(body, self.max_body_bytes);
        match tokio::time::timeout(self.body_read_timeout, read).await {
            Err(_) => Err(refuse(
                StatusCode::REQUEST_TIMEOUT,
                INVALID_REQUEST,
                "the request body did not arrive within the body read timeout",
            )),
            Ok(Err(_)) => Err(refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                INVALID_REQUEST,
                &format!(
                    "the request body exceeds {} bytes (or could not be read)",
                    self.max_body_bytes
                ),
            )),
            Ok(Ok(bytes)) => Ok(bytes),
        }
    }

    /// Rewrites rmcp's response to a rewritten `tools/call` back into `format`: a JSON
    /// body, or the response message inside an SSE stream (when the tool sent progress
    /// or log notifications first).
    async fn encode(&self, format: Format, response: Response) -> Response {
        let (mut parts, body) = response.into_parts();
        let is_sse = streams::is_event_stream(&parts.headers);
        // rmcp's own response: small, but bounded all the same.
        let Ok(bytes) = axum::body::to_bytes(body, self.response_limit()).await else {
            return refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                SERVER_BUSY,
                "response too large",
            );
        };
        let text = String::from_utf8_lossy(&bytes);
        let rewritten = if is_sse {
            text.lines()
                .map(|line| match line.strip_prefix("data:") {
                    Some(data) => match serde_json::from_str::<Value>(data.trim_start()) {
                        Ok(message) if message.get("id").is_some() => {
                            format!("data: {}", format.encode(message))
                        }
                        _ => line.to_owned(),
                    },
                    None => line.to_owned(),
                })
                .collect::<Vec<_>>()
                .join("\n")
                + if text.ends_with('\n') { "\n" } else { "" }
        } else {
            match serde_json::from_slice::<Value>(&bytes) {
                Ok(message) => format.encode(message).to_string(),
                Err(_) => text.into_owned(),
            }
        };
        parts.headers.remove(header::CONTENT_LENGTH);
        Response::from_parts(parts, Body::from(rewritten))
    }
}

/// The guard as the service mounted at the MCP path: an axum middleware would also clone
/// the route behind it and box a `Next` for every request. axum clones a route's service
/// for each request, and the request's future owns one more: a clone is one shared
/// pointer, not each of the guard's handles.
#[derive(Clone)]
pub(crate) struct GuardService(pub(crate) Arc<Guard>);

impl tower::Service<Request> for GuardService {
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = futures::future::Map<
        futures::future::BoxFuture<'static, Response>,
        fn(Response) -> Result<Response, std::convert::Infallible>,
    >;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        use futures::FutureExt as _;
        Arc::clone(&self.0).run(request).boxed().map(Ok)
    }
}

/// A session call's SSE response with the call's own notifications merged in, each at an
/// event boundary, ahead of what the call sends next. A JSON response passes as is.
fn stream_notices(response: Response, notices: CallNotices) -> Response {
    if !streams::is_event_stream(response.headers()) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let merged = MergedNotices {
        body: body.into_data_stream(),
        notices,
        at_boundary: true,
    };
    Response::from_parts(parts, Body::from_stream(merged))
}

struct MergedNotices {
    body: axum::body::BodyDataStream,
    notices: CallNotices,
    /// Whether what went out so far ends with a whole SSE event.
    at_boundary: bool,
}

impl futures::Stream for MergedNotices {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        if self.at_boundary
            && let Some(message) = self.notices.poll_take(cx)
        {
            let event = format!("event: message\ndata: {message}\n\n");
            return std::task::Poll::Ready(Some(Ok(Bytes::from(event))));
        }
        let polled = std::pin::Pin::new(&mut self.body).poll_next(cx);
        if let std::task::Poll::Ready(Some(Ok(chunk))) = &polled {
            self.at_boundary = chunk.ends_with(b"\n\n");
        }
        polled
    }
}

/// The JSON-RPC id of a sound request body (its envelope was read): a string or an
/// integer, as the envelope check requires.
fn request_id(bytes: &[u8]) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct IdOnly {
        id: Option<Value>,
    }
    serde_json::from_slice::<IdOnly>(bytes).ok()?.id
}

fn is_json(headers: &http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .eq_ignore_ascii_case("application/json")
        })
}

/// A request refused at one of the session bounds: 429 when the caller's own sessions
/// or streams meet it, 503 when the whole server's do.
fn over_limit(refusal: BoundMet) -> Response {
    tracing::info!(%refusal, "refused a session request at its bound");
    let status = if refusal.is_the_callers() {
        StatusCode::TOO_MANY_REQUESTS
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let mut response = refuse(status, SERVER_BUSY, &refusal.to_string());
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// A request from an address that sent too many credentials the server did not verify
/// this minute (`tries.rs`).
fn too_many_tries() -> Response {
    tracing::info!("refused a request: its address sent too many unverified credentials");
    let mut response = refuse(
        StatusCode::TOO_MANY_REQUESTS,
        SERVER_BUSY,
        "too many credentials this server did not verify from this address; retry in a minute",
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
    response
}

fn busy() -> Response {
    let mut response = refuse(
        StatusCode::SERVICE_UNAVAILABLE,
        SERVER_BUSY,
        "the server is busy; retry shortly",
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}
