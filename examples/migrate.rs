//! `migrate`: long-running work that checkpoints after each table, so that no finished
//! table is done again when the call moves to another process. With a client that declares
//! `resumableRequests` (seed 002, SEP-975) in a session, every checkpoint sends it a
//! resume token; after a crash, `requests/resume` on a fresh process goes on from the last
//! one.
//!
//! ```text
//! cargo run --example migrate                 # Streamable HTTP on 127.0.0.1:8080/mcp
//! cargo run --example migrate -- --stdio      # stdio
//! MIGRATE_JOURNAL=/tmp/journal cargo run --example migrate   # appends "table N" per table done
//! ```

use std::io::Write as _;
use std::time::Duration;

use saga_runtime::prelude::*;

/// Migrates `tables` tables, one after another, checkpointing after each.
#[saga_tool]
pub async fn migrate(
    #[arg(description = "How many tables to migrate (at most 1,000).")] tables: u32,
    #[arg(description = "Milliseconds each table takes.")] millis_per_table: Option<u64>,
) -> Result<String, SagaError> {
    if tables > 1_000 {
        return Err(SagaError::msg("at most 1,000 tables"));
    }
    let pause = Duration::from_millis(millis_per_table.unwrap_or(100).min(10_000));
    let mut migrated: Vec<u32> = Vec::new();
    for table in 0..tables {
        tokio::time::sleep(pause).await;
        journal(table);
        migrated.push(table);
        checkpoint().await;
    }
    Ok(format!("migrated {} tables: {migrated:?}", migrated.len()))
}

/// Records a finished table in `MIGRATE_JOURNAL`, when set: what a test reads to see which
/// work ran, and how often.
fn journal(table: u32) {
    let Some(path) = std::env::var_os("MIGRATE_JOURNAL") else {
        return;
    };
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| writeln!(file, "table {table}"));
    if let Err(error) = written {
        tracing::warn!(%error, "the journal could not be written");
    }
}

/// The server of this example, with the given keys.
pub fn server(keys: KeyRing) -> anyhow::Result<SagaServer> {
    Ok(SagaServer::builder()
        .info("migrate-server", env!("CARGO_PKG_VERSION"))
        .keys(keys)
        .tool(migrate)
        .build()?)
}

#[allow(dead_code)] // unused where a test includes this file
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    saga_examples::cli::init_logging();
    saga_examples::cli::serve(server(saga_examples::cli::keys()?)?).await
}
