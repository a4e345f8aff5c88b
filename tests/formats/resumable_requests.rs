#![allow(deprecated)] // sampling is deprecated in MCP 2026-07-28, still served

//! Seed 002 (SEP-975, `reference/seeds/002_*.txt`): transport-agnostic resumable requests,
//! played as the seed's own sequence diagram over raw Streamable HTTP sessions.
//!
//! A client that declares `resumableRequests` gets `notifications/requests/resumePolicy`
//! (with the original request's id, a `resumeToken` and `maxWait`) on the call's stream
//! before each round's requests; it disconnects, asks `requests/getStatus`, and sends
//! `requests/resume` with the original id to another replica, which re-sends the pending
//! request and completes the original call. Bad tokens and foreign ids are `-32602`.
//! The fault test kills a server process with SIGKILL in the middle of a checkpointing
//! call and resumes it on a fresh process.

use std::time::Duration;

use saga_examples::deploy;
use saga_examples::harness::journal::Journal;
use saga_examples::harness::process::Spawn;
use saga_examples::harness::serving::serve_local;
use saga_examples::harness::session::{SESSION_VERSION, Session};
use saga_runtime::prelude::*;
use serde_json::{Value, json};

const KEY_HEX: &str = "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4";

fn replica() -> SagaServer {
    deploy::server(KeyRing::parse(KEY_HEX).expect("a key")).expect("a server")
}

fn resumable_capabilities() -> Value {
    json!({"elicitation": {}, "sampling": {}, "resumableRequests": {}})
}

fn call(id: i64) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "complex_tool", "arguments": {"initial_arg": "x"}}
    })
}

#[tokio::test]
async fn the_proposals_flow_resumes_a_disconnected_call_on_another_replica() {
    let first = serve_local(replica()).await;
    let second = serve_local(replica()).await;

    // Client->>Server: tools/call {id: 123}; Server-->>Client: resumePolicy, then the
    // round's request, on the call's own stream.
    let session = Session::open(&first.url(), resumable_capabilities()).await;
    let mut stream = session.request(call(123)).await;
    let (policy, elicitation) = stream.next_after_policy().await;
    let policy = policy.expect("a resume policy before the round's request");
    assert_eq!(policy["requestId"], 123, "{policy}");
    assert!(
        policy["maxWait"].as_u64().is_some_and(|wait| wait > 0),
        "{policy}"
    );
    let token = policy["resumeToken"].as_str().expect("a token").to_owned();
    assert_eq!(elicitation["method"], "elicitation/create", "{elicitation}");

    // Server--x Client: disconnection. The client drops the stream unanswered.
    drop(stream);
    drop(session);

    // Client->>Server: requests/getStatus, on another replica, in a new session.
    let session = Session::open(&second.url(), resumable_capabilities()).await;
    let status = session
        .request(json!({
            "jsonrpc": "2.0", "id": 900, "method": "requests/getStatus",
            "params": {"requestId": 123, "resumeToken": token}
        }))
        .await
        .next()
        .await
        .expect("a status");
    assert_eq!(status["id"], 900);
    assert_eq!(status["result"]["status"], "processing", "{status}");
    assert_eq!(status["result"]["hasInputRequest"], true, "{status}");

    // Client->>Server: requests/resume with the same id as the original request. The
    // pending request comes again, word for word, then the call goes on.
    let mut stream = session
        .request(json!({
            "jsonrpc": "2.0", "id": 123, "method": "requests/resume",
            "params": {"resumeToken": token}
        }))
        .await;
    let (_, again) = stream.next_after_policy().await;
    assert_eq!(again["method"], "elicitation/create", "{again}");
    assert_eq!(
        again["params"], elicitation["params"],
        "re-sent word for word"
    );
    session
        .answer(
            &again,
            json!({"action": "accept", "content": {"target": "production"}}),
        )
        .await;
    let (policy, sampling) = stream.next_after_policy().await;
    let policy = policy.expect("a fresh policy at the next suspension");
    assert_eq!(policy["requestId"], 123);
    assert_ne!(policy["resumeToken"], token, "a fresh token per suspension");
    assert_eq!(sampling["method"], "sampling/createMessage", "{sampling}");
    session
        .answer(
            &sampling,
            json!({"role": "assistant", "content": {"type": "text", "text": "Yes, go."},
                   "model": "test"}),
        )
        .await;
    let (_, done) = stream.next_after_policy().await;
    assert_eq!(done["id"], 123, "the original request completes: {done}");
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Deployment to production initiated successfully based on confirmation.",
        "{done}"
    );
}

#[tokio::test]
async fn bad_tokens_and_foreign_ids_are_invalid_params() {
    let server = serve_local(replica()).await;
    let session = Session::open(&server.url(), resumable_capabilities()).await;
    let mut stream = session.request(call(7)).await;
    let (policy, _) = stream.next_after_policy().await;
    let token = policy.expect("a policy")["resumeToken"]
        .as_str()
        .expect("a token")
        .to_owned();
    drop(stream);
    // The client resumes from a new session: in the first, request 7 is still in flight
    // (waiting for its answer), and a request under its id would be refused as such.
    let session = Session::open(&server.url(), resumable_capabilities()).await;

    let mut tampered = token.clone().into_bytes();
    let last = tampered.len() - 1;
    tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).expect("ascii");
    let refusals = [
        json!({"jsonrpc": "2.0", "id": 7, "method": "requests/resume",
               "params": {"resumeToken": "not-a-token"}}),
        json!({"jsonrpc": "2.0", "id": 7, "method": "requests/resume",
               "params": {"resumeToken": tampered}}),
        // The right token under another id.
        json!({"jsonrpc": "2.0", "id": 8, "method": "requests/resume",
               "params": {"resumeToken": token}}),
        json!({"jsonrpc": "2.0", "id": 9, "method": "requests/getStatus",
               "params": {"requestId": 8, "resumeToken": token}}),
        // A saga state is not a resume token.
        json!({"jsonrpc": "2.0", "id": 7, "method": "requests/resume",
               "params": {}}),
    ];
    for refusal in refusals {
        let answer = session.ask(refusal.clone()).await;
        assert_eq!(answer["error"]["code"], -32602, "{refusal} → {answer}");
    }

    // Another principal cannot use the token.
    let other = SagaServer::builder()
        .keys(KeyRing::parse(KEY_HEX).expect("a key"))
        .tool(deploy::complex_tool)
        .principal(|_| "mallory".to_owned())
        .build()
        .expect("a server");
    let other = serve_local(other).await;
    let session = Session::open(&other.url(), resumable_capabilities()).await;
    let answer = session
        .request(
            json!({"jsonrpc": "2.0", "id": 7, "method": "requests/resume",
                        "params": {"resumeToken": token}}),
        )
        .await
        .next()
        .await
        .expect("an answer");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
}

#[tokio::test]
async fn a_client_that_does_not_declare_the_capability_gets_no_policy() {
    let server = serve_local(replica()).await;
    let session = Session::open(&server.url(), json!({"elicitation": {}, "sampling": {}})).await;
    let mut stream = session.request(call(1)).await;
    let (policy, elicitation) = stream.next_after_policy().await;
    assert!(policy.is_none(), "{policy:?}");
    assert_eq!(elicitation["method"], "elicitation/create");
}

/// `kill -9` in the middle of a call that checkpoints after each table; a fresh process
/// with the same key resumes from the last token, the call completes, and only the work
/// since the last checkpoint the client saw is done again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_killed_mid_checkpoints_completes_on_a_fresh_process() {
    let journal = Journal::new("seed002");
    let tables = 8u32;

    let mut first = journal.migrate(KEY_HEX).start();
    let url = format!("http://{}/mcp", first.addr);
    let session = Session::open(&url, json!({"resumableRequests": {}})).await;
    let mut stream = session
        .request(json!({
            "jsonrpc": "2.0", "id": "migration-1", "method": "tools/call",
            "params": {"name": "migrate", "arguments": {"tables": tables, "millis_per_table": 150}}
        }))
        .await;
    // Read policies until three tables have passed (the first checkpoint comes before
    // any table), then kill the process.
    let token = stream.policies(4, "migration-1").await;
    first.kill_9();
    drop(stream);
    let done_before = journal.tables_done_at_least("migration", 3);

    let second = journal.migrate(KEY_HEX).start();
    let url = format!("http://{}/mcp", second.addr);
    let session = Session::open(&url, json!({"resumableRequests": {}})).await;
    let mut stream = session
        .request(json!({
            "jsonrpc": "2.0", "id": "migration-1", "method": "requests/resume",
            "params": {"resumeToken": token}
        }))
        .await;
    let (_, done) = stream.next_after_policy().await;
    assert_eq!(done["id"], "migration-1", "{done}");
    let text = done["result"]["content"][0]["text"]
        .as_str()
        .expect("a text result");
    assert_eq!(text, "migrated 8 tables: [0, 1, 2, 3, 4, 5, 6, 7]");

    // Every table was done; only those after the last checkpoint the client saw (at most
    // the one in flight when the process died, plus any finished after the token it kept)
    // ran again.
    let kept = 3; // the token of the third checkpoint: tables 0, 1 and 2 are in it
    journal.assert_resumed("migration", tables, kept, done_before);
}

/// The same flow over stdio, where every message shares one stream: a top-level
/// `resumableRequests` declaration, the policy before the round's request, and a resume on
/// a fresh process after the first is killed.
#[tokio::test]
async fn over_stdio_a_fresh_process_resumes_the_call() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    struct Stdio {
        child: tokio::process::Child,
        stdin: tokio::process::ChildStdin,
        stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    }
    impl Stdio {
        fn start() -> Stdio {
            let mut child = tokio::process::Command::new(
                saga_examples::harness::process::example_binary("deploy"),
            )
            .arg("--stdio")
            .env("SAGA_KEYS", KEY_HEX)
            .env("RUST_LOG", "error")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the example starts");
            let stdin = child.stdin.take().expect("stdin");
            let stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
            Stdio {
                child,
                stdin,
                stdout,
            }
        }
        async fn send(&mut self, message: Value) {
            let line = format!("{message}\n");
            self.stdin.write_all(line.as_bytes()).await.expect("sent");
        }
        async fn next(&mut self) -> Value {
            let line = tokio::time::timeout(Duration::from_secs(30), self.stdout.next_line())
                .await
                .expect("a message within 30 s")
                .expect("readable")
                .expect("the server is still there");
            serde_json::from_str(&line).expect("a JSON line")
        }
        async fn open(&mut self) {
            self.send(json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": SESSION_VERSION,
                           "capabilities": resumable_capabilities(),
                           "clientInfo": {"name": "seed-002-test", "version": "0"}}
            }))
            .await;
            assert_eq!(self.next().await["id"], 0);
            self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await;
        }
    }

    let mut first = Stdio::start();
    first.open().await;
    first.send(call(5)).await;
    let policy = first.next().await;
    assert_eq!(
        policy["method"], "notifications/requests/resumePolicy",
        "{policy}"
    );
    assert_eq!(policy["params"]["requestId"], 5);
    let token = policy["params"]["resumeToken"].clone();
    let elicitation = first.next().await;
    assert_eq!(elicitation["method"], "elicitation/create", "{elicitation}");
    first.child.kill().await.expect("killed");

    let mut second = Stdio::start();
    second.open().await;
    second
        .send(
            json!({"jsonrpc": "2.0", "id": 5, "method": "requests/resume",
                     "params": {"resumeToken": token}}),
        )
        .await;
    let mut answered = 0;
    loop {
        let message = second.next().await;
        match message["method"].as_str() {
            Some("notifications/requests/resumePolicy") => {}
            Some("elicitation/create") => {
                assert_eq!(message["params"], elicitation["params"]);
                answered += 1;
                second
                    .send(json!({"jsonrpc": "2.0", "id": message["id"], "result":
                                 {"action": "accept", "content": {"target": "production"}}}))
                    .await;
            }
            Some("sampling/createMessage") => {
                answered += 1;
                second
                    .send(json!({"jsonrpc": "2.0", "id": message["id"], "result":
                                 {"role": "assistant", "model": "test",
                                  "content": {"type": "text", "text": "Yes."}}}))
                    .await;
            }
            _ => {
                assert_eq!(message["id"], 5, "{message}");
                assert_eq!(
                    message["result"]["content"][0]["text"],
                    "Deployment to production initiated successfully based on confirmation.",
                    "{message}"
                );
                break;
            }
        }
    }
    assert_eq!(answered, 2);
}

/// A `requests/resume` of a token whose call is still running would run the call's work
/// twice: it is refused while that call runs. Under the running call's own id, in its
/// session, it is refused before rmcp sees it (JSON-RPC ids are unique among a session's
/// requests in flight), so that the original call still delivers its result.
#[tokio::test]
async fn a_resume_of_a_call_still_running_is_refused() {
    let server = Spawn::new("migrate", KEY_HEX).start();
    let url = format!("http://{}/mcp", server.addr);
    let session = Session::open(&url, json!({"resumableRequests": {}})).await;
    let mut stream = session
        .request(json!({
            "jsonrpc": "2.0", "id": "running-1", "method": "tools/call",
            // Longer than two refusals, each after a duplicate waited 2 s for it to leave.
            "params": {"name": "migrate", "arguments": {"tables": 3, "millis_per_table": 2000}}
        }))
        .await;
    let policy = stream.next().await.expect("the call streams");
    assert_eq!(
        policy["method"], "notifications/requests/resumePolicy",
        "{policy}"
    );
    let token = policy["params"]["resumeToken"]
        .as_str()
        .expect("a token")
        .to_owned();
    let resume = |id: &str| {
        json!({
            "jsonrpc": "2.0", "id": id, "method": "requests/resume",
            "params": {"resumeToken": token}
        })
    };
    // Under the running call's id, twice: the id is in flight.
    for _ in 0..2 {
        let response = session.post(&resume("running-1")).await;
        assert_eq!(response.status(), 409);
        let refused: Value = response.json().await.expect("a JSON-RPC error");
        assert_eq!(refused["id"], "running-1", "{refused}");
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        assert!(
            refused["error"]["message"]
                .as_str()
                .is_some_and(|message| message.contains("same id is still in flight")),
            "{refused}"
        );
    }
    // In another session of the same client, under the same id: the token is being
    // worked from.
    let other = Session::open(&url, json!({"resumableRequests": {}})).await;
    let refused = other.ask(resume("running-1")).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("already being resumed")),
        "{refused}"
    );
    // The refusals took nothing from the original call: its stream still ends with its
    // result (before, a second `requests/resume` under its id took its place in the
    // session, and the final answer never came).
    let (_, done) = stream.next_after_policy().await;
    assert_eq!(done["id"], "running-1", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"], "migrated 3 tables: [0, 1, 2]",
        "{done}"
    );
}

/// An HTTP client that resends a request under the same id (its connection dropped while
/// the answer was written) is not refused for the first try still leaving: the retry waits
/// for it to be done, then runs. (`saga call --session` met this as a flaky `-32600`.)
#[tokio::test]
async fn a_retry_under_the_id_of_a_request_about_to_end_waits_for_it() {
    let server = Spawn::new("migrate", KEY_HEX).start();
    let url = format!("http://{}/mcp", server.addr);
    let session = Session::open(&url, json!({})).await;
    let call = json!({
        "jsonrpc": "2.0", "id": "retried-1", "method": "tools/call",
        "params": {"name": "migrate", "arguments": {"tables": 1, "millis_per_table": 400}}
    });
    let mut first = session.request(call.clone()).await;
    let started = std::time::Instant::now();
    let retry = session.post(&call).await;
    assert_eq!(retry.status(), 200, "the retry was refused");
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(200),
        "the retry ran beside the first try"
    );
    let mut retried = saga_examples::harness::session::Events::new(retry);
    let done = loop {
        let message = retried.next().await.expect("the retry's answer");
        if message["id"] == "retried-1" {
            break message;
        }
    };
    assert_eq!(
        done["result"]["content"][0]["text"], "migrated 1 tables: [0]",
        "{done}"
    );
    drop(first.next().await);
}
