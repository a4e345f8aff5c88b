//! The contract every store keeps, as a test suite a backend runs against itself: saga's
//! own (memory, SQLite, Redis, Postgres) in `tests/tasks/stores.rs`, and yours.
//!
//! Each function panics, naming the broken promise, when the store breaks one. Give each
//! a fresh, empty store (a new file, database or key space): the suite counts what the
//! store holds.
//!
//! ```
//! use std::future::Future;
//! use std::pin::Pin;
//!
//! use saga_runtime::tasks::{Change, Quota, TaskBackend, TaskRecord, TaskStore, TaskStoreError};
//!
//! type Answer<'a, T> = Pin<Box<dyn Future<Output = Result<T, TaskStoreError>> + Send + 'a>>;
//!
//! /// A backend of your own: here, one that forwards to the memory store.
//! #[derive(Debug)]
//! struct MyBackend(TaskStore);
//!
//! impl TaskBackend for MyBackend {
//!     fn insert<'a>(&'a self, record: &'a TaskRecord, quota: &'a Quota) -> Answer<'a, ()> {
//!         self.0.backend().insert(record, quota)
//!     }
//!     fn get<'a>(&'a self, id: &'a str) -> Answer<'a, Option<TaskRecord>> {
//!         self.0.backend().get(id)
//!     }
//!     fn update<'a>(
//!         &'a self,
//!         id: &'a str,
//!         change: Change<'a>,
//!         quota: &'a Quota,
//!     ) -> Answer<'a, Option<TaskRecord>> {
//!         self.0.backend().update(id, change, quota)
//!     }
//!     fn orphans(&self, now_ms: u64) -> Answer<'_, Vec<String>> {
//!         self.0.backend().orphans(now_ms)
//!     }
//! }
//!
//! // In a test of yours: `#[tokio::test] async fn …() { … .await }`.
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let store = TaskStore::custom(MyBackend(TaskStore::memory()));
//! saga_runtime::testing::stores::task_store_contract(store).await;
//! # });
//! ```

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{InputResponses, TaskStatus};
use serde_json::json;

use crate::state::{Link, TokenStore, unix_now};
use crate::tasks::clock::now_ms;
use crate::tasks::{KeptEntry, Quota, Share, TaskRecord, TaskStore, TaskStoreError};

/// A working task of `principal`, whose worker's lease holds until `lease_until_ms`.
fn record(id: &str, principal: &str, lease_until_ms: u64) -> TaskRecord {
    TaskRecord {
        id: id.to_owned(),
        principal: principal.into(),
        counted_as: None,
        tool: "migrate".into(),
        arguments: None,
        capabilities: Default::default(),
        status: TaskStatus::Working,
        state: Some("state".into()),
        pending: None,
        answers: InputResponses::new(),
        model_answers: InputResponses::new(),
        result: None,
        error: None,
        created_ms: now_ms(),
        updated_ms: now_ms(),
        ttl_ms: 60_000,
        worker: Some("w1".into()),
        lease_until_ms,
        takeovers: 0,
        unresumable_since_ms: None,
        status_message: None,
        trace: None,
    }
}

/// Runs every check of the task store contract against `store`, which must be empty:
///
/// - a record reads back as written, with every field; a missing one is `None`;
/// - updates are atomic (40 concurrent ones lose none), a declined change writes
///   nothing, a cancel is an update like any other;
/// - exactly one of several workers racing to take over an orphan wins it, and only
///   working tasks whose lease ended are orphans;
/// - the per-principal bounds (tasks and bytes), the shared part's and the store's are
///   kept at insert, and at an update that grows a record;
/// - an expired record is gone: not read, not an orphan, not updated, not counted;
/// - creates made at once count against each other: of 24 concurrent creates under a
///   quota of 5, exactly 5 are admitted (a store that commits them together counts each
///   before admitting the next).
pub async fn task_store_contract(store: TaskStore) {
    creates_reads_and_bounds(&store).await;
    updates_are_atomic(&store).await;
    one_worker_takes_an_orphan_over(&store).await;
    growth_counts(&store).await;
    expired_records_are_gone(&store).await;
    concurrent_creates_count_against_each_other(&store).await;
}

async fn creates_reads_and_bounds(store: &TaskStore) {
    let backend = store.backend();
    let far = now_ms() + 60_000;
    let mut a = record("a", "alice", far);
    // Every field reads back, the optional ones included.
    a.status_message = Some("1/3 table 0".into());
    backend
        .insert(&a, &Quota::per_principal(100))
        .await
        .expect("inserted");
    backend
        .insert(&record("b", "alice", 1), &Quota::per_principal(100))
        .await
        .expect("inserted");
    assert_eq!(
        backend.get("a").await.expect("read"),
        Some(a.clone()),
        "a record reads back as written"
    );
    assert_eq!(backend.get("nope").await.expect("read"), None);
    // Alice holds two tasks: a quota of two refuses her a third, not someone else.
    assert_eq!(
        backend
            .insert(&record("c", "alice", far), &Quota::per_principal(2))
            .await,
        Err(TaskStoreError::PrincipalQuota(2)),
        "the per-principal task bound"
    );
    backend
        .insert(&record("c", "bob", far), &Quota::per_principal(2))
        .await
        .expect("another principal is not refused");
    // A record counted under a pool counts there, not under its principal.
    let mut pooled = record("p", "alice", far);
    pooled.counted_as = Some("unverified:10.0.0.1".into());
    backend
        .insert(&pooled, &Quota::per_principal(1))
        .await
        .expect("counted under its pool, which holds none");
    // Bytes count as well as tasks.
    let mut big = record("d", "carol", far);
    big.state = Some("x".repeat(10_000));
    assert_eq!(
        backend
            .insert(
                &big,
                &Quota::per_principal(100).with_bytes(5_000, usize::MAX)
            )
            .await,
        Err(TaskStoreError::PrincipalBytes(5_000)),
        "the per-principal byte bound"
    );
    // A share spent by one principal refuses the others in it, not those outside it.
    let share = Quota::per_principal(100).with_share(Share {
        tasks: 1,
        bytes: usize::MAX,
    });
    backend
        .insert(&record("e", "dave", far), &share)
        .await
        .expect("first in the share");
    assert_eq!(
        backend.insert(&record("f", "erin", far), &share).await,
        Err(TaskStoreError::SharedQuota),
        "the shared part's bound"
    );
    backend
        .insert(&record("f", "erin", far), &Quota::per_principal(100))
        .await
        .expect("outside the share");
    // The store's own bounds: six records are held.
    assert_eq!(
        backend
            .insert(
                &record("g", "frank", far),
                &Quota::per_principal(100).with_tasks(6)
            )
            .await,
        Err(TaskStoreError::Full),
        "the store's task bound"
    );
    assert_eq!(
        backend
            .insert(
                &big,
                &Quota::per_principal(100).with_bytes(usize::MAX, 8_000)
            )
            .await,
        Err(TaskStoreError::Full),
        "the store's byte bound"
    );
    if let Some(depth) = backend.depth(now_ms()).await.expect("depth") {
        assert_eq!(depth, 6, "the depth counts the records held");
    }
    // A cancel is an update; the record then is no orphan.
    let cancel = |record: &mut TaskRecord| {
        record.status = TaskStatus::Cancelled;
        true
    };
    let cancelled = backend
        .update("f", &cancel, &Quota::per_principal(100))
        .await
        .expect("updated")
        .expect("there");
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    assert_eq!(
        backend.get("f").await.expect("read").map(|r| r.status),
        Some(TaskStatus::Cancelled)
    );
    assert_eq!(
        backend
            .update("nope", &cancel, &Quota::per_principal(100))
            .await,
        Ok(None),
        "an update of a missing record"
    );
}

async fn updates_are_atomic(store: &TaskStore) {
    let mut handles = Vec::new();
    for _ in 0..40 {
        let store = store.clone();
        handles.push(tokio::spawn(async move {
            let bump = |record: &mut TaskRecord| {
                record.takeovers += 1;
                true
            };
            store
                .backend()
                .update("a", &bump, &Quota::per_principal(100))
                .await
                .expect("updated");
        }));
    }
    for handle in handles {
        handle.await.expect("joined");
    }
    let backend = store.backend();
    let a = backend.get("a").await.expect("read").expect("there");
    assert_eq!(a.takeovers, 40, "an update was lost");
    let decline = |record: &mut TaskRecord| {
        record.takeovers = 0;
        false
    };
    let unchanged = backend
        .update("a", &decline, &Quota::per_principal(100))
        .await
        .expect("read");
    assert_eq!(
        unchanged.map(|record| record.takeovers),
        Some(40),
        "a declined change"
    );
    assert_eq!(
        backend.get("a").await.expect("read").map(|r| r.takeovers),
        Some(40),
        "a declined change was written"
    );
}

async fn one_worker_takes_an_orphan_over(store: &TaskStore) {
    // `b` is working and its lease ended: the only orphan.
    assert_eq!(
        store.backend().orphans(now_ms()).await.expect("listed"),
        vec!["b".to_owned()],
        "only working tasks whose lease ended are orphans"
    );
    let winners = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut handles = Vec::new();
    for worker in 0..8 {
        let (store, winners) = (store.clone(), Arc::clone(&winners));
        handles.push(tokio::spawn(async move {
            let now = now_ms();
            let name = format!("w{worker}");
            // The takeover a worker makes: only while the lease is over.
            let claim = |record: &mut TaskRecord| {
                if record.lease_until_ms >= now {
                    return false;
                }
                record.worker = Some(name.clone());
                record.lease_until_ms = now + 60_000;
                record.takeovers += 1;
                true
            };
            let after = store
                .backend()
                .update("b", &claim, &Quota::per_principal(100))
                .await
                .expect("updated")
                .expect("there");
            if after.worker.as_deref() == Some(name.as_str()) {
                winners.lock().expect("lock").push(name);
            }
        }));
    }
    for handle in handles {
        handle.await.expect("joined");
    }
    let winners = winners.lock().expect("lock").clone();
    assert_eq!(winners.len(), 1, "takeovers: {winners:?}");
    let b = store.backend().get("b").await.expect("read").expect("b");
    assert_eq!(b.takeovers, 1, "one takeover");
    assert!(
        store
            .backend()
            .orphans(now_ms())
            .await
            .expect("listed")
            .is_empty(),
        "a task taken over is no orphan"
    );
    let done = |record: &mut TaskRecord| {
        record.status = TaskStatus::Completed;
        record.lease_until_ms = 0;
        true
    };
    store
        .backend()
        .update("b", &done, &Quota::per_principal(100))
        .await
        .expect("updated");
    assert!(
        store
            .backend()
            .orphans(now_ms())
            .await
            .expect("listed")
            .is_empty(),
        "a completed task is no orphan"
    );
}

async fn growth_counts(store: &TaskStore) {
    // What a record holds after a change counts, not only what it held when stored.
    let backend = store.backend();
    let far = now_ms() + 60_000;
    backend
        .insert(&record("z", "zed", far), &Quota::per_principal(100))
        .await
        .expect("inserted");
    let grow = |record: &mut TaskRecord| {
        record.answers.insert(
            "k".into(),
            json!({"action": "accept", "content": {"note": "x".repeat(10_000)}}),
        );
        true
    };
    let tight = Quota::per_principal(100).with_bytes(5_000, usize::MAX);
    assert_eq!(
        backend.update("z", &grow, &tight).await,
        Err(TaskStoreError::PrincipalBytes(5_000)),
        "a change that grows a record past its principal's bytes"
    );
    let kept = backend.get("z").await.expect("read").expect("there");
    assert!(kept.answers.is_empty(), "a refused change was written");
    let roomy = Quota::per_principal(100).with_bytes(20_000, usize::MAX);
    backend
        .update("z", &grow, &roomy)
        .await
        .expect("within the bound");
    let z2 = record("z2", "zed", far);
    let grown = backend.get("z").await.expect("read").expect("there");
    let size = |record: &TaskRecord| serde_json::to_vec(record).map_or(0, |json| json.len());
    let between = size(&grown) + size(&z2) - 1;
    assert_eq!(
        backend
            .insert(
                &z2,
                &Quota::per_principal(100).with_bytes(between, usize::MAX)
            )
            .await,
        Err(TaskStoreError::PrincipalBytes(between)),
        "a grown record counts against the next insert"
    );
    let shrink = |record: &mut TaskRecord| {
        record.answers.clear();
        true
    };
    backend
        .update("z", &shrink, &tight)
        .await
        .expect("a smaller record is written");
    backend
        .insert(
            &z2,
            &Quota::per_principal(100).with_bytes(11_000, usize::MAX),
        )
        .await
        .expect("room again");
}

async fn expired_records_are_gone(store: &TaskStore) {
    let backend = store.backend();
    let mut brief = record("brief", "yann", 1);
    brief.created_ms = now_ms().saturating_sub(59_700);
    backend
        .insert(&brief, &Quota::per_principal(100))
        .await
        .expect("inserted");
    assert!(backend.get("brief").await.expect("read").is_some());
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        backend.get("brief").await.expect("read"),
        None,
        "an expired record is read"
    );
    assert!(
        !backend
            .orphans(now_ms())
            .await
            .expect("listed")
            .contains(&"brief".to_owned()),
        "an expired record is an orphan"
    );
    let touch = |record: &mut TaskRecord| {
        record.takeovers += 1;
        true
    };
    assert_eq!(
        backend
            .update("brief", &touch, &Quota::per_principal(100))
            .await,
        Ok(None),
        "an expired record is updated"
    );
    backend
        .insert(
            &record("again", "yann", now_ms() + 60_000),
            &Quota::per_principal(1),
        )
        .await
        .expect("an expired record still counts against its principal");
}

/// Runs every check of the single-use contract against `store`, which must be empty:
///
/// - a token is redeemed once; of many concurrent redeems of one token exactly one wins;
/// - a chain's floor refuses its lower tokens, only rises, and touches no other chain;
/// - a floor whose time is over refuses nothing;
/// - for a store that records outcomes: a claim is first once, then running, then its
///   recorded outcome (whatever its chain's floor says since); concurrent claims of one
///   token make one first; a token redeemed without an outcome, or retired, is spent.
pub async fn token_store_contract(store: impl TokenStore) {
    let store = Arc::new(store);
    let far = unix_now() + 600;
    let token = |chain: u8, seq: u32, salt: u8| {
        let mut nonce = [salt; 24];
        nonce[..8].copy_from_slice(&[chain; 8]);
        nonce[8..12].copy_from_slice(&seq.to_be_bytes());
        nonce
    };
    assert_eq!(store.redeem(&token(1, 0, 1), far).await, Ok(true));
    assert_eq!(
        store.redeem(&token(1, 0, 1), far).await,
        Ok(false),
        "a token redeemed twice"
    );
    let mut handles = Vec::new();
    for _ in 0..16 {
        let store = Arc::clone(&store);
        handles.push(tokio::spawn(async move {
            store.redeem(&token(2, 0, 2), far).await
        }));
    }
    let mut won = 0;
    for handle in handles {
        if handle.await.expect("joined") == Ok(true) {
            won += 1;
        }
    }
    assert_eq!(won, 1, "concurrent redeems of one token");

    let chain = [3u8; 8];
    assert_eq!(Link::of_nonce(&token(3, 5, 3)).chain, chain);
    store.retire(&chain, 3, far).await.expect("retired");
    assert_eq!(
        store.redeem(&token(3, 2, 3), far).await,
        Ok(false),
        "a token below its chain's floor"
    );
    assert_eq!(store.redeem(&token(3, 3, 3), far).await, Ok(true));
    store.retire(&chain, 1, far).await.expect("retired");
    assert_eq!(
        store.redeem(&token(3, 2, 4), far).await,
        Ok(false),
        "a floor went down"
    );
    assert_eq!(store.redeem(&token(3, 4, 3), far).await, Ok(true));
    assert_eq!(
        store.redeem(&token(4, 0, 4), far).await,
        Ok(true),
        "another chain"
    );
    // A floor kept until a time now past guards nothing.
    let past = unix_now().saturating_sub(10);
    store.retire(&[5u8; 8], 9, past).await.expect("retired");
    assert_eq!(
        store.redeem(&token(5, 1, 5), far).await,
        Ok(true),
        "a floor whose time is over"
    );
    if store.records_outcomes() {
        outcomes_contract(&store, far, token).await;
    }
}

/// The recorded outcomes of [`token_store_contract`], for a store that records them.
async fn outcomes_contract<S: TokenStore>(
    store: &Arc<S>,
    far: u64,
    token: impl Fn(u8, u32, u8) -> [u8; 24],
) {
    use crate::state::Claim;
    let lease = unix_now() + 60;
    let first = token(6, 0, 6);
    assert_eq!(store.claim(&first, far, lease).await, Ok(Claim::First));
    assert_eq!(
        store.claim(&first, far, lease + 9).await,
        Ok(Claim::Running { lease_until: lease }),
        "claimed again while its round runs"
    );
    assert_eq!(
        store.redeem(&first, far).await,
        Ok(false),
        "a claimed token is redeemed"
    );
    store
        .record(&first, b"sealed outcome", far)
        .await
        .expect("recorded");
    // The request that claimed it retires it as it hands out the next token: its outcome
    // is still read.
    store.retire(&[6u8; 8], 1, far).await.expect("retired");
    assert_eq!(
        store.claim(&first, far, lease).await,
        Ok(Claim::Recorded(b"sealed outcome".to_vec())),
        "a recorded outcome, whatever the chain's floor"
    );
    assert_eq!(
        store.claim(&token(6, 0, 7), far, lease).await,
        Ok(Claim::Spent),
        "a token below its chain's floor, never claimed"
    );
    let redeemed = token(7, 0, 7);
    assert_eq!(store.redeem(&redeemed, far).await, Ok(true));
    assert_eq!(
        store.claim(&redeemed, far, lease).await,
        Ok(Claim::Spent),
        "a token redeemed without recording"
    );
    let unkept = token(8, 0, 8);
    assert_eq!(store.claim(&unkept, far, lease).await, Ok(Claim::First));
    store.record(&unkept, b"", far).await.expect("recorded");
    assert_eq!(
        store.claim(&unkept, far, lease).await,
        Ok(Claim::Spent),
        "an outcome not kept"
    );
    let mut handles = Vec::new();
    for _ in 0..16 {
        let store = Arc::clone(store);
        let contested = token(9, 0, 9);
        handles.push(tokio::spawn(async move {
            store.claim(&contested, far, lease).await
        }));
    }
    let mut first_claims = 0;
    for handle in handles {
        match handle.await.expect("joined") {
            Ok(Claim::First) => first_claims += 1,
            Ok(Claim::Running { lease_until }) => assert_eq!(lease_until, lease),
            other => panic!("a concurrent claim answered {other:?}"),
        }
    }
    assert_eq!(first_claims, 1, "concurrent claims of one token");
}

async fn concurrent_creates_count_against_each_other(store: &TaskStore) {
    let far = now_ms() + 60_000;
    let handles: Vec<_> = (0..24)
        .map(|n| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .backend()
                    .insert(
                        &record(&format!("crowd-{n}"), "zoe", far),
                        &Quota::per_principal(5),
                    )
                    .await
            })
        })
        .collect();
    let mut admitted = 0;
    for handle in handles {
        match handle.await.expect("joined") {
            Ok(()) => admitted += 1,
            Err(TaskStoreError::PrincipalQuota(5)) => {}
            Err(other) => panic!("a concurrent create failed: {other}"),
        }
    }
    assert_eq!(admitted, 5, "concurrent creates under a quota of 5");
    let mut held = 0;
    for n in 0..24 {
        if store
            .backend()
            .get(&format!("crowd-{n}"))
            .await
            .expect("read")
            .is_some()
        {
            held += 1;
        }
    }
    assert_eq!(held, 5, "exactly the admitted creates are stored");
}

/// A state of `len` bytes for `owner`, expiring at `expires_ms`.
fn kept(key: &str, owner: &str, shared: bool, len: usize, expires_ms: u64) -> KeptEntry {
    KeptEntry {
        key: key.to_owned(),
        owner: owner.to_owned(),
        shared,
        expires_ms,
        token: key.chars().cycle().take(len).collect(),
    }
}

/// Runs every check of the saga-state part of the contract
/// ([`TaskBackend::keep_state`](crate::tasks::TaskBackend::keep_state)) against `store`,
/// which must hold no state:
///
/// - a kept state reads back byte for byte; a missing key reads `None`;
/// - a key already kept is refused, and what it holds is unchanged;
/// - the byte bounds hold: an owner's, the unverified callers' share, the store's, each
///   refused with its own error, and one owner's bound does not limit another's;
/// - an expired state is not read, and no longer counts;
/// - keeps made at once count against each other: of 16 concurrent keeps under a bound of
///   5, exactly 5 are admitted.
pub async fn state_store_contract(store: TaskStore) {
    let backend = store.backend();
    let far = now_ms() + 600_000;
    let len = 1000;
    let unbounded = Quota::per_principal(usize::MAX);

    // Kept and read back; missing.
    let first = kept("0123456789abcdef0123456789abcdef", "alice", false, len, far);
    backend.keep_state(&first, &unbounded).await.expect("kept");
    assert_eq!(
        backend
            .read_state(&first.key)
            .await
            .expect("read")
            .as_deref(),
        Some(first.token.as_str()),
        "a kept state reads back as it was kept"
    );
    assert_eq!(
        backend
            .read_state("ffffffffffffffffffffffffffffffff")
            .await
            .expect("read"),
        None,
        "a missing key reads None"
    );

    // A key taken stays as it was.
    let again = kept(&first.key, "mallory", false, 10, far);
    assert!(
        backend.keep_state(&again, &unbounded).await.is_err(),
        "a key already kept is refused"
    );
    assert_eq!(
        backend
            .read_state(&first.key)
            .await
            .expect("read")
            .as_deref(),
        Some(first.token.as_str()),
        "a refused keep leaves the state under its key as it was"
    );

    // An owner's bound: three of `len` for "bob", a fourth refused; "carol" unaffected.
    let per_owner = Quota::per_principal(usize::MAX).with_bytes(3 * len, usize::MAX);
    for n in 0..3 {
        let state = kept(&format!("b{n:031}"), "bob", false, len, far);
        backend
            .keep_state(&state, &per_owner)
            .await
            .expect("within bob's bound");
    }
    let over = kept(&format!("b{:031}", 3), "bob", false, len, far);
    assert!(
        matches!(
            backend.keep_state(&over, &per_owner).await,
            Err(TaskStoreError::PrincipalBytes(_))
        ),
        "an owner's fourth state past its bound is refused as its own"
    );
    assert_eq!(backend.read_state(&over.key).await.expect("read"), None);
    let carol = kept(&format!("c{:031}", 0), "carol", false, len, far);
    backend
        .keep_state(&carol, &per_owner)
        .await
        .expect("another owner's bound is its own");

    // The share of unverified callers: two pools fill it, a third pool is refused.
    let shared = Quota::per_principal(usize::MAX).with_share(Share {
        tasks: usize::MAX,
        bytes: 2 * len,
    });
    for n in 0..2 {
        let state = kept(
            &format!("s{n:031}"),
            &format!("unverified:10.0.0.{n}"),
            true,
            len,
            far,
        );
        backend
            .keep_state(&state, &shared)
            .await
            .expect("within the share");
    }
    let third = kept(
        &format!("s{:031}", 2),
        "unverified:10.0.0.2",
        true,
        len,
        far,
    );
    assert!(
        matches!(
            backend.keep_state(&third, &shared).await,
            Err(TaskStoreError::SharedQuota)
        ),
        "the unverified callers' share holds whatever pools they come from"
    );

    // The store's bound: 1 + 3 + 1 + 2 states of `len` are held.
    let whole = Quota::per_principal(usize::MAX).with_bytes(usize::MAX, 8 * len);
    let eighth = kept(&format!("d{:031}", 0), "dave", false, len, far);
    backend
        .keep_state(&eighth, &whole)
        .await
        .expect("the eighth fits");
    let ninth = kept(&format!("d{:031}", 1), "dave", false, len, far);
    assert!(
        matches!(
            backend.keep_state(&ninth, &whole).await,
            Err(TaskStoreError::Full)
        ),
        "the store's bound holds"
    );

    // Expiry: not read, and no longer counted.
    let soon = now_ms() + 1_000;
    let brief = kept(&format!("e{:031}", 0), "erin", false, len, soon);
    let erin = Quota::per_principal(usize::MAX).with_bytes(len, usize::MAX);
    backend.keep_state(&brief, &erin).await.expect("kept");
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    assert_eq!(
        backend.read_state(&brief.key).await.expect("read"),
        None,
        "an expired state is not read"
    );
    let next = kept(&format!("e{:031}", 1), "erin", false, len, far);
    backend
        .keep_state(&next, &erin)
        .await
        .expect("an expired state no longer counts against its owner");

    // Concurrent keeps count against each other.
    let five = Quota::per_principal(usize::MAX).with_bytes(5 * len, usize::MAX);
    let states: Vec<_> = (0..16)
        .map(|n| kept(&format!("f{n:031}"), "frank", false, len, far))
        .collect();
    let kept_at_once =
        futures::future::join_all(states.iter().map(|state| backend.keep_state(state, &five)))
            .await;
    assert_eq!(
        kept_at_once
            .iter()
            .filter(|outcome| outcome.is_ok())
            .count(),
        5,
        "keeps made at once count against each other: {kept_at_once:?}"
    );
}
