//! What a tool awaits, across kinds: the prelude of each kind's function and builder
//! ([`elicit`](prelude::elicit), [`elicit_url`](prelude::elicit_url),
//! [`sample`](prelude::sample), [`list_roots`](prelude::list_roots)), a question's answer
//! as what the user chose ([`Elicited`](outcome::Elicited)), and a dynamic number of
//! requests in one round ([`join_all`](join_all::join_all)).
//!
//! A kind's own public side is the `ask.rs` of its folder in `kinds`, which belongs to
//! this layer. Uses `round`, `kinds`, `forms` and `caller`.

pub(crate) mod effect;
pub(crate) mod join_all;
pub(crate) mod outcome;
pub(crate) mod outside;

/// Each kind's public side: the function a tool calls, its builder, and what its answer
/// reads as. The crate's prelude exports all of it.
pub(crate) mod prelude {
    pub use crate::engine::asks::effect::{Effect, EffectKey, effect};
    pub use crate::engine::caller::tool_use::{ToolResult, ToolUse};
    pub use crate::engine::kinds::form::ask::{ElicitForm, elicit};
    pub use crate::engine::kinds::roots::ask::{ListRoots, Root, list_roots};
    pub use crate::engine::kinds::sample::ask::{Sample, Sampled, sample};
    pub use crate::engine::kinds::tool_sample::ask::{
        SamplingMessage, SamplingMessages, SamplingTool, ToolChoice, Turn, sample_messages,
    };
    pub use crate::engine::kinds::url::ask::{ElicitUrl, elicit_url};
}
