//! Optional single use: each token can be redeemed once.
//!
//! Stateless tokens can be replayed: a client (or anyone who saw a token) may present the
//! same `requestState` twice and run the same transition twice. Where that matters (a
//! step with side effects), a server can record each token's nonce when it is redeemed,
//! before the step runs, and refuse it the second time. A call's earlier tokens are
//! retired too, once it hands out a newer one or ends: each chain of tokens
//! ([`Link`]) has a floor below which none is redeemed. The price is state on the server
//! side, shared by every replica: [`MemoryStore`] for one process, [`RedisStore`] (feature
//! `redis`) for several.
//!
//! A store that records outcomes ([`TokenStore::records_outcomes`]: every store of saga's)
//! also keeps, for each token a client presented, what its request answered, sealed as the
//! token is, until the token would have expired. A client that sends the same request
//! again (its response was lost) gets that answer again, and the round does not run twice
//! ([`Claim`]).

use super::pages::{Pages, Slot};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Mutex;

use saga_wire::Link;
use saga_wire::unix_now;

use futures::future::BoxFuture;

/// Why a store could not record a token, or keep a state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store holds as much as it may; it refuses rather than forget a token that could
    /// still be replayed, or a state a live token refers to.
    #[error("the store is full")]
    Full,
    /// The store could not be reached.
    #[error("the store is unavailable: {0}")]
    Unavailable(String),
    /// What the caller's quota owner (a verified principal, or a pool of unverified
    /// callers) may keep in the store is spent; the message says which bound.
    #[error("{0}")]
    Quota(String),
}

/// What a store knows of a token presented to run its round ([`TokenStore::claim`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Claim {
    /// Never redeemed before: it is now, and the round is this request's to run until
    /// the lease it was claimed with.
    First,
    /// Redeemed by a request that has answered: its outcome, sealed, as
    /// [`TokenStore::record`] was given it.
    Recorded(Vec<u8>),
    /// Redeemed by a request that has not answered yet, which holds the round until
    /// `lease_until` (unix seconds).
    Running {
        /// When the request that holds it is past its run-time bound.
        lease_until: u64,
    },
    /// Redeemed, with no outcome to answer from (redeemed without one, its outcome not
    /// kept, or retired below its chain's floor): refused.
    Spent,
}

/// Records redeemed tokens, and how far each call's chain of tokens is retired.
///
/// [`redeem`](TokenStore::redeem) and [`retire`](TokenStore::retire) are the single-use
/// contract; [`claim`](TokenStore::claim) and [`record`](TokenStore::record), which a
/// store of one's own may leave to their defaults, let a client's retry of a request
/// whose response was lost get that response again (see [`Claim`]).
pub trait TokenStore: Send + Sync + std::fmt::Debug + 'static {
    /// Marks the token `id` (its nonce) redeemed until `keep_until` (unix seconds).
    /// `Ok(true)` the first time, `Ok(false)` if it was redeemed before or its link
    /// ([`Link::of_nonce`]) is below its chain's floor. Both checks and the mark are one
    /// atomic step.
    fn redeem<'a>(
        &'a self,
        id: &'a [u8; 24],
        keep_until: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Raises the floor of `chain` to `floor` (a floor never goes down), kept until
    /// `keep_until`: its tokens of lower sequence numbers are refused from now on.
    fn retire<'a>(
        &'a self,
        chain: &'a [u8; 8],
        floor: u64,
        keep_until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Whether the store keeps the outcomes [`TokenStore::record`] is given. `false` by
    /// default: a token is then redeemed once, and a retry refused.
    fn records_outcomes(&self) -> bool {
        false
    }

    /// Redeems the token `id` for a request that will record its outcome: what the store
    /// holds of it if it was redeemed before (whatever its chain's floor now says: the
    /// request that redeemed it may itself have retired it), else, if its chain's floor
    /// allows, marks it running until `lease_until` and answers [`Claim::First`]. One
    /// atomic step, as [`TokenStore::redeem`]. By default: [`TokenStore::redeem`], which
    /// knows no outcome.
    fn claim<'a>(
        &'a self,
        id: &'a [u8; 24],
        keep_until: u64,
        lease_until: u64,
    ) -> BoxFuture<'a, Result<Claim, StoreError>> {
        let _ = lease_until;
        Box::pin(async move {
            Ok(match self.redeem(id, keep_until).await? {
                true => Claim::First,
                false => Claim::Spent,
            })
        })
    }

    /// What the store holds of the token `id`, read only: [`Claim::Recorded`],
    /// [`Claim::Running`], or [`Claim::Spent`] (also when it holds nothing: a request
    /// waiting for another's outcome never takes the round for itself). By default
    /// [`Claim::Spent`].
    fn held<'a>(&'a self, id: &'a [u8; 24]) -> BoxFuture<'a, Result<Claim, StoreError>> {
        let _ = id;
        Box::pin(std::future::ready(Ok(Claim::Spent)))
    }

    /// Keeps `outcome` (sealed, never empty) for the token `id` this process claimed,
    /// until `keep_until`; an empty `outcome` says none is kept (the token is then
    /// [`Claim::Spent`]). By default nothing is kept.
    fn record<'a>(
        &'a self,
        id: &'a [u8; 24],
        outcome: &'a [u8],
        keep_until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let _ = (id, outcome, keep_until);
        Box::pin(std::future::ready(Ok(())))
    }

    /// Whether the store renews a running claim's lease ([`TokenStore::renew`]) and takes
    /// over one whose lease ran out ([`TokenStore::take_over`]). Such a store's claims are
    /// held for a short lease that the runner renews while its round runs, so that a
    /// runner that died (its process killed) is found in seconds, and a retry of its
    /// request runs the round again from the same token, its effects under the same keys.
    /// `false` by default: a claim is then held for the server's whole lease
    /// ([`StateCodec::with_outcome_lease`](super::StateCodec::with_outcome_lease)), and a
    /// retry past it is refused.
    fn leases_renewed(&self) -> bool {
        false
    }

    /// Extends the lease of the token `id`, claimed and still running (no outcome
    /// recorded), to `lease_until` (unix seconds; 0 gives the round back at once:
    /// the next claim takes it over). `Ok(false)` if it does not hold `id` so.
    fn renew<'a>(
        &'a self,
        id: &'a [u8; 24],
        lease_until: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let _ = (id, lease_until);
        Box::pin(std::future::ready(Ok(false)))
    }

    /// Takes over the token `id`, held running until `expired` (a lease that ran out:
    /// its runner died, or gave the round back): marks it running until `lease_until`, in
    /// one atomic step that fails if anything else changed it meanwhile (another retry
    /// took it over, its runner renewed it or recorded its outcome). `Ok(true)` if this
    /// request now holds the round.
    fn take_over<'a>(
        &'a self,
        id: &'a [u8; 24],
        expired: u64,
        lease_until: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let _ = (id, expired, lease_until);
        Box::pin(std::future::ready(Ok(false)))
    }
}

/// A store chosen at run time (memory for one process, Redis for replicas).
impl TokenStore for Box<dyn TokenStore> {
    fn redeem<'a>(
        &'a self,
        id: &'a [u8; 24],
        keep_until: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.as_ref().redeem(id, keep_until)
    }

    fn retire<'a>(
        &'a self,
        chain: &'a [u8; 8],
        floor: u64,
        keep_until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.as_ref().retire(chain, floor, keep_until)
    }

    fn records_outcomes(&self) -> bool {
        self.as_ref().records_outcomes()
    }

    fn claim<'a>(
        &'a self,
        id: &'a [u8; 24],
        keep_until: u64,
        lease_until: u64,
    ) -> BoxFuture<'a, Result<Claim, StoreError>> {
        self.as_ref().claim(id, keep_until, lease_until)
    }

    fn held<'a>(&'a self, id: &'a [u8; 24]) -> BoxFuture<'a, Result<Claim, StoreError>> {
        self.as_ref().held(id)
    }

    fn record<'a>(
        &'a self,
        id: &'a [u8; 24],
        outcome: &'a [u8],
        keep_until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.as_ref().record(id, outcome, keep_until)
    }

    fn leases_renewed(&self) -> bool {
        self.as_ref().leases_renewed()
    }

    fn renew<'a>(
        &'a self,
        id: &'a [u8; 24],
        lease_until: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.as_ref().renew(id, lease_until)
    }

    fn take_over<'a>(
        &'a self,
        id: &'a [u8; 24],
        expired: u64,
        lease_until: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.as_ref().take_over(id, expired, lease_until)
    }
}

/// What a database's row of a redeemed token's outcome says (its lease, its outcome; no
/// row: spent).
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(super) fn held_claim(row: Option<(Option<i64>, Option<Vec<u8>>)>) -> Claim {
    match row {
        Some((_, Some(outcome))) if !outcome.is_empty() => Claim::Recorded(outcome),
        Some((Some(lease_until), None)) => Claim::Running {
            lease_until: u64::try_from(lease_until).unwrap_or(0),
        },
        _ => Claim::Spent,
    }
}

/// How many redeems pass between two sweeps, in a database store, of the rows no token
/// can use any more.
const SWEEP_EVERY: u64 = 1024;

/// Whether this redeem also sweeps: one in [`SWEEP_EVERY`], counted per process.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(super) fn sweep_due() -> bool {
    static REDEEMS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    REDEEMS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1
}

/// An in-process store of at most `capacity` live tokens and chain floors together, and
/// of at most [`MemoryStore::DEFAULT_OUTCOME_BYTES`] of recorded outcomes (global: every
/// caller's together; see [`MemoryStore::with_outcome_bytes`]).
///
/// It forgets what expired as new entries come (a few with each), so that it holds what
/// is live; when full, it forgets every entry that has expired, and if none has, it
/// refuses the new one: it never forgets a token that could still be replayed. Either way
/// the work is in proportion to what expired, never to what it holds. An outcome past its
/// bytes is not kept (its token is then refused, as without outcomes).
///
/// ```
/// # tokio_test_block(async {
/// use saga_runtime::state::{MemoryStore, TokenStore};
/// let store = MemoryStore::new(1);
/// let far = u64::MAX;
/// assert_eq!(store.redeem(&[1; 24], far).await, Ok(true));
/// assert_eq!(store.redeem(&[1; 24], far).await, Ok(false));
/// assert!(store.redeem(&[2; 24], far).await.is_err(), "full, and nothing has expired");
/// # });
/// # fn tokio_test_block(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Debug)]
pub struct MemoryStore {
    capacity: usize,
    max_outcome_bytes: usize,
    entries: Mutex<Entries>,
}

/// Redeemed nonces and chain floors, each with the unix second it may be forgotten at.
#[derive(Debug, Default)]
struct Entries {
    redeemed: HashMap<[u8; 24], Used, Drawn>,
    floors: HashMap<[u8; 8], (u64, u64), Drawn>,
    /// Bytes of the outcomes held.
    outcome_bytes: usize,
    /// The outcomes' bytes (see the `pages` module for why not a `Vec` each).
    pages: Pages,
    /// Every entry under the second it was to be forgotten at when it was queued, soonest
    /// first: the store forgets what expired a few entries at a time as new ones come
    /// ([`SWEPT_PER_INSERT`]), so that it holds what is live rather than filling up with
    /// the expired; and a full store finds room, or finds none, without visiting every
    /// entry under its lock (a scan of millions at every refused request, when it was
    /// full of live tokens). An entry kept longer since it was queued is queued again at
    /// its new second when its old one comes.
    expiries: BinaryHeap<Reverse<(u64, Expiring)>>,
}

/// The hasher of [`Entries`]' maps. Their keys are nonces and chains that the server drew
/// at random and sealed into tokens, and a token is claimed only once it has opened, so a
/// client cannot choose one: their bytes are hashed as they come, folded in eight at a
/// time (FxHash's step). SipHash, which resists keys chosen to collide, was a third of
/// the cost of claiming and recording a round (issue 99). A chain is retired
/// (`StateCodec::retire_token`, which reads it from a token's header without opening
/// it) only for tokens that opened or that the server sealed itself: given a client's
/// unopened token, it would let the client choose keys of `floors`, and flood this map.
#[derive(Debug, Default, Clone, Copy)]
struct Drawn;

impl std::hash::BuildHasher for Drawn {
    type Hasher = Folded;

    fn build_hasher(&self) -> Folded {
        Folded(0)
    }
}

/// [`Drawn`]'s hasher.
struct Folded(u64);

impl std::hash::Hasher for Folded {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// An entry of [`Entries`], as its expiry queue names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Expiring {
    Token([u8; 24]),
    Floor([u8; 8]),
}

/// How many expired entries an insert forgets at most, besides making its own room: more
/// than one, so that the store's expired entries shrink while it grows.
const SWEPT_PER_INSERT: usize = 2;

/// A redeemed token: until when it is kept, and what is known of its round.
#[derive(Debug)]
struct Used {
    until: u64,
    held: ClaimState,
}

#[derive(Debug)]
enum ClaimState {
    Spent,
    Running(u64),
    Recorded(Slot),
}

impl ClaimState {
    fn bytes(&self) -> usize {
        match self {
            ClaimState::Recorded(slot) => slot.len(),
            _ => 0,
        }
    }

    fn claim(&self, pages: &Pages) -> Claim {
        match self {
            ClaimState::Spent => Claim::Spent,
            ClaimState::Running(lease_until) => Claim::Running {
                lease_until: *lease_until,
            },
            ClaimState::Recorded(slot) => Claim::Recorded(pages.get(*slot).to_vec()),
        }
    }
}

impl Entries {
    fn len(&self) -> usize {
        self.redeemed.len() + self.floors.len()
    }

    /// Room for one more, forgetting expired entries if there is none; and a few expired
    /// ones anyway ([`SWEPT_PER_INSERT`]).
    fn room(&mut self, capacity: usize, now: u64) -> Result<(), StoreError> {
        self.forget_expired(now, SWEPT_PER_INSERT);
        if self.len() >= capacity {
            self.forget_expired(now, usize::MAX);
            if self.len() >= capacity {
                return Err(StoreError::Full);
            }
        }
        Ok(())
    }

    /// Queues `entry`, to be forgotten after `until`.
    fn expires(&mut self, until: u64, entry: Expiring) {
        self.expiries.push(Reverse((until, entry)));
    }

    /// Forgets up to `at_most` entries that expired before `now`, soonest first: each
    /// visited costs a pop of the queue, whatever the store holds.
    fn forget_expired(&mut self, now: u64, at_most: usize) {
        let mut forgotten = 0;
        while forgotten < at_most {
            match self.expiries.peek() {
                Some(Reverse((until, _))) if *until < now => {}
                _ => return,
            }
            let Some(Reverse((_, entry))) = self.expiries.pop() else {
                return;
            };
            // What the entry says now: kept longer since it was queued (its outcome
            // recorded, its floor raised), or replaced after it expired, it is queued
            // again at its own second; forgotten already, there is nothing to do.
            let until = match entry {
                Expiring::Token(id) => self.redeemed.get(&id).map(|used| used.until),
                Expiring::Floor(chain) => self.floors.get(&chain).map(|(_, until)| *until),
            };
            match until {
                Some(until) if until < now => {
                    match entry {
                        Expiring::Token(id) => {
                            if let Some(used) = self.redeemed.remove(&id) {
                                self.let_go(&used.held);
                            }
                        }
                        Expiring::Floor(chain) => {
                            self.floors.remove(&chain);
                        }
                    }
                    forgotten += 1;
                }
                Some(until) => self.expires(until, entry),
                None => {}
            }
        }
    }

    /// Gives up what `held` keeps of an outcome: its bytes, and its place in a page.
    fn let_go(&mut self, held: &ClaimState) {
        if let ClaimState::Recorded(slot) = held {
            self.outcome_bytes -= slot.len();
            self.pages.release(*slot);
        }
    }

    /// Whether the token `id` is below its chain's floor.
    fn retired(&self, id: &[u8; 24], now: u64) -> bool {
        let link = Link::of_nonce(id);
        self.floors
            .get(&link.chain)
            .is_some_and(|(floor, until)| *until >= now && u64::from(link.seq) < *floor)
    }

    /// What is held of the token `id`, if it is, and its entry has not expired.
    fn held(&self, id: &[u8; 24], now: u64) -> Option<&ClaimState> {
        self.redeemed
            .get(id)
            .filter(|used| used.until >= now)
            .map(|used| &used.held)
    }
}

impl MemoryStore {
    /// The bytes of recorded outcomes a store holds at most, unless set otherwise: 64 MiB.
    pub const DEFAULT_OUTCOME_BYTES: usize = 64 << 20;

    /// A store of at most `capacity` live tokens.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            max_outcome_bytes: Self::DEFAULT_OUTCOME_BYTES,
            entries: Mutex::default(),
        }
    }

    /// Holds at most `bytes` of recorded outcomes, every caller's together (0: none is
    /// kept, and a retried token is refused as without outcomes). Outcomes are kept in
    /// pages of up to 256 KiB, in the order recorded, and the bound counts the pages whole:
    /// it is on the memory they keep.
    pub fn with_outcome_bytes(mut self, bytes: usize) -> Self {
        self.max_outcome_bytes = bytes;
        self
    }

    /// Bytes of the recorded outcomes it holds. The pages they are kept in, which its
    /// bound counts, may hold more: a page is given back once none of its outcomes is held
    /// (see [`MemoryStore::with_outcome_bytes`]).
    pub fn outcome_bytes(&self) -> usize {
        self.entries().outcome_bytes
    }

    /// How many tokens and chain floors it holds.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        // A poisoned lock only means another request panicked mid-insert; the maps are
        // still valid maps.
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Sets the lease of `id` if it is held running (and, given `expected`, until exactly
    /// that): whether it was.
    fn set_lease(&self, id: &[u8; 24], expected: Option<u64>, lease_until: u64) -> bool {
        let now = unix_now();
        let mut entries = self.entries();
        match entries.redeemed.get_mut(id) {
            Some(Used {
                until,
                held: ClaimState::Running(lease),
            }) if *until >= now && expected.is_none_or(|expected| expected == *lease) => {
                *lease = lease_until;
                true
            }
            _ => false,
        }
    }

    fn redeem_now(&self, id: &[u8; 24], keep_until: u64, now: u64) -> Result<bool, StoreError> {
        Ok(self.claim_now(id, keep_until, None, now)? == Claim::First)
    }

    /// Redeems `id`; marked running until `lease_until` if given, else spent at once.
    fn claim_now(
        &self,
        id: &[u8; 24],
        keep_until: u64,
        lease_until: Option<u64>,
        now: u64,
    ) -> Result<Claim, StoreError> {
        let mut entries = self.entries();
        if let Some(held) = entries.held(id, now) {
            return Ok(held.claim(&entries.pages));
        }
        if entries.retired(id, now) {
            return Ok(Claim::Spent);
        }
        entries.room(self.capacity, now)?;
        let held = match lease_until {
            Some(lease_until) => ClaimState::Running(lease_until),
            None => ClaimState::Spent,
        };
        // An expired entry of the same nonce is replaced: its token is refused before it
        // is redeemed.
        if let Some(old) = entries.redeemed.insert(
            *id,
            Used {
                until: keep_until,
                held,
            },
        ) {
            entries.let_go(&old.held);
        }
        entries.expires(keep_until, Expiring::Token(*id));
        Ok(Claim::First)
    }

    fn record_now(
        &self,
        id: &[u8; 24],
        outcome: &[u8],
        keep_until: u64,
        now: u64,
    ) -> Result<(), StoreError> {
        let mut entries = self.entries();
        let Some(used) = entries.redeemed.get_mut(id) else {
            return Ok(());
        };
        // What it held before (an outcome recorded again) is given up first.
        let old = std::mem::replace(&mut used.held, ClaimState::Spent);
        entries.let_go(&old);
        let max = self.max_outcome_bytes;
        let mut full = false;
        let held = if outcome.is_empty() {
            ClaimState::Spent
        } else {
            // The bound is on the pages' bytes: the memory the outcomes keep.
            if entries.pages.held_after(outcome.len(), max) > max {
                entries.forget_expired(now, usize::MAX);
            }
            if entries.pages.held_after(outcome.len(), max) > max {
                full = true;
                ClaimState::Spent
            } else {
                ClaimState::Recorded(entries.pages.push(outcome, max))
            }
        };
        let added = held.bytes();
        let Some(used) = entries.redeemed.get_mut(id) else {
            // Forgotten meanwhile (it expired): nothing is kept for it.
            if let ClaimState::Recorded(slot) = held {
                entries.pages.release(slot);
            }
            return Ok(());
        };
        used.held = held;
        used.until = used.until.max(keep_until);
        entries.outcome_bytes += added;
        if full {
            return Err(StoreError::Full);
        }
        Ok(())
    }

    fn retire_now(
        &self,
        chain: &[u8; 8],
        floor: u64,
        keep_until: u64,
        now: u64,
    ) -> Result<(), StoreError> {
        let mut entries = self.entries();
        if let Some((held, until)) = entries.floors.get_mut(chain)
            && *until >= now
        {
            *held = (*held).max(floor);
            *until = (*until).max(keep_until);
            return Ok(());
        }
        entries.room(self.capacity, now)?;
        entries.floors.insert(*chain, (floor, keep_until));
        entries.expires(keep_until, Expiring::Floor(*chain));
        Ok(())
    }
}

impl TokenStore for MemoryStore {
    fn redeem<'a>(
        &'a self,
        id: &'a [u8; 24],
        keep_until: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(std::future::ready(self.redeem_now(
            id,
            keep_until,
            unix_now(),
        )))
    }

    fn retire<'a>(
        &'a self,
        chain: &'a [u8; 8],
        floor: u64,
        keep_until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(std::future::ready(self.retire_now(
            chain,
            floor,
            keep_until,
            unix_now(),
        )))
    }

    fn records_outcomes(&self) -> bool {
        self.max_outcome_bytes > 0
    }

    fn claim<'a>(
        &'a self,
        id: &'a [u8; 24],
        keep_until: u64,
        lease_until: u64,
    ) -> BoxFuture<'a, Result<Claim, StoreError>> {
        Box::pin(std::future::ready(self.claim_now(
            id,
            keep_until,
            Some(lease_until),
            unix_now(),
        )))
    }

    fn held<'a>(&'a self, id: &'a [u8; 24]) -> BoxFuture<'a, Result<Claim, StoreError>> {
        let entries = self.entries();
        let held = entries
            .held(id, unix_now())
            .map_or(Claim::Spent, |held| held.claim(&entries.pages));
        Box::pin(std::future::ready(Ok(held)))
    }

    fn record<'a>(
        &'a self,
        id: &'a [u8; 24],
        outcome: &'a [u8],
        keep_until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(std::future::ready(self.record_now(
            id,
            outcome,
            keep_until,
            unix_now(),
        )))
    }

    fn leases_renewed(&self) -> bool {
        true
    }

    fn renew<'a>(
        &'a self,
        id: &'a [u8; 24],
        lease_until: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(std::future::ready(Ok(self.set_lease(
            id,
            None,
            lease_until,
        ))))
    }

    fn take_over<'a>(
        &'a self,
        id: &'a [u8; 24],
        expired: u64,
        lease_until: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(std::future::ready(Ok(self.set_lease(
            id,
            Some(expired),
            lease_until,
        ))))
    }
}

#[cfg(feature = "redis")]
pub use redis_store::RedisStore;

#[cfg(feature = "redis")]
mod redis_store {
    use super::{BoxFuture, Claim, StoreError, TokenStore};

    /// A store in Redis, shared by every replica: a redeemed token is
    /// `saga:used:<nonce> = 1`, a chain's floor `saga:used:chain:<chain> = <floor>`, each
    /// expiring (`EXAT`) when no token it guards can still be presented. A redeem checks
    /// the floor and marks the token in one script. Needs Redis 7 (`EXPIRETIME`).
    ///
    /// A token claimed to record its outcome is `r<lease>` while its round runs, then
    /// `o<outcome>` (the sealed outcome's bytes) until it expires; a build that knows no
    /// outcomes reads either as redeemed.
    #[derive(Clone)]
    pub struct RedisStore {
        connection: redis::aio::ConnectionManager,
        prefix: String,
    }

    impl std::fmt::Debug for RedisStore {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("RedisStore")
                .field("prefix", &self.prefix)
                .finish_non_exhaustive()
        }
    }

    impl RedisStore {
        /// Connects to `url` (e.g. `redis://127.0.0.1/`).
        pub async fn connect(url: &str) -> Result<Self, StoreError> {
            let client = redis::Client::open(url)
                .map_err(|error| StoreError::Unavailable(error.to_string()))?;
            let connection = redis::aio::ConnectionManager::new(client)
                .await
                .map_err(|error| StoreError::Unavailable(error.to_string()))?;
            Ok(Self {
                connection,
                prefix: "saga:used:".into(),
            })
        }

        /// Sets the key prefix (default `saga:used:`).
        pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
            self.prefix = prefix.into();
            self
        }
    }

    impl TokenStore for RedisStore {
        fn redeem<'a>(
            &'a self,
            id: &'a [u8; 24],
            keep_until: u64,
        ) -> BoxFuture<'a, Result<bool, StoreError>> {
            Box::pin(async move {
                let link = crate::state::Link::of_nonce(id);
                let mut connection = self.connection.clone();
                let redeemed: i64 = redis::Script::new(REDEEM)
                    .key(format!("{}{}", self.prefix, crate::state::hex(id)))
                    .key(self.chain_key(&link.chain))
                    .arg(link.seq)
                    .arg(keep_until.max(1))
                    .invoke_async(&mut connection)
                    .await
                    .map_err(|error| StoreError::Unavailable(error.to_string()))?;
                Ok(redeemed == 1)
            })
        }

        fn retire<'a>(
            &'a self,
            chain: &'a [u8; 8],
            floor: u64,
            keep_until: u64,
        ) -> BoxFuture<'a, Result<(), StoreError>> {
            Box::pin(async move {
                let mut connection = self.connection.clone();
                let _: i64 = redis::Script::new(RETIRE)
                    .key(self.chain_key(chain))
                    .arg(floor)
                    .arg(keep_until.max(1))
                    .invoke_async(&mut connection)
                    .await
                    .map_err(|error| StoreError::Unavailable(error.to_string()))?;
                Ok(())
            })
        }

        fn records_outcomes(&self) -> bool {
            true
        }

        fn leases_renewed(&self) -> bool {
            true
        }

        fn renew<'a>(
            &'a self,
            id: &'a [u8; 24],
            lease_until: u64,
        ) -> BoxFuture<'a, Result<bool, StoreError>> {
            Box::pin(self.set_lease(id, None, lease_until))
        }

        fn take_over<'a>(
            &'a self,
            id: &'a [u8; 24],
            expired: u64,
            lease_until: u64,
        ) -> BoxFuture<'a, Result<bool, StoreError>> {
            Box::pin(self.set_lease(id, Some(expired), lease_until))
        }

        fn claim<'a>(
            &'a self,
            id: &'a [u8; 24],
            keep_until: u64,
            lease_until: u64,
        ) -> BoxFuture<'a, Result<Claim, StoreError>> {
            Box::pin(async move {
                let link = crate::state::Link::of_nonce(id);
                let mut connection = self.connection.clone();
                let held: Vec<u8> = redis::Script::new(CLAIM)
                    .key(self.token_key(id))
                    .key(self.chain_key(&link.chain))
                    .arg(link.seq)
                    .arg(keep_until.max(1))
                    .arg(lease_until)
                    .invoke_async(&mut connection)
                    .await
                    .map_err(|error| StoreError::Unavailable(error.to_string()))?;
                Ok(Self::read_claim(&held))
            })
        }

        fn held<'a>(&'a self, id: &'a [u8; 24]) -> BoxFuture<'a, Result<Claim, StoreError>> {
            Box::pin(async move {
                let mut connection = self.connection.clone();
                let held: Option<Vec<u8>> = redis::cmd("GET")
                    .arg(self.token_key(id))
                    .query_async(&mut connection)
                    .await
                    .map_err(|error| StoreError::Unavailable(error.to_string()))?;
                Ok(match held.as_deref().map(Self::read_claim) {
                    Some(Claim::First) | None => Claim::Spent,
                    Some(claim) => claim,
                })
            })
        }

        fn record<'a>(
            &'a self,
            id: &'a [u8; 24],
            outcome: &'a [u8],
            keep_until: u64,
        ) -> BoxFuture<'a, Result<(), StoreError>> {
            Box::pin(async move {
                let mut connection = self.connection.clone();
                let held = if outcome.is_empty() {
                    b"1".to_vec()
                } else {
                    let mut held = Vec::with_capacity(outcome.len() + 1);
                    held.push(b'o');
                    held.extend_from_slice(outcome);
                    held
                };
                // `XX`: only a token still held (one whose entry expired is not written
                // again).
                let _: Option<String> = redis::cmd("SET")
                    .arg(self.token_key(id))
                    .arg(held)
                    .arg("XX")
                    .arg("EXAT")
                    .arg(keep_until.max(1))
                    .query_async(&mut connection)
                    .await
                    .map_err(|error| StoreError::Unavailable(error.to_string()))?;
                Ok(())
            })
        }
    }

    impl RedisStore {
        /// Sets the lease of the running claim `id` (given `expected`, only if it is held
        /// until exactly that): whether it was so held. One script, atomic.
        async fn set_lease(
            &self,
            id: &[u8; 24],
            expected: Option<u64>,
            lease_until: u64,
        ) -> Result<bool, StoreError> {
            let mut connection = self.connection.clone();
            let set: i64 = redis::Script::new(SET_LEASE)
                .key(self.token_key(id))
                .arg(lease_until)
                .arg(expected.map_or_else(String::new, |expected| expected.to_string()))
                .invoke_async(&mut connection)
                .await
                .map_err(|error| StoreError::Unavailable(error.to_string()))?;
            Ok(set == 1)
        }

        fn token_key(&self, id: &[u8; 24]) -> String {
            format!("{}{}", self.prefix, crate::state::hex(id))
        }

        /// What a claim's script answered, read.
        fn read_claim(held: &[u8]) -> Claim {
            match held.split_first() {
                Some((b'f', [])) => Claim::First,
                Some((b'o', outcome)) if !outcome.is_empty() => Claim::Recorded(outcome.to_vec()),
                Some((b'r', lease)) => match std::str::from_utf8(lease)
                    .ok()
                    .and_then(|lease| lease.parse().ok())
                {
                    Some(lease_until) => Claim::Running { lease_until },
                    None => Claim::Spent,
                },
                _ => Claim::Spent,
            }
        }

        fn chain_key(&self, chain: &[u8; 8]) -> String {
            format!("{}chain:{}", self.prefix, crate::state::hex(chain))
        }
    }

    /// KEYS: the token's key. ARGV: the new lease-until, the lease it must be held until
    /// (empty: any). 1 if the token was held running so and now is until the new lease
    /// (its expiry kept); else 0.
    const SET_LEASE: &str = r"
        local held = redis.call('GET', KEYS[1])
        if not held or string.sub(held, 1, 1) ~= 'r' then return 0 end
        if ARGV[2] ~= '' and string.sub(held, 2) ~= ARGV[2] then return 0 end
        redis.call('SET', KEYS[1], 'r' .. ARGV[1], 'KEEPTTL')
        return 1
    ";

    /// KEYS: the token's key, its chain's floor. ARGV: its sequence number, keep-until.
    /// 1 if redeemed now; 0 if retired or redeemed before.
    const REDEEM: &str = r"
        local floor = tonumber(redis.call('GET', KEYS[2]) or '0')
        if tonumber(ARGV[1]) < floor then return 0 end
        if redis.call('SET', KEYS[1], 1, 'NX', 'EXAT', ARGV[2]) then return 1 end
        return 0
    ";

    /// KEYS: the token's key, its chain's floor. ARGV: its sequence number, keep-until,
    /// lease-until. What the token's key holds if it was redeemed (whatever the floor
    /// says); `1` if retired; else `f`, marked running.
    const CLAIM: &str = r"
        local held = redis.call('GET', KEYS[1])
        if held then return held end
        local floor = tonumber(redis.call('GET', KEYS[2]) or '0')
        if tonumber(ARGV[1]) < floor then return '1' end
        redis.call('SET', KEYS[1], 'r' .. ARGV[3], 'EXAT', ARGV[2])
        return 'f'
    ";

    /// KEYS: the chain's floor. ARGV: the new floor, keep-until. The floor only rises,
    /// and it is kept until the later of its expiries.
    const RETIRE: &str = r"
        local held = tonumber(redis.call('GET', KEYS[1]) or '0')
        local floor = math.max(held, tonumber(ARGV[1]))
        local keep = tonumber(ARGV[2])
        local expires = redis.call('EXPIRETIME', KEYS[1])
        if expires > keep then keep = expires end
        redis.call('SET', KEYS[1], floor, 'EXAT', keep)
        return floor
    ";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_store_drops_only_expired_tokens() {
        let store = MemoryStore::new(2);
        assert_eq!(store.redeem_now(&[1; 24], 100, 50), Ok(true));
        assert_eq!(store.redeem_now(&[2; 24], 200, 50), Ok(true));
        assert_eq!(store.redeem_now(&[3; 24], 300, 50), Err(StoreError::Full));
        // At 150 the first has expired: it makes room; the second is kept.
        assert_eq!(store.redeem_now(&[3; 24], 300, 150), Ok(true));
        assert_eq!(store.redeem_now(&[2; 24], 200, 150), Ok(false));
        assert_eq!(store.len(), 2);
    }

    fn nonce(n: u32) -> [u8; 24] {
        let mut id = [0; 24];
        id[..4].copy_from_slice(&n.to_be_bytes());
        id[20..].copy_from_slice(&n.to_be_bytes());
        id
    }

    /// The store forgets what expired as new entries come, a few at a time, so that it
    /// holds what is live, never filling up with the expired (its outcomes' bytes too).
    #[test]
    fn expired_entries_are_forgotten_as_new_ones_come() {
        let store = MemoryStore::new(10_000);
        for n in 0..1000 {
            assert_eq!(
                store.claim_now(&nonce(n), 100, Some(90), 50),
                Ok(Claim::First)
            );
            store
                .record_now(&nonce(n), &[1; 100], 100, 50)
                .expect("recorded");
            store
                .retire_now(&[n as u8; 8], 1, 100, 50)
                .expect("retired");
        }
        assert_eq!(store.outcome_bytes(), 100_000);
        let before = store.len();
        // Later, every one of them has expired: each new claim forgets two.
        for n in 1000..2000 {
            assert_eq!(
                store.claim_now(&nonce(n), 300, Some(290), 200),
                Ok(Claim::First)
            );
        }
        assert_eq!(before, 1000 + 256, "1,000 tokens, 256 distinct chains");
        assert_eq!(store.len(), 1000, "only the new ones");
        assert_eq!(
            store.outcome_bytes(),
            0,
            "the expired outcomes' bytes given back"
        );
        // The new ones are live.
        assert_eq!(
            store.claim_now(&nonce(1500), 300, Some(290), 200),
            Ok(Claim::Running { lease_until: 290 })
        );
    }

    /// An entry kept longer since it was queued (its outcome recorded for longer) is not
    /// forgotten at its first second.
    #[test]
    fn an_entry_kept_longer_outlives_its_first_expiry() {
        let store = MemoryStore::new(10);
        assert_eq!(
            store.claim_now(&nonce(1), 100, Some(90), 50),
            Ok(Claim::First)
        );
        store
            .record_now(&nonce(1), b"answer", 500, 50)
            .expect("recorded");
        // At 200 its first second has passed; the sweep of a new claim re-queues it.
        for n in 2..6 {
            assert_eq!(
                store.claim_now(&nonce(n), 300, Some(290), 200),
                Ok(Claim::First)
            );
        }
        assert_eq!(
            store.claim_now(&nonce(1), 100, Some(290), 200),
            Ok(Claim::Recorded(b"answer".to_vec()))
        );
        // At 600 it has expired, and the next sweeps forget it.
        for n in 6..10 {
            assert_eq!(
                store.claim_now(&nonce(n), 900, Some(890), 600),
                Ok(Claim::First)
            );
        }
        assert_eq!(store.outcome_bytes(), 0);
    }

    /// A store full of live entries refuses at once and keeps them all; one whose entries
    /// expired takes the new one in their place.
    #[test]
    fn a_full_store_refuses_without_forgetting_a_live_entry() {
        let store = MemoryStore::new(100);
        for n in 0..100 {
            assert_eq!(
                store.redeem_now(&nonce(n), 100 + u64::from(n), 50),
                Ok(true)
            );
        }
        for n in 100..200 {
            assert_eq!(store.redeem_now(&nonce(n), 1000, 60), Err(StoreError::Full));
        }
        assert_eq!(store.len(), 100);
        for n in 0..100 {
            assert_eq!(
                store.redeem_now(&nonce(n), 100, 60),
                Ok(false),
                "{n} is kept"
            );
        }
        // At 150, the fifty that expired by then make room for fifty.
        for n in 100..150 {
            assert_eq!(store.redeem_now(&nonce(n), 1000, 150), Ok(true), "{n}");
        }
        assert_eq!(
            store.redeem_now(&nonce(150), 1000, 150),
            Err(StoreError::Full)
        );
        assert_eq!(
            store.redeem_now(&nonce(99), 100, 150),
            Ok(false),
            "still live"
        );
    }

    #[test]
    fn a_chains_floor_retires_its_earlier_tokens_and_only_rises() {
        let store = MemoryStore::new(10);
        let chain = [7u8; 8];
        let token = |seq: u32| {
            let mut nonce = [seq as u8; 24];
            nonce[..8].copy_from_slice(&chain);
            nonce[8..12].copy_from_slice(&seq.to_be_bytes());
            nonce
        };
        assert_eq!(store.retire_now(&chain, 3, 100, 50), Ok(()));
        assert_eq!(store.redeem_now(&token(2), 100, 50), Ok(false), "retired");
        assert_eq!(store.redeem_now(&token(3), 100, 50), Ok(true));
        assert_eq!(store.redeem_now(&token(3), 100, 50), Ok(false), "redeemed");
        assert_eq!(store.retire_now(&chain, 1, 100, 50), Ok(()));
        assert_eq!(
            store.redeem_now(&token(2), 100, 50),
            Ok(false),
            "the floor only rises"
        );
        assert_eq!(store.redeem_now(&token(4), 100, 50), Ok(true));
        // Another chain is not touched.
        assert_eq!(store.redeem_now(&[1; 24], 100, 50), Ok(true));
    }
}
