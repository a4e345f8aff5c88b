//! The in-process replay of a first request that already brings answers: the route of
//! the formats that carry no state token ([`super::route`]).

use std::collections::BTreeMap;

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, InputResponses};

use crate::engine::family::Saga;
use crate::engine::{Call, MAX_REPLAYED_CHECKPOINTS, SagaContext, StepFailure};
use crate::state::StateCodec;

/// Runs a saga from its start in process, one transition at a time, feeding each
/// round the answers `pool` (and `failures`) hold for its keys, until it completes or
/// asks for something the pool does not answer; that last response is returned.
///
/// For requests that bring answers but no state: the dependent-requests format, and
/// a first MRTR call whose answers are already known (the conformance suite sends
/// such calls). Code between suspensions runs again on each replay.
///
/// The work is bounded by what the request brings: each answer is given once (a round
/// that asks for a key again, as when an answer failed its schema, ends the replay
/// with that request), and at most [`MAX_REPLAYED_CHECKPOINTS`] checkpoints pass.
/// Between rounds the task yields, so a long replay does not hold up other requests.
pub(crate) async fn replay(
    codec: &StateCodec,
    saga: &Saga,
    mut call: Call,
    mut pool: InputResponses,
    mut failures: BTreeMap<String, StepFailure>,
    cx: &SagaContext,
) -> Result<CallToolResponse, ErrorData> {
    use crate::engine::sampling::{model_takes, serve_when_answered, takes_samples};
    let mut checkpoints = 0;
    loop {
        let mut response = saga.run(codec, call.clone(), cx).await?;
        let CallToolResponse::InputRequired(required) = &mut response else {
            return Ok(response);
        };
        // The round's keys, the samples among them: the client's entries and the
        // model's answers are given to the round by these.
        let keys: Vec<String> = required
            .input_requests
            .as_ref()
            .map(|requests| requests.keys().cloned().collect())
            .unwrap_or_default();
        let mut served = crate::engine::sampling::Served::default();
        if let Some(requests) = required.input_requests.as_mut()
            && takes_samples(cx)
            && requests.values().any(|request| model_takes(cx, request))
        {
            // No token names the call: nothing is kept for a retry.
            match serve_when_answered(requests, cx, &mut pool, &mut failures, None).await {
                // The server's model answers the samples beside the pool's answers.
                Some(answered) => served = answered,
                // The client answers its part first (see `samples::run_serving_samples`).
                None => return Ok(response),
            }
        }
        if keys.is_empty() {
            checkpoints += 1;
            if checkpoints > MAX_REPLAYED_CHECKPOINTS {
                return Err(ErrorData::invalid_request(
                    format!(
                        "the saga checkpoints more than {MAX_REPLAYED_CHECKPOINTS} times, \
                         more than one request without a requestState may run; \
                         call it with MRTR (MCP 2026-07-28), which carries its state"
                    ),
                    None,
                ));
            }
        } else if !keys.iter().all(|key| {
            pool.contains_key(key) || failures.contains_key(key) || served.model.has(key)
        }) {
            return Ok(response);
        }
        call.input_responses = Some(
            keys.iter()
                .filter_map(|key| pool.remove(key).map(|answer| (key.clone(), answer)))
                .collect(),
        );
        call.failures = keys
            .iter()
            .filter_map(|key| failures.remove(key).map(|failure| (key.clone(), failure)))
            .collect();
        call.model = served.model;
        call.request_state = required.request_state.clone();
        tokio::task::yield_now().await;
    }
}
