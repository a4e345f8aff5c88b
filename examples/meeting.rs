//! `book_meeting` (see `examples/support/meeting.rs`): one bounded form whose fields go out
//! in the order they are declared, an answer outside the form asked again with the reason,
//! and a decline that is an answer rather than an error.
//!
//! ```text
//! cargo run -p saga-workspace --example meeting                 # Streamable HTTP on 127.0.0.1:8080/mcp
//! cargo run -p saga-workspace --example meeting -- --stdio      # stdio
//! saga call http://127.0.0.1:8080/mcp book_meeting organiser=Ada
//! ```

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    saga_examples::cli::init_logging();
    let keys = saga_examples::cli::keys()?;
    saga_examples::cli::serve(saga_examples::meeting::server(keys)?).await
}
