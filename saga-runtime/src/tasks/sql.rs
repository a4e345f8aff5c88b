//! What the two SQL task stores (SQLite, Postgres) share: one table, `saga_tasks`, one row
//! per task (the record as JSON, and the columns a query needs: its quota owner, size,
//! expiry, whether it is working and until when its lease holds, and a version), the
//! statements (written once, in the SQL both databases read), and the update: read the
//! row, apply the change, write it back only if its version is still the one read,
//! retried when another replica wrote in between. A task's takeover is such an update, so
//! exactly one replica wins it, as with Redis.

use rmcp::model::TaskStatus;

use super::TaskRecord;
use super::store::{BoxFuture, Change, Quota, TaskStoreError};

/// How often an update is retried when other writers keep winning.
const MAX_ATTEMPTS: usize = 64;

/// Deletes the expired rows: `$1` now.
pub(super) const DELETE_EXPIRED: &str = "DELETE FROM saga_tasks WHERE expires_ms <= $1";

/// The unexpired rows' counts and bytes: the store's, quota owner `$1`'s, the shared
/// part's; `$2` now.
pub(super) const HELD: &str = "SELECT count(*), CAST(coalesce(sum(bytes), 0) AS BIGINT),
    count(*) FILTER (WHERE owner = $1), CAST(coalesce(sum(bytes) FILTER (WHERE owner = $1), 0) AS BIGINT),
    count(*) FILTER (WHERE shared), CAST(coalesce(sum(bytes) FILTER (WHERE shared), 0) AS BIGINT)
    FROM saga_tasks WHERE expires_ms > $2";

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
