//! The policy of a first request that already brings answers: replayed in process from
//! the start, each round given the answers the request brought for its keys. The route of
//! the formats that carry no state token (dependent requests), and of a first MRTR call
//! whose answers are already known (the conformance suite sends such calls).
//!
//! The work is bounded by what the request brings: each answer is given once (a round
//! that asks for a key again, as when an answer failed its schema, ends the replay with
//! that request), and checkpoints count against the bound of one request. Code between
//! suspensions runs again on each replay.

use std::collections::BTreeMap;

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, InputRequiredResult, InputResponses};

use crate::engine::runner::drive::{AtCheckpoint, Inputs, Next, Pass, Policy};
use crate::engine::runner::sampling::{Served, model_takes, serve_when_answered, takes_samples};
use crate::engine::{Call, MAX_REPLAYED_CHECKPOINTS, SagaContext, StepFailure};
use crate::state::StateCodec;

/// [`Policy`] of a replay.
pub(crate) struct Replay<'a> {
    codec: &'a StateCodec,
    at_checkpoint: AtCheckpoint,
    /// The answers the request brought, not yet given.
    brought: InputResponses,
    failures: BTreeMap<String, StepFailure>,
}

impl<'a> Replay<'a> {
    /// The replay of `call`, whose answers (and failures) are taken out of it: its first
    /// round starts the saga with none.
    pub(crate) fn new(codec: &'a StateCodec, call: &mut Call, at_checkpoint: AtCheckpoint) -> Self {
        Self {
            codec,
            at_checkpoint,
            brought: call.input_responses.take().unwrap_or_default(),
            failures: std::mem::take(&mut call.failures),
        }
    }
}

impl Policy for Replay<'_> {
    fn codec(&self) -> &StateCodec {
        self.codec
    }

    async fn checkpoint(
        &mut self,
        _: &Call,
        required: InputRequiredResult,
        _: &SagaContext,
    ) -> Result<Next, ErrorData> {
        Ok(match self.at_checkpoint {
            AtCheckpoint::Respond => Next::Respond(CallToolResponse::InputRequired(required)),
            AtCheckpoint::Pass => Next::GoOn {
                from: required,
                inputs: Inputs::checkpoint(Pass::Counted),
            },
        })
    }

    async fn asks(
        &mut self,
        _: &Call,
        mut required: InputRequiredResult,
        cx: &SagaContext,
    ) -> Result<Next, ErrorData> {
        // The round's keys, the samples among them: the answers brought and the model's
        // answers are given to the round by these.
        let keys: Vec<String> = required
            .input_requests
            .as_ref()
            .map(|requests| requests.keys().cloned().collect())
            .unwrap_or_default();
        let mut served = Served::default();
        if let Some(requests) = required.input_requests.as_mut()
            && takes_samples(cx)
            && requests.values().any(|request| model_takes(cx, request))
        {
            // No token names the call: nothing is kept for a retry.
            match serve_when_answered(requests, cx, &mut self.brought, &mut self.failures, None)
                .await
            {
                // The server's model answers the samples beside the answers brought.
                Some(answered) => served = answered,
                // The client answers its part first (see `stateless`).
                None => return Ok(Next::Respond(CallToolResponse::InputRequired(required))),
            }
        }
        let answered = |key: &String| {
            self.brought.contains_key(key)
                || self.failures.contains_key(key)
                || served.model.has(key)
        };
        if !keys.iter().all(answered) {
            return Ok(Next::Respond(CallToolResponse::InputRequired(required)));
        }
        let inputs = Inputs {
            answers: Some(
                keys.iter()
                    .filter_map(|key| self.brought.remove(key).map(|answer| (key.clone(), answer)))
                    .collect(),
            ),
            failures: keys
                .iter()
                .filter_map(|key| {
                    self.failures
                        .remove(key)
                        .map(|failure| (key.clone(), failure))
                })
                .collect(),
            model: served.model,
            // Bounded by the answers brought: each is given once.
            pass: Pass::Free,
        };
        Ok(Next::GoOn {
            from: required,
            inputs,
        })
    }

    fn past_bound(
        &mut self,
        _: &Call,
        _: InputRequiredResult,
        _: bool,
    ) -> Result<CallToolResponse, ErrorData> {
        Err(ErrorData::invalid_request(
            format!(
                "the saga checkpoints more than {MAX_REPLAYED_CHECKPOINTS} times, \
                 more than one request without a requestState may run; \
                 call it with MRTR (MCP 2026-07-28), which carries its state"
            ),
            None,
        ))
    }
}
