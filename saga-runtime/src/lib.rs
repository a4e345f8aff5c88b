//! saga: resumable MCP tools.
pub mod state;
