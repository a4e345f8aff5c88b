//! The contract between a saga and the runtime: [`tool`] (`SagaTool`, `Step`, prompts and
//! resources), what a tool returns ([`output`]), and its diagram ([`diagram`]).
//!
//! Uses `round`, `call` and `identity`: a step suspends with a round's requests and
//! reads its answers.

pub(crate) mod diagram;
pub(crate) mod output;
pub(crate) mod tool;
