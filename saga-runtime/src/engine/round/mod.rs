//! A round: the requests a saga makes at one suspension and the answers it gets back.
//! The request a tool makes ([`requests`]), the answers it reads ([`answers`]), the
//! requests a token keeps while it waits ([`pending`]) and its digest of those it keeps
//! no params of ([`digest`]), the keys and capability gate of a round as it is asked
//! ([`asking`]), the client's answers read and checked before the step
//! ([`collect`]), and both for a round asked by hand ([`keyed`]).
//!
//! Uses `kinds` (each request's kind, through the `kinds!` table), `forms`, `caller` and
//! `identity`. The functions a tool awaits sit above it, in `asks` and each kind's `ask.rs`.

pub(crate) mod answers;
pub(crate) mod asking;
pub(crate) mod collect;
pub(crate) mod digest;
pub(crate) mod keyed;
pub(crate) mod pending;
pub(crate) mod requests;
