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

/// The working tasks whose lease runs at `?1`, with their worker's claim.
#[cfg(unix)]
const LEASED: &str = "SELECT id, json_extract(record, '$.worker') FROM saga_tasks
    WHERE working AND lease_until_ms >= ?1 AND expires_ms > ?1";

#[derive(Debug)]
pub(crate) struct SqliteTasks {
    db: Db,
    /// Which processes sharing the file are alive (`None` where it cannot tell: off Unix,
    /// or the directory beside the file could not be written).
    #[cfg(unix)]
    liveness: Option<std::sync::Arc<super::liveness::Liveness>>,
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
        #[cfg(unix)]
        let liveness = self.liveness.clone();
        Box::pin(async move {
            self.db
                .run(move |connection| {
                    let mut statement = connection.prepare_cached(&lite(sql::ORPHANS))?;
                    let mut ids = statement
                        .query_map([to_sql(now_ms)], |row| row.get(0))?
                        .collect::<rusqlite::Result<Vec<String>>>()?;
                    // And those still leased by a worker whose process has ended (asked
                    // here, off the async threads: each is a file opened and locked).
                    #[cfg(unix)]
                    if let Some(liveness) = liveness {
                        let mut statement = connection.prepare_cached(LEASED)?;
                        let leased = statement
                            .query_map([to_sql(now_ms)], |row| {
                                Ok((row.get::<_, String>(0)?, row.get::<_, Option<String>>(1)?))
                            })?
                            .collect::<rusqlite::Result<Vec<_>>>()?;
                        ids.extend(leased.into_iter().filter_map(|(id, worker)| {
                            worker
                                .is_some_and(|worker| liveness.is_gone(&worker))
                                .then_some(id)
                        }));
                    }
                    Ok(ids)
                })
                .await
                .map_err(unavailable)
        })
    }

    #[cfg(unix)]
    fn claim(&self) -> String {
        match &self.liveness {
            Some(liveness) => liveness.claim(),
            None => crate::state::random_id(),
        }
    }

    #[cfg(unix)]
    fn is_gone(&self, claim: &str) -> bool {
        self.liveness
            .as_ref()
            .is_some_and(|liveness| liveness.is_gone(claim))
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

/// The process parts of the claims of the tasks working in the file at `path`, read once
/// at start through a connection of its own.
#[cfg(unix)]
fn working_processes(path: &Path) -> rusqlite::Result<std::collections::HashSet<String>> {
    let connection =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut statement = connection
        .prepare("SELECT json_extract(record, '$.worker') FROM saga_tasks WHERE working")?;
    let claims = statement
        .query_map([], |row| row.get::<_, Option<String>>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(claims
        .iter()
        .flatten()
        .filter_map(|claim| super::liveness::Liveness::process_of(claim))
        .map(str::to_owned)
        .collect())
}

impl TaskStore {
    /// Tasks in the SQLite file at `path` (created if needed; feature `sqlite`): durable on
    /// one machine. A restarted server, even one killed with `kill -9`, finds every task
    /// as its last acknowledged step left it, and its workers take over those that were
    /// working at once: each process holds a lock on a file of its own in the directory
    /// `PATH.workers` beside the store, released by the kernel when the process ends, so
    /// the tasks of a process whose lock is free need not wait for their lease (on Unix;
    /// elsewhere, and for records of earlier builds, they wait for it). The single-use store may share the file
    /// ([`SqliteStore`](crate::state::SqliteStore)).
    ///
    /// The file is opened (and its tables made) now, before the server serves.
    pub fn sqlite(path: impl AsRef<Path>) -> Result<Self, TaskStoreError> {
        let path = path.as_ref();
        let db = Db::open(path).map_err(TaskStoreError::Unavailable)?;
        #[cfg(unix)]
        let liveness = match super::liveness::Liveness::register(path) {
            Ok(liveness) => {
                // The files of processes that ended with no task left working.
                if let Ok(named) = working_processes(path) {
                    liveness.remove_stale(&named);
                }
                Some(std::sync::Arc::new(liveness))
            }
            Err(error) => {
                tracing::warn!(
                    %error,
                    "the directory of live workers beside the task store could not be written: \
                     a restarted server takes its tasks over when their lease ends"
                );
                None
            }
        };
        Ok(Self::custom(SqliteTasks {
            db,
            #[cfg(unix)]
            liveness,
        }))
    }
}
