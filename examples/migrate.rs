//! `migrate` (`saga_examples::migrate`, in `examples/support/migrate.rs`): long-running
//! work that checkpoints after each table, so that no finished table is done again when the
//! call moves to another process.
//!
//! - A client that declares the tasks extension (MCP 2026-07-28) gets a task: the call
//!   answers at once with a task id, and a worker runs the migration, writing its state to
//!   the task store at every checkpoint. The store is the SQLite file `saga-tasks.db`
//!   (a restart, even after `kill -9`, goes on with every task), or what `SAGA_TASKS`
//!   names: with `SAGA_TASKS=redis://…` or `postgres://…` replicas share it, and when one
//!   dies another takes its tasks over when their lease (`SAGA_TASK_LEASE_MS`, 10 s by
//!   default) runs out.
//! - A client that declares `resumableRequests` (seed 002, SEP-975) in a session gets a
//!   resume token at every checkpoint; after a crash, `requests/resume` on a fresh process
//!   goes on from the last one.
//! - `approve_migration` asks for an approval after its first checkpoint: as a task, it
//!   waits `input_required` until `tasks/update` answers.
//!
//! ```text
//! cargo run -p saga-workspace --example migrate                 # Streamable HTTP on 127.0.0.1:8080/mcp
//! cargo run -p saga-workspace --example migrate -- --stdio      # stdio
//! MIGRATE_JOURNAL=/tmp/journal cargo run -p saga-workspace --example migrate   # "LABEL began table N", "LABEL table N", "LABEL done"
//! SAGA_TASKS=sqlite:/var/lib/migrate.db cargo run -p saga-workspace --example migrate   # another file
//! SAGA_TASKS=redis://127.0.0.1/ cargo run -p saga-workspace --example migrate            # shared by replicas
//! SAGA_TASKS=postgres://saga@127.0.0.1/saga cargo run -p saga-workspace --example migrate # shared by replicas
//! SAGA_TASKS_PER_CLIENT=20000 SAGA_TASK_WORKERS=1000 SAGA_TASK_WORKERS_PER_CLIENT=1000 \
//!     cargo run -p saga-workspace --example migrate             # raise the bounds
//! ```

use std::time::Duration;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    saga_examples::cli::init_logging();
    // Tasks and redeemed tokens on one backend: a SQLite file unless `SAGA_TASKS` says.
    let stores = saga_examples::cli::Stores::from_env()?;
    let lease = std::env::var("SAGA_TASK_LEASE_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(saga_runtime::tasks::DEFAULT_LEASE, Duration::from_millis);
    let server = saga_examples::migrate::server_with(
        saga_examples::cli::keys()?,
        stores.tasks().await?,
        lease,
        stores.single_use().await?,
    )?;
    saga_examples::cli::serve(server).await
}
