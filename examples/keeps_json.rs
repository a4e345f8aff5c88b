//! Tools that keep JSON-shaped data across a suspension (`saga_examples::keeps_json`, in
//! `examples/support/keeps_json.rs`): a free-form `serde_json::Value` argument, `json!`
//! locals, structs with `skip_serializing_if`, `flatten`, tagged enums, rmcp's model
//! types, chrono, uuid and url values. saga keeps what postcard cannot read as
//! MessagePack, and the layout names it (`msgpack "Value"`).
//!
//! ```text
//! cargo run -p saga-workspace --example keeps_json                      # Streamable HTTP on 127.0.0.1:8080/mcp
//! cargo run -p saga-workspace --example keeps_json -- --stdio           # stdio
//! ```
//!
//! `SAGA_TASKS` says where its tasks are kept (the SQLite file `saga-tasks.db` unless it names
//! another, or Redis, Postgres, `memory`).

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    saga_examples::cli::init_logging();
    let store = saga_examples::cli::task_store().await?;
    let server = saga_examples::keeps_json::server(saga_examples::cli::keys()?, store)?;
    saga_examples::cli::serve(server).await
}
