//! Identity: what a token names and how a build recognises it. A saga's suspension
//! points and their keys ([`points`]), the serde layout of each point's saved state,
//! traced from its types ([`layout`]), a saved local's encoding ([`slot`]), the name of
//! the state a saga is in ([`variant`]), and the stable hash digests are made with
//! ([`fnv`]).
//!
//! The lowest group of the engine: it uses no other.

pub(crate) mod fnv;
pub(crate) mod layout;
pub(crate) mod points;
pub(crate) mod slot;
pub(crate) mod variant;
