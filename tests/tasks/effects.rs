//! Effects through a `kill -9`: the migrate example's `charge` task pays at a payment
//! service of this test (which keeps each `Idempotency-Key`'s receipt, as Stripe does)
//! inside an `effect`, and its only server is killed, then started again on the same
//! SQLite file, which takes the task over.
//!
//! - Killed after the effect's checkpoint: the charge is not sent again, and the service
//!   saw its key once.
//! - Killed inside the effect, after the service saw the key: the effect runs again, with
//!   the same key, and the service charges once.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use saga_examples::harness::journal::Journal;
use saga_examples::harness::process::ServerProcess;
use saga_examples::harness::tasks::TaskClient;
use serde_json::{Value, json};

const KEY_HEX: &str = "c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4";

/// What the payment service saw: each key's receipt and how many requests brought it, and
/// how many charges it made.
#[derive(Debug, Default)]
struct Payments {
    keys: HashMap<String, (String, usize)>,
    charges: usize,
}

/// A payment service: a request with a key it has seen gets that key's receipt again; one
/// with a new key is a new charge.
async fn payment_service() -> (SocketAddr, Arc<Mutex<Payments>>) {
    let payments = Arc::new(Mutex::new(Payments::default()));
    let seen = Arc::clone(&payments);
    let app = axum::Router::new().route(
        "/pay",
        axum::routing::post(move |headers: axum::http::HeaderMap| {
            let payments = Arc::clone(&seen);
            async move {
                let key = headers
                    .get("idempotency-key")
                    .and_then(|key| key.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                let mut payments = payments.lock().expect("not poisoned");
                let charges = payments.charges;
                let (receipt, count) = payments
                    .keys
                    .entry(key)
                    .or_insert_with(|| (format!("receipt-{}", charges + 1), 0));
                *count += 1;
                let receipt = receipt.clone();
                if *count == 1 {
                    payments.charges += 1;
                }
                receipt
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port is free");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (addr, payments)
}

/// Charges once, kills the only server where `inside` says, starts it again on the same
/// file; the task's end, the journal and what the service saw.
async fn charge_through_a_kill(name: &str, inside: bool) -> (Value, String, Payments) {
    charge_through_a_stop(name, inside, false).await
}

/// [`charge_through_a_kill`], the server stopped with SIGTERM instead of `-9` when `term`
/// (as Docker, Kubernetes and systemd stop it): it exits cleanly within its grace, and the
/// task goes on on the next server.
async fn charge_through_a_stop(name: &str, inside: bool, term: bool) -> (Value, String, Payments) {
    let (service, payments) = payment_service().await;
    let journal = Journal::new(name);
    let dir = std::env::temp_dir().join(format!("saga-{name}-store-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let store = format!("sqlite:{}", dir.join("tasks.db").display());
    let server = || -> ServerProcess {
        journal
            .migrate(KEY_HEX)
            .env("SAGA_TASKS", &store)
            .env("MIGRATE_PAYMENTS_URL", &format!("http://{service}/pay"))
            .start()
    };
    let mut first = server();
    let client = TaskClient::new();
    let customer = format!("{name}-ann");
    let id = client
        .create(
            first.addr,
            "charge",
            json!({"customer": customer, "cents": 1200, "hold_ms": 3000, "inside": inside}),
        )
        .await;

    // Killed where the journal shows the task is held.
    let held_at = if inside {
        format!("charge of {customer} sent")
    } else {
        format!("charge of {customer} recorded")
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !journal.text().contains(&held_at) {
        assert!(Instant::now() < deadline, "never held: {}", journal.text());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if term {
        first.terminate();
        let status = first.wait_exit("SIGTERM", Duration::from_secs(40));
        assert!(status.success(), "stopped cleanly: {status:?}");
    } else {
        first.kill_9();
    }

    // Started again on the same file: it sees the killed worker is gone and takes the task
    // over. The round cut off runs again, holding again where it held.
    let second = server();
    let task = client
        .settled(second.addr, &id, Duration::from_secs(90))
        .await;
    let _ = std::fs::remove_dir_all(&dir);
    let payments = std::mem::take(&mut *payments.lock().expect("not poisoned"));
    (task, journal.text(), payments)
}

fn count(journal: &str, line: &str) -> usize {
    journal
        .lines()
        .filter(|seen| seen.starts_with(line))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_effect_past_its_checkpoint_is_not_run_again_after_a_kill() {
    let (task, journal, payments) = charge_through_a_kill("effect-after", false).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(
        task["result"]["content"][0]["text"], "charged: receipt-1",
        "{task}"
    );
    let customer = "effect-after-ann";
    assert_eq!(
        count(&journal, &format!("charge of {customer} sent")),
        1,
        "the effect ran once: {journal}"
    );
    assert_eq!(count(&journal, &format!("charge of {customer} done")), 1);
    assert_eq!(payments.charges, 1, "{payments:?}");
    assert_eq!(payments.keys.len(), 1, "{payments:?}");
    let (key, (_, seen)) = payments.keys.iter().next().expect("a key");
    assert_eq!(*seen, 1, "the service saw the key once: {payments:?}");
    assert!(key.starts_with("saga-"), "{key}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_effect_cut_off_runs_again_with_its_key_and_the_service_charges_once() {
    let (task, journal, payments) = charge_through_a_kill("effect-inside", true).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(
        task["result"]["content"][0]["text"], "charged: receipt-1",
        "{task}"
    );
    let customer = "effect-inside-ann";
    let sent: Vec<&str> = journal
        .lines()
        .filter(|line| line.starts_with(&format!("charge of {customer} sent")))
        .collect();
    assert_eq!(
        sent.len(),
        2,
        "the effect ran again after the kill: {journal}"
    );
    assert_eq!(sent[0], sent[1], "with the same key");
    assert_eq!(
        count(&journal, &format!("charge of {customer} recorded")),
        1
    );
    assert_eq!(
        payments.charges, 1,
        "the service charged once: {payments:?}"
    );
    assert_eq!(payments.keys.len(), 1, "{payments:?}");
    assert_eq!(payments.keys.values().next().map(|seen| seen.1), Some(2));
}

/// SIGTERM while the task's worker is inside the effect: the server stops within its
/// grace (exit 0), the task goes on on the next server, and the service charges once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_stopped_by_sigterm_goes_on_elsewhere_and_charges_once() {
    let (task, _journal, payments) = charge_through_a_stop("effect-term", true, true).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(
        task["result"]["content"][0]["text"], "charged: receipt-1",
        "{task}"
    );
    assert_eq!(payments.charges, 1, "{payments:?}");
    assert_eq!(payments.keys.len(), 1, "one key: {payments:?}");
}
