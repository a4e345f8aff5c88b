//! # saga: resumable MCP tools
//!
//! An MCP tool that needs the client mid-call (an answer from the user, a completion
//! from the client's LLM, the client's roots) is written as one straight-line async
//! function; saga runs it as a state machine, one transition per request, and carries its
//! state between rounds in a sealed token the client echoes back (MCP 2026-07-28
//! multi round-trip requests). Any replica can serve any round, and a restarted server
//! loses nothing.
//!
//! - [`state`]: the sealed token (XChaCha20-Poly1305 over postcard, bound to the request).
//! - [`engine`]: the [`SagaTool`](engine::SagaTool) contract and the runner.
//! - [`serve`]: [`SagaServer`](serve::SagaServer) over Streamable HTTP or stdio.
//! - [`tasks`]: durable tasks (MCP tasks extension) in a [`TaskStore`](tasks::TaskStore).
//!
//! Most code needs only `use saga_runtime::prelude::*;`.

// Sampling and roots are deprecated by MCP 2026-07-28 (SEP-2577) but remain part of it, and
// saga serves them; the warnings would only repeat that on every use.
#![allow(deprecated)]
#![warn(missing_docs)]

pub mod deploy;
pub mod engine;
mod log;
pub mod serve;
pub mod state;
pub mod tasks;

pub use rmcp;

/// What `#[derive(Elicit)]` expands to refers to; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::engine::elicit_field::{
        contains, field_error, one_field_from_content, one_field_schema, parse_select, read_field,
        select_property,
    };
    pub use crate::engine::expand_support::*;
    pub use crate::engine::{
        Answers, Checkpoint, Elicit, ElicitEnum, ElicitField, LayoutError, PromptOutput, Request,
        ResourceOutput, SagaContext, SagaPrompt, SagaResource, SagaTool, StateLayout, Step,
        ToolOutput, parse_arguments,
    };
    pub use crate::tasks::TaskSupport;
    pub use rmcp::ErrorData;
    pub use rmcp::handler::server::common::schema_for_type;
    pub use rmcp::model::{JsonObject, Tool};
    pub use schemars;
    pub use serde;
    pub use serde_json;
}

/// Awaits several requests in one round: `let (a, b) = join!(elicit::<X>(".."), sample(".."));`
/// gives a tuple of their answers. Only meaningful inside a `#[saga_tool]` function, which
/// rewrites it; anywhere else it is an error.
#[macro_export]
macro_rules! join {
    ($($request:expr),+ $(,)?) => {
        ::core::compile_error!(
            "`join!` sends several requests in one round and only works inside a #[saga_tool] function"
        )
    };
}

/// Everything a tool author and a server operator use.
pub mod prelude {
    pub use crate::engine::{
        Answers, Checkpoint, Contents, Elicit, ElicitForm, ElicitUrl, JoinAll, Json, ListRoots,
        Prompt, Request, Root, SagaContext, SagaError, SagaPrompt, SagaResource, SagaTool, Sample,
        Sampled, Step, ToolOutput, checkpoint, elicit, elicit_url, join_all, list_roots, sample,
    };
    pub use crate::join;
    pub use crate::serve::{HttpLimits, SagaServer, SagaTools};
    pub use crate::state::KeyRing;
    pub use crate::tasks::TaskStore;
    pub use rmcp::model::{CallToolResult, ContentBlock as Content};
    pub use saga_macros::{Elicit, saga_fn, saga_prompt, saga_resource, saga_tool};
    pub use serde::{Deserialize, Serialize};
}
