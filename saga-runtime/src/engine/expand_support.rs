//! What `#[saga_tool]` expands to calls. Hidden from the docs and not a stable API, but
//! kept small and readable, because a user reading the expansion
//! (`SAGA_MACROS_DEBUG=1`) reads these.

use std::future::Future;
use std::marker::PhantomData;

use rmcp::model::JsonObject;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::answers::Answers;
use super::error::SagaError;
use super::join_all::JoinAll;
use super::kinds::Asked;
pub use super::local::{SagaLocal, saved};
use super::output::ToolOutput;
use super::requests::Request;
pub use super::requests::Suspension;
pub use super::saga_fn::{
    Exit, FnState, FnStep, FutureKind, Probe, SagaCall, SagaFn, SagaFnKind, Unreachable, ViaFuture,
    ViaSagaFn, kind_marker, kind_of, probe,
};
use super::tool::Step;

/// Whether the answer at `index` fits the request `marker` stands for; see
/// [`Suspension::fits`].
pub fn fits<R: Suspension>(
    _marker: &Marker<R>,
    answers: &impl std::borrow::Borrow<Answers>,
    index: usize,
) -> bool {
    R::fits(answers.borrow(), index)
}

/// `request`, typed as the request `marker` stands for.
pub fn as_marked<R>(_marker: &Marker<R>, request: R) -> R {
    request
}

/// Whether the runtime asks for the last round's requests again; see
/// [`Answers::asking_again`].
pub fn asking_again(answers: &impl std::borrow::Borrow<Answers>) -> bool {
    answers.borrow().asking_again()
}

/// Ends the transition with the requests of the last round stated again
/// ([`Step::AskAgain`]).
pub fn ask_again<R: Exit>(requests: Vec<Request>) -> R {
    R::asked_again(requests)
}

/// Marks the requests of a round that its suspension can state again from the saved
/// state (`rebuilt`), so that the token keeps none of their params.
pub fn rebuilt(round: &mut [Request], rebuilt: bool) {
    for request in round {
        request.rebuilt = rebuilt;
    }
}

/// The annotations `#[saga_tool(read_only, …)]` gives a tool, from rmcp's builder.
pub use rmcp::model::ToolAnnotations;

/// The icons of `#[saga_tool(icons = [..])]`.
pub fn tool_icons(sources: &[&str]) -> Option<Vec<rmcp::model::Icon>> {
    Some(
        sources
            .iter()
            .map(|src| rmcp::model::Icon::new(*src))
            .collect(),
    )
}

/// The `_meta` of `#[saga_tool(meta = "{…}")]`; the macro checked that it is a JSON object.
pub fn tool_meta(json: &str) -> Option<rmcp::model::MetaObject> {
    match serde_json::from_str(json) {
        Ok(serde_json::Value::Object(object)) => Some(rmcp::model::MetaObject(object)),
        _ => None,
    }
}

/// Notes in each form of a round asked again why its answer did not fit (the answers
/// are the round's, in the same order), so that the question asked again says so.
pub fn note_misfits(round: &mut [Request], answers: &impl std::borrow::Borrow<Answers>) {
    let answers = answers.borrow();
    for (index, request) in round.iter_mut().enumerate() {
        if let Asked::Form(asked) = &request.asked {
            request.misfit = answers.misfit(index, asked.form);
        }
    }
}

/// The requests of a round, in order: those of each suspension of a `join!`.
pub fn requests<R: Suspension>(round: &mut Vec<Request>, suspension: R) {
    suspension.requests(round);
}

impl<R: Suspension> Suspension for JoinAll<R> {
    type Output = Vec<R::Output>;
    fn requests(self, round: &mut Vec<Request>) {
        for request in self.requests {
            request.requests(round);
        }
    }
    /// `join_all` is a round of its own: every answer from `index` on is one of its.
    fn take(answers: &mut Answers, index: usize) -> Self::Output {
        (index..answers.len())
            .map(|i| R::take(answers, i))
            .collect()
    }
    fn fits(answers: &Answers, index: usize) -> bool {
        (index..answers.len()).all(|i| R::fits(answers, i))
    }
}

/// Remembers, in the saved state, which kind of request a suspension made, so that the
/// next transition reads the answer with the right type. Costs no bytes.
pub type Marker<R> = PhantomData<fn() -> R>;

/// The marker of `request`.
pub fn marker<R: Suspension>(_request: &R) -> Marker<R> {
    PhantomData
}

/// The answer to the request at `index` of the round that just ended.
pub fn answer<R: Suspension>(
    _marker: Marker<R>,
    answers: &mut impl std::borrow::BorrowMut<Answers>,
    index: usize,
) -> R::Output {
    R::take(answers.borrow_mut(), index)
}

/// The state of a macro-generated saga as the runtime sees it: the arguments of the first
/// request, or the saga's own state enum, postcard-encoded. The enum's field types are
/// inferred by rustc inside the tool's step, so they cannot be named here; only bytes
/// cross this boundary.
#[derive(Debug)]
pub enum MacroState<A> {
    /// The first round: the call's arguments.
    Start(A),
    /// A later round: the encoded state enum.
    Resume(Vec<u8>),
}

impl<A> Serialize for MacroState<A> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            MacroState::Resume(bytes) => serde_bytes_like(bytes, serializer),
            // A saga suspends only after it has started, so the runtime never seals this.
            MacroState::Start(_) => Err(serde::ser::Error::custom(
                "a saga's arguments are never sealed",
            )),
        }
    }
}

fn serde_bytes_like<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_bytes(bytes)
}

impl<'de, A> Deserialize<'de> for MacroState<A> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Bytes;
        impl serde::de::Visitor<'_> for Bytes {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("the bytes of a saga state")
            }
            fn visit_bytes<E>(self, bytes: &[u8]) -> Result<Vec<u8>, E> {
                Ok(bytes.to_vec())
            }
            fn visit_byte_buf<E>(self, bytes: Vec<u8>) -> Result<Vec<u8>, E> {
                Ok(bytes)
            }
        }
        // A newtype (transparent in postcard) so that a layout trace can tell a tool that
        // traced this instead of its step: a wrapper that did not forward
        // `SagaTool::layout`.
        struct Named;
        impl<'de> serde::de::Visitor<'de> for Named {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("the bytes of a saga state")
            }
            fn visit_newtype_struct<D: Deserializer<'de>>(
                self,
                deserializer: D,
            ) -> Result<Vec<u8>, D::Error> {
                deserializer.deserialize_byte_buf(Bytes)
            }
        }
        deserializer
            .deserialize_newtype_struct(super::layout::MACRO_STATE, Named)
            .map(MacroState::Resume)
    }
}

/// Reads the call's arguments into the tool's generated argument struct.
pub fn start<A: DeserializeOwned>(arguments: JsonObject) -> Result<MacroState<A>, rmcp::ErrorData> {
    super::tool::parse_arguments(arguments).map(MacroState::Start)
}

/// Ends the transition at a suspension: encodes `state` and asks `requests` (none for a
/// checkpoint). `slot` only ties every variant to one state type, so that rustc infers
/// the enum's type parameters across the whole step.
pub fn suspend<S, R>(slot: &mut Option<S>, state: S, requests: Vec<Request>) -> R
where
    S: Serialize + DeserializeOwned,
    R: Exit,
{
    let _ = slot;
    let bytes = match postcard::to_allocvec(&state) {
        Ok(bytes) => bytes,
        Err(error) => return unsaveable(&error),
    };
    // A type can serialize with postcard and still fail to read back (serde_json::Value,
    // untagged enums, skip_serializing_if). Catch it where it is made, in development.
    if cfg!(debug_assertions)
        && let Err(error) = postcard::from_bytes::<S>(&bytes)
    {
        return unsaveable(&error);
    }
    R::suspended(bytes, requests)
}

impl<A> Exit for Step<MacroState<A>> {
    fn suspended(state: Vec<u8>, requests: Vec<Request>) -> Self {
        let state = MacroState::Resume(state);
        if requests.is_empty() {
            Step::Checkpoint(state)
        } else {
            Step::Suspend { state, requests }
        }
    }

    fn asked_again(requests: Vec<Request>) -> Self {
        Step::AskAgain(requests)
    }

    fn failed(message: &'static str) -> Self {
        Step::done(Err::<String, _>(SagaError::msg(message)))
    }
}

/// Ends the transition: a helper it awaited could not go on.
pub fn failed<R: Exit>(message: &'static str) -> R {
    R::failed(message)
}

fn unsaveable<R: Exit>(error: &postcard::Error) -> R {
    tracing::error!(
        %error,
        "the saga's saved locals do not round-trip through postcard; \
         avoid serde_json::Value, untagged enums and skip_serializing_if in saved locals"
    );
    R::failed("the tool's state could not be saved")
}

/// Decodes the state enum of a later round; `slot` fixes its type.
///
/// Under [`macro_state_json`] it renders the decoded state as JSON instead and stops the
/// step there, before any of the tool's code runs.
pub fn decode<S>(slot: &Option<S>, bytes: &[u8]) -> Result<S, postcard::Error>
where
    S: Serialize + DeserializeOwned,
{
    let _ = slot;
    let (state, rest) = postcard::take_from_bytes::<S>(bytes)?;
    if !rest.is_empty() {
        return Err(postcard::Error::DeserializeBadEncoding);
    }
    let inspected = INSPECTION.with(|inspection| {
        let mut inspection = inspection.borrow_mut();
        if matches!(*inspection, Inspection::Armed) {
            *inspection = Inspection::Rendered(
                serde_json::to_value(&state).map_err(|error| error.to_string()),
            );
            true
        } else {
            false
        }
    });
    if inspected {
        // Any error ends the step at once; `undecodable` knows this one is no fault.
        Err(postcard::Error::DeserializeBadEncoding)
    } else {
        Ok(state)
    }
}

/// Where [`decode`] leaves the state it rendered for [`macro_state_json`].
enum Inspection {
    Off,
    Armed,
    Rendered(Result<serde_json::Value, String>),
}

thread_local! {
    static INSPECTION: std::cell::RefCell<Inspection> = const { std::cell::RefCell::new(Inspection::Off) };
}

/// Disarms the inspection however `macro_state_json` returns, so that no later step on
/// this thread is stopped by it.
struct Disarm;

impl Drop for Disarm {
    fn drop(&mut self) {
        INSPECTION.with(|inspection| *inspection.borrow_mut() = Inspection::Off);
    }
}

/// A `#[saga_tool]`'s state as JSON with the tool's own types: `{"Variant": {saved
/// locals}}`. The types of the saved locals are inferred by rustc inside `step`, so this
/// starts `step` on the state and polls it once: the resume arm decodes the state before
/// anything else, and [`decode`] renders it and ends the step there. No code of the tool
/// runs and no request is made.
pub fn macro_state_json<T, A>(tool: &T, state: MacroState<A>) -> Result<serde_json::Value, String>
where
    T: super::SagaTool<State = MacroState<A>>,
{
    let MacroState::Resume(bytes) = state else {
        return Err("a saga that has not started has no saved state".into());
    };
    let _disarm = Disarm;
    INSPECTION.with(|inspection| *inspection.borrow_mut() = Inspection::Armed);
    let cx = super::SagaContext::new("inspect");
    let mut step = std::pin::pin!(tool.step(MacroState::Resume(bytes), Answers::default(), &cx));
    let mut poll_cx = std::task::Context::from_waker(std::task::Waker::noop());
    let _ = step.as_mut().poll(&mut poll_cx);
    let rendered = INSPECTION
        .with(|inspection| std::mem::replace(&mut *inspection.borrow_mut(), Inspection::Off));
    match rendered {
        Inspection::Rendered(Ok(mut value)) => {
            hide_markers(&mut value);
            Ok(value)
        }
        Inspection::Rendered(Err(reason)) => Err(reason),
        Inspection::Armed | Inspection::Off => Err("the state does not decode".into()),
    }
}

/// Drops the generated `__mN` fields (which request each suspension awaits, a type-level
/// marker with no content) from a rendered `{"Variant": {..}}`.
fn hide_markers(value: &mut serde_json::Value) {
    if let Some(variant) = value.as_object_mut() {
        for fields in variant.values_mut() {
            if let Some(fields) = fields.as_object_mut() {
                fields.retain(|name, _| !name.starts_with("__m"));
            }
        }
    }
}

/// A sealed state that authenticated but does not decode: a build with the same point
/// identity but another state layout, which the identity is there to prevent.
pub fn undecodable<R: Exit>(error: &postcard::Error) -> R {
    let inspected =
        INSPECTION.with(|inspection| matches!(*inspection.borrow(), Inspection::Rendered(_)));
    if inspected {
        return R::failed("inspected");
    }
    tracing::error!(%error, "an authenticated saga state does not decode");
    R::failed("the saga's state could not be read")
}

/// Whether this step runs to trace its state's layout (see [`macro_layout`]): it was
/// given no bytes (no sealed state is empty) while a trace runs on this thread.
pub fn tracing_layout(bytes: &[u8]) -> bool {
    bytes.is_empty() && super::layout::tracing()
}

/// Records the layout of the state enum `slot` is typed as, in the running trace, with
/// what tells apart the variants that share a name (`site_tags`, one per variant).
pub fn record_state<S: DeserializeOwned>(slot: &Option<S>, site_tags: &[&'static str]) {
    let _ = slot;
    super::layout::record_state::<S>(site_tags);
}

/// Ends a step that traced its layout; none of the tool's code ran.
pub fn traced<R: Exit>() -> R {
    R::failed("traced")
}

/// The marker of the kind at a call site, typed from the state enum by a function the
/// macro writes per call site.
pub type KindMarker<K> = PhantomData<fn() -> K>;

/// A `#[saga_tool]`'s state layout, point by point: the types of its saved locals are
/// inferred by rustc inside `step`, so this starts `step` with no bytes and polls it once;
/// the resume arm records its state enum and each helper's (through the helper's own
/// step) and ends the step there. No code of the tool runs and no request is made.
pub fn macro_layout<T, A>(
    tool: &T,
) -> Result<super::points::StateLayout, super::layout::LayoutError>
where
    T: super::SagaTool<State = MacroState<A>>,
{
    let frame = super::layout::in_frame(|| {
        let cx = super::SagaContext::new("layout");
        let mut step =
            std::pin::pin!(tool.step(MacroState::Resume(Vec::new()), Answers::default(), &cx));
        let mut poll_cx = std::task::Context::from_waker(std::task::Waker::noop());
        let _ = step.as_mut().poll(&mut poll_cx);
    });
    let mut layout = super::points::StateLayout::of_frame(frame)?;
    layout.state_type = std::any::type_name::<MacroState<A>>();
    layout.version = Some(tool.version());
    Ok(layout)
}

/// Finishes the transition with the tool's result.
pub fn done<A, O: ToolOutput>(output: O) -> Step<MacroState<A>> {
    Step::done(output)
}

/// A collection a `for` loop may borrow across a suspension: the loop saves its position,
/// and after the suspension borrows the collection read back from the state again and
/// goes on at the same position. That needs the collection to iterate in the same order
/// once serialized and deserialized.
#[diagnostic::on_unimplemented(
    message = "a `for` loop over a borrowed `{Self}` cannot resume after a suspension",
    label = "the loop would resume at its position in this collection as read back from the state",
    note = "saga saves the position of a `for` over a borrowed Vec, slice, array, VecDeque, BTreeMap, BTreeSet or String and borrows it again after the suspension; a HashMap or HashSet read back from the state iterates in another order",
    note = "to keep the behaviour, iterate over a saved list of what the loop visits, e.g. `let keys: Vec<_> = map.keys().cloned().collect(); for key in keys {{ let value = &map[&key]; … }}`, or over an owned copy: `for item in collection.clone()`"
)]
pub trait SavedOrder {}

impl<T> SavedOrder for Vec<T> {}
impl<T> SavedOrder for [T] {}
impl<T, const N: usize> SavedOrder for [T; N] {}
impl<T> SavedOrder for std::collections::VecDeque<T> {}
impl<K, V> SavedOrder for std::collections::BTreeMap<K, V> {}
impl<T> SavedOrder for std::collections::BTreeSet<T> {}
impl SavedOrder for String {}
impl SavedOrder for str {}
impl<T: SavedOrder + ?Sized> SavedOrder for Box<T> {}

/// The collection of a `for` loop that saves its position; see [`SavedOrder`].
pub fn ordered<C: SavedOrder + ?Sized>(collection: &C) -> &C {
    collection
}

/// [`ordered`], for a loop that borrows mutably.
pub fn ordered_mut<C: SavedOrder + ?Sized>(collection: &mut C) -> &mut C {
    collection
}

/// An item of a `for` loop, kept across a suspension in its body.
#[diagnostic::on_unimplemented(
    message = "the items of this `for` loop are kept across a suspension, so they must be saved in the saga's state, but `{Self}` cannot be",
    label = "the loop's remaining items are saved at each suspension in its body",
    note = "saga saves the items a `for` loop has still to visit; borrowed items cannot be saved, and a `for` over `&v`, `v.iter()`, `v.iter().enumerate()`, `m.keys()`, … of a local is the only borrowing loop saga resumes (by position)",
    note = "to keep the behaviour, loop by position and borrow inside: `for i in 0..v.len() {{ let item = &v[i]; … }}`, or over owned items: `for item in v.iter().filter(…).cloned().collect::<Vec<_>>()`"
)]
pub trait SagaForItem: Serialize + DeserializeOwned {}

impl<T: Serialize + DeserializeOwned> SagaForItem for T {}

/// Asserts, at the loop's collection, that its items can be saved.
pub fn for_items<T: SagaForItem>(_items: &Vec<T>) {}

/// What a `for` loop over a range (`a..b`, `a..=b`, `a..`) still has to visit, saved in
/// place of the range: a `RangeInclusive` serializes without whether it is exhausted, so
/// its last item would come again after a suspension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RangeRest<T> {
    next: T,
    end: Option<T>,
    inclusive: bool,
    done: bool,
}

/// What a range of a `for` loop counts: the integers and `char`.
pub trait Counter: Copy + PartialOrd {
    /// The next value; only called below a range's end, or for `a..` (which overflows
    /// as the standard `RangeFrom` does).
    fn succ(self) -> Self;
}

macro_rules! counters {
    ($($t:ty)*) => {$(
        impl Counter for $t {
            fn succ(self) -> Self {
                self + 1
            }
        }
    )*};
}
counters!(u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize);

impl Counter for char {
    fn succ(self) -> Self {
        match self {
            '\u{D7FF}' => '\u{E000}',
            // Past `char::MAX` the standard `RangeFrom<char>` panics too (the panic ends
            // the call with an error); staying on `MAX` would loop forever.
            c => char::from_u32(c as u32 + 1).expect("overflow in a `char` range"),
        }
    }
}

impl<T: Counter> From<std::ops::Range<T>> for RangeRest<T> {
    fn from(range: std::ops::Range<T>) -> Self {
        RangeRest {
            next: range.start,
            end: Some(range.end),
            inclusive: false,
            done: false,
        }
    }
}

impl<T: Counter> From<std::ops::RangeInclusive<T>> for RangeRest<T> {
    fn from(range: std::ops::RangeInclusive<T>) -> Self {
        let (start, end) = range.into_inner();
        RangeRest {
            next: start,
            end: Some(end),
            inclusive: true,
            done: false,
        }
    }
}

impl<T: Counter> From<std::ops::RangeFrom<T>> for RangeRest<T> {
    fn from(range: std::ops::RangeFrom<T>) -> Self {
        RangeRest {
            next: range.start,
            end: None,
            inclusive: false,
            done: false,
        }
    }
}

impl<T: Counter> Iterator for RangeRest<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        if self.done {
            return None;
        }
        let value = self.next;
        match self.end {
            Some(end) if self.inclusive => {
                if value > end {
                    self.done = true;
                    return None;
                }
                if value == end {
                    self.done = true;
                } else {
                    self.next = value.succ();
                }
            }
            Some(end) => {
                if value >= end {
                    self.done = true;
                    return None;
                }
                self.next = value.succ();
            }
            None => self.next = value.succ(),
        }
        Some(value)
    }
}

/// The item at `position` of a `for` loop that saves its position.
pub fn item_at<I: IntoIterator>(items: I, position: usize) -> Option<I::Item> {
    items.into_iter().nth(position)
}

/// How the peeled rest of a loop iteration ended: by leaving the loop (with its value),
/// or by going on to the next iteration.
#[derive(Debug)]
pub enum Flow<T> {
    /// `break` out of the loop.
    Break(T),
    /// `continue`, or the end of the iteration.
    Continue,
}

/// The placeholder answer in the copy of a function whose expansion failed: it keeps the
/// code type-checking (so the macro's error is the only one) and never runs.
pub fn unexpanded<R: Suspension>(_request: R) -> R::Output {
    unreachable!("a #[saga_tool] that failed to expand is never called")
}

/// Holds when a `#[saga_prompt]` returns what a prompt returns; the call is placed on the
/// function's return type, where the error belongs.
pub fn prompt_output<O: super::PromptOutput>() {}

/// Holds when a `#[saga_resource]` returns what a resource returns.
pub fn resource_output<O: super::ResourceOutput>() {}

#[cfg(test)]
mod range_tests {
    use super::RangeRest;

    /// Saves and restores the rest at every step, as a suspension in the loop would.
    fn through_tokens<T>(mut rest: RangeRest<T>, limit: usize) -> Vec<T>
    where
        T: super::Counter + serde::Serialize + serde::de::DeserializeOwned,
    {
        let mut seen = Vec::new();
        while let Some(item) = rest.next() {
            seen.push(item);
            let bytes = postcard::to_allocvec(&rest).expect("a range rest serializes");
            rest = postcard::from_bytes(&bytes).expect("and reads back");
            if seen.len() == limit {
                break;
            }
        }
        seen
    }

    #[test]
    #[should_panic(expected = "overflow in a `char` range")]
    fn an_unbounded_char_range_overflows_as_the_standard_one_does() {
        let mut rest = RangeRest::from(char::MAX..);
        let _ = rest.next();
    }

    #[test]
    #[allow(clippy::reversed_empty_ranges)]
    fn ranges_visit_each_item_once_across_saves() {
        assert_eq!(
            through_tokens(RangeRest::from(0..4u8), 10),
            vec![0, 1, 2, 3]
        );
        assert_eq!(
            through_tokens(RangeRest::from(0..=3u8), 10),
            vec![0, 1, 2, 3]
        );
        assert_eq!(
            through_tokens(RangeRest::from(250..=255u8), 10),
            (250..=255).collect::<Vec<u8>>()
        );
        assert_eq!(
            through_tokens(RangeRest::from(5..5i64), 10),
            Vec::<i64>::new()
        );
        assert_eq!(
            through_tokens(RangeRest::from(5..=4i64), 10),
            Vec::<i64>::new()
        );
        assert_eq!(through_tokens(RangeRest::from(7u64..), 3), vec![7, 8, 9]);
        assert_eq!(
            through_tokens(RangeRest::from('\u{D7FE}'..='\u{E001}'), 10),
            ('\u{D7FE}'..='\u{E001}').collect::<Vec<char>>()
        );
    }
}
