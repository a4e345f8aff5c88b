//! What saga's servers and its CLI share: a token's clear header and format, the key
//! ring that seals tokens, a saga's trace ids, a suspension point's key, and the layout
//! file that records a build's points.
//!
//! A server uses these through `saga-runtime`, which re-exports each of them where its
//! users name them (`saga_runtime::state::KeyRing`, `saga_runtime::deploy::LayoutFile`, …).
//! This crate exists apart so that a program that only *reads* tokens and layout files,
//! such as `saga inspect`, builds without the server: no rmcp, serde or tokio.
//!
//! ```
//! use saga_wire::{KeyRing, TokenHeader};
//!
//! let keys = KeyRing::parse(&"42".repeat(32)).expect("a 32-byte hex key");
//! assert_eq!(keys.len(), 1);
//! // Not a token: the header does not read.
//! assert!(TokenHeader::parse("not a token").is_err());
//! ```
//!
//! Nothing here opens a token's state: that needs the request's binding, which only the
//! runtime's codec has.
//!
//! # Features
//!
//! - `seal` (default): the AEAD, the nonces and each key's cipher, which the runtime's
//!   codec seals and opens with. Without it a [`KeyRing`] reads and checks its keys and
//!   knows their ids, and no cipher, nonce source or `ring` is compiled: what `saga
//!   inspect` needs.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

mod clock;
mod header;
mod keyring;
mod layout;
mod link;
mod point;
mod trace;

// The small functions a request calls (the header's fields, the formats, links, the
// AEAD's calls) are `#[inline]`: across the crate boundary they were not inlined, and the
// request path counted 0.4 % more instructions than when they were the runtime's own.
//
// The runtime's plumbing: what its codec seals and opens with. Not part of this crate's
// contract; saga-runtime pins this crate's exact version.
#[cfg(feature = "seal")]
#[doc(hidden)]
pub mod aead;
#[doc(hidden)]
pub mod format;
#[cfg(feature = "seal")]
#[doc(hidden)]
pub mod nonce;

pub use clock::unix_now;
pub use format::TokenFormat;
pub use header::{HeaderError, TokenHeader};
pub use keyring::{KEY_LEN, KeyId, KeyRing, KeyRingError};
pub use layout::{Comparison, Dropped, Entry, LayoutFile, Resumable, ResumablePoint};
pub use link::Link;
pub use point::PointKey;
pub use trace::SagaTrace;

/// The key of a tool's `_meta` in `tools/list` that holds its diagram (Mermaid
/// `stateDiagram-v2` text, which `#[saga_tool]` lists and `saga graph` prints).
pub const DIAGRAM_META_KEY: &str = "saga/diagram";

/// The runtime's plumbing, as `aead`, `format` and `nonce` are.
#[doc(hidden)]
pub mod __private {
    pub use crate::header::key_tag;
    pub use crate::keyring::{Key, hex};
    pub use crate::point::{point_key, tagged_point_key};
    pub use crate::trace::SAGA_TRACE_LEN;
}
