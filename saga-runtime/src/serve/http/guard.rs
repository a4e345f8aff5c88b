//! The one path every HTTP request takes before rmcp's transport sees it: a place among
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
use futures::FutureExt as _;
use futures::future::{BoxFuture, Either};
use http::{HeaderValue, Method, StatusCode, header};
use serde_json::Value;
use tower::ServiceExt as _;
use tracing::Instrument as _;

use super::owners::{BoundMet, Counted, Ownership};
use super::refuse::{refuse, refuse_id};
use super::streams;
use crate::engine::caller::pool::{Caller, PeerAddr, Place, PlaceOwner, Pool, Shares};
use crate::serve::json_check::{Envelope, JsonBudget, JsonProblem};
use crate::serve::wire::resumable::{self, CallNotices};
use crate::serve::wire::{UnknownFormat, WireCall, WireFormat};

/// The requests of a session whose response stream may carry a resume policy (seed 002).
const CALL_METHODS: [&str; 4] = [
    "tools/call",
    "prompts/get",
    "resources/read",
    resumable::RESUME,
];

/// How long a session request whose id is still in flight waits for that request to
/// leave before it is refused (see `Guard::hold_request`). It waits holding its place, so that
/// waiters count against the places (and their bodies against the memory they bound).
const DUPLICATE_ID_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// JSON-RPC's codes for the refusals made here.
const PARSE_ERROR: i32 = -32700;
const INVALID_REQUEST: i32 = -32600;
const SERVER_BUSY: i32 = -32603;

/// The guard's settings and its shared places.
pub(crate) struct Guard {
    /// The requests served at once, split by pool.
    pub(crate) places: Arc<Shares>,
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
    pub(crate) tools: crate::serve::tools::SagaTools,
    /// rmcp's transport, mounted at the MCP path: what answers every request the guard
    /// lets through and the direct path does not serve.
    pub(crate) rmcp: axum::Router,
    /// Failed credentials by address, with an `authenticate` check.
    pub(crate) tries: Option<crate::serve::tries::Tries>,
    /// The reverse proxies trusted to say the client's address.
    pub(crate) proxies: crate::serve::forwarded::TrustedProxies,
}

impl Guard {
    /// A request's future, unboxed (the service boxes it): a plain function, not an
    /// `async fn`, so that the future holds the request once, in `guard`'s, not also as
    /// its own argument; the traced path, taken only when a subscriber records the
    /// request, is boxed apart.
    ///
    /// `peer` is the connection's address when the listener hands the request over
    /// itself (`listener::Front`); otherwise admission reads it from the request's
    /// extensions.
    pub(crate) fn run(
        self: Arc<Self>,
        request: Request,
        peer: Option<PeerAddr>,
    ) -> impl Future<Output = Response> {
        let span = tracing::debug_span!(
            "saga.request",
            http = %request.method(),
            method = tracing::field::Empty,
            format = tracing::field::Empty,
            bytes_in = tracing::field::Empty,
            status = tracing::field::Empty,
            micros = tracing::field::Empty,
        );
        let (parts, body) = request.into_parts();
        if span.is_disabled() && !tracing::event_enabled!(tracing::Level::DEBUG) {
            // Nothing records the span or the event below: neither the clock nor the
            // wrapper is needed.
            return Either::Left(self.guard(parts, body, span, peer));
        }
        Either::Right(
            async move {
                let started = std::time::Instant::now();
                let response = self
                    .guard(parts, body, span.clone(), peer)
                    .instrument(span.clone())
                    .await;
                span.record("status", response.status().as_u16());
                span.record("micros", started.elapsed().as_micros() as u64);
                span.in_scope(|| tracing::debug!("request done"));
                response
            }
            .boxed(),
        )
    }

    /// Every request's checks, each a function with one job, in order: admission (failed
    /// credentials), the caller, the session's owner; then its path by method.
    ///
    /// `guard` and `post` return `async` blocks, not `async fn`s: an `async fn` keeps
    /// each argument twice (as passed, and moved into its body), and the request's parts
    /// are 224 bytes of every request's future.
    #[allow(clippy::manual_async_fn)] // the point: see the doc
    fn guard(
        self: Arc<Self>,
        mut parts: http::request::Parts,
        body: Body,
        span: tracing::Span,
        peer: Option<PeerAddr>,
    ) -> impl Future<Output = Response> {
        async move {
            // Only admission reads the peer's address: every path after it reads the
            // caller (and its pool) instead.
            let caller = match self.admit(&parts, peer) {
                Ok(caller) => caller,
                Err(refused) => return refused.into_response(),
            };
            let session = match self.session_of(&parts, &caller.principal).await {
                Ok(session) => session,
                Err(refused) => return refused.into_response(),
            };
            // The caller is moved, not copied, into the request for the paths that read
            // it there (rmcp's handler); `post` hands it to the direct path instead.
            //
            // The paths besides the POST are boxed, and so are the POST's own paths besides
            // the direct call (`post`): a future holds room for its largest branch, and every
            // request's future (this one, the box the guard's service makes) is created and moved
            // at that size. Unboxed, the usual call moved some 10 KB a request for the rare
            // paths (BENCHMARKS.md). The request stays in its parts, not put together and
            // taken apart again (each a copy the future would keep).
            match session {
                Named::Owned(id) if parts.method == Method::GET => {
                    parts.extensions.insert(caller);
                    Box::pin(self.get_stream(Request::from_parts(parts, body), &id)).await
                }
                session if parts.method == Method::POST && is_json(&parts.headers) => {
                    self.post(parts, body, &span, session, caller).await
                }
                session => {
                    parts.extensions.insert(caller);
                    let request = Request::from_parts(parts, body);
                    Box::pin(self.forward_other(request, session.into_id())).await
                }
            }
        }
    }

    /// Admission: an address past its failed credentials is refused before anything is
    /// verified; otherwise the caller (resolved once: the principal a session answers to
    /// and every token is bound to, and the pool every bound counts the request against),
    /// its try noted.
    fn admit(
        &self,
        parts: &http::request::Parts,
        peer: Option<PeerAddr>,
    ) -> Result<Caller, Refused> {
        let peer = match peer {
            Some(PeerAddr(ip)) => Some(ip),
            None => crate::engine::caller::pool::peer_of(parts),
        };
        let peer = self.proxies.client(parts, peer);
        if let Some(tries) = &self.tries
            && tries.spent(parts, peer)
        {
            return Err(Refused::TooManyTries);
        }
        let caller = self.tools.caller_of(parts, peer);
        if let Some(tries) = &self.tries {
            tries.note(
                parts,
                caller
                    .pool
                    .is_verified()
                    .then_some(caller.principal.as_str()),
                peer,
            );
        }
        // The gate: after the try is noted, so that guessing keys still counts.
        if self.tools.requires_verified() && !caller.pool.is_verified() {
            return Err(Refused::Unverified);
        }
        Ok(caller)
    }

    /// The session a request names, and whether it is a live one of the caller's (only
    /// that lets a request give back its place, in `post_in_session`). A session answers
    /// only to the principal that opened it: another's is refused as one that does not
    /// exist.
    async fn session_of(
        &self,
        parts: &http::request::Parts,
        principal: &str,
    ) -> Result<Named, Refused> {
        let Some(id) = parts
            .headers
            .get(crate::serve::head::SESSION_ID_HEADER)
            .and_then(|id| id.to_str().ok())
        else {
            return Ok(Named::Other(None));
        };
        match self.owners.of(id, principal).await {
            Ownership::Other => {
                tracing::info!("a request named a session another principal opened");
                Err(Refused::SessionNotFound)
            }
            Ownership::Owned => Ok(Named::Owned(id.to_owned())),
            Ownership::Unknown => Ok(Named::Other(Some(id.to_owned()))),
        }
    }

    /// GET of a live session of the caller's: its standalone stream, counted while it is
    /// open and ended when idle.
    async fn get_stream(&self, request: Request, id: &str) -> Response {
        let held = match self.owners.hold(id, true, None) {
            Ok(held) => held,
            Err(refusal) => return Refused::OverLimit(refusal).into_response(),
        };
        let response = self.forward(request).await;
        streams::held(response, held, Some(self.stream_idle_timeout))
    }

    /// Any other request without a JSON body to look at, and nothing to run: rmcp answers
    /// these (405, 415, a GET without a session of the caller's); a DELETE that rmcp
    /// accepts ends the session here too.
    async fn forward_other(&self, request: Request, session: Option<String>) -> Response {
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
        response
    }

    /// A POST: a place of the caller's pool, the body; then what the request is, decided
    /// once ([`Guard::posted`]), served.
    #[allow(clippy::manual_async_fn)] // the point: see the doc
    fn post<'a>(
        &'a self,
        mut parts: http::request::Parts,
        body: Body,
        span: &'a tracing::Span,
        session: Named,
        caller: Caller,
    ) -> impl Future<Output = Response> + 'a {
        async move {
            let pool = caller.pool.clone();
            let mut caller = Some(caller);
            let place = match self.place(&pool).await {
                Ok(place) => place,
                Err(refused) => return refused.into_response(),
            };
            let mut bytes = match self.read_body(body).await {
                Ok(bytes) => bytes,
                Err(refused) => return refused.into_response(),
            };
            // Shared with the request's context: a round that goes on after its client
            // left takes the place over, and counts against the bounds until it ends.
            let (place, handle) = crate::engine::caller::pool::shared(place);
            parts.extensions.insert(handle);
            // The decision lives only in this block: bound where the run is awaited, it
            // would keep its room in this future (the read call's 920 bytes) after it is
            // moved.
            let mut place = Some(place);
            let run = {
                let posted = match self.posted(&mut parts, &mut bytes, session, &mut caller, span) {
                    Ok(posted) => posted,
                    Err(refused) => return refused.into_response(),
                };
                match posted {
                    Posted::Direct(run) => Either::Left(run),
                    Posted::Other(posted) => {
                        // Not the direct call's: rmcp's handler reads the caller from the
                        // request.
                        if let Some(caller) = caller.take() {
                            parts.extensions.insert(caller);
                        }
                        // Boxed, as `guard` explains: the direct call is the usual request.
                        let place = place.take();
                        Either::Right(Box::pin(
                            self.serve_posted(posted, parts, bytes, pool, place),
                        ))
                    }
                }
            };
            let response = run.await;
            match place {
                // A streamed response runs as its body is read: the body keeps the
                // request's place until it ends.
                Some(place) => super::streams::keeping(response, place),
                None => response,
            }
        }
    }

    /// What a POST is, decided here once from its headers and its body: the wire
    /// format read once, the usual MRTR call checked and read in one pass (the JSON
    /// check of any other body after it), a session's request, a stateless resumption
    /// the direct path serves, or a request for rmcp, as it is or translated.
    fn posted<'a>(
        &'a self,
        parts: &mut http::request::Parts,
        bytes: &mut Bytes,
        session: Named,
        caller: &mut Option<Caller>,
        span: &tracing::Span,
    ) -> Result<Posted<'a>, Refused> {
        span.record("bytes_in", bytes.len());
        let format = WireFormat::from_headers(&parts.headers);
        let direct = self
            .direct
            .as_ref()
            .filter(|_| matches!(format, Ok(WireFormat::Mrtr)));
        if let Some(direct) = direct
            && !matches!(session, Named::Owned(_))
            && let Some((method, run)) = direct.claim(parts, bytes, self.budget, caller)
        {
            span.record("method", method);
            span.record("format", tracing::field::debug(WireFormat::Mrtr));
            return Ok(Posted::Direct(run));
        }
        let envelope = check_json(bytes, self.budget)?;
        if let Some(method) = &envelope.method {
            // Formatted only if the span is recorded: this runs on every request.
            span.record(
                "method",
                tracing::field::display(crate::log::Escaped(method)),
            );
        }
        let session = match session {
            Named::Owned(id) => return Ok(Posted::Other(OtherPost::InSession { id, envelope })),
            Named::Other(session) => session,
        };
        *bytes = promote_initialize(parts, std::mem::take(bytes), &envelope);
        let format = format.map_err(Refused::Format)?;
        span.record("format", tracing::field::debug(format));
        let method = envelope.method.as_deref().filter(|_| envelope.has_id());
        if let Some(direct) = direct
            && session.is_none()
            && matches!(method, Some(resumable::RESUME | resumable::GET_STATUS))
            && let Some(resumption) = direct.read_resumption(parts, bytes)
        {
            return Ok(Posted::Other(OtherPost::Resume(
                direct,
                Box::new(resumption),
            )));
        }
        Ok(Posted::Other(
            if format == WireFormat::Mrtr || method != Some("tools/call") {
                OtherPost::Mrtr(envelope)
            } else {
                OtherPost::Translated(format)
            },
        ))
    }

    /// Serves a POST other than the usual call as [`Guard::posted`] decided. `place` is kept until the response
    /// leaves (a streamed one's body keeps it), or given back as a session's request is
    /// counted; `None`, the caller keeps it.
    async fn serve_posted(
        &self,
        posted: OtherPost<'_>,
        parts: http::request::Parts,
        bytes: Bytes,
        pool: Pool,
        place: Option<PlaceOwner>,
    ) -> Response {
        let (response, place) = match posted {
            OtherPost::Resume(direct, resumption) => (direct.resume(*resumption), place),
            OtherPost::InSession { id, envelope } => {
                let response = self
                    .post_in_session(parts, bytes, &envelope, &id, place)
                    .await;
                (response, None)
            }
            OtherPost::Mrtr(envelope) => {
                let response = self.forward_mrtr(parts, bytes, &envelope, pool).await;
                (response, None)
            }
            OtherPost::Translated(format) => {
                let response = self.forward_translated(parts, bytes, format).await;
                (response, None)
            }
        };
        match place {
            Some(place) => super::streams::keeping(response, place),
            None => response,
        }
    }

    /// A place of the caller's pool's share (a free one is taken at once, without arming
    /// the queue's timer).
    async fn place(&self, pool: &Pool) -> Result<Place, Refused> {
        match self.places.take_within(pool, self.queue_timeout).await {
            Ok(place) => Ok(place),
            Err(spent) if spent.is_the_callers() => {
                tracing::info!("refusing a request: its caller holds its share of the places");
                Err(Refused::OverLimit(BoundMet::Shared(Counted::Slots, spent)))
            }
            Err(_) => {
                tracing::warn!("shedding a request: every place stayed busy for the queue timeout");
                Err(Refused::Busy)
            }
        }
    }

    /// A POST of a live session of the caller's (MCP 2025-11-25). It may wait for its
    /// client, e.g. for a person to answer an elicitation: it must not hold a place
    /// meanwhile, or the answers themselves could not get in. A request (not a
    /// notification or an answer) is counted against the session bounds until both its
    /// handler and its response are done; its place is given back once it is counted,
    /// after any wait for its id.
    async fn post_in_session(
        &self,
        mut parts: http::request::Parts,
        bytes: Bytes,
        envelope: &Envelope,
        id: &str,
        place: Option<PlaceOwner>,
    ) -> Response {
        let held = if envelope.method.is_some() && envelope.has_id() {
            match self.hold_request(&mut parts, &bytes, envelope, id).await {
                Ok(held) => Some(held),
                Err(refused) => return refused.into_response(),
            }
        } else {
            None
        };
        drop(place);
        let notices = envelope
            .method
            .as_deref()
            .is_some_and(|method| envelope.has_id() && CALL_METHODS.contains(&method))
            .then(CallNotices::default);
        if let Some(notices) = &notices {
            parts.extensions.insert(notices.clone());
        }
        let response = self.forward_body(parts, bytes, envelope).await;
        let response = match notices {
            Some(notices) => stream_notices(response, notices),
            None => response,
        };
        match held {
            Some(held) => streams::held(response, held, None),
            None => response,
        }
    }

    /// A session request counted against its session's bounds, the session's end put in
    /// its extensions.
    async fn hold_request(
        &self,
        parts: &mut http::request::Parts,
        bytes: &[u8],
        envelope: &Envelope,
        id: &str,
    ) -> Result<super::owners::HeldPlace, Refused> {
        // The id as the envelope's walk kept it; a long one is read again.
        let request = envelope.id().or_else(|| request_id(bytes));
        let text = request.as_ref().map(Value::to_string);
        let mut held = self.owners.hold(id, false, text.clone());
        // A client's retry of a request whose first try is still leaving (its connection
        // dropped while the answer was being written: an HTTP client resends then, under
        // the same id) gets in once that one is gone. Ids stay unique among the requests
        // in flight; only the race is waited out.
        let deadline = tokio::time::Instant::now() + DUPLICATE_ID_WAIT;
        while matches!(held, Err(BoundMet::DuplicateId)) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            held = self.owners.hold(id, false, text.clone());
        }
        match held {
            Ok(held) => {
                parts.extensions.insert(held.session_gone());
                parts.extensions.insert(held.clone());
                Ok(held)
            }
            Err(BoundMet::DuplicateId) => Err(Refused::DuplicateId(request)),
            Err(refusal) => Err(Refused::OverLimit(refusal)),
        }
    }

    /// An MRTR request (or any but a `tools/call` in another format) to rmcp; an
    /// `initialize` opens a session counted against the caller's pool.
    async fn forward_mrtr(
        &self,
        parts: http::request::Parts,
        bytes: Bytes,
        envelope: &Envelope,
        pool: Pool,
    ) -> Response {
        let opening = if envelope.method.as_deref() == Some("initialize") {
            let principal = self.tools.principal_of(&parts);
            match self.owners.open(principal, pool).await {
                Ok(opening) => Some(opening),
                Err(refusal) => return Refused::OverLimit(refusal).into_response(),
            }
        } else {
            None
        };
        let response = self.forward_body(parts, bytes, envelope).await;
        if let Some(opening) = opening
            && let Some(id) = response
                .headers()
                .get(crate::serve::head::SESSION_ID_HEADER)
                .and_then(|id| id.to_str().ok())
        {
            opening.opened(id);
        }
        response
    }

    /// A `tools/call` in a header-selected format: decoded into MRTR form (what MRTR
    /// cannot say travels beside it), run by rmcp, its response encoded back.
    async fn forward_translated(
        &self,
        mut parts: http::request::Parts,
        bytes: Bytes,
        format: WireFormat,
    ) -> Response {
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

    /// A checked body to rmcp's transport; a `tools/list`'s answer gains each tool's task
    /// support.
    async fn forward_body(
        &self,
        parts: http::request::Parts,
        bytes: Bytes,
        envelope: &Envelope,
    ) -> Response {
        let lists_tools = envelope.method.as_deref() == Some("tools/list");
        let response = self
            .forward(Request::from_parts(parts, Body::from(bytes)))
            .await;
        if lists_tools {
            super::tool_list::with_task_support(response, &self.tools, self.response_limit()).await
        } else {
            response
        }
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

    async fn read_body(&self, body: Body) -> Result<Bytes, Refused> {
        let read = axum::body::to_bytes(body, self.max_body_bytes);
        match tokio::time::timeout(self.body_read_timeout, read).await {
            Err(_) => Err(Refused::BodyTimeout),
            Ok(Err(_)) => Err(Refused::BodyTooLarge(self.max_body_bytes)),
            Ok(Ok(bytes)) => Ok(bytes),
        }
    }

    /// Rewrites rmcp's response to a rewritten `tools/call` back into `format`: a JSON
    /// body, or the response message inside an SSE stream (when the tool sent progress
    /// or log notifications first).
    async fn encode(&self, format: WireFormat, response: Response) -> Response {
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
        BoxFuture<'static, Response>,
        fn(Response) -> Result<Response, std::convert::Infallible>,
    >;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        Arc::clone(&self.0).run(request, None).boxed().map(Ok)
    }
}

impl GuardService {
    /// [`tower::Service::call`] for a request whose peer's address the listener knows:
    /// the address is handed over as a value instead of through the request's extensions
    /// (an insert allocates, and every request paid for it). Only admission reads it:
    /// the paths after it read the caller the guard resolved from it.
    pub(crate) fn call_from(
        &self,
        request: Request,
        peer: PeerAddr,
    ) -> <Self as tower::Service<Request>>::Future {
        Arc::clone(&self.0).run(request, Some(peer)).boxed().map(Ok)
    }
}

/// What a POST is: decided once, by [`Guard::posted`]. The value lives on the stack of
/// `post`'s block, never in a future (the future-size test in `transport.rs`).
enum Posted<'a> {
    /// The usual MRTR `tools/call`, or a stateless listing (`tools/list`, …,
    /// `server/discover`), catalog request (`prompts/get`, `resources/read`) or task
    /// request (`tasks/get`, …), checked and read in one pass: the direct path's future of
    /// its response (`Direct::claim`).
    Direct(BoxFuture<'a, Response>),
    /// Any other, served by [`Guard::serve_posted`].
    Other(OtherPost<'a>),
}

/// A POST other than the usual call: boxed apart from it ([`Guard::post`]).
enum OtherPost<'a> {
    /// A stateless `requests/resume` or `requests/getStatus` (seed 002) the direct path
    /// serves.
    Resume(&'a super::direct::Direct, Box<super::direct::Resumption>),
    /// A request, notification or answer in a live session of the caller's.
    InSession { id: String, envelope: Envelope },
    /// Any other request outside a session: rmcp answers it in MRTR form.
    Mrtr(Envelope),
    /// A `tools/call` in a header-selected wire format: translated into MRTR form for
    /// rmcp, and its response back.
    Translated(WireFormat),
}

/// The session a request names: a live one the caller opened, or (`Other`) an id of no
/// live session, or none. (Another principal's is refused before this is made.)
enum Named {
    Owned(String),
    Other(Option<String>),
}

impl Named {
    fn into_id(self) -> Option<String> {
        match self {
            Named::Owned(id) => Some(id),
            Named::Other(id) => id,
        }
    }
}

/// Why the guard refused a request: typed while the checks run, a response once, here.
enum Refused {
    /// The address sent too many credentials the server did not verify this minute
    /// (`tries.rs`).
    TooManyTries,
    /// The request named a session another principal opened: answered as one that does
    /// not exist, so that an id tells a stranger nothing.
    SessionNotFound,
    /// A place, session or stream bound is met.
    OverLimit(BoundMet),
    /// Every place stayed busy for the queue timeout.
    Busy,
    /// The body did not arrive within the body read timeout.
    BodyTimeout,
    /// The body is larger than this many bytes (or could not be read).
    BodyTooLarge(usize),
    /// The body is not JSON, or a shape JSON-RPC or the budget refuses.
    Json(JsonProblem),
    /// A session request whose id (kept here) is in flight in its session.
    DuplicateId(Option<Value>),
    /// The request selects a wire format this server does not know.
    Format(UnknownFormat),
    /// Nobody verified the caller, and the server serves only verified ones
    /// (`SagaServerBuilder::require_verified`).
    Unverified,
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        match self {
            Refused::TooManyTries => too_many_tries(),
            Refused::Unverified => {
                tracing::info!("refused a request: its caller is not verified");
                refuse(
                    StatusCode::UNAUTHORIZED,
                    INVALID_REQUEST,
                    "this server serves only callers it verifies, and this request carries no \
                     credentials it accepted",
                )
            }
            Refused::SessionNotFound => {
                (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
            }
            Refused::OverLimit(refusal) => over_limit(refusal),
            Refused::Busy => busy(),
            Refused::BodyTimeout => refuse(
                StatusCode::REQUEST_TIMEOUT,
                INVALID_REQUEST,
                "the request body did not arrive within the body read timeout",
            ),
            Refused::BodyTooLarge(max) => refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                INVALID_REQUEST,
                &format!("the request body exceeds {max} bytes (or could not be read)"),
            ),
            Refused::Json(JsonProblem::Syntax(why)) => refuse(
                StatusCode::BAD_REQUEST,
                PARSE_ERROR,
                &format!("Parse error: {why}"),
            ),
            Refused::Json(JsonProblem::Refused(why)) => {
                refuse(StatusCode::BAD_REQUEST, INVALID_REQUEST, &why)
            }
            Refused::Format(unknown) => refuse(
                StatusCode::BAD_REQUEST,
                INVALID_REQUEST,
                &unknown.to_string(),
            ),
            Refused::DuplicateId(id) => {
                tracing::info!("refused a session request whose id is in flight");
                refuse_id(
                    StatusCode::CONFLICT,
                    id.as_ref().unwrap_or(&Value::Null),
                    INVALID_REQUEST,
                    &BoundMet::DuplicateId.to_string(),
                )
            }
        }
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

/// The JSON check of a body the direct read did not take: its envelope, within the
/// budget, or the refusal (a parse error, or a shape JSON-RPC or the budget refuses).
fn check_json(bytes: &[u8], budget: JsonBudget) -> Result<Envelope, Refused> {
    Envelope::read(bytes, budget).map_err(Refused::Json)
}

/// An `initialize` rewritten for seed 002 (its `resumableRequests` promoted into the
/// capabilities rmcp reads); any other body as it is.
fn promote_initialize(
    parts: &mut http::request::Parts,
    bytes: Bytes,
    envelope: &Envelope,
) -> Bytes {
    let promoted = (envelope.method.as_deref() == Some("initialize"))
        .then(|| resumable::promote_in_bytes(&bytes))
        .flatten();
    match promoted {
        Some(promoted) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            Bytes::from(promoted)
        }
        None => bytes,
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
