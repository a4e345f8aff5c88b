//! `migrate`: long-running work that checkpoints after each table, so that no finished
//! table is done again when the call moves to another process; `approve_migration`, which
//! asks for an approval after its first checkpoint. Served by `examples/migrate.rs`, whose
//! documentation says how each kind of client meets them.

use std::io::Write as _;
use std::time::Duration;

use saga_runtime::prelude::*;
use saga_runtime::state::MemoryStore;

/// Migrates `tables` tables, one after another, checkpointing after each.
#[saga_tool(task)]
pub async fn migrate(
    cx: &SagaContext,
    #[arg(description = "How many tables to migrate (at most 1,000).")] tables: u32,
    #[arg(description = "Milliseconds each table takes.")] millis_per_table: Option<u64>,
    #[arg(description = "A name for the journal.")] label: Option<String>,
) -> Result<String, SagaError> {
    if tables > 1_000 {
        return Err(SagaError::msg("at most 1,000 tables"));
    }
    let label = label.unwrap_or_else(|| "migration".to_owned());
    let pause = Duration::from_millis(millis_per_table.unwrap_or(100).min(10_000));
    let mut migrated: Vec<u32> = Vec::new();
    // As a task, the call answers at its first checkpoint: here, before any work.
    checkpoint().await;
    for table in 0..tables {
        journal(&format!("{label} began table {table}"));
        tokio::time::sleep(pause).await;
        journal(&format!("{label} table {table}"));
        migrated.push(table);
        // A task shows it as its status message; a call, as progress notifications when
        // its client asked for them.
        cx.progress(
            f64::from(table + 1),
            Some(f64::from(tables)),
            Some(format!("table {table}")),
        )
        .await;
        checkpoint().await;
    }
    journal(&format!("{label} done"));
    Ok(format!("migrated {} tables: {migrated:?}", migrated.len()))
}

/// An approval.
#[derive(Debug, Elicit, Serialize, Deserialize)]
pub struct Approval {
    /// Go ahead?
    pub approve: bool,
}

/// Plans a migration, then waits for an approval before reporting it.
#[saga_tool(task)]
pub async fn approve_migration(tables: u32) -> Result<String, SagaError> {
    checkpoint().await;
    let answer: Approval = elicit(format!("Migrate {tables} tables?")).await?;
    Ok(if answer.approve {
        format!("{tables} tables approved")
    } else {
        "not approved".to_owned()
    })
}

/// Charges `customer` `cents` at the payment service (`MIGRATE_PAYMENTS_URL`), once,
/// however often its task's worker dies: the charge is an [`effect`], whose result is
/// saved (the task's record written) before the code goes on, and whose key the service
/// is handed as `Idempotency-Key`. `hold_ms` holds the task for a while, `inside` the
/// effect (after the service saw the key) or after it: where a test kills the worker.
#[saga_tool(task)]
pub async fn charge(
    #[arg(description = "Who pays.")] customer: String,
    #[arg(description = "How much, in cents.")] cents: u64,
    #[arg(description = "Milliseconds to hold the task for.")] hold_ms: Option<u64>,
    #[arg(description = "Hold inside the effect rather than after it.")] inside: Option<bool>,
) -> Result<String, SagaError> {
    // As a task, the call answers here, before any money moves.
    checkpoint().await;
    let hold = Duration::from_millis(hold_ms.unwrap_or(0).min(60_000));
    let inside = inside.unwrap_or(false);
    let payer = customer.clone();
    let receipt: Result<String, String> = effect("charge", |key| async move {
        let receipt = pay(&payer, cents, key.as_str()).await;
        journal(&format!("charge of {payer} sent with {key}"));
        if inside {
            tokio::time::sleep(hold).await;
        }
        receipt
    })
    .await;
    journal(&format!("charge of {customer} recorded"));
    if !inside {
        tokio::time::sleep(hold).await;
    }
    let receipt = receipt.map_err(SagaError::msg)?;
    journal(&format!("charge of {customer} done"));
    Ok(format!("charged: {receipt}"))
}

/// One payment at the service `MIGRATE_PAYMENTS_URL`: its receipt.
async fn pay(customer: &str, cents: u64, key: &str) -> Result<String, String> {
    let url = std::env::var("MIGRATE_PAYMENTS_URL")
        .map_err(|_| "no payment service (MIGRATE_PAYMENTS_URL)".to_owned())?;
    let response = reqwest::Client::new()
        .post(url)
        .header("idempotency-key", key)
        .json(&serde_json::json!({"customer": customer, "cents": cents}))
        .send()
        .await
        .map_err(|error| error.to_string())?;
    if !response.status().is_success() {
        return Err(format!(
            "the payment service answered {}",
            response.status()
        ));
    }
    response.text().await.map_err(|error| error.to_string())
}

/// Appends `line` to `MIGRATE_JOURNAL`, when set: what a test reads to see which work ran,
/// and how often.
fn journal(line: &str) {
    let Some(path) = std::env::var_os("MIGRATE_JOURNAL") else {
        return;
    };
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| file.write_all(format!("{line}\n").as_bytes()));
    if let Err(error) = written {
        tracing::warn!(%error, "the journal could not be written");
    }
}

/// The server of this example, with the given keys and task store. Its tokens are
/// single-use: a migration's work must not run again because a token was replayed (in
/// one process; replicas share Redis for that, as `examples/migrate.rs` does with
/// `SAGA_TASKS_REDIS`).
pub fn server(keys: KeyRing, store: TaskStore, lease: Duration) -> anyhow::Result<SagaServer> {
    server_with(keys, store, lease, MemoryStore::new(100_000))
}

/// [`server`] with a single-use store of your own.
pub fn server_with(
    keys: KeyRing,
    store: TaskStore,
    lease: Duration,
    single_use: impl saga_runtime::state::TokenStore,
) -> anyhow::Result<SagaServer> {
    use saga_runtime::tasks::{
        DEFAULT_MAX_BYTES_PER_PRINCIPAL, DEFAULT_MAX_STORE_BYTES, DEFAULT_MAX_TASKS, Share,
        TaskSettings,
    };
    let mut settings = TaskSettings::new(store).lease(lease);
    let number = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|max| max.parse::<usize>().ok())
    };
    if let Some(max) = number("SAGA_TASKS_PER_CLIENT") {
        // One client may then hold `max` tasks of up to 64 KiB each: every bound that
        // would stop it sooner is raised with it.
        let bytes = max.saturating_mul(64 * 1024);
        let (tasks, store_bytes) = (
            DEFAULT_MAX_TASKS.max(max),
            DEFAULT_MAX_STORE_BYTES.max(bytes),
        );
        settings = settings
            .max_per_principal(max)
            .max_bytes_per_principal(DEFAULT_MAX_BYTES_PER_PRINCIPAL.max(bytes))
            .max_tasks(tasks)
            .max_store_bytes(store_bytes)
            .unverified_share(Share {
                tasks,
                bytes: store_bytes,
            });
    }
    if let Some(max) = number("SAGA_TASK_WORKERS") {
        settings = settings.max_workers(max);
    }
    if let Some(max) = number("SAGA_TASK_WORKERS_PER_CLIENT") {
        settings = settings.max_workers_per_principal(max);
    }
    let builder = SagaServer::builder()
        .info("migrate-server", env!("CARGO_PKG_VERSION"))
        .keys(keys)
        .tool(migrate)
        .tool(approve_migration)
        .tool(charge)
        .task_settings(settings)
        .single_use(single_use);
    Ok(crate::cli::with_api_keys(builder).build()?)
}
