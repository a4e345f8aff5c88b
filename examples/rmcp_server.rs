//! An rmcp server written with rmcp's own `#[tool_router]` and `#[tool_handler]`, that
//! gains a saga tool: `saga_examples::rmcp_server` (`examples/support/rmcp_server.rs`),
//! where the lines marked `// saga` are all it takes besides the saga function itself.
//!
//! ```text
//! cargo run -p saga-workspace --example rmcp_server                 # Streamable HTTP on 127.0.0.1:8080/mcp
//! ```

use saga_examples::rmcp_server::{Greeter, router};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    saga_examples::cli::init_logging();
    let server = Greeter::new(saga_examples::cli::keys()?)?;
    let addr = std::env::args()
        .skip_while(|arg| arg != "--http")
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, router(server)).await?;
    Ok(())
}
