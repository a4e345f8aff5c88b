//! Task records in a local SQLite file (feature `sqlite`): durable on one machine. The
//! file, its mode and why are in `state::sqlite`; the table and the update in
//! [`super::sql`]. Each insert and each write is one `BEGIN IMMEDIATE` transaction, so its
//! quota check and its write are atomic against every other connection to the file.

use std::path::Path;

use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};

use super::TaskRecord;
use super::sql::{self, At, Columns, Row, Rows, from_sql, now, to_sql, unavailable};
use super::store::{BoxFuture, Change, Held, Quota, TaskBackend, TaskStore, TaskStoreError};
use crate::state::sqlite::Db;

#[derive(Debug)]
pub(crate) struct SqliteTasks {
    db: Db,
}

/// What the store holds for a record of `owner`, at `now`.
fn held(tx: &Transaction<'_>, owner: &str, now: i64) -> rusqlite::Result<Held> {
    tx.query_row(&lite(sql::HELD), params![owner, now], |row| {
        let pair = |at: usize| -> rusqlite::Result<(usize, usize)> {
            Ok((from_sql(row.get(at)?), from_sql(row.get(at + 1)?)))
        };
        Ok(Held {
            store: pair(0)?,
            owner: pair(2)?,
            shared: pair(4)?,
        })
    })
}

/// A statement of [`sql`] as SQLite numbers its parameters (`?1`: to SQLite, `$1` is a
/// name, numbered where it first appears).
fn lite(statement: &str) -> String {
    statement.replace('$', "?")
}

impl TaskBackend for SqliteTasks {
    fn insert<'a>(
        &'a self,
        record: &'a TaskRecord,
        quota: &'a Quota,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let columns = Columns::of(record)?;
            let (id, quota, now) = (record.id.clone(), *quota, now());
            self.db
                .run(move |connection| {
                    let tx =
                        connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
                    tx.execute(&lite(sql::DELETE_EXPIRED), [now])?;
                    let held = held(&tx, &columns.owner, now)?;
                    if let Err(refused) = held.admit(&quota, from_sql(columns.bytes), usize::MAX) {
                        return Ok(Err(refused));
                    }
                    tx.execute(
                        &lite(sql::INSERT),
                        params![
                            id,
                            columns.owner,
                            quota.shared.is_some(),
                            columns.bytes,
                            columns.expires_ms,
                            columns.working,
                            columns.lease_until_ms,
                            columns.text
                        ],
                    )?;
                    tx.commit()?;
                    Ok(Ok(()))
                })
                .await
                .map_err(unavailable)?
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
            self.db
                .run(move |connection| {
                    let mut statement = connection.prepare_cached(&lite(sql::ORPHANS))?;
                    let ids = statement
                        .query_map([to_sql(now_ms)], |row| row.get(0))?
                        .collect::<rusqlite::Result<Vec<String>>>()?;
                    Ok(ids)
                })
                .await
                .map_err(unavailable)
        })
    }

    fn depth(&self, now_ms: u64) -> BoxFuture<'_, Result<Option<usize>, TaskStoreError>> {
        Box::pin(async move {
            let depth: i64 = self
                .db
                .run(move |connection| {
                    connection.query_row(&lite(sql::DEPTH), [to_sql(now_ms)], |row| row.get(0))
                })
                .await
                .map_err(unavailable)?;
            Ok(Some(from_sql(depth)))
        })
    }
}

impl Rows for SqliteTasks {
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
        let quota = *quota;
        Box::pin(async move {
            let id = id.to_owned();
            let now = now();
            self.db
                .run(move |connection| {
                    let tx =
                        connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
                    let grown = from_sql(columns.bytes.saturating_sub(at.bytes));
                    if grown > 0
                        && let Err(refused) =
                            held(&tx, &at.owner, now)?.admit_growth(&quota, grown, at.shared)
                    {
                        return Ok(Err(refused));
                    }
                    let version = at.version;
                    let written = tx.execute(
                        &lite(sql::WRITE),
                        params![
                            id,
                            version,
                            columns.text,
                            columns.bytes,
                            columns.working,
                            columns.lease_until_ms,
                            columns.expires_ms
                        ],
                    )?;
                    tx.commit()?;
                    Ok(Ok(written == 1))
                })
                .await
                .map_err(unavailable)?
        })
    }
}

impl SqliteTasks {
    async fn read_row(&self, id: &str) -> Result<Option<Row>, TaskStoreError> {
        let (id, now) = (id.to_owned(), now());
        self.db
            .run(move |connection| {
                connection
                    .query_row(&lite(sql::GET), params![id, now], |row| {
                        Ok(Row {
                            text: row.get(0)?,
                            at: At {
                                version: row.get(1)?,
                                bytes: row.get(2)?,
                                owner: row.get(3)?,
                                shared: row.get(4)?,
                            },
                        })
                    })
                    .optional()
            })
            .await
            .map_err(unavailable)
    }
}

impl TaskStore {
    /// Tasks in the SQLite file at `path` (created if needed; feature `sqlite`): durable on
    /// one machine. A restarted server, even one killed with `kill -9`, finds every task
    /// as its last acknowledged step left it, and its workers take over those that were
    /// working once their lease ends. The single-use store may share the file
    /// ([`SqliteStore`](crate::state::SqliteStore)).
    ///
    /// The file is opened (and its tables made) now, before the server serves.
    pub fn sqlite(path: impl AsRef<Path>) -> Result<Self, TaskStoreError> {
        let db = Db::open(path.as_ref()).map_err(TaskStoreError::Unavailable)?;
        Ok(Self::custom(SqliteTasks { db }))
    }
}
