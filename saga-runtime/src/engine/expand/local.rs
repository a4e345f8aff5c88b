//! What a saga keeps across a suspension: its locals, saved into the token.
//!
//! A local that cannot be saved must be one error, at the local. The state enum's field
//! is therefore what [`keep`] returns, `<T as SavedLocal<S, M>>::Kept`: for a type that can
//! be saved, exactly one impl applies and the field is a [`Slot`]; for one that cannot,
//! neither impl applies, so the local's error is reported and the field's type is never
//! found, and rustc, having reported it, says nothing more about the state enum. With a
//! single blanket impl rustc would still pick it, name the field `Slot<T>`, and report
//! the state as unsaveable too (two errors for one mistake).

use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::engine::expand::located::{Bind, Locate, Located, No, Root, bound, located};
use crate::engine::identity::slot::Slot;

/// The marker of the impl a saved local uses; the only one that can apply.
#[doc(hidden)]
pub struct Saved;

/// The marker of the impl no type takes: it exists so that a local that cannot be saved
/// matches no impl at all instead of one whose bounds fail (see the module's docs).
#[doc(hidden)]
pub struct NeverSaved;

/// Where the locals are saved: at a suspension (a request awaited by the tool, a
/// `#[saga_fn]` helper that waits). The first parameter of [`SavedLocal`] and
/// [`SavedLoopItem`], so that rustc's help reads "the trait `SavedLocal<ASuspension, _>` is
/// not implemented for `Instant`".
pub struct ASuspension;

/// What saves a call site's locals: a tool's own suspension ([`ASuspension`]), or the kind
/// of an awaited call (a `#[saga_fn]` helper suspends; an ordinary future never does, and
/// its site saves nothing). The expansion's checks are generic over it, so that a local a
/// helper's call keeps is checked at the user's `#[saga_tool]`, as a tool's own are.
pub trait CallSaves {
    /// [`ASuspension`], or the ordinary future's marker, whose locals are never saved.
    type Across;
}

impl CallSaves for ASuspension {
    type Across = ASuspension;
}

/// No type implements it, and none can: it is sealed.
#[doc(hidden)]
pub trait Unsaveable: sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

/// What a local kept across a suspension implements, so that `#[saga_tool]` can save it
/// in the saga's state: every `Serialize + DeserializeOwned` type, and the borrows the
/// macro can make again after the suspension (of a saved local, by the standard
/// accessors). Never implemented by hand; the compile errors about saved locals name it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is kept across a suspension point, so it must be saved in the saga's state",
    label = "this local is still used after a suspension",
    note = "locals that live across `elicit`, `sample`, `list_roots`, `checkpoint` or `join!` are serialized into the requestState token: derive `Serialize` and `Deserialize` for the type when it is your own; a type of another crate that implements neither (`std::time::Instant`, a connection, a file handle) cannot be saved: keep what it is made from instead (a `std::time::SystemTime` for an `Instant`, the URL or path of a connection or a file) and make it again after the suspension, or stop using the local before the suspension; a borrow (`&T`) that saga cannot make again after the suspension (one a function returned, or a method other than the standard accessors such as `.first()`, `.get(..)`, `.as_str()` of a local) cannot be saved: when a `let` that is not `mut` binds it, write the `let`'s type (`let best: &Item = pick_best(&items);`) and saga computes it again after the suspension; otherwise keep an owned value instead (`.cloned()`, `.to_owned()`), or, for a `&mut` (whose copy would not change the original), borrow it again after the suspension, where it is changed"
)]
pub trait SavedLocal<S, M> {
    /// The state enum's field that holds it.
    #[doc(hidden)]
    type Kept;

    /// The local in its field.
    #[doc(hidden)]
    fn kept(self) -> Self::Kept;
}

/// What a local that may hold borrows of other kept locals (its roots) implements, so that
/// `#[saga_tool]` can save it: what [`SavedLocal`] takes, and a value holding borrows that
/// are found again in the roots (see `located`). A trait of its own, used only for the
/// locals the macro sees may hold a borrow, so that every other local keeps
/// [`SavedLocal`]'s two impls: an integer whose type is not inferred yet, or a `Vec` of a
/// type an error left unknown, still matches one impl.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is kept across a suspension point, so it must be saved in the saga's state",
    label = "this local is still used after a suspension",
    note = "locals that live across `elicit`, `sample`, `list_roots`, `checkpoint` or `join!` are serialized into the requestState token: derive `Serialize` and `Deserialize` for the type when it is your own; a borrow kept across a suspension is saved as where it points in another local kept with it (a field, an element of a `Vec`, a map's entry) when it is a `&T` of an owned `T` (or an `Option`, `Vec` or tuple of such, with numbers and `String`s beside them), and found there again; a `&str` into a kept `String` is too when the local's type is written (`let mut best: Option<&str> = None;`); a borrow of a value a function returned is not (keep an owned value: `.cloned()`, `.to_owned()`)"
)]
#[doc(hidden)]
pub trait SavedAmong<S, W, M> {
    /// The state enum's field that holds it.
    type Kept;

    /// The local in its field, saved among `roots` (`local` names it in an error).
    fn kept_among(self, roots: &[Root<'_>], local: &str) -> Self::Kept;
}

/// How the macro asks for a local kept among roots to be saved: as rustc finds it can be
/// ([`AsValue`]: as it is, or as where its borrows point), or as where its borrows point
/// though its type holds a `&str` ([`AsTexts`]: the local's written type says so). A
/// `&str` is also `Deserialize` up to its lifetime, and rustc's selection does not look at
/// lifetimes, so for such a type the two impls of [`AsValue`] would both apply.
#[doc(hidden)]
pub struct AsValue;

/// See [`AsValue`].
#[doc(hidden)]
pub struct AsTexts;

impl<T: Serialize + DeserializeOwned> SavedAmong<ASuspension, AsValue, Saved> for T {
    type Kept = Slot<T>;

    fn kept_among(self, _roots: &[Root<'_>], _local: &str) -> Slot<T> {
        Slot(self)
    }
}

impl<T: Unsaveable> SavedAmong<ASuspension, AsValue, NeverSaved> for T {
    type Kept = Slot<T>;

    fn kept_among(self, _roots: &[Root<'_>], _local: &str) -> Slot<T> {
        Slot(self)
    }
}

/// The marker of the impl a local holding borrows of other kept locals uses: it is saved
/// as where they point (see `located`).
#[doc(hidden)]
pub struct Relocated;

/// Not a value holding a `&str` (see [`AsValue`]): that one is [`AsTexts`]'s.
impl<T: Locate<HoldsText = No>> SavedAmong<ASuspension, AsValue, Relocated> for T {
    type Kept = Located<T::Erased>;

    fn kept_among(self, roots: &[Root<'_>], local: &str) -> Located<T::Erased> {
        located(&self, roots, local)
    }
}

impl<T: Locate> SavedAmong<ASuspension, AsTexts, Relocated> for T {
    type Kept = Located<T::Erased>;

    fn kept_among(self, roots: &[Root<'_>], local: &str) -> Located<T::Erased> {
        located(&self, roots, local)
    }
}

impl<T: Serialize + DeserializeOwned> SavedLocal<ASuspension, Saved> for T {
    type Kept = Slot<T>;

    fn kept(self) -> Slot<T> {
        Slot(self)
    }
}

impl<T: Unsaveable> SavedLocal<ASuspension, NeverSaved> for T {
    type Kept = Slot<T>;

    fn kept(self) -> Slot<T> {
        Slot(self)
    }
}

/// The state enum's field for a local of a site `_site` saves (a tool's suspension, or an
/// awaited call's kind), checked at the local's own span.
#[inline]
pub fn keep<K: CallSaves, T: SavedLocal<K::Across, M>, M>(
    _site: &K,
    local: T,
) -> <T as SavedLocal<K::Across, M>>::Kept {
    local.kept()
}

/// [`keep`] for a local that may hold borrows of `roots`, the locals kept with it that are
/// not `mut` and declared before it, from which it is made (see `located`); `local` is its
/// name, for the error when a borrow is not found among them; `_as` how the macro asks for
/// it to be saved ([`AsValue`], [`AsTexts`]).
#[inline]
pub fn keep_among<K: CallSaves, W, T: SavedAmong<K::Across, W, M>, M>(
    _site: &K,
    local: T,
    roots: &[Root<'_>],
    name: &str,
    _as: &W,
) -> <T as SavedAmong<K::Across, W, M>>::Kept {
    local.kept_among(roots, name)
}

/// An item of a `for` loop, kept across a suspension in its body: the items the loop has
/// still to visit, and the bindings of the one it is at, are saved. Two impls, as for
/// [`SavedLocal`], so that an item that cannot be saved is one error, at the loop.
#[diagnostic::on_unimplemented(
    message = "the items of this `for` loop are kept across a suspension, so they must be saved in the saga's state, but `{Self}` cannot be",
    label = "the loop's remaining items are saved at each suspension in its body",
    note = "saga saves the items a `for` loop has still to visit; borrowed items cannot be saved, except by the loops saga resumes by position: a `for` over a local (or a part of one, `&v[a..b]`) through `&`, `&mut`, `.iter()`, `.iter_mut()`, `.keys()`, `.values()`, `.values_mut()`, `.chars()`, `.bytes()`, `.lines()`, `.split_whitespace()`, `.windows(n)`, `.chunks(n)`, with `.enumerate()`, `.rev()`, `.skip(n)`, `.take(n)`, `.step_by(n)` and `.zip(..)` of another such loop's collection or of a range (`.zip(&prices)`, `.zip(1..)`, `std::iter::zip(&a, &b)`; also `(1..).zip(&items)`) after them, and a `for` over a constant or a static by value (`for word in WORDS`) whose bindings are not `mut`; any other chain of adapters over borrowed data (`.filter(..)`, `.map(..)`, …) is made again after a restore when it reads no `mut` local but the collection it borrows, copies nothing (`collect`, `clone`, `to_vec`), and the loop's bindings are not `mut`",
    note = "to keep the behaviour, loop by position and borrow inside: `for i in 0..v.len() {{ let item = &v[i]; … }}`, or over owned items: `for item in v.iter().filter(…).cloned().collect::<Vec<_>>()`"
)]
pub trait SavedLoopItem<S, M>: Sized {
    /// The state enum's field that holds the items still to visit.
    #[doc(hidden)]
    type Rest;

    /// The items still to visit in their field.
    #[doc(hidden)]
    fn rest(items: Vec<Self>) -> Self::Rest;
}

impl<T: Serialize + DeserializeOwned> SavedLoopItem<ASuspension, Saved> for T {
    type Rest = Slot<Vec<T>>;

    fn rest(items: Vec<T>) -> Slot<Vec<T>> {
        Slot(items)
    }
}

impl<T: Unsaveable> SavedLoopItem<ASuspension, NeverSaved> for T {
    type Rest = Slot<Vec<T>>;

    fn rest(items: Vec<T>) -> Slot<Vec<T>> {
        Slot(items)
    }
}

/// That a loop's items can be saved, as [`for_items`] found: the fields of the item's
/// bindings take their type from it, so that when the items cannot be saved, the bindings
/// (a part of an item each) add no error of their own.
pub struct Items<M>(PhantomData<fn() -> M>);

impl<M> Clone for Items<M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M> Copy for Items<M> {}

/// The field of a binding of type `I` of a loop's item, when the items can be saved
/// (`Self` is then `Saved`; when they cannot, it is unknown, and so is the field). Two
/// impls, told apart by `N`, as for [`SavedLocal`].
#[diagnostic::on_unimplemented(
    message = "`{I}`, a part of this `for` loop's item, is kept across a suspension, so it must be saved in the saga's state",
    label = "this binding is still used after a suspension",
    note = "the loop's items can be saved, but this part of one cannot on its own: derive `Serialize` and `Deserialize` for `{I}`, and if the item's type skips this field (`#[serde(skip)]`), save it there too, or the items the loop has still to visit read it back as its default",
    note = "in rustc's help above, `Saved` stands for the loop's items (which can be saved) and `SavedItemPart<{I}, _>` for this part of one, which cannot"
)]
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
pub trait SavedItemPart<I, N> {
    /// The binding's field.
    type Kept;

    /// The binding in its field.
    fn kept(item: I) -> Self::Kept;
}

// Not listed in the error: the note says what to do.
#[diagnostic::do_not_recommend]
impl<I: Serialize + DeserializeOwned> SavedItemPart<I, Saved> for Saved {
    type Kept = Slot<I>;

    fn kept(item: I) -> Slot<I> {
        Slot(item)
    }
}

#[diagnostic::do_not_recommend]
impl<I: Unsaveable> SavedItemPart<I, NeverSaved> for Saved {
    type Kept = Slot<I>;

    fn kept(item: I) -> Slot<I> {
        Slot(item)
    }
}

/// Asserts, at the loop's collection, that its items can be saved where `_site` saves.
#[inline]
pub fn for_items<K: CallSaves, T: SavedLoopItem<K::Across, M>, M>(
    _site: &K,
    _items: &Vec<T>,
) -> Items<M> {
    Items(PhantomData)
}

/// The state enum's field for a binding of a loop's item: a part of an item, saved as
/// the items are (checked by [`for_items`] once, at the loop's collection).
#[inline]
pub fn keep_item<I, M: SavedItemPart<I, N>, N>(item: I, _items: Items<M>) -> M::Kept {
    M::kept(item)
}

/// The state enum's field for the items a loop has still to visit, where `_site` saves.
#[inline]
pub fn keep_rest<K: CallSaves, T: SavedLoopItem<K::Across, M>, M>(
    _site: &K,
    items: Vec<T>,
) -> <T as SavedLoopItem<K::Across, M>>::Rest {
    T::rest(items)
}

/// A state enum's field, read back as its local.
// Plumbing of the macros' expansions: its impls on public types are not their API.
#[doc(hidden)]
pub trait Restore {
    /// The local it holds.
    type Local;

    /// The local.
    fn restored(self) -> Self::Local;
}

impl<T> Restore for Slot<T> {
    type Local = T;

    fn restored(self) -> T {
        self.0
    }
}

/// A saved local, read back from its field.
///
/// A projection, not a `Slot(x)` pattern, so that the uses of a local that cannot be
/// saved never name the field's type (which would make the state's check fail again).
#[inline]
pub fn restore<K: Restore>(field: K) -> K::Local {
    field.restored()
}

/// A saved local's field that may hold where its borrows point, read back among `roots`
/// (the same locals, restored, that [`keep_among`] was given).
#[doc(hidden)]
pub trait RestoreAmong<'r> {
    /// The local it holds, borrowing from the roots when it is located.
    type Local;

    /// The local.
    fn restored_among(self, roots: &[Root<'r>], local: &str) -> Self::Local;
}

impl<'r, T> RestoreAmong<'r> for Slot<T> {
    type Local = T;

    fn restored_among(self, _roots: &[Root<'r>], _local: &str) -> T {
        self.0
    }
}

impl<'r, E: Bind> RestoreAmong<'r> for Located<E> {
    type Local = E::Bound<'r>;

    fn restored_among(self, roots: &[Root<'r>], local: &str) -> E::Bound<'r> {
        bound(self, roots, local)
    }
}

/// A saved local read back among `roots` (see [`RestoreAmong`]).
#[inline]
pub fn restore_among<'r, K: RestoreAmong<'r>>(
    field: K,
    roots: &[Root<'r>],
    local: &str,
) -> K::Local {
    field.restored_among(roots, local)
}
