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
//!
//! The tool's own progress and log messages, when the request's `_meta` asks for them, ride
//! the same stream, in the order sent among the resume policies ([`super::sse`]).

use axum::response::Response;
use futures::FutureExt as _;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, CustomNotification, InputRequiredResult, RequestId, ServerJsonRpcMessage,
    ServerNotification, ServerResult,
};

use super::in_flight::Marked;
use super::sse::{Events, Framing};
use super::tools::SagaTools;
use super::wire::resumable;
use crate::engine::caller::outbox::Outbox;
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
    let failed_id = id.clone();
    let (outbox, inbox) = Outbox::channel();
    let cx = cx.with_outbox(outbox.clone());
    let run = async move {
        let _marked = marked;
        let outcome =
            super::route::bounded(&tools, &cx, stream(&tools, &saga, call, &cx, &outbox)).await;
        let message = match outcome {
            Ok(response) => {
                let mut result = ServerResult::from(tools.stamped(response));
                result.fill_missing_cache_hints();
                ServerJsonRpcMessage::response(result, id)
            }
            Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
        };
        match serde_json::to_value(&message) {
            Ok(message) => message.to_string().into_bytes(),
            Err(error) => {
                tracing::error!(%error, "a streamed result could not be written");
                let error = ErrorData::internal_error("the result could not be written", None);
                serde_json::json!({"jsonrpc": "2.0", "id": null, "error": error})
                    .to_string()
                    .into_bytes()
            }
        }
    };
    let answer = super::sse::spawned(run).map(move |json| {
        json.unwrap_or_else(|| {
            let error = super::route::stopped_before_answering();
            let message = ServerJsonRpcMessage::error(error, Some(failed_id));
            serde_json::to_vec(&message).unwrap_or_default()
        })
    });
    Ok(Events {
        first: None,
        answer: super::sse::Answer::Running(Box::pin(answer)),
        inbox,
        keep_alive: None,
        framing: Framing::Message,
    }
    .into_response())
}

/// Runs `call` from checkpoint to checkpoint, sending a resume policy at each, until it
/// completes or asks the client something.
async fn stream(
    tools: &SagaTools,
    saga: &Saga,
    mut call: Call,
    cx: &SagaContext,
    out: &Outbox,
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
    /// The stream's queue, which the tool's own notifications share, so that all keep
    /// the order they were sent in.
    out: &'a Outbox,
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
            let policy = CustomNotification::new(resumable::RESUME_POLICY, Some(params));
            if !self
                .out
                .send(ServerNotification::CustomNotification(policy))
                .await
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
