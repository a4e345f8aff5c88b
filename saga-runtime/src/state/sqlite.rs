//! One local SQLite file (feature `sqlite`): the database both the single-use store
//! ([`SqliteStore`]) and the task store (`TaskStore::sqlite`) keep their rows in.
//!
//! The file is opened in WAL mode with `synchronous = FULL`: a write is on disk when the
//! call that made it returns, so neither `kill -9` of the server nor a power cut loses a
//! redeemed token or a task's step that was acknowledged. (`NORMAL` would survive the
//! process being killed, not the machine losing power; a task store is where a user puts
//! work they cannot lose, so the safer mode is the default, and the cost is measured in
//! BENCHMARKS.md.) Several processes may share one file: a writer waits up to
//! [`BUSY_TIMEOUT`] for another's transaction.
//!
//! rusqlite is synchronous: each use runs on tokio's blocking pool, one at a time per
//! opened file, so that no request's database work holds a runtime thread.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use super::single_use::{Claim, StoreError, TokenStore, sweep_due};
use super::to_sql;
use futures::future::BoxFuture;
use saga_wire::Link;
use saga_wire::unix_now;

/// How long a write waits for another connection's transaction on the same file.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// An opened SQLite file, shared by the stores of one process.
#[derive(Clone)]
pub(crate) struct Db {
    connection: Arc<Mutex<Connection>>,
    path: Arc<str>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("path", &self.path).finish()
    }
}

impl Db {
    /// Opens (creating if needed) the file at `path`, in WAL mode, with every table of
    /// saga's stores. Synchronous: a server opens its file once, when it is built, and the
    /// open takes milliseconds.
    pub(crate) fn open(path: &Path) -> Result<Db, String> {
        let path_text: Arc<str> = path.display().to_string().into();
        let open = || -> Result<Connection, String> {
            // A file that exists is read first without writing: one that is no SQLite
            // database, or one of another schema, is refused as it was found (switching
            // it to WAL first would change a file this build then refuses).
            if path.exists() {
                check_read_only(path)?;
            }
            let mut connection = Connection::open(path).map_err(|e| e.to_string())?;
            connection
                .busy_timeout(BUSY_TIMEOUT)
                .map_err(|e| e.to_string())?;
            let mode: String = connection
                .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
                .map_err(|e| e.to_string())?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(format!("the file cannot be put in WAL mode (it is {mode})"));
            }
            // The WAL is truncated back to 4 MiB after each checkpoint (every 1,000 pages
            // by default): without a limit it keeps its largest size for good, so a burst
            // of kept states would hold its disk space after they expire.
            connection
                .execute_batch("PRAGMA synchronous = FULL; PRAGMA journal_size_limit = 4194304;")
                .map_err(|e| e.to_string())?;
            let tx = connection
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(|e| e.to_string())?;
            tx.execute_batch(&super::sql_meta("INTEGER"))
                .map_err(|e| e.to_string())?;
            let schema: i64 = tx
                .query_row(super::SQL_SCHEMA_QUERY, [], |row| row.get(0))
                .map_err(|e| e.to_string())?;
            if schema != super::SQL_SCHEMA {
                // Dropping the transaction rolls it back: nothing is created.
                return Err(super::other_schema(schema));
            }
            tx.execute_batch(&super::sql_tables("INTEGER", "BLOB", "INTEGER"))
                .map_err(|e| e.to_string())?;
            tx.commit().map_err(|e| e.to_string())?;
            Ok(connection)
        };
        let connection = open().map_err(|error| format!("{path_text}: {error}"))?;
        Ok(Db {
            connection: Arc::new(Mutex::new(connection)),
            path: path_text,
        })
    }

    /// Runs `work` on the connection here, on this thread: for work that is on a
    /// blocking thread already, or at start-up.
    pub(crate) fn with<T>(&self, work: impl FnOnce(&mut Connection) -> T) -> T {
        // A poisoned lock: see `run`.
        let mut connection = self
            .connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        work(&mut connection)
    }

    /// Runs `work` on the connection, on the blocking pool.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, String> {
        let connection = Arc::clone(&self.connection);
        let path = Arc::clone(&self.path);
        tokio::task::spawn_blocking(move || {
            // A poisoned lock means a panic mid-use: SQLite rolled back the transaction
            // it was in when its statement was dropped, so the connection is usable.
            let mut connection = connection
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            work(&mut connection)
        })
        .await
        .map_err(|error| format!("{path}: {error}"))?
        .map_err(|error| format!("{path}: {error}"))
    }
}

/// Reads the schema of the existing file at `path` opened read-only: an error if it is no
/// database, or if its `saga_meta` names another schema. A file without `saga_meta`
/// (empty, or new) is left for the read-write open to set up.
fn check_read_only(path: &Path) -> Result<(), String> {
    let connection = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| e.to_string())?;
    connection
        .busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| e.to_string())?;
    let has_meta: bool = connection
        .query_row(
            "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'saga_meta'",
            [],
            |row| row.get(0),
        )
        .map_err(|e| e.to_string())?;
    if !has_meta {
        return Ok(());
    }
    let schema: Option<i64> = connection
        .query_row(super::SQL_SCHEMA_QUERY, [], |row| row.get(0))
        .optional()
        .map_err(|e| e.to_string())?;
    match schema {
        Some(schema) if schema != super::SQL_SCHEMA => Err(super::other_schema(schema)),
        _ => Ok(()),
    }
}

/// A single-use store in a local SQLite file: durable across restarts of the one server
/// that uses it, so a token redeemed before a restart stays redeemed after it. A
/// redeemed token is a row of `saga_used`, a chain's floor one of `saga_chains`; each is
/// deleted once no token it guards can be presented.
///
/// ```no_run
/// # async fn run() -> Result<(), saga_runtime::state::StoreError> {
/// let store = saga_runtime::state::SqliteStore::open("saga.db")?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SqliteStore {
    db: Db,
}

impl SqliteStore {
    /// Sets the lease of the running claim `id` (given `expected`, only if it is held until
    /// exactly that): whether it was so held. One statement, atomic.
    async fn set_lease(
        &self,
        id: [u8; 24],
        expected: Option<u64>,
        lease_until: u64,
    ) -> Result<bool, StoreError> {
        let now = to_sql(unix_now());
        self.db
            .run(move |connection| {
                let changed = connection.execute(
                    "UPDATE saga_outcomes SET lease_until = ?1
                     WHERE nonce = ?2 AND outcome IS NULL AND lease_until IS NOT NULL
                       AND keep_until >= ?3 AND (?4 IS NULL OR lease_until = ?4)",
                    params![to_sql(lease_until), &id[..], now, expected.map(to_sql)],
                )?;
                Ok(changed == 1)
            })
            .await
            .map_err(StoreError::Unavailable)
    }

    /// Opens (creating if needed) the SQLite file at `path`. The task store may use the
    /// same file (`TaskStore::sqlite`).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Ok(Self {
            db: Db::open(path.as_ref()).map_err(StoreError::Unavailable)?,
        })
    }
}

impl TokenStore for SqliteStore {
    fn redeem<'a>(
        &'a self,
        id: &'a [u8; 24],
        keep_until: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let id = *id;
        Box::pin(async move {
            let now = to_sql(unix_now());
            let link = Link::of_nonce(&id);
            self.db
                .run(move |connection| {
                    let tx = connection
                        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                    if retired(&tx, link, now)? {
                        return Ok(false);
                    }
                    // A row whose token expired may be taken again: that token is refused
                    // before it is redeemed, so the nonce is free.
                    let inserted = tx.execute(
                        "INSERT INTO saga_used (nonce, keep_until) VALUES (?1, ?2)
                         ON CONFLICT (nonce) DO UPDATE SET keep_until = excluded.keep_until
                         WHERE saga_used.keep_until < ?3",
                        params![&id[..], to_sql(keep_until), now],
                    )?;
                    if sweep_due() {
                        sweep(&tx, now)?;
                    }
                    tx.commit()?;
                    Ok(inserted == 1)
                })
                .await
                .map_err(StoreError::Unavailable)
        })
    }

    fn retire<'a>(
        &'a self,
        chain: &'a [u8; 8],
        floor: u64,
        keep_until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let chain = *chain;
        Box::pin(async move {
            let now = to_sql(unix_now());
            self.db
                .run(move |connection| {
                    // A floor whose time is over guards nothing: it is replaced, not raised.
                    connection.execute(
                        "INSERT INTO saga_chains (chain, floor, keep_until) VALUES (?1, ?2, ?3)
                         ON CONFLICT (chain) DO UPDATE SET
                           floor = CASE WHEN saga_chains.keep_until < ?4 THEN excluded.floor
                                        ELSE max(saga_chains.floor, excluded.floor) END,
                           keep_until = max(saga_chains.keep_until, excluded.keep_until)",
                        params![&chain[..], to_sql(floor), to_sql(keep_until), now],
                    )?;
                    Ok(())
                })
                .await
                .map_err(StoreError::Unavailable)
        })
    }

    fn records_outcomes(&self) -> bool {
        true
    }

    fn leases_renewed(&self) -> bool {
        true
    }

    fn renew<'a>(
        &'a self,
        id: &'a [u8; 24],
        lease_until: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.set_lease(*id, None, lease_until))
    }

    fn take_over<'a>(
        &'a self,
        id: &'a [u8; 24],
        expired: u64,
        lease_until: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.set_lease(*id, Some(expired), lease_until))
    }

    fn claim<'a>(
        &'a self,
        id: &'a [u8; 24],
        keep_until: u64,
        lease_until: u64,
    ) -> BoxFuture<'a, Result<Claim, StoreError>> {
        let id = *id;
        Box::pin(async move {
            let now = to_sql(unix_now());
            let link = Link::of_nonce(&id);
            self.db
                .run(move |connection| {
                    let tx = connection
                        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                    let redeemed: bool = tx.query_row(
                        "SELECT count(*) > 0 FROM saga_used WHERE nonce = ?1 AND keep_until >= ?2",
                        params![&id[..], now],
                        |row| row.get(0),
                    )?;
                    if redeemed {
                        // Read whatever the chain's floor says: the request that redeemed
                        // it may have retired it, handing out the next token.
                        let held: Option<(Option<i64>, Option<Vec<u8>>)> = tx
                            .query_row(
                                "SELECT lease_until, outcome FROM saga_outcomes
                                 WHERE nonce = ?1 AND keep_until >= ?2",
                                params![&id[..], now],
                                |row| Ok((row.get(0)?, row.get(1)?)),
                            )
                            .optional()?;
                        return Ok(super::single_use::held_claim(held));
                    }
                    if retired(&tx, link, now)? {
                        return Ok(Claim::Spent);
                    }
                    tx.execute(
                        "INSERT INTO saga_used (nonce, keep_until) VALUES (?1, ?2)
                         ON CONFLICT (nonce) DO UPDATE SET keep_until = excluded.keep_until",
                        params![&id[..], to_sql(keep_until)],
                    )?;
                    tx.execute(
                        "INSERT INTO saga_outcomes (nonce, lease_until, outcome, keep_until)
                         VALUES (?1, ?2, NULL, ?3)
                         ON CONFLICT (nonce) DO UPDATE SET lease_until = excluded.lease_until,
                           outcome = NULL, keep_until = excluded.keep_until",
                        params![&id[..], to_sql(lease_until), to_sql(keep_until)],
                    )?;
                    if sweep_due() {
                        sweep(&tx, now)?;
                    }
                    tx.commit()?;
                    Ok(Claim::First)
                })
                .await
                .map_err(StoreError::Unavailable)
        })
    }

    fn held<'a>(&'a self, id: &'a [u8; 24]) -> BoxFuture<'a, Result<Claim, StoreError>> {
        let id = *id;
        Box::pin(async move {
            let now = to_sql(unix_now());
            self.db
                .run(move |connection| {
                    let held: Option<(Option<i64>, Option<Vec<u8>>)> = connection
                        .query_row(
                            "SELECT lease_until, outcome FROM saga_outcomes
                             WHERE nonce = ?1 AND keep_until >= ?2",
                            params![&id[..], now],
                            |row| Ok((row.get(0)?, row.get(1)?)),
                        )
                        .optional()?;
                    Ok(super::single_use::held_claim(held))
                })
                .await
                .map_err(StoreError::Unavailable)
        })
    }

    fn record<'a>(
        &'a self,
        id: &'a [u8; 24],
        outcome: &'a [u8],
        keep_until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let (id, outcome) = (*id, outcome.to_vec());
        Box::pin(async move {
            self.db
                .run(move |connection| {
                    if outcome.is_empty() {
                        // No row: spent.
                        connection
                            .execute("DELETE FROM saga_outcomes WHERE nonce = ?1", [&id[..]])?;
                    } else {
                        connection.execute(
                            "UPDATE saga_outcomes SET lease_until = NULL, outcome = ?2,
                               keep_until = max(keep_until, ?3)
                             WHERE nonce = ?1",
                            params![&id[..], outcome, to_sql(keep_until)],
                        )?;
                    }
                    Ok(())
                })
                .await
                .map_err(StoreError::Unavailable)
        })
    }
}

/// Whether the token of `link` is below its chain's floor.
fn retired(tx: &rusqlite::Transaction<'_>, link: Link, now: i64) -> rusqlite::Result<bool> {
    let floor: Option<i64> = tx
        .query_row(
            "SELECT floor FROM saga_chains WHERE chain = ?1 AND keep_until >= ?2",
            params![&link.chain[..], now],
            |row| row.get(0),
        )
        .optional()?;
    Ok(floor.is_some_and(|floor| i64::from(link.seq) < floor))
}

/// Deletes the rows no token can use any more.
fn sweep(tx: &rusqlite::Transaction<'_>, now: i64) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM saga_used WHERE keep_until < ?1", [now])?;
    tx.execute("DELETE FROM saga_chains WHERE keep_until < ?1", [now])?;
    tx.execute("DELETE FROM saga_outcomes WHERE keep_until < ?1", [now])?;
    Ok(())
}
