//! Task records in Postgres (feature `postgres`), shared by every replica. The pool and
//! its bounds are in `state::postgres`; the table and the update in [`super::sql`].
//!
//! An insert, and a write that grows a record, check the quotas in a transaction that
//! first takes one advisory lock ([`QUOTA_LOCK`]): quota checks run one at a time across
//! the fleet, so two replicas cannot both admit the last task a quota allows. A write that
//! does not grow its record takes no lock: it is one `UPDATE … WHERE version = $2`, which
//! exactly one of two racing replicas wins (a takeover, say; the other reads again).

use tokio_postgres::types::ToSql;

use super::TaskRecord;
use super::sql::{self, At, Columns, Row, Rows, from_sql, now, to_sql, unavailable};
use super::store::{BoxFuture, Change, Held, Quota, TaskBackend, TaskStore, TaskStoreError};
use crate::state::postgres::{Db, describe};

/// The advisory lock quota checks take.
const QUOTA_LOCK: i64 = 0x5a6a_0002;

#[derive(Debug)]
pub(crate) struct PostgresTasks {
    db: Db,
}

fn failed(error: tokio_postgres::Error) -> TaskStoreError {
    TaskStoreError::Unavailable(describe(error))
}

/// Column `at` of `row`: a column of another type (a table some other program made) is
/// the store's error, not a panic.
fn column<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a tokio_postgres::Row,
    at: usize,
) -> Result<T, TaskStoreError> {
    row.try_get(at).map_err(failed)
}

/// What the store holds for a record of `owner`, at `now`.
async fn held(
    tx: &deadpool_postgres::Transaction<'_>,
    owner: &str,
    now: i64,
) -> Result<Held, TaskStoreError> {
    let row = tx
        .query_one(sql::HELD, &[&owner, &now])
        .await
        .map_err(failed)?;
    let pair = |at: usize| -> Result<(usize, usize), TaskStoreError> {
        Ok((from_sql(column(&row, at)?), from_sql(column(&row, at + 1)?)))
    };
    Ok(Held {
        store: pair(0)?,
        owner: pair(2)?,
        shared: pair(4)?,
    })
}

impl TaskBackend for PostgresTasks {
    fn insert<'a>(
        &'a self,
        record: &'a TaskRecord,
        quota: &'a Quota,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let columns = Columns::of(record)?;
            let now = now();
            let mut client = self.db.client().await.map_err(unavailable)?;
            let tx = client.transaction().await.map_err(failed)?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&QUOTA_LOCK])
                .await
                .map_err(failed)?;
            tx.execute(sql::DELETE_EXPIRED, &[&now])
                .await
                .map_err(failed)?;
            held(&tx, &columns.owner, now).await?.admit(
                quota,
                from_sql(columns.bytes),
                usize::MAX,
            )?;
            let shared = quota.shared.is_some();
            let values: [&(dyn ToSql + Sync); 8] = [
                &record.id,
                &columns.owner,
                &shared,
                &columns.bytes,
                &columns.expires_ms,
                &columns.working,
                &columns.lease_until_ms,
                &columns.text,
            ];
            tx.execute(sql::INSERT, &values).await.map_err(failed)?;
            tx.commit().await.map_err(failed)
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(sql::get(self, id))
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        change: Change<'a>,
        quota: &'a Quota,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(sql::update(self, id, change, quota))
    }

    fn orphans(&self, now_ms: u64) -> BoxFuture<'_, Result<Vec<String>, TaskStoreError>> {
        Box::pin(async move {
            let client = self.db.client().await.map_err(unavailable)?;
            let rows = client
                .query(sql::ORPHANS, &[&to_sql(now_ms)])
                .await
                .map_err(failed)?;
            rows.iter().map(|row| column(row, 0)).collect()
        })
    }

    fn depth(&self, now_ms: u64) -> BoxFuture<'_, Result<Option<usize>, TaskStoreError>> {
        Box::pin(async move {
            let client = self.db.client().await.map_err(unavailable)?;
            let row = client
                .query_one(sql::DEPTH, &[&to_sql(now_ms)])
                .await
                .map_err(failed)?;
            Ok(Some(from_sql(column(&row, 0)?)))
        })
    }
}

impl Rows for PostgresTasks {
    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Row>, TaskStoreError>> {
        Box::pin(self.read_row(id))
    }

    fn write<'a>(
        &'a self,
        id: &'a str,
        at: At,
        columns: Columns,
        quota: &'a Quota,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        Box::pin(async move { self.write_row(id, &at, &columns, quota).await })
    }
}

impl PostgresTasks {
    async fn read_row(&self, id: &str) -> Result<Option<Row>, TaskStoreError> {
        let client = self.db.client().await.map_err(unavailable)?;
        let row = client
            .query_opt(sql::GET, &[&id, &now()])
            .await
            .map_err(failed)?;
        row.map(|row| {
            Ok(Row {
                text: column(&row, 0)?,
                at: At {
                    version: column(&row, 1)?,
                    bytes: column(&row, 2)?,
                    owner: column(&row, 3)?,
                    shared: column(&row, 4)?,
                },
            })
        })
        .transpose()
    }

    /// Writes `columns` to row `id` if it is still at `at.version`: `Ok(false)` if not.
    async fn write_row(
        &self,
        id: &str,
        at: &At,
        columns: &Columns,
        quota: &Quota,
    ) -> Result<bool, TaskStoreError> {
        let mut client = self.db.client().await.map_err(unavailable)?;
        let values: [&(dyn ToSql + Sync); 7] = [
            &id,
            &at.version,
            &columns.text,
            &columns.bytes,
            &columns.working,
            &columns.lease_until_ms,
            &columns.expires_ms,
        ];
        if columns.bytes <= at.bytes {
            // No growth: no quota to check, and the version decides.
            let written = client.execute(sql::WRITE, &values).await.map_err(failed)?;
            return Ok(written == 1);
        }
        let tx = client.transaction().await.map_err(failed)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&QUOTA_LOCK])
            .await
            .map_err(failed)?;
        held(&tx, &at.owner, now()).await?.admit_growth(
            quota,
            from_sql(columns.bytes - at.bytes),
            at.shared,
        )?;
        let written = tx.execute(sql::WRITE, &values).await.map_err(failed)?;
        tx.commit().await.map_err(failed)?;
        Ok(written == 1)
    }
}

impl TaskStore {
    /// Tasks in Postgres at `url` (`postgres://user:password@host/dbname`; feature
    /// `postgres`), shared by every replica, the tables created if missing: a task whose
    /// worker dies is taken over by another replica when its lease ends, as with Redis.
    /// The single-use store may share the database
    /// ([`PostgresStore`](crate::state::PostgresStore)).
    pub async fn postgres(url: &str) -> Result<Self, TaskStoreError> {
        let db = Db::connect(url)
            .await
            .map_err(TaskStoreError::Unavailable)?;
        Ok(Self::custom(PostgresTasks { db }))
    }
}
