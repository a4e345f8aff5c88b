//! Sealed saga state: the token a client carries between rounds.
//!
//! The state of a suspended saga is serialized with postcard and sealed with
//! XChaCha20-Poly1305 under a key of a [`KeyRing`]. The token is bound (through the AEAD's
//! associated data) to the tool, the method, the principal and the arguments, carries an
//! expiry and the suspension point it stopped at, with the identity of that point's saved
//! layout, and is refused whole if any of them differ. Clients
//! learn nothing from a refusal: every failure is the same JSON-RPC `-32602` with
//! [`INVALID_STATE_MESSAGE`]; the reason ([`OpenError`]) goes to the server's log.
//!
//! What a server is configured with lives here: the [`KeyRing`] that seals, and the
//! [`TokenStore`]s that make a round's token single-use ([`MemoryStore`], and with their
//! features `RedisStore`, `SqliteStore`, `PostgresStore`), and the [`StateStore`] where a
//! state too large for its token is kept by reference. [`TokenHeader`] reads what a
//! token says of itself before it is opened (`saga inspect`). The codec itself
//! (`StateCodec` and what it seals and opens with) is the runtime's: a transport of your
//! own drives sagas through `SagaTools::run`, which opens and seals for it.

mod binding;
// A token's clear format, its keys, links and trace ids are saga-wire's, which the CLI
// builds without the server; the codec names them here as it did its own modules.
use saga_wire::{aead, format, nonce};
mod deflate;
mod kept;
mod outcome;
mod pages;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
mod single_use;
#[cfg(feature = "sqlite")]
pub(crate) mod sqlite;
mod token;

// The codec's own types are public for saga's CLI tests, fuzzer, benches and tests of the
// token format, and hidden from the docs: no server or transport needs them.
pub use binding::ANONYMOUS;
#[doc(hidden)]
pub use binding::Binding;
pub(crate) use deflate::DEFAULT_MAX_STATE_VALUES;
pub use deflate::MAX_STATE_BYTES;
pub use kept::{KEPT_KEY_LEN, KeptState, StateOwner, StateStore, StoreFuture};
pub(crate) use outcome::DEFAULT_RETRY_WAIT;
pub use outcome::{
    Claimed, DEFAULT_OUTCOME_LEASE, RENEW_EVERY, RENEWED_LEASE, Renewal, abandon, request_text,
};
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
pub(crate) use saga_wire::__private::hex;
#[doc(hidden)]
pub use saga_wire::Link;
#[doc(hidden)]
pub use saga_wire::PointKey;
pub use saga_wire::TokenFormat;
pub use saga_wire::unix_now;
pub use saga_wire::{HeaderError, SagaTrace, TokenHeader};
pub use saga_wire::{KEY_LEN, KeyId, KeyRing, KeyRingError};
#[cfg(feature = "redis")]
pub use single_use::RedisStore;
pub use single_use::{Claim, MemoryStore, StoreError, TokenStore};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
pub use token::{DEFAULT_LEEWAY, DEFAULT_MAX_TOKEN_LEN, OpenError};
#[doc(hidden)]
pub use token::{Opened, StateCodec};

/// 128 random bits in hex, from the OS: an identifier no one can guess (a task id, a
/// worker's claim, a URL elicitation's id).
pub(crate) fn random_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    hex(&bytes)
}

/// A count or a unix time as a database's signed 64-bit integer: the far future
/// saturates.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn to_sql(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// The layout of the tables [`sql_tables`] makes. A database written by a build of another
/// schema is refused, never misread.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) const SQL_SCHEMA: i64 = 1;

/// Why a database of schema `found` is refused.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn other_schema(found: i64) -> String {
    format!(
        "its tables are of schema {found}, and this build reads schema {SQL_SCHEMA}: use it \
         with the build that wrote it"
    )
}

/// The row that names a database's schema, made first (by a new database, as
/// [`SQL_SCHEMA`]) and read before any other table is touched: a database of another
/// schema is refused before this build creates or reads anything in it.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn sql_meta(int: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS saga_meta (key TEXT PRIMARY KEY, value {int} NOT NULL);
         INSERT INTO saga_meta (key, value) VALUES ('schema', {SQL_SCHEMA}) ON CONFLICT DO NOTHING;"
    )
}

/// Reads the schema [`sql_meta`] names.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) const SQL_SCHEMA_QUERY: &str = "SELECT value FROM saga_meta WHERE key = 'schema'";

/// The tables of saga's SQL stores, of schema [`SQL_SCHEMA`], in a database's own types
/// for an integer, bytes and a boolean: written once, so that both databases hold the
/// same rows. Made only once [`sql_meta`]'s row says the schema is this build's.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn sql_tables(int: &str, bytes: &str, boolean: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS saga_tasks (
             id TEXT PRIMARY KEY,
             owner TEXT NOT NULL,
             shared {boolean} NOT NULL,
             bytes {int} NOT NULL,
             expires_ms {int} NOT NULL,
             working {boolean} NOT NULL,
             lease_until_ms {int} NOT NULL,
             version {int} NOT NULL,
             record TEXT NOT NULL
         );
         CREATE INDEX IF NOT EXISTS saga_tasks_owner ON saga_tasks (owner, expires_ms);
         CREATE INDEX IF NOT EXISTS saga_tasks_expiry ON saga_tasks (expires_ms);
         CREATE INDEX IF NOT EXISTS saga_tasks_leases ON saga_tasks (working, lease_until_ms);
         CREATE TABLE IF NOT EXISTS saga_used (nonce {bytes} PRIMARY KEY, keep_until {int} NOT NULL);
         CREATE INDEX IF NOT EXISTS saga_used_expiry ON saga_used (keep_until);
         CREATE TABLE IF NOT EXISTS saga_outcomes (
             nonce {bytes} PRIMARY KEY, lease_until {int}, outcome {bytes}, keep_until {int} NOT NULL
         );
         CREATE INDEX IF NOT EXISTS saga_outcomes_expiry ON saga_outcomes (keep_until);
         CREATE TABLE IF NOT EXISTS saga_chains (
             chain {bytes} PRIMARY KEY, floor {int} NOT NULL, keep_until {int} NOT NULL
         );
         CREATE INDEX IF NOT EXISTS saga_chains_expiry ON saga_chains (keep_until);
         CREATE TABLE IF NOT EXISTS saga_states (
             key TEXT PRIMARY KEY,
             owner TEXT NOT NULL,
             shared {boolean} NOT NULL,
             bytes {int} NOT NULL,
             expires_ms {int} NOT NULL,
             token TEXT NOT NULL
         );
         CREATE INDEX IF NOT EXISTS saga_states_expiry ON saga_states (expires_ms);
         CREATE TABLE IF NOT EXISTS saga_state_counts (
             scope TEXT PRIMARY KEY, bytes {int} NOT NULL
         );"
    )
}

/// For tests: `len` bytes of a xorshift stream from `seed` (not zero), in which nothing
/// repeats, so that they do not deflate.
#[cfg(test)]
pub(crate) fn noise(seed: u32, len: usize) -> Vec<u8> {
    let mut x = seed;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// The one message every refused token gets, whatever the reason.
pub const INVALID_STATE_MESSAGE: &str = "Invalid or expired requestState";
