//! The session era (MCP 2025-11-25 and 2025-06-18): a client that opened a session with
//! `initialize` expects the server to send it `elicitation/create`,
//! `sampling/createMessage` and `roots/list` during the call. The same saga runs here in
//! process: the same transitions as for MRTR (so answers pass the same checks: schema
//! validation with asking again, capabilities, sampling and roots checks), with each
//! round's requests sent to the client through the session's peer, concurrently, and
//! their answers fed to the next transition. One engine, two drivers.

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::model::{CallToolResponse, InputRequest, InputResponses, ServerRequest};
use rmcp::service::ServiceError;
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::Value;

use rmcp::model::InputRequiredResult;

use super::in_flight::{InFlight, Marked};
use super::wire::resumable;
use crate::engine::runner::drive::{AtCheckpoint, Inputs, Next, Pass, Policy, TransitionFuture};
use crate::engine::runner::family::{Saga, point_key};
use crate::engine::runner::sampling::serve_round;
use crate::engine::{Call, MAX_REPLAYED_CHECKPOINTS, SagaContext, StepFailure};
use crate::log::Escaped;
use crate::state::StateCodec;

/// How many times in a row a session sends the same requests (the first time included)
/// while the client's answers do not fit what was asked, before the call fails with
/// `-32602`.
pub const MAX_ASKS_AGAIN: usize = 3;

/// What a session call runs with, from the server's registry.
pub(super) struct SessionTools<'a> {
    /// The server's codec: what tokens handed to the client (resume tokens) and tokens
    /// resumed from the client are sealed with.
    pub(super) codec: &'a StateCodec,
    /// The codec of states that stay in this process.
    pub(super) session_codec: &'a StateCodec,
    pub(super) in_flight: &'a InFlight,
    /// How long the client may take to answer one round.
    pub(super) client_request_timeout: Duration,
    /// How long the saga may run between two rounds of its client's (as one stateless
    /// request may): [`SagaToolsBuilder::max_run_time`](super::SagaToolsBuilder::max_run_time).
    pub(super) max_run_time: Duration,
}

/// [`Policy`] of a session's call: each round's requests sent to the client through the
/// session, the samples the server's model takes answered first.
pub(super) struct Session<'a> {
    tools: SessionTools<'a>,
    saga: &'a Saga,
    cx: &'a SagaContext,
    /// The tool's name, for what the transition's bounds say.
    name: String,
    peer: Peer<RoleServer>,
    /// The codec of the state the call goes on from: the session's own, or the server's
    /// for a call resumed from a token (seed 002), which goes on under them.
    codec: &'a StateCodec,
    at_checkpoint: AtCheckpoint,
    /// The keys the last round asked, and how many times in a row they were asked.
    asked: Vec<String>,
    asks_again: usize,
    /// The tokens this call hands out stay its own while it runs.
    handed_out: Marked,
    /// When the run since the client last answered began: the stateless era's run-time
    /// bound holds between two rounds of the client's (what one stateless request runs).
    run_started: tokio::time::Instant,
}

impl<'a> Session<'a> {
    pub(super) fn new(
        tools: SessionTools<'a>,
        saga: &'a Saga,
        call: &Call,
        cx: &'a SagaContext,
        at_checkpoint: AtCheckpoint,
    ) -> Result<Self, ErrorData> {
        let Some(peer) = cx.peer().cloned() else {
            return Err(ErrorData::internal_error(
                "a session call without a peer",
                None,
            ));
        };
        // A session's states stay in this process, under its own key and a day's expiry
        // (a person may take long to answer).
        let codec = if call.request_state.is_some() {
            tools.codec
        } else {
            tools.session_codec
        };
        Ok(Self {
            handed_out: tools.in_flight.none(),
            tools,
            saga,
            cx,
            name: call.name.clone(),
            peer,
            codec,
            at_checkpoint,
            asked: Vec::new(),
            asks_again: 0,
            run_started: tokio::time::Instant::now(),
        })
    }

    /// What is left of the run time since the client last answered.
    fn left(&self) -> Duration {
        self.tools
            .max_run_time
            .saturating_sub(self.run_started.elapsed())
    }

    /// Tells the client how to resume from `state` (seed 002), when it declared it.
    async fn announce(&mut self, call: &Call, state: &str, asks: bool) -> Result<(), ErrorData> {
        let point = point_key(self.saga, &call.name, state)?;
        let (in_flight, handed_out) = (self.tools.in_flight, &mut self.handed_out);
        let keep = |announced: &str| {
            in_flight.add(handed_out, announced);
        };
        resumable::announce(
            self.tools.codec,
            self.codec,
            call,
            (state, &point),
            asks,
            self.cx,
            keep,
        )
        .await;
        Ok(())
    }
}

impl Policy for Session<'_> {
    fn codec(&self) -> &StateCodec {
        self.codec
    }

    async fn transition<'b>(
        &'b self,
        run: TransitionFuture<'b>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.cx.is_cancelled() {
            return Err(cancelled(&self.name));
        }
        let left = self.left();
        // A client that cancels the call (`notifications/cancelled`) stops the run.
        tokio::select! {
            outcome = tokio::time::timeout(left, run) => {
                outcome.map_err(|_| ran_too_long(&self.name, self.tools.max_run_time))?
            }
            () = self.cx.cancelled() => Err(cancelled(&self.name)),
        }
    }

    async fn ended(
        &mut self,
        call: &Call,
        response: CallToolResponse,
    ) -> Result<CallToolResponse, ErrorData> {
        resumable::ended(self.tools.codec, call.request_state.as_deref()).await;
        Ok(response)
    }

    async fn checkpoint(
        &mut self,
        call: &Call,
        mut required: InputRequiredResult,
        cx: &SagaContext,
    ) -> Result<Next, ErrorData> {
        if let Some(state) = required.request_state.clone() {
            if self.at_checkpoint == AtCheckpoint::Respond {
                // Where a task begins: its state sealed under the server's keys, so that
                // any replica's worker can open it.
                let point = point_key(self.saga, &call.name, &state)?;
                let portable = self
                    .tools
                    .codec
                    .reseal(
                        self.codec,
                        &state,
                        &point,
                        &call.binding(cx.principal()),
                        &cx.state_owner(),
                    )
                    .await
                    .map_err(|error| crate::engine::unopened(&call.name, &error))?;
                required.request_state = Some(portable);
                return Ok(Next::Respond(CallToolResponse::InputRequired(required)));
            }
            self.announce(call, &state, false).await?;
        }
        self.asked.clear();
        self.asks_again = 0;
        let inputs = Inputs {
            answers: Some(InputResponses::new()),
            ..Inputs::checkpoint(Pass::Counted)
        };
        Ok(Next::GoOn {
            from: required,
            inputs,
        })
    }

    async fn asks(
        &mut self,
        call: &Call,
        mut required: InputRequiredResult,
        cx: &SagaContext,
    ) -> Result<Next, ErrorData> {
        let mut requests = required.input_requests.take().unwrap_or_default();
        if let Some(state) = required.request_state.clone() {
            self.announce(call, &state, true).await?;
        }
        let keys: Vec<String> = requests.keys().cloned().collect();
        if keys == self.asked {
            self.asks_again += 1;
            if self.asks_again >= MAX_ASKS_AGAIN {
                tracing::info!(tool = %Escaped(&call.name), ?keys, "the client's answers kept failing their checks");
                return Err(ErrorData::invalid_params(
                    format!(
                        "the client's answers to {keys:?} did not match what was asked, \
                         {MAX_ASKS_AGAIN} times"
                    ),
                    None,
                ));
            }
        } else {
            self.asks_again = 0;
        }
        self.asked = keys;
        // The samples the server's model takes are answered here, within what is left of
        // the run: the model's time is the server's, as in a stateless request, so a slow
        // model cannot hold the call (and its session) past the run-time bound. The rest
        // goes to the client (`crate::model`).
        let left = self.left();
        let served = tokio::select! {
            served = tokio::time::timeout(left, serve_round(&mut requests, cx, None)) => {
                served.map_err(|_| ran_too_long(&call.name, self.tools.max_run_time))?
            }
            // A call cancelled while the model answers gives its places back now.
            () = cx.cancelled() => return Err(cancelled(&call.name)),
        };
        let timeout = self.tools.client_request_timeout;
        let asking = !requests.is_empty();
        let (answers, failures) = ask(&self.peer, requests, cx, timeout).await.map_err(|error| {
            if cx.is_cancelled() {
                cancelled(&call.name)
            } else {
                tracing::info!(tool = %Escaped(&call.name), %error, "the client did not answer");
                ErrorData::internal_error(format!("the client did not answer: {error}"), None)
            }
        })?;
        let pass = if asking {
            // The client answered: a new run begins, as a new stateless request would.
            self.run_started = tokio::time::Instant::now();
            Pass::Answered
        } else {
            // Answered by the server's model alone: bounded by the run time.
            Pass::Free
        };
        let inputs = Inputs {
            answers: Some(answers),
            failures,
            model: served.model,
            pass,
        };
        Ok(Next::GoOn {
            from: required,
            inputs,
        })
    }

    fn past_bound(
        &mut self,
        call: &Call,
        _: InputRequiredResult,
        _: bool,
    ) -> Result<CallToolResponse, ErrorData> {
        tracing::info!(tool = %Escaped(&call.name), "a session call passed the checkpoint bound");
        Err(ErrorData::invalid_request(
            format!(
                "the saga checkpoints more than {MAX_REPLAYED_CHECKPOINTS} times without \
                 asking its client, more than one request may run; call it as a task \
                 (the tasks extension) or over MRTR (MCP 2026-07-28), which carry its state"
            ),
            None,
        ))
    }
}

fn ran_too_long(tool: &str, max: Duration) -> ErrorData {
    tracing::warn!(tool = %Escaped(tool), ?max, "a session call ran longer than the run-time bound");
    ErrorData::internal_error(
        format!(
            "the call ran longer than this server allows one run between its client's answers \
             ({} s) and was stopped",
            max.as_secs_f64()
        ),
        None,
    )
}

fn cancelled(tool: &str) -> ErrorData {
    tracing::info!(tool = %Escaped(tool), "the client cancelled the call");
    ErrorData::internal_error("the call was cancelled", None)
}

/// Sends every request of a round to the client at once; an error the client answers
/// with becomes that request's step failure.
///
/// Each request is given up after `timeout` (the call then fails): a client that never
/// answers must not hold the call, and what it holds, for ever.
async fn ask(
    peer: &Peer<RoleServer>,
    requests: rmcp::model::InputRequests,
    cx: &SagaContext,
    timeout: std::time::Duration,
) -> Result<(InputResponses, BTreeMap<String, StepFailure>), ServiceError> {
    let sends = requests.into_iter().map(|(key, request)| async move {
        let request: ServerRequest = match request {
            InputRequest::Elicitation(request) => request.into(),
            InputRequest::CreateMessage(request) => request.into(),
            InputRequest::ListRoots(request) => request.into(),
            _ => return (key, Err(ServiceError::UnexpectedResponse)),
        };
        let mut options = rmcp::service::PeerRequestOptions::no_options();
        options.timeout = Some(timeout);
        let answer = match peer.send_request_with_option(request, options).await {
            Ok(handle) => handle.await_response().await,
            Err(error) => Err(error),
        };
        (key, answer)
    });
    let all = futures::future::join_all(sends);
    let results = tokio::select! {
        results = all => results,
        () = cx.cancelled() => return Err(ServiceError::Cancelled { reason: None }),
    };
    let mut answers = InputResponses::new();
    let mut failures = BTreeMap::new();
    for (key, result) in results {
        match result {
            Ok(answer) => {
                let value = serde_json::to_value(answer).unwrap_or(Value::Null);
                answers.insert(key, value);
            }
            Err(ServiceError::McpError(error)) => {
                failures.insert(
                    key,
                    StepFailure::from_client(i64::from(error.code.0), &error.message),
                );
            }
            Err(other) => return Err(other),
        }
    }
    Ok((answers, failures))
}
