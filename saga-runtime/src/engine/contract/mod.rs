//! The contract between a saga and the runtime: [`tool`] (`SagaTool`, `Step`, prompts and
//! resources), what a tool returns ([`output`]), its diagram ([`diagram`]), and the
//! same contract with the tool's types erased ([`typed`]), which the runner drives and
//! the macro's modes (trace, inspect, restate) step through; a step is polled behind
//! [`opaque`], so that its body is compiled in one function.
//!
//! Uses `round`, `caller` and `identity`: a step suspends with a round's requests and
//! reads its answers.

pub(crate) mod diagram;
pub(crate) mod opaque;
pub(crate) mod output;
pub(crate) mod tool;
pub(crate) mod typed;
