//! Where `saga` finds the server it talks to.

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A Streamable HTTP endpoint.
    Http(String),
    /// A command whose stdio speaks MCP.
    Stdio(Vec<String>),
}
