//! Where task records live: in this process ([`TaskStore::memory`]), in a SQLite file
//! (`TaskStore::sqlite`, feature `sqlite`), or shared by replicas in Redis or Postgres
//! (`TaskStore::redis`, `TaskStore::postgres`).

use std::sync::Arc;

use super::TaskRecord;

use futures::future::BoxFuture;

/// A backend's failure as the store's: the backend is unavailable, for this reason.
#[cfg(any(feature = "redis", feature = "sqlite", feature = "postgres"))]
pub(super) fn unavailable(error: impl std::fmt::Display) -> TaskStoreError {
    TaskStoreError::Unavailable(error.to_string())
}

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
    /// The record's principal's tasks already hold this many bytes in the store.
    #[error("the principal's tasks already hold {0} bytes")]
    PrincipalBytes(usize),
    /// The record counts against a share of the store (callers whose identity nobody
    /// verified) that is spent.
    #[error("the share of the task store for unverified callers is spent")]
    SharedQuota,
}

/// What a new record may find in the store: counted over the records that have not
/// expired, each measured in bytes (its JSON) when it is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Quota {
    /// Records one principal may hold.
    pub tasks_per_principal: usize,
    /// Bytes one principal's records may hold.
    pub bytes_per_principal: usize,
    /// Records the store may hold.
    pub tasks: usize,
    /// Bytes the store's records may hold.
    pub bytes: usize,
    /// A share of the store this record counts against with others, beside its
    /// principal's: callers whose identity nobody verified share one, so that made-up
    /// identities cannot take more than it between them.
    pub shared: Option<Share>,
}

/// A part of the store that a group of principals shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// Records the group may hold.
    pub tasks: usize,
    /// Bytes the group's records may hold.
    pub bytes: usize,
}

impl Quota {
    /// A quota of `tasks_per_principal` records per principal and nothing else.
    pub fn per_principal(tasks_per_principal: usize) -> Self {
        Self {
            tasks_per_principal,
            bytes_per_principal: usize::MAX,
            tasks: usize::MAX,
            bytes: usize::MAX,
            shared: None,
        }
    }

    /// This quota, counting the record against `share` as well.
    pub fn with_share(mut self, share: Share) -> Self {
        self.shared = Some(share);
        self
    }

    /// This quota with byte bounds: per principal and for the whole store.
    pub fn with_bytes(mut self, per_principal: usize, store: usize) -> Self {
        self.bytes_per_principal = per_principal;
        self.bytes = store;
        self
    }

    /// This quota with a bound on the store's records.
    pub fn with_tasks(mut self, store: usize) -> Self {
        self.tasks = store;
        self
    }
}

/// The operations a task store provides. Implement it for another backend and wrap it
/// with [`TaskStore::custom`].
pub trait TaskBackend: Send + Sync + std::fmt::Debug + 'static {
    /// Stores a new record, unless that would take its principal or the store past
    /// `quota` ([`TaskStoreError::PrincipalQuota`], [`TaskStoreError::PrincipalBytes`],
    /// [`TaskStoreError::Full`]).
    fn insert<'a>(
        &'a self,
        record: &'a TaskRecord,
        quota: &'a Quota,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>>;

    /// The record `id`, unless it is missing or expired.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;

    /// Applies `change` to the record `id` atomically (no other update interleaves) and
    /// returns the record as it is afterwards; `None` if it is missing.
    ///
    /// The changed record is measured again (its JSON) and counts against the byte bounds
    /// of `quota` as at insert: its principal's, the shared part's when it counts against
    /// it, and the store's. A change that grows it past one is not written
    /// ([`TaskStoreError::PrincipalBytes`], [`TaskStoreError::SharedQuota`],
    /// [`TaskStoreError::Full`]): answers, states and results are counted as the record
    /// holds them, not only what it held when it was created.
    fn update<'a>(
        &'a self,
        id: &'a str,
        change: Change<'a>,
        quota: &'a Quota,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;

    /// The ids of tasks that are `working` and whose worker's lease ended before `now_ms`,
    /// and, for a backend that can tell ([`TaskBackend::is_gone`]), those whose worker is
    /// gone although its lease runs on.
    fn orphans(&self, now_ms: u64) -> BoxFuture<'_, Result<Vec<String>, TaskStoreError>>;

    /// A new claim for a worker of this process, written as a record's
    /// [`worker`](TaskRecord::worker) while it runs the task. By default a random id.
    fn claim(&self) -> String {
        crate::state::random_id()
    }

    /// Whether the worker that wrote `claim` is certainly gone (its process ended), so
    /// that its task may be taken over before its lease ends. By default never: a task
    /// waits for its worker's lease. The SQLite store can tell for the processes of its
    /// machine; a backend shared across machines cannot, and must not guess.
    fn is_gone(&self, claim: &str) -> bool {
        let _ = claim;
        false
    }

    /// Keeps a saga state too large for its token ([`KeptEntry`]) until its expiry,
    /// unless that would take its owner, the unverified callers' share (`quota.shared`)
    /// or the store past `quota`'s byte bounds. States are counted apart from tasks:
    /// only `bytes_per_principal`, `bytes` and the share's `bytes` apply. A key already
    /// kept is not overwritten (keys are random: a second write is an error).
    ///
    /// By default the backend keeps no states: a server configured with it as its state
    /// store refuses every state past the inline bound.
    fn keep_state<'a>(
        &'a self,
        entry: &'a KeptEntry,
        quota: &'a Quota,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        let _ = (entry, quota);
        Box::pin(async { Err(TaskStoreError::Unavailable(NO_STATES.into())) })
    }

    /// The token kept under `key` (hex), unless it is missing or expired.
    fn read_state<'a>(
        &'a self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, TaskStoreError>> {
        let _ = key;
        Box::pin(async { Err(TaskStoreError::Unavailable(NO_STATES.into())) })
    }

    /// How many unexpired tasks the store keeps at `now_ms`, if the backend can tell
    /// cheaply: reported as the `saga_task_store_depth` gauge.
    fn depth(&self, now_ms: u64) -> BoxFuture<'_, Result<Option<usize>, TaskStoreError>> {
        let _ = now_ms;
        Box::pin(async { Ok(None) })
    }

    /// Whether what the store holds survives the process that holds it (a file, a
    /// database): `false` for a store in memory, of which a server serving over HTTP
    /// warns when it starts, since a restart loses every task and kept state in it.
    fn survives_restarts(&self) -> bool {
        true
    }
}

/// A state as a task store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeptEntry {
    /// Its key, in hex.
    pub key: String,
    /// The quota owner it counts against.
    pub owner: String,
    /// Whether it counts against the share of unverified callers.
    pub shared: bool,
    /// Unix milliseconds after which it is not read.
    pub expires_ms: u64,
    /// The sealed token.
    pub token: String,
}

/// Why a backend of its own, without [`TaskBackend::keep_state`], keeps no state.
const NO_STATES: &str = "this task store keeps no saga states (it does not implement \
                         TaskBackend::keep_state)";

/// A task store: a cheap handle to a [`TaskBackend`].
///
/// A server with a store runs `#[saga_tool(task)]` tools as durable tasks for clients that
/// declare the tasks extension; without one they run as ordinary calls.
///
/// ```no_run
/// use saga_runtime::prelude::*;
///
/// /// Imports `rows` rows, checkpointing after each batch.
/// #[saga_tool(task)]
/// async fn import(rows: u32, cx: &SagaContext) -> Result<String, SagaError> {
///     checkpoint().await; // as a task, the call answers here with the task's id
///     for batch in 0..rows.div_ceil(100) {
///         cx.progress(f64::from(batch), Some(f64::from(rows.div_ceil(100))), None).await;
///         // … import the batch …
///         checkpoint().await; // its state is written to the store: a new worker goes on here
///     }
///     Ok(format!("imported {rows} rows"))
/// }
///
/// # async fn serve() -> anyhow::Result<()> {
/// // One process: tasks survive a worker's failure, not the process's.
/// let store = TaskStore::memory();
/// // Replicas (feature `redis`): every replica sees every task, and takes over one whose
/// // worker died when its lease ends.
/// // let store = TaskStore::redis("redis://127.0.0.1/").await?;
/// SagaServer::builder()
///     .keys(KeyRing::from_env("SAGA_KEYS")?)
///     .tasks(store)
///     .tool(import)
///     .build()?
///     .serve_http("127.0.0.1:8080")
///     .await?;
/// # Ok(())
/// # }
/// ```
///
/// Clients create a task with `tools/call` and then poll `tasks/get`; `saga call --task`
/// does both from a terminal (the guide's Tasks chapter, `docs/guide/src/tasks.md`).
#[derive(Debug, Clone)]
pub struct TaskStore(pub(crate) Arc<dyn TaskBackend>);

impl TaskStore {
    /// The backend's own operations.
    pub fn backend(&self) -> &dyn TaskBackend {
        self.0.as_ref()
    }

    /// A store of your own.
    pub fn custom(backend: impl TaskBackend) -> Self {
        Self(Arc::new(backend))
    }
}

/// What a store holds where a new or grown record would count: each a number of records
/// and their bytes. Every backend checks a [`Quota`] through it, so that they refuse
/// alike.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Occupancy {
    /// The whole store's unexpired records.
    pub(super) store: (usize, usize),
    /// The record's quota owner's.
    pub(super) owner: (usize, usize),
    /// Those counted against the shared part.
    pub(super) shared: (usize, usize),
}

impl Occupancy {
    /// Counts `tasks` more records of `bytes` more, in the store, the owner's and, if
    /// `shared`, the shared part's.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(super) fn add(&mut self, tasks: usize, bytes: usize, shared: bool) {
        let add = |(count, held): &mut (usize, usize)| {
            *count = count.saturating_add(tasks);
            *held = held.saturating_add(bytes);
        };
        add(&mut self.store);
        add(&mut self.owner);
        if shared {
            add(&mut self.shared);
        }
    }

    /// Whether a new record of `bytes` fits `quota` (and a backend's own `capacity`).
    pub(super) fn admit(
        &self,
        quota: &Quota,
        bytes: usize,
        capacity: usize,
    ) -> Result<(), TaskStoreError> {
        if self.store.0 >= capacity.min(quota.tasks) {
            return Err(TaskStoreError::Full);
        }
        if let Some(share) = quota.shared
            && (self.shared.0 >= share.tasks || self.shared.1.saturating_add(bytes) > share.bytes)
        {
            return Err(TaskStoreError::SharedQuota);
        }
        if self.owner.0 >= quota.tasks_per_principal {
            return Err(TaskStoreError::PrincipalQuota(quota.tasks_per_principal));
        }
        if self.owner.1.saturating_add(bytes) > quota.bytes_per_principal {
            return Err(TaskStoreError::PrincipalBytes(quota.bytes_per_principal));
        }
        if self.store.1.saturating_add(bytes) > quota.bytes {
            return Err(TaskStoreError::Full);
        }
        Ok(())
    }

    /// Whether a record (counted against the share if `shared`) may grow by `grown`
    /// bytes.
    pub(super) fn admit_growth(
        &self,
        quota: &Quota,
        grown: usize,
        shared: bool,
    ) -> Result<(), TaskStoreError> {
        if self.owner.1.saturating_add(grown) > quota.bytes_per_principal {
            return Err(TaskStoreError::PrincipalBytes(quota.bytes_per_principal));
        }
        if shared
            && let Some(share) = quota.shared
            && self.shared.1.saturating_add(grown) > share.bytes
        {
            return Err(TaskStoreError::SharedQuota);
        }
        if self.store.1.saturating_add(grown) > quota.bytes {
            return Err(TaskStoreError::Full);
        }
        Ok(())
    }
}

/// A record's size in a store: its JSON.
pub(super) fn record_bytes(record: &TaskRecord) -> usize {
    serde_json::to_vec(record).map_or(usize::MAX, |json| json.len())
}
