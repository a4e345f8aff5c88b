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
//!
//! Most code needs only `use saga_runtime::prelude::*;`.

// Sampling and roots are deprecated by MCP 2026-07-28 (SEP-2577) but remain part of it, and
// saga serves them; the warnings would only repeat that on every use.
#![allow(deprecated)]
#![warn(missing_docs)]

pub mod engine;
pub mod serve;
pub mod state;

pub use rmcp;

/// What `#[derive(Elicit)]` expands to refers to; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::engine::elicit_field::{
        contains, field_error, one_field_from_content, one_field_schema, parse_select, read_field,
        select_property,
    };
    pub use crate::engine::{Elicit, ElicitEnum, ElicitField};
    pub use serde_json;
}

/// Everything a tool author and a server operator use.
pub mod prelude {
    pub use crate::engine::{
        Answers, Elicit, Json, Request, Root, SagaContext, SagaError, SagaTool, Sampled, Step,
        ToolOutput, checkpoint, elicit, elicit_url, list_roots, sample,
    };
    pub use crate::serve::{SagaServer, SagaTools};
    pub use crate::state::KeyRing;
    pub use rmcp::model::{CallToolResult, ContentBlock as Content};
    pub use saga_macros::Elicit;
    pub use serde::{Deserialize, Serialize};
}
