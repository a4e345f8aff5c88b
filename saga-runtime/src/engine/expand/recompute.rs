//! Borrows recomputed after a restore: what `#[saga_tool]` does with a value that holds a
//! borrow and so cannot be saved (`Vec<&T>`, a tuple of borrows, a loop's iterator over
//! borrowed data). Nothing of it is saved but its fingerprint; after a restore the
//! expression that made it runs again over the restored places, and its result must
//! fingerprint alike, or the round is refused.
//!
//! Why that is sound: while a shared borrow is live, rustc forbids changing what it
//! points into, so a deterministic expression over the same restored places gives the
//! same value. What is not deterministic (a `HashMap`'s order once read back, a counter in
//! a closure, a clock) gives another value, which the fingerprint tells apart: the state
//! is refused, never read as another value.
//!
//! A loop's iterator is made once per step and walked as the loop as written walks it;
//! only after a restore is it made again and advanced to the saved position
//! ([`Live`]). A `let` is evaluated once per step, and again only after a restore
//! ([`recomputed`], [`recomputed_again`]).

use std::fmt::Display;

use serde::Serialize;

use crate::engine::expand::expand_support::{Cursor, SavedOrder};
use crate::engine::expand::refusal::refuse_other_value;
use crate::engine::identity::fnv::Fnv;

/// What a value that cannot be fingerprinted keeps as its fingerprint: refused when
/// checked, whatever it is compared with.
const UNFINGERPRINTED: u64 = u64::MAX;

/// A value's fingerprint: the hash of its postcard bytes (every bit of a float), or of
/// serde's calls tagged where postcard cannot encode it (a sequence of unknown length;
/// `Fnv::of_value`); [`UNFINGERPRINTED`] where it does not serialize whole, so that it
/// never matches.
fn fingerprint<T: Serialize + ?Sized>(value: &T) -> u64 {
    match Fnv::of_value(value) {
        Some(UNFINGERPRINTED) | None => UNFINGERPRINTED,
        Some(hash) => hash,
    }
}

/// Whether `value` is the value fingerprinted as `seen`.
fn fingerprints_as<T: Serialize + ?Sized>(value: &T, seen: u64) -> bool {
    seen != UNFINGERPRINTED && fingerprint(value) == seen
}

/// A value recomputed after a restore, checked by its fingerprint (see [`fingerprint`]):
/// a type that cannot be fingerprinted is refused where it is made, never taken as
/// recomputed exactly.
#[diagnostic::on_unimplemented(
    message = "`{Self}` holds a borrow kept across a suspension, which saga computes again after a restore and checks by its serialized form, but it is not `Serialize`",
    label = "computed again after a restore, so it must be `Serialize`",
    note = "derive `Serialize` for the types it borrows (`#[derive(Serialize, Deserialize)]`), or keep an owned value across the suspension instead (`.to_owned()`, `.clone()`)"
)]
#[doc(hidden)]
pub trait Recomputed: Serialize {}

impl<T: Serialize + ?Sized> Recomputed for T {}

/// A `for` loop's iterator over what its expression borrows, with how many items it has
/// given: made when the loop begins (and again after a restore, from nothing saved).
#[doc(hidden)]
pub struct Live<I> {
    items: I,
    given: usize,
}

/// The iterator of a `for` loop whose expression is recomputed after a restore.
#[doc(hidden)]
pub fn live<I: IntoIterator>(items: I) -> Live<I::IntoIter> {
    Live {
        items: items.into_iter(),
        given: 0,
    }
}

impl<I: Iterator> Live<I> {
    /// The item at position `at`: the next one as the loop walks, or (after a restore)
    /// the one reached by advancing a new iterator past the items before it.
    fn at(&mut self, at: usize) -> Option<I::Item> {
        let skip = at.checked_sub(self.given)?;
        let item = self.items.nth(skip);
        self.given = at + 1;
        item
    }
}

/// The item at `at` of a loop whose iterator is recomputed, with its fingerprint kept in
/// `seen` (saved at a suspension in the body). `loop_` is the loop as written, for
/// [`live_item_again`], which this call becomes after a restore.
#[doc(hidden)]
pub fn live_item_at<I: Iterator>(
    at: &usize,
    seen: &mut u64,
    live: &mut Live<I>,
    _loop: &str,
) -> Option<I::Item>
where
    I::Item: Recomputed,
{
    let item = live.at(*at)?;
    *seen = fingerprint(&item);
    Some(item)
}

/// [`live_item_at`] after a restore: the iterator made again is advanced to `at`, and the
/// item found there must fingerprint as the one the saga suspended with.
///
/// # Panics
///
/// Unwinds with the refusal of a state read otherwise (`-32602`, naming `loop_`) when the
/// item differs or the iterator ends before `at`: the expression gives other items once
/// its places are read back (a hash-ordered collection, a counter in a closure), or the
/// build changed it.
#[doc(hidden)]
pub fn live_item_again<I: Iterator>(
    at: &usize,
    seen: &mut u64,
    live: &mut Live<I>,
    loop_: &str,
) -> Option<I::Item>
where
    I::Item: Recomputed,
{
    match live.at(*at) {
        Some(item) if fingerprints_as(&item, *seen) => Some(item),
        Some(_) => walked_otherwise(loop_, *at, "another item"),
        None => walked_otherwise(loop_, *at, "no item"),
    }
}

#[cold]
fn walked_otherwise(loop_: &str, at: usize, found: &str) -> ! {
    refuse_other_value(format!(
        "`{loop_}` gives {found} at position {at} once its places are read back, not the \
         item this saga suspended at: its iterator is made again after a restore, so it \
         must give the same items in the same order (not a HashMap's or HashSet's order, \
         no counter or clock in a closure), and this build's loop must be the same"
    ))
}

/// A value pushed, in a loop whose iterator is recomputed, onto a `Vec` that holds
/// borrows (`picked.push(t.title.as_str())`): its position in the loop and its
/// fingerprint are kept in `at`, which is saved; the value is returned to be pushed.
#[doc(hidden)]
#[inline]
pub fn pushed<P: Clone, T: Recomputed>(
    at: &mut Vec<(P, u64, u32)>,
    position: &P,
    site: u32,
    value: T,
) -> T {
    at.push((position.clone(), fingerprint(&value), site));
    value
}

/// The positions [`pushed`] keeps for a loop over `collection` that saves where it is
/// (`for t in open.iter()`), typed by where such a loop is: none yet.
#[doc(hidden)]
pub fn positions_in<C: SavedOrder + ?Sized>(
    _collection: &C,
) -> Vec<(<C::Cursor as Cursor>::At, u64, u32)> {
    Vec::new()
}

/// [`pushed_again`] for a loop that saves where it is: each value made from the item
/// `find` finds at its position (the loop's `item_at` over its collection borrowed again).
///
/// # Panics
///
/// As [`pushed_again`].
#[doc(hidden)]
pub fn pushed_found<P, X, T, F, M>(
    at: &[(P, u64, u32)],
    mut find: F,
    mut make: M,
    local: &str,
) -> Vec<T>
where
    F: FnMut(&P) -> Option<X>,
    M: FnMut(u32, X) -> T,
    T: Recomputed,
{
    at.iter()
        .enumerate()
        .map(|(index, (position, seen, site))| {
            let Some(item) = find(position) else {
                pushed_otherwise(local, index)
            };
            let value = make(*site, item);
            if !fingerprints_as(&value, *seen) {
                pushed_otherwise(local, index)
            }
            value
        })
        .collect()
}

/// The `Vec` the values [`pushed`] made, made again: each from the item at its position
/// in a new iterator of the loop (`items`), by the push's own expression (`make`), and
/// checked by its fingerprint. Empty where the `let` first runs, when nothing was pushed.
///
/// # Panics
///
/// Unwinds with the refusal of a state read otherwise (`-32602`, naming `local`) when a
/// value differs or the iterator ends before its position.
#[doc(hidden)]
pub fn pushed_again<I, T, F>(
    at: &[(usize, u64, u32)],
    mut items: Live<I>,
    mut make: F,
    local: &str,
) -> Vec<T>
where
    I: Iterator,
    I::Item: Clone,
    T: Recomputed,
    F: FnMut(u32, I::Item) -> T,
{
    let mut values = Vec::with_capacity(at.len());
    // One item may have given several values: the last found is kept.
    let mut current: Option<(usize, I::Item)> = None;
    for (index, &(position, seen, site)) in at.iter().enumerate() {
        let item = match &current {
            Some((found, item)) if *found == position => item.clone(),
            _ => {
                let Some(item) = items.at(position) else {
                    pushed_otherwise(local, index)
                };
                current = Some((position, item.clone()));
                item
            }
        };
        let value = make(site, item);
        if !fingerprints_as(&value, seen) {
            pushed_otherwise(local, index)
        }
        values.push(value);
    }
    values
}

/// A push's number the saved state names that this build's loop does not have (a build
/// with fewer pushes in the loop read the state): refused as a value made otherwise.
///
/// # Panics
///
/// Always: unwinds with the refusal of a state read otherwise (`-32602`, naming `local`).
#[doc(hidden)]
#[cold]
pub fn pushed_elsewhere(local: &str, site: u32) -> ! {
    refuse_other_value(format!(
        "`{local}` holds borrows pushed in a loop, made again after a restore by the push          that made each; the saved state names push {site}, which this build's loop does          not have: this build's loop and pushes must be the same"
    ))
}

#[cold]
fn pushed_otherwise(local: &str, index: usize) -> ! {
    refuse_other_value(format!(
        "`{local}` holds borrows pushed in a loop, so each is made again after a restore \
         from the loop's item where it was pushed, and its value {index} differs \
         once the loop's places are read back: the loop must give the same items in the \
         same order (not a HashMap's or HashSet's order, no counter or clock in a \
         closure), and this build's loop and push must be the same"
    ))
}

/// A `let` that holds a borrow, evaluated as written: its fingerprint is kept in `seen`
/// (saved at a suspension), so that the value recomputed after a restore is checked.
#[doc(hidden)]
#[inline]
pub fn recomputed<T: Recomputed>(seen: &mut u64, value: T) -> T {
    *seen = fingerprint(&value);
    value
}

/// [`recomputed`] after a restore: the value made again must fingerprint as the one the
/// saga suspended with.
///
/// # Panics
///
/// Unwinds with the refusal of a state read otherwise (`-32602`, naming `local`) when it
/// does not.
#[doc(hidden)]
pub fn recomputed_again<T: Recomputed>(seen: &mut u64, value: T, local: &str) -> T {
    if !fingerprints_as(&value, *seen) {
        recomputed_otherwise(local)
    }
    value
}

#[cold]
fn recomputed_otherwise(local: impl Display) -> ! {
    refuse_other_value(format!(
        "`{local}` holds a borrow, so it is computed again after a restore, and gives \
         another value once its places are read back: the expression that makes it must \
         give the same value from the same places (not a HashMap's or HashSet's order, no \
         counter or clock), and this build's expression must be the same"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_iterator_walks_once_and_a_new_one_skips_to_the_position() {
        let items = [10, 20, 30, 40];
        let mut seen = 0;
        let mut walk = live(items.iter());
        assert_eq!(live_item_at(&0, &mut seen, &mut walk, ""), Some(&10));
        assert_eq!(live_item_at(&1, &mut seen, &mut walk, ""), Some(&20));
        // A restore: a new iterator, advanced to the position and checked.
        let mut again = live(items.iter());
        assert_eq!(
            live_item_again(&1, &mut seen, &mut again, "for x in v"),
            Some(&20)
        );
        assert_eq!(live_item_at(&2, &mut seen, &mut again, ""), Some(&30));
        assert_eq!(live_item_at(&4, &mut seen, &mut again, ""), None);
    }

    #[test]
    fn another_item_or_none_at_the_position_is_refused() {
        let items = [1, 2, 3];
        let mut seen = 0;
        live_item_at(&1, &mut seen, &mut live(items.iter()), "");
        for (other, at) in [([1, 9, 3], 1), ([1, 2, 3], 7)] {
            let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                live_item_again(
                    &at,
                    &mut seen.clone(),
                    &mut live(other.iter()),
                    "for x in v",
                )
            }));
            assert!(refused.is_err(), "position {at} of {other:?}");
        }
    }

    #[test]
    fn values_pushed_are_made_again_from_their_positions_and_checked() {
        let items = ["a", "bb", "ccc", "dddd"];
        let mut at = Vec::new();
        let mut pushed_values = Vec::new();
        for (position, item) in items.iter().enumerate() {
            if item.len() % 2 == 0 {
                // Twice from one item, by two pushes of the loop (sites 0 and 1).
                pushed_values.push(pushed(&mut at, &position, 0, *item));
                pushed_values.push(pushed(&mut at, &position, 1, &item[1..]));
            }
        }
        let make = |site: u32, item: &&'static str| if site == 0 { *item } else { &item[1..] };
        let made = pushed_again(&at, live(items.iter()), make, "picked");
        assert_eq!(made, pushed_values);
        // Another make of the same positions: refused, never taken as the values pushed.
        for other in [["a", "bx", "ccc", "dddd"].as_slice(), &["a", "bb"]] {
            let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pushed_again(&at, live(other.iter()), make, "picked")
            }));
            assert!(refused.is_err(), "{other:?}");
        }
        let none: Vec<&str> = pushed_again(&[], live(items.iter()), make, "picked");
        assert!(none.is_empty());
        // A build whose loop has one push fewer reads the state: push 1 is refused, as the
        // expansion's make refuses a number it does not have.
        let fewer = |site: u32, item: &&'static str| match site {
            0 => *item,
            other => pushed_elsewhere("picked", other),
        };
        let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pushed_again(&at, live(items.iter()), fewer, "picked")
        }));
        let payload = refused.expect_err("refused");
        let refusal = payload
            .downcast_ref::<crate::engine::expand::refusal::OtherConstants>()
            .expect("a refusal, not a panic of its own");
        assert!(refusal.to_string().contains("push 1"), "{refusal}");
    }

    /// A value neither postcard nor JSON encodes whole: never taken as the one kept.
    struct Unwritable;

    impl Serialize for Unwritable {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("cannot be written"))
        }
    }

    #[test]
    fn a_value_that_cannot_be_fingerprinted_is_refused_when_checked() {
        let mut seen = 0;
        recomputed(&mut seen, Unwritable);
        assert_eq!(seen, UNFINGERPRINTED);
        let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            recomputed_again(&mut seen, Unwritable, "kept")
        }));
        assert!(refused.is_err());
        // A float's every bit counts: NaN and infinity are told apart (JSON writes both
        // as `null`).
        assert_ne!(fingerprint(&f64::NAN), fingerprint(&f64::INFINITY));
    }

    #[test]
    fn a_recomputed_value_is_checked_against_its_fingerprint() {
        let mut seen = 0;
        assert_eq!(recomputed(&mut seen, "abc"), "abc");
        assert_eq!(recomputed_again(&mut seen, "abc", "picked"), "abc");
        let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            recomputed_again(&mut seen, "abd", "picked")
        }));
        assert!(refused.is_err());
    }
}
