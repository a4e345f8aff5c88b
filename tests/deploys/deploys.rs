//! Deploys of changed code, over HTTP, against real server processes of two builds that
//! share a key: `upgrade_v1` and `upgrade_v2` (examples/upgrade_v*). Each tool of build 2
//! is changed one way from build 1. A token is resumed wherever its suspension point saves
//! the same layout, on the code of the build that resumes it, in both directions; it is
//! refused with `-32602`, never decoded, wherever the layout or the version differs,
//! unless a retired copy of the old code finishes it. Tasks follow the same rules through
//! a Redis store across a deploy of three replicas.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use saga_examples::harness::http::{Call, client};
use saga_examples::harness::process::{ServerProcess, Spawn, example_binary};
use saga_examples::harness::{redis, tasks};
use serde_json::{Value, json};

const KEY: &str = "d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7d7";
const REFUSED: &str = "Invalid or expired requestState";

fn build(version: u8) -> ServerProcess {
    Spawn::new(&format!("upgrade_v{version}"), KEY).start()
}

/// A build whose refusals are logged (at WARN) to a captured stderr.
fn logged_build(version: u8) -> ServerProcess {
    Spawn::new(&format!("upgrade_v{version}"), KEY)
        .log("saga_runtime=warn")
        .capture_stderr()
        .start()
}

/// What one `tools/call` answered.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    /// `input_required`: the keys asked with their messages, and the token.
    Asks(Vec<(String, String)>, String),
    /// A complete result's text.
    Done(String),
    /// A JSON-RPC error: its code and message.
    Error(i64, String),
}

impl Outcome {
    #[track_caller]
    fn token(&self) -> String {
        match self {
            Outcome::Asks(_, token) => token.clone(),
            other => panic!("expected a round that asks, got {other:?}"),
        }
    }

    #[track_caller]
    fn asked(&self) -> Vec<(String, String)> {
        match self {
            Outcome::Asks(asked, _) => asked.clone(),
            other => panic!("expected a round that asks, got {other:?}"),
        }
    }

    #[track_caller]
    fn done(&self) -> String {
        match self {
            Outcome::Done(text) => text.clone(),
            other => panic!("expected a result, got {other:?}"),
        }
    }

    #[track_caller]
    fn refused(&self) {
        assert_eq!(
            self,
            &Outcome::Error(-32602, REFUSED.to_owned()),
            "expected the fixed refusal of a token"
        );
    }
}

#[derive(Clone)]
struct Client {
    http: reqwest::Client,
}

impl Client {
    fn new() -> Self {
        Self { http: client() }
    }

    /// One `tools/call` (MRTR) of `tool` with `arguments`, resuming `token` with `answers`.
    async fn call(
        &self,
        addr: SocketAddr,
        tool: &str,
        arguments: &Value,
        token: Option<&str>,
        answers: Value,
    ) -> Outcome {
        let mut call = Call::new(tool, arguments.clone()).capabilities(json!({"elicitation": {}}));
        if let Some(token) = token {
            call = call.state(token).answers(answers);
        }
        let (_, body) = call.send_with(&self.http, addr).await;
        if let Some(error) = body.get("error") {
            return Outcome::Error(
                error["code"].as_i64().unwrap_or_default(),
                error["message"].as_str().unwrap_or_default().to_owned(),
            );
        }
        let result = &body["result"];
        match result["resultType"].as_str() {
            Some("input_required") => {
                let asked = result["inputRequests"]
                    .as_object()
                    .map(|requests| {
                        requests
                            .iter()
                            .map(|(key, request)| {
                                let message = request["params"]["message"]
                                    .as_str()
                                    .unwrap_or_default()
                                    .to_owned();
                                (key.clone(), message)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let token = result["requestState"]
                    .as_str()
                    .expect("a requestState")
                    .to_owned();
                Outcome::Asks(asked, token)
            }
            _ => Outcome::Done(
                result["content"][0]["text"]
                    .as_str()
                    .unwrap_or_else(|| panic!("a text result: {body}"))
                    .to_owned(),
            ),
        }
    }
}

/// The answer accepting `value` for the one-field form keyed `key`.
fn accept(key: &str, value: impl Into<Value>) -> Value {
    json!({key: {"action": "accept", "content": {"value": value.into()}}})
}

fn no_arguments() -> Value {
    json!({})
}

// ---------------------------------------------------------------------------------------
// Edits that keep the layout: calls go on, in both directions
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn harmless_edits_keep_in_flight_calls_in_both_directions() {
    let (v1, v2) = (build(1), build(2));
    let client = Client::new();
    let none = no_arguments();

    // A result's text changed: finished by whichever build resumes it, on its own code.
    let token = client
        .call(v1.addr, "greet", &none, None, json!({}))
        .await
        .token();
    let on_v2 = client
        .call(v2.addr, "greet", &none, Some(&token), accept("name", "Ada"))
        .await;
    assert_eq!(on_v2.done(), "Hi Ada!");
    let token = client
        .call(v2.addr, "greet", &none, None, json!({}))
        .await
        .token();
    let on_v1 = client
        .call(v1.addr, "greet", &none, Some(&token), accept("name", "Ada"))
        .await;
    assert_eq!(
        on_v1.done(),
        "Hello, Ada.",
        "a rollback resumes build 2's tokens"
    );

    // A later message changed: the call in flight at the first question goes on, and the
    // second question is build 2's.
    let first = client.call(v1.addr, "survey", &none, None, json!({})).await;
    let second = client
        .call(
            v2.addr,
            "survey",
            &none,
            Some(&first.token()),
            accept("first", "x"),
        )
        .await;
    assert_eq!(
        second.asked(),
        [("second".to_owned(), "Second answer, please?".to_owned())]
    );
    let done = client
        .call(
            v1.addr,
            "survey",
            &none,
            Some(&second.token()),
            accept("second", "y"),
        )
        .await;
    assert_eq!(
        done.done(),
        "x then y",
        "build 1 finishes what build 2 asked"
    );

    // A question asked by build 1 and asked again (no answer came) by build 2 is asked as
    // build 2 words it.
    let at_second = client
        .call(
            v1.addr,
            "survey",
            &none,
            Some(&first.token()),
            accept("first", "x"),
        )
        .await;
    assert_eq!(at_second.asked()[0].1, "Second answer?");
    let again = client
        .call(
            v2.addr,
            "survey",
            &none,
            Some(&at_second.token()),
            json!({}),
        )
        .await;
    assert_eq!(
        again.asked(),
        [("second".to_owned(), "Second answer, please?".to_owned())]
    );
    let done = client
        .call(
            v2.addr,
            "survey",
            &none,
            Some(&again.token()),
            accept("second", "y"),
        )
        .await;
    assert_eq!(done.done(), "x, then y");

    // A suspension added after the one in flight: the call goes on and is asked it too.
    let token = client
        .call(v1.addr, "grow", &none, None, json!({}))
        .await
        .token();
    let grown = client
        .call(v2.addr, "grow", &none, Some(&token), accept("a", "1"))
        .await;
    assert_eq!(grown.asked(), [("b".to_owned(), "B?".to_owned())]);
    let done = client
        .call(
            v2.addr,
            "grow",
            &none,
            Some(&grown.token()),
            accept("b", "2"),
        )
        .await;
    assert_eq!(done.done(), "a=1 b=2");
}

// ---------------------------------------------------------------------------------------
// Edits that change the layout or the meaning: refused before decoding
// ---------------------------------------------------------------------------------------

/// A struct kept as MessagePack (`skip_serializing_if`), changed between the builds:
/// its layout is its name, and its fields are read by name. A field with a default is
/// filled in, an unknown one is ignored, and a new required field makes the old state
/// unreadable: that call ends with an error, never with a made-up value.
#[tokio::test]
async fn a_json_shaped_struct_changed_between_builds_is_read_by_name_or_not_at_all() {
    let (v1, v2) = (build(1), build(2));
    let client = Client::new();
    let id = json!({"id": 5});
    let ok = || json!({"ok": {"action": "accept", "content": {"value": true}}});

    // Started on one build, answered on the other: its result, and the text of a tool error.
    let across = |tool: &'static str, from: SocketAddr, to: SocketAddr| {
        let (client, id) = (client.clone(), id.clone());
        async move {
            let token = client.call(from, tool, &id, None, json!({})).await.token();
            client.call(to, tool, &id, Some(&token), ok()).await.done()
        }
    };
    let parsed = |text: String| serde_json::from_str::<Value>(&text).expect("JSON");

    // Build 2 added `priority` with a default: build 1's call reads it so.
    assert_eq!(
        parsed(across("ticket", v1.addr, v2.addr).await),
        json!({"ok": true, "ticket": {"id": 5, "priority": "normal"}})
    );
    // A rollback: build 1 ignores the field it does not know.
    assert_eq!(
        parsed(across("ticket", v2.addr, v1.addr).await),
        json!({"ok": true, "ticket": {"id": 5}})
    );

    // Build 2 added a required `owner`: build 1's state has none, and the call ends with
    // the tool error that says its state could not be read.
    assert_eq!(
        across("assignment", v1.addr, v2.addr).await,
        "the saga's state could not be read"
    );
}

#[tokio::test]
async fn layout_and_version_changes_are_refused_before_decoding() {
    let v1 = build(1);
    let mut v2 = logged_build(2);
    let client = Client::new();
    let cases = [
        (
            "transfer",
            json!({"from": "alice", "to": "bob"}),
            "ok",
            json!(true),
        ),
        ("count", json!({"start": 41}), "more", json!(true)),
        ("cleanup", json!({"path": "/tmp/x"}), "confirm", json!(true)),
        ("subscribe", json!({"pro": true}), "ok", json!(true)),
        ("meaning", json!({}), "yes", json!(true)),
    ];
    for (tool, arguments, key, value) in &cases {
        let token = client
            .call(v1.addr, tool, arguments, None, json!({}))
            .await
            .token();
        let resumed = client
            .call(
                v2.addr,
                tool,
                arguments,
                Some(&token),
                accept(key, value.clone()),
            )
            .await;
        resumed.refused();
        // Build 1 still finishes it: the token was refused, not spent or misread.
        let done = client
            .call(
                v1.addr,
                tool,
                arguments,
                Some(&token),
                accept(key, value.clone()),
            )
            .await;
        assert!(matches!(done, Outcome::Done(_)), "{tool}: {done:?}");
    }
    // The swapped transfer was never read as "500 from bob to alice" by build 2: it was
    // refused above. Build 1 read its own token right:
    let token = client
        .call(v1.addr, "transfer", &cases[0].1, None, json!({}))
        .await
        .token();
    let done = client
        .call(
            v1.addr,
            "transfer",
            &cases[0].1,
            Some(&token),
            accept("ok", true),
        )
        .await;
    assert_eq!(done.done(), "500 from alice to bob");

    // The log says why, in words an operator can act on.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = v2.stderr();
        let layouts = log.matches("saved another layout than this build").count();
        let versions = log.matches("is of version 0, this build's is 2").count();
        if layouts >= 4 && versions >= 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the refusals' reasons are logged: {layouts} layouts, {versions} versions:\n{log}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    v2.assert_alive();
}

#[tokio::test]
async fn an_unknown_point_is_refused_as_such() {
    // Build 2 has a point (`grow` at `b`) that build 1 does not.
    let v1 = logged_build(1);
    let v2 = build(2);
    let client = Client::new();
    let none = no_arguments();
    let token = client
        .call(v2.addr, "grow", &none, None, json!({}))
        .await
        .token();
    let at_b = client
        .call(v2.addr, "grow", &none, Some(&token), accept("a", "1"))
        .await
        .token();
    client
        .call(v1.addr, "grow", &none, Some(&at_b), accept("b", "2"))
        .await
        .refused();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !v1
        .stderr()
        .contains("a suspension point this build does not have")
    {
        assert!(Instant::now() < deadline, "logged: {}", v1.stderr());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

// ---------------------------------------------------------------------------------------
// Retired copies finish what the build before started
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn retired_copies_finish_the_calls_of_the_build_before() {
    let (v1, v2) = (build(1), build(2));
    let client = Client::new();
    let cases = [
        (
            "transfer_kept",
            json!({"from": "alice", "to": "bob"}),
            "ok",
            "500 from alice to bob",
            "500 from alice to bob (build 2)",
        ),
        (
            "count_kept",
            json!({"start": 41}),
            "more",
            "counted 42, more: true",
            "counted 42 (build 2), more: true",
        ),
        (
            "cleanup_kept",
            json!({"path": "/tmp/x"}),
            "confirm",
            "/tmp/x: removed",
            "/tmp/x: removed (build 2)",
        ),
        (
            "subscribe_kept",
            json!({"pro": false}),
            "ok",
            "Basic: true",
            "Enterprise: true (build 2)",
        ),
    ];
    for (tool, arguments, key, by_v1, by_v2) in &cases {
        // Started on build 1, finished on build 2 by the retired copy: build 1's code.
        let token = client
            .call(v1.addr, tool, arguments, None, json!({}))
            .await
            .token();
        let done = client
            .call(v2.addr, tool, arguments, Some(&token), accept(key, true))
            .await;
        assert_eq!(done.done(), *by_v1, "{tool}");
        // Started on build 2: the current code.
        let token = client
            .call(v2.addr, tool, arguments, None, json!({}))
            .await
            .token();
        let done = client
            .call(v2.addr, tool, arguments, Some(&token), accept(key, true))
            .await;
        assert_eq!(done.done(), *by_v2, "{tool}");
        // Build 1 cannot read build 2's new layout: refused, never misread.
        let token = client
            .call(v2.addr, tool, arguments, None, json!({}))
            .await
            .token();
        client
            .call(v1.addr, tool, arguments, Some(&token), accept(key, true))
            .await
            .refused();
    }
    // The retired copies are never listed and never start a call.
    let listed = tasks::TaskClient::new()
        .request(v2.addr, "tools/list", json!({}))
        .await;
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a tool list: {listed}"))
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(
        names
            .iter()
            .filter(|name| **name == "transfer_kept")
            .count(),
        1,
        "{names:?}"
    );
    // A call with no token never starts on a retired copy: a fresh call of a kept tool
    // is build 2's, as shown above.
}

// ---------------------------------------------------------------------------------------
// A rolling upgrade of three replicas
// ---------------------------------------------------------------------------------------

/// One saga of the rolling upgrade: which tool, its arguments, its token, its round.
struct InFlight {
    tool: &'static str,
    arguments: Value,
    token: String,
    round: usize,
    label: String,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_upgrade_of_three_replicas_keeps_300_sagas() {
    const SAGAS: usize = 300;
    let client = Client::new();
    let mut replicas = [build(1), build(1), build(1)];
    let mut builds = [1u8, 1, 1];

    // Every saga starts on build 1, on every replica in turn.
    let mut sagas: Vec<InFlight> = Vec::new();
    for index in 0..SAGAS {
        let (tool, arguments) = if index % 2 == 0 {
            ("survey", json!({}))
        } else {
            (
                "transfer_kept",
                json!({"from": format!("a{index}"), "to": format!("b{index}")}),
            )
        };
        let token = client
            .call(replicas[index % 3].addr, tool, &arguments, None, json!({}))
            .await
            .token();
        sagas.push(InFlight {
            tool,
            arguments,
            token,
            round: 1,
            label: format!("s{index}"),
        });
    }

    // Each replica in turn is replaced by build 2; between replacements every saga takes
    // one more round on some replica, whichever build it runs.
    let mut finished: Vec<(String, String)> = Vec::new();
    let mut turn = 0usize;
    for upgraded in 0..3 {
        replicas[upgraded] = build(2);
        builds[upgraded] = 2;
        let mut still = Vec::new();
        for mut saga in sagas {
            turn += 1;
            let on = turn % 3;
            let answers = match (saga.tool, saga.round) {
                ("survey", 1) => accept("first", saga.label.clone()),
                ("survey", _) => accept("second", "end"),
                (_, _) => accept("ok", true),
            };
            let outcome = client
                .call(
                    replicas[on].addr,
                    saga.tool,
                    &saga.arguments,
                    Some(&saga.token),
                    answers,
                )
                .await;
            match outcome {
                Outcome::Asks(_, token) => {
                    saga.token = token;
                    saga.round += 1;
                    still.push(saga);
                }
                Outcome::Done(text) => {
                    let expected = match saga.tool {
                        "survey" if builds[on] == 1 => format!("{} then end", saga.label),
                        "survey" => format!("{}, then end", saga.label),
                        // Started on build 1: finished by build 1's code everywhere.
                        _ => format!(
                            "500 from {} to {}",
                            saga.arguments["from"].as_str().unwrap_or_default(),
                            saga.arguments["to"].as_str().unwrap_or_default()
                        ),
                    };
                    assert_eq!(text, expected, "{} on build {}", saga.label, builds[on]);
                    finished.push((saga.label, text));
                }
                Outcome::Error(code, message) => {
                    panic!(
                        "{} was refused on build {}: {code} {message}",
                        saga.label, builds[on]
                    )
                }
            }
        }
        sagas = still;
    }
    assert!(sagas.is_empty(), "{} sagas did not finish", sagas.len());
    assert_eq!(finished.len(), SAGAS, "all 300 complete");
    for replica in &mut replicas {
        replica.assert_alive();
    }
}

// ---------------------------------------------------------------------------------------
// Tasks across a deploy of three replicas, with Redis
// ---------------------------------------------------------------------------------------

/// A replica of build `version` keeping its tasks in `redis`, with a lease of 600 ms.
fn task_replica(redis: &redis::Redis, version: u8) -> ServerProcess {
    Spawn::new(&format!("upgrade_v{version}"), KEY)
        .env("SAGA_TASKS_REDIS", &redis.url)
        .env("SAGA_TASK_LEASE_MS", "600")
        .start()
}

/// Task `id`'s `tasks/get` result once it has ended (`completed` or `failed`).
async fn ended(client: &tasks::TaskClient, addr: SocketAddr, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let status = client.status(addr, id).await;
        if matches!(status["status"].as_str(), Some("completed" | "failed")) {
            return status;
        }
        assert!(Instant::now() < deadline, "{id} never ended: {status}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_continue_across_a_deploy_of_three_replicas_or_fail_with_the_reason() {
    let redis = redis::start_redis().await;
    let replica = |version: u8| task_replica(&redis, version);
    let client = tasks::TaskClient::new();
    let mut old = [replica(1), replica(1), replica(1)];
    let mut tasks: Vec<(String, &str)> = Vec::new();
    for index in 0..12 {
        let tool = if index % 3 == 2 { "job_changed" } else { "job" };
        let id = client
            .create(
                old[index % 3].addr,
                tool,
                json!({"steps": 30, "millis": 100}),
            )
            .await;
        tasks.push((id, tool));
    }
    // Mid-run, every replica of build 1 dies at once (kill -9: no goodbye), and build 2
    // comes up in their place.
    tokio::time::sleep(Duration::from_millis(800)).await;
    for replica in &mut old {
        replica.kill_9();
    }
    let new = [replica(2), replica(2), replica(2)];

    for (id, tool) in &tasks {
        let status = ended(&client, new[0].addr, id).await;
        if *tool == "job" {
            assert_eq!(
                status["result"]["content"][0]["text"].as_str(),
                Some("job of 30 steps done by build 2"),
                "{id}: finished by the new build: {status}"
            );
        } else {
            assert_eq!(status["status"], "failed", "{id}: {status}");
            let message = status["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("no build of tool job_changed")
                    && message.contains("another layout"),
                "{id}: failed with the reason: {status}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// The check before deploying: each build carries its layout file
// ---------------------------------------------------------------------------------------

fn check_layout(version: u8, file: &str) -> (bool, String) {
    let output = std::process::Command::new(example_binary(&format!("upgrade_v{version}")))
        .env("SAGA_TASKS", "memory")
        .args(["--check-layout", file])
        .env("SAGA_KEYS", KEY)
        .env_remove("SAGA_LAYOUT")
        .output()
        .expect("the example runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn each_build_matches_its_layout_file_and_build_2_names_what_it_strands() {
    let root = env!("CARGO_MANIFEST_DIR");
    let file = |version: u8| format!("{root}/examples/upgrade_v{version}/saga.layout");
    for version in [1, 2] {
        let (ok, stderr) = check_layout(version, &file(version));
        assert!(ok, "build {version} against its own file: {stderr}");
    }
    let (ok, stderr) = check_layout(2, &file(1));
    assert!(!ok, "build 2 strands calls of build 1");
    for stranded in [
        "tool `transfer`, point `AfterElicitOk`",
        "tool `count`, point `AfterElicitMore`",
        "tool `cleanup`, point `AfterConfirmOk`",
        "tool `subscribe`, point `AfterElicitOk`",
        "tool `job_changed`, point `AfterCheckpoint`",
    ] {
        assert!(stderr.contains(stranded), "names {stranded}: {stderr}");
    }
    assert!(stderr.contains("`from: str` became `to: str`"), "{stderr}");
    assert!(
        stderr.contains("`counted: u32` became `counted: u64`"),
        "{stderr}"
    );
    for kept in [
        "`greet`",
        "`survey`",
        "`grow`",
        "`transfer_kept`",
        "`count_kept`",
        "`cleanup_kept`",
        "`subscribe_kept`",
        "`meaning`",
        "`job`,",
    ] {
        assert!(!stderr.contains(kept), "{kept} keeps its calls: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn during_a_rolling_upgrade_a_task_an_old_replica_cannot_resume_waits_for_a_new_one() {
    let redis = redis::start_redis().await;
    let replica = |version: u8| task_replica(&redis, version);
    let client = tasks::TaskClient::new();
    // Build 2's `job_changed` saves what build 1 cannot read. Its creator dies; a replica
    // of each build remains, and the old one must leave the task to the new one.
    let mut creator = replica(2);
    let old = replica(1);
    let new = replica(2);
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(
            client
                .create(
                    creator.addr,
                    "job_changed",
                    json!({"steps": 20, "millis": 100}),
                )
                .await,
        );
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    creator.kill_9();
    for id in &ids {
        let status = ended(&client, old.addr, id).await;
        assert_eq!(
            status["result"]["content"][0]["text"].as_str(),
            Some("job of 20 steps done by build 2"),
            "{id}: finished by build 2, never failed by build 1: {status}"
        );
    }
    drop(new);
}
