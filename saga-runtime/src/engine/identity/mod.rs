//! Identity: what a token names and how a build recognises it. A saga's suspension
//! points and their keys ([`points`]), the serde layout of each point's saved state,
//! traced from its types ([`layout`]), a saved local's encoding ([`slot`]), how a
//! generated state enum is written, read and traced ([`state_enum`]), the name of
//! the state a saga is in ([`variant`]), and the stable hash digests are made with
//! ([`fnv`]).
//!
//! The lowest group of the engine: it uses no other.

pub(crate) mod fnv;
pub(crate) mod layout;
pub(crate) mod points;
pub(crate) mod slot;
pub(crate) mod state_enum;
pub(crate) mod variant;
