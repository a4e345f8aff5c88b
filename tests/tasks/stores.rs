//! The stores' contract (`saga_runtime::testing::stores`), run against every backend saga
//! ships: in memory, a SQLite file, a real `redis-server` and a real `postgres`, each
//! fresh; and what only a durable store promises: a SQLite file reopened keeps every
//! record and every redeemed token, and a Postgres that goes away fails calls cleanly and
//! serves again when it returns.

use saga_examples::harness::postgres::start_postgres;
use saga_examples::harness::redis::start_redis;
use saga_runtime::state::{MemoryStore, PostgresStore, RedisStore, SqliteStore, TokenStore};
use saga_runtime::tasks::{Quota, TaskRecord, TaskStore, TaskStoreError};
use saga_runtime::testing::stores::{
    state_store_contract, task_store_contract, token_store_contract,
};

/// A path for a fresh SQLite file, removed (with its WAL) on drop.
struct TempDb(std::path::PathBuf);

impl TempDb {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!(
            "saga-{name}-{}-{}.db",
            std::process::id(),
            rand_suffix()
        ));
        Self(path)
    }
}

fn rand_suffix() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Drop for TempDb {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", self.0.display()));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_keeps_the_contract() {
    task_store_contract(TaskStore::memory()).await;
    state_store_contract(TaskStore::memory()).await;
    token_store_contract(MemoryStore::new(1000)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_keeps_the_contract() {
    let file = TempDb::new("contract");
    task_store_contract(TaskStore::sqlite(&file.0).expect("opened")).await;
    state_store_contract(TaskStore::sqlite(&file.0).expect("opened")).await;
    // The single-use store on the same file.
    token_store_contract(SqliteStore::open(&file.0).expect("opened")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_keeps_the_contract() {
    let redis = start_redis().await;
    task_store_contract(TaskStore::redis(&redis.url).await.expect("connected")).await;
    state_store_contract(TaskStore::redis(&redis.url).await.expect("connected")).await;
    token_store_contract(RedisStore::connect(&redis.url).await.expect("connected")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keeps_the_contract() {
    let postgres = start_postgres().await;
    task_store_contract(TaskStore::postgres(&postgres.url).await.expect("connected")).await;
    state_store_contract(TaskStore::postgres(&postgres.url).await.expect("connected")).await;
    token_store_contract(
        PostgresStore::connect(&postgres.url)
            .await
            .expect("connected"),
    )
    .await;
}

fn a_record(id: &str) -> TaskRecord {
    let now = saga_runtime::state::unix_now() * 1000;
    TaskRecord {
        id: id.into(),
        principal: "alice".into(),
        counted_as: None,
        tool: "migrate".into(),
        arguments: None,
        capabilities: Default::default(),
        status: saga_runtime::rmcp::model::TaskStatus::Working,
        state: Some("sealed".into()),
        pending: None,
        answers: Default::default(),
        model_answers: Default::default(),
        result: None,
        error: None,
        created_ms: now,
        updated_ms: now,
        ttl_ms: 600_000,
        worker: Some("w".into()),
        lease_until_ms: now + 60_000,
        takeovers: 0,
        unresumable_since_ms: None,
        status_message: None,
        trace: None,
    }
}

/// What a SQLite file held is there when it is opened again (the next process).
#[tokio::test]
async fn a_sqlite_file_keeps_tasks_and_redeemed_tokens_across_opens() {
    let file = TempDb::new("reopen");
    let record = a_record("t1");
    let far = saga_runtime::state::unix_now() + 600;
    {
        let tasks = TaskStore::sqlite(&file.0).expect("opened");
        tasks
            .backend()
            .insert(&record, &Quota::per_principal(10))
            .await
            .expect("inserted");
        let used = SqliteStore::open(&file.0).expect("opened");
        assert_eq!(used.redeem(&[7; 24], far).await, Ok(true));
    }
    let tasks = TaskStore::sqlite(&file.0).expect("opened again");
    assert_eq!(tasks.backend().get("t1").await.expect("read"), Some(record));
    let used = SqliteStore::open(&file.0).expect("opened again");
    assert_eq!(
        used.redeem(&[7; 24], far).await,
        Ok(false),
        "a token redeemed before the restart replays after it"
    );
}

/// A file written by a build of another schema is refused, not misread.
#[tokio::test]
async fn a_sqlite_file_of_another_schema_is_refused() {
    let file = TempDb::new("schema");
    drop(TaskStore::sqlite(&file.0).expect("opened"));
    // As a later build would leave it.
    rusqlite::Connection::open(&file.0)
        .expect("opened")
        .execute("UPDATE saga_meta SET value = 2 WHERE key = 'schema'", [])
        .expect("updated");
    let error = TaskStore::sqlite(&file.0).expect_err("refused");
    assert!(
        matches!(&error, TaskStoreError::Unavailable(why) if why.contains("schema 2")),
        "{error}"
    );
    assert!(SqliteStore::open(&file.0).is_err());
}

/// A record a later build wrote with a field this build does not know is refused, not
/// read: reading it would drop the field when the record is written back.
#[tokio::test]
async fn a_record_with_a_field_this_build_does_not_know_is_refused() {
    let file = TempDb::new("field");
    let tasks = TaskStore::sqlite(&file.0).expect("opened");
    let record = a_record("t1");
    tasks
        .backend()
        .insert(&record, &Quota::per_principal(10))
        .await
        .expect("inserted");
    rusqlite::Connection::open(&file.0)
        .expect("opened")
        .execute(
            "UPDATE saga_tasks SET record = replace(record, '{', '{\"later_field\":1,')",
            [],
        )
        .expect("a later build's field");
    let error = tasks.backend().get("t1").await.expect_err("refused");
    assert!(error.to_string().contains("later_field"), "{error}");
}

/// What a later build, whose tables differ, leaves in a database.
const LATER_BUILDS_TABLES: &str =
    "CREATE TABLE saga_meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL);
     INSERT INTO saga_meta (key, value) VALUES ('schema', 2);
     CREATE TABLE saga_tasks (id TEXT PRIMARY KEY, payload TEXT NOT NULL);";

/// A later build's tables are refused by their schema row before this build creates or
/// reads anything: not a raw "no such column", and no table of this build's beside them.
#[tokio::test]
async fn a_sqlite_file_of_a_later_builds_tables_is_refused_untouched() {
    let file = TempDb::new("later");
    rusqlite::Connection::open(&file.0)
        .expect("opened")
        .execute_batch(LATER_BUILDS_TABLES)
        .expect("a later build's tables");
    let error = TaskStore::sqlite(&file.0).expect_err("refused");
    assert!(
        matches!(&error, TaskStoreError::Unavailable(why) if why.contains("schema 2")),
        "{error}"
    );
    let tables: i64 = rusqlite::Connection::open(&file.0)
        .expect("opened")
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'saga_%'",
            [],
            |row| row.get(0),
        )
        .expect("counted");
    assert_eq!(tables, 2, "only the later build's two tables are there");
    // Finding 9 of the third hardening pass: the file was switched to WAL before the
    // refusal. It is read without writing until its schema is checked.
    let mode: String = rusqlite::Connection::open(&file.0)
        .expect("opened")
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .expect("read");
    assert_eq!(
        mode, "delete",
        "the refused file's journal mode was changed"
    );
    // Garbage is refused as it was found.
    let garbage = TempDb::new("garbage");
    std::fs::write(&garbage.0, b"not a database, just some bytes of a file").expect("written");
    assert!(TaskStore::sqlite(&garbage.0).is_err());
    assert_eq!(
        std::fs::read(&garbage.0).expect("read"),
        b"not a database, just some bytes of a file"
    );
}

/// The same on Postgres.
#[tokio::test]
async fn a_postgres_database_of_a_later_builds_tables_is_refused() {
    let postgres = start_postgres().await;
    let url = postgres.database("later").await;
    postgres.psql("later", LATER_BUILDS_TABLES);
    let error = TaskStore::postgres(&url).await.expect_err("refused");
    assert!(
        matches!(&error, TaskStoreError::Unavailable(why) if why.contains("schema 2")),
        "{error}"
    );
    assert!(PostgresStore::connect(&url).await.is_err());
    // Nothing of this build's was created beside the later build's tables.
    postgres.psql(
        "later",
        "DO $$ BEGIN IF to_regclass('saga_used') IS NOT NULL THEN RAISE 'created'; END IF; END $$;",
    );
}

/// A Postgres that goes away fails each call whole (`Unavailable`), hangs none, and
/// serves again once it is back, with what it held before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_that_goes_away_fails_calls_and_serves_when_back() {
    let mut postgres = start_postgres().await;
    let tasks = TaskStore::postgres(&postgres.url).await.expect("connected");
    let used = PostgresStore::connect(&postgres.url)
        .await
        .expect("connected");
    tasks
        .backend()
        .insert(&a_record("before"), &Quota::per_principal(10))
        .await
        .expect("inserted");
    postgres.stop();
    let started = std::time::Instant::now();
    let far = saga_runtime::state::unix_now() + 600;
    assert!(matches!(
        tasks.backend().get("before").await,
        Err(TaskStoreError::Unavailable(_))
    ));
    assert!(matches!(
        tasks
            .backend()
            .insert(&a_record("during"), &Quota::per_principal(10))
            .await,
        Err(TaskStoreError::Unavailable(_))
    ));
    assert!(used.redeem(&[9; 24], far).await.is_err());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "calls hung while the database was gone: {:?}",
        started.elapsed()
    );
    postgres.start().await;
    assert!(
        tasks.backend().get("before").await.expect("read").is_some(),
        "what it held before"
    );
    assert_eq!(
        tasks.backend().get("during").await.expect("read"),
        None,
        "nothing half-written"
    );
    tasks
        .backend()
        .insert(&a_record("after"), &Quota::per_principal(10))
        .await
        .expect("serves again");
    assert_eq!(used.redeem(&[9; 24], far).await, Ok(true));
}

/// What a build before the quota counters left: its rows, no counters, no triggers.
const BEFORE_THE_COUNTERS: &str = "DROP TABLE saga_task_counts;
    DELETE FROM saga_meta WHERE key = 'task_counts';";

/// A file a build before the counters wrote: this build counts its rows once when it
/// opens it, and its quotas then hold them; rows an older build writes afterwards (no
/// counters of its own) are counted too, by the triggers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_file_of_a_build_before_the_counters_is_counted() {
    let file = TempDb::new("before-counters");
    let store = TaskStore::sqlite(&file.0).expect("opened");
    for id in ["one", "two"] {
        store
            .backend()
            .insert(&a_record(id), &Quota::per_principal(10))
            .await
            .expect("inserted");
    }
    drop(store);
    let old = rusqlite::Connection::open(&file.0).expect("opened");
    old.execute_batch(
        "DROP TRIGGER saga_tasks_counted; DROP TRIGGER saga_tasks_uncounted;
         DROP TRIGGER saga_tasks_resized;",
    )
    .expect("no triggers");
    old.execute_batch(BEFORE_THE_COUNTERS).expect("no counters");
    drop(old);
    let store = TaskStore::sqlite(&file.0).expect("opened again");
    assert_eq!(
        store
            .backend()
            .insert(&a_record("three"), &Quota::per_principal(2))
            .await,
        Err(TaskStoreError::PrincipalQuota(2)),
        "the two rows written before the counters count"
    );
    // An older build inserts a row with SQL of its own: the triggers count it.
    rusqlite::Connection::open(&file.0)
        .expect("opened")
        .execute(
            "INSERT INTO saga_tasks (id, owner, shared, bytes, expires_ms, working,
                 lease_until_ms, version, record)
             SELECT 'older', owner, shared, bytes, expires_ms, working, lease_until_ms, 0,
                 record FROM saga_tasks WHERE id = 'one'",
            [],
        )
        .expect("an older build's insert");
    assert_eq!(
        store
            .backend()
            .insert(&a_record("four"), &Quota::per_principal(3))
            .await,
        Err(TaskStoreError::PrincipalQuota(3)),
        "a row another build inserted counts"
    );
    store
        .backend()
        .insert(&a_record("four"), &Quota::per_principal(4))
        .await
        .expect("room for a fourth");
}

/// The same on Postgres.
#[tokio::test]
async fn a_postgres_database_of_a_build_before_the_counters_is_counted() {
    let postgres = start_postgres().await;
    let url = postgres.database("before_counters").await;
    let store = TaskStore::postgres(&url).await.expect("connected");
    for id in ["one", "two"] {
        store
            .backend()
            .insert(&a_record(id), &Quota::per_principal(10))
            .await
            .expect("inserted");
    }
    drop(store);
    postgres.psql(
        "before_counters",
        &format!(
            "DROP TRIGGER saga_tasks_counted ON saga_tasks;
             DROP TRIGGER saga_tasks_uncounted ON saga_tasks;
             DROP TRIGGER saga_tasks_resized ON saga_tasks; {BEFORE_THE_COUNTERS}"
        ),
    );
    let store = TaskStore::postgres(&url).await.expect("connected again");
    assert_eq!(
        store
            .backend()
            .insert(&a_record("three"), &Quota::per_principal(2))
            .await,
        Err(TaskStoreError::PrincipalQuota(2)),
        "the two rows written before the counters count"
    );
    postgres.psql(
        "before_counters",
        "INSERT INTO saga_tasks (id, owner, shared, bytes, expires_ms, working,
             lease_until_ms, version, record)
         SELECT 'older', owner, shared, bytes, expires_ms, working, lease_until_ms, 0,
             record FROM saga_tasks WHERE id = 'one'",
    );
    assert_eq!(
        store
            .backend()
            .insert(&a_record("four"), &Quota::per_principal(3))
            .await,
        Err(TaskStoreError::PrincipalQuota(3)),
        "a row another build inserted counts"
    );
}

/// A write the database refuses (here, a second record under an id already stored) fails
/// alone: the writes committed in the same group are stored and acknowledged, and the
/// store goes on (Postgres's connection is not left inside a transaction).
async fn a_refused_write_fails_alone(store: TaskStore) {
    store
        .backend()
        .insert(&a_record("taken"), &Quota::per_principal(100))
        .await
        .expect("inserted");
    let handles: Vec<_> = (0..12)
        .map(|n| {
            let store = store.clone();
            tokio::spawn(async move {
                let id = if n == 5 {
                    "taken".to_owned()
                } else {
                    format!("group-{n}")
                };
                store
                    .backend()
                    .insert(&a_record(&id), &Quota::per_principal(100))
                    .await
            })
        })
        .collect();
    for (n, handle) in handles.into_iter().enumerate() {
        let outcome = handle.await.expect("joined");
        if n == 5 {
            assert!(
                matches!(outcome, Err(TaskStoreError::Unavailable(_))),
                "{outcome:?}"
            );
        } else {
            assert_eq!(outcome, Ok(()), "write {n}");
            assert!(
                store
                    .backend()
                    .get(&format!("group-{n}"))
                    .await
                    .expect("read")
                    .is_some()
            );
        }
    }
    for _ in 0..3 {
        store
            .backend()
            .insert(
                &a_record(&format!("after-{}", rand_suffix())),
                &Quota::per_principal(100),
            )
            .await
            .expect("the store goes on");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_sqlite_write_fails_alone() {
    let file = TempDb::new("refused");
    a_refused_write_fails_alone(TaskStore::sqlite(&file.0).expect("opened")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_postgres_write_fails_alone() {
    let postgres = start_postgres().await;
    let url = postgres.database("refused").await;
    a_refused_write_fails_alone(TaskStore::postgres(&url).await.expect("connected")).await;
}
