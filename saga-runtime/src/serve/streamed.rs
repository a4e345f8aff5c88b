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
use rmcp::model::{
    CallToolResponse, InputRequiredResult, RequestId, ServerJsonRpcMessage, ServerResult,
};
use serde_json::Value;
use tokio::sync::mpsc;

use super::in_flight::Marked;
use super::tools::SagaTools;
use super::wire::resumable;
use crate::engine::runner::drive::{Inputs, Next, Pass, Policy, TransitionFuture, drive};
use crate::engine::runner::family::{Saga, point_key};
use crate::engine::runner::per_call::OnRetry;
use crate::engine::{Call, SagaContext};
use crate::state::StateCodec;

/// The streamed response of `call` of `saga` (its route: [`Route::Streamed`]), request
/// `id`: its resume policies, then its result or error. A call that resumes a token whose
/// work still runs is refused, as every resumed token is; the token is held until the run
/// ends.
///
/// [`Route::Streamed`]: super::route::Route::Streamed
pub(crate) fn respond(
    tools: SagaTools,
    id: RequestId,
    saga: Saga,
    call: Call,
    cx: SagaContext,
) -> Result<Response, ErrorData> {
    let marked = match &call.request_state {
        Some(token) => Some(
            tools
                .in_flight()
                .enter(token)
                .ok_or_else(super::in_flight::already_resumed)?,
        ),
        None => None,
    };
    let (sender, receiver) = mpsc::unbounded_channel::<Bytes>();
    let run = async move {
        let _marked = marked;
        let outcome =
            super::route::bounded(&tools, &cx, stream(&tools, &saga, call, &cx, &sender)).await;
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
    Ok(response)
}

/// Runs `call` from checkpoint to checkpoint, sending a resume policy at each, until it
/// completes or asks the client something.
async fn stream(
    tools: &SagaTools,
    saga: &Saga,
    mut call: Call,
    cx: &SagaContext,
    out: &mpsc::UnboundedSender<Bytes>,
) -> Result<CallToolResponse, ErrorData> {
    // States passed from checkpoint to checkpoint in this run stay in this process, under
    // the session key; what leaves it (a resume token, an `input_required` state) is
    // sealed again under the server's keys. A resumed call starts from a state sealed
    // under those.
    let codec = if call.request_state.is_some() {
        tools.codec()
    } else {
        tools.session_codec()
    };
    let mut policy = Stream {
        tools,
        saga,
        codec,
        out,
        handed_out: tools.in_flight().none(),
    };
    drive(saga, &mut call, cx, &mut policy, OnRetry::AnswerAgain).await
}

/// [`Policy`] of a streamed call: its checkpoints pass, each with a resume policy sent
/// down the stream; a round that asks ends it.
struct Stream<'a> {
    tools: &'a SagaTools,
    saga: &'a Saga,
    codec: &'a StateCodec,
    out: &'a mpsc::UnboundedSender<Bytes>,
    /// The tokens this call hands out stay its own while it runs.
    handed_out: Marked,
}

impl Policy for Stream<'_> {
    fn codec(&self) -> &StateCodec {
        self.codec
    }

    async fn transition<'b>(
        &'b self,
        run: TransitionFuture<'b>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.out.is_closed() {
            return Err(went_away());
        }
        run.await
    }

    async fn ended(
        &mut self,
        call: &Call,
        response: CallToolResponse,
    ) -> Result<CallToolResponse, ErrorData> {
        resumable::ended(self.tools.codec(), call.request_state.as_deref()).await;
        Ok(response)
    }

    async fn checkpoint(
        &mut self,
        call: &Call,
        required: InputRequiredResult,
        cx: &SagaContext,
    ) -> Result<Next, ErrorData> {
        let Some(state) = required.request_state.as_deref() else {
            return Ok(Next::Respond(CallToolResponse::InputRequired(required)));
        };
        let point = point_key(self.saga, &call.name, state)?;
        if let Some((params, announced)) = resumable::policy(
            self.tools.codec(),
            self.codec,
            call,
            (state, &point),
            false,
            cx,
        )
        .await
        {
            self.tools.in_flight().add(&mut self.handed_out, &announced);
            if self
                .out
                .send(event(&resumable::policy_message(params)))
                .is_err()
            {
                return Err(went_away());
            }
        }
        Ok(Next::GoOn {
            from: required,
            // Bounded by the run time.
            inputs: Inputs::checkpoint(Pass::Free),
        })
    }

    async fn asks(
        &mut self,
        call: &Call,
        mut required: InputRequiredResult,
        cx: &SagaContext,
    ) -> Result<Next, ErrorData> {
        if let Some(state) = required.request_state.as_deref()
            && !std::ptr::eq(self.codec, self.tools.codec())
        {
            // MRTR from here: the client answers and retries with a state it can take
            // to any replica.
            let point = point_key(self.saga, &call.name, state)?;
            let portable = self
                .tools
                .codec()
                .reseal(
                    self.codec,
                    state,
                    &point,
                    &call.binding(cx.principal()),
                    &cx.state_owner(),
                )
                .await
                .map_err(|error| crate::engine::unopened(&call.name, &error))?;
            required.request_state = Some(portable);
        }
        Ok(Next::Respond(CallToolResponse::InputRequired(required)))
    }
}

fn went_away() -> ErrorData {
    ErrorData::internal_error("the client went away", None)
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
