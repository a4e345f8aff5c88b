//! One loop drives every call: a call's rounds run one after another, within one
//! request (or one step of a task), until a round is the request's answer.
//!
//! Every path that runs a call drives it here: a stateless MRTR request, a 2025-11-25
//! session, a streamed call, a dependent-requests replay, a task's worker, a user's own
//! transport through `SagaTools::run`, and the testing harness. What differs between
//! them is a [`Policy`]: where the next round's answers come from (none, the answers the
//! request brought, the server's model, the session's client, the task's record) and what
//! a checkpoint does (answer with it, or pass it, handing out a resume token or writing
//! the task's record on the way).
//!
//! What holds for every call is written here, once:
//!
//! - a round that ends the call (a result, or an error of the tool) is handed to the
//!   policy's [`Policy::ended`];
//! - a round that asks nothing is a checkpoint ([`Policy::checkpoint`]); one that asks
//!   goes to [`Policy::asks`];
//! - the next round goes on from the state the last one sealed, given what the policy
//!   gathered, and the task yields between rounds, so that a saga that loops does not
//!   hold its worker thread;
//! - at most [`MAX_REPLAYED_CHECKPOINTS`] rounds go on in one request without the client
//!   ([`Pass`]); past them, the policy says what the request answers
//!   ([`Policy::past_bound`]).

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, InputRequiredResult, InputResponses};

use crate::engine::caller::context::SagaContext;
use crate::engine::kinds::kind::StepFailure;
use crate::engine::round::collect::ModelAnswers;
use crate::engine::runner::family::Saga;
use crate::engine::runner::per_call::{OnRetry, PerCall};
use crate::engine::runner::retried;
use crate::engine::runner::transition::{Call, MAX_REPLAYED_CHECKPOINTS};
use crate::state::StateCodec;

/// One transition of the saga, as [`Saga`] runs it.
pub(crate) type TransitionFuture<'a> =
    Pin<Box<dyn Future<Output = Result<CallToolResponse, ErrorData>> + Send + 'a>>;

/// What a round that neither ended the call nor failed comes to.
pub(crate) enum Next {
    /// The request answers with this response: the call goes on, if it does, with
    /// another request (the client's retry, a task's worker, a resume).
    Respond(CallToolResponse),
    /// The next round runs here, from the state of `from` (the round just run), given
    /// `inputs`.
    GoOn {
        from: InputRequiredResult,
        inputs: Inputs,
    },
}

/// What the next round is given, and how going on counts against the bound.
#[derive(Debug, Default)]
pub(crate) struct Inputs {
    /// The answers it reads, by key.
    pub(crate) answers: Option<InputResponses>,
    /// The requests that failed, by key.
    pub(crate) failures: BTreeMap<String, StepFailure>,
    /// What the server's model answered.
    pub(crate) model: ModelAnswers,
    /// How this round counts.
    pub(crate) pass: Pass,
}

impl Inputs {
    /// Nothing given: a checkpoint passed.
    pub(crate) fn checkpoint(pass: Pass) -> Self {
        Self {
            pass,
            ..Self::default()
        }
    }
}

/// How a round gone on within one request counts against [`MAX_REPLAYED_CHECKPOINTS`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pass {
    /// Gone on without the client (a checkpoint, samples the server's model answered):
    /// counted, as the work one request may do is bounded.
    #[default]
    Counted,
    /// The client answered anew (a session's client, in process): the count starts
    /// again, as a new stateless request's would.
    Answered,
    /// Bounded otherwise: by the answers the request brought (each given once), by the
    /// run time alone (a stream, a session's rounds its model answered), or by a task's
    /// lease and quota.
    Free,
}

/// Where a call's answers come from and what its checkpoints do: one per path that runs
/// a call. Each method's default is what a path without that concern does.
pub(crate) trait Policy: Send {
    /// The codec the next round's state is opened with.
    fn codec(&self) -> &StateCodec;

    /// Whether every round's token is kept durably before the next round runs (a task's
    /// record), so that a round run again starts from that very token: its effects are
    /// then keyed by it. Otherwise by the token the request brought and the round's
    /// number ([`PerCall::effect_origin`]).
    fn keeps_every_token(&self) -> bool {
        false
    }

    /// Makes a round's transition (`make`): as it is, or inside what this path records
    /// of each round (a task's step span, which the round's own span is then a child of).
    fn round<R>(&self, make: impl FnOnce() -> R) -> R {
        make()
    }

    /// Runs one transition, `run`, as this path runs one: as it is, or within what is
    /// left of the run time, stopped by a cancellation, beside a lease's renewal.
    fn transition<'a>(
        &'a self,
        run: TransitionFuture<'a>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send + 'a {
        run
    }

    /// A round that ended the call: the response the request answers with.
    fn ended(
        &mut self,
        call: &Call,
        response: CallToolResponse,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send {
        let _ = call;
        std::future::ready(Ok(response))
    }

    /// A round that asks nothing: a checkpoint, `required` holding its state.
    fn checkpoint(
        &mut self,
        call: &Call,
        required: InputRequiredResult,
        cx: &SagaContext,
    ) -> impl Future<Output = Result<Next, ErrorData>> + Send;

    /// A round that asks: `required` holds its requests and its state.
    fn asks(
        &mut self,
        call: &Call,
        required: InputRequiredResult,
        cx: &SagaContext,
    ) -> impl Future<Output = Result<Next, ErrorData>> + Send;

    /// What the request answers once more than [`MAX_REPLAYED_CHECKPOINTS`] rounds went
    /// on in it without the client: `from` is the round that would have gone on, and
    /// `checkpoint` says whether it was a checkpoint. By default the state to go on from,
    /// as a stateless request answers; a policy whose rounds never count
    /// ([`Pass::Free`] only) never gets here.
    fn past_bound(
        &mut self,
        call: &Call,
        from: InputRequiredResult,
        checkpoint: bool,
    ) -> Result<CallToolResponse, ErrorData> {
        let _ = (call, checkpoint);
        Ok(CallToolResponse::InputRequired(from))
    }
}

/// Drives `call` of `saga` round after round, as `policy` says, until a round is the
/// request's answer.
///
/// The call is lent, not given: its future then holds a reference, not a second copy of
/// the call its caller already holds (each copy is 256 bytes of every request's future).
///
/// A request that claimed its token to record its outcome (see `retried`) records what it
/// answers here, whichever exit the drive took.
///
/// With the `otel` feature the call runs inside its MCP server span (`crate::otel`);
/// without it, nothing is added here.
pub(crate) fn drive<'a, P: Policy>(
    saga: &'a Saga,
    call: &'a mut Call,
    cx: &'a SagaContext,
    policy: &'a mut P,
    on_retry: OnRetry,
) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + 'a {
    #[cfg(feature = "otel")]
    {
        let info = crate::otel::CallInfo {
            method: &call.method,
            tool: &call.name,
            request_id: cx.request_id(),
            protocol_version: cx.protocol_version().map(|version| version.as_str()),
            meta: cx.meta(),
        };
        let span = crate::otel::call_span(info, cx.trace());
        // Nothing records it: the call as it is, its future not moved into another. The
        // traced call's future is boxed, its room kept out of every request's.
        if span.idle() {
            futures::future::Either::Left(drive_call(saga, call, cx, policy, on_retry))
        } else {
            futures::future::Either::Right(Box::pin(
                span.run(drive_call(saga, call, cx, policy, on_retry)),
            ))
        }
    }
    #[cfg(not(feature = "otel"))]
    drive_call(saga, call, cx, policy, on_retry)
}

/// [`drive`]'s call, recorded when it answers.
async fn drive_call<P: Policy>(
    saga: &Saga,
    call: &mut Call,
    cx: &SagaContext,
    policy: &mut P,
    on_retry: OnRetry,
) -> Result<CallToolResponse, ErrorData> {
    let per_call = PerCall::new(on_retry, policy.keeps_every_token());
    let per_call = &per_call;
    // A drive dropped before it answers (a session that closed) spends its claim.
    let abandon = Abandon {
        store: policy.codec().single_use_store().cloned(),
        per_call,
    };
    // Every path that claims renews its claim while its rounds run (boxed, and only with
    // a store that renews leases: no room for it in every request's future).
    let answer = match policy.codec().renewal() {
        None => drive_rounds(saga, call, cx, policy, per_call).await,
        Some(renewal) => {
            let rounds = Box::pin(drive_rounds(saga, call, cx, policy, per_call));
            let renewing = Box::pin(renewal.renew_while(|| per_call.claimed()));
            match futures::future::select(rounds, renewing).await {
                futures::future::Either::Left((answer, _)) => answer,
                futures::future::Either::Right((never, _)) => match never {},
            }
        }
    };
    // Only with a single-use store can a claim have been made: without one, the claim's
    // lock is not taken.
    if let Some(store) = &abandon.store
        && let Some(claimed) = per_call.take_claimed()
    {
        if answer
            .as_ref()
            .is_err_and(crate::engine::caller::error::is_retryable)
        {
            // A failure the same request may not meet later (a store full or unavailable
            // now, a quota spent by others): the round is given back, not spent, and the
            // retry runs it again from the same token, its effects under the same keys.
            crate::state::abandon(store, *claimed);
            drop(abandon);
            return answer;
        }
        let recorded = per_call.records_answer().then_some(&answer);
        // Boxed: no room for the record's future in every request's.
        Box::pin(retried::record(
            policy.codec(),
            &claimed,
            &call.name,
            recorded,
        ))
        .await;
    }
    drop(abandon);
    answer
}

/// Gives back the request's claim, if it still holds one when dropped: the drive stopped
/// before it answered. In a store that renews leases its retry runs the round again at
/// once (its effects under the same keys); in any other, its token is spent and its
/// retry refused at once rather than left waiting for the claim's lease.
struct Abandon<'a> {
    store: Option<std::sync::Arc<dyn crate::state::TokenStore>>,
    per_call: &'a PerCall,
}

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        if let Some(store) = &self.store
            && let Some(claimed) = self.per_call.take_claimed()
        {
            crate::state::abandon(store, *claimed);
        }
    }
}

/// [`drive`]'s rounds.
async fn drive_rounds<P: Policy>(
    saga: &Saga,
    call: &mut Call,
    cx: &SagaContext,
    policy: &mut P,
    per_call: &PerCall,
) -> Result<CallToolResponse, ErrorData> {
    let mut passed = 0usize;
    // The first round's token is the request's (or the task record's: a new `PerCall`
    // says so); every later one is handed on here, and never left the process.
    // The response the request answers with, unless the call ended: it leaves here.
    let response = loop {
        // The call is lent, not copied: the transition takes the round's inputs out of it
        // and leaves the rest for the next round.
        let run = policy.round(|| saga.run(policy.codec(), call, cx, per_call));
        // The round goes to the policy without a name in this future, and the policy's
        // answer is matched as it comes: a local (or a temporary of the `?`) kept across
        // an await would hold a round (152 to 264 bytes) in every request's future.
        let decided = {
            let response = policy.transition(run).await?;
            if per_call.replayed() {
                // The request was sent before: it answers as it did then (or, if that
                // answer began a task, is refused).
                return per_call.answer_again(&call.name, response);
            }
            decide(response, policy, call, cx)
        };
        match decided.await? {
            Decided::Ended(response) => return Ok(response),
            Decided::Next(Next::Respond(response), _) => break response,
            Decided::Next(Next::GoOn { from, inputs }, checkpoint) => {
                match inputs.pass {
                    Pass::Counted => {
                        passed += 1;
                        if passed > MAX_REPLAYED_CHECKPOINTS {
                            break policy.past_bound(call, from, checkpoint)?;
                        }
                    }
                    Pass::Answered => passed = 0,
                    Pass::Free => {}
                }
                call.request_state = from.request_state;
                per_call.set_handed_on(true);
                call.input_responses = inputs.answers;
                call.failures = inputs.failures;
                call.model = inputs.model;
            }
        }
        tokio::task::yield_now().await;
    };
    if kept_on_the_way_out(policy.codec(), &response) {
        // Boxed: no room for the keep's future in every request's.
        return Box::pin(keep_response(policy.codec(), saga, call, cx, response)).await;
    }
    Ok(response)
}

/// Whether `response`, as it leaves the process, has a token longer than the codec's
/// inline bound: it is then kept in the codec's state store ([`keep_response`]), and the
/// request answers with a reference to it. Only there: a state handed on within the
/// request (a checkpoint passed, a round the server's model answered, a task's next step)
/// is never written to the store.
fn kept_on_the_way_out(codec: &StateCodec, response: &CallToolResponse) -> bool {
    matches!(response, CallToolResponse::InputRequired(required)
        if required.request_state.as_ref().is_some_and(|token| codec.would_keep(token.len())))
}

/// A response whose token is kept ([`kept_on_the_way_out`]), with the reference in its
/// place.
async fn keep_response(
    codec: &StateCodec,
    saga: &Saga,
    call: &Call,
    cx: &SagaContext,
    response: CallToolResponse,
) -> Result<CallToolResponse, ErrorData> {
    let CallToolResponse::InputRequired(mut required) = response else {
        return Ok(response);
    };
    if let Some(token) = required.request_state.take() {
        let point = crate::engine::runner::family::point_key(saga, &call.name, &token)?;
        let kept = codec
            .keep(
                token,
                &point,
                &call.binding(cx.principal()),
                &cx.state_owner(),
            )
            .await
            .map_err(|error| crate::engine::caller::error::kept_failure(&call.name, &error))?;
        required.request_state = Some(kept);
    }
    Ok(CallToolResponse::InputRequired(required))
}

/// What the policy made of a round's response: the call's end, or the next step, and
/// whether the round was a checkpoint.
enum Decided {
    Ended(CallToolResponse),
    Next(Next, bool),
}

/// Hands `response` to the policy's method for it: its future, one type for the three.
fn decide<'a, P: Policy>(
    response: CallToolResponse,
    policy: &'a mut P,
    call: &'a Call,
    cx: &'a SagaContext,
) -> impl Future<Output = Result<Decided, ErrorData>> + 'a {
    use futures::FutureExt as _;
    use futures::future::Either;
    let required = match response {
        CallToolResponse::InputRequired(required) => required,
        ended => {
            return Either::Left(
                policy
                    .ended(call, ended)
                    .map(|ended| ended.map(Decided::Ended)),
            );
        }
    };
    let checkpoint = required
        .input_requests
        .as_ref()
        .is_none_or(|requests| requests.is_empty());
    let round = if checkpoint {
        Either::Left(policy.checkpoint(call, required, cx))
    } else {
        Either::Right(policy.asks(call, required, cx))
    };
    Either::Right(round.map(move |next| next.map(|next| Decided::Next(next, checkpoint))))
}

/// What a checkpoint does on a path whose policy may either answer with it or pass it:
/// chosen by the route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtCheckpoint {
    /// The request answers with it: the client (or the task that begins there) goes on
    /// from its state.
    Respond,
    /// It passes within the request, as many as one request may.
    Pass,
}
