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
pub use crate::engine::contract::tool::described;
pub use crate::engine::expand::local::{
    ASuspension, AsTexts, AsValue, CallSaves, Items, Relocated, Restore, RestoreAmong, SavedAmong,
    SavedItemPart, SavedLocal, SavedLoopItem, for_items, keep, keep_among, keep_item, keep_rest,
    restore, restore_among,
};
pub use crate::engine::expand::located::{Located, Root, literals, root};
pub use crate::engine::expand::macro_state::{
    MacroState, StateSlot, cannot_restate, decode, failed, inspected, macro_layout, macro_restate,
    macro_state_json, record_state, resumed, slot_state, start, suspend, traced, undecodable,
};
use crate::engine::expand::refusal::other_constants;
pub use crate::engine::expand::saga_fn::{
    Exit, FnState, FnStep, FutureKind, NoSuspension, Probe, RootAt, SagaCall, SagaFn, SagaFnKind,
    Unreachable, ViaFuture, ViaSagaFn, kind_marker, kind_of, probe,
};
pub use crate::engine::forms::json_schema::args_schema;
use crate::engine::identity::fnv::Fnv;
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

/// A collection a `for` loop may borrow across a suspension: the loop saves where it is
/// (its [`Cursor`]), and after the suspension borrows the collection read back from the
/// state again and goes on from there. A collection that iterates in the same order once
/// serialized and deserialized saves its position; a hash-ordered one, whose order
/// differs between two maps with the same entries, saves the keys it has still to visit,
/// in the order the loop as written visits them.
#[diagnostic::on_unimplemented(
    message = "a `for` loop over a borrowed `{Self}` cannot resume after a suspension",
    label = "the loop would resume at its position in this collection as read back from the state",
    note = "saga saves the position of a `for` over a borrowed Vec, slice, array, VecDeque, BTreeMap, BTreeSet or String, and the keys still to visit of a borrowed HashMap or HashSet (whose keys must be `Clone`), and borrows the collection again after the suspension",
    note = "to keep the behaviour, iterate over a saved list of what the loop visits, e.g. `let keys: Vec<_> = collection.keys().cloned().collect(); for key in keys {{ let value = &collection[&key]; … }}`, or over an owned copy: `for item in collection.clone()`"
)]
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
pub trait SavedOrder {
    /// Where a loop over it is: a position, or the keys still to visit.
    type Cursor: Cursor;

    /// Where a loop over it starts.
    fn cursor(&self) -> Self::Cursor;
}

macro_rules! positioned {
    ($([$($generics:tt)*] $collection:ty;)*) => {$(
        impl<$($generics)*> SavedOrder for $collection {
            type Cursor = usize;

            fn cursor(&self) -> usize {
                0
            }
        }
    )*};
}

positioned! {
    [T] Vec<T>;
    [T] [T];
    [T, const N: usize] [T; N];
    [T] std::collections::VecDeque<T>;
    [K, V] std::collections::BTreeMap<K, V>;
    [T] std::collections::BTreeSet<T>;
    [] String;
    [] str;
    // Its tool uses, through `turn.tool_uses()` or `&turn`: an agent loop's body asks
    // (`elicit`) between a model's tool use and its execution.
    [] crate::engine::kinds::tool_sample::ask::Turn;
}

impl<T: SavedOrder + ?Sized> SavedOrder for Box<T> {
    type Cursor = T::Cursor;

    fn cursor(&self) -> T::Cursor {
        (**self).cursor()
    }
}

impl<K: Clone, V, S> SavedOrder for std::collections::HashMap<K, V, S> {
    type Cursor = KeysLeft<K>;

    fn cursor(&self) -> KeysLeft<K> {
        KeysLeft(self.keys().cloned().collect())
    }
}

impl<K: Clone, S> SavedOrder for std::collections::HashSet<K, S> {
    type Cursor = KeysLeft<K>;

    fn cursor(&self) -> KeysLeft<K> {
        KeysLeft(self.iter().cloned().collect())
    }
}

/// Where a `for` loop over a borrowed collection is, saved in place of its iterator.
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
pub trait Cursor {
    /// What finds the loop's current item: a position, or a key.
    type At;

    /// The current item's place, and the cursor moved past it.
    fn advance(&mut self) -> Self::At;
}

impl Cursor for usize {
    type At = usize;

    fn advance(&mut self) -> usize {
        let at = *self;
        *self += 1;
        at
    }
}

/// The keys a `for` loop over a borrowed hash-ordered collection has still to visit, in
/// the order the collection gave them when the loop began.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct KeysLeft<K>(std::collections::VecDeque<K>);

impl<K> Cursor for KeysLeft<K> {
    type At = Option<K>;

    fn advance(&mut self) -> Option<K> {
        self.0.pop_front()
    }
}

/// The collection of a `for` loop that saves where it is; see [`SavedOrder`].
pub fn ordered<C: SavedOrder + ?Sized>(collection: &C) -> &C {
    collection
}

/// [`ordered`], for a loop that borrows mutably.
pub fn ordered_mut<C: SavedOrder + ?Sized>(collection: &mut C) -> &mut C {
    collection
}

/// The collection a `for` loop zips with (`a.iter().zip(&b)`), borrowed for the whole
/// loop as the loop as written borrows it. That it is [`Zipped`] is checked by the
/// expansion's own `saga_zips_by_position`, so that the error's note shows the user's
/// `#[saga_tool]`, not this file.
pub fn zipped<C: ?Sized>(collection: &C) -> &C {
    collection
}

/// [`zipped`], for a collection zipped mutably (`a.iter().zip(b.iter_mut())`).
pub fn zipped_mut<C: ?Sized>(collection: &mut C) -> &mut C {
    collection
}

/// A collection a `for` loop may zip with across a suspension: the loop resumes at its
/// position, and the zipped item is the one at that position of the collection read back
/// from the state, so the collection must iterate in the same order once read back.
#[diagnostic::on_unimplemented(
    message = "a `for` loop that zips with a borrowed `{Self}` cannot resume after a suspension",
    label = "the loop resumes at its position, and the item zipped with it is found again at that position of this collection as read back from the state",
    note = "a zipped collection must keep its order once saved and read back: a Vec, slice, array, VecDeque, BTreeMap, BTreeSet or String; a HashMap's or HashSet's order differs between two maps with the same entries",
    note = "to keep the behaviour, zip with a saved list of what the loop visits: `let pairs: Vec<_> = map.iter().map(|(k, v)| (k.clone(), v.clone())).collect();` before the loop, then `.zip(&pairs)`"
)]
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
pub trait Zipped {}

#[diagnostic::do_not_recommend]
impl<C: SavedOrder<Cursor = usize> + ?Sized> Zipped for C {}

/// Where a `for` loop over `collection` starts.
pub fn cursor<C: SavedOrder + ?Sized>(collection: &C) -> C::Cursor {
    collection.cursor()
}

/// The place of a `for` loop's current item, and the cursor moved past it.
pub fn advance<C: Cursor>(cursor: &mut C) -> C::At {
    cursor.advance()
}

/// A `&'static str` chosen among literals, kept across a suspension: its text is saved,
/// and the continuation takes back the very literal of that text among those the local
/// may hold, so that it is the same `&'static str` again (nothing leaked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal(std::borrow::Cow<'static, str>);

impl Literal {
    /// The literal a local holds, to save.
    pub fn of(text: &'static str) -> Literal {
        Literal(std::borrow::Cow::Borrowed(text))
    }

    /// The literal of the saved text among `choices`, the values the local may hold.
    ///
    /// # Panics
    ///
    /// Unwinds with `OtherConstants` (see `refusal`) when none has that text: a state sealed by a build
    /// whose literals differ (the call is refused; a token is never read as another
    /// literal).
    pub fn pick(self, choices: &[&'static str]) -> &'static str {
        choices
            .iter()
            .find(|choice| **choice == self.0)
            .copied()
            .unwrap_or_else(|| literal_gone(&self.0))
    }
}

#[cold]
fn literal_gone(text: &str) -> ! {
    other_constants(format!(
        "the saga's state holds the text {text:?}, which is none of the literals this build \
         chooses among: it was saved by a build with other literals"
    ))
}

/// A reference chosen among constants (`let bank: &[&str] = match level { Level::Easy =>
/// EASY, _ => HARD };`), kept across a suspension: a fingerprint of the value it points
/// to is saved (`Fnv::of_postcard`: its postcard bytes, which keep every bit of a float), and
/// the continuation takes back the constant, named again among those the local may hold,
/// whose value has it. A build whose constants differ finds none and refuses the token
/// (`OtherConstants` (see `refusal`)).
///
/// The value is what tells the constants apart, so it must not change while the program
/// runs: the pointee is `Copy` ([`ChosenValue`]), which rules out interior mutability
/// (a `static` atomic or lock would otherwise be found again by its current value). Two
/// constants of one value are the same value, whichever is taken; two that differ only in
/// what their `Serialize` leaves out (`#[serde(skip)]`) are taken for each other.
// Plumbing of the macros' expansions.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConstantChoice(u64);

impl ConstantChoice {
    /// The choice a local holds, to save: its [`ChoiceProbe`]'s kind, which only a
    /// reference to a [`ChosenValue`] has ([`ChoosableKind`]).
    pub fn of<K: ChoosableKind>(kind: K) -> ConstantChoice {
        ConstantChoice(kind.into_fingerprint())
    }

    /// Whether a candidate with this fingerprint is the value saved.
    pub fn is(&self, fingerprint: u64) -> bool {
        fingerprint == self.0
    }

    /// None of the candidates is.
    ///
    /// # Panics
    ///
    /// Unwinds with `OtherConstants` (see `refusal`): a state sealed by a build whose constants differ
    /// (the call is refused; a token is never read as another constant).
    #[cold]
    pub fn gone(self) -> ! {
        other_constants(
            "the saga's state holds a reference to a constant whose value none of the \
             constants this build chooses among has: it was saved by a build with other \
             constants"
                .to_owned(),
        )
    }
}

/// A local chosen among constants, or one of its candidates, sorted by autoref
/// ([`ChoiceKindOf`] for a reference to a [`ChosenValue`], [`NoChoiceKind`] otherwise)
/// into a kind: the keep requires [`ChoosableKind`] of it, so that a type that cannot be
/// chosen is reported once, at the local, with what to do; the restore only reads its
/// fingerprint (0 for [`NotAValue`]), so nothing is reported at the attribute.
#[doc(hidden)]
pub struct ChoiceProbe<'a, T>(pub &'a T);

/// A reference to a [`ChosenValue`], with its value's fingerprint.
#[doc(hidden)]
pub struct AValue(u64);

/// A reference to anything else.
#[doc(hidden)]
pub struct NotAValue;

impl AValue {
    /// The value's fingerprint.
    pub fn fingerprint(&self) -> u64 {
        self.0
    }
}

impl NotAValue {
    /// No fingerprint: 0 (never checked: the keep refuses the type).
    pub fn fingerprint(&self) -> u64 {
        0
    }
}

/// [`ChoiceProbe`] of a reference to a [`ChosenValue`].
#[doc(hidden)]
pub trait ChoiceKindOf {
    /// Its kind.
    fn choice_kind(&self) -> AValue;
}

impl<T: ChosenValue + ?Sized> ChoiceKindOf for &ChoiceProbe<'_, &T> {
    fn choice_kind(&self) -> AValue {
        AValue(Fnv::of_postcard(*self.0))
    }
}

/// [`ChoiceProbe`] of anything else.
#[doc(hidden)]
pub trait NoChoiceKind {
    /// Its kind.
    fn choice_kind(&self) -> NotAValue;
}

impl<T> NoChoiceKind for ChoiceProbe<'_, T> {
    fn choice_kind(&self) -> NotAValue {
        NotAValue
    }
}

/// The kind of a local that can be chosen among constants: [`AValue`] only.
#[diagnostic::on_unimplemented(
    message = "a reference chosen among constants is kept across a suspension by the value it points to, so that value must be `Copy` and `Serialize`, but it is not both",
    label = "chosen among constants here",
    note = "saga saves a fingerprint of the value the local points to, and after the suspension takes back the constant with that value; `Copy` rules out interior mutability (a `static` atomic or lock would be found by its current value)",
    note = "derive them for the constants' type (`#[derive(Clone, Copy, Serialize)]`); for an array longer than 32 items, which serde does not serialize, write the local's type as a slice (`&[T]`)"
)]
#[doc(hidden)]
pub trait ChoosableKind {
    /// The fingerprint to save.
    fn into_fingerprint(self) -> u64;
}

impl ChoosableKind for AValue {
    fn into_fingerprint(self) -> u64 {
        self.0
    }
}

/// What a local chosen among constants may point to: a `Copy` value that is `Serialize`
/// (or a slice of such, or a `str`). `Copy` rules out interior mutability, so the value
/// that tells the constants apart cannot change while the program runs.
// Plumbing of the macros' expansions: its impls are not its API.
#[doc(hidden)]
pub trait ChosenValue: Serialize {}

impl<T: Copy + Serialize> ChosenValue for T {}

impl<T: Copy + Serialize> ChosenValue for [T] {}

impl ChosenValue for str {}

impl Serialize for Literal {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Literal {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|text| Literal(std::borrow::Cow::Owned(text)))
    }
}

/// Marks a borrow made again after a suspension (the value itself): what only it reads
/// is told apart from what the continuation reads itself.
#[inline(always)]
pub fn again<T>(value: T) -> T {
    value
}

/// The value of an accessor (`.get(..)`, `.first()`, `.as_str()`, …) that a continuation
/// calls again to borrow again what it borrowed before the suspension: it must be a
/// borrow, which the owner, borrowed up to the suspension, could not change. A value the
/// method computed is refused here, where the user's call is. (The bound is on a marker,
/// not on the value, so that rustc does not suggest borrowing the call instead.)
#[inline(always)]
pub fn borrowed<T>(value: T) -> T
where
    Gives: Borrowed<T>,
{
    value
}

/// What a `for` over `x.tool_uses()` gives, checked to be a borrow (of `x`, as saga's
/// `Turn::tool_uses` gives its slice): the loop calls it again on `x` read back after a
/// suspension, which keeps the behaviour only for a getter. A method that computes its
/// items is refused here, at the user's call, with the fix; what it gave is then an error
/// type, so that nothing else is reported.
pub fn borrowed_items<'a, G: BorrowedItems<'a>>(got: G) -> &'a G::Collection {
    got.collection()
}

/// A borrow of a collection: see [`borrowed_items`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a borrow, so saga cannot call this method again after the suspension",
    label = "a `for` over `x.tool_uses()` resumes by calling it again on `x` read back from the state",
    note = "that keeps the behaviour only for a getter that gives a borrow of `x` (as saga's `Turn::tool_uses` gives its slice); this method computes its items, which it could give otherwise, or in another order, when called again",
    note = "to keep the behaviour, own its items where they are made, so that the loop saves those it has still to visit: `for item in x.tool_uses().to_owned()`"
)]
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
pub trait BorrowedItems<'a> {
    /// The collection borrowed.
    type Collection: ?Sized;

    /// The borrow.
    fn collection(self) -> &'a Self::Collection;
}

impl<'a, C: ?Sized> BorrowedItems<'a> for &'a C {
    type Collection = C;

    fn collection(self) -> &'a C {
        self
    }
}

/// The marker of [`borrowed`]'s check.
pub struct Gives;

/// What an accessor gives that is a borrow: see [`borrowed`].
#[diagnostic::on_unimplemented(
    message = "`{T}` is not a borrow, so saga cannot make this call again after the suspension",
    label = "saga calls this again after the suspension, to borrow again what it gave before",
    note = "saga makes a borrow kept across a suspension again by calling the accessor that made it (`.get(..)`, `.first()`, `.as_str()`, …) again; that keeps the behaviour only for a borrow, which its owner, borrowed up to the suspension, cannot change, but this method computed a value, which the owner could since give otherwise",
    note = "to keep the value it gave, own it where it is made, so that it is saved as it was: `.to_owned()` after the call"
)]
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
pub trait Borrowed<T> {}

impl<T: ?Sized> Borrowed<&T> for Gives {}
impl<T: ?Sized> Borrowed<&mut T> for Gives {}
impl<T: ?Sized> Borrowed<Option<&T>> for Gives {}
impl<T: ?Sized> Borrowed<Option<&mut T>> for Gives {}
impl<A: ?Sized, B: ?Sized> Borrowed<Option<(&A, &B)>> for Gives {}
impl<A: ?Sized, B: ?Sized> Borrowed<Option<(&mut A, &mut B)>> for Gives {}
impl<A: ?Sized, B: ?Sized> Borrowed<Option<(&A, &mut B)>> for Gives {}

/// Uses borrows up to a suspension, where the continuation borrows their places again:
/// rustc then refuses a change to those places before the suspension, as it would in the
/// function as written.
#[inline(always)]
pub fn keep_alive<T: ?Sized>(_borrow: &T) {}
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
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
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

/// The item of a `for` loop over a borrowed collection at `at` (its [`Cursor::At`]).
///
/// The bound is on `at`, the cursor's: an iterator that cannot be searched by it is
/// reported as the loop's collection, not as a method call to remove.
pub fn item_at<P: Finds<I>, I>(at: &P, items: I) -> Option<P::Item> {
    at.find_in(items)
}

/// The item at `at` of a `for` loop over a constant or a static by value (`for (label,
/// question) in STEPS`): the constant is named again for each item, as the loop as
/// written names it once, and only the position is saved. `seen` keeps the item's
/// fingerprint (`fingerprint`, see [`Fingerprint`]), which [`constant_item_again`] checks
/// after a suspension. `None` past the end.
pub fn constant_item_at<I: IntoIterator>(
    at: &usize,
    seen: &mut u64,
    items: I,
    fingerprint: impl FnOnce(&I::Item) -> u64,
) -> Option<I::Item> {
    let item = items.into_iter().nth(*at)?;
    *seen = fingerprint(&item);
    Some(item)
}

/// [`constant_item_at`] after a suspension, for the item's bindings the continuation reads:
/// bound again from the constant rather than saved (often `&'static str`, which cannot be
/// read back from a token). The bound is on the item ([`ConstantItem`]): only a `Copy`
/// item is the same value when made again (no interior mutability to have changed it, no
/// `Drop` to run again), and its fingerprint must be the one `seen` kept.
///
/// # Panics
///
/// Unwinds with `OtherConstants` (see `refusal`) when the item at `at` is not the one the saga suspended
/// with: a build whose constant changed (an item inserted, removed or edited before it)
/// read the token. The call is refused; the item is never read as another.
pub fn constant_item_again<I: IntoIterator>(at: &usize, seen: &mut u64, items: I) -> Option<I::Item>
where
    I::Item: ConstantItem,
{
    let item = items.into_iter().nth(*at);
    if item.as_ref().map(Fnv::of_json) != Some(*seen) {
        constant_changed(*at)
    }
    item
}

/// After a suspension in a `for` loop over a constant whose item is not bound again (the
/// continuation does not read it, or reads only what it saved of it): the item at the
/// loop's position must still be the one the saga suspended with, or the loop would go on
/// from a position in another sequence, visiting an item twice or skipping one. Items
/// that cannot be fingerprinted (not `Serialize`) are not told apart.
///
/// # Panics
///
/// As [`constant_item_again`]: a build whose constant changed there read the token.
pub fn constant_item_check<I: IntoIterator>(
    at: &usize,
    seen: &mut u64,
    items: I,
    fingerprint: impl FnOnce(&I::Item) -> u64,
) {
    match items.into_iter().nth(*at) {
        Some(item) if fingerprint(&item) == *seen => {}
        _ => constant_changed(*at),
    }
}

#[cold]
fn constant_changed(at: usize) -> ! {
    other_constants(format!(
        "item {at} of the constant a `for` loop walks is not the one this saga suspended \
         with: it was saved by a build whose constant differs"
    ))
}

/// An item of a `for` loop over a constant by value that is bound again from the constant
/// after a suspension rather than saved ([`constant_item_again`]): a `Copy` one, whose
/// fingerprint can be taken (`Serialize`).
#[diagnostic::on_unimplemented(
    message = "a `for` over a constant by value resumes by naming the constant again, so its items read after a suspension must be `Copy` and `Serialize`, but `{Self}` is not both",
    label = "its items are `{Self}`",
    note = "after a suspension saga binds the loop's item again from the constant instead of saving it, and checks that it is the item the saga suspended with (by its serialized form, so that a build with another constant is refused); that gives the same value only for a `Copy` item (without interior mutability, and without a `Drop` that would run again)",
    note = "to keep the behaviour and save the items in the saga's state instead (they must then be serializable), loop over a `Vec` of them: `for item in Vec::from(CONSTANT)`"
)]
// Plumbing of the macros' expansions: its impl on every such type is not its API.
#[doc(hidden)]
pub trait ConstantItem: Serialize {}

impl<T: Copy + Serialize> ConstantItem for T {}

/// A `for` loop's item over a constant, fingerprinted when it can be (`Serialize`: its
/// JSON text's FNV hash, stable across builds) and 0 otherwise: an item that cannot be is
/// never bound again ([`ConstantItem`]), so its fingerprint is never checked. Picked by
/// autoref at the expansion, where the item's type is known.
#[doc(hidden)]
pub struct Fingerprint<'a, T>(pub &'a T);

/// [`Fingerprint`] of a `Serialize` item.
#[doc(hidden)]
pub trait FingerprintOf {
    /// The item's fingerprint.
    fn fingerprint(&self) -> u64;
}

impl<T: Serialize> FingerprintOf for &Fingerprint<'_, T> {
    fn fingerprint(&self) -> u64 {
        Fnv::of_json(self.0)
    }
}

/// [`Fingerprint`] of any other item.
#[doc(hidden)]
pub trait NoFingerprint {
    /// No fingerprint: 0.
    fn fingerprint(&self) -> u64;
}

impl<T> NoFingerprint for Fingerprint<'_, T> {
    fn fingerprint(&self) -> u64 {
        0
    }
}

/// Where a `for` loop over a borrowed collection is, finding its item among `I`.
#[diagnostic::on_unimplemented(
    message = "a `for` loop over `{I}` cannot resume after a suspension",
    label = "a hash-ordered collection resumes by the keys still to visit, which this loop's iterator cannot be searched by",
    note = "a `for` over a borrowed HashMap or HashSet resumes by key: iterate over `&map`, `&mut map`, `map.iter()`, `map.iter_mut()`, `map.keys()` or `&set`, with no adapter (for the values, `for (_, value) in &map`; for a count, a `let mut i = 0;` incremented in the body)"
)]
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
pub trait Finds<I> {
    /// The loop's item.
    type Item;

    /// The item here; `None` past the end.
    fn find_in(&self, items: I) -> Option<Self::Item>;
}

#[diagnostic::do_not_recommend]
impl<P, I: ItemAt<P>> Finds<I> for P {
    type Item = I::Item;

    fn find_in(&self, items: I) -> Option<I::Item> {
        items.item_at(self)
    }
}

/// The items of a `for` loop over a borrowed collection, found by where the loop is.
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
pub trait ItemAt<P> {
    /// The loop's item.
    type Item;

    /// The item at `at`; `None` past the end.
    fn item_at(self, at: &P) -> Option<Self::Item>;
}

impl<I: IntoIterator> ItemAt<usize> for I {
    type Item = I::Item;

    fn item_at(self, at: &usize) -> Option<I::Item> {
        self.into_iter().nth(*at)
    }
}

/// A key the loop saved that its collection no longer holds: the collection is borrowed
/// for the whole loop, and read back from the very state the key was saved with.
#[cold]
fn key_gone() -> ! {
    panic!("a `for` loop's hash-ordered collection lost a key it had still to visit")
}

/// The item of key `at` found by walking `items`: an iterator does not look up by key.
fn find_key<'a, K: Eq + 'a, T>(
    items: impl Iterator<Item = T>,
    key_of: impl Fn(&T) -> &'a K,
    at: &Option<K>,
) -> Option<T> {
    let key = at.as_ref()?;
    Some(
        { items }
            .find(|item| key_of(item) == key)
            .unwrap_or_else(|| key_gone()),
    )
}

impl<'a, K, V, S> ItemAt<Option<K>> for &'a std::collections::HashMap<K, V, S>
where
    K: Eq + std::hash::Hash,
    S: std::hash::BuildHasher,
{
    type Item = (&'a K, &'a V);

    fn item_at(self, at: &Option<K>) -> Option<Self::Item> {
        let key = at.as_ref()?;
        Some(self.get_key_value(key).unwrap_or_else(|| key_gone()))
    }
}

impl<'a, K: Eq, V, S> ItemAt<Option<K>> for &'a mut std::collections::HashMap<K, V, S> {
    type Item = (&'a K, &'a mut V);

    fn item_at(self, at: &Option<K>) -> Option<Self::Item> {
        find_key(self.iter_mut(), |(key, _)| *key, at)
    }
}

impl<'a, K: Eq, V> ItemAt<Option<K>> for std::collections::hash_map::Iter<'a, K, V> {
    type Item = (&'a K, &'a V);

    fn item_at(self, at: &Option<K>) -> Option<Self::Item> {
        find_key(self, |(key, _)| *key, at)
    }
}

impl<'a, K: Eq, V> ItemAt<Option<K>> for std::collections::hash_map::IterMut<'a, K, V> {
    type Item = (&'a K, &'a mut V);

    fn item_at(self, at: &Option<K>) -> Option<Self::Item> {
        find_key(self, |(key, _)| *key, at)
    }
}

impl<'a, K: Eq, V> ItemAt<Option<K>> for std::collections::hash_map::Keys<'a, K, V> {
    type Item = &'a K;

    fn item_at(self, at: &Option<K>) -> Option<Self::Item> {
        find_key(self, |key| *key, at)
    }
}

impl<'a, K, S> ItemAt<Option<K>> for &'a std::collections::HashSet<K, S>
where
    K: Eq + std::hash::Hash,
    S: std::hash::BuildHasher,
{
    type Item = &'a K;

    fn item_at(self, at: &Option<K>) -> Option<Self::Item> {
        let key = at.as_ref()?;
        Some(self.get(key).unwrap_or_else(|| key_gone()))
    }
}

impl<'a, K: Eq> ItemAt<Option<K>> for std::collections::hash_set::Iter<'a, K> {
    type Item = &'a K;

    fn item_at(self, at: &Option<K>) -> Option<Self::Item> {
        find_key(self, |key| *key, at)
    }
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
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
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

    /// A chosen constant is told apart by its postcard bytes: JSON would write every NaN
    /// and infinity as `null`, and take a range of infinities for one of NaNs.
    #[test]
    fn a_choice_tells_apart_values_one_encoding_would_merge() {
        #[allow(unused_imports)]
        use super::{ChoiceKindOf as _, ChoiceProbe, ConstantChoice, NoChoiceKind as _};
        let of = |value: &[f64]| (&&ChoiceProbe(&value)).choice_kind().fingerprint();
        let infinities: &[f64] = &[f64::NEG_INFINITY, f64::INFINITY];
        let nans: &[f64] = &[f64::NAN, f64::NAN];
        assert_eq!(
            serde_json::to_string(infinities).ok(),
            serde_json::to_string(nans).ok()
        );
        assert_ne!(of(infinities), of(nans));
        assert_eq!(of(infinities), of(&[f64::NEG_INFINITY, f64::INFINITY]));
        // Values postcard does not encode (a sequence of unknown length) are told apart
        // too: by their JSON, not all alike as an empty encoding.
        #[derive(Clone, Copy)]
        struct Unsized(u32);
        impl serde::Serialize for Unsized {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeSeq as _;
                let mut seq = serializer.serialize_seq(None)?;
                seq.serialize_element(&self.0)?;
                seq.end()
            }
        }
        assert!(postcard::to_allocvec(&Unsized(1)).is_err());
        let unsized_of = |value: &Unsized| (&&ChoiceProbe(&value)).choice_kind().fingerprint();
        assert_ne!(unsized_of(&Unsized(1)), unsized_of(&Unsized(2)));
        // What the keep saves is what the restore finds.
        let kept = ConstantChoice::of((&&ChoiceProbe(&infinities)).choice_kind());
        assert!(kept.is(of(infinities)) && !kept.is(of(nans)));
    }
}
