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

use super::in_flight::InFlight;
use super::wire::resumable;
use crate::engine::family::{Saga, point_key};
use crate::engine::{Call, MAX_REPLAYED_CHECKPOINTS, SagaContext, StepFailure};
use crate::log::Escaped;
use crate::state::StateCodec;

/// How many times in a row a session sends the same requests (the first time included)
/// while the client's answers do not fit what was asked, before the call fails with
/// `-32602`.
pub const MAX_ASKS_AGAIN: usize = 3;

/// How far [`drive`] runs a saga.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DriveUntil {
    /// Its end.
    End,
    /// Its first checkpoint, where a task begins: the checkpoint's response comes back,
    /// its state sealed under the server's keys so that any replica's worker can open it.
    Checkpoint,
}

/// What a session call runs with, from the server's registry.
pub(super) struct Driver<'a> {
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

/// Runs `saga` within this request, asking the client through the session, until
/// `until`.
pub(super) async fn drive(
    tools: Driver<'_>,
    saga: &Saga,
    mut call: Call,
    cx: &SagaContext,
    until: DriveUntil,
) -> Result<CallToolResponse, ErrorData> {
    let Some(peer) = cx.peer().cloned() else {
        return Err(ErrorData::internal_error(
            "a session call without a peer",
            None,
        ));
    };
    // A session's states stay in this process, under its own key and a day's expiry (a
    // person may take long to answer). A call resumed from a token (seed 002) carries
    // a state sealed under the server's keys, and goes on under them.
    let codec = if call.request_state.is_some() {
        tools.codec
    } else {
        tools.session_codec
    };
    let mut asked: Vec<String> = Vec::new();
    let mut asks_again = 0;
    // The tokens this call hands out stay its own while it runs.
    let mut handed_out = tools.in_flight.none();
    // The stateless era's bounds, between two rounds of the client's (what one stateless
    // request runs): the run time, and the checkpoints passed without asking.
    let mut run_started = tokio::time::Instant::now();
    let mut checkpoints = 0usize;
    loop {
        if cx.is_cancelled() {
            return Err(cancelled(&call.name));
        }
        let left = tools.max_run_time.saturating_sub(run_started.elapsed());
        // A client that cancels the call (`notifications/cancelled`) stops the run.
        let response = tokio::select! {
            outcome = tokio::time::timeout(left, saga.run(codec, call.clone(), cx)) => {
                outcome.map_err(|_| ran_too_long(&call.name, tools.max_run_time))??
            }
            () = cx.cancelled() => return Err(cancelled(&call.name)),
        };
        let CallToolResponse::InputRequired(required) = response else {
            super::wire::resumable::ended(tools.codec, call.request_state.as_deref()).await;
            return Ok(response);
        };
        let checkpoint = required
            .input_requests
            .as_ref()
            .is_none_or(|requests| requests.is_empty());
        if checkpoint && until == DriveUntil::End {
            checkpoints += 1;
            if checkpoints > MAX_REPLAYED_CHECKPOINTS {
                tracing::info!(tool = %Escaped(&call.name), "a session call passed the checkpoint bound");
                return Err(ErrorData::invalid_request(
                    format!(
                        "the saga checkpoints more than {MAX_REPLAYED_CHECKPOINTS} times without \
                         asking its client, more than one request may run; call it as a task \
                         (the tasks extension) or over MRTR (MCP 2026-07-28), which carry its state"
                    ),
                    None,
                ));
            }
        }
        if until == DriveUntil::Checkpoint
            && required
                .input_requests
                .as_ref()
                .is_none_or(|r| r.is_empty())
            && let Some(state) = &required.request_state
        {
            let point = point_key(saga, &call.name, state)?;
            let portable = tools
                .codec
                .reseal(codec, state, &point, &call.binding(cx.principal()))
                .map_err(|error| crate::engine::invalid_state(&call.name, &error))?;
            let mut required = required;
            required.request_state = Some(portable);
            return Ok(CallToolResponse::InputRequired(required));
        }
        let requests = required.input_requests.unwrap_or_default();
        if let Some(state) = &required.request_state {
            let asks = !requests.is_empty();
            let point = point_key(saga, &call.name, state)?;
            let keep = |announced: &str| {
                tools.in_flight.add(&mut handed_out, announced);
            };
            resumable::announce(tools.codec, codec, &call, (state, &point), asks, cx, keep).await;
        }
        let keys: Vec<String> = requests.keys().cloned().collect();
        if !keys.is_empty() && keys == asked {
            asks_again += 1;
            if asks_again >= MAX_ASKS_AGAIN {
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
            asks_again = 0;
        }
        asked = keys;
        // The samples the server's model takes are answered here, within what is left of
        // the run: the model's time is the server's, as in a stateless request, so a slow
        // model cannot hold the call (and its session) past the run-time bound. The rest
        // goes to the client (`crate::model`).
        let mut requests = requests;
        let left = tools.max_run_time.saturating_sub(run_started.elapsed());
        let served = tokio::select! {
            served = tokio::time::timeout(left, crate::engine::sampling::serve_round(&mut requests, cx, None)) => {
                served.map_err(|_| ran_too_long(&call.name, tools.max_run_time))?
            }
            // A call cancelled while the model answers gives its places back now.
            () = cx.cancelled() => return Err(cancelled(&call.name)),
        };
        let timeout = tools.client_request_timeout;
        let asking = !requests.is_empty();
        let (answers, failures) = ask(&peer, requests, cx, timeout).await.map_err(|error| {
            if cx.is_cancelled() {
                cancelled(&call.name)
            } else {
                tracing::info!(tool = %Escaped(&call.name), %error, "the client did not answer");
                ErrorData::internal_error(format!("the client did not answer: {error}"), None)
            }
        })?;
        if asking {
            // The client answered: a new run begins, as a new stateless request would.
            run_started = tokio::time::Instant::now();
            checkpoints = 0;
        }
        call.request_state = required.request_state;
        call.input_responses = Some(answers);
        call.failures = failures;
        call.model = served.model;
        // A saga that checkpoints in a loop must not hold the worker.
        tokio::task::yield_now().await;
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
