//! Seed 002 (SEP-975) in the stateless era: a 2026-07-28 client that declares
//! `resumableRequests` in its request's `_meta` client capabilities gets its call in one
//! streamed (SSE) response instead of an MRTR round per checkpoint.
//!
//! The call runs in this request from checkpoint to checkpoint; at each one the stream
//! carries `notifications/requests/resumePolicy` with a resume token (the saga's sealed
//! state there, sealed again for the request's id and principal), then the call goes on.
//! A round that asks the client something ends the stream with `input_required`, as MRTR
//! does (there is no session to ask through); the final message is the result.
//!
//! After a disconnect, a crash or a `kill -9`, `requests/resume` under the original
//! request's id, with the last token, continues the call on any replica that holds the
//! key, streamed the same way; `requests/getStatus` answers from the token alone. A token
//! being worked from in this process (its call still running) is refused, as every
//! resumed token is.
//!
//! Dropping the response (the client went away) drops the run: the work goes on only when
//! the client resumes it.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::response::Response;
use http::{HeaderValue, StatusCode, header};
use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, RequestId, ServerJsonRpcMessage, ServerResult};
use serde_json::Value;
use tokio::sync::mpsc;

use super::SagaTools;
use super::in_flight::Marked;
use super::wire::resumable;
use crate::engine::family::point_key;
use crate::engine::{Call, SagaContext};

/// Whether `name`'s call by this client is streamed: it declared `resumableRequests`, and
/// the call does not become a task (a client that declared tasks gets one for a task tool).
pub(crate) fn wanted(tools: &SagaTools, name: &str, cx: &SagaContext) -> bool {
    if !resumable::declared(cx.capabilities()) {
        return false;
    }
    let becomes_task = tools.tasks().is_some()
        && cx.capabilities().supports_tasks()
        && tools
            .saga(name)
            .is_ok_and(|saga| saga.task_support() != crate::tasks::TaskSupport::Forbidden);
    !becomes_task
}

/// The streamed response of `call`, request `id`: its resume policies, then its result or
/// error. `marked` holds the token a `requests/resume` continues from until the run ends.
pub(crate) fn respond(
    tools: SagaTools,
    id: RequestId,
    call: Call,
    cx: SagaContext,
    marked: Option<Marked>,
) -> Response {
    let (sender, receiver) = mpsc::unbounded_channel::<Bytes>();
    let run = async move {
        let _marked = marked;
        let outcome = super::route::bounded(&tools, &cx, drive(&tools, call, &cx, &sender)).await;
        let message = match outcome {
            Ok(response) => {
                let mut result = ServerResult::from(tools.stamped(response));
                result.fill_missing_cache_hints();
                ServerJsonRpcMessage::response(result, id)
            }
            Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
        };
        match serde_json::to_value(&message) {
            Ok(message) => {
                let _ = sender.send(event(&message));
            }
            Err(error) => tracing::error!(%error, "a streamed result could not be written"),
        }
    };
    let stream = Streamed {
        run: Some(Box::pin(run)),
        receiver,
    };
    let mut response = Response::new(Body::from_stream(stream));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Runs `call` from checkpoint to checkpoint, sending a resume policy at each, until it
/// completes or asks the client something.
async fn drive(
    tools: &SagaTools,
    mut call: Call,
    cx: &SagaContext,
    out: &mpsc::UnboundedSender<Bytes>,
) -> Result<CallToolResponse, ErrorData> {
    let saga = tools.saga(&call.name)?.clone();
    // States passed from checkpoint to checkpoint in this run stay in this process, under
    // the session key; what leaves it (a resume token, an `input_required` state) is
    // sealed again under the server's keys. A resumed call starts from a state sealed
    // under those.
    let codec = if call.request_state.is_some() {
        tools.codec()
    } else {
        tools.session_codec()
    };
    let mut handed_out = tools.in_flight().none();
    loop {
        if out.is_closed() {
            return Err(ErrorData::internal_error("the client went away", None));
        }
        let response = saga.run(codec, call.clone(), cx).await?;
        let CallToolResponse::InputRequired(mut required) = response else {
            resumable::ended(tools.codec(), call.request_state.as_deref()).await;
            return Ok(response);
        };
        let Some(state) = required.request_state.clone() else {
            return Ok(CallToolResponse::InputRequired(required));
        };
        let point = point_key(&saga, &call.name, &state)?;
        let asks = required
            .input_requests
            .as_ref()
            .is_some_and(|requests| !requests.is_empty());
        if asks {
            // MRTR from here: the client answers and retries with a state it can take
            // to any replica.
            if !std::ptr::eq(codec, tools.codec()) {
                let portable = tools
                    .codec()
                    .reseal(codec, &state, &point, &call.binding(cx.principal()))
                    .map_err(|error| crate::engine::invalid_state(&call.name, &error))?;
                required.request_state = Some(portable);
            }
            return Ok(CallToolResponse::InputRequired(required));
        }
        if let Some((params, announced)) =
            resumable::policy(tools.codec(), codec, &call, (&state, &point), false, cx).await
        {
            tools.in_flight().add(&mut handed_out, &announced);
            if out.send(event(&resumable::policy_message(params))).is_err() {
                return Err(ErrorData::internal_error("the client went away", None));
            }
        }
        call.request_state = Some(state);
        call.input_responses = None;
        call.failures.clear();
        tokio::task::yield_now().await;
    }
}

/// One SSE event carrying `message`.
fn event(message: &Value) -> Bytes {
    Bytes::from(format!("event: message\ndata: {message}\n\n"))
}

/// The response body: the run, polled as the body is read, and what it has sent so far.
struct Streamed {
    run: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    receiver: mpsc::UnboundedReceiver<Bytes>,
}

impl futures::Stream for Streamed {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(run) = self.run.as_mut()
            && run.as_mut().poll(cx).is_ready()
        {
            // Its sender is dropped with it: the receiver ends once drained.
            self.run = None;
        }
        self.receiver.poll_recv(cx).map(|event| event.map(Ok))
    }
}
