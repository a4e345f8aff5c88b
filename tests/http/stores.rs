//! A server given a store that keeps nothing across a restart says so when it starts
//! serving HTTP (issue 98): a newcomer who copies `TaskStore::memory()` into a server meant
//! to survive restarts reads why its calls fail after one, before they do.

use saga_examples::harness::process::Spawn;

const KEY_HEX: &str = "6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b";

#[tokio::test]
async fn a_memory_store_served_over_http_is_warned_of_at_start() {
    let server = Spawn::new("migrate", KEY_HEX)
        .env("SAGA_TASKS", "memory")
        .capture_stderr()
        .start();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let log = server.stderr();
    assert!(
        log.contains("warning: the task store keeps everything in memory")
            && log.contains("TaskStore::sqlite(path)"),
        "{log}"
    );
}

#[tokio::test]
async fn a_store_that_survives_restarts_is_not_warned_of() {
    let dir = std::env::temp_dir().join(format!("saga-stores-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let file = dir.join("tasks.db");
    let server = Spawn::new("migrate", KEY_HEX)
        .env("SAGA_TASKS", &format!("sqlite:{}", file.display()))
        .capture_stderr()
        .start();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let log = server.stderr();
    assert!(!log.contains("keeps everything in memory"), "{log}");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
