//! Code shared by the examples and the end-to-end tests: the command line every serving
//! example takes, and a scripted MCP client built on rmcp.

pub mod cli;
pub mod client;
pub mod deploy_by_hand;
pub mod meeting;
pub mod process;
pub mod testing;
