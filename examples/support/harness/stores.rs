//! Every task store, each connected: what the benches compare side by side.

use saga_runtime::tasks::TaskStore;

/// The four task stores, named as the benches' tables name them: memory, a SQLite file at
/// `sqlite` (WAL, `synchronous = FULL`), Redis at `redis`, Postgres at `postgres`.
pub async fn every_task_store(
    sqlite: &std::path::Path,
    redis: &str,
    postgres: &str,
) -> Vec<(&'static str, TaskStore)> {
    vec![
        ("memory", TaskStore::memory()),
        (
            "SQLite (WAL, synchronous=FULL)",
            TaskStore::sqlite(sqlite).expect("opened"),
        ),
        ("Redis", TaskStore::redis(redis).await.expect("connected")),
        (
            "Postgres",
            TaskStore::postgres(postgres).await.expect("connected"),
        ),
    ]
}
