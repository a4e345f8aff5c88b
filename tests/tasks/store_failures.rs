//! What a caller learns when the task store fails (finding 4 of the third hardening
//! pass): the backend's words ("…/t.db: database or disk is full", a corrupted record's
//! parse error, "error connecting to server") reached any caller, owner or not. Now each
//! is told only that the store failed; the detail is in the server's log.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use saga_examples::harness::serving::serve_local;
use saga_examples::harness::tasks::TaskClient;
use saga_examples::migrate;
use saga_runtime::prelude::*;
use saga_runtime::tasks::{
    Change, Quota, STORE_FAILED, TaskBackend, TaskRecord, TaskStore, TaskStoreError,
};
use serde_json::json;

type Answer<'a, T> = Pin<Box<dyn Future<Output = Result<T, TaskStoreError>> + Send + 'a>>;

/// What a broken backend says: a path and its reason.
const BACKEND_WORDS: &str = "/srv/secret/path/t.db: database disk image is malformed";

/// The memory store, until `broken`: then every call fails with the backend's words.
#[derive(Debug)]
struct Breaks {
    inner: TaskStore,
    broken: std::sync::Arc<AtomicBool>,
}

impl Breaks {
    fn fail<'a, T: Send + 'a>(&self) -> Option<Answer<'a, T>> {
        self.broken.load(Ordering::SeqCst).then(|| {
            let failed: Answer<'a, T> =
                Box::pin(async { Err(TaskStoreError::Unavailable(BACKEND_WORDS.to_owned())) });
            failed
        })
    }
}

impl TaskBackend for Breaks {
    fn insert<'a>(&'a self, record: &'a TaskRecord, quota: &'a Quota) -> Answer<'a, ()> {
        self.fail()
            .unwrap_or_else(|| self.inner.backend().insert(record, quota))
    }
    fn get<'a>(&'a self, id: &'a str) -> Answer<'a, Option<TaskRecord>> {
        self.fail().unwrap_or_else(|| self.inner.backend().get(id))
    }
    fn update<'a>(
        &'a self,
        id: &'a str,
        change: Change<'a>,
        quota: &'a Quota,
    ) -> Answer<'a, Option<TaskRecord>> {
        self.fail()
            .unwrap_or_else(|| self.inner.backend().update(id, change, quota))
    }
    fn orphans(&self, now_ms: u64) -> Answer<'_, Vec<String>> {
        self.fail()
            .unwrap_or_else(|| self.inner.backend().orphans(now_ms))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_store_tells_no_caller_its_words() {
    let broken = std::sync::Arc::new(AtomicBool::new(false));
    let store = TaskStore::custom(Breaks {
        inner: TaskStore::memory(),
        broken: broken.clone(),
    });
    let server = migrate::server(KeyRing::ephemeral(), store, Duration::from_secs(5))
        .expect("the server builds");
    let running = serve_local(server).await;
    let owner = TaskClient::new().authorization("Bearer owner");
    let id = owner
        .create(
            running.addr,
            "migrate",
            json!({"tables": 50, "millis_per_table": 200, "label": "x"}),
        )
        .await;
    broken.store(true, Ordering::SeqCst);
    let stranger = TaskClient::new().authorization("Bearer stranger");
    for (who, method, params) in [
        (&owner, "tasks/get", json!({"taskId": id})),
        (&stranger, "tasks/get", json!({"taskId": id})),
        (&owner, "tasks/cancel", json!({"taskId": id})),
        (
            &owner,
            "tools/call",
            json!({"name": "migrate", "arguments": {"tables": 1, "millis_per_table": 1, "label": "y"}}),
        ),
    ] {
        let reply = who.request(running.addr, method, params).await;
        assert_eq!(reply["error"]["code"], -32603, "{method}: {reply}");
        assert_eq!(reply["error"]["message"], STORE_FAILED, "{method}: {reply}");
        assert!(!reply.to_string().contains("secret"), "{method}: {reply}");
    }
}
