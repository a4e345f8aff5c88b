//! The policy of a stateless request that resumes a token (or starts a call with no
//! answers): MRTR's round, one per request, and in it the rounds the server's model
//! answers ([`crate::model`]).
//!
//! Without a server model the first round is the request's answer. With one, each round
//! that asks only samples the model takes is answered here, and the saga goes on in this
//! request; a round that also asks the client is sent to it without the samples, and when
//! its answers come back (the same round, asked again for the samples) the model answers
//! them and the round is given both.

use std::collections::BTreeMap;

use futures::future::Either;
use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, InputRequiredResult, InputResponses};

use super::tools::stamp_meta;
use crate::engine::caller::model::SAMPLES_META_KEY;
use crate::engine::caller::model::kept::RoundOfRequest;
use crate::engine::runner::drive::{AtCheckpoint, Inputs, Next, Pass, Policy};
use crate::engine::runner::sampling::{is_sample, model_takes, serve_when_answered, takes_samples};
use crate::engine::{Call, MAX_REPLAYED_CHECKPOINTS, SagaContext, StepFailure};
use crate::state::StateCodec;

/// [`Policy`] of a stateless request.
pub(crate) struct Stateless<'a> {
    codec: &'a StateCodec,
    at_checkpoint: AtCheckpoint,
    /// What the server's model needs, when the request's context has one: boxed, so that
    /// a request without one (the common path) carries one pointer.
    serving: Option<Box<Serving>>,
}

/// The samples a request's model serves, round after round.
struct Serving {
    /// The token this request resumed: it names the request's rounds across retries, so
    /// that the model's answers are kept for a retry of it ([`RoundOfRequest`]).
    resumed: Option<String>,
    /// Rounds run so far in this request.
    runs: usize,
    /// What the client answered in this request, for the round its token asked.
    client_answers: InputResponses,
    client_failures: BTreeMap<String, StepFailure>,
    /// The samples served in this request, said in the response's `_meta`.
    log: Vec<serde_json::Value>,
}

impl<'a> Stateless<'a> {
    pub(crate) fn new(
        codec: &'a StateCodec,
        call: &Call,
        cx: &SagaContext,
        at_checkpoint: AtCheckpoint,
    ) -> Self {
        let serving = takes_samples(cx).then(|| {
            Box::new(Serving {
                resumed: call.request_state.clone(),
                runs: 0,
                client_answers: call.input_responses.clone().unwrap_or_default(),
                client_failures: call.failures.clone(),
                log: Vec::new(),
            })
        });
        Self {
            codec,
            at_checkpoint,
            serving,
        }
    }

    /// `response`, with the samples served in this request said in its `_meta`.
    fn said(&mut self, mut response: CallToolResponse) -> CallToolResponse {
        if let Some(serving) = self.serving.as_deref_mut()
            && !serving.log.is_empty()
        {
            let log = std::mem::take(&mut serving.log);
            stamp_meta(
                &mut response,
                SAMPLES_META_KEY,
                serde_json::Value::Array(log),
            );
        }
        response
    }

    fn respond(&mut self, required: InputRequiredResult) -> Result<Next, ErrorData> {
        Ok(Next::Respond(
            self.said(CallToolResponse::InputRequired(required)),
        ))
    }

    /// A round that asks, in a request whose context has a server model: the samples it
    /// takes answered when the client's part is in (see the module's docs).
    async fn serve(
        &mut self,
        mut required: InputRequiredResult,
        cx: &SagaContext,
    ) -> Result<Next, ErrorData> {
        let Some(serving) = self.serving.as_deref_mut() else {
            return self.respond(required);
        };
        let place = serving.runs;
        serving.runs += 1;
        let Some(requests) = required.input_requests.as_mut() else {
            return self.respond(required);
        };
        if !requests.values().any(|request| model_takes(cx, request)) {
            return self.respond(required);
        }
        let round = serving
            .resumed
            .as_deref()
            .map(|token| RoundOfRequest::new(cx.principal(), token, place));
        let Some(served) = serve_when_answered(
            requests,
            cx,
            &mut serving.client_answers,
            &mut serving.client_failures,
            round.as_ref(),
        )
        .await
        else {
            // The client answers its part first; the model is asked once that is in.
            return self.respond(required);
        };
        serving.log.extend(served.log);
        let unanswered = |key: &String| {
            !serving.client_answers.contains_key(key) && !serving.client_failures.contains_key(key)
        };
        if requests
            .iter()
            .any(|(key, request)| is_sample(request) && unanswered(key))
        {
            // Left to the client (the model failed under `ServerFirst`).
            return self.respond(required);
        }
        let inputs = Inputs {
            answers: Some(std::mem::take(&mut serving.client_answers)),
            failures: std::mem::take(&mut serving.client_failures),
            model: served.model,
            pass: Pass::Counted,
        };
        Ok(Next::GoOn {
            from: required,
            inputs,
        })
    }
}

impl Policy for Stateless<'_> {
    fn codec(&self) -> &StateCodec {
        self.codec
    }

    // Plain functions that return ready futures, not `async fn`s, but for the model's
    // rounds: each `async fn` kept its arguments (the round's 152 bytes) in the drive's
    // future, which is every request's (BENCHMARKS.md).
    fn ended(
        &mut self,
        _: &Call,
        response: CallToolResponse,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send {
        std::future::ready(Ok(self.said(response)))
    }

    fn checkpoint(
        &mut self,
        _: &Call,
        required: InputRequiredResult,
        _: &SagaContext,
    ) -> impl Future<Output = Result<Next, ErrorData>> + Send {
        if let Some(serving) = self.serving.as_deref_mut() {
            serving.runs += 1;
            // What the client answered was for the round its token asked: a round past a
            // checkpoint that asks the same key asks the client again.
            serving.client_answers.clear();
            serving.client_failures.clear();
        }
        std::future::ready(match self.at_checkpoint {
            AtCheckpoint::Respond => self.respond(required),
            AtCheckpoint::Pass => Ok(Next::GoOn {
                from: required,
                inputs: Inputs::checkpoint(Pass::Counted),
            }),
        })
    }

    fn asks(
        &mut self,
        _: &Call,
        required: InputRequiredResult,
        cx: &SagaContext,
    ) -> impl Future<Output = Result<Next, ErrorData>> + Send {
        if self.serving.is_none() {
            Either::Left(std::future::ready(self.respond(required)))
        } else {
            // Boxed: the model's future is large, and unboxed it would size every
            // request's future, with a model or without.
            Either::Right(Box::pin(self.serve(required, cx)))
        }
    }

    fn past_bound(
        &mut self,
        _: &Call,
        from: InputRequiredResult,
        checkpoint: bool,
    ) -> Result<CallToolResponse, ErrorData> {
        if checkpoint {
            // Past the checkpoints one request passes, the client gets the state to go
            // on from, as over MRTR.
            return Ok(self.said(CallToolResponse::InputRequired(from)));
        }
        Err(ErrorData::invalid_request(
            format!(
                "the saga asked the server's model more than {MAX_REPLAYED_CHECKPOINTS} times \
                 in one request"
            ),
            None,
        ))
    }
}
