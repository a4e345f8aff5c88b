//! The seed's `complex_tool` (`saga_examples::deploy`, in `examples/support/deploy_tool.rs`):
//! elicit the deployment target, ask the client's LLM whether deploying there is safe, then
//! finish. One straight-line async function; `#[saga_tool]` turns it into a state machine
//! whose state travels in the client's token. Beside it, `release`
//! (`examples/support/release.rs`) starts the deployment for real, as an `effect`: once,
//! however often its round runs, with an idempotency key for the deploy service.
//!
//! ```text
//! cargo run -p saga-workspace --example deploy                 # Streamable HTTP on 127.0.0.1:8080/mcp
//! cargo run -p saga-workspace --example deploy -- --stdio      # stdio
//! cargo run -p saga-workspace --example deploy -- --inspect TOKEN --arguments '{…}'   # a token's state as JSON
//! ```

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    saga_examples::cli::init_logging();
    let keys = saga_examples::cli::keys()?;
    saga_examples::cli::serve(saga_examples::deploy::server(keys)?).await
}
