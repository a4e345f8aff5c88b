//! Borrows kept as where they point: what `#[saga_tool]` saves of a local that holds
//! borrows of the saga's other kept locals, built up over statements (`best = Some(f)` in
//! a loop over `&flats`, `picked.push(m)` in nested loops, a `Vec<(&Draft, u32)>`).
//! Nothing of what such a local borrows is saved twice: it is saved as where each borrow
//! points, the kept local it points into (a root) and the path to the part there, found by
//! walking the root through its own `Serialize` (`walk`). After a restore each borrow is
//! made again at the same path in the restored root, and the part found there must be of
//! the same type and serialize to the same fingerprint, or the state is refused (never read
//! as another value: a `HashMap` walked in another order, a build whose roots differ).
//!
//! Why this is sound. A borrow found again points into a root the continuation holds
//! borrowed, shared, for as long as the local lives (the roots' lifetime is the borrow's),
//! and only at a part the walk believes is a real part of the root (see `walk`): one in the
//! root's own bytes, or an element serde's own impl of a standard collection hands out
//! where it is stored. A part that is not found is not guessed: the suspension fails with
//! an error naming the local.
//!
//! What is found this way is decided by type ([`Locate`]): a shared reference to an owned
//! value (`&T`, `&[T]`), a `&str` in a kept `String` (the whole text or a part of it),
//! and `Option`s, `Vec`s and pairs and triples of them, with numbers, `bool`, `char` and
//! `String`s beside them. A type that holds no borrow is saved as it is, as before. A
//! `&str` is also `Deserialize`, so the type alone cannot tell whether a `Vec<&str>` wants
//! to be saved as it is (and fail for its lifetime) or as where it points: the macro
//! decides, by the local's written type (`AsTexts` in `local`).

mod walk;

use std::any::TypeId;
use std::marker::PhantomData;

use serde::de::{DeserializeOwned, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use crate::engine::expand::refusal::refuse_other_value;
use crate::engine::identity::fnv::Fnv;
use crate::engine::identity::slot::SlotField;
use walk::{Part, Target, Walkable};

/// Yes, at the type level: the value holds a borrow.
#[doc(hidden)]
pub struct Yes;

/// No, at the type level: the value holds no borrow.
#[doc(hidden)]
pub struct No;

/// Whether either of a pair of [`Yes`]/[`No`] is `Yes`.
#[doc(hidden)]
pub trait Either {
    type Out;
}

impl<X> Either for (Yes, X) {
    type Out = Yes;
}

impl Either for (No, Yes) {
    type Out = Yes;
}

impl Either for (No, No) {
    type Out = No;
}

/// A value kept as where its borrows point (see the module): the types `#[saga_tool]`
/// finds again after a restore, each of which holds a borrow. Never implemented by hand.
///
/// No owned type implements it, not even inside an `Option`: an integer whose type is not
/// yet inferred must match one impl of `SavedLocal` only.
#[doc(hidden)]
pub trait Locate {
    /// The type without its lifetimes, which the state's field names and which makes the
    /// value again ([`Bind`]).
    type Erased: Bind;
    /// [`Yes`] when it holds a `&str`: such a value is located only when the macro says so
    /// (`AsTexts`), since it also satisfies `Deserialize` up to its lifetime.
    type HoldsText;

    /// Records the value's parts, and the targets of its borrows.
    fn find(&self, finder: &mut Finder);
}

/// A part of a tuple kept as where its borrows point: a [`Locate`] value, or an owned one
/// beside it (`(&Draft, u32)`).
#[doc(hidden)]
pub trait TuplePart {
    /// [`Yes`] when it holds a borrow: a tuple holds one when a part does.
    type Borrows;
    /// As [`Locate::HoldsText`].
    type HoldsText;
    /// As [`Locate::Erased`].
    type Erased: Bind;

    /// As [`Locate::find`].
    fn find_part(&self, finder: &mut Finder);
}

impl<V: Locate> TuplePart for V {
    type Borrows = Yes;
    type HoldsText = V::HoldsText;
    type Erased = V::Erased;

    fn find_part(&self, finder: &mut Finder) {
        self.find(finder);
    }
}

/// A type without lifetimes that makes again, from what [`Locate::find`] recorded, the value
/// of the type it stands for, its borrows pointing into `roots` ([`Binder`]).
#[doc(hidden)]
pub trait Bind {
    /// The value made again, its borrows living as long as the roots are borrowed.
    type Bound<'r>;

    /// Makes it again, or says why it cannot.
    fn bind<'r>(binder: &mut Binder<'_, 'r>) -> Result<Self::Bound<'r>, String>;
}

/// The lifetime-free stand-in of `&T` in [`Locate::Erased`].
#[doc(hidden)]
pub struct Ref<T>(PhantomData<fn() -> T>);

/// The lifetime-free stand-in of `&[T]` in [`Locate::Erased`].
#[doc(hidden)]
pub struct SliceOf<T>(PhantomData<fn() -> T>);

impl<T: Serialize + DeserializeOwned + 'static> Locate for &T {
    type Erased = Ref<T>;
    type HoldsText = No;

    fn find(&self, finder: &mut Finder) {
        finder.target(*self);
    }
}

impl<T: Serialize + DeserializeOwned + 'static> Bind for Ref<T> {
    type Bound<'r> = &'r T;

    fn bind<'r>(binder: &mut Binder<'_, 'r>) -> Result<&'r T, String> {
        binder.target::<T>()
    }
}

impl<T: Serialize + DeserializeOwned + 'static> Locate for &[T] {
    type Erased = SliceOf<T>;
    type HoldsText = No;

    fn find(&self, finder: &mut Finder) {
        finder.slice(self);
    }
}

impl<T: Serialize + DeserializeOwned + 'static> Bind for SliceOf<T> {
    type Bound<'r> = &'r [T];

    fn bind<'r>(binder: &mut Binder<'_, 'r>) -> Result<&'r [T], String> {
        binder.slice::<T>()
    }
}

/// The lifetime-free stand-in of `&str` in [`Locate::Erased`].
#[doc(hidden)]
pub struct StrRef;

/// A `&str` is found in the `String` it is a part of (the whole text, or a part of it
/// between two characters), at the same bytes.
impl Locate for &str {
    type Erased = StrRef;
    type HoldsText = Yes;

    fn find(&self, finder: &mut Finder) {
        finder.text(self);
    }
}

impl Bind for StrRef {
    type Bound<'r> = &'r str;

    fn bind<'r>(binder: &mut Binder<'_, 'r>) -> Result<&'r str, String> {
        binder.text()
    }
}

impl<V: Locate> Locate for Option<V> {
    type Erased = Option<V::Erased>;
    type HoldsText = V::HoldsText;

    fn find(&self, finder: &mut Finder) {
        finder.count(usize::from(self.is_some()));
        if let Some(value) = self {
            value.find(finder);
        }
    }
}

impl<E: Bind> Bind for Option<E> {
    type Bound<'r> = Option<E::Bound<'r>>;

    fn bind<'r>(binder: &mut Binder<'_, 'r>) -> Result<Self::Bound<'r>, String> {
        match binder.count()? {
            0 => Ok(None),
            1 => E::bind(binder).map(Some),
            _ => Err("an option that is neither some nor none".to_owned()),
        }
    }
}

impl<V: Locate> Locate for Vec<V> {
    type Erased = Vec<V::Erased>;
    type HoldsText = V::HoldsText;

    fn find(&self, finder: &mut Finder) {
        finder.count(self.len());
        for value in self {
            value.find(finder);
        }
    }
}

impl<E: Bind> Bind for Vec<E> {
    type Bound<'r> = Vec<E::Bound<'r>>;

    fn bind<'r>(binder: &mut Binder<'_, 'r>) -> Result<Self::Bound<'r>, String> {
        let count = binder.count()?;
        // Each element takes at least one part: a count past them is not believed.
        let mut values = Vec::with_capacity(count.min(binder.left()));
        for _ in 0..count {
            values.push(E::bind(binder)?);
        }
        Ok(values)
    }
}

macro_rules! tuples {
    ($(($($name:ident $erased:ident $index:tt),+) => $either:ty, $text:ty $(, $inner:ty, $inner_text:ty)?;)*) => {$(
        impl<$($name: TuplePart),+> Locate for ($($name,)+)
        where
            $($inner: Either, $inner_text: Either,)?
            $either: Either<Out = Yes>,
            $text: Either,
        {
            type Erased = ($($name::Erased,)+);
            type HoldsText = <$text as Either>::Out;

            fn find(&self, finder: &mut Finder) {
                $(self.$index.find_part(finder);)+
            }
        }

        impl<$($erased: Bind),+> Bind for ($($erased,)+) {
            type Bound<'r> = ($($erased::Bound<'r>,)+);

            fn bind<'r>(binder: &mut Binder<'_, 'r>) -> Result<Self::Bound<'r>, String> {
                Ok(($($erased::bind(binder)?,)+))
            }
        }
    )*};
}

tuples! {
    (A EA 0, B EB 1) => (A::Borrows, B::Borrows), (A::HoldsText, B::HoldsText);
    (A EA 0, B EB 1, C EC 2) =>
        (A::Borrows, <(B::Borrows, C::Borrows) as Either>::Out),
        (A::HoldsText, <(B::HoldsText, C::HoldsText) as Either>::Out),
        (B::Borrows, C::Borrows), (B::HoldsText, C::HoldsText);
}

/// Owned values beside borrows (`(&Draft, u32)`): kept as they are.
macro_rules! owned {
    ($($ty:ty),* $(,)?) => {$(
        impl TuplePart for $ty {
            type Borrows = No;
            type HoldsText = No;
            type Erased = $ty;

            fn find_part(&self, finder: &mut Finder) {
                finder.value(self);
            }
        }

        impl Bind for $ty {
            type Bound<'r> = $ty;

            fn bind<'r>(binder: &mut Binder<'_, 'r>) -> Result<$ty, String> {
                binder.value::<$ty>()
            }
        }
    )*};
}

owned!(
    bool, char, u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64, String,
);

/// One part of what a located local keeps, in the order [`Locate::find`] records them.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Piece {
    /// An option's tag, a vector's length.
    Count(u64),
    /// An owned value beside the borrows, as postcard.
    Value(Vec<u8>),
    /// A borrow of one part.
    At(Spot),
    /// A borrow of `len` parts stored one after the other, from the spot on.
    Run(Spot, u64),
    /// An empty slice, which borrows nothing.
    Empty,
    /// A `&str` of `len` bytes, `at` bytes into the text of the `String` at the spot.
    Text { spot: Spot, at: u64, len: u64 },
    /// An empty `&str`, which borrows nothing.
    EmptyText,
}

/// Where a borrow points: the root's position among the roots the local is kept with, the
/// path of child positions to the part, and the part's fingerprint.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Spot {
    root: u32,
    path: Vec<u32>,
    /// Per step, the part's offset in an element whose size the walk does not know
    /// (`walk::NO_OFFSET` where its parent's bytes are known).
    offsets: Vec<u64>,
    fingerprint: u64,
}

/// A kept local's root: one of the locals kept with it that its borrows may point into,
/// or the string literals of the tool's code, which a `&str` may be one of.
#[doc(hidden)]
pub struct Root<'r>(RootOf<'r>);

enum RootOf<'r> {
    Value(&'r dyn Walkable),
    Literals(&'static [&'static str]),
}

impl<'r> Root<'r> {
    /// What the walk goes through: nothing, for the literals (found by their text).
    fn walkable(&self) -> &'r dyn Walkable {
        match self.0 {
            RootOf::Value(value) => value,
            RootOf::Literals(_) => &(),
        }
    }
}

/// `value` as a root.
#[doc(hidden)]
#[inline]
pub fn root<X: Serialize>(value: &X) -> Root<'_> {
    Root(RootOf::Value(value))
}

/// The string literals of a tool's code as a root: a `&str` kept where it points that is
/// found in no kept `String` is kept as the literal of the same text (the same value;
/// where it lies in the binary is no part of it), and taken back as it after a restore.
#[doc(hidden)]
#[inline]
pub fn literals(texts: &'static [&'static str]) -> Root<'static> {
    Root(RootOf::Literals(texts))
}

/// What [`Locate::find`] records a value with.
#[doc(hidden)]
pub struct Finder {
    pieces: Vec<Option<Piece>>,
    targets: Vec<(usize, Target, u64)>,
    failed: Option<String>,
}

impl Finder {
    fn count(&mut self, count: usize) {
        self.pieces.push(Some(Piece::Count(count as u64)));
    }

    fn value<T: Serialize>(&mut self, value: &T) {
        match postcard::to_allocvec(value) {
            Ok(bytes) => self.pieces.push(Some(Piece::Value(bytes))),
            Err(error) => {
                self.failed
                    .get_or_insert_with(|| format!("a value beside its borrows: {error}"));
            }
        }
    }

    fn target<T: Serialize + 'static>(&mut self, target: &T) {
        let fingerprint = self.fingerprint(target);
        self.pending(Part::of(target), typeid::of::<&T>(), None, fingerprint);
    }

    fn slice<T: Serialize + 'static>(&mut self, slice: &[T]) {
        match slice.first() {
            None => self.pieces.push(Some(Piece::Empty)),
            Some(first) => {
                let fingerprint = self.fingerprint(slice);
                self.pending(
                    Part::of(first),
                    typeid::of::<&T>(),
                    Some(slice.len()),
                    fingerprint,
                );
            }
        }
    }

    fn text(&mut self, text: &str) {
        if text.is_empty() {
            self.pieces.push(Some(Piece::EmptyText));
            return;
        }
        let fingerprint = self.fingerprint(text);
        let ptr = text.as_ptr().cast::<()>();
        self.targets.push((
            self.pieces.len(),
            Target {
                // The part the spot leads to is the `String` that holds the text.
                part: Part {
                    ptr,
                    addr: ptr.addr(),
                    size: text.len(),
                    type_id: typeid::of::<String>(),
                    via_ref: false,
                },
                ref_type_id: typeid::of::<&String>(),
                run: None,
                text: Some(text.len()),
                text_at: 0,
                spot: None,
                in_hash: false,
            },
            fingerprint,
        ));
        self.pieces.push(None);
    }

    /// `value`'s fingerprint (see [`fingerprints_as`]); a value that does not serialize
    /// whole has none, and is not saved.
    fn fingerprint<T: Serialize + ?Sized>(&mut self, value: &T) -> u64 {
        Fnv::of_value(value).unwrap_or_else(|| {
            self.failed.get_or_insert_with(|| {
                "what it borrows does not serialize whole, so it could not be told from \
                 another value once read back"
                    .to_owned()
            });
            0
        })
    }

    fn pending(&mut self, part: Part, ref_type_id: TypeId, run: Option<usize>, fingerprint: u64) {
        self.targets.push((
            self.pieces.len(),
            Target {
                part,
                ref_type_id,
                run,
                text: None,
                text_at: 0,
                spot: None,
                in_hash: false,
            },
            fingerprint,
        ));
        self.pieces.push(None);
    }
}

/// Whether `value` fingerprints as `seen`: the hash of its serialized form (see
/// `recompute`); a value that does not serialize whole matches nothing.
fn fingerprints_as<T: Serialize + ?Sized>(value: &T, seen: u64) -> bool {
    Fnv::of_value(value) == Some(seen)
}

/// What makes a located value again from its pieces, among its roots.
#[doc(hidden)]
pub struct Binder<'p, 'r> {
    pieces: &'p [Piece],
    /// The position of the next piece.
    at: usize,
    roots: &'p [Root<'r>],
    /// What each piece's spot reached in its root, found for all of them at once
    /// ([`reach_all`]); `None` for a piece that is no borrow, or a spot not reached.
    reached: Vec<Option<walk::Reached>>,
}

impl<'p, 'r> Binder<'p, 'r> {
    fn next(&mut self) -> Result<&'p Piece, String> {
        let piece: &'p Piece = self
            .pieces
            .get(self.at)
            .ok_or_else(|| "fewer parts than its type has".to_owned())?;
        self.at += 1;
        Ok(piece)
    }

    fn left(&self) -> usize {
        self.pieces.len().saturating_sub(self.at)
    }

    fn count(&mut self) -> Result<usize, String> {
        match self.next()? {
            Piece::Count(count) => {
                usize::try_from(*count).map_err(|_| "a count too large".to_owned())
            }
            _ => Err("a part of another kind where a count was".to_owned()),
        }
    }

    fn value<T: DeserializeOwned>(&mut self) -> Result<T, String> {
        match self.next()? {
            Piece::Value(bytes) => postcard::from_bytes(bytes).map_err(|error| error.to_string()),
            _ => Err("a part of another kind where a value was".to_owned()),
        }
    }

    /// The part the spot of the piece at `at` points at, of `T`'s type (and size, when
    /// known), and where its parent has room for `run` of them one after the other.
    fn reach<T: 'static>(
        &self,
        spot: &Spot,
        at: usize,
        run: Option<u64>,
    ) -> Result<*const (), String> {
        usize::try_from(spot.root)
            .ok()
            .and_then(|index| self.roots.get(index))
            .ok_or_else(|| "a borrow of a root this build does not keep with it".to_owned())?;
        if spot.offsets.len() != spot.path.len() {
            return Err("a path whose offsets do not match its steps".to_owned());
        }
        let reached = self
            .reached
            .get(at)
            .copied()
            .flatten()
            .ok_or_else(|| "a borrow of a part its root no longer has".to_owned())?;
        let part = reached.part;
        let same = if part.via_ref {
            part.type_id == typeid::of::<&T>()
        } else {
            part.type_id == typeid::of::<T>() && part.size == std::mem::size_of::<T>()
        };
        if !same {
            return Err("a borrow of a part of another type".to_owned());
        }
        if let Some(len) = run {
            let index = spot.path.last().map_or(0, |&index| index as u64);
            let room = reached.run_room.map_or(0, |room| room as u64);
            if spot.path.is_empty() || index.checked_add(len).is_none_or(|end| end > room) {
                return Err("a slice its root no longer holds".to_owned());
            }
        }
        Ok(part.ptr)
    }

    fn target<T: Serialize + 'static>(&mut self) -> Result<&'r T, String> {
        let at = self.at;
        let Piece::At(spot) = self.next()? else {
            return Err("a part of another kind where a borrow was".to_owned());
        };
        let ptr = self.reach::<T>(spot, at, None)?;
        // SAFETY: `reach` found, at `ptr`, a part of the root of `T`'s type, which the walk
        // believes is a real part of the root (in its own bytes, an element a standard
        // collection it holds stores, or at the same offset in one), so a live, aligned
        // `T`, with the provenance of the reference it was handed out as. The root is
        // borrowed, shared, for `'r`, and the walk took nothing a cell or a lock guards:
        // nothing moves or changes it while the reference lives.
        let found: &'r T = unsafe { &*ptr.cast::<T>() };
        if !fingerprints_as(found, spot.fingerprint) {
            return Err("a borrow of a part that is another value once read back".to_owned());
        }
        Ok(found)
    }

    fn text(&mut self) -> Result<&'r str, String> {
        let at = self.at;
        let (spot, start, len) = match self.next()? {
            Piece::EmptyText => return Ok(""),
            Piece::Text { spot, at, len } => (spot, *at, *len),
            _ => return Err("a part of another kind where a text was".to_owned()),
        };
        let literals = usize::try_from(spot.root)
            .ok()
            .and_then(|index| self.roots.get(index))
            .and_then(|root| match root.0 {
                RootOf::Literals(literals) => Some(literals),
                RootOf::Value(_) => None,
            });
        let whole: &'r str = match literals {
            Some(literals) => match spot.path[..] {
                [index] => usize::try_from(index)
                    .ok()
                    .and_then(|index| literals.get(index))
                    .copied()
                    .ok_or_else(|| "a literal this build does not have".to_owned())?,
                _ => return Err("a literal at a path".to_owned()),
            },
            None => {
                let ptr = self.reach::<String>(spot, at, None)?;
                // SAFETY: as in `target`, for the `String` the text was a part of.
                let whole: &'r String = unsafe { &*ptr.cast::<String>() };
                whole
            }
        };
        let range = usize::try_from(start)
            .ok()
            .zip(usize::try_from(len).ok())
            .and_then(|(start, len)| Some(start..start.checked_add(len)?));
        // `get` refuses a range past the end or not between two characters.
        let found = range
            .and_then(|range| whole.get(range))
            .ok_or_else(|| "a part of a text its root no longer holds".to_owned())?;
        if !fingerprints_as(found, spot.fingerprint) {
            return Err("a text that is another value once read back".to_owned());
        }
        Ok(found)
    }

    fn slice<T: Serialize + 'static>(&mut self) -> Result<&'r [T], String> {
        let at = self.at;
        let (spot, len) = match self.next()? {
            Piece::Empty => return Ok(&[]),
            Piece::Run(spot, len) => (spot, *len),
            _ => return Err("a part of another kind where a slice was".to_owned()),
        };
        let ptr = self.reach::<T>(spot, at, Some(len))?;
        let len = usize::try_from(len).map_err(|_| "a slice too long".to_owned())?;
        // SAFETY: as in `target`, and the parent stores its elements one after the other
        // (a `Vec` or an array) with room for `len` of them from this one on.
        let found: &'r [T] = unsafe { std::slice::from_raw_parts(ptr.cast::<T>(), len) };
        if !fingerprints_as(found, spot.fingerprint) {
            return Err("a slice that is another value once read back".to_owned());
        }
        Ok(found)
    }
}

/// The state's field for a located local: the pieces its value was recorded as, or why it
/// could not be (then the state does not serialize, and the suspension fails with it).
/// Serialized as a newtype named for the erased type, so that the layout a token's identity
/// hashes says what the pieces make.
#[doc(hidden)]
pub struct Located<E> {
    pieces: Result<Vec<Piece>, String>,
    erased: PhantomData<fn() -> E>,
}

impl<E> Serialize for Located<E> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.pieces {
            Ok(pieces) => serializer.serialize_newtype_struct(std::any::type_name::<E>(), pieces),
            Err(reason) => Err(serde::ser::Error::custom(reason)),
        }
    }
}

impl<'de, E> Deserialize<'de> for Located<E> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Pieces<E>(PhantomData<fn() -> E>);
        impl<'de, E> serde::de::Visitor<'de> for Pieces<E> {
            type Value = Located<E>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("where a kept local's borrows point")
            }

            fn visit_newtype_struct<D: Deserializer<'de>>(
                self,
                deserializer: D,
            ) -> Result<Located<E>, D::Error> {
                Ok(Located {
                    pieces: Ok(Vec::<Piece>::deserialize(deserializer)?),
                    erased: PhantomData,
                })
            }
        }
        deserializer.deserialize_newtype_struct(std::any::type_name::<E>(), Pieces(PhantomData))
    }
}

impl<E> SlotField for Located<E> {
    type Shown = Self;

    fn shown(&self) -> &Self {
        self
    }
}

impl<E> std::fmt::Debug for Located<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Located")
            .field("pieces", &self.pieces)
            .finish()
    }
}

/// `value` recorded as where its borrows point among `roots`, named `local` in the error
/// when one of them is not found.
pub(crate) fn located<T: Locate>(value: &T, roots: &[Root<'_>], local: &str) -> Located<T::Erased> {
    let mut finder = Finder {
        pieces: Vec::new(),
        targets: Vec::new(),
        failed: None,
    };
    value.find(&mut finder);
    let pieces = match finder.failed {
        Some(reason) => Err(format!("`{local}` could not be saved: {reason}")),
        None => {
            let walkable: Vec<&dyn Walkable> = roots.iter().map(Root::walkable).collect();
            let mut targets: Vec<Target> = Vec::with_capacity(finder.targets.len());
            let mut placed = Vec::with_capacity(finder.targets.len());
            for (at, target, fingerprint) in finder.targets {
                placed.push((at, fingerprint));
                targets.push(target);
            }
            walk::locate(&walkable, &mut targets);
            among_literals(&mut targets, roots);
            let mut pieces = finder.pieces;
            let mut lost = None;
            for ((at, fingerprint), target) in placed.into_iter().zip(targets) {
                let Some((root, path)) = target.spot else {
                    lost = Some(target.in_hash);
                    break;
                };
                let spot = Spot {
                    root,
                    path: path.steps,
                    offsets: path.offsets,
                    fingerprint,
                };
                pieces[at] = Some(match (target.run, target.text) {
                    (_, Some(len)) => Piece::Text {
                        spot,
                        at: target.text_at,
                        len: len as u64,
                    },
                    (Some(len), None) => Piece::Run(spot, len as u64),
                    (None, None) => Piece::At(spot),
                });
            }
            if let Some(in_hash) = lost {
                Err(lost_borrow(local, in_hash))
            } else {
                Ok(pieces.into_iter().flatten().collect())
            }
        }
    };
    Located {
        pieces,
        erased: PhantomData,
    }
}

/// Finds each `&str` target the walk did not find in a kept `String` among the literals
/// roots, by its text.
fn among_literals(targets: &mut [Target], roots: &[Root<'_>]) {
    for target in targets.iter_mut() {
        let Some(len) = target.text else { continue };
        if target.spot.is_some() || target.in_hash {
            continue;
        }
        // SAFETY: a text target is made from a live `&str` of the value being located,
        // which `located` holds borrowed while this runs: `len` bytes of UTF-8 at `ptr`.
        let text = unsafe {
            std::str::from_utf8_unchecked(std::slice::from_raw_parts(
                target.part.ptr.cast::<u8>(),
                len,
            ))
        };
        for (index, root) in roots.iter().enumerate() {
            let RootOf::Literals(literals) = root.0 else {
                continue;
            };
            let found = literals.iter().position(|literal| *literal == text);
            if let (Some(at), Ok(index)) = (found, u32::try_from(index)) {
                let path = walk::Path {
                    steps: vec![u32::try_from(at).unwrap_or(u32::MAX)],
                    offsets: vec![walk::NO_OFFSET],
                };
                target.spot = Some((index, path));
                target.text_at = 0;
                break;
            }
        }
    }
}

#[cold]
fn lost_borrow(local: &str, in_hash: bool) -> String {
    if in_hash {
        return format!(
            "`{local}` holds a borrow of an entry of a `HashMap` or a `HashSet` kept across a \
             suspension: such a collection read back walks its entries in another order, so \
             saga cannot find the entry again by its position; keep the collection in a \
             `BTreeMap` or a `BTreeSet` (ordered by key), or keep the entry's key instead"
        );
    }
    format!(
        "`{local}` holds a borrow that saga could not find in the locals it keeps with it: a \
         borrow kept across a suspension is saved as where it points in a kept local (a \
         field, an element of a `Vec`, a map's entry), and this one points elsewhere (into a \
         value a function returned, a `Box`, a `RefCell`, or a local not used after the \
         suspension); keep an owned value instead (`.clone()`, `.to_owned()`), or the \
         position of what it points at"
    )
}

/// The located local `field` holds, made again among `roots`.
///
/// # Panics
///
/// Unwinds with the refusal of a state read otherwise (`-32602`, naming `local`) when a
/// borrow is not found again as it was saved.
pub(crate) fn bound<'r, E: Bind>(
    field: Located<E>,
    roots: &[Root<'r>],
    local: &str,
) -> E::Bound<'r> {
    let pieces = match field.pieces {
        Ok(pieces) => pieces,
        Err(reason) => refuse_other_value(reason),
    };
    let mut binder = Binder {
        reached: reach_all(&pieces, roots),
        pieces: &pieces,
        at: 0,
        roots,
    };
    match E::bind(&mut binder) {
        Ok(value) if binder.left() == 0 => value,
        Ok(_) => refuse_other_value(format!(
            "`{local}`'s borrows are kept as more parts than its type has in this build"
        )),
        Err(reason) => refuse_other_value(format!(
            "`{local}`'s borrows cannot be found again once its places are read back ({reason}): \
             a borrow kept across a suspension must point at the same part of the same value \
             after a restore (not into a `HashMap`, whose order changes), and this build's \
             locals must be the same"
        )),
    }
}

/// What each of `pieces`' spots reaches in its root: one walk of each root for all the
/// borrows into it (see `walk::follow_all`).
fn reach_all(pieces: &[Piece], roots: &[Root<'_>]) -> Vec<Option<walk::Reached>> {
    let mut reached = vec![None; pieces.len()];
    for (index, root) in roots.iter().enumerate() {
        let mut at = Vec::new();
        let mut paths = Vec::new();
        for (position, piece) in pieces.iter().enumerate() {
            if let Piece::At(spot) | Piece::Run(spot, _) | Piece::Text { spot, .. } = piece
                && usize::try_from(spot.root).is_ok_and(|root| root == index)
            {
                at.push(position);
                paths.push((&spot.path[..], &spot.offsets[..]));
            }
        }
        if paths.is_empty() {
            continue;
        }
        for (position, found) in at
            .into_iter()
            .zip(walk::follow_all(root.walkable(), &paths))
        {
            reached[position] = found;
        }
    }
    reached
}

#[cfg(test)]
mod tests;
