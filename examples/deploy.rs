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
//! SAGA_SINGLE_USE=memory cargo run -p saga-workspace --example deploy   # a retried request answered from its record
//! SAGA_SINGLE_USE=memory-unrecorded …   # single use, a retry refused (also sqlite:PATH, redis://…, postgres://…)
//! ```

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    saga_examples::cli::init_logging();
    let keys = saga_examples::cli::keys()?;
    let mut builder = saga_examples::deploy::builder(keys)?;
    // `SAGA_SINGLE_USE=memory` (or `sqlite:PATH`, `redis://…`, `postgres://…`): single-use
    // tokens whose outcomes are recorded, so that a request sent again is answered again.
    if let Ok(value) = std::env::var("SAGA_SINGLE_USE") {
        builder = match value.as_str() {
            // Sized for a load test: a live token is never forgotten, so the store holds
            // every round of the tokens' lifetime (ten minutes here).
            "memory" => builder.single_use(
                saga_runtime::state::MemoryStore::new(8_000_000).with_outcome_bytes(4 << 30),
            ),
            // Single use without recorded outcomes: a retry is refused.
            "memory-unrecorded" => builder
                .single_use(saga_runtime::state::MemoryStore::new(8_000_000).with_outcome_bytes(0)),
            other => builder.single_use(
                saga_examples::cli::Stores::parse(other)?
                    .single_use()
                    .await?,
            ),
        };
    }
    saga_examples::cli::serve(builder.build()?).await
}
