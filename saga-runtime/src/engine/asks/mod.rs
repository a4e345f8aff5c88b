//! What a tool awaits: each kind's function and builder ([`elicit`](form::elicit),
//! [`elicit_url`](url::elicit_url), [`sample`](sample::sample),
//! [`list_roots`](roots::list_roots)), how its answer reads, a question's answer as what
//! the user chose ([`Elicited`](outcome::Elicited)), and a dynamic number of requests in
//! one round ([`join_all`](join_all::join_all)).
//!
//! Each file here is a kind's public side; its protocol (what is sent, kept, digested and
//! read) is its file of the same name in `kinds`. Uses `round`, `kinds`, `forms` and
//! `call`.

pub(crate) mod form;
pub(crate) mod join_all;
pub(crate) mod outcome;
pub(crate) mod outside;
pub(crate) mod roots;
pub(crate) mod sample;
pub(crate) mod tool_sample;
pub(crate) mod url;

/// Each kind's public side: the function a tool calls, its builder, and what its answer
/// reads as. The crate's prelude exports all of it.
pub(crate) mod prelude {
    pub use super::form::{ElicitForm, elicit};
    pub use super::roots::{ListRoots, Root, list_roots};
    pub use super::sample::{Sample, Sampled, sample};
    pub use super::tool_sample::{
        SamplingMessage, SamplingMessages, SamplingTool, ToolChoice, Turn, sample_messages,
    };
    pub use super::url::{ElicitUrl, elicit_url};
    pub use crate::engine::call::tool_use::{ToolResult, ToolUse};
}
