//! What `#[saga_tool]` and `#[saga_fn]` expand to call: the generated state's handling
//! ([`macro_state`]), the helpers that suspend ([`saga_fn`]), a saved local ([`local`]), a borrow recomputed after a restore ([`recompute`]),
//! and the support the expansion names through `__private` ([`expand_support`]).
//!
//! Uses `contract` and everything below it; the runner does not use it (a tool's state
//! is behind `SagaTool`).

pub(crate) mod expand_support;
pub(crate) mod local;
pub(crate) mod located;
pub(crate) mod macro_state;
pub(crate) mod recompute;
pub(crate) mod refusal;
pub(crate) mod saga_fn;
