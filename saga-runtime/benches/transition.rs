//! One full transition (open, step, seal) at 1 KiB of state, against the physical floor.
//!
//! Run with `cargo bench -p saga-runtime --bench transition`. It prints markdown tables
//! (the last one: what saga's metrics cost, with and without a recorder);
//! it asserts nothing about timings (only that every transition yields a fresh token).
//!
//! # What is measured
//!
//! [`SagaTools::run`] is driven directly, each tool in a registry of its own built with
//! the bench's key (a server's registry, with its lookup by name), no transport, on one
//! thread. The tools are hand-written [`SagaTool`]s whose `step` does
//! nothing but hand back the state it got, so the time is the runtime's, not the tool's:
//!
//! * `Checkpointer`: the step returns `Step::Checkpoint(state)` (no requests).
//! * `Asker`: the step reads the answer to its last form and suspends on one form
//!   elicitation again, and the next request answers it, so the engine also collects and
//!   checks an answer, assigns a key and renders `inputRequests`: the deploy saga's round
//!   2 shape. It suspends with `Step::suspend_restatable` (the token keeps no request,
//!   as with `#[saga_tool]`), and in a second column with `Step::suspend` (the token
//!   keeps the request's params).
//!
//! The saved state is `State { step, note }` with a 1 KiB (or 100 B, 4 KiB) ASCII `note`.
//!
//! Each pair of rounds is measured two ways:
//!
//! * **The transition alone** (the target's measure): the `Call`s are built from one
//!   token (there is no single-use store here) before the clock starts, four at a time,
//!   and the responses dropped after it stops. An asking round's `Call` carries an answer
//!   and its response a schema: building the one and tearing down the other is the
//!   transport's work (parsing and writing JSON), not the transition's. Four, not more:
//!   with dozens of responses alive the asking side fell out of cache and grew with the
//!   state's size, which a server that answers one request at a time does not see.
//! * **Driven as a client drives it**: each transition takes the previous one's token,
//!   and the harness builds each `Call` and drops each response on the clock.
//!
//! Building an asking `Call` (cloning a small arguments object and the answer) is also
//! measured alone and reported as harness cost.
//!
//! The floor is a bare XChaCha20-Poly1305 encrypt + decrypt (built as saga builds it) of
//! exactly as many bytes as the token's plaintext (the engine's head plus the postcard
//! state) with a 101-byte AAD (the 37-byte header, the binding's digest, the point's identity);
//! the table also shows `StateCodec::seal` + `open` on those bytes, and base64url.
//!
//! # Method
//!
//! As in the codec bench: warm up 100 ms, size a batch to ~20 ms, 15 batches, median. A
//! checkpoint and an asking transition are measured in alternating batches (the order
//! swapped every pair), and their ratio is the median of the per-pair ratios: this VM's
//! speed drifts over seconds, which moved ratios measured one after the other by ±40 %.
//!
//! `PROFILE_ASK=1` runs only the `#[saga_tool]` asking round for 5 s, for a profiler;
//! `PROFILE_ASK=checkpoint` its checkpoint twin, `PROFILE_ASK=hand` the hand-written one.
//! The transition future never waits (no single-use store), so it is polled once with a
//! no-op waker; a `Pending` would panic.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, InputResponses, JsonObject, Tool};
use saga_runtime::__support::Points;
use saga_runtime::engine::{Answers, Call, Request, SagaContext, SagaTool, Step, elicit};
use saga_runtime::prelude::{SagaError, checkpoint, saga_tool};
use saga_runtime::serve::SagaTools;
use saga_runtime::state::{Binding, KeyRing, StateCodec};

/// The token's clear header and tag, around the ciphertext (see `tests/sealing.rs`).
const HEADER_LEN: usize = 37;
const TAG_LEN: usize = 16;
use serde::{Deserialize, Serialize};
use serde_json::json;

// The AEAD exactly as saga ships it (saga-wire's, behind the runtime's codec).
use saga_wire::aead;

const SIZES: [(usize, &str); 3] = [(100, "100 B"), (1024, "1 KiB"), (4096, "4 KiB")];
const TTL: Duration = Duration::from_secs(600);
const WARM_UP: Duration = Duration::from_millis(100);
const BATCH: Duration = Duration::from_millis(20);
const BATCHES: usize = 15;
const TOOL: &str = "bench_tool";

#[derive(Serialize, Deserialize, Clone, Debug)]
struct State {
    step: u32,
    note: String,
}

fn note(len: usize) -> String {
    let alphabet = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ";
    (0..len)
        .map(|i| alphabet[(i * 7 + i / 13) % alphabet.len()] as char)
        .collect()
}

fn tool_entry() -> Tool {
    // A registry takes only an object schema, as MCP requires.
    let schema = json!({"type": "object"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    Tool::new(TOOL, "bench", schema)
}

/// Checkpoints forever with the state it was started with.
#[derive(Clone)]
struct Checkpointer(usize);

impl SagaTool for Checkpointer {
    type State = State;

    fn tool(&self) -> Tool {
        tool_entry()
    }

    fn start(&self, _arguments: JsonObject) -> Result<State, ErrorData> {
        Ok(State {
            step: 0,
            note: note(self.0),
        })
    }

    async fn step(&self, state: State, _answers: Answers, _cx: &SagaContext) -> Step<State> {
        Step::checkpoint(state)
    }
}

/// Asks the same one-field form every round, with the state it was started with, and
/// reads the answer. `KEEPS` chooses how: `false` suspends with
/// `Step::suspend_restatable` and states the round again in `restate` (as `#[saga_tool]`
/// does), so the token keeps no request; `true` suspends with `Step::suspend`, so the token
/// keeps the request's params.
#[derive(Clone)]
struct Asker<const KEEPS: bool>(usize);

impl<const KEEPS: bool> SagaTool for Asker<KEEPS> {
    type State = State;

    fn tool(&self) -> Tool {
        tool_entry()
    }

    fn start(&self, _arguments: JsonObject) -> Result<State, ErrorData> {
        Ok(State {
            step: 0,
            note: note(self.0),
        })
    }

    async fn step(&self, mut state: State, mut answers: Answers, _cx: &SagaContext) -> Step<State> {
        let ask = || elicit::<String>("Target?");
        if !answers.is_empty() {
            match answers.elicit::<String>(0) {
                Ok(target) => state.step += u32::from(black_box(target).len() as u8 & 1),
                Err(_) => return Step::AskAgain(vec![ask().into()]),
            }
        }
        if KEEPS {
            Step::suspend(state, [ask()])
        } else {
            Step::suspend_restatable(state, [ask()])
        }
    }

    fn restate(&self, _state: State, _cx: &SagaContext) -> Option<Vec<Request>> {
        Some(vec![elicit::<String>("Target?").into()])
    }
}

/// The key every token of the bench is sealed with.
const KEY: [u8; 32] = [0x42; 32];

/// A bench tool served as a server serves it: in a registry of its own (the tool, its
/// points traced once when the registry is built, the bench's key and TTL), built on first
/// use and kept for the run, one per tool value (tools of one type may differ in size).
trait Served: SagaTool + Clone + Sized {
    fn tools(&self) -> &'static SagaTools {
        thread_local! {
            static REGISTRIES: std::cell::RefCell<
                std::collections::HashMap<(std::any::TypeId, usize), &'static SagaTools>,
            > = std::cell::RefCell::default();
        }
        let id = (std::any::TypeId::of::<Self>(), self as *const Self as usize);
        REGISTRIES.with(|registries| {
            *registries.borrow_mut().entry(id).or_insert_with(|| {
                let tools = SagaTools::builder()
                    .keys(KeyRing::from_keys([KEY]).expect("a key"))
                    .ttl(TTL)
                    .tool(self.clone())
                    .build()
                    .expect("the bench tool's registry builds");
                Box::leak(Box::new(tools))
            })
        })
    }
}

impl<T: SagaTool + Clone> Served for T {}

/// One transition of `tool` for `call`, through its registry.
fn transition<'a, T: Served>(
    tool: &'a T,
    call: Call,
    cx: &'a SagaContext,
) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + 'a {
    tool.tools().run(call, cx)
}

/// Polls a future that never waits.
fn now<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the transition waited"),
    }
}

/// Median nanoseconds per call of `f`.
fn measure(f: impl FnMut()) -> f64 {
    let mut side = chained(f);
    let iterations = batch_size(&mut side);
    median((0..BATCHES).map(|_| side(iterations)).collect())
}

/// How many operations of `side` make a batch of about `BATCH`, after a warm-up.
fn batch_size(side: &mut dyn FnMut(u64) -> f64) -> u64 {
    let start = Instant::now();
    let mut warm = 0u64;
    while start.elapsed() < WARM_UP {
        side(16);
        warm += 16;
    }
    ((BATCH.as_secs_f64() / (WARM_UP.as_secs_f64() / warm as f64)) as u64).max(1)
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Median nanoseconds per operation of `a` and of `b`, and the median ratio `b / a`, from
/// batches of each taken in turn (the order swapped every pair), so that a machine that
/// slows down for a while slows both sides of a ratio alike. Each side runs a batch of
/// `n` operations and says how many nanoseconds one took ([`chained`], [`engine_only`]).
fn measure_pair(mut a: impl FnMut(u64) -> f64, mut b: impl FnMut(u64) -> f64) -> (f64, f64, f64) {
    let (a_iterations, b_iterations) = (batch_size(&mut a), batch_size(&mut b));
    let mut a_samples = Vec::with_capacity(BATCHES);
    let mut b_samples = Vec::with_capacity(BATCHES);
    let mut ratios = Vec::with_capacity(BATCHES);
    for pair in 0..BATCHES {
        let (a_ns, b_ns) = if pair % 2 == 0 {
            let a_ns = a(a_iterations);
            (a_ns, b(b_iterations))
        } else {
            let b_ns = b(b_iterations);
            (a(a_iterations), b_ns)
        };
        a_samples.push(a_ns);
        b_samples.push(b_ns);
        ratios.push(b_ns / a_ns);
    }
    (median(a_samples), median(b_samples), median(ratios))
}

/// A side of [`measure_pair`] that times `f` whole: for rounds driven as a client drives
/// them, each building its `Call` from the last response and dropping that response.
fn chained(mut f: impl FnMut()) -> impl FnMut(u64) -> f64 {
    move |n| {
        let started = Instant::now();
        for _ in 0..n {
            f();
        }
        started.elapsed().as_nanos() as f64 / n as f64
    }
}

/// How many `Call`s [`engine_only`] builds ahead of the clock: few enough that the
/// allocator reuses the same memory batch after batch, as a server would.
const PREPARED: usize = 4;

/// A side of [`measure_pair`] that times the transition alone: each `Call` is built (from
/// the same token: there is no single-use store here) before the clock starts, and each
/// response checked and dropped after it stops, `PREPARED` at a time. What the two
/// sides of a ratio then differ in is the engine's work, not the harness's answer
/// building or the response's teardown (which the transport pays, for both, as parsing
/// and writing JSON).
fn engine_only<R>(
    mut make: impl FnMut() -> Call,
    mut run: impl FnMut(Call) -> R,
    check: impl Fn(&R),
) -> impl FnMut(u64) -> f64 {
    let mut calls = Vec::with_capacity(PREPARED);
    let mut responses = Vec::with_capacity(PREPARED);
    move |n| {
        let mut elapsed = Duration::ZERO;
        let mut left = n as usize;
        while left > 0 {
            let now = left.min(PREPARED);
            calls.extend((0..now).map(|_| make()));
            let started = Instant::now();
            for call in calls.drain(..) {
                responses.push(run(black_box(call)));
            }
            elapsed += started.elapsed();
            responses.iter().for_each(&check);
            responses.clear();
            left -= now;
        }
        elapsed.as_nanos() as f64 / n as f64
    }
}

/// An `input_required` response with a token, and (if `asks`) requests.
fn suspended(response: &Result<CallToolResponse, ErrorData>, asks: bool) {
    match response {
        Ok(CallToolResponse::InputRequired(result)) => {
            assert!(result.request_state.is_some(), "a token");
            assert_eq!(result.input_requests.is_some(), asks, "{result:?}");
        }
        other => panic!("expected input_required, got {other:?}"),
    }
}

fn token_of(response: Result<CallToolResponse, ErrorData>) -> String {
    match response {
        Ok(CallToolResponse::InputRequired(result)) => {
            result.request_state.expect("a requestState")
        }
        other => panic!("expected input_required, got {other:?}"),
    }
}

/// The token and the one `inputRequests` key of an `input_required` response.
fn asked(response: Result<CallToolResponse, ErrorData>) -> (String, String) {
    match response {
        Ok(CallToolResponse::InputRequired(result)) => {
            // Moved out, not copied: the harness costs the transition nothing it would not.
            let key = result
                .input_requests
                .and_then(|requests| requests.into_keys().next())
                .expect("one request");
            (result.request_state.expect("a token"), key)
        }
        other => panic!("expected input_required, got {other:?}"),
    }
}

fn capabilities_cx() -> SagaContext {
    let caps: rmcp::model::ClientCapabilities =
        serde_json::from_value(json!({"elicitation": {}, "sampling": {}})).unwrap();
    SagaContext::new("alice").with_capabilities(caps)
}

/// A `#[saga_tool]` of `$n` checkpoints in a row, with a local kept across all of them.
macro_rules! checkpoints {
    ($name:ident, $($i:literal)*) => {
        #[saga_tool]
        async fn $name(start: u64) -> Result<String, SagaError> {
            let mut total = start;
            $(
                total += $i;
                checkpoint().await;
            )*
            Ok(format!("{total}"))
        }
    };
}

checkpoints!(two_checkpoints, 0 1);
checkpoints!(
    twenty_checkpoints,
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19
);
checkpoints!(
    two_hundred_checkpoints,
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30
    31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58
    59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86
    87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110
    111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127 128 129 130 131
    132 133 134 135 136 137 138 139 140 141 142 143 144 145 146 147 148 149 150 151 152
    153 154 155 156 157 158 159 160 161 162 163 164 165 166 167 168 169 170 171 172 173
    174 175 176 177 178 179 180 181 182 183 184 185 186 187 188 189 190 191 192 193 194
    195 196 197 198 199
);

/// A `#[saga_tool]` that keeps a note of `len` bytes and asks one form per round, for
/// ever: its rounds are stated again from the state, so its tokens keep no requests.
#[saga_tool]
async fn ask_forever(len: u64) -> Result<String, SagaError> {
    let note = "n".repeat(len as usize);
    loop {
        let target: String = elicit("Target?").await?;
        if target.len() > note.len() {
            break;
        }
    }
    Ok(note)
}

/// The same saga with a checkpoint where `ask_forever` asks.
#[saga_tool]
async fn checkpoint_forever(len: u64) -> Result<String, SagaError> {
    let note = "n".repeat(len as usize);
    loop {
        checkpoint().await;
        if note.is_empty() {
            break;
        }
    }
    Ok(note)
}

/// A JSON document of about `len` bytes of text: an API response's shape.
fn document(len: u64) -> serde_json::Value {
    let mut items = Vec::new();
    let mut text = 12;
    while text < len as usize {
        let i = items.len();
        let item = json!({"id": i, "name": format!("item {i}"), "done": i % 2 == 0});
        text += item.to_string().len() + 1;
        items.push(item);
    }
    json!({"items": items})
}

/// A checkpoint loop keeping a document as its JSON text (a `String`: postcard).
#[saga_tool]
async fn keeps_text(len: u64) -> Result<String, SagaError> {
    let note = document(len).to_string();
    loop {
        checkpoint().await;
        if note.is_empty() {
            break;
        }
    }
    Ok(note)
}

/// The same loop keeping the document itself (a `serde_json::Value`: MessagePack).
#[saga_tool]
async fn keeps_value(len: u64) -> Result<String, SagaError> {
    let note = document(len);
    loop {
        checkpoint().await;
        if note.is_null() {
            break;
        }
    }
    Ok(note.to_string())
}

/// A form answer under `key`, if there is a key. The answer's JSON is built once and
/// cloned, as a server has it already parsed from the request's body.
fn answer_for_key(key: Option<&str>) -> Option<InputResponses> {
    static ANSWER: std::sync::LazyLock<serde_json::Value> = std::sync::LazyLock::new(
        || json!({"action": "accept", "content": {"value": "production"}}),
    );
    key.map(|key| {
        let mut map = InputResponses::new();
        map.insert(key.to_owned(), ANSWER.clone());
        map
    })
}

/// A `#[saga_tool]` looping on one suspension, driven one transition at a time: each
/// takes the previous one's token and answers the key it asked (`answer` gives the
/// answers for a key; none for a checkpoint).
struct Looping<'a, T, A> {
    tool: &'a T,
    cx: &'a SagaContext,
    name: String,
    arguments: JsonObject,
    answer: A,
    token: String,
    key: Option<String>,
    first_key: Option<String>,
}

impl<'a, T, A> Looping<'a, T, A>
where
    T: Served,
    A: Fn(Option<&str>) -> Option<InputResponses>,
{
    fn new(tool: &'a T, cx: &'a SagaContext, len: usize, answer: A) -> Self {
        let mut looping = Self {
            tool,
            cx,
            name: tool.tool().name.to_string(),
            arguments: json!({"len": len}).as_object().cloned().unwrap(),
            answer,
            token: String::new(),
            key: None,
            first_key: None,
        };
        looping.step(None);
        looping.first_key = looping.key.clone();
        looping
    }

    /// The call that answers the last round, from its token (which it leaves in place:
    /// there is no single-use store here).
    fn call(&self) -> Call {
        Call {
            request_state: Some(self.token.clone()),
            input_responses: (self.answer)(self.key.as_deref()),
            ..Call::tool(&self.name, Some(self.arguments.clone()))
        }
    }

    /// One transition, for [`engine_only`].
    fn run(&self, call: Call) -> Result<CallToolResponse, ErrorData> {
        now(transition(self.tool, call, self.cx))
    }

    fn step(&mut self, token: Option<String>) {
        let call = Call {
            request_state: token,
            input_responses: (self.answer)(self.key.as_deref()),
            ..Call::tool(&self.name, Some(self.arguments.clone()))
        };
        match now(transition(self.tool, black_box(call), self.cx)) {
            Ok(CallToolResponse::InputRequired(result)) => {
                self.token = result.request_state.expect("a token");
                self.key = result
                    .input_requests
                    .and_then(|requests| requests.into_keys().next());
            }
            other => panic!("the saga did not suspend: {other:?}"),
        }
    }

    /// One transition from the last token.
    fn round(&mut self) {
        let token = std::mem::take(&mut self.token);
        self.step(Some(token));
    }

    /// Every round collected its answer: the key moved on.
    fn check(&self) {
        if self.first_key.is_some() {
            assert_ne!(self.key, self.first_key, "every round collected its answer");
        }
    }
}

/// Median ns of one transition that resumes `tool` at its middle checkpoint and stops at
/// the next (the same token each time: no single-use store here).
fn middle_transition<T: Served>(tool: &T, cx: &SagaContext, n: usize) -> f64 {
    let arguments = json!({"start": 1}).as_object().cloned().unwrap();
    let name = tool.tool().name.to_string();
    let call = |token: Option<String>| Call {
        request_state: token,
        ..Call::tool(&name, Some(arguments.clone()))
    };
    let mut token = token_of(now(transition(tool, call(None), cx)));
    for _ in 1..n / 2 {
        token = token_of(now(transition(tool, call(Some(token)), cx)));
    }
    measure(|| {
        black_box(token_of(now(transition(
            tool,
            black_box(call(Some(token.clone()))),
            cx,
        ))));
    })
}

/// A checkpoint round of `checkpointer` against an asking round of `asker`, each as
/// [`measure_pair`] gives it: first the transitions alone ([`engine_only`]), then rounds
/// driven as a client drives them ([`chained`]).
fn pair_with_asker<const KEEPS: bool>(
    asker: &Asker<KEEPS>,
    checkpointer: &Checkpointer,
    token: &mut String,
    (cx, arguments): (&SagaContext, &JsonObject),
) -> [(f64, f64, f64); 2]
where
    Asker<KEEPS>: Served,
{
    let (mut ask_token, mut next_key) = asked(now(transition(
        asker,
        Call::tool(TOOL, Some(arguments.clone())),
        cx,
    )));
    let first_key = next_key.clone();
    let call = |token: &str, key: Option<&str>| Call {
        request_state: Some(token.to_owned()),
        input_responses: answer_for_key(key),
        ..Call::tool(TOOL, Some(arguments.clone()))
    };
    let (fixed_checkpoint, fixed_ask) = (token.clone(), ask_token.clone());
    let engine = measure_pair(
        engine_only(
            || call(&fixed_checkpoint, None),
            |call| now(transition(checkpointer, call, cx)),
            |response| suspended(response, false),
        ),
        engine_only(
            || call(&fixed_ask, Some(&first_key)),
            |call| now(transition(asker, call, cx)),
            |response| suspended(response, true),
        ),
    );
    let driven = measure_pair(
        chained(|| {
            let call = Call {
                request_state: Some(std::mem::take(token)),
                ..Call::tool(TOOL, Some(arguments.clone()))
            };
            *token = token_of(now(transition(checkpointer, black_box(call), cx)));
        }),
        chained(|| {
            // The engine numbers keys over the whole saga (elicit-1, elicit-2, …), so each
            // round answers the key the previous round asked.
            let call = Call {
                request_state: Some(std::mem::take(&mut ask_token)),
                input_responses: answer_for_key(Some(&next_key)),
                ..Call::tool(TOOL, Some(arguments.clone()))
            };
            (ask_token, next_key) = asked(now(transition(asker, black_box(call), cx)));
        }),
    );
    // Every round collected its answer and asked a new key (not the same one again).
    assert_ne!(next_key, first_key, "the answers were collected");
    [engine, driven]
}

struct Row {
    size: &'static str,
    plaintext: usize,
    token: usize,
    checkpoint_ns: f64,
    ask_ns: f64,
    ratio: f64,
    kept_ask_ns: f64,
    kept_ratio: f64,
    driven_ratio: f64,
    kept_driven_ratio: f64,
    harness_ns: f64,
    aead_ns: f64,
    codec_ns: f64,
}

fn main() {
    let started = Instant::now();
    let key = KEY;
    let cipher = aead::XChaCha20Poly1305::new(&key);
    let codec = StateCodec::new(KeyRing::from_keys([key]).unwrap(), TTL);
    let cx = capabilities_cx();
    let arguments = json!({"initial_arg": "x", "replicas": 3})
        .as_object()
        .cloned()
        .unwrap();

    // `PROFILE_ASK`: one kind of round only, for a profiler (see the module docs).
    if let Some(which) = std::env::var_os("PROFILE_ASK") {
        let deadline = Instant::now() + Duration::from_secs(5);
        if which == "hand" {
            let asker = Asker::<false>(100);
            let arguments = json!({"initial_arg": "x", "replicas": 3})
                .as_object()
                .cloned()
                .unwrap();
            let (mut token, mut key) = asked(now(transition(
                &asker,
                Call::tool(TOOL, Some(arguments.clone())),
                &cx,
            )));
            while Instant::now() < deadline {
                let call = Call {
                    request_state: Some(std::mem::take(&mut token)),
                    input_responses: answer_for_key(Some(&key)),
                    ..Call::tool(TOOL, Some(arguments.clone()))
                };
                (token, key) = asked(now(transition(&asker, call, &cx)));
            }
        } else if which == "checkpoint" {
            let mut looping = Looping::new(&checkpoint_forever, &cx, 100, |_| None);
            while Instant::now() < deadline {
                looping.round();
            }
        } else {
            let mut looping = Looping::new(&ask_forever, &cx, 100, answer_for_key);
            while Instant::now() < deadline {
                looping.round();
            }
        }
        return;
    }

    let mut rows = Vec::new();
    for (len, size) in SIZES {
        // ---- Checkpoint: open, step, seal, nothing else.
        let tool = Checkpointer(len);
        let first = now(transition(
            &tool,
            Call::tool(TOOL, Some(arguments.clone())),
            &cx,
        ));
        let mut token = token_of(first);
        let token_len = token.len();
        // Check it chains: each token opens and yields a new one.
        let next = token_of(now(transition(
            &tool,
            Call {
                request_state: Some(token.clone()),
                ..Call::tool(TOOL, Some(arguments.clone()))
            },
            &cx,
        )));
        assert_ne!(next, token);

        // ---- Suspend on one elicitation, answered each round: the token keeping no
        // request, then keeping it.
        let [(checkpoint_ns, ask_ns, ratio), (_, _, driven_ratio)] =
            pair_with_asker(&Asker::<false>(len), &tool, &mut token, (&cx, &arguments));
        let [(_, kept_ask_ns, kept_ratio), (_, _, kept_driven_ratio)] =
            pair_with_asker(&Asker::<true>(len), &tool, &mut token, (&cx, &arguments));
        let next_key = "elicit-1".to_owned();

        // ---- What building a `Call` costs the harness (already inside both numbers).
        let mut spare = token.clone();
        let harness_ns = measure(|| {
            let call = Call {
                request_state: Some(std::mem::take(&mut spare)),
                input_responses: answer_for_key(Some(&next_key)),
                ..Call::tool(TOOL, Some(arguments.clone()))
            };
            spare = black_box(call).request_state.unwrap();
        });

        // ---- The floor: bare AEAD on as many bytes as the token's plaintext.
        let plaintext = token_len * 3 / 4 - HEADER_LEN - TAG_LEN;
        let nonce = [7u8; 24];
        let aad = [0x11u8; 101];
        let mut buffer = vec![0x5au8; plaintext];
        let aead_ns = measure(|| {
            let tag = cipher.seal_in_place(&nonce, black_box(&aad), &mut buffer);
            cipher
                .open_in_place(&nonce, &aad, &mut buffer, black_box(&tag))
                .expect("opens");
        });
        let binding = Binding::new(TOOL, "tools/call", "alice", Some(&arguments));
        let codec_ns = measure(|| {
            let point = saga_runtime::state::PointKey {
                header: *b"pt-check",
                identity: [3; 32],
            };
            let sealed = codec.seal(&point, black_box(&binding), black_box(&buffer));
            black_box(codec.open(black_box(&sealed), &point, &binding).unwrap());
        });
        rows.push(Row {
            size,
            plaintext,
            token: token_len,
            checkpoint_ns,
            ask_ns,
            ratio,
            kept_ask_ns,
            kept_ratio,
            driven_ratio,
            kept_driven_ratio,
            harness_ns,
            aead_ns,
            codec_ns,
        });
    }

    println!("\n### One transition (open, step, seal), driven directly: hand-written tools\n");
    println!(
        "Transitions alone (each `Call` built, and each response dropped, off the clock); the \
         asking round reads the answer and suspends on one form, its token keeping no request \
         (`Step::suspend_restatable`) or keeping it (`Step::suspend`). The last two ratios are \
         of rounds driven as a client drives them, the harness's `Call` building and the \
         response's teardown included.\n"
    );
    println!(
        "| state | token plaintext (B) | token (chars) | checkpoint (µs) | suspend+answer, restatable (µs) | vs checkpoint | suspend+answer, kept (µs) | vs checkpoint | driven: restatable | driven: kept | building an asking Call (µs) | StateCodec seal+open (µs) | AEAD floor: encrypt+decrypt (µs) | checkpoint / floor | suspend / floor |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for row in &rows {
        println!(
            "| {} | {} | {} | {:.2} | {:.2} | {:.2}× | {:.2} | {:.2}× | {:.2}× | {:.2}× | {:.2} | {:.2} | {:.2} | {:.1}× | {:.1}× |",
            row.size,
            row.plaintext,
            row.token,
            row.checkpoint_ns / 1000.0,
            row.ask_ns / 1000.0,
            row.ratio,
            row.kept_ask_ns / 1000.0,
            row.kept_ratio,
            row.driven_ratio,
            row.kept_driven_ratio,
            row.harness_ns / 1000.0,
            row.codec_ns / 1000.0,
            row.aead_ns / 1000.0,
            row.checkpoint_ns / row.aead_ns,
            row.ask_ns / row.aead_ns,
        );
    }

    // ---- The same transition in sagas of 2, 20 and 200 suspensions.
    println!("\n### A checkpoint transition as the saga grows (`#[saga_tool]`, 8-byte state)\n");
    println!("| checkpoints in the saga | transition at the middle one (µs) | vs 2 |");
    println!("|---:|---:|---:|");
    let two = middle_transition(&two_checkpoints, &cx, 2);
    for (n, ns) in [
        (2, two),
        (20, middle_transition(&twenty_checkpoints, &cx, 20)),
        (200, middle_transition(&two_hundred_checkpoints, &cx, 200)),
    ] {
        println!("| {n} | {:.2} | {:.2}× |", ns / 1000.0, ns / two);
    }

    // ---- The same comparison with `#[saga_tool]`s, whose asking rounds keep no requests.
    println!(
        "\n### `#[saga_tool]`: a round that asks and reads a form answer vs a checkpoint round\n"
    );
    println!(
        "| state | checkpoint transition (µs) | suspend+answer transition (µs) | ratio (median over paired batches) | driven as a client: ratio |"
    );
    println!("|---|---:|---:|---:|---:|");
    for (len, size) in SIZES {
        let mut checkpoints = Looping::new(&checkpoint_forever, &cx, len, |_| None);
        let mut asks = Looping::new(&ask_forever, &cx, len, answer_for_key);
        let (checkpoint_ns, ask_ns, ratio) = measure_pair(
            engine_only(
                || checkpoints.call(),
                |call| checkpoints.run(call),
                |response| suspended(response, false),
            ),
            engine_only(
                || asks.call(),
                |call| asks.run(call),
                |response| suspended(response, true),
            ),
        );
        let (_, _, driven) =
            measure_pair(chained(|| checkpoints.round()), chained(|| asks.round()));
        asks.check();
        println!(
            "| {size} | {:.2} | {:.2} | {ratio:.2}× | {driven:.2}× |",
            checkpoint_ns / 1000.0,
            ask_ns / 1000.0,
        );
    }
    value_slot_cost(&cx);
    identity_check(&cx);
    metrics_cost(&cx);
    println!("\n(finished in {:.1} s)", started.elapsed().as_secs_f64());
}

/// What a saved `serde_json::Value` costs against a `String` of the same JSON text: a
/// checkpoint transition of each (alternating batches), and the tokens' lengths.
fn value_slot_cost(cx: &SagaContext) {
    println!(
        "\n### A saved `serde_json::Value` (MessagePack) vs a `String` of the same JSON text (postcard)\n"
    );
    println!(
        "| JSON text | `String` transition (µs) | `Value` transition (µs) | ratio (median over paired batches) | token chars `String` | token chars `Value` |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (len, size) in SIZES {
        let text = Looping::new(&keeps_text, cx, len, |_| None);
        let value = Looping::new(&keeps_value, cx, len, |_| None);
        let (text_ns, value_ns, ratio) = measure_pair(
            engine_only(
                || text.call(),
                |call| text.run(call),
                |response| suspended(response, false),
            ),
            engine_only(
                || value.call(),
                |call| value.run(call),
                |response| suspended(response, false),
            ),
        );
        println!(
            "| {size} | {:.2} | {:.2} | {ratio:.2}× | {} | {} |",
            text_ns / 1000.0,
            value_ns / 1000.0,
            text.token.len(),
            value.token.len(),
        );
    }
}

/// What saga's metrics cost a transition: the calls alone with no recorder installed (what
/// every transition pays when nobody collects them), and a checkpoint transition without a
/// recorder against the same with a Prometheus recorder, in alternating batches (the
/// recorder installed for this thread only, around each batch).
fn metrics_cost(cx: &SagaContext) {
    println!("\n### Metrics (`saga_runtime::metrics`)\n");
    // The calls one transition makes, as saga makes them: a counter and a histogram
    // whose keys were built when the tool was registered, and the two token-size
    // histograms with literal labels.
    let counter_key = metrics::Key::from_parts(
        "saga_transitions_total",
        vec![
            metrics::Label::new("tool", "checkpoint_forever"),
            metrics::Label::new("outcome", "checkpoint"),
            metrics::Label::new("era", "2026-07-28"),
        ],
    );
    let seconds_key = metrics::Key::from_parts(
        "saga_transition_seconds",
        vec![metrics::Label::new("tool", "checkpoint_forever")],
    );
    static METADATA: metrics::Metadata<'static> =
        metrics::Metadata::new(module_path!(), metrics::Level::INFO, None);
    let calls_ns = measure(|| {
        metrics::with_recorder(|recorder| {
            recorder
                .register_counter(black_box(&counter_key), &METADATA)
                .increment(1);
            recorder
                .register_histogram(black_box(&seconds_key), &METADATA)
                .record(0.000_01);
        });
        metrics::histogram!("saga_token_bytes", "direction" => "in").record(1400.0);
        metrics::histogram!("saga_token_bytes", "direction" => "out").record(1400.0);
    });
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
    let plain = Looping::new(&checkpoint_forever, cx, 1024, |_| None);
    let recorded = Looping::new(&checkpoint_forever, cx, 1024, |_| None);
    let (off_ns, on_ns, ratio) = measure_pair(
        engine_only(
            || plain.call(),
            |call| plain.run(call),
            |response| suspended(response, false),
        ),
        |n| {
            metrics::with_local_recorder(&recorder, || {
                engine_only(
                    || recorded.call(),
                    |call| recorded.run(call),
                    |response| suspended(response, false),
                )(n)
            })
        },
    );
    println!("| what | ns | of a checkpoint transition (1 KiB) |");
    println!("|---|---:|---:|");
    println!(
        "| a transition's metrics calls, no recorder installed | {calls_ns:.0} | {:.2} % |",
        100.0 * calls_ns / off_ns
    );
    println!("| checkpoint transition, no recorder | {off_ns:.0} | 1.00× |");
    println!("| checkpoint transition, Prometheus recorder | {on_ns:.0} | {ratio:.2}× |");
}

/// What the suspension-point identity adds to a transition, against the fingerprint
/// comparison it replaced, in alternating batches; and what tracing a tool's points costs
/// once, when a server is built.
fn identity_check(cx: &SagaContext) {
    println!(
        "\n### The suspension-point identity (the deploy issue) against the fingerprint check\n"
    );
    let looping = Looping::new(&ask_forever, cx, 100, answer_for_key);
    let token = looping.token.clone();
    let points = Points::of(&ask_forever).expect("the tool's points trace");
    let header: [u8; 8] = saga_runtime::state::TokenHeader::parse(&token)
        .expect("a token")
        .point;
    // The previous build compared the header's 8 bytes with the tool's fingerprint.
    let fingerprint = header;
    let fields = vec![7u8; 110];
    let (old_ns, new_ns, _) = measure_pair(
        |batch| {
            let started = Instant::now();
            for _ in 0..batch {
                black_box(black_box(&header) == black_box(&fingerprint));
            }
            started.elapsed().as_nanos() as f64 / batch as f64
        },
        |batch| {
            let started = Instant::now();
            for _ in 0..batch {
                let found = saga_runtime::state::TokenHeader::peek_point(black_box(&token))
                    .ok()
                    .and_then(|header| points.find(&header));
                black_box(found);
            }
            started.elapsed().as_nanos() as f64 / batch as f64
        },
    );
    // The whole identity also rides in the associated data: 32 bytes more to authenticate.
    let key = KEY;
    let cipher = &aead::XChaCha20Poly1305::new(&key);
    let nonce = [9u8; 24];
    let plaintext = vec![5u8; 110];
    let aead_with = |aad_len: usize| {
        let aad = vec![1u8; aad_len];
        let mut buffer = plaintext.clone();
        move |batch: u64| {
            let started = Instant::now();
            for _ in 0..batch {
                let tag = cipher.seal_in_place(&nonce, &aad, &mut buffer);
                cipher
                    .open_in_place(&nonce, &aad, &mut buffer, &tag)
                    .expect("opens");
                black_box(&buffer);
            }
            started.elapsed().as_nanos() as f64 / batch as f64
        }
    };
    let (aad_73, aad_105, _) = measure_pair(aead_with(73), aead_with(105));
    // Putting back this build's variant index before the state is decoded: one copy of
    // the state's bytes behind a varint (what `Points::join` does).
    let join_ns = measure(|| {
        black_box([[1u8].as_slice(), black_box(&fields)].concat());
    });
    println!("| per transition | ns |");
    println!("|---|---:|");
    println!("| the fingerprint comparison (previous build) | {old_ns:.1} |");
    println!(
        "| the point's lookup: header read from the token, found among the tool's points | {new_ns:.1} |"
    );
    println!("| the variant index put back before decoding (110 B state) | {join_ns:.1} |");
    println!(
        "| seal + open of 110 B, AAD 73 B (previous) → 105 B (with the identity) | {aad_73:.0} → {aad_105:.0} |"
    );
    println!(
        "| added per resumed transition | {:.0} |",
        new_ns - old_ns + join_ns + (aad_105 - aad_73)
    );

    println!("\n| start-up, per tool (traced once when the server is built) | µs |");
    println!("|---|---:|");
    let once = |f: &mut dyn FnMut()| {
        let started = Instant::now();
        for _ in 0..20 {
            f();
        }
        started.elapsed().as_secs_f64() * 1e6 / 20.0
    };
    println!(
        "| `#[saga_tool]`, one point (`ask_forever`) | {:.0} |",
        once(&mut || {
            black_box(Points::of(&ask_forever).expect("traces"));
        })
    );
    println!(
        "| `#[saga_tool]`, 200 points (`two_hundred_checkpoints`) | {:.0} |",
        once(&mut || {
            black_box(Points::of(&two_hundred_checkpoints).expect("traces"));
        })
    );
    println!(
        "| hand-written, an enum state (`Asker`) | {:.0} |",
        once(&mut || {
            black_box(Points::of(&Asker::<false>(100)).expect("traces"));
        })
    );
}
