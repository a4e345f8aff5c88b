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
//! ```
//! use std::time::Duration;
//! use saga_runtime::state::{Binding, KeyRing, PointKey, StateCodec};
//!
//! let codec = StateCodec::new(KeyRing::ephemeral(), Duration::from_secs(600));
//! let binding = Binding::new("deploy", "tools/call", "alice", None);
//! let point = PointKey { header: *b"point-01", identity: [1; 32] };
//! let token = codec.seal(&point, &binding, b"state");
//! let opened = codec.open(&token, &point, &binding).unwrap();
//! assert_eq!(opened.plaintext, b"state");
//!
//! let mallory = Binding::new("deploy", "tools/call", "mallory", None);
//! assert!(codec.open(&token, &point, &mallory).is_err());
//! ```

mod aead;
mod binding;
mod clock;
mod keyring;
mod link;
mod nonce;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
mod single_use;
#[cfg(feature = "sqlite")]
pub(crate) mod sqlite;
mod token;

pub use binding::{ANONYMOUS, Binding};
pub use clock::unix_now;
pub use keyring::{KEY_LEN, KeyId, KeyRing, KeyRingError};
pub(crate) use keyring::{hex, random_id};
pub use link::Link;
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
#[cfg(feature = "redis")]
pub use single_use::RedisStore;
pub use single_use::{MemoryStore, StoreError, TokenStore};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
pub use token::{
    DEFAULT_LEEWAY, DEFAULT_MAX_TOKEN_LEN, OpenError, Opened, PointKey, StateCodec, TokenHeader,
    TokenKey,
};

/// A count or a unix time as a database's signed 64-bit integer: the far future
/// saturates.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn to_sql(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// The one message every refused token gets, whatever the reason.
pub const INVALID_STATE_MESSAGE: &str = "Invalid or expired requestState";
