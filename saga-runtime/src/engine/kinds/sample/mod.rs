//! Sampling: a completion from the client's LLM.
//!
//! `ask` is the side a tool sees (its function, builder and answer), above the round;
//! `protocol` is what is sent, kept, digested and read, below it.

pub(crate) mod ask;
pub(crate) mod protocol;
