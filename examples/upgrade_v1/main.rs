//! Build 1 of a service that is deployed again as `upgrade_v2`: together, the two show
//! which edits keep the calls in flight across a deploy, and the tests run them as two
//! real server processes sharing a key (`tests/deploys/deploys.rs`).
//!
//! ```text
//! cargo run -p saga-workspace --example upgrade_v1                      # Streamable HTTP on 127.0.0.1:8080/mcp
//! cargo run -p saga-workspace --example upgrade_v1 -- --check-layout examples/upgrade_v1/saga.layout
//! ```
//!
//! `SAGA_TASKS` says where its tasks are kept (the SQLite file `saga-tasks.db` unless it names
//! another, or Redis, Postgres, `memory`), and
//! `SAGA_TASK_LEASE_MS` sets their lease.

mod tools;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    saga_examples::cli::init_logging();
    let store = saga_examples::cli::task_store().await?;
    let server = tools::server(saga_examples::cli::keys()?, store)?;
    saga_examples::cli::serve(server).await
}
