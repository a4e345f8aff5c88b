//! Postgres (feature `postgres`): the database the single-use store ([`PostgresStore`])
//! and the task store (`TaskStore::postgres`) share across a fleet of replicas.
//!
//! Each store holds a small pool of connections ([`POOL_SIZE`]). A connection the server
//! closed (a restart, a failover) is dropped at its next use and a new one is made, so
//! that a database that goes away and comes back costs the calls made while it is gone
//! (each fails whole, as `-32603`) and nothing after. Connecting waits at most
//! [`CONNECT_TIMEOUT`], and a statement runs at most [`STATEMENT_TIMEOUT`]: an
//! unreachable or stuck database fails a call, never hangs it.
//!
//! The connection is not encrypted (`NoTls`): run Postgres on a private network, or put a
//! TLS proxy beside each replica.

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

use super::single_use::{Claim, StoreError, TokenStore, sweep_due};
use super::to_sql;
use futures::future::BoxFuture;
use saga_wire::Link;
use saga_wire::unix_now;

/// Connections per store.
pub(crate) const POOL_SIZE: usize = 16;
/// How long making a connection, or waiting for a free one, may take.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one statement may run.
pub(crate) const STATEMENT_TIMEOUT: Duration = Duration::from_secs(10);

/// The advisory lock that serializes schema creation between replicas starting at once.
pub(crate) const SCHEMA_LOCK: i64 = 0x5a6a_0001;

/// A pool of connections to one database, its tables created.
#[derive(Clone)]
pub(crate) struct Db {
    pub(crate) pool: Pool,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").finish_non_exhaustive()
    }
}

impl Db {
    /// Connects to `url` (`postgres://user:password@host/dbname`) and creates the tables
    /// if they are missing.
    pub(crate) async fn connect(url: &str) -> Result<Db, String> {
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|error| format!("the Postgres URL: {error}"))?;
        config.connect_timeout(CONNECT_TIMEOUT);
        config.options(format!(
            "-c statement_timeout={}",
            STATEMENT_TIMEOUT.as_millis()
        ));
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(CONNECT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .recycle_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|error| error.to_string())?;
        let db = Db { pool };
        let mut client = db.client().await?;
        let tx = client.transaction().await.map_err(describe)?;
        tx.batch_execute(&format!(
            "SELECT pg_advisory_xact_lock({SCHEMA_LOCK}); {}",
            super::sql_meta("BIGINT")
        ))
        .await
        .map_err(describe)?;
        let schema: i64 = tx
            .query_one(super::SQL_SCHEMA_QUERY, &[])
            .await
            .map_err(describe)?
            .try_get(0)
            .map_err(describe)?;
        if schema != super::SQL_SCHEMA {
            // Dropping the transaction rolls it back: nothing is created.
            return Err(super::other_schema(schema));
        }
        tx.batch_execute(&super::sql_tables("BIGINT", "BYTEA", "BOOLEAN"))
            .await
            .map_err(describe)?;
        tx.commit().await.map_err(describe)?;
        Ok(db)
    }

    /// A connection from the pool.
    pub(crate) async fn client(&self) -> Result<deadpool_postgres::Object, String> {
        self.pool.get().await.map_err(|error| error.to_string())
    }
}

/// A Postgres error in words: the server's message when it sent one.
pub(crate) fn describe(error: tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => error.to_string(),
    }
}

/// A single-use store in Postgres, shared by every replica: a redeemed token is a row of
/// `saga_used`, a chain's floor one of `saga_chains`. A redeem checks the floor and marks
/// the token in one statement.
///
/// ```no_run
/// # async fn run() -> Result<(), saga_runtime::state::StoreError> {
/// let store =
///     saga_runtime::state::PostgresStore::connect("postgres://saga@127.0.0.1/saga").await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct PostgresStore {
    db: Db,
}

impl PostgresStore {
    /// Sets the lease of the running claim `id` (given `expected`, only if it is held until
    /// exactly that): whether it was so held. One statement, atomic.
    async fn set_lease(
        &self,
        id: [u8; 24],
        expected: Option<u64>,
        lease_until: u64,
    ) -> Result<bool, StoreError> {
        let now = to_sql(unix_now());
        let client = self.db.client().await.map_err(StoreError::Unavailable)?;
        let changed = client
            .execute(
                "UPDATE saga_outcomes SET lease_until = $1
                 WHERE nonce = $2 AND outcome IS NULL AND lease_until IS NOT NULL
                   AND keep_until >= $3 AND ($4::BIGINT IS NULL OR lease_until = $4)",
                &[&to_sql(lease_until), &&id[..], &now, &expected.map(to_sql)],
            )
            .await
            .map_err(|error| StoreError::Unavailable(describe(error)))?;
        Ok(changed == 1)
    }

    /// Connects to `url` (`postgres://user:password@host/dbname`), creating the tables if
    /// they are missing. The task store may use the same database (`TaskStore::postgres`).
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Ok(Self {
            db: Db::connect(url).await.map_err(StoreError::Unavailable)?,
        })
    }
}

impl TokenStore for PostgresStore {
    fn redeem<'a>(
        &'a self,
        id: &'a [u8; 24],
        keep_until: u64,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let now = to_sql(unix_now());
            let link = Link::of_nonce(id);
            let client = self.db.client().await.map_err(StoreError::Unavailable)?;
            // One statement: the floor's check and the mark are atomic. A row whose token
            // expired may be taken again: that token is refused before it is redeemed.
            let redeemed = client
                .execute(
                    "INSERT INTO saga_used (nonce, keep_until)
                     SELECT $1, $2
                     WHERE NOT EXISTS (
                         SELECT 1 FROM saga_chains
                         WHERE chain = $3 AND keep_until >= $4 AND floor > $5
                     )
                     ON CONFLICT (nonce) DO UPDATE SET keep_until = EXCLUDED.keep_until
                     WHERE saga_used.keep_until < $4",
                    &[
                        &&id[..],
                        &to_sql(keep_until),
                        &&link.chain[..],
                        &now,
                        &i64::from(link.seq),
                    ],
                )
                .await
                .map_err(|error| StoreError::Unavailable(describe(error)))?;
            if sweep_due() {
                // Best effort: a failed sweep is retried at the next one.
                let _ = client
                    .batch_execute(&format!(
                        "DELETE FROM saga_used WHERE keep_until < {now};
                         DELETE FROM saga_chains WHERE keep_until < {now};
                         DELETE FROM saga_outcomes WHERE keep_until < {now};"
                    ))
                    .await;
            }
            Ok(redeemed == 1)
        })
    }

    fn retire<'a>(
        &'a self,
        chain: &'a [u8; 8],
        floor: u64,
        keep_until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let now = to_sql(unix_now());
            let client = self.db.client().await.map_err(StoreError::Unavailable)?;
            client
                .execute(
                    "INSERT INTO saga_chains (chain, floor, keep_until) VALUES ($1, $2, $3)
                     ON CONFLICT (chain) DO UPDATE SET
                       floor = CASE WHEN saga_chains.keep_until < $4 THEN EXCLUDED.floor
                                    ELSE GREATEST(saga_chains.floor, EXCLUDED.floor) END,
                       keep_until = GREATEST(saga_chains.keep_until, EXCLUDED.keep_until)",
                    &[&&chain[..], &to_sql(floor), &to_sql(keep_until), &now],
                )
                .await
                .map_err(|error| StoreError::Unavailable(describe(error)))?;
            Ok(())
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
        Box::pin(async move {
            let now = to_sql(unix_now());
            let link = Link::of_nonce(id);
            let client = self.db.client().await.map_err(StoreError::Unavailable)?;
            // One statement: the mark and its running row, atomic with the floor's check
            // (a concurrent claim of the same token waits for this one's row, and reads
            // it below).
            let claimed = client
                .query_one(
                    "WITH used AS (
                         INSERT INTO saga_used (nonce, keep_until)
                         SELECT $1, $2
                         WHERE NOT EXISTS (
                             SELECT 1 FROM saga_chains
                             WHERE chain = $3 AND keep_until >= $4 AND floor > $5
                         )
                         ON CONFLICT (nonce) DO UPDATE SET keep_until = EXCLUDED.keep_until
                         WHERE saga_used.keep_until < $4
                         RETURNING 1
                     ), running AS (
                         INSERT INTO saga_outcomes (nonce, lease_until, outcome, keep_until)
                         SELECT $1, $6, NULL, $2 WHERE EXISTS (SELECT 1 FROM used)
                         ON CONFLICT (nonce) DO UPDATE SET lease_until = EXCLUDED.lease_until,
                           outcome = NULL, keep_until = EXCLUDED.keep_until
                         RETURNING 1
                     )
                     SELECT (SELECT count(*) FROM running)",
                    &[
                        &&id[..],
                        &to_sql(keep_until),
                        &&link.chain[..],
                        &now,
                        &i64::from(link.seq),
                        &to_sql(lease_until),
                    ],
                )
                .await
                .map_err(|error| StoreError::Unavailable(describe(error)))?;
            if sweep_due() {
                // Best effort: a failed sweep is retried at the next one.
                let _ = client
                    .batch_execute(&format!(
                        "DELETE FROM saga_used WHERE keep_until < {now};
                         DELETE FROM saga_chains WHERE keep_until < {now};
                         DELETE FROM saga_outcomes WHERE keep_until < {now};"
                    ))
                    .await;
            }
            if claimed.get::<_, i64>(0) == 1 {
                return Ok(Claim::First);
            }
            // Redeemed before (what its row holds, whatever the floor now says), or
            // retired (no row).
            held_row(&client, id, now).await
        })
    }

    fn held<'a>(&'a self, id: &'a [u8; 24]) -> BoxFuture<'a, Result<Claim, StoreError>> {
        Box::pin(async move {
            let client = self.db.client().await.map_err(StoreError::Unavailable)?;
            held_row(&client, id, to_sql(unix_now())).await
        })
    }

    fn record<'a>(
        &'a self,
        id: &'a [u8; 24],
        outcome: &'a [u8],
        keep_until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let client = self.db.client().await.map_err(StoreError::Unavailable)?;
            let done = if outcome.is_empty() {
                // No row: spent.
                client
                    .execute("DELETE FROM saga_outcomes WHERE nonce = $1", &[&&id[..]])
                    .await
            } else {
                client
                    .execute(
                        "UPDATE saga_outcomes SET lease_until = NULL, outcome = $2,
                           keep_until = GREATEST(keep_until, $3)
                         WHERE nonce = $1",
                        &[&&id[..], &outcome, &to_sql(keep_until)],
                    )
                    .await
            };
            done.map_err(|error| StoreError::Unavailable(describe(error)))?;
            Ok(())
        })
    }
}

/// What the row of the token `id`'s outcome says, read.
async fn held_row(
    client: &deadpool_postgres::Object,
    id: &[u8; 24],
    now: i64,
) -> Result<Claim, StoreError> {
    let held = client
        .query_opt(
            "SELECT lease_until, outcome FROM saga_outcomes
             WHERE nonce = $1 AND keep_until >= $2",
            &[&&id[..], &now],
        )
        .await
        .map_err(|error| StoreError::Unavailable(describe(error)))?
        .map(|row| {
            (
                row.get::<_, Option<i64>>(0),
                row.get::<_, Option<Vec<u8>>>(1),
            )
        });
    Ok(super::single_use::held_claim(held))
}
