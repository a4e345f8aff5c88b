//! Task records in a local SQLite file (feature `sqlite`): durable on one machine. The
//! file, its mode and why are in `state::sqlite`; the table, the counters and the update
//! in [`super::sql`]. Inserts and writes are group-committed ([`super::group_commit`]):
//! each batch is one `BEGIN IMMEDIATE` transaction, so its quota checks and its writes are
//! atomic against every other connection to the file, and its one commit (one fsync)
//! acknowledges them all.

use std::path::Path;
use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use super::TaskRecord;
use super::group_commit::{self, Failed, Flusher, Outcome, Queue, Queued, QueuedWrite};
use super::sql::{
    self, At, Columns, Counts, Row, Rows, Write, from_sql, now, states, to_sql, unavailable,
};
use super::store::{Change, KeptEntry, Quota, TaskBackend, TaskStore, TaskStoreError};
use crate::state::sqlite::Db;
use futures::future::BoxFuture;

/// The triggers that keep `saga_task_counts` (see [`super::sql`]): an insert counts its
/// row, a delete uncounts it, a change of size moves the bytes. Owner and share never
/// change in a row.
const COUNT_TRIGGERS: &str = "
CREATE TRIGGER IF NOT EXISTS saga_tasks_counted AFTER INSERT ON saga_tasks BEGIN
    INSERT INTO saga_task_counts (scope, tasks, bytes)
        VALUES ('store', 1, NEW.bytes), ('owner:' || NEW.owner, 1, NEW.bytes)
        ON CONFLICT (scope) DO UPDATE SET tasks = tasks + 1, bytes = bytes + excluded.bytes;
    INSERT INTO saga_task_counts (scope, tasks, bytes)
        SELECT 'shared', 1, NEW.bytes WHERE NEW.shared
        ON CONFLICT (scope) DO UPDATE SET tasks = tasks + 1, bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER IF NOT EXISTS saga_tasks_uncounted AFTER DELETE ON saga_tasks BEGIN
    UPDATE saga_task_counts SET tasks = tasks - 1, bytes = bytes - OLD.bytes
        WHERE scope = 'store' OR scope = 'owner:' || OLD.owner OR (scope = 'shared' AND OLD.shared);
    DELETE FROM saga_task_counts WHERE scope = 'owner:' || OLD.owner AND tasks <= 0;
END;
CREATE TRIGGER IF NOT EXISTS saga_tasks_resized AFTER UPDATE OF bytes ON saga_tasks
    WHEN OLD.bytes <> NEW.bytes BEGIN
    UPDATE saga_task_counts SET bytes = bytes + NEW.bytes - OLD.bytes
        WHERE scope = 'store' OR scope = 'owner:' || OLD.owner OR (scope = 'shared' AND OLD.shared);
END;";

/// The working tasks whose lease runs at `?1`, with their worker's claim.
#[cfg(unix)]
const LEASED: &str = "SELECT id, json_extract(record, '$.worker') FROM saga_tasks
    WHERE working AND lease_until_ms >= ?1 AND expires_ms > ?1";

#[derive(Debug)]
pub(crate) struct SqliteTasks {
    db: Db,
    /// The writes waiting for the next transaction.
    writes: Arc<Queue<Write>>,
    /// Which processes sharing the file are alive (`None` where it cannot tell: off Unix,
    /// or the directory beside the file could not be written).
    #[cfg(unix)]
    liveness: Option<std::sync::Arc<super::liveness::Liveness>>,
}

/// A statement of [`sql`] as SQLite numbers its parameters (`?1`: to SQLite, `$1` is a
/// name, numbered where it first appears).
fn lite(statement: &str) -> String {
    statement.replace('$', "?")
}

impl TaskBackend for SqliteTasks {
    fn keep_state<'a>(
        &'a self,
        entry: &'a KeptEntry,
        quota: &'a Quota,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(self.keep(entry.clone(), *quota))
    }

    fn read_state<'a>(
        &'a self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, TaskStoreError>> {
        Box::pin(self.read_kept(key))
    }

    fn insert<'a>(
        &'a self,
        record: &'a TaskRecord,
        quota: &'a Quota,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move { self.commit(Write::insert(record, quota)?).await.map(drop) })
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

impl SqliteTasks {
    /// Keeps `entry` in one `BEGIN IMMEDIATE` transaction: the expired states uncounted
    /// and deleted, the counts read and admitted against, the state written and counted.
    async fn keep(&self, entry: KeptEntry, quota: Quota) -> Result<(), TaskStoreError> {
        self.db
            .run(move |connection| {
                let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let now = now();
                let expired: Vec<(String, bool, i64)> = tx
                    .prepare_cached(&lite(states::EXPIRED))?
                    .query_map(params![now], |row| {
                        Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                    })?
                    .collect::<rusqlite::Result<_>>()?;
                for (owner, shared, bytes) in expired {
                    for scope in states::scopes(&owner, shared) {
                        tx.prepare_cached(&lite(states::COUNT))?
                            .execute(params![scope, -bytes])?;
                    }
                }
                tx.prepare_cached(&lite(states::DELETE_EXPIRED))?
                    .execute(params![now])?;
                tx.prepare_cached(&lite(states::DROP_EMPTY))?.execute([])?;
                let taken: i64 = tx
                    .prepare_cached(&lite(states::TAKEN))?
                    .query_row(params![entry.key], |row| row.get(0))?;
                if taken > 0 {
                    return Ok(Err(states::taken()));
                }
                let rows: Vec<(String, i64)> = tx
                    .prepare_cached(&lite(states::COUNTS))?
                    .query_map(params![sql::owner_scope(&entry.owner)], |row| {
                        Ok((row.get(0)?, row.get(1)?))
                    })?
                    .collect::<rusqlite::Result<_>>()?;
                let bytes = entry.token.len();
                if let Err(refused) = states::admit(rows, &entry.owner, &quota, bytes) {
                    return Ok(Err(refused));
                }
                tx.prepare_cached(&lite(states::INSERT))?.execute(params![
                    entry.key,
                    entry.owner,
                    entry.shared,
                    to_sql(bytes as u64),
                    to_sql(entry.expires_ms),
                    entry.token
                ])?;
                for scope in states::scopes(&entry.owner, entry.shared) {
                    tx.prepare_cached(&lite(states::COUNT))?
                        .execute(params![scope, to_sql(bytes as u64)])?;
                }
                tx.commit()?;
                Ok(Ok(()))
            })
            .await
            .map_err(unavailable)?
    }

    async fn read_kept(&self, key: &str) -> Result<Option<String>, TaskStoreError> {
        let (key, now) = (key.to_owned(), now());
        self.db
            .run(move |connection| {
                connection
                    .prepare_cached(&lite(states::GET))?
                    .query_row(params![key, now], |row| row.get(0))
                    .optional()
            })
            .await
            .map_err(unavailable)
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
        Box::pin(self.commit(Write::update(id, at, columns, quota)))
    }
}

impl SqliteTasks {
    /// Queues `write` for the next transaction, starting the writer if none runs, and
    /// waits for its commit.
    async fn commit(&self, write: Write) -> Outcome {
        let (outcome, queued) = self.writes.push(write);
        if let Queued::Start = queued {
            let (db, writes) = (self.db.clone(), Arc::clone(&self.writes));
            // The writer runs on its own: a caller that stops waiting leaves the others'
            // writes to it.
            drop(tokio::task::spawn_blocking(move || {
                let mut flusher = Flusher::new(writes);
                while let Some(batch) = flusher.next() {
                    db.with(|connection| flush(connection, batch));
                }
            }));
        }
        group_commit::outcome(outcome).await
    }

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

/// Writes `batch` in one transaction and answers each write once it committed. A batch
/// in which the database refused a write is written again one write at a time, so that
/// only that write fails; a batch that failed otherwise (the file busy past its timeout,
/// the commit) fails whole.
fn flush(connection: &mut Connection, batch: Vec<QueuedWrite<Write>>) {
    let writes: Vec<&Write> = batch.iter().map(|entry| &entry.write).collect();
    match write_batch(connection, &writes) {
        Ok(outcomes) => group_commit::answer(batch, outcomes),
        Err(Failed::Write(_)) if batch.len() > 1 => {
            for entry in batch {
                flush(connection, vec![entry]);
            }
        }
        Err(Failed::Write(why) | Failed::Batch(why)) => group_commit::fail(batch, &why),
    }
}

/// Admits and applies `writes` in one transaction; their outcomes once it committed.
fn write_batch(connection: &mut Connection, writes: &[&Write]) -> Result<Vec<Outcome>, Failed> {
    let batch = |error: rusqlite::Error| Failed::Batch(error.to_string());
    let tx = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(batch)?;
    let now = now();
    tx.execute(&lite(sql::DELETE_EXPIRED), [now])
        .map_err(batch)?;
    let mut counts = Counts::default();
    let mut read = std::collections::HashSet::new();
    for write in writes {
        if read.insert(write.owner()) {
            let mut statement = tx.prepare_cached(&lite(sql::COUNTS)).map_err(batch)?;
            let rows = statement
                .query_map([sql::owner_scope(write.owner())], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                })
                .map_err(batch)?;
            for row in rows {
                counts.read(row.map_err(batch)?);
            }
        }
    }
    let mut outcomes = Vec::with_capacity(writes.len());
    for write in writes {
        if let Err(refused) = counts.admit(write) {
            outcomes.push(Err(refused));
            continue;
        }
        let applied = apply(&tx, write).map_err(|error| Failed::Write(error.to_string()))?;
        outcomes.push(Ok(applied));
    }
    tx.commit().map_err(batch)?;
    Ok(outcomes)
}

/// One admitted write: `false` if another writer moved the row on.
fn apply(tx: &Transaction<'_>, write: &Write) -> rusqlite::Result<bool> {
    match write {
        Write::Insert {
            id,
            columns,
            shared,
            ..
        } => {
            tx.prepare_cached(&lite(sql::INSERT))?.execute(params![
                id,
                columns.owner,
                shared,
                columns.bytes,
                columns.expires_ms,
                columns.working,
                columns.lease_until_ms,
                columns.text
            ])?;
            Ok(true)
        }
        Write::Update {
            id, at, columns, ..
        } => {
            let written = tx.prepare_cached(&lite(sql::WRITE))?.execute(params![
                id,
                at.version,
                columns.text,
                columns.bytes,
                columns.working,
                columns.lease_until_ms,
                columns.expires_ms
            ])?;
            Ok(written == 1)
        }
    }
}

/// Makes the counters and their triggers if the file has none, counting its rows once.
fn count_tasks(connection: &mut Connection) -> rusqlite::Result<()> {
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(sql::COUNTS_TABLE)?;
    tx.execute_batch(COUNT_TRIGGERS)?;
    if tx.execute(sql::COUNTS_MADE, [])? == 1 {
        for statement in sql::COUNT_ROWS {
            tx.execute(statement, [])?;
        }
    }
    tx.commit()
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
        db.with(count_tasks)
            .map_err(|error| TaskStoreError::Unavailable(format!("{}: {error}", path.display())))?;
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
            writes: Arc::default(),
            #[cfg(unix)]
            liveness,
        }))
    }
}
