//! The task store in this process ([`TaskStore::memory`](super::TaskStore::memory)).
//!
//! Its quota is checked from counters kept with the writes (the store's, each quota
//! owner's, the shared part's: records and bytes), as the SQL stores' are, and records
//! leave by an index of their expiry: a create or an update costs the same whether the
//! store holds ten records or a million, where summing the records at each write grew
//! with them.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use super::TaskRecord;
use super::store::{
    Change, KeptEntry, Occupancy, Quota, TaskBackend, TaskStore, TaskStoreError, record_bytes,
};
use futures::future::BoxFuture;

impl TaskStore {
    /// Tasks in this process's memory, at most `capacity` (10,000 by default with
    /// [`TaskStore::memory`]) live at once. They survive a worker's failure, not the
    /// process's.
    pub fn memory_with_capacity(capacity: usize) -> Self {
        Self(Arc::new(MemoryTasks::new(capacity)))
    }

    /// [`TaskStore::memory_with_capacity`] of 10,000.
    pub fn memory() -> Self {
        Self::memory_with_capacity(10_000)
    }
}

#[derive(Debug)]
struct MemoryTasks {
    records: Mutex<Records>,
    capacity: usize,
    /// Saga states kept by reference ([`super::states`]), apart from the records.
    states: Mutex<States>,
}

impl MemoryTasks {
    fn new(capacity: usize) -> Self {
        Self {
            records: Mutex::new(Records::default()),
            capacity,
            states: Mutex::new(States::default()),
        }
    }

    fn states(&self) -> Result<MutexGuard<'_, States>, TaskStoreError> {
        self.states
            .lock()
            .map_err(|_| TaskStoreError::Unavailable("a poisoned lock".into()))
    }

    fn lock(&self) -> Result<MutexGuard<'_, Records>, TaskStoreError> {
        self.records
            .lock()
            .map_err(|_| TaskStoreError::Unavailable("a poisoned lock".into()))
    }
}

/// A record, its size when it was stored, and whether it counts against the shared part.
#[derive(Debug)]
struct Stored {
    record: TaskRecord,
    bytes: usize,
    shared: bool,
}

/// The records, by id and by expiry, and what they hold: each a number of records and
/// their bytes, for the store, each quota owner, and the shared part.
#[derive(Debug, Default)]
struct Records {
    by_id: HashMap<String, Stored>,
    by_expiry: BTreeSet<(u64, String)>,
    store: (usize, usize),
    shared: (usize, usize),
    by_owner: HashMap<String, (usize, usize)>,
}

/// `held` with one record of `bytes` more (`grow`) or less.
fn tally(held: &mut (usize, usize), bytes: usize, grow: bool) {
    if grow {
        held.0 += 1;
        held.1 = held.1.saturating_add(bytes);
    } else {
        held.0 = held.0.saturating_sub(1);
        held.1 = held.1.saturating_sub(bytes);
    }
}

impl Records {
    /// Counts `kept` in (`grow`) or out of every total it belongs to.
    fn count(&mut self, kept: &Stored, grow: bool) {
        tally(&mut self.store, kept.bytes, grow);
        if kept.shared {
            tally(&mut self.shared, kept.bytes, grow);
        }
        let owner = kept.record.quota_owner();
        let held = self.by_owner.entry(owner.to_owned()).or_default();
        tally(held, kept.bytes, grow);
        if *held == (0, 0) {
            self.by_owner.remove(owner);
        }
    }

    fn put(&mut self, kept: Stored) {
        // An id stored again (ids are random; a backend takes what it is given): the old
        // record leaves first, so that forgetting it cannot drop the new one's index
        // entry when both expire at the same time.
        self.take(&kept.record.id);
        self.count(&kept, true);
        self.by_expiry
            .insert((kept.record.expires_ms(), kept.record.id.clone()));
        self.by_id.insert(kept.record.id.clone(), kept);
    }

    fn take(&mut self, id: &str) -> Option<Stored> {
        let kept = self.by_id.remove(id)?;
        self.forget(&kept);
        Some(kept)
    }

    /// `kept`, no longer in `by_id`, taken out of the index and the totals.
    fn forget(&mut self, kept: &Stored) {
        self.by_expiry
            .remove(&(kept.record.expires_ms(), kept.record.id.clone()));
        self.count(kept, false);
    }

    /// Drops the records that expired by `now`, oldest first: each leaves once.
    fn expire(&mut self, now: u64) {
        while let Some((expires, id)) = self.by_expiry.first().cloned() {
            if expires > now {
                break;
            }
            self.by_expiry.pop_first();
            if let Some(kept) = self.by_id.remove(&id) {
                self.count(&kept, false);
            }
        }
    }

    /// What a record of `owner` finds in the store.
    fn held_for(&self, owner: &str) -> Occupancy {
        Occupancy {
            store: self.store,
            owner: self.by_owner.get(owner).copied().unwrap_or_default(),
            shared: self.shared,
        }
    }
}

/// The kept states, by key and by expiry, and the bytes they hold: the store's, the
/// shared part's, each owner's (counted as the records are, in [`Occupancy`]).
#[derive(Debug, Default)]
struct States {
    by_key: HashMap<String, KeptEntry>,
    by_expiry: BTreeSet<(u64, String)>,
    store: (usize, usize),
    shared: (usize, usize),
    by_owner: HashMap<String, (usize, usize)>,
}

impl States {
    fn count(&mut self, entry: &KeptEntry, grow: bool) {
        let bytes = entry.token.len();
        tally(&mut self.store, bytes, grow);
        if entry.shared {
            tally(&mut self.shared, bytes, grow);
        }
        let held = self.by_owner.entry(entry.owner.clone()).or_default();
        tally(held, bytes, grow);
        if *held == (0, 0) {
            self.by_owner.remove(&entry.owner);
        }
    }

    /// Drops the states that expired by `now`.
    fn expire(&mut self, now: u64) {
        while let Some((expires, key)) = self.by_expiry.first().cloned() {
            if expires > now {
                break;
            }
            self.by_expiry.pop_first();
            if let Some(entry) = self.by_key.remove(&key) {
                self.count(&entry, false);
            }
        }
    }
}

impl TaskBackend for MemoryTasks {
    fn survives_restarts(&self) -> bool {
        false
    }

    fn keep_state<'a>(
        &'a self,
        entry: &'a KeptEntry,
        quota: &'a Quota,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let now = super::clock::now_ms();
            let mut states = self.states()?;
            states.expire(now);
            if states.by_key.contains_key(&entry.key) {
                return Err(TaskStoreError::Unavailable("a state's key is taken".into()));
            }
            let held = Occupancy {
                store: states.store,
                owner: states
                    .by_owner
                    .get(&entry.owner)
                    .copied()
                    .unwrap_or_default(),
                shared: states.shared,
            };
            held.admit(quota, entry.token.len(), usize::MAX)?;
            states.count(entry, true);
            states
                .by_expiry
                .insert((entry.expires_ms, entry.key.clone()));
            states.by_key.insert(entry.key.clone(), entry.clone());
            Ok(())
        })
    }

    fn read_state<'a>(
        &'a self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, TaskStoreError>> {
        Box::pin(async move {
            let now = super::clock::now_ms();
            Ok(self
                .states()?
                .by_key
                .get(key)
                .filter(|entry| entry.expires_ms > now)
                .map(|entry| entry.token.clone()))
        })
    }

    fn insert<'a>(
        &'a self,
        record: &'a TaskRecord,
        quota: &'a Quota,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let now = super::clock::now_ms();
            let bytes = record_bytes(record);
            let mut records = self.lock()?;
            records.expire(now);
            records
                .held_for(record.quota_owner())
                .admit(quota, bytes, self.capacity)?;
            records.put(Stored {
                record: record.clone(),
                bytes,
                shared: quota.shared.is_some(),
            });
            Ok(())
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move {
            let now = super::clock::now_ms();
            Ok(self
                .lock()?
                .by_id
                .get(id)
                .map(|kept| &kept.record)
                .filter(|record| record.expires_ms() > now)
                .cloned())
        })
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        change: Change<'a>,
        quota: &'a Quota,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move {
            let now = super::clock::now_ms();
            let mut records = self.lock()?;
            records.expire(now);
            let Some(kept) = records.by_id.get(id) else {
                return Ok(None);
            };
            let mut changed = kept.record.clone();
            if !change(&mut changed) {
                return Ok(Some(kept.record.clone()));
            }
            let bytes = record_bytes(&changed);
            let shared = kept.shared;
            if let Some(grown) = bytes.checked_sub(kept.bytes).filter(|grown| *grown > 0) {
                records
                    .held_for(kept.record.quota_owner())
                    .admit_growth(quota, grown, shared)?;
            }
            // Out and in again: the change may move its expiry or its owner.
            if records.take(id).is_none() {
                return Ok(None);
            }
            records.put(Stored {
                record: changed.clone(),
                bytes,
                shared,
            });
            Ok(Some(changed))
        })
    }

    fn orphans(&self, now_ms: u64) -> BoxFuture<'_, Result<Vec<String>, TaskStoreError>> {
        Box::pin(async move {
            Ok(self
                .lock()?
                .by_id
                .values()
                .map(|kept| &kept.record)
                .filter(|record| {
                    record.status == rmcp::model::TaskStatus::Working
                        && record.lease_until_ms < now_ms
                        && record.expires_ms() > now_ms
                })
                .map(|record| record.id.clone())
                .collect())
        })
    }

    fn depth(&self, now_ms: u64) -> BoxFuture<'_, Result<Option<usize>, TaskStoreError>> {
        Box::pin(async move {
            let mut records = self.lock()?;
            records.expire(now_ms);
            Ok(Some(records.store.0))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(id: &str, owner: &str, expires: u64, bytes: usize, shared: bool) -> Stored {
        let record = TaskRecord {
            id: id.to_owned(),
            principal: owner.to_owned(),
            counted_as: None,
            tool: "t".into(),
            arguments: None,
            capabilities: Default::default(),
            status: rmcp::model::TaskStatus::Working,
            state: None,
            pending: None,
            answers: Default::default(),
            model_answers: Default::default(),
            result: None,
            error: None,
            created_ms: 0,
            updated_ms: 0,
            ttl_ms: expires,
            worker: None,
            lease_until_ms: 0,
            takeovers: 0,
            unresumable_since_ms: None,
            status_message: None,
            trace: None,
        };
        Stored {
            record,
            bytes,
            shared,
        }
    }

    /// The totals are what a sum over the live records gives, through puts, takes,
    /// replacements and expiry.
    #[test]
    fn the_totals_are_the_sum_of_the_live_records() {
        let mut records = Records::default();
        records.put(kept("a", "p", 10, 100, false));
        records.put(kept("b", "p", 20, 50, true));
        records.put(kept("c", "q", 30, 7, true));
        assert_eq!(records.held_for("p").owner, (2, 150));
        assert_eq!(records.held_for("q").owner, (1, 7));
        assert_eq!(records.store, (3, 157));
        assert_eq!(records.shared, (2, 57));
        // The same id again replaces the record, counted once; with the same expiry, it
        // keeps its place in the index and leaves when it expires.
        records.put(kept("c", "q", 30, 7, true));
        assert_eq!(records.store, (3, 157));
        assert_eq!(records.by_expiry.len(), 3);
        records.put(kept("a", "q", 40, 1, false));
        assert_eq!(records.store, (3, 58));
        assert_eq!(records.held_for("p").owner, (1, 50));
        assert_eq!(records.held_for("q").owner, (2, 8));
        records.expire(20);
        assert_eq!(records.store, (2, 8), "b expired at 20");
        assert_eq!(records.held_for("p").owner, (0, 0));
        assert!(
            !records.by_owner.contains_key("p"),
            "an owner of nothing is dropped"
        );
        assert!(records.take("c").is_some());
        assert_eq!(records.store, (1, 1));
        assert_eq!(records.shared, (0, 0));
        records.expire(40);
        assert_eq!(records.store, (0, 0));
        assert!(records.by_id.is_empty() && records.by_expiry.is_empty());
        assert!(records.by_owner.is_empty());
    }
}
