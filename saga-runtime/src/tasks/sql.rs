//! What the two SQL task stores (SQLite, Postgres) share: one table, `saga_tasks`, one row
//! per task (the record as JSON, and the columns a query needs: its quota owner, size,
//! expiry, whether it is working and until when its lease holds, and a version), the
//! statements (written once, in the SQL both databases read), and the update: read the
//! row, apply the change, write it back only if its version is still the one read,
//! retried when another replica wrote in between. A task's takeover is such an update, so
//! exactly one replica wins it, as with Redis.
//!
//! **Quotas from counters.** What a quota admits against is read from `saga_task_counts`:
//! one row per scope (the whole store, the shared part, each quota owner) with its
//! records and bytes, kept by triggers on `saga_tasks` in the transaction of every insert,
//! delete and change of size, whichever build or program makes it. A create reads three
//! rows, however many tasks the store holds (it summed the table before). The counts
//! include expired rows until they are deleted, so every write that admits first deletes
//! the expired ones ([`DELETE_EXPIRED`], through the expiry index): then the counts are
//! exactly the unexpired records the sums counted. A database made by a build before the
//! counters gets them, counted once from its rows, when this build first opens it.
//!
//! **Group commit.** Inserts and writes go through [`super::group_commit`]: the writes
//! that arrive while one transaction commits share the next one.

use rmcp::model::TaskStatus;

use super::TaskRecord;
use super::store::{Change, Occupancy, Quota, TaskStoreError};
use futures::future::BoxFuture;

/// How often an update is retried when other writers keep winning.
const MAX_ATTEMPTS: usize = 64;

/// Deletes the expired rows: `$1` now.
pub(super) const DELETE_EXPIRED: &str = "DELETE FROM saga_tasks WHERE expires_ms <= $1";

/// The counts of the store, the shared part and the scope `$1` (an owner's, [`owner_scope`]).
pub(super) const COUNTS: &str = "SELECT scope, tasks, bytes FROM saga_task_counts
    WHERE scope = 'store' OR scope = 'shared' OR scope = $1";

/// The counters' table (both databases read this SQL).
pub(super) const COUNTS_TABLE: &str = "CREATE TABLE IF NOT EXISTS saga_task_counts (
    scope TEXT PRIMARY KEY, tasks BIGINT NOT NULL, bytes BIGINT NOT NULL)";

/// Whether the counters were made: a row of `saga_meta`, inserted by the build that makes
/// them (an insert of one row tells it so), in the transaction that counts the table.
pub(super) const COUNTS_MADE: &str =
    "INSERT INTO saga_meta (key, value) VALUES ('task_counts', 1) ON CONFLICT DO NOTHING";

/// The counters counted from the rows, once, when they are made.
pub(super) const COUNT_ROWS: [&str; 3] = [
    "INSERT INTO saga_task_counts (scope, tasks, bytes)
        SELECT 'store', count(*), coalesce(sum(bytes), 0) FROM saga_tasks",
    "INSERT INTO saga_task_counts (scope, tasks, bytes)
        SELECT 'shared', count(*), coalesce(sum(bytes), 0) FROM saga_tasks WHERE shared",
    "INSERT INTO saga_task_counts (scope, tasks, bytes)
        SELECT 'owner:' || owner, count(*), sum(bytes) FROM saga_tasks GROUP BY owner",
];

/// The counters' scope of quota owner `owner`.
pub(super) fn owner_scope(owner: &str) -> String {
    format!("owner:{owner}")
}

/// The counts a batch of writes is admitted against: read once per batch ([`COUNTS`] for
/// each owner it writes for), then kept as each write is admitted, so that the batch's
/// writes count against each other as they would one transaction at a time.
#[derive(Debug, Default)]
pub(super) struct Counts {
    store: (usize, usize),
    shared: (usize, usize),
    owners: std::collections::HashMap<String, (usize, usize)>,
}

impl Counts {
    /// Takes in a row `(scope, tasks, bytes)` of [`COUNTS`].
    pub(super) fn read(&mut self, (scope, tasks, bytes): (String, i64, i64)) {
        let counted = (from_sql(tasks), from_sql(bytes));
        match scope.as_str() {
            "store" => self.store = counted,
            "shared" => self.shared = counted,
            _ => {
                if let Some(owner) = scope.strip_prefix("owner:") {
                    self.owners.insert(owner.to_owned(), counted);
                }
            }
        }
    }

    /// Whether `write` is admitted; counted if so.
    pub(super) fn admit(&mut self, write: &Write) -> Result<(), TaskStoreError> {
        let owner = self.owners.entry(write.owner().to_owned()).or_default();
        let mut held = Occupancy {
            store: self.store,
            owner: *owner,
            shared: self.shared,
        };
        write.admit(&mut held)?;
        (self.store, *owner, self.shared) = (held.store, held.owner, held.shared);
        Ok(())
    }
}

/// Inserts a row: id, owner, shared, bytes, expires, working, lease, record.
pub(super) const INSERT: &str = "INSERT INTO saga_tasks
    (id, owner, shared, bytes, expires_ms, working, lease_until_ms, version, record)
    VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8)";

/// The record `$1`, its version, and its size, quota owner and share, unless expired at
/// `$2`.
pub(super) const GET: &str = "SELECT record, version, bytes, owner, shared FROM saga_tasks
    WHERE id = $1 AND expires_ms > $2";

/// Writes row `$1` at version `$2`: record, bytes, working, lease, expires.
pub(super) const WRITE: &str = "UPDATE saga_tasks SET record = $3, bytes = $4, working = $5,
    lease_until_ms = $6, expires_ms = $7, version = version + 1
    WHERE id = $1 AND version = $2";

/// Working tasks whose lease ended before `$1`, unexpired.
pub(super) const ORPHANS: &str = "SELECT id FROM saga_tasks
    WHERE working AND lease_until_ms < $1 AND expires_ms > $1";

/// The unexpired rows at `$1`.
pub(super) const DEPTH: &str = "SELECT count(*) FROM saga_tasks WHERE expires_ms > $1";

/// A row as read: the record's JSON, and what writing it back checks.
pub(super) struct Row {
    pub(super) text: String,
    pub(super) at: At,
}

/// A row's version when read, and the size, quota owner and share its quota counted
/// then: a write at that version grows the record from these (a write after another
/// writer's finds the version moved on, and writes nothing).
pub(super) struct At {
    pub(super) version: i64,
    pub(super) bytes: i64,
    pub(super) owner: String,
    pub(super) shared: bool,
}

/// A record as written: its JSON and the columns the queries read.
pub(super) struct Columns {
    pub(super) text: String,
    pub(super) bytes: i64,
    pub(super) owner: String,
    pub(super) working: bool,
    pub(super) lease_until_ms: i64,
    pub(super) expires_ms: i64,
}

impl Columns {
    pub(super) fn of(record: &TaskRecord) -> Result<Self, TaskStoreError> {
        let text = serde_json::to_string(record).map_err(unavailable)?;
        Ok(Columns {
            bytes: to_sql(text.len() as u64),
            text,
            owner: record.quota_owner().to_owned(),
            working: record.status == TaskStatus::Working,
            lease_until_ms: to_sql(record.lease_until_ms),
            expires_ms: to_sql(record.expires_ms()),
        })
    }
}

pub(super) use super::store::unavailable;

pub(super) use crate::state::to_sql;

/// Now, in unix milliseconds, as a column holds it.
pub(super) fn now() -> i64 {
    to_sql(super::clock::now_ms())
}

/// A count or a size read back from a row.
pub(super) fn from_sql(value: i64) -> usize {
    usize::try_from(value).unwrap_or(0)
}

/// A write as the group commit carries it.
pub(super) enum Write {
    /// A new record (`shared`: counted against the shared part too).
    Insert {
        id: String,
        columns: Columns,
        shared: bool,
        quota: Quota,
    },
    /// A record written at the version read.
    Update {
        id: String,
        at: At,
        columns: Columns,
        quota: Quota,
    },
}

impl Write {
    /// `record` as a new row, counted against `quota`.
    pub(super) fn insert(record: &TaskRecord, quota: &Quota) -> Result<Write, TaskStoreError> {
        Ok(Write::Insert {
            id: record.id.clone(),
            columns: Columns::of(record)?,
            shared: quota.shared.is_some(),
            quota: *quota,
        })
    }

    /// `columns` written to row `id` at the version `at` read.
    pub(super) fn update(id: &str, at: At, columns: Columns, quota: &Quota) -> Write {
        Write::Update {
            id: id.to_owned(),
            at,
            columns,
            quota: *quota,
        }
    }

    /// The quota owner whose counts this write is admitted against.
    pub(super) fn owner(&self) -> &str {
        match self {
            Write::Insert { columns, .. } => &columns.owner,
            Write::Update { at, .. } => &at.owner,
        }
    }

    /// Whether `held` admits this write; counts it in `held` if so.
    pub(super) fn admit(&self, held: &mut Occupancy) -> Result<(), TaskStoreError> {
        match self {
            Write::Insert {
                columns,
                shared,
                quota,
                ..
            } => {
                let bytes = from_sql(columns.bytes);
                held.admit(quota, bytes, usize::MAX)?;
                held.add(1, bytes, *shared);
            }
            Write::Update {
                at, columns, quota, ..
            } => {
                let grown = from_sql(columns.bytes.saturating_sub(at.bytes));
                if grown > 0 {
                    held.admit_growth(quota, grown, at.shared)?;
                    held.add(0, grown, at.shared);
                }
            }
        }
        Ok(())
    }
}

/// A SQL store's two halves of an update.
pub(super) trait Rows: Sync {
    /// The row `id`, unless missing or expired.
    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Row>, TaskStoreError>>;

    /// Writes `columns` to row `id` if it is still at `at.version` (`Ok(false)` if
    /// another writer moved it on), within `quota`'s byte bounds when it grows.
    fn write<'a>(
        &'a self,
        id: &'a str,
        at: At,
        columns: Columns,
        quota: &'a Quota,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>>;
}

/// The record `id`, unless missing or expired.
pub(super) async fn get(rows: &impl Rows, id: &str) -> Result<Option<TaskRecord>, TaskStoreError> {
    rows.read(id)
        .await?
        .map(|row| serde_json::from_str(&row.text).map_err(unavailable))
        .transpose()
}

/// The update every SQL store makes: read the row, apply `change`, and write it at the
/// version read; read again when another writer moved it on.
pub(super) async fn update(
    rows: &impl Rows,
    id: &str,
    change: Change<'_>,
    quota: &Quota,
) -> Result<Option<TaskRecord>, TaskStoreError> {
    for _ in 0..MAX_ATTEMPTS {
        let Some(row) = rows.read(id).await? else {
            return Ok(None);
        };
        let current: TaskRecord = serde_json::from_str(&row.text).map_err(unavailable)?;
        let mut record = current.clone();
        if !change(&mut record) {
            return Ok(Some(current));
        }
        if rows.write(id, row.at, Columns::of(&record)?, quota).await? {
            return Ok(Some(record));
        }
    }
    Err(TaskStoreError::Unavailable(format!(
        "task {id} kept changing under {MAX_ATTEMPTS} updates"
    )))
}

/// Saga states kept by reference ([`super::states`]): a row each in `saga_states`, and
/// their bytes per scope (the store, the shared part, each owner) in `saga_state_counts`,
/// kept by the keep's own transaction (a keep first uncounts and deletes the expired
/// rows, so the counts are the unexpired states'). Both databases run these statements.
pub(super) mod states {
    use super::super::store::{Occupancy, Quota, TaskStoreError};
    use super::from_sql;

    /// The expired states' bytes, per owner and share: `$1` now.
    pub(in crate::tasks) const EXPIRED: &str =
        "SELECT owner, shared, CAST(sum(bytes) AS BIGINT) FROM saga_states
        WHERE expires_ms <= $1 GROUP BY owner, shared";
    /// Deletes the expired states: `$1` now.
    pub(in crate::tasks) const DELETE_EXPIRED: &str =
        "DELETE FROM saga_states WHERE expires_ms <= $1";
    /// Adds `$2` bytes (negative: takes away) to scope `$1`.
    pub(in crate::tasks) const COUNT: &str =
        "INSERT INTO saga_state_counts (scope, bytes) VALUES ($1, $2)
        ON CONFLICT (scope) DO UPDATE SET bytes = saga_state_counts.bytes + excluded.bytes";
    /// Drops the count of an owner who keeps nothing any more.
    pub(in crate::tasks) const DROP_EMPTY: &str =
        "DELETE FROM saga_state_counts WHERE scope LIKE 'owner:%' AND bytes <= 0";
    /// The bytes of the store, the shared part and scope `$1`.
    pub(in crate::tasks) const COUNTS: &str = "SELECT scope, bytes FROM saga_state_counts
        WHERE scope = 'store' OR scope = 'shared' OR scope = $1";
    /// Whether key `$1` is kept (expired or not: a key is never written twice).
    pub(in crate::tasks) const TAKEN: &str = "SELECT count(*) FROM saga_states WHERE key = $1";
    /// Keeps a state.
    pub(in crate::tasks) const INSERT: &str = "INSERT INTO saga_states
        (key, owner, shared, bytes, expires_ms, token) VALUES ($1, $2, $3, $4, $5, $6)";
    /// The token kept under `$1`, unless it expired by `$2`.
    pub(in crate::tasks) const GET: &str =
        "SELECT token FROM saga_states WHERE key = $1 AND expires_ms > $2";

    /// The scopes a state of `owner` (and of the shared part, if `shared`) counts in.
    pub(in crate::tasks) fn scopes(owner: &str, shared: bool) -> Vec<String> {
        let mut scopes = vec!["store".to_owned(), super::owner_scope(owner)];
        if shared {
            scopes.push("shared".to_owned());
        }
        scopes
    }

    /// Whether a state of `bytes` for `owner` fits `quota`, given the rows of [`COUNTS`].
    pub(in crate::tasks) fn admit(
        rows: impl IntoIterator<Item = (String, i64)>,
        owner: &str,
        quota: &Quota,
        bytes: usize,
    ) -> Result<(), TaskStoreError> {
        let mut held = Occupancy::default();
        let owner_scope = super::owner_scope(owner);
        for (scope, counted) in rows {
            let counted = (0, from_sql(counted));
            match scope.as_str() {
                "store" => held.store = counted,
                "shared" => held.shared = counted,
                scope if scope == owner_scope => held.owner = counted,
                _ => {}
            }
        }
        held.admit(quota, bytes, usize::MAX)
    }

    /// A key written twice.
    pub(in crate::tasks) fn taken() -> TaskStoreError {
        TaskStoreError::Unavailable("a state's key is taken".into())
    }
}
