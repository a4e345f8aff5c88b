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
//! - [`deploy`]: the layout file, a check before deploying changed code.
//!
//! ## Deploying changes
//!
//! A token (or a task record) names the suspension point it stopped at, and an identity
//! of what that point saved: the exact serde layout of its saved locals, user types and
//! `#[saga_fn]` helpers' nested state included (field names and order, types, enum
//! variants), the tool's name and its declared version. Each tool's points are traced
//! once, when the server is built. A build resumes a token on its own code wherever it has
//! the point with the same identity, and refuses it with `-32602` before decoding a byte
//! otherwise; the log says why (an unknown point, another layout, another version).
//!
//! - **Kept**: a changed result or message, other logic, a suspension added after the one
//!   in flight, one added before it when the point saves the same locals. Calls go on, in
//!   both directions of a rolling upgrade; a question asked again is worded by the build
//!   that asks it. A point is named after what it asks and the binding it asks into
//!   (`AfterElicitTarget`); points that share a name (every `checkpoint().await`, two
//!   `let ok = elicit(..)`) are numbered in source order, so their identity also holds the
//!   code of every site of that name, and any edit of those sites refuses their tokens.
//!   Distinct bindings make points that survive edits.
//! - **Refused**: a saved local added, removed, renamed or retyped at that point, a saved
//!   struct's fields reordered, a variant added to a saved enum, a helper's saved locals
//!   changed, a saved type or a helper renamed. Keep the previous code as a retired copy
//!   to finish those calls.
//! - **Refused on purpose**: `#[saga_tool(version = N)]` declares a change of meaning that
//!   keeps the layout.
//!
//! A retired copy is the previous build's tool, with its helpers and saved types,
//! unchanged, in a module of its own (so that every name stays as it was), registered with
//! `.retired(..)`: never listed, it never starts a call, and finishes the calls and tasks
//! whose points it has. Remove it once the old tokens have expired (the server's `ttl`)
//! and the old tasks have ended. A task that no replica can continue ends `failed` with
//! the reason, once none has resumed it for three leases.
//!
//! ```
//! use saga_runtime::prelude::*;
//!
//! /// The new build: the amount is now saved in cents, as a `u64`.
//! #[saga_tool]
//! async fn pay(to: String, dollars: u32) -> Result<String, SagaError> {
//!     let cents = u64::from(dollars) * 100;
//!     let ok: bool = elicit(format!("Pay {cents} cents to {to}?")).await?;
//!     Ok(if ok { format!("paid {cents} cents") } else { "not paid".into() })
//! }
//!
//! /// The previous build, unchanged, kept to finish its calls.
//! mod v1 {
//!     use saga_runtime::prelude::*;
//!
//!     #[saga_tool]
//!     pub async fn pay(to: String, dollars: u32) -> Result<String, SagaError> {
//!         let ok: bool = elicit(format!("Pay {dollars} dollars to {to}?")).await?;
//!         Ok(if ok { format!("paid {dollars} dollars") } else { "not paid".into() })
//!     }
//! }
//!
//! let tools = SagaTools::builder()
//!     .keys(KeyRing::ephemeral())
//!     .tool(pay)
//!     .retired(v1::pay)
//!     .build()?;
//! assert_eq!(tools.tools().count(), 1, "a retired copy is never listed");
//! // Both builds' points are resumable, and recorded in the layout file.
//! let file = saga_runtime::deploy::LayoutFile::of(&tools);
//! assert!(file.entries.iter().any(|entry| entry.layout.contains("cents: u64")));
//! assert!(file.entries.iter().any(|entry| entry.layout.contains("dollars: u32")));
//! # Ok::<(), saga_runtime::serve::BuildError>(())
//! ```
//!
//! A test of one line checks each build against the committed layout file, and fails,
//! naming the tool, the point and what changed, when a change would strand calls in
//! flight without a retired copy or a version bump (see [`deploy`]).
//!
//! Most code needs only `use saga_runtime::prelude::*;`.

// Sampling and roots are deprecated by MCP 2026-07-28 (SEP-2577) but remain part of it, and
// saga serves them; the warnings would only repeat that on every use.
#![allow(deprecated)]
#![warn(missing_docs)]
// Without `http`, code that only the HTTP transport calls (the guard's bounds, the seed
// formats' headers, the direct path's readers) still compiles with the engine it shares
// but goes unused; the default build, linted with -D warnings, keeps it honest.
#![cfg_attr(not(feature = "http"), allow(dead_code, unused_imports))]
#![deny(unreachable_pub)]
// A stdio-only build leaves the HTTP transport out, and with it the items the docs link to
// when they say how to serve over HTTP (`SagaServer::serve_http`, `router`).
#![cfg_attr(not(feature = "http"), allow(rustdoc::broken_intra_doc_links))]

pub mod deploy;
pub mod engine;
mod log;
pub mod metrics;
#[cfg(any(feature = "openai", feature = "oauth", feature = "otel"))]
mod net;
pub mod otel;
pub use engine::model;
pub mod serve;
pub mod state;
pub mod tasks;
pub mod testing;

/// The `http` crate, whose request head (`http::request::Parts`) the principal and
/// authenticator functions read, so that they can be written without a dependency of
/// their own.
pub use http;
pub use rmcp;
/// The macros, so that a crate depends on `saga-runtime` alone (`saga-macros` is never a
/// dependency of its own); most code brings them in with the [`prelude`].
pub use saga_macros::{Elicit, saga_fn, saga_prompt, saga_resource, saga_tool};

/// What saga's own tests, benches and fuzzer reach beyond the documented API (the JSON
/// checks of form answers, a tool's suspension points, the panic message): not part of
/// the API, and free to change in any release.
#[doc(hidden)]
pub mod __support {
    pub use crate::engine::support::*;
}

/// What the macros' expansions refer to (`#[saga_tool]`, `#[saga_fn]`, `#[derive(Elicit)]`,
/// …); not a public API. `saga-runtime` requires exactly its own `saga-macros` version,
/// so an expansion always meets the items it was written against.
#[doc(hidden)]
pub mod __private {
    pub use crate::engine::contract::diagram::with_diagram;
    pub use crate::engine::expand::expand_support::*;
    pub use crate::engine::expand::recompute::*;
    pub use crate::engine::forms::elicit_field::{
        SchemaField, SchemaValue, contains, object_schema, one_field_from_content,
        one_field_schema, parse_select, read_field, select_property,
    };
    pub use crate::engine::{
        Answers, Checkpoint, Elicit, ElicitEnum, ElicitField, FormError, LayoutError, PromptOutput,
        Request, ResourceOutput, SagaContext, SagaPrompt, SagaResource, SagaTool, StateLayout,
        Step, ToolOutput, parse_arguments,
    };
    pub use crate::tasks::TaskSupport;
    pub use rmcp::ErrorData;
    pub use rmcp::model::{JsonObject, Tool};
    pub use schemars;
    pub use serde;
    pub use serde_json;
}

/// Awaits several requests in one round: `let (a, b) = join!(elicit::<X>(".."), sample(".."));`
/// gives a tuple of their answers. Only meaningful inside a `#[saga_tool]` or `#[saga_fn]`
/// function, whose macro rewrites it; anywhere else it is an error.
#[macro_export]
macro_rules! join {
    ($($request:expr),+ $(,)?) => {
        ::core::compile_error!(
            "`join!` sends several requests in one round and only works in the body of a #[saga_tool] or #[saga_fn] function: mark the function that uses it #[saga_fn], or move the `join!` into the tool's body"
        )
    };
}

/// Everything a tool author and a server operator use.
pub mod prelude {
    pub use crate::engine::asks::prelude::*;
    pub use crate::engine::{
        Answers, Checkpoint, Contents, Elicit, Elicited, FormError, JoinAll, Json, Prompt, Request,
        SagaContext, SagaError, SagaPrompt, SagaResource, SagaTool, Step, ToolOutput, checkpoint,
        join_all,
    };
    pub use crate::join;
    pub use crate::serve::{HttpLimits, SagaServer, SagaTools};
    pub use crate::state::KeyRing;
    pub use crate::tasks::TaskStore;
    pub use rmcp::model::{CallToolResult, ContentBlock as Content};
    pub use saga_macros::{Elicit, saga_fn, saga_prompt, saga_resource, saga_tool};
    /// For the input of a [`SamplingTool`]; the derive needs
    /// `schemars` among the crate's dependencies.
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}
#[cfg(doctest)]
mod guide;
