//! The walk of a kept local's value through its own `Serialize` impl, which hands each part
//! of the value to the serializer by reference: so the walk sees where each part lies in
//! memory. It finds the parts that borrows point at ([`locate`]), or the parts at paths
//! ([`follow_all`]).
//!
//! What the walk believes. A part is taken as a real part of the value only when it lies
//! inside its parent's own bytes (a field, an element of an array, the value of an
//! `Option`); or when it is an element one of the standard collections hands out (`Vec`,
//! `VecDeque`, the maps and sets, whose `Serialize` is serde's own: no user's impl can
//! replace it) through a reference to where it is stored; or, inside such an element, whose
//! size the walk does not know, a part at an offset from the element's start, saved with
//! the path and required again when it is followed (a value a `Serialize` impl computes is
//! never inside the live element it serializes, so never at that offset). Anything else (a
//! value a `Serialize` impl computed, the content of a `Box` or an `Rc` it passes through,
//! what a `RefCell` or a `Mutex` guards) may be a temporary, or change under a shared
//! borrow: the walk neither matches it nor goes into it, so a borrow of it is not found,
//! and the local is refused rather than pointed at something that is gone.

use std::any::TypeId;
use std::collections::HashMap;
use std::fmt;

use serde::Serialize;
use serde::ser::{self, Serializer};

/// The type names of the parents whose parts the walk takes where they are, though they
/// lie outside the parent's own bytes: serde's impls for them hand out the stored
/// elements, and no user's impl can replace serde's for a standard type.
const STORES_ELSEWHERE: &[&str] = &[
    "alloc::vec::Vec<",
    "alloc::collections::vec_deque::VecDeque<",
    "alloc::collections::btree::map::BTreeMap<",
    "alloc::collections::btree::set::BTreeSet<",
    "std::collections::hash::map::HashMap<",
    "std::collections::hash::set::HashSet<",
];

/// The parents whose elements are stored one after the other, so that a run of them is a
/// slice: a `Vec` and an array.
fn contiguous(name: &str) -> bool {
    name.starts_with("alloc::vec::Vec<") || name.starts_with('[')
}

/// A part's identity as the walk compares it: its address, its size and its type (with
/// lifetimes erased, so that a part of a type that borrows is compared too).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Part {
    /// Where it is: a pointer, not an address, so that a reference made from it keeps
    /// the provenance of the value it came from.
    pub(super) ptr: *const (),
    pub(super) addr: usize,
    pub(super) size: usize,
    pub(super) type_id: TypeId,
    /// Whether it was handed out as a reference to it (a standard collection's element,
    /// which serde's impls pass as `&&T`): then `type_id` is the reference's, `&T`, and
    /// `size` is unknown (zero).
    pub(super) via_ref: bool,
}

impl Part {
    pub(super) fn of<U: ?Sized>(value: &U) -> Part {
        let ptr = (value as *const U).cast::<()>();
        Part {
            ptr,
            addr: ptr.addr(),
            size: std::mem::size_of_val(value),
            type_id: typeid::of::<U>(),
            via_ref: false,
        }
    }

    /// `value`, or what it points at when it is a thin shared reference (whose pointee is
    /// then the part, the reference being a temporary of the collection's iterator).
    fn seen<U: ?Sized>(value: &U) -> (Part, &'static str) {
        let name = std::any::type_name::<U>();
        let part = Part::of(value);
        let thin = part.size == std::mem::size_of::<usize>();
        match name.strip_prefix('&') {
            Some(pointee) if thin && !pointee.starts_with("mut ") => {
                // SAFETY: `U` is a thin shared reference (its name says so, and its size is
                // a pointer's): its bytes are an initialised, aligned pointer, read as one so
                // that it keeps its provenance.
                let ptr = unsafe { *(value as *const U).cast::<*const ()>() };
                (
                    Part {
                        ptr,
                        addr: ptr.addr(),
                        size: 0,
                        type_id: part.type_id,
                        via_ref: true,
                    },
                    pointee,
                )
            }
            _ => (part, name),
        }
    }
}

/// What a borrow points at, to be found: one part, or a run of `len` parts (a slice).
pub(super) struct Target {
    pub(super) part: Part,
    /// The type of a reference to it, `&T`: a part handed out through one has it.
    pub(super) ref_type_id: TypeId,
    /// For a slice: how many elements it holds from `part` on.
    pub(super) run: Option<usize>,
    /// For a `&str`: its length in bytes. Its spot is the `String` whose text holds it
    /// (whose `Serialize`, serde's own, hands out the text where it is stored), and
    /// [`Target::text_at`] its offset in that text.
    pub(super) text: Option<usize>,
    /// Where a `&str` starts in the text of the `String` it was found in.
    pub(super) text_at: u64,
    /// Where it was found: the root's index, and the path of child positions to it.
    pub(super) spot: Option<(u32, Path)>,
    /// Whether it was seen in a hash-ordered collection, where it is not taken: such a
    /// collection read back walks in another order, so a position in it would name
    /// another entry (the saga would be refused at random); the local is refused when
    /// saved instead, always.
    pub(super) in_hash: bool,
}

/// A path to a part from its root: the child position at each step, and, where the step
/// goes into a part whose size the walk does not know (an element handed out through a
/// reference), the part's offset from the start of that element, which must be the same
/// when the path is followed ([`NO_OFFSET`] elsewhere).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Path {
    pub(super) steps: Vec<u32>,
    pub(super) offsets: Vec<u64>,
}

/// The offset of a step whose parent's bytes the walk knows: checked by them instead.
pub(super) const NO_OFFSET: u64 = u64::MAX;

/// The part a path leads to, with what its parent says of it.
#[derive(Clone, Copy)]
pub(super) struct Reached {
    pub(super) part: Part,
    /// Whether the parent stores its elements one after the other, and how many it has.
    pub(super) run_room: Option<usize>,
}

/// Why the walk stopped: it has what it looked for, or the value's own `Serialize`
/// failed (the walker then finds nothing more, which the caller sees).
#[derive(Debug)]
pub(super) struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the walk of a kept value stopped")
    }
}

impl std::error::Error for Stop {}

impl ser::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Stop
    }
}

/// A value being walked: its bytes, and how its parts are believed (see the module).
struct Frame {
    start: usize,
    /// Where its bytes end; unknown for a part reached through a reference (its size is
    /// not known to the walk), whose parts are then believed as the parent's are.
    end: Option<usize>,
    stores_elsewhere: bool,
    contiguous: bool,
    /// A `HashMap` or a `HashSet`, whose order is its hasher's (see [`Target::in_hash`]).
    hashed: bool,
    /// A `String`, whose `Serialize` (serde's own: no user's impl can replace it) hands out
    /// its text where it is stored: a `&str` in it is found there.
    string: bool,
    /// A `RefCell`, a `Mutex`, an `RwLock` (or another of `std`'s cells and locks): what it
    /// holds is reachable through a shared borrow only behind a guard, so a borrow of it
    /// is never taken (its content could change under it).
    guarded: bool,
    /// The number of parts it said it has, for a sequence or a tuple.
    count: Option<usize>,
    /// The position of its next part.
    next: u32,
}

impl Frame {
    fn of(part: Part, name: &str) -> Frame {
        Frame {
            start: part.addr,
            end: (!part.via_ref).then(|| part.addr.saturating_add(part.size)),
            stores_elsewhere: STORES_ELSEWHERE
                .iter()
                .any(|prefix| name.starts_with(prefix)),
            contiguous: contiguous(name),
            hashed: name.starts_with("std::collections::hash::"),
            string: name == "alloc::string::String",
            guarded: name.starts_with("core::cell::") || name.starts_with("std::sync::"),
            count: None,
            next: 0,
        }
    }

    /// Whether `part`, handed out as itself (not through a reference), lies in this
    /// value's bytes; under a value whose end is not known, whether it lies after its
    /// start (its offset is then checked when the path is followed).
    fn holds(&self, part: Part) -> bool {
        part.addr >= self.start
            && self.end.is_none_or(|frame_end| {
                part.addr
                    .checked_add(part.size)
                    .is_some_and(|end| end <= frame_end)
            })
    }
}

enum Mode<'t> {
    Locate {
        root: u32,
        targets: &'t mut [Target],
        by_addr: &'t HashMap<usize, Vec<usize>>,
        /// The `&str` targets' addresses and positions, sorted by address.
        texts: &'t [(usize, usize)],
        left: &'t mut usize,
    },
    Follow {
        /// Each path's steps and offsets.
        paths: &'t [(&'t [u32], &'t [u64])],
        /// The non-empty paths' positions in `paths`, sorted by their steps: the paths
        /// under one part are then one run of it.
        sorted: &'t [usize],
        /// Per depth walked, the run of `sorted` whose paths go on below the current part.
        runs: Vec<(usize, usize)>,
        /// What each path reached.
        reached: &'t mut [Option<Reached>],
        /// The paths found not to lead to a part (an offset that differs).
        failed: &'t mut [bool],
        /// The paths neither reached nor failed yet: the walk ends when none is left.
        left: usize,
    },
}

/// The serializer that walks.
struct Walker<'t> {
    frames: Vec<Frame>,
    path: Path,
    mode: Mode<'t>,
}

/// A value the walk can go through: anything `Serialize`, behind `dyn`.
pub(super) trait Walkable {
    fn walk_into(&self, walker: &mut WalkerRef<'_, '_>) -> Result<(), Stop>;
    fn part(&self) -> Part;
    fn frame(&self) -> FrameOf;
}

/// A [`Walker`], named outside this module only through [`Walkable`].
pub(super) struct WalkerRef<'w, 't>(&'w mut Walker<'t>);

/// A root's frame, made where its type is known.
pub(super) struct FrameOf(Frame);

impl<X: Serialize> Walkable for X {
    fn walk_into(&self, walker: &mut WalkerRef<'_, '_>) -> Result<(), Stop> {
        self.serialize(&mut *walker.0)
    }

    fn part(&self) -> Part {
        Part::of(self)
    }

    fn frame(&self) -> FrameOf {
        FrameOf(Frame::of(Part::of(self), std::any::type_name::<X>()))
    }
}

/// Finds each target in `roots`, the first root that holds it and the path to it, in one
/// walk of each root (ended early once every target is found).
pub(super) fn locate(roots: &[&dyn Walkable], targets: &mut [Target]) {
    let mut by_addr: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut texts: Vec<(usize, usize)> = Vec::new();
    for (index, target) in targets.iter().enumerate() {
        if target.text.is_some() {
            texts.push((target.part.addr, index));
        } else {
            by_addr.entry(target.part.addr).or_default().push(index);
        }
    }
    texts.sort_unstable();
    let mut left = targets.len();
    for (root_index, root) in roots.iter().enumerate() {
        if left == 0 {
            break;
        }
        let Ok(root_index) = u32::try_from(root_index) else {
            break;
        };
        // The root itself, at the empty path.
        let part = root.part();
        if let Some(indices) = by_addr.get(&part.addr) {
            for &index in indices {
                let target = &mut targets[index];
                if target.spot.is_none()
                    && target.run.is_none()
                    && target.text.is_none()
                    && target.part == part
                {
                    target.spot = Some((root_index, Path::default()));
                    left -= 1;
                }
            }
        }
        let mut walker = Walker {
            frames: vec![root.frame().0],
            path: Path::default(),
            mode: Mode::Locate {
                root: root_index,
                targets,
                by_addr: &by_addr,
                texts: &texts,
                left: &mut left,
            },
        };
        let _ = root.walk_into(&mut WalkerRef(&mut walker));
    }
}

/// The part of `root` at each of `paths` (steps and offsets, of equal lengths), where the
/// walk believes it (see the module), in one walk of the root: only the parts on some path
/// are gone into, and the walk ends once every path is reached. One walk for all of a
/// local's borrows, not one each: a `Vec<&T>` of n borrows into a `Vec<T>` of n is bound
/// in time linear in n, not quadratic (each walk to element i passes the i before it).
pub(super) fn follow_all(root: &dyn Walkable, paths: &[(&[u32], &[u64])]) -> Vec<Option<Reached>> {
    let mut reached: Vec<Option<Reached>> = vec![None; paths.len()];
    let mut sorted = Vec::with_capacity(paths.len());
    for (index, (steps, offsets)) in paths.iter().enumerate() {
        if steps.len() != offsets.len() {
            continue;
        }
        if steps.is_empty() {
            reached[index] = Some(Reached {
                part: root.part(),
                run_room: None,
            });
        } else {
            sorted.push(index);
        }
    }
    if sorted.is_empty() {
        return reached;
    }
    sorted.sort_by(|&a, &b| paths[a].0.cmp(paths[b].0));
    let mut failed = vec![false; paths.len()];
    let left = sorted.len();
    let mut walker = Walker {
        frames: vec![root.frame().0],
        path: Path::default(),
        mode: Mode::Follow {
            paths,
            sorted: &sorted,
            runs: vec![(0, left)],
            reached: &mut reached,
            failed: &mut failed,
            left,
        },
    };
    let _ = root.walk_into(&mut WalkerRef(&mut walker));
    drop(walker);
    reached
}

#[cfg(test)]
thread_local! {
    /// How many parts this thread's walks visited: the tests count a bind's work by it.
    pub(super) static VISITED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Walker<'_> {
    /// A part of the current value, at the next position.
    fn child<U: ?Sized + Serialize>(&mut self, value: &U) -> Result<(), Stop> {
        #[cfg(test)]
        VISITED.with(|visited| visited.set(visited.get() + 1));
        let Some(frame) = self.frames.last_mut() else {
            return Err(Stop);
        };
        let index = frame.next;
        frame.next = frame.next.saturating_add(1);
        let (part, name) = Part::seen(value);
        // Believed (see the module): an element a standard collection hands out through a
        // reference; a part in the parent's own bytes; under an element whose size is not
        // known, a part at its offset from the element's start, checked when followed.
        let believed = if frame.guarded {
            false
        } else if part.via_ref {
            frame.stores_elsewhere
        } else {
            frame.holds(part)
        };
        if !believed {
            return Ok(());
        }
        let offset = match frame.end {
            None if !part.via_ref => part
                .addr
                .checked_sub(frame.start)
                .map_or(NO_OFFSET, |offset| offset as u64),
            _ => NO_OFFSET,
        };
        let run_room = frame.contiguous.then_some(frame.count).flatten();
        let in_hash = self.frames.iter().any(|frame| frame.hashed);
        match &mut self.mode {
            Mode::Locate {
                root,
                targets,
                by_addr,
                left,
                ..
            } => {
                if let Some(indices) = by_addr.get(&part.addr) {
                    for &at in indices {
                        let target = &mut targets[at];
                        if target.spot.is_some() {
                            continue;
                        }
                        let same = if part.via_ref {
                            target.ref_type_id == part.type_id
                        } else {
                            target.part.type_id == part.type_id && target.part.size == part.size
                        };
                        let fits = match target.run {
                            None => same,
                            Some(len) => {
                                same && run_room.is_some_and(|room| {
                                    (index as usize)
                                        .checked_add(len)
                                        .is_some_and(|end| end <= room)
                                })
                            }
                        };
                        if fits && in_hash {
                            target.in_hash = true;
                        } else if fits {
                            let mut path = self.path.clone();
                            path.steps.push(index);
                            path.offsets.push(offset);
                            target.spot = Some((*root, path));
                            **left -= 1;
                        }
                    }
                }
                if **left == 0 {
                    return Err(Stop);
                }
            }
            Mode::Follow {
                paths,
                sorted,
                runs,
                reached,
                failed,
                left,
            } => {
                let depth = self.path.steps.len();
                let Some(&(from, to)) = runs.last() else {
                    return Err(Stop);
                };
                // Every path of the run goes on below the current part, so has a step at
                // this depth; sorted, those that take this one are a run of their own.
                let within = &sorted[from..to];
                let first = from + within.partition_point(|&at| paths[at].0[depth] < index);
                let end = from + within.partition_point(|&at| paths[at].0[depth] <= index);
                if first == end {
                    // On no path: not walked at all.
                    return Ok(());
                }
                // The paths that end here sort before those that go on below.
                let mut below = end;
                for (run_at, &at) in sorted.iter().enumerate().take(end).skip(first) {
                    let (steps, offsets) = paths[at];
                    if steps.len() > depth + 1 && below == end {
                        below = run_at;
                    }
                    if failed[at] {
                        continue;
                    }
                    if offsets[depth] != offset {
                        // Elsewhere in its element than when it was saved: not a part of it.
                        failed[at] = true;
                        *left -= 1;
                    } else if steps.len() == depth + 1 {
                        reached[at] = Some(Reached { part, run_room });
                        *left -= 1;
                    }
                }
                if *left == 0 {
                    return Err(Stop);
                }
                if below == end {
                    return Ok(());
                }
                runs.push((below, end));
            }
        }
        self.path.steps.push(index);
        self.path.offsets.push(offset);
        self.frames.push(Frame::of(part, name));
        let walked = value.serialize(&mut *self);
        self.frames.pop();
        self.path.steps.pop();
        self.path.offsets.pop();
        if let Mode::Follow { runs, .. } = &mut self.mode {
            runs.pop();
        }
        walked
    }

    /// The text a `String` hands out (see [`Frame::string`]): the `&str` targets in it are
    /// found at the `String`'s path, with their offset in it.
    fn text(&mut self, text: &str) -> Result<(), Stop> {
        let Some(frame) = self.frames.last() else {
            return Err(Stop);
        };
        // Only the text serde's impl for `String` hands out, before any other part.
        if !frame.string || frame.next != 0 {
            return Ok(());
        }
        let in_hash = self.frames.iter().any(|frame| frame.hashed);
        let Mode::Locate {
            root,
            targets,
            texts,
            left,
            ..
        } = &mut self.mode
        else {
            return Ok(());
        };
        let start = text.as_ptr().addr();
        let end = start.saturating_add(text.len());
        let first = texts.partition_point(|&(addr, _)| addr < start);
        for &(addr, at) in &texts[first..] {
            if addr >= end {
                break;
            }
            let target = &mut targets[at];
            let fits = target.spot.is_none()
                && target
                    .text
                    .and_then(|len| addr.checked_add(len))
                    .is_some_and(|target_end| target_end <= end);
            if fits && in_hash {
                target.in_hash = true;
            } else if fits {
                target.spot = Some((*root, self.path.clone()));
                target.text_at = (addr - start) as u64;
                **left -= 1;
            }
        }
        if **left == 0 {
            return Err(Stop);
        }
        Ok(())
    }

    fn counted(&mut self, count: Option<usize>) {
        if let Some(frame) = self.frames.last_mut() {
            frame.count = count;
        }
    }
}

macro_rules! leaves {
    ($($method:ident($ty:ty)),* $(,)?) => {
        $(fn $method(self, _: $ty) -> Result<(), Stop> { Ok(()) })*
    };
}

impl<'a, 't> Serializer for &'a mut Walker<'t> {
    type Ok = ();
    type Error = Stop;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    leaves! {
        serialize_bool(bool), serialize_i8(i8), serialize_i16(i16), serialize_i32(i32),
        serialize_i64(i64), serialize_i128(i128), serialize_u8(u8), serialize_u16(u16),
        serialize_u32(u32), serialize_u64(u64), serialize_u128(u128), serialize_f32(f32),
        serialize_f64(f64), serialize_char(char), serialize_bytes(&[u8]),
        serialize_unit_struct(&'static str),
    }

    fn serialize_str(self, text: &str) -> Result<(), Stop> {
        self.text(text)
    }

    fn serialize_none(self) -> Result<(), Stop> {
        Ok(())
    }

    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), Stop> {
        self.child(value)
    }

    fn serialize_unit(self) -> Result<(), Stop> {
        Ok(())
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Stop> {
        Ok(())
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        self.child(value)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        self.child(value)
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self, Stop> {
        self.counted(len);
        Ok(self)
    }

    fn serialize_tuple(self, len: usize) -> Result<Self, Stop> {
        self.counted(Some(len));
        Ok(self)
    }

    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Self, Stop> {
        self.counted(Some(len));
        Ok(self)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, Stop> {
        Ok(self)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self, Stop> {
        Ok(self)
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Stop> {
        Ok(self)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, Stop> {
        Ok(self)
    }

    fn is_human_readable(&self) -> bool {
        false
    }
}

macro_rules! compound {
    ($($trait:ident :: $method:ident),* $(,)?) => {
        $(impl ser::$trait for &mut Walker<'_> {
            type Ok = ();
            type Error = Stop;

            fn $method<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Stop> {
                self.child(value)
            }

            fn end(self) -> Result<(), Stop> {
                Ok(())
            }
        })*
    };
}

compound! {
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
}

impl ser::SerializeMap for &mut Walker<'_> {
    type Ok = ();
    type Error = Stop;

    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Stop> {
        self.child(key)
    }

    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Stop> {
        self.child(value)
    }

    fn end(self) -> Result<(), Stop> {
        Ok(())
    }
}

macro_rules! fields {
    ($($trait:ident),* $(,)?) => {
        $(impl ser::$trait for &mut Walker<'_> {
            type Ok = ();
            type Error = Stop;

            fn serialize_field<T: ?Sized + Serialize>(
                &mut self,
                _: &'static str,
                value: &T,
            ) -> Result<(), Stop> {
                self.child(value)
            }

            fn end(self) -> Result<(), Stop> {
                Ok(())
            }
        })*
    };
}

fields!(SerializeStruct, SerializeStructVariant);
