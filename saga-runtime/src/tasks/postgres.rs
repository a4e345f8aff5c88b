//! Task records in Postgres (feature `postgres`), shared by every replica. The pool and
//! its bounds are in `state::postgres`; the table and the update in [`super::sql`].
//!
//! Inserts and writes are group-committed ([`super::group_commit`]): each batch is one
//! transaction that first takes one advisory lock ([`QUOTA_LOCK`]), so quota checks run
//! one batch at a time across the fleet and two replicas cannot both admit the last task
//! a quota allows. The batch's statements are pipelined on one connection (sent without
//! waiting for each answer), and its one commit acknowledges them all. A write is
//! `UPDATE … WHERE version = $2`, which exactly one of two racing replicas wins (a
//! takeover, say; the other reads again).

use std::sync::Arc;

use futures::future::join_all;
use tokio_postgres::types::ToSql;

use super::TaskRecord;
use super::group_commit::{self, Failed, Flusher, Outcome, Queue, Queued, QueuedWrite};
use super::sql::{
    self, At, Columns, Counts, Row, Rows, Write, from_sql, now, states, to_sql, unavailable,
};
use super::store::{Change, KeptEntry, Quota, TaskBackend, TaskStore, TaskStoreError};
use crate::state::postgres::{Db, describe};
use futures::future::BoxFuture;

/// The counters' triggers (see [`super::sql`]): an insert counts its rows, a delete
/// uncounts them, a change of size moves the bytes. Owner and share never change in a
/// row. Statement triggers over transition tables: a statement that deletes a hundred
/// thousand expired rows updates each counter once. (A row trigger would update the store's
/// counter once per row, and Postgres keeps every version of a row updated within one
/// transaction: such a delete would slow down with the square of its rows.)
const COUNT_TRIGGERS: &str = "
CREATE OR REPLACE FUNCTION saga_tasks_counted() RETURNS trigger LANGUAGE plpgsql AS $count$
BEGIN
    INSERT INTO saga_task_counts AS c (scope, tasks, bytes)
        SELECT scope, count(*), sum(bytes) FROM (
            SELECT 'store' AS scope, bytes FROM new_rows
            UNION ALL SELECT 'owner:' || owner, bytes FROM new_rows
            UNION ALL SELECT 'shared', bytes FROM new_rows WHERE shared
        ) added GROUP BY scope
        ON CONFLICT (scope) DO UPDATE
            SET tasks = c.tasks + excluded.tasks, bytes = c.bytes + excluded.bytes;
    RETURN NULL;
END
$count$;
CREATE OR REPLACE FUNCTION saga_tasks_uncounted() RETURNS trigger LANGUAGE plpgsql AS $count$
BEGIN
    UPDATE saga_task_counts AS c SET tasks = c.tasks - removed.tasks, bytes = c.bytes - removed.bytes
        FROM (
            SELECT scope, count(*) AS tasks, sum(bytes) AS bytes FROM (
                SELECT 'store' AS scope, bytes FROM old_rows
                UNION ALL SELECT 'owner:' || owner, bytes FROM old_rows
                UNION ALL SELECT 'shared', bytes FROM old_rows WHERE shared
            ) gone GROUP BY scope
        ) removed
        WHERE c.scope = removed.scope;
    DELETE FROM saga_task_counts
        WHERE tasks <= 0 AND scope IN (SELECT DISTINCT 'owner:' || owner FROM old_rows);
    RETURN NULL;
END
$count$;
CREATE OR REPLACE FUNCTION saga_tasks_resized() RETURNS trigger LANGUAGE plpgsql AS $count$
BEGIN
    UPDATE saga_task_counts AS c SET bytes = c.bytes + moved.bytes
        FROM (
            SELECT scope, sum(delta) AS bytes FROM (
                SELECT n.bytes - o.bytes AS delta, 'owner:' || o.owner AS owner, o.shared
                    FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE n.bytes <> o.bytes
            ) changed,
            LATERAL (VALUES ('store'), (owner), (CASE WHEN shared THEN 'shared' END)) AS s(scope)
            WHERE scope IS NOT NULL GROUP BY scope
        ) moved
        WHERE c.scope = moved.scope;
    RETURN NULL;
END
$count$;
DROP TRIGGER IF EXISTS saga_tasks_counted ON saga_tasks;
DROP TRIGGER IF EXISTS saga_tasks_uncounted ON saga_tasks;
DROP TRIGGER IF EXISTS saga_tasks_resized ON saga_tasks;
CREATE TRIGGER saga_tasks_counted AFTER INSERT ON saga_tasks
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION saga_tasks_counted();
CREATE TRIGGER saga_tasks_uncounted AFTER DELETE ON saga_tasks
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION saga_tasks_uncounted();
CREATE TRIGGER saga_tasks_resized AFTER UPDATE ON saga_tasks
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION saga_tasks_resized();";

/// The advisory lock quota checks take.
const QUOTA_LOCK: i64 = 0x5a6a_0002;
/// The advisory lock a state's keep takes (see [`super::states`]).
const STATES_LOCK: i64 = 0x5a6a_0003;

#[derive(Debug)]
pub(crate) struct PostgresTasks {
    db: Db,
    /// The writes waiting for the next transaction.
    writes: Arc<Queue<Write>>,
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

impl TaskBackend for PostgresTasks {
    fn keep_state<'a>(
        &'a self,
        entry: &'a KeptEntry,
        quota: &'a Quota,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(self.keep(entry, quota))
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
        Box::pin(self.commit(Write::update(id, at, columns, quota)))
    }
}

impl PostgresTasks {
    /// Keeps `entry` in one transaction under [`STATES_LOCK`]: the expired states
    /// uncounted and deleted, the counts read and admitted against, the state written and
    /// counted. Keeps run one at a time across the fleet, so that two replicas cannot both
    /// admit the last bytes a bound allows.
    async fn keep(&self, entry: &KeptEntry, quota: &Quota) -> Result<(), TaskStoreError> {
        let held = InBatch(Some(self.db.client().await.map_err(unavailable)?));
        let client = held.client();
        client.batch_execute("BEGIN").await.map_err(failed)?;
        let kept = async {
            client
                .execute("SELECT pg_advisory_xact_lock($1)", &[&STATES_LOCK])
                .await
                .map_err(failed)?;
            let now = now();
            let expired = client
                .query(states::EXPIRED, &[&now])
                .await
                .map_err(failed)?;
            let count = client.prepare_cached(states::COUNT).await.map_err(failed)?;
            for row in expired {
                let (owner, shared, bytes): (String, bool, i64) =
                    (column(&row, 0)?, column(&row, 1)?, column(&row, 2)?);
                for scope in states::scopes(&owner, shared) {
                    client
                        .execute(&count, &[&scope, &-bytes])
                        .await
                        .map_err(failed)?;
                }
            }
            client
                .execute(states::DELETE_EXPIRED, &[&now])
                .await
                .map_err(failed)?;
            client
                .execute(states::DROP_EMPTY, &[])
                .await
                .map_err(failed)?;
            let taken: i64 = column(
                &client
                    .query_one(states::TAKEN, &[&entry.key])
                    .await
                    .map_err(failed)?,
                0,
            )?;
            if taken > 0 {
                return Err(states::taken());
            }
            let rows = client
                .query(states::COUNTS, &[&sql::owner_scope(&entry.owner)])
                .await
                .map_err(failed)?
                .iter()
                .map(|row| Ok((column(row, 0)?, column(row, 1)?)))
                .collect::<Result<Vec<(String, i64)>, TaskStoreError>>()?;
            let bytes = entry.token.len();
            states::admit(rows, &entry.owner, quota, bytes)?;
            let bytes = to_sql(bytes as u64);
            client
                .execute(
                    states::INSERT,
                    &[
                        &entry.key,
                        &entry.owner,
                        &entry.shared,
                        &bytes,
                        &to_sql(entry.expires_ms),
                        &entry.token,
                    ],
                )
                .await
                .map_err(failed)?;
            for scope in states::scopes(&entry.owner, entry.shared) {
                client
                    .execute(&count, &[&scope, &bytes])
                    .await
                    .map_err(failed)?;
            }
            Ok(())
        }
        .await;
        let end = if kept.is_ok() { "COMMIT" } else { "ROLLBACK" };
        client.batch_execute(end).await.map_err(failed)?;
        held.ended();
        kept
    }

    async fn read_kept(&self, key: &str) -> Result<Option<String>, TaskStoreError> {
        let client = self.db.client().await.map_err(unavailable)?;
        let row = client
            .query_opt(states::GET, &[&key, &now()])
            .await
            .map_err(failed)?;
        row.map(|row| column(&row, 0)).transpose()
    }

    async fn read_row(&self, id: &str) -> Result<Option<Row>, TaskStoreError> {
        let client = self.db.client().await.map_err(unavailable)?;
        let get = client.prepare_cached(sql::GET).await.map_err(failed)?;
        let row = client
            .query_opt(&get, &[&id, &now()])
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

    /// Queues `write` for the next transaction, starting the writer if none runs, and
    /// waits for its commit.
    async fn commit(&self, write: Write) -> Outcome {
        let (outcome, queued) = self.writes.push(write);
        if let Queued::Start = queued {
            let (db, writes) = (self.db.clone(), Arc::clone(&self.writes));
            // The writer runs on its own: a caller that stops waiting leaves the others'
            // writes to it.
            drop(tokio::spawn(async move {
                let mut flusher = Flusher::new(writes);
                while let Some(batch) = flusher.next() {
                    flush(&db, batch).await;
                }
            }));
        }
        group_commit::outcome(outcome).await
    }
}

/// Writes `batch` in one transaction and answers each write once it committed. A batch
/// in which the database refused a write is written again one write at a time, so that
/// only that write fails; a batch that failed otherwise (the pool, the lock's timeout,
/// the commit) fails whole.
async fn flush(db: &Db, batch: Vec<QueuedWrite<Write>>) {
    let writes: Vec<&Write> = batch.iter().map(|entry| &entry.write).collect();
    let result = write_batch(db, &writes).await;
    drop(writes);
    match result {
        Ok(outcomes) => group_commit::answer(batch, outcomes),
        Err(Failed::Write(_)) if batch.len() > 1 => {
            for entry in batch {
                Box::pin(flush(db, vec![entry])).await;
            }
        }
        Err(Failed::Write(why) | Failed::Batch(why)) => group_commit::fail(batch, &why),
    }
}

/// A pooled connection inside a batch: dropped, not returned to the pool, unless the batch
/// ended (committed, or rolled back) — so that a batch that failed or panicked midway
/// leaves no connection in the pool inside its transaction, holding the quota lock.
struct InBatch(Option<deadpool_postgres::Object>);

impl InBatch {
    fn client(&self) -> &deadpool_postgres::Object {
        // Some until `ended` or drop.
        self.0
            .as_ref()
            .unwrap_or_else(|| unreachable!("a batch's connection is held"))
    }

    /// The batch ended: the connection goes back to the pool.
    fn ended(mut self) {
        drop(self.0.take());
    }
}

impl Drop for InBatch {
    fn drop(&mut self) {
        if let Some(client) = self.0.take() {
            drop(deadpool_postgres::Object::take(client));
        }
    }
}

/// Admits and applies `writes` in one transaction; their outcomes once it committed.
///
/// Two round trips: `BEGIN`, the lock, the expired rows' delete and the counts, sent at
/// once (pipelined: they run in the order sent); then, once the writes are admitted, the
/// writes and `COMMIT`. Every write is sent before the `COMMIT` is: each is polled once,
/// in order, before the `COMMIT` is made (a write that fails before it is sent, its
/// parameters refused by the client, turns the `COMMIT` into a `ROLLBACK`). A write that
/// fails in the database aborts the transaction, and the `COMMIT` behind it then ends it
/// as a rollback: so the batch counts as committed only if every write succeeded as well
/// as the `COMMIT`.
async fn write_batch(db: &Db, writes: &[&Write]) -> Result<Vec<Outcome>, Failed> {
    let batch = |error: tokio_postgres::Error| Failed::Batch(describe(error));
    let held = InBatch(Some(
        db.client()
            .await
            .map_err(|error| Failed::Batch(error.to_string()))?,
    ));
    let client = held.client();
    let now = now();
    // Each statement prepared once per connection (a prepare is a round trip of its own),
    // and all of them before anything is sent.
    let (lock, delete, read_counts, insert, write) = futures::try_join!(
        client.prepare_cached("SELECT pg_advisory_xact_lock($1)"),
        client.prepare_cached(sql::DELETE_EXPIRED),
        client.prepare_cached(sql::COUNTS),
        client.prepare_cached(sql::INSERT),
        client.prepare_cached(sql::WRITE),
    )
    .map_err(batch)?;
    let statements = Statements { insert, write };
    let mut scopes: Vec<String> = writes
        .iter()
        .map(|write| sql::owner_scope(write.owner()))
        .collect();
    scopes.sort_unstable();
    scopes.dedup();
    let reads = scopes.iter().map(|scope| {
        let read_counts = &read_counts;
        async move { client.query(read_counts, &[scope]).await }
    });
    let (lock_at, now_at): ([&(dyn ToSql + Sync); 1], [&(dyn ToSql + Sync); 1]) =
        ([&QUOTA_LOCK], [&now]);
    let (begun, locked, deleted, read) = futures::join!(
        client.batch_execute("BEGIN"),
        client.execute(&lock, &lock_at),
        client.execute(&delete, &now_at),
        join_all(reads),
    );
    // Checked before anything is written: without a transaction, nothing more is sent.
    begun.map_err(batch)?;
    locked.map_err(batch)?;
    deleted.map_err(batch)?;
    let mut counts = Counts::default();
    for rows in read {
        for row in rows.map_err(batch)? {
            let (scope, tasks, bytes) = (column(&row, 0), column(&row, 1), column(&row, 2));
            let unreadable = |error: TaskStoreError| Failed::Batch(error.to_string());
            counts.read((
                scope.map_err(unreadable)?,
                tasks.map_err(unreadable)?,
                bytes.map_err(unreadable)?,
            ));
        }
    }
    let admitted: Vec<Result<(), TaskStoreError>> =
        writes.iter().map(|write| counts.admit(write)).collect();
    let mut applying: Vec<_> = writes
        .iter()
        .zip(&admitted)
        .filter(|(_, admitted)| admitted.is_ok())
        .map(|(write, _)| Box::pin(apply(client, &statements, write)))
        .collect();
    // Each write polled once, in order: its statement is sent.
    let mut applied: Vec<Option<Result<bool, TaskStoreError>>> = Vec::new();
    futures::future::poll_fn(|cx| {
        applied = applying
            .iter_mut()
            .map(|future| match future.as_mut().poll(cx) {
                std::task::Poll::Ready(outcome) => Some(outcome),
                std::task::Poll::Pending => None,
            })
            .collect();
        std::task::Poll::Ready(())
    })
    .await;
    let unsent = applied
        .iter()
        .any(|outcome| matches!(outcome, Some(Err(_))));
    let end = if unsent { "ROLLBACK" } else { "COMMIT" };
    let rest = applying
        .iter_mut()
        .zip(&applied)
        .filter(|(_, first)| first.is_none())
        .map(|(future, _)| future);
    let (rest, ended) = futures::join!(join_all(rest), client.batch_execute(end));
    let mut rest = rest.into_iter();
    let mut results = applied
        .into_iter()
        .map(|first| first.or_else(|| rest.next()).unwrap_or(Ok(false)));
    let mut outcomes = Vec::with_capacity(writes.len());
    for admitted in admitted {
        outcomes.push(match admitted {
            // A failed write: the COMMIT rolled the batch back.
            Ok(()) => Ok(results
                .next()
                .unwrap_or(Ok(false))
                .map_err(|error| Failed::Write(error.to_string()))?),
            Err(refused) => Err(refused),
        });
    }
    ended.map_err(batch)?;
    if unsent {
        return Err(Failed::Write("a write's parameters were refused".into()));
    }
    drop(applying);
    held.ended();
    Ok(outcomes)
}

/// The two writes' statements, prepared.
struct Statements {
    insert: tokio_postgres::Statement,
    write: tokio_postgres::Statement,
}

/// One admitted write: `false` if another writer moved the row on.
async fn apply(
    client: &deadpool_postgres::Object,
    statements: &Statements,
    write: &Write,
) -> Result<bool, TaskStoreError> {
    match write {
        Write::Insert {
            id,
            columns,
            shared,
            ..
        } => {
            let values: [&(dyn ToSql + Sync); 8] = [
                id,
                &columns.owner,
                shared,
                &columns.bytes,
                &columns.expires_ms,
                &columns.working,
                &columns.lease_until_ms,
                &columns.text,
            ];
            client
                .execute(&statements.insert, &values)
                .await
                .map_err(failed)?;
            Ok(true)
        }
        Write::Update {
            id, at, columns, ..
        } => {
            let values: [&(dyn ToSql + Sync); 7] = [
                id,
                &at.version,
                &columns.text,
                &columns.bytes,
                &columns.working,
                &columns.lease_until_ms,
                &columns.expires_ms,
            ];
            let written = client
                .execute(&statements.write, &values)
                .await
                .map_err(failed)?;
            Ok(written == 1)
        }
    }
}

/// Makes the counters and their triggers if the database has none, counting its rows
/// once; under the schema's lock, so that replicas starting together make them once.
async fn count_tasks(db: &Db) -> Result<(), TaskStoreError> {
    let mut client = db.client().await.map_err(unavailable)?;
    let tx = client.transaction().await.map_err(failed)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1)",
        &[&crate::state::postgres::SCHEMA_LOCK],
    )
    .await
    .map_err(failed)?;
    tx.batch_execute(sql::COUNTS_TABLE).await.map_err(failed)?;
    if tx.execute(sql::COUNTS_MADE, &[]).await.map_err(failed)? == 1 {
        tx.batch_execute(COUNT_TRIGGERS).await.map_err(failed)?;
        for statement in sql::COUNT_ROWS {
            tx.execute(statement, &[]).await.map_err(failed)?;
        }
    }
    tx.commit().await.map_err(failed)
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
        count_tasks(&db).await?;
        Ok(Self::custom(PostgresTasks {
            db,
            writes: Arc::default(),
        }))
    }
}
