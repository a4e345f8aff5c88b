//! `get_weather` (`saga_examples::weather`, in `examples/support/weather.rs`): one round
//! with two requests at once, keyed `github_login` (who is asking) and `capital_of_france`
//! (a check of the client's LLM), then the weather for the location. The example of the
//! "dependent requests" proposal, as a saga.
//!
//! ```text
//! cargo run -p saga-workspace --example weather                 # Streamable HTTP on 127.0.0.1:8080/mcp
//! cargo run -p saga-workspace --example weather -- --stdio      # stdio
//! cargo run -p saga-workspace --example weather -- --inspect TOKEN --arguments '{…}'   # a token's state as JSON
//! ```

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    saga_examples::cli::init_logging();
    let keys = saga_examples::cli::keys()?;
    saga_examples::cli::serve(saga_examples::weather::server(keys)?).await
}
