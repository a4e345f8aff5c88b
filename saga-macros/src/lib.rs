//! Procedural macros for saga. Users depend on `saga-runtime`, which re-exports these.

mod elicit;
mod errors;
mod shared;
mod tool;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Derives `saga_runtime::engine::Elicit` (a form-mode elicitation) for a struct of
/// primitive fields, and a single/multi select for a unit-only enum.
///
/// See the `saga-runtime` documentation of `Elicit` for the attributes.
#[proc_macro_derive(Elicit, attributes(elicit, serde))]
pub fn derive_elicit(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    elicit::derive(&input).into()
}

/// Compiles a straight-line `async fn` that awaits `elicit`, `elicit_url`, `sample`,
/// `list_roots`, `checkpoint` or `join!` into a `SagaTool` state machine.
///
/// Arguments: `name = "…"`, `title = "…"`, `description = "…"` (the doc comment by
/// default). See the `saga-runtime` README, "What you can write".
#[proc_macro_attribute]
pub fn saga_tool(args: TokenStream, input: TokenStream) -> TokenStream {
    tool::expand(args.into(), input.into()).into()
}

/// `#[saga_tool]` for a prompt: the function returns `Result<Prompt, E>` and is
/// registered with `SagaServer::builder().prompt(..)`; its arguments (strings) are the
/// prompt's arguments.
#[proc_macro_attribute]
pub fn saga_prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    tool::expand(args.into(), input.into()).into()
}

/// `#[saga_tool]` for a resource: the function takes `uri: String` (and, for a template,
/// one `String` per template variable), returns `Result<Contents, E>`, and is registered
/// with `SagaServer::builder().resource(uri, ..)` or `.resource_template(template, ..)`.
#[proc_macro_attribute]
pub fn saga_resource(args: TokenStream, input: TokenStream) -> TokenStream {
    tool::expand(args.into(), input.into()).into()
}
