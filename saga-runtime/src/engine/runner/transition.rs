//! One request, one transition: open the token, run the saga to its next suspension, seal.

use std::collections::BTreeMap;

use futures::FutureExt as _;
use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, InputRequiredResult, InputResponses, JsonObject};

use crate::engine::caller::context::SagaContext;
use crate::engine::caller::error::{Failure, invalid_state, tool_bug};
use crate::engine::caller::state_size::StateSize;
use crate::engine::contract::tool::Step;
use crate::engine::contract::typed::{State, Typed};
use crate::engine::forms::elicit::FormError;
use crate::engine::identity::points::{Point, Points};
use crate::engine::identity::slot::values::RoundValues;
use crate::engine::kinds::kind::StepFailure;
use crate::engine::kinds::table::{Answer, Asked};
use crate::engine::round::answers::{AnswerSlots, Answers};
use crate::engine::round::asking;
use crate::engine::round::collect::{self, Collected, ModelAnswers};
use crate::engine::round::pending::RoundRecord;
use crate::engine::runner::per_call::PerCall;
use crate::engine::runner::retried;
use crate::engine::runner::unwind::{catch_panic_pinned, catch_panic_sync, panicked};
use crate::log::Escaped;
use crate::metrics::{Outcome, Refusal};
use crate::state::{Binding, Opened, StateCodec, TokenHeader};
use tracing::Instrument as _;

/// A request that drives a saga: a `tools/call`, or its equivalent in another wire format,
/// run by [`SagaTools::run`](crate::serve::SagaTools::run).
#[derive(Debug, Clone, Default)]
pub struct Call {
    /// The JSON-RPC method the saga was started with; bound into the token.
    pub method: String,
    /// The tool's name.
    pub name: String,
    /// The call's arguments, identical on every round.
    pub arguments: Option<JsonObject>,
    /// The token of the previous round, absent on the first.
    pub request_state: Option<String>,
    /// The answers to the previous round's requests.
    pub input_responses: Option<InputResponses>,
    /// Requests of the previous round the client reports it could not perform.
    pub failures: BTreeMap<String, StepFailure>,
    /// Leave the arguments out of the token's binding: for wire formats whose later
    /// rounds do not repeat them (`tools/resumeSaga`); they live in the saved state.
    pub unbound_arguments: bool,
    /// What the server's model answered of the previous round, apart from the client's
    /// answers ([`crate::model`]); empty (the default) for a call you build.
    pub model: ModelAnswers,
}

impl Call {
    /// A `tools/call` of `name`.
    pub fn tool(name: impl Into<String>, arguments: Option<JsonObject>) -> Self {
        Self {
            method: "tools/call".into(),
            name: name.into(),
            arguments,
            ..Self::default()
        }
    }
}

impl Call {
    /// What this call's tokens are bound to, for `principal`.
    pub(crate) fn binding(&self, principal: &str) -> Binding {
        let bound_arguments = if self.unbound_arguments {
            None
        } else {
            self.arguments.as_ref()
        };
        Binding::new(&self.name, &self.method, principal, bound_arguments)
    }
}

/// The most checkpoints one replayed request runs through (see [`SagaTools::run`](crate::serve::SagaTools::run)).
/// Rounds that consume an answer are bounded by the answers the request brings; this
/// bounds the rest, which the server drives on its own.
pub const MAX_REPLAYED_CHECKPOINTS: usize = 64;

/// Runs exactly one transition of `tool` for `call`, inside a `saga.transition` span
/// (target `saga_runtime`, level DEBUG) carrying the tool, the method (which names the
/// wire format), the protocol version, the round, the state variant entered and left,
/// the token bytes in and out, the outcome and the time taken.
///
/// `points` are the tool's suspension points ([`Points::of`]): a token is resumed only at
/// a point of the same identity, and refused before any of it is decoded otherwise. The
/// tool is behind [`Typed`], so that the transition is compiled once for every tool.
///
/// A plain function that returns the transition's future, not an `async fn`: an `async
/// fn` keeps each argument twice (as passed, and moved into its body), and the call
/// (256 bytes) went through two of them, so the boxed transition held it four times and
/// was created, and moved into its box, at 3,072 bytes (BENCHMARKS.md). Here the call is
/// moved once, into the run's future.
pub(crate) fn typed_transition<'a>(
    tool: &'a dyn Typed,
    points: &'a Points,
    codec: &'a StateCodec,
    call: &'a mut Call,
    cx: &'a SagaContext,
    per_call: &'a PerCall,
) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + 'a {
    let token_in = call.request_state.as_ref().map_or(0, String::len);
    // saga's own attributes under `saga.`, the method as the MCP conventions name it, and
    // numbers as `i64` (`tracing-opentelemetry` exports a `u64` as its text).
    // None for an unsampled request's round (`crate::otel::quiet`): not even made.
    let span = if crate::otel::quiet() {
        tracing::Span::none()
    } else {
        tracing::debug_span!(
        "saga.transition",
        saga.tool = %Escaped(&call.name),
        mcp.method.name = %Escaped(&call.method),
        saga.era = cx.protocol_version().map_or("unknown", |version| version.as_str()),
        saga.round = tracing::field::Empty,
        saga.entered = tracing::field::Empty,
        saga.left = tracing::field::Empty,
        saga.token_in = token_in as i64,
        saga.token_out = tracing::field::Empty,
        saga.outcome = tracing::field::Empty,
        saga.micros = tracing::field::Empty,
        )
    };
    // Timed from here: the caller boxes the future and polls it at once.
    let started = std::time::Instant::now();
    // A `map`, not an `async` block that awaits the run: the block would keep the run's
    // future and move it again into its own place to await it.
    let spans = RoundSpans {
        otel: crate::otel::Round::begin(
            &call.name,
            &call.method,
            cx.protocol_version()
                .map_or("unknown", |version| version.as_str()),
            token_in,
        ),
        log: span,
    };
    let run = spans.otel.run(
        run_transition(tool, points, codec, call, cx, per_call, spans.clone())
            .instrument(spans.log.clone()),
    );
    run.map(move |outcome| {
        let elapsed = started.elapsed();
        let (label, token_out) = match &outcome {
            Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => {
                (Outcome::ToolError, None)
            }
            Ok(CallToolResponse::Complete(_)) => (Outcome::Complete, None),
            Ok(CallToolResponse::InputRequired(required)) => (
                if required.input_requests.is_some() {
                    Outcome::InputRequired
                } else {
                    Outcome::Checkpoint
                },
                required.request_state.as_ref().map(String::len),
            ),
            Ok(_) => (Outcome::Other, None),
            Err(error) => (error_outcome(error), None),
        };
        let era = crate::metrics::era(cx.protocol_version().map(|version| version.as_str()));
        crate::metrics::transition(
            points.metric_keys(),
            label,
            era,
            elapsed,
            token_in,
            token_out,
        );
        let micros = elapsed.as_micros() as i64;
        let token_out = token_out.map(|bytes| bytes as i64);
        spans.otel.end(label.as_str(), micros, token_out);
        if !spans.log.is_disabled() {
            if let Some(bytes) = token_out {
                spans.log.record("saga.token_out", bytes);
            }
            spans.log.record("saga.micros", micros);
            spans.log.record("saga.outcome", label.as_str());
            spans.log.in_scope(|| tracing::debug!("transition done"));
        }
        // The engine's edge: the failure becomes the JSON-RPC error the server sends.
        outcome.map_err(ErrorData::from)
    })
}

/// A round's spans: its `tracing` span, for the logs (at `DEBUG`), and its OpenTelemetry
/// span (feature `otel`, recorded to the SDK directly: `crate::otel::Round`), each
/// recorded only where it is made.
#[derive(Clone)]
struct RoundSpans {
    log: tracing::Span,
    otel: crate::otel::Round,
}

impl RoundSpans {
    /// Records `key` as the text `value` makes, made only when a span takes it.
    fn text(&self, key: &'static str, value: impl FnOnce() -> String) {
        let log = !self.log.is_disabled();
        if !log && !self.otel.recording() {
            return;
        }
        let value = value();
        if log {
            self.log.record(key, value.as_str());
        }
        self.otel.text(key, value);
    }

    fn number(&self, key: &'static str, value: i64) {
        if !self.log.is_disabled() {
            self.log.record(key, value);
        }
        self.otel.number(key, value);
    }
}

fn error_outcome(failure: &Failure) -> Outcome {
    match failure {
        Failure::InvalidParams(_) => Outcome::RefusedInvalidParams,
        Failure::MissingCapability(_) => Outcome::RefusedMissingCapability,
        Failure::Internal(_) | Failure::Unavailable(_) => Outcome::InternalError,
        // What the tool's own code returned: by its code, as MCP reads it.
        Failure::Tool(error) => match error.code.0 {
            -32602 => Outcome::RefusedInvalidParams,
            -32021 => Outcome::RefusedMissingCapability,
            -32603 => Outcome::InternalError,
            _ => Outcome::Other,
        },
    }
}

/// The point `token` stopped at, if this build has it; the refusal otherwise, before any
/// other work.
pub(crate) fn point_of<'p>(
    points: &'p Points,
    tool: &str,
    token: &str,
) -> Result<&'p Point, Failure> {
    let header = TokenHeader::peek_point(token)
        .map_err(|reason| invalid_state(tool, &crate::state::OpenError::from(reason)))?;
    points
        .find(&header)
        .ok_or_else(|| invalid_state(tool, &points.refusal(&header)))
}

/// The story of one request: open (start the tool, or open its token and read the
/// answers), step once, and answer (a result, or the next round sealed in a token).
#[allow(clippy::manual_async_fn)] // the call kept once: see `typed_transition`
fn run_transition<'a>(
    tool: &'a dyn Typed,
    points: &'a Points,
    codec: &'a StateCodec,
    call: &'a mut Call,
    cx: &'a SagaContext,
    per_call: &'a PerCall,
    span: RoundSpans,
) -> impl Future<Output = Result<CallToolResponse, Failure>> + 'a {
    // An `async` block, not an `async fn`: the call is kept once (see `typed_transition`).
    async move {
        let span = &span;
        // The round's inputs are this transition's; the rest of the call stays the
        // drive's, for the rounds after this one.
        let responses = call.input_responses.take();
        let failures = std::mem::take(&mut call.failures);
        let model = std::mem::take(&mut call.model);
        let call: &Call = call;
        let binding = call.binding(cx.principal());
        let run = Transition {
            tool,
            points,
            codec,
            name: &call.name,
            binding: &binding,
            cx,
            per_call,
            model_answered: !model.is_empty(),
            answered_bytes: answers_len(responses.as_ref()),
            // Counted only if the state outgrows the cap (`outgrown`): a first round's
            // arguments are the client's as its answers are.
            first_arguments: call
                .request_state
                .is_none()
                .then_some(call.arguments.as_ref())
                .flatten(),
            state_values: std::sync::atomic::AtomicUsize::new(0),
        };
        // Open: a first round starts the tool from its arguments; a later one opens its token,
        // spends it, and reads the answers, or asks the same round again without a step.
        let (mut head, state, answers, resumed) = match &call.request_state {
            None => {
                cx.set_state_size(StateSize {
                    max_sealed: codec.max_sealed_len(),
                    ..StateSize::default()
                });
                let state = run.start(call.arguments.clone().unwrap_or_default())?;
                // The saga's trace begins with this round's span, when one is recorded.
                let head = RoundRecord {
                    trace: cx.first_round_trace(),
                    ..RoundRecord::default()
                };
                (head, state, Answers::none(), None)
            }
            Some(token) => {
                let responses = responses.unwrap_or_default();
                match run.open(token, responses, &failures, &model).await? {
                    OpenedRound::Answered(answered) => {
                        cx.set_state_size(StateSize {
                            saved: answered.opened.plaintext.len() - answered.head_len,
                            sealed: answered.opened.sealed_len,
                            max_sealed: codec.max_sealed_len(),
                        });
                        (
                            answered.head,
                            answered.state,
                            answered.answers,
                            Some(Resumed {
                                opened: answered.opened,
                                point: answered.point,
                                head_len: answered.head_len,
                            }),
                        )
                    }
                    OpenedRound::Recorded(answer) => return answer.map_err(Failure::from),
                    OpenedRound::AskAgain(ask) => {
                        let state_bytes = &ask.opened.plaintext[ask.head_len..];
                        return run.ask_again(
                            &ask.opened,
                            ask.point,
                            ask.head,
                            state_bytes,
                            None,
                            &ask.misfits,
                        );
                    }
                }
            }
        };
        span.text("saga.entered", || {
            tool.variant_name(&state).as_str().to_owned()
        });

        // Step: the tool runs once, to its next suspension. The token this round hands out is
        // the next link of the call's chain; a first round's starts one (at number zero).
        let link = resumed.as_ref().map(|resumed| resumed.opened.link().next());
        let entered_round = head.round;
        head.round = head.round.saturating_add(1);
        span.number("saga.round", i64::from(head.round));
        // The token the round started from, and the key that sealed it: its effects'
        // keys are derived under that key, which only the server holds.
        // A round handed on within the request is keyed by the request's token and its
        // number, so that the request run again gives it the same keys.
        let from = resumed.as_ref().and_then(|resumed| {
            let (origin, key) = per_call.effect_origin(
                resumed.opened.nonce,
                resumed.opened.key_id,
                entered_round,
            )?;
            Some((origin, codec.effect_cipher(&key)?))
        });
        let (state, requests) = match run.step(state, answers, from).await? {
            Step::Done(result) => {
                crate::metrics::completed(points.metric_keys(), head.round);
                return Ok(CallToolResponse::Complete(result));
            }
            Step::Checkpoint(state) => (state, Vec::new()),
            Step::Suspend { state, requests } => (state, requests),
            Step::AskAgain(requests) => {
                // The same round again: its head as it was sealed.
                head.round = entered_round;
                return run.step_asks_again(resumed, head, requests);
            }
        };
        span.text("saga.left", || {
            tool.variant_name(&state).as_str().to_owned()
        });

        // Answer: the next round's requests, and the state the step left sealed beside them.
        // Whole: a state kept in a store is kept where it leaves the process
        // (`drive::keep_response`).
        run.seal(head, &state, requests, link)
    }
}

/// Bytes of the client's answers as JSON. A plain function: the transition's body is
/// compiled in each crate that polls it, and the serializer this instantiates is compiled
/// once here, not in every user's crate.
#[inline(never)]
fn answers_len(responses: Option<&InputResponses>) -> usize {
    responses.map_or(0, json_len)
}

/// Bytes of a call's arguments as JSON; apart for the reason `answers_len` is.
#[inline(never)]
fn arguments_len(arguments: Option<&JsonObject>) -> usize {
    arguments.map_or(0, json_len)
}

/// Bytes of `value` written as JSON, counted without writing them anywhere.
fn json_len<T: serde::Serialize>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => 0,
    }
}

/// The longest state whose saved locals an outgrown state's error lists.
const LISTED_UP_TO: usize = 1024 * 1024;

/// The largest saved locals of the state at `point` (`fields`, as sealed), by name and
/// size (as JSON; a helper's frame as its saved bytes), for the error of a state that
/// outgrew its token: what the tool's author trims.
fn largest_locals(
    typed: &dyn Typed,
    points: &Points,
    point: &Point,
    tool: &str,
    fields: &[u8],
) -> String {
    // Rendered as JSON, a saved byte string takes some thirty times its bytes: past a
    // MiB the listing would cost more memory than the request may.
    if fields.len() > LISTED_UP_TO {
        return format!(
            "(not listed past a MiB: {} bytes of saved locals)",
            fields.len()
        );
    }
    let rendered = decode_state(typed, points, point, tool, fields)
        .ok()
        .and_then(|state| typed.state_json(state).ok());
    // `{"Variant": {local: value, ..}}`, as the state enum renders.
    let Some(serde_json::Value::Object(variant)) = rendered else {
        return "(the saved locals could not be listed)".into();
    };
    let Some((_, serde_json::Value::Object(locals))) = variant.into_iter().next() else {
        return "(the saved locals could not be listed)".into();
    };
    let mut sizes: Vec<(String, usize, &str)> = locals
        .iter()
        .filter_map(|(name, value)| match (name.as_str(), value) {
            // A `#[saga_fn]` helper's frame, saved as its own encoded state: its bytes.
            ("__callee", serde_json::Value::Array(bytes)) => Some((
                "the frame of the #[saga_fn] helper it is suspended in".to_owned(),
                bytes.len(),
                "bytes encoded",
            )),
            // The macro's other fields (request markers) hold nothing of the tool's.
            (name, _) if name.starts_with("__") => None,
            (name, value) => Some((
                format!("`{}`", Escaped(name)),
                json_len(value),
                "characters as JSON",
            )),
        })
        .collect();
    if sizes.is_empty() {
        return "(no saved local of the tool's own)".into();
    }
    sizes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    sizes
        .iter()
        .take(3)
        .map(|(name, size, unit)| format!("{name}, {size} {unit}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A later round's token, opened: its answers all in, or the round to ask again.
enum OpenedRound<'a> {
    Answered(Answered<'a>),
    AskAgain(AskAgain<'a>),
    /// The request was sent before, and answered: that answer again.
    Recorded(Result<CallToolResponse, ErrorData>),
}

/// What the step resumes from: the token's head and state, and the answers read.
struct Answered<'a> {
    opened: Opened,
    point: &'a Point,
    head: RoundRecord,
    /// Where the state's bytes start in the opened plaintext.
    head_len: usize,
    state: State,
    answers: Answers,
}

/// The token a later round was resumed from, kept for the step's outcome: to link the
/// next token to it, or to ask its round again.
struct Resumed<'a> {
    opened: Opened,
    point: &'a Point,
    /// Where the state's bytes start in the opened plaintext.
    head_len: usize,
}

/// A round whose answers are missing or do not fit: asked again, unstepped.
struct AskAgain<'a> {
    opened: Opened,
    point: &'a Point,
    head: RoundRecord,
    /// Where the state's bytes start in the opened plaintext.
    head_len: usize,
    misfits: Vec<(usize, FormError)>,
}

/// The state sealed at `point`: its fields, behind this build's own variant index.
fn decode_state(
    typed: &dyn Typed,
    points: &Points,
    point: &Point,
    tool: &str,
    fields: &[u8],
) -> Result<State, Failure> {
    decode_bytes(typed, tool, &points.join(point, fields))
}

/// The state from its encoding as this build reads it, to the last byte.
fn decode_bytes(typed: &dyn Typed, tool: &str, state_bytes: &[u8]) -> Result<State, Failure> {
    let (state, rest) = typed
        .decode(state_bytes)
        .map_err(|reason| invalid_state(tool, &reason))?;
    if rest != 0 {
        return Err(invalid_state(tool, &"trailing bytes after the state"));
    }
    Ok(state)
}

/// One request's transition: the tool, its points and codec, and who calls. Each method
/// is one part of the story [`run_transition`] tells.
struct Transition<'a> {
    tool: &'a dyn Typed,
    points: &'a Points,
    codec: &'a StateCodec,
    name: &'a str,
    binding: &'a Binding,
    cx: &'a SagaContext,
    /// The drive's bookkeeping for this call: the claim, and whether this round was
    /// handed on within the request.
    per_call: &'a PerCall,
    /// Whether the round this request answers holds the server's model's answers: a
    /// state that then outgrows the token cap is said to hold them, not blamed on the
    /// client's answers.
    model_answered: bool,
    /// Bytes of the client's answers this request brings (as JSON): a state that
    /// outgrows the token cap is the client's doing only when they are most of it.
    answered_bytes: usize,
    /// A first round's arguments, counted with the answers by `outgrown` alone.
    first_arguments: Option<&'a JsonObject>,
    /// Values of the state the step left (its self-describing slots', and its helpers'),
    /// checked against the codec's bound where it is sealed.
    state_values: std::sync::atomic::AtomicUsize,
}

impl<'a> Transition<'a> {
    /// A first round: the tool's state from its arguments.
    fn start(&self, arguments: JsonObject) -> Result<State, Failure> {
        let started = catch_panic_sync(|| self.tool.start(arguments))
            .map_err(|payload| panicked(self.name, payload.as_ref()))?;
        // The tool's own refusal of its arguments, passed on as the tool made it.
        Ok(started?)
    }

    /// A later round: the token opened and spent, and the answers read and checked.
    async fn open(
        &self,
        token: &str,
        responses: InputResponses,
        failures: &BTreeMap<String, StepFailure>,
        model: &ModelAnswers,
    ) -> Result<OpenedRound<'a>, Failure> {
        let point = point_of(self.points, self.name, token)?;
        // A reference (a state kept in the server's store) is followed here, in a future
        // of its own (boxed: a server without a store keeps no room for it in every
        // request's future); anything else opens as it is.
        let opened = if self.codec.keeps_states() {
            // A state the drive handed on within this request never left the process:
            // it may be as long as a kept one.
            let max = if self.per_call.handed_on() {
                self.codec.max_sealed_len()
            } else {
                self.codec.max_token_len()
            };
            Box::pin(
                self.codec
                    .open_kept_within(token, &point.key, self.binding, max),
            )
            .await
        } else {
            self.codec.open(token, &point.key, self.binding)
        };
        let mut opened =
            opened.map_err(|reason| crate::engine::caller::error::unopened(self.name, &reason))?;
        // Single use: recorded before the step runs, so a replay never runs it twice. The
        // token the request brought, in a store that records outcomes, is claimed: sent
        // again, the request gets the answer its first sending got (boxed: a server
        // without such a store keeps no room for it in every request's future).
        // Not a session's: its run waits for its client, unbounded by the lease.
        if !self.per_call.handed_on() && !self.cx.is_session() && self.codec.records_outcomes() {
            let request = crate::state::request_text(Some(&responses), failures);
            if let Some(answer) = Box::pin(self.claim(&opened, request)).await? {
                return Ok(OpenedRound::Recorded(answer));
            }
        } else {
            match self.codec.redeem(&opened).await {
                Ok(true) => {}
                Ok(false) => return Err(invalid_state(self.name, &Refusal::Redeemed)),
                Err(error) => {
                    tracing::error!(tool = %Escaped(self.name), %error, "cannot record a redeemed token");
                    return Err(retried::unavailable());
                }
            }
        }
        let (mut head, state_bytes) = RoundRecord::decode(opened.format, &opened.plaintext)
            .map_err(|reason| invalid_state(self.name, &reason))?;
        head.trace = opened.trace;
        // This round's span links to the saga's first (or, a task's, is its child).
        self.cx.resumed_saga(head.trace.as_ref());
        let head_len = opened.plaintext.len() - state_bytes.len();
        let samples = crate::engine::runner::sampling::samples_from(self.cx);
        let answers = match collect::collect(&head.pending, responses, failures, model, samples)? {
            Collected::Ask { reason, misfits } => {
                tracing::debug!(
                    tool = %Escaped(self.name),
                    reason = %Escaped(&reason),
                    "asking again"
                );
                return Ok(OpenedRound::AskAgain(AskAgain {
                    opened,
                    point,
                    head,
                    head_len,
                    misfits,
                }));
            }
            Collected::All(answers) => answers,
        };
        if uses_tools(&answers) {
            self.check_tools_offered(point, &opened.plaintext[head_len..], &head, &answers)?;
        }
        let (name, typed) = (self.name, self.tool);
        let state = self
            .points
            .read_in_place(point, &mut opened.plaintext, head_len, |bytes| {
                decode_bytes(typed, name, bytes)
            })?;
        Ok(OpenedRound::Answered(Answered {
            opened,
            point,
            head,
            head_len,
            state,
            answers: Answers::new(answers),
        }))
    }

    /// Claims the request's token: `None` if the round is this request's to run (its
    /// outcome is recorded when the request answers), else the answer recorded for it.
    async fn claim(
        &self,
        opened: &Opened,
        request: Vec<u8>,
    ) -> Result<Option<Result<CallToolResponse, ErrorData>>, Failure> {
        let (claim, claimed) = self
            .codec
            .claim(opened, self.binding, request)
            .await
            .map_err(|error| {
                tracing::error!(tool = %Escaped(self.name), %error, "cannot record a redeemed token");
                retried::unavailable()
            })?;
        match retried::replayed(self.codec, self.name, claim, &claimed).await? {
            None => {
                self.per_call.set_claimed(claimed);
                Ok(None)
            }
            Some(answer) => {
                self.per_call.set_replayed();
                Ok(Some(answer))
            }
        }
    }

    /// Refuses (`-32602`) an answer that uses a tool its sample did not offer. The
    /// sample's tools are those of the params the token kept, or else of the round as
    /// the tool states it again from its state (as for asking again, and checked as it
    /// is): a round whose tools cannot be known refuses the answer. Run only for a round
    /// whose answers use tools. Cold and apart: every other round's path stays as it was.
    #[cold]
    #[inline(never)]
    fn check_tools_offered(
        &self,
        point: &Point,
        fields: &[u8],
        head: &RoundRecord,
        answers: &AnswerSlots,
    ) -> Result<(), Failure> {
        let mut restated: Option<Vec<crate::engine::round::requests::Request>> = None;
        for (index, (answer, entry)) in answers.iter().zip(&head.pending).enumerate() {
            let Some(Answer::ToolSample(result)) = answer else {
                continue;
            };
            // Fails closed: a round whose tools cannot be known refuses the answer.
            let offered = match entry.params.as_deref() {
                Some(params) => {
                    serde_json::from_str::<rmcp::model::CreateMessageRequestParams>(params)
                        .map_err(|_| tool_bug(self.name, "a kept sample does not read back"))?
                        .tools
                        .unwrap_or_default()
                }
                None => {
                    if restated.is_none() {
                        let state = decode_state(self.tool, self.points, point, self.name, fields)?;
                        let (tool, cx) = (self.tool, self.cx);
                        let stated = catch_panic_sync(|| tool.restate(state, cx))
                            .map_err(|payload| panicked(self.name, payload.as_ref()))?
                            .ok_or_else(|| {
                                tool_bug(
                                    self.name,
                                    "suspended with requests to state again, it could not state them",
                                )
                            })?;
                        // The round as it was sealed (its count, kinds and digest), as asking
                        // it again checks.
                        asking::asked_again(
                            head,
                            Some(stated.clone()),
                            self.name,
                            self.points.build_tag(),
                        )?;
                        restated = Some(stated);
                    }
                    match restated
                        .as_ref()
                        .and_then(|requests| requests.get(index))
                        .map(|request| &request.asked)
                    {
                        Some(Asked::ToolSample(asked)) => asked.tools.clone().unwrap_or_default(),
                        _ => {
                            return Err(tool_bug(
                                self.name,
                                "a sample with tools was stated again as another request",
                            ));
                        }
                    }
                }
            };
            if let Some(name) = crate::engine::kinds::tool_sample::ask::unoffered(
                &result.message.content,
                Some(&offered),
            ) {
                return Err(crate::engine::kinds::kind::refused(
                    &entry.key(),
                    "sampling",
                    &format!(
                        "uses the tool {:?}, which the request did not offer",
                        Escaped(name)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The tool's step from `state`, given `answers`; `from` is the nonce of the token the
    /// round started from and the cipher of the key that sealed it (`None` for a call's
    /// first round), which its effects' keys are derived from. A panic in it is this
    /// call's error.
    async fn step(
        &self,
        state: State,
        answers: Answers,
        from: Option<([u8; 24], saga_wire::aead::XChaCha20Poly1305)>,
    ) -> Result<Step<State>, Failure> {
        let keys = crate::engine::asks::effect::RoundKeys::of(from);
        let values = RoundValues::new(self.codec.max_state_values());
        let stepped = values
            .scope(keys.scope(catch_panic_pinned(self.tool.step(state, answers, self.cx))))
            .await
            .map_err(|payload| panicked(self.name, payload.as_ref()));
        self.state_values
            .store(values.sealed(), std::sync::atomic::Ordering::Relaxed);
        stepped
    }

    /// The step found an answer the runtime could not check does not fit: the same round
    /// again, from the state as it was sealed.
    fn step_asks_again(
        &self,
        resumed: Option<Resumed<'_>>,
        head: RoundRecord,
        mut requests: Vec<crate::engine::round::requests::Request>,
    ) -> Result<CallToolResponse, Failure> {
        let Some(Resumed {
            opened,
            point,
            head_len,
        }) = resumed
        else {
            return Err(tool_bug(self.name, "it asked again before asking anything"));
        };
        // The head the round was opened with (not decoded again); the state as sealed.
        let state_bytes = &opened.plaintext[head_len..];
        let misfits: Vec<_> = requests
            .iter_mut()
            .enumerate()
            .filter_map(|(index, request)| Some((index, request.misfit.take()?)))
            .collect();
        self.ask_again(&opened, point, head, state_bytes, Some(requests), &misfits)
    }

    /// The next round: its requests keyed and gated, and the state the step left sealed
    /// with the head into the token the client sends back (linked to the last one).
    fn seal(
        &self,
        mut head: RoundRecord,
        state: &State,
        requests: Vec<crate::engine::round::requests::Request>,
        link: Option<crate::state::Link>,
    ) -> Result<CallToolResponse, Failure> {
        let (points, codec) = (self.points, self.codec);
        let assigned = asking::assign(requests, &mut head.next_key, self.name)?;
        let input_requests = assigned.input_requests;
        head.pending = assigned.pending;
        head.restated = assigned.restated;
        head.build = points.build_tag();
        asking::gate(&head.pending, self.cx)?;
        let input_requests = (!input_requests.is_empty()).then_some(input_requests);
        let values = self.state_values.load(std::sync::atomic::Ordering::Relaxed);
        if values > codec.max_state_values() {
            // Refused where it is sealed: no token is handed out whose state would cost
            // more to read back than this server lets one request hold.
            return Err(self.too_many_values(values));
        }
        let (plaintext, point, fields_at) = encode(self.tool, points, codec.format(), &head, state).map_err(|error| {
            if let Some(reason) = crate::engine::identity::slot::take_unreadable() {
                // The caller's own values made it (a `#[serde(flatten)]` map it filled with
                // a key of the struct's own): refused in this round, said to the caller,
                // and logged below ERROR, which a client must not be able to trigger.
                tracing::info!(tool = %Escaped(self.name), reason = %Escaped(&reason), "a saga state does not read back");
                return Failure::InvalidParams(format!(
                        "the saga's state could not be saved: {} (a #[serde(flatten)] map \
                         that holds a key of its struct's own fields writes it twice)",
                        Escaped(&reason)
                    ).into());
            }
            tracing::error!(tool = %Escaped(self.name), %error, "saga state does not serialize");
            Failure::Internal("the saga's state could not be saved".into())
        })?;
        if let Err(error) = point
            .reads_back
            .get_or_init(|| reads_back(self.tool, points, point, &plaintext[fields_at..]))
        {
            tracing::error!(tool = %Escaped(self.name), point = %point.name, %error, "saga state does not read back as itself");
            return Err(Failure::Internal(
                "the saga's state could not be saved".into(),
            ));
        }
        let expires_at =
            link.map(|_| crate::state::unix_now().saturating_add(codec.ttl().as_secs()));
        let token = codec.seal_round(
            expires_at,
            &point.key,
            self.binding,
            &plaintext,
            link,
            head.trace.as_ref(),
        );
        if token.len() > codec.max_sealed_len() {
            // The server would refuse this token when it comes back (and a client could
            // not send it under the body limit), or its store would not keep it.
            return Err(self.outgrown(token.len(), point, &plaintext[fields_at..]));
        }
        Ok(InputRequiredResult::new(input_requests, Some(token)).into())
    }

    /// The failure of a state that would seal into a token past the cap, blamed on
    /// whoever made it: the server's model, the client's answers when they are most of
    /// it, and otherwise the tool's own values, the largest of them named.
    fn outgrown(&self, token_len: usize, point: &Point, fields: &[u8]) -> Failure {
        let max = self.codec.max_sealed_len();
        tracing::warn!(
            tool = %Escaped(self.name),
            len = token_len,
            max,
            answered = self.answered_bytes,
            saved = fields.len(),
            "the saga's state outgrew the token cap"
        );
        if self.model_answered {
            // The server's own model wrote what outgrew it: not the client's doing.
            return Failure::Internal(
                "the saga's state would exceed the size this server accepts back: it \
                 keeps the server's model's answer across a suspension, and the tool \
                 keeps too much of it (SamplingLimits::max_answer_bytes bounds each \
                 answer; a retry of this round's token reads the kept answer without \
                 asking the model again)"
                    .into(),
            );
        }
        let answered = self.answered_bytes + arguments_len(self.first_arguments);
        if answered > 0 && answered.saturating_mul(2) >= fields.len() {
            return Failure::InvalidParams(
                format!(
                    "the saga's state would exceed the size this server accepts back \
                     ({token_len} characters sealed, over {max}): this request's answers \
                     (or a first call's arguments, {} bytes) are most of it; send smaller \
                     answers",
                    answered
                )
                .into(),
            );
        }
        let largest = largest_locals(self.tool, self.points, point, self.name, fields);
        let (bound, fixes) = if self.codec.keeps_states() {
            (
                "the largest state this server keeps in its state store (64 times \
                 SagaServerBuilder::max_token_len)",
                "Keep less across a suspension (a history trimmed as cx.state_size() grows)",
            )
        } else {
            (
                "this server's token cap (SagaServerBuilder::max_token_len)",
                "Keep less across a suspension (a history trimmed as cx.state_size() grows), \
                 keep large states in a store (SagaServerBuilder::state_store), or raise the \
                 cap with HttpLimits::max_body_bytes",
            )
        };
        Failure::Internal(
            format!(
                "the tool's state outgrew its token: its saved locals, {} bytes encoded \
                 (a local's JSON, below, takes more), seal into {token_len} characters, \
                 over {max}, {bound}. Largest saved: {largest}. {fixes}",
                fields.len()
            )
            .into(),
        )
    }

    /// The failure of a state that would hold more values than the codec's bound, blamed
    /// on the client when its answers (or a first call's arguments) could hold what is
    /// past the bound (smaller answers let the call go on), else on the tool.
    fn too_many_values(&self, values: usize) -> Failure {
        let max = self.codec.max_state_values();
        let answered = self.answered_bytes + arguments_len(self.first_arguments);
        tracing::warn!(
            tool = %Escaped(self.name),
            values,
            max,
            answered,
            "the saga's state would hold more values than the server reads back"
        );
        // The client's when this request's answers tipped it over: without them the state
        // could have fitted, and the same round answered smaller goes on. A JSON value
        // takes two bytes at least (`0,`), so answers of `answered` bytes hold at most half
        // as many values.
        let client = !self.model_answered && answered / 2 >= values - max;
        let message = format!(
            "the saga's state would hold {values} values (JSON values, list items, map \
             entries), over the {max} this server reads back in one request"
        );
        if client {
            return Failure::InvalidParams(
                format!(
                    "{message}: this request's answers (or a first call's arguments, \
                     {answered} bytes) took it past the bound; send smaller answers"
                )
                .into(),
            );
        }
        Failure::Internal(
            format!(
                "{message}. Keep less across a suspension (a history trimmed as it grows, \
                 the parts it needs of a document), or raise the bound with \
                 SagaServerBuilder::max_state_values"
            )
            .into(),
        )
    }

    /// The round of `head` asked again: the same requests under the same keys, the same
    /// state and expiry in a fresh token, so that resending without answers cannot
    /// stretch the round's lifetime. Requests the token keeps no copy of are stated again
    /// by the tool from its state (`restated`, if the tool already did).
    fn ask_again(
        &self,
        opened: &Opened,
        point: &Point,
        mut head: RoundRecord,
        state_bytes: &[u8],
        mut restated: Option<Vec<crate::engine::round::requests::Request>>,
        misfits: &[(usize, FormError)],
    ) -> Result<CallToolResponse, Failure> {
        asking::gate(&head.pending, self.cx)?;
        if restated.is_none() && head.needs_restating() {
            let state = decode_state(self.tool, self.points, point, self.name, state_bytes)?;
            let tool = self.tool;
            let cx = self.cx;
            let stated = catch_panic_sync(|| tool.restate(state, cx))
                .map_err(|payload| panicked(self.name, payload.as_ref()))?;
            match stated {
                Some(requests) => restated = Some(requests),
                None => {
                    return Err(tool_bug(
                        self.name,
                        "suspended with requests to state again, it could not state them",
                    ));
                }
            }
        }
        let build = self.points.build_tag();
        let (mut requests, digest) = asking::asked_again(&head, restated, self.name, build)?;
        asking::explain_misfits(&head.pending, &mut requests, misfits, self.name);
        if head.build != build {
            // This build stated the round: its digest is the one kept from now on.
            head.restated = digest;
            head.build = build;
        }
        let plaintext = head
            .encode(
                self.codec.format(),
                Vec::with_capacity(16 + state_bytes.len()),
            )
            .map(|mut plaintext| {
                plaintext.extend_from_slice(state_bytes);
                plaintext
            })
            .map_err(|error| {
                tracing::error!(tool = %Escaped(self.name), %error, "saga head does not serialize");
                Failure::Internal("the saga's state could not be saved".into())
            })?;
        let token = self.codec.seal_round(
            Some(opened.expires_at),
            &point.key,
            self.binding,
            &plaintext,
            Some(opened.link().next()),
            opened.trace.as_ref(),
        );
        if token.len() > self.codec.max_sealed_len() {
            // The same state, sealed by a codec that deflated it, resealed by one that
            // does not (a replica pinned to an older format): never a token it refuses.
            return Err(self.outgrown(token.len(), point, state_bytes));
        }
        Ok(InputRequiredResult::new(Some(requests), Some(token)).into())
    }
}

/// Whether an answer of the round uses a tool (see [`Transition::check_tools_offered`]).
fn uses_tools(answers: &AnswerSlots) -> bool {
    answers.iter().any(|answer| match answer {
        Some(Answer::ToolSample(result)) => result
            .message
            .content
            .iter()
            .any(|block| matches!(block, rmcp::model::SamplingMessageContentBlock::ToolUse(_))),
        _ => false,
    })
}

/// The head, then the state's fields without its variant index; and the point that index
/// names.
fn encode<'p>(
    typed: &dyn Typed,
    points: &'p Points,
    format: crate::state::TokenFormat,
    head: &RoundRecord,
    state: &State,
) -> Result<(Vec<u8>, &'p Point, usize), String> {
    let plaintext = head
        .encode(format, Vec::with_capacity(128))
        .map_err(|error| error.to_string())?;
    let from = plaintext.len();
    let mut plaintext = typed.encode(state, plaintext)?;
    let point = points.split(&mut plaintext, from)?;
    Ok((plaintext, point, from))
}

/// Whether `fields`, sealed at `point`, read back as the same state at the same point: a
/// serde impl can write a variant index its reading does not count the same way (a
/// `#[serde(skip)]` variant), and the point would then name another variant. Checked once
/// per point, at its first seal.
fn reads_back(
    typed: &dyn Typed,
    points: &Points,
    point: &Point,
    fields: &[u8],
) -> Result<(), String> {
    let joined = points.join(point, fields);
    let (state, rest) = typed.decode(&joined).map_err(|error| error.to_string())?;
    if rest != 0 {
        return Err("trailing bytes".to_owned());
    }
    let mut again = typed.encode(&state, Vec::new())?;
    let read_as = points.split(&mut again, 0)?;
    if read_as.name != point.name || again != fields {
        return Err(format!(
            "sealed at {}, it reads back as {}: a #[serde(skip)] variant in the state?",
            point.name, read_as.name
        ));
    }
    Ok(())
}
