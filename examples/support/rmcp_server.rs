//! An rmcp server written with rmcp's own `#[tool_router]` and `#[tool_handler]` (in the
//! style of rmcp's examples: the router kept in a field), that gains a saga tool. Besides
//! the saga function itself, the lines marked `// saga` are all it takes: build the
//! registry, and add its router to the server's. Served by `examples/rmcp_server.rs`.

use std::sync::Arc;

use saga_runtime::prelude::*;
use saga_runtime::rmcp::handler::server::router::tool::ToolRouter;
use saga_runtime::rmcp::handler::server::wrapper::Parameters;
use saga_runtime::rmcp::transport::streamable_http_server::StreamableHttpService;
use saga_runtime::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use saga_runtime::rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};

/// The arguments of the plain tool.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct GreetArgs {
    /// Who to greet.
    pub name: String,
}

/// An ordinary rmcp server with one plain tool.
#[derive(Clone)]
pub struct Greeter {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Greeter {
    /// Greets someone.
    #[tool(description = "Greets someone by name.")]
    fn greet(&self, Parameters(GreetArgs { name }): Parameters<GreetArgs>) -> String {
        format!("Hello, {name}!")
    }
}

#[tool_handler(router = self.tool_router, name = "greeter", version = "1.0.0")]
impl ServerHandler for Greeter {}

/// Asks the user to confirm before greeting: the saga tool.
#[saga_tool]
pub async fn greet_politely(name: String) -> Result<String, SagaError> {
    let go: bool = elicit(format!("Greet {name}?")).await?;
    Ok(if go {
        format!("Good day, {name}.")
    } else {
        "Not greeted.".into()
    })
}

impl Greeter {
    /// The server, with its saga tools sealed by `keys`.
    pub fn new(keys: KeyRing) -> anyhow::Result<Self> {
        let sagas = SagaTools::builder()
            .keys(keys)
            .tool(greet_politely)
            .build()?; // saga
        Ok(Self {
            tool_router: Self::tool_router() + sagas.router(), // saga: `+ sagas.router()`
        })
    }
}

/// The server as an axum router at `/mcp`: stateless for MCP 2026-07-28 clients, and a
/// session for a 2025-11-25 client that opens one with `initialize` (its saga calls then
/// ask their questions during the call). rmcp's `NeverSessionManager` would answer those
/// clients HTTP 500 instead. rmcp's session store has no caps of its own; a public server
/// bounds sessions in front of it (`SagaServer::router` does).
pub fn router(server: Greeter) -> axum::Router {
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()), // saga: sessions for 2025-11-25 clients
        saga_runtime::serve::default_http_config(),
    );
    axum::Router::new().nest_service("/mcp", service)
}
