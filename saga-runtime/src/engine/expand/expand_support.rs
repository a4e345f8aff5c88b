//! What `#[saga_tool]` expands to calls. Hidden from the docs and not a stable API, but
//! kept small and readable, because a user reading the expansion
//! (`SAGA_MACROS_DEBUG=1`) reads these.

use std::marker::PhantomData;

use serde::{Deserialize, Serialize};

use crate::engine::asks::join_all::JoinAll;
use crate::engine::contract::output::{PromptOutput, ResourceOutput, ToolOutput};
use crate::engine::contract::tool::Step;
// The step's body is polled behind `opaque` (`rewrite::enclose` in the macro).
pub use crate::engine::contract::opaque::opaque;
pub use crate::engine::contract::tool::{args_schema, described};
pub use crate::engine::expand::local::{
    Items, ItemsSaved, Restore, SagaForItem, SagaLocal, for_items, keep, keep_item, keep_rest,
    restore,
};
pub use crate::engine::expand::macro_state::{
    MacroState, StateSlot, cannot_restate, decode, failed, inspected, macro_layout, macro_restate,
    macro_state_json, record_state, resumed, slot_state, start, suspend, traced, undecodable,
};
pub use crate::engine::expand::saga_fn::{
    Exit, FnState, FnStep, FutureKind, Probe, SagaCall, SagaFn, SagaFnKind, Unreachable, ViaFuture,
    ViaSagaFn, kind_marker, kind_of, probe,
};
pub use crate::engine::identity::layout::tracer::{FieldTracer, StateShape};
pub use crate::engine::identity::slot::{Slot, SlotField, trace_slot};
pub use crate::engine::identity::state_enum::{
    StateEnum, StateError, StateReader, StateRender, StateWriter,
};
use crate::engine::kinds::table::Asked;
use crate::engine::round::answers::Answers;
use crate::engine::round::requests::Request;
pub use crate::engine::round::requests::Suspension;

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

/// Whether the step runs in its restating mode (`MacroState::Restate`, handed down to the
/// suspension through the answers): the suspension then states its requests again.
pub fn asking_again(answers: &impl std::borrow::Borrow<Answers>) -> bool {
    answers.borrow().is_restating()
}

/// Ends the transition with the requests of the last round stated again
/// ([`Step::AskAgain`]).
pub fn ask_again<R: Exit>(requests: Vec<Request>) -> R {
    R::asked_again(requests)
}

/// Marks the requests of a round that its suspension can state again from the saved
/// state (restatable), so that the token keeps none of their params.
pub fn restatable(round: &mut [Request], restatable: bool) {
    for request in round {
        request.restatable = restatable;
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

/// The marker of the kind at a call site, typed from the state enum by a function the
/// macro writes per call site.
pub type KindMarker<K> = PhantomData<fn() -> K>;

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
pub fn prompt_output<O: PromptOutput>() {}

/// Holds when a `#[saga_resource]` returns what a resource returns.
pub fn resource_output<O: ResourceOutput>() {}

/// An operand of a formatting macro (`format!`, `write!`, `println!`, …) evaluated before
/// a suspension in the same call and kept across it: `Formatted(operand).keep()` keeps a
/// `&str` as the `String` it points to (a borrow cannot be saved; a `String` formats
/// exactly as the `&str` did, for every format spec), and any other operand as it is.
pub struct Formatted<T>(pub T);

impl Formatted<&str> {
    /// The text, owned: chosen over [`KeepFormatted::keep`] for a `&str`, since method
    /// resolution tries inherent methods first.
    pub fn keep(self) -> String {
        self.0.to_owned()
    }
}

/// [`Formatted::keep`] for any operand other than a `&str`: the operand itself.
pub trait KeepFormatted {
    /// The operand's type.
    type Kept;
    /// The operand.
    fn keep(self) -> Self::Kept;
}

impl<T> KeepFormatted for Formatted<T> {
    type Kept = T;
    fn keep(self) -> T {
        self.0
    }
}

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
