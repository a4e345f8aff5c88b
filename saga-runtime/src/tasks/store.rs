//! Where task records live: in this process ([`TaskStore::memory`]) or in Redis, shared by
//! replicas ([`TaskStore::redis`], feature `redis`).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use super::TaskRecord;

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A change to a record: applied to the current record, it returns whether to write it.
pub type Change<'a> = &'a (dyn Fn(&mut TaskRecord) -> bool + Send + Sync);

/// Why a task store failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// The store could not be reached, or answered with something unreadable.
    #[error("the task store is unavailable: {0}")]
    Unavailable(String),
    /// The store holds as many tasks as it may.
    #[error("the task store is full")]
    Full,
    /// The record's principal already has this many tasks in the store.
    #[error("the principal already has {0} tasks")]
    PrincipalQuota(usize),
}

/// The operations a task store provides. Implement it for another backend and wrap it
/// with [`TaskStore::custom`].
pub trait TaskBackend: Send + Sync + std::fmt::Debug + 'static {
    /// Stores a new record, unless its principal already has `max_per_principal`
    /// unexpired records ([`TaskStoreError::PrincipalQuota`]).
    fn insert<'a>(
        &'a self,
        record: &'a TaskRecord,
        max_per_principal: usize,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>>;

    /// The record `id`, unless it is missing or expired.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;

    /// Applies `change` to the record `id` atomically (no other update interleaves) and
    /// returns the record as it is afterwards; `None` if it is missing.
    fn update<'a>(
        &'a self,
        id: &'a str,
        change: Change<'a>,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;

    /// The ids of tasks that are `working` and whose worker's lease ended before `now_ms`.
    fn orphans(&self, now_ms: u64) -> BoxFuture<'_, Result<Vec<String>, TaskStoreError>>;
}

/// A task store: a cheap handle to a [`TaskBackend`].
#[derive(Debug, Clone)]
pub struct TaskStore(pub(crate) Arc<dyn TaskBackend>);

impl TaskStore {
    /// Tasks in this process's memory, at most `capacity` (10,000 by default with
    /// [`TaskStore::memory`]) live at once. They survive a worker's failure, not the
    /// process's.
    pub fn memory_with_capacity(capacity: usize) -> Self {
        Self(Arc::new(MemoryTasks {
            records: Mutex::new(HashMap::new()),
            capacity,
        }))
    }

    /// [`TaskStore::memory_with_capacity`] of 10,000.
    pub fn memory() -> Self {
        Self::memory_with_capacity(10_000)
    }

    /// The backend's own operations.
    pub fn backend(&self) -> &dyn TaskBackend {
        self.0.as_ref()
    }

    /// A store of your own.
    pub fn custom(backend: impl TaskBackend) -> Self {
        Self(Arc::new(backend))
    }

    /// Tasks in Redis at `url` (e.g. `redis://127.0.0.1/`), shared by every replica: a
    /// task whose worker dies is taken over by another replica when its lease ends.
    #[cfg(feature = "redis")]
    pub async fn redis(url: &str) -> Result<Self, TaskStoreError> {
        Ok(Self(Arc::new(
            super::redis::RedisTasks::connect(url).await?,
        )))
    }
}

#[derive(Debug)]
struct MemoryTasks {
    records: Mutex<HashMap<String, TaskRecord>>,
    capacity: usize,
}

impl MemoryTasks {
    fn lock(
        &self,
    ) -> Result<std::sync::MutexGuard<'_, HashMap<String, TaskRecord>>, TaskStoreError> {
        self.records
            .lock()
            .map_err(|_| TaskStoreError::Unavailable("a poisoned lock".into()))
    }
}

impl TaskBackend for MemoryTasks {
    fn insert<'a>(
        &'a self,
        record: &'a TaskRecord,
        max_per_principal: usize,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let now = super::clock::now_ms();
            let mut records = self.lock()?;
            if records.len() >= self.capacity {
                records.retain(|_, record| record.expires_ms() > now);
                if records.len() >= self.capacity {
                    return Err(TaskStoreError::Full);
                }
            }
            let held = records
                .values()
                .filter(|held| held.principal == record.principal && held.expires_ms() > now)
                .take(max_per_principal)
                .count();
            if held >= max_per_principal {
                return Err(TaskStoreError::PrincipalQuota(max_per_principal));
            }
            records.insert(record.id.clone(), record.clone());
            Ok(())
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move {
            let now = super::clock::now_ms();
            Ok(self
                .lock()?
                .get(id)
                .filter(|record| record.expires_ms() > now)
                .cloned())
        })
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        change: Change<'a>,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move {
            let now = super::clock::now_ms();
            let mut records = self.lock()?;
            let Some(record) = records
                .get_mut(id)
                .filter(|record| record.expires_ms() > now)
            else {
                return Ok(None);
            };
            let mut changed = record.clone();
            if change(&mut changed) {
                *record = changed;
            }
            Ok(Some(record.clone()))
        })
    }

    fn orphans(&self, now_ms: u64) -> BoxFuture<'_, Result<Vec<String>, TaskStoreError>> {
        Box::pin(async move {
            Ok(self
                .lock()?
                .values()
                .filter(|record| {
                    record.status == rmcp::model::TaskStatus::Working
                        && record.lease_until_ms < now_ms
                        && record.expires_ms() > now_ms
                })
                .map(|record| record.id.clone())
                .collect())
        })
    }
}
