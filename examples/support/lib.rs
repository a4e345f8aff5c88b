//! Code shared by the examples and the end-to-end tests: the examples' tools (each example
//! binary in `examples/` serves one of these modules), the command line every serving
//! example takes, a scripted MCP client built on rmcp, and the tests' own [`harness`].

pub mod cli;
pub mod client;
pub mod deploy;
pub mod deploy_by_hand;
pub mod harness;
pub mod keeps_json;
pub mod meeting;
pub mod migrate;
pub mod plain;
pub mod research;
pub mod rmcp_server;
pub mod weather;
pub mod with_schema;
