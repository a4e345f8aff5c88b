//! Where the memory store keeps the bytes of recorded outcomes: appended to pages, in the
//! order they are recorded, a page given back once none of its outcomes is held.
//!
//! Why not a `Vec` an outcome: every recorded outcome lives for its token's lifetime (ten
//! minutes by default) among the request path's short-lived allocations, and the system
//! allocator (glibc's) paid for the mix on every allocation of every request: under load,
//! a server recording outcomes spent about 1.5× the plain path's CPU, most of the excess in
//! `malloc` and `malloc_consolidate`, against 1.07× with the same work and one byte kept an
//! outcome (issue 99, BENCHMARKS.md). Pages are few and large, and go in the order they
//! came, as outcomes expire.
//!
//! A page is held while any outcome in it is: its bytes count against the store's bound
//! on outcomes whole ([`Pages::held_after`]), so that the bound is on the memory kept, not
//! only on the live outcomes' bytes.

use std::collections::VecDeque;

/// A page's size when the bound allows it: large enough that pages are rare.
const PAGE: usize = 256 << 10;

/// An outcome's place: its page (numbered from the first ever made) and its bytes there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Slot {
    page: u64,
    start: usize,
    len: usize,
}

impl Slot {
    /// The outcome's length.
    pub(super) fn len(&self) -> usize {
        self.len
    }
}

#[derive(Debug)]
struct Page {
    bytes: Vec<u8>,
    /// Outcomes of this page still held.
    live: usize,
}

/// The pages of one store.
#[derive(Debug, Default)]
pub(super) struct Pages {
    /// Oldest first; `pages[0]` is page number `first`.
    pages: VecDeque<Page>,
    first: u64,
    /// Bytes of every page held, whatever its outcomes.
    held: usize,
}

impl Pages {
    /// Bytes of every page held: the memory the store's outcomes keep.
    #[cfg(test)]
    pub(super) fn held(&self) -> usize {
        self.held
    }

    /// The bytes [`Pages::push`] of `len` bytes would hold, under a bound of `max`.
    pub(super) fn held_after(&self, len: usize, max: usize) -> usize {
        if self.fits(len) {
            self.held
        } else {
            self.held + self.page_len(len, max)
        }
    }

    /// Keeps `outcome`, on the last page if it fits, else on a new page sized for a bound
    /// of `max` bytes (a page is never larger than the bound, unless one outcome is).
    pub(super) fn push(&mut self, outcome: &[u8], max: usize) -> Slot {
        if !self.fits(outcome.len()) {
            let bytes = Vec::with_capacity(self.page_len(outcome.len(), max));
            // What the allocation holds, which is at least what was asked: given back
            // as counted.
            self.held += bytes.capacity();
            self.pages.push_back(Page { bytes, live: 0 });
        }
        let page = self.first + self.pages.len() as u64 - 1;
        let mut start = 0;
        if let Some(last) = self.pages.back_mut() {
            start = last.bytes.len();
            last.bytes.extend_from_slice(outcome);
            last.live += 1;
        }
        Slot {
            page,
            start,
            len: outcome.len(),
        }
    }

    /// The bytes kept at `slot`; empty for a slot these pages do not hold (never given
    /// by them: an outcome that does not open is refused, never another's read).
    pub(super) fn get(&self, slot: Slot) -> &[u8] {
        self.page(slot.page)
            .and_then(|page| page.bytes.get(slot.start..slot.start + slot.len))
            .unwrap_or_default()
    }

    /// Gives `slot` up; the pages no outcome holds any more, from the oldest, go.
    pub(super) fn release(&mut self, slot: Slot) {
        let index = slot
            .page
            .checked_sub(self.first)
            .and_then(|index| usize::try_from(index).ok());
        if let Some(page) = index.and_then(|index| self.pages.get_mut(index)) {
            debug_assert!(page.live > 0, "a slot released twice");
            page.live = page.live.saturating_sub(1);
        }
        // Emptied pages go from the oldest on, the last one too (the next outcome starts
        // a page numbered on, so that no slot of what it held reads another's bytes).
        while self.pages.front().is_some_and(|page| page.live == 0) {
            if let Some(page) = self.pages.pop_front() {
                // Numbered on first: the pages' numbers never disagree with their places.
                self.first += 1;
                self.held = self.held.saturating_sub(page.bytes.capacity());
            }
        }
    }

    fn page(&self, number: u64) -> Option<&Page> {
        let index = number.checked_sub(self.first)?;
        self.pages.get(usize::try_from(index).ok()?)
    }

    fn fits(&self, len: usize) -> bool {
        self.pages
            .back()
            .is_some_and(|page| page.bytes.capacity() - page.bytes.len() >= len)
    }

    /// A new page's length for an outcome of `len` bytes under a bound of `max`: at most
    /// a sixteenth of the bound (so that a small bound is still given back a page at a
    /// time), and no more than the room the bound leaves, but never less than the outcome.
    fn page_len(&self, len: usize, max: usize) -> usize {
        let room = max.saturating_sub(self.held);
        PAGE.min(max / 16).min(room).max(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_read_back_until_released_and_pages_go_oldest_first() {
        let mut pages = Pages::default();
        let max = 1 << 30;
        let slots: Vec<Slot> = (0..2000u32)
            .map(|n| pages.push(&[n as u8; 300], max))
            .collect();
        assert_eq!(pages.held(), 3 * PAGE, "600,000 bytes in three pages");
        for (n, slot) in slots.iter().enumerate() {
            assert_eq!(pages.get(*slot), &[n as u8; 300][..]);
        }
        // The first page's outcomes released, but one: it stays.
        let per_page = PAGE / 300;
        for slot in &slots[1..per_page] {
            pages.release(*slot);
        }
        assert_eq!(pages.held(), 3 * PAGE);
        assert_eq!(pages.get(slots[0]), &[0; 300][..]);
        pages.release(slots[0]);
        assert_eq!(pages.held(), 2 * PAGE, "the first page given back");
        assert_eq!(
            pages.get(slots[0]),
            &[] as &[u8],
            "a released page reads nothing"
        );
        assert_eq!(pages.get(slots[per_page]), &[per_page as u8; 300][..]);
        for slot in &slots[per_page..] {
            pages.release(*slot);
        }
        assert_eq!(pages.held(), 0, "all given back");
        assert_eq!(pages.get(slots[1999]), &[] as &[u8]);
        // And made again, numbered on: no old slot reads a new outcome.
        let again = pages.push(b"new", max);
        assert_eq!(pages.get(again), b"new");
        assert_eq!(pages.get(slots[1999]), &[] as &[u8]);
    }

    #[test]
    fn a_page_is_no_larger_than_the_bound_unless_one_outcome_is() {
        let mut pages = Pages::default();
        // A bound of 150: pages of a sixteenth (9 bytes) or the outcome's own length.
        assert_eq!(pages.held_after(100, 150), 100);
        let one = pages.push(&[1; 100], 150);
        assert_eq!(pages.held(), 100);
        assert_eq!(pages.held_after(40, 150), 140, "the room the bound leaves");
        assert_eq!(
            pages.held_after(100, 150),
            200,
            "past the bound: refused by the store"
        );
        let large = pages.push(&[2; 1000], 150);
        assert_eq!(pages.held(), 1100);
        assert_eq!(pages.get(one), &[1; 100][..]);
        assert_eq!(pages.get(large), &[2; 1000][..]);
        // A bound of 1 MiB: pages of 64 KiB, so that it is given back a sixteenth at a
        // time; the last no larger than the room left.
        let mut pages = Pages::default();
        let max = 1 << 20;
        assert_eq!(pages.held_after(10, max), 64 << 10);
        let slots: Vec<Slot> = (0..16 * 64).map(|_| pages.push(&[7; 1024], max)).collect();
        assert_eq!(pages.held(), max);
        assert_eq!(pages.held_after(1024, max), max + 1024);
        for slot in &slots[..64] {
            pages.release(*slot);
        }
        assert_eq!(pages.held(), max - (64 << 10), "the oldest page given back");
        assert_eq!(pages.held_after(1024, max), max);
    }
}
