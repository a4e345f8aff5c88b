//! OpenTelemetry end to end (feature `otel`): example servers export over OTLP to a real
//! receiver started here, whose bodies are decoded with OpenTelemetry's own protobuf
//! definitions, and the test reads what a trace backend would show.
//!
//! ```text
//! cargo build -p saga-workspace --features otel --examples
//! cargo test -p saga-workspace --features otel --test otel
//! ```
//!
//! The TypeScript client is the official SDK's, installed by `tests/clients/run.sh
//! --install-only` (into a cache outside the repository) the first time.

mod picture;
mod receiver;

use std::process::Command;
use std::time::Duration;

use saga_examples::harness::http::{Call, Post, accept_target, verdict};
use saga_examples::harness::openai::{Behaviour, FakeOpenAi};
use saga_examples::harness::process::{AnswersFile, ServerProcess, Spawn, saga_cli};
use saga_examples::harness::tasks::TaskClient;
use serde_json::{Value, json};

use receiver::{Receiver, Span};

const KEY_HEX: &str = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a";

/// OTLP's span kinds.
const INTERNAL: i32 = 1;
const SERVER: i32 = 2;
const CLIENT: i32 = 3;
/// OTLP's status code of an error.
const STATUS_ERROR: i32 = 2;

/// `example` exporting to `receiver` at once (a short batch delay), under `service`.
fn traced(example: &str, receiver: &Receiver, service: &str) -> Spawn {
    Spawn::new(example, KEY_HEX)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint())
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "300")
        .env("OTEL_SERVICE_NAME", service)
        .capture_stderr()
}

/// A client's trace: its trace id and its span's id, fresh for each test.
struct ClientSpan {
    trace_id: String,
    span_id: String,
}

impl ClientSpan {
    fn new(n: u8) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        let trace_id = format!(
            "{:016x}{:014x}{n:02x}",
            std::process::id(),
            nanos & ((1 << 56) - 1)
        );
        let span_id = format!("{:014x}{n:02x}", (nanos >> 8) & ((1 << 56) - 1) | 1);
        Self { trace_id, span_id }
    }

    /// Another span of the same trace (the client's next hop).
    fn hop(&self, span_id: &str) -> Self {
        Self {
            trace_id: self.trace_id.clone(),
            span_id: span_id.to_owned(),
        }
    }

    fn traceparent(&self) -> String {
        format!("00-{}-{}-01", self.trace_id, self.span_id)
    }
}

/// The MCP server spans of the deploy saga in `trace`, oldest first.
fn rounds_of<'a>(spans: &'a [Span], trace: &str) -> Vec<&'a Span> {
    let mut rounds: Vec<&Span> = spans
        .iter()
        .filter(|span| span.trace_id == trace && span.name == "tools/call complex_tool")
        .collect();
    rounds.sort_by_key(|span| span.start);
    rounds
}

/// Asserts what every MCP server span of the deploy saga carries.
fn assert_server_span(span: &Span, version: &str) {
    assert_eq!(span.kind, SERVER, "{span:#?}");
    assert_eq!(span.attr("mcp.method.name"), Some("tools/call"));
    assert_eq!(span.attr("gen_ai.tool.name"), Some("complex_tool"));
    assert_eq!(span.attr("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(span.attr("mcp.protocol.version"), Some(version));
    assert!(span.attr("jsonrpc.request.id").is_some(), "{span:#?}");
    assert_conventions(span);
}

/// Every attribute of a span of saga's: the conventions' types (`jsonrpc.request.id` and
/// `rpc.response.status_code` strings, counts ints), saga's own under `saga.`, and no
/// module path (`target`) or source location.
fn assert_conventions(span: &Span) {
    const TYPES: &[(&str, &str)] = &[
        ("jsonrpc.request.id", "string"),
        ("rpc.response.status_code", "string"),
        ("mcp.method.name", "string"),
        ("mcp.protocol.version", "string"),
        ("gen_ai.tool.name", "string"),
        ("error.type", "string"),
        ("saga.round", "int"),
        ("saga.token_in", "int"),
        ("saga.token_out", "int"),
        ("saga.micros", "int"),
        ("saga.outcome", "string"),
    ];
    for (key, kind) in TYPES {
        if let Some(found) = span.type_of(key) {
            assert_eq!(found, *kind, "{key} of {}: {span:#?}", span.name);
        }
    }
    for key in span.attributes.keys() {
        assert!(
            [
                "saga.", "mcp.", "gen_ai.", "jsonrpc.", "rpc.", "error.", "otel."
            ]
            .iter()
            .any(|prefix| key.starts_with(prefix)),
            "{key} of {} is neither the conventions' nor under `saga.`",
            span.name
        );
    }
}

/// The round's `saga.transition` child: one per request.
fn transition<'a>(spans: &'a [Span], round: &Span) -> &'a Span {
    let children: Vec<&Span> = spans
        .iter()
        .filter(|span| span.parent_span_id == round.span_id && span.name == "saga.transition")
        .collect();
    assert_eq!(
        children.len(),
        1,
        "one transition under {round:#?}: {children:#?}"
    );
    children[0]
}

/// A message of `call` with `traceparent` (if any) in its `_meta`.
fn with_traceparent(call: &Call, traceparent: Option<&str>) -> Value {
    let mut message = call.message();
    if let Some(traceparent) = traceparent {
        message["params"]["_meta"]["traceparent"] = json!(traceparent);
    }
    message
}

/// Sends `call` to `addr` with `traceparent` (if any) in its `_meta`; the status and body.
async fn send_traced(
    addr: std::net::SocketAddr,
    call: &Call,
    traceparent: Option<&str>,
) -> (axum::http::StatusCode, Value) {
    Post::mcp(addr)
        .rpc(&with_traceparent(call, traceparent))
        .send()
        .await
}

/// The token of an `input_required` answer.
fn token(body: &Value) -> String {
    body["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("input_required: {body}"))
        .to_owned()
}

/// A load balancer in front of `replicas`: each `tools/call` to `/mcp` goes to the next one
/// in turn, its body and headers as they came, and the answer back as it came.
async fn round_robin(replicas: Vec<std::net::SocketAddr>) -> std::net::SocketAddr {
    use axum::body::Bytes;
    use axum::http::{HeaderMap, StatusCode};
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let http = reqwest::Client::new();
    let forward = move |headers: HeaderMap, body: Bytes| {
        let (next, http, replicas) = (next.clone(), http.clone(), replicas.clone());
        async move {
            // The calls alternate; whatever else the client sends goes to the first.
            let is_call = serde_json::from_slice::<Value>(&body)
                .is_ok_and(|message| message["method"] == "tools/call");
            let n = match is_call {
                true => next.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                false => 0,
            };
            let to = replicas[n % replicas.len()];
            let mut request = http.post(format!("http://{to}/mcp")).body(body);
            for (name, value) in &headers {
                if name != "host" && name != "content-length" {
                    request = request.header(name, value);
                }
            }
            let answer = request.send().await.expect("the replica answers");
            let status = StatusCode::from_u16(answer.status().as_u16()).expect("a status");
            let mut back = HeaderMap::new();
            for (name, value) in answer.headers() {
                if name != "content-length" && name != "transfer-encoding" {
                    back.insert(name.clone(), value.clone());
                }
            }
            let body = answer.bytes().await.expect("the replica's body");
            (status, back, body)
        }
    };
    let app = axum::Router::new().route("/mcp", axum::routing::post(forward));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

/// The official TypeScript client drives the deploy saga over MRTR through a load balancer
/// that sends each request to the other of two replicas, its span's context in every
/// request's `_meta`: one trace, each round's MCP server span a child of the client's span,
/// each later round linked to the first, a transition under each, and the operation
/// histogram exported beside them.
/// The official TypeScript client's node and the directory of its drivers, installed by
/// `tests/clients/run.sh --install-only` when missing.
fn typescript_client() -> (String, String) {
    let installed = Command::new("bash")
        .args(["tests/clients/run.sh", "--install-only"])
        .output()
        .expect("bash runs");
    assert!(
        installed.status.success(),
        "tests/clients/run.sh --install-only: {}",
        String::from_utf8_lossy(&installed.stderr)
    );
    let paths = String::from_utf8_lossy(&installed.stdout).into_owned();
    let path = |key: &str| {
        paths
            .lines()
            .find_map(|line| line.strip_prefix(key))
            .unwrap_or_else(|| panic!("{key} in {paths}"))
            .to_owned()
    };
    (path("ts_node="), path("ts_dir="))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_clients_saga_is_one_trace() {
    let (node, dir) = typescript_client();
    let receiver = Receiver::start().await;
    let mut server = traced("deploy", &receiver, "replica-a").start();
    let other = traced("deploy", &receiver, "replica-b").start();
    // Every request to the next replica: no round is served where the one before it was.
    let balancer = round_robin(vec![server.addr, other.addr]).await;
    let client = ClientSpan::new(1);
    let driven = tokio::process::Command::new(&node)
        .arg(format!("{dir}/drive.mjs"))
        .args(["--http", &format!("http://{balancer}/mcp")])
        .args(["--tool", "deploy", "--era", "2026-07-28"])
        .args(["--traceparent", &client.traceparent()])
        .output()
        .await
        .expect("node runs");
    assert!(
        driven.status.success(),
        "drive.mjs: {}\n{}",
        String::from_utf8_lossy(&driven.stderr),
        server.stderr()
    );

    let spans = receiver
        .wait_for("three rounds and their transitions", |spans| {
            let rounds = rounds_of(spans, &client.trace_id);
            rounds.len() == 3
                && rounds.iter().all(|round| {
                    spans
                        .iter()
                        .any(|span| span.parent_span_id == round.span_id)
                })
        })
        .await;
    let rounds = rounds_of(&spans, &client.trace_id);
    for (n, round) in rounds.iter().enumerate() {
        assert_server_span(round, "2026-07-28");
        assert_eq!(
            round.parent_span_id, client.span_id,
            "round {n} is the client's child"
        );
        let transition = transition(&spans, round);
        assert_eq!(
            transition.attr("saga.round"),
            Some((n + 1).to_string().as_str())
        );
        assert_eq!(transition.type_of("saga.round"), Some("int"));
        assert_conventions(transition);
        assert_eq!(transition.kind, INTERNAL);
    }
    assert!(
        rounds[0].links.is_empty(),
        "the first round links to nothing"
    );
    for later in &rounds[1..] {
        assert_eq!(
            later.links,
            vec![(client.trace_id.clone(), rounds[0].span_id.clone())],
            "a later round links to the saga's first span"
        );
    }
    let services: Vec<_> = rounds.iter().map(|r| r.service.as_str()).collect();
    assert!(
        services.windows(2).all(|pair| pair[0] != pair[1]),
        "each round on the other replica: {services:?}"
    );
    let outcomes: Vec<_> = rounds.iter().map(|r| r.attr("saga.outcome")).collect();
    assert_eq!(
        outcomes,
        [
            Some("input_required"),
            Some("input_required"),
            Some("complete")
        ]
    );
    assert!(
        rounds
            .iter()
            .all(|round| round.attr("error.type").is_none())
    );

    // Stopped as Ctrl-C stops it: what it holds is flushed, the histogram with it.
    server.interrupt();
    drop(other);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !receiver
        .metric_names()
        .iter()
        .any(|name| name == "mcp.server.operation.duration")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no mcp.server.operation.duration among {:?}",
            receiver.metric_names()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A saga whose rounds land on a server that restarted between them and on a second
/// replica keeps one identity: each round is a child of the context its request brought
/// (`_meta`, else the `traceparent` header), and links to the saga's first span, which the
/// token carried; a round that brings no context starts a trace of its own, still linked.
/// Malformed contexts are ignored: the request is served as if it had none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rounds_on_a_restarted_server_and_another_replica_link_to_the_first() {
    let receiver = Receiver::start().await;
    let mut first = traced("deploy", &receiver, "replica-a").start();
    let other = traced("deploy", &receiver, "replica-b").start();
    let client = ClientSpan::new(2);

    // Round 1 on replica A, the context in `_meta`.
    let (status, body) =
        send_traced(first.addr, &Call::deploy(), Some(&client.traceparent())).await;
    assert!(status.is_success(), "{body}");
    let round1 = token(&body);
    // A restarts (Ctrl-C, then again): round 2 there, from another span of the client.
    first.interrupt();
    drop(first);
    let restarted = traced("deploy", &receiver, "replica-a").start();
    let second_hop = client.hop("00000000000000a2");
    let call = Call::deploy().resume(round1, accept_target("production"));
    let (status, body) = send_traced(restarted.addr, &call, Some(&second_hop.traceparent())).await;
    assert!(status.is_success(), "{body}");
    let round2 = token(&body);
    // Round 3 on replica B: a malformed `_meta` context, a well-formed header.
    let third_hop = client.hop("00000000000000a3");
    let call = Call::deploy().resume(round2, verdict("Yes, all systems are green."));
    let (status, body) = Post::mcp(other.addr)
        .rpc(&with_traceparent(&call, Some("00-not-a-trace-01")))
        .header("traceparent", &third_hop.traceparent())
        .send()
        .await;
    assert!(status.is_success(), "{body}");
    assert_eq!(body["result"]["isError"], json!(false), "{body}");

    let spans = receiver
        .wait_for("three rounds on three processes", |spans| {
            rounds_of(spans, &client.trace_id).len() == 3
        })
        .await;
    let rounds = rounds_of(&spans, &client.trace_id);
    let parents: Vec<_> = rounds.iter().map(|r| r.parent_span_id.as_str()).collect();
    assert_eq!(
        parents,
        [
            client.span_id.as_str(),
            second_hop.span_id.as_str(),
            third_hop.span_id.as_str()
        ]
    );
    let services: Vec<_> = rounds.iter().map(|r| r.service.as_str()).collect();
    assert_eq!(services, ["replica-a", "replica-a", "replica-b"]);
    // The guide's picture of a saga's trace is this one.
    let picture = picture::draw(
        &spans,
        &rounds,
        &[
            (&client.span_id, "client span 1 (its context in `_meta`)"),
            (
                &second_hop.span_id,
                "client span 2 (`_meta`; the server restarted)",
            ),
            (
                &third_hop.span_id,
                "client span 3 (the `traceparent` header; another replica)",
            ),
        ],
    );
    saga_snapshot::assert_snapshot(
        std::path::Path::new("docs/guide/src/observability-trace.txt"),
        "one saga's trace, as the guide shows it",
        &picture,
    );
    assert!(rounds[0].links.is_empty());
    for later in &rounds[1..] {
        assert_eq!(
            later.links,
            vec![(client.trace_id.clone(), rounds[0].span_id.clone())]
        );
    }

    // A saga whose later round brings no context at all (and one whose context is
    // malformed everywhere): its span starts a trace of its own, linked to the first.
    let lone = ClientSpan::new(3);
    let (_, body) = send_traced(other.addr, &Call::deploy(), Some(&lone.traceparent())).await;
    let call = Call::deploy().resume(token(&body), accept_target("production"));
    let (status, body) = Post::mcp(other.addr)
        .rpc(&with_traceparent(&call, Some(&"f".repeat(55))))
        .header(
            "traceparent",
            "00-00000000000000000000000000000000-0000000000000000-01",
        )
        .send()
        .await;
    assert!(status.is_success(), "{body}");
    token(&body);
    let spans = receiver
        .wait_for(
            "the lone saga's first round and a root linked to it",
            |spans| {
                let first = rounds_of(spans, &lone.trace_id);
                first.len() == 1
                    && spans.iter().any(|span| {
                        span.name == "tools/call complex_tool"
                            && span.links == vec![(lone.trace_id.clone(), first[0].span_id.clone())]
                    })
            },
        )
        .await;
    let first = rounds_of(&spans, &lone.trace_id)[0];
    assert_eq!(first.status, 0, "no error: {first:#?}");
    let linked = spans
        .iter()
        .find(|span| span.links == vec![(lone.trace_id.clone(), first.span_id.clone())])
        .expect("the linked round");
    assert_ne!(linked.trace_id, lone.trace_id, "a root of its own");
    assert_eq!(
        linked.parent_span_id, "",
        "no parent: the contexts were malformed"
    );
}

/// A task's worker steps are children of the request that created it, also after the
/// replica running it was killed (SIGKILL) and another took it over; the store's writes
/// are spans too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tasks_steps_are_children_of_its_creation_after_a_takeover() {
    let receiver = Receiver::start().await;
    let store = std::env::temp_dir().join(format!("saga-otel-tasks-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&store);
    let store_env = format!("sqlite:{}", store.display());
    let replica = |service: &str| {
        traced("migrate", &receiver, service)
            .env("SAGA_TASKS", &store_env)
            .env("SAGA_TASK_LEASE_MS", "1500")
            .start()
    };
    let mut creator = replica("replica-a");
    let survivor = replica("replica-b");
    let client = ClientSpan::new(4);
    let tasks = TaskClient::new().traceparent(&client.traceparent());
    let id = tasks
        .create(
            creator.addr,
            "migrate",
            json!({"tables": 4, "millis_per_table": 700, "label": "otel"}),
        )
        .await;
    // The creation's span, exported before the kill.
    let spans = receiver
        .wait_for("the task's creation", |spans| {
            spans
                .iter()
                .any(|span| span.trace_id == client.trace_id && span.name == "tools/call migrate")
        })
        .await;
    let creation = spans
        .iter()
        .find(|span| span.trace_id == client.trace_id && span.name == "tools/call migrate")
        .expect("the creation")
        .clone();
    assert_eq!(creation.parent_span_id, client.span_id);
    // Its round ran to the checkpoint where the task begins, and the request answered
    // with the task.
    assert_eq!(creation.attr("saga.outcome"), Some("task"));
    assert_eq!(creation.attr("saga.task.id"), Some(id.as_str()));
    assert!(
        spans.iter().any(|span| span.name == "saga.store insert"
            && span.parent_span_id == creation.span_id),
        "the record's insert is under the creation"
    );
    // Killed in a step after its first: one step of it was exported whole.
    receiver
        .wait_for("the creator's first step", |spans| {
            spans
                .iter()
                .any(|span| span.name == "task migrate" && span.service == "replica-a")
        })
        .await;
    creator.kill_9();

    let done = tasks
        .settled(survivor.addr, &id, Duration::from_secs(60))
        .await;
    assert_eq!(done["status"], "completed", "{done}");
    let spans = receiver
        .wait_for("the survivor's last step and the one it ended", |spans| {
            let survived = |outcome| {
                spans.iter().any(|span| {
                    span.name == "task migrate"
                        && span.service == "replica-b"
                        && span.attr("saga.outcome") == Some(outcome)
                })
            };
            survived("complete") && survived("cut_short")
        })
        .await;
    let steps: Vec<&Span> = spans
        .iter()
        .filter(|span| span.name == "task migrate")
        .collect();
    for step in &steps {
        assert_eq!(
            (step.trace_id.as_str(), step.parent_span_id.as_str()),
            (client.trace_id.as_str(), creation.span_id.as_str()),
            "a step under the creation: {step:#?}"
        );
        assert_eq!(step.attr("saga.task.id"), Some(id.as_str()));
        assert_eq!(step.kind, INTERNAL);
        assert_eq!(step.type_of("saga.outcome"), Some("string"), "{step:#?}");
    }
    // One span per step, not per worker run: the survivor's run went through checkpoints
    // (one per table) to the end, each its own span with its round under it.
    let survivor_steps: Vec<&&Span> = steps
        .iter()
        .filter(|step| {
            step.service == "replica-b" && step.attr("saga.outcome") != Some("cut_short")
        })
        .collect();
    assert!(
        survivor_steps.len() >= 2,
        "a span per step the survivor ran: {survivor_steps:#?}"
    );
    assert!(
        survivor_steps
            .iter()
            .any(|step| step.attr("saga.outcome") == Some("checkpoint")),
        "{survivor_steps:#?}"
    );
    assert_eq!(
        survivor_steps
            .iter()
            .filter(|step| step.attr("saga.outcome") == Some("complete"))
            .count(),
        1,
        "the last step completed the task: {survivor_steps:#?}"
    );
    for step in &survivor_steps {
        assert_eq!(
            spans
                .iter()
                .filter(|span| span.name == "saga.transition"
                    && span.parent_span_id == step.span_id)
                .count(),
            1,
            "one round under each step: {step:#?}"
        );
    }
    // The step the killed worker had begun never ended there: the survivor ends it, in
    // error, from the lost worker's last write to the takeover, with the reason.
    let cut: Vec<&&Span> = steps
        .iter()
        .filter(|step| step.attr("saga.outcome") == Some("cut_short"))
        .collect();
    assert_eq!(cut.len(), 1, "one step cut short: {steps:#?}");
    let cut = cut[0];
    assert_eq!(
        cut.service, "replica-b",
        "made by the worker that took over"
    );
    assert_eq!(cut.status, STATUS_ERROR);
    // SQLite tells a worker whose process is gone (the lock it held is free).
    assert_eq!(
        (
            cut.attr("saga.task.takeover.reason"),
            cut.attr("error.type")
        ),
        (Some("worker_gone"), Some("worker_lost")),
        "{cut:#?}"
    );
    assert_eq!(cut.attr("saga.task.takeovers"), Some("1"));
    assert_eq!(cut.type_of("saga.task.takeovers"), Some("int"));
    assert!(
        cut.events.iter().any(|(name, _)| name == "task taken over"),
        "{cut:#?}"
    );
    assert!(
        cut.start
            < survivor_steps
                .iter()
                .map(|step| step.start)
                .min()
                .unwrap_or(u64::MAX),
        "it began before the survivor's first step: {cut:#?}"
    );
    assert!(
        spans.iter().any(|span| span.name == "saga.store update"
            && span.trace_id == client.trace_id
            && span.attr("saga.task.id") == Some(id.as_str())),
        "the store's writes are spans of the task's trace"
    );
    // The takeover and the statuses are counted, as the conventions would name them.
    let metrics = receiver
        .wait_for_metrics("the takeover and the completion counted", |metrics| {
            metrics
                .iter()
                .any(|metric| metric.name == "saga.task.takeovers")
                && metrics
                    .iter()
                    .filter(|metric| metric.name == "saga.task.status.changes")
                    .flat_map(|metric| metric.points.iter())
                    .any(|point| {
                        point.iter().any(|(key, value, kind)| {
                            key == "saga.task.status" && value == "completed" && *kind == "string"
                        })
                    })
        })
        .await;
    assert!(
        metrics
            .iter()
            .filter(|metric| metric.name == "saga.task.takeovers")
            .all(|metric| metric.kind == "sum" && metric.unit == "{takeover}")
    );
    // The guide's picture of a task's trace is this one.
    saga_snapshot::assert_snapshot(
        std::path::Path::new("docs/guide/src/observability-task.txt"),
        "a task's trace across a takeover, as the guide shows it",
        &picture::draw_task(&spans, &creation, "client span (its context in `_meta`)"),
    );
    drop(survivor);
    let _ = std::fs::remove_file(&store);
}

/// The server's own model, answering the research agent's samples: GenAI client spans
/// under the round's MCP server span, with the model, the provider, the token usage and
/// the finish reason, and never the prompt, the answer or the key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_model_calls_are_genai_client_spans_without_the_prompt() {
    const KEY: &str = "sk-otel-secret-key-1234567890";
    let receiver = Receiver::start().await;
    let model = FakeOpenAi::start(KEY).await;
    model.behave(Behaviour::Research);
    let server: ServerProcess = traced("research", &receiver, "saga-research")
        .env("SAGA_MODEL_URL", &model.base_url)
        .env("SAGA_MODEL_KEY", KEY)
        .env("SAGA_MODEL", "gpt-test")
        .start();
    let client = ClientSpan::new(5);
    let question = "What is MRTR, secretly?";
    // No sampling declared: the server's model answers every sample.
    let call = Call::new("research", json!({"question": question}))
        .capabilities(json!({"elicitation": {}}));
    let (status, body) = send_traced(server.addr, &call, Some(&client.traceparent())).await;
    assert!(status.is_success(), "{body}");
    let asked = &body["result"]["inputRequests"];
    let key = asked
        .as_object()
        .and_then(|requests| requests.keys().next())
        .unwrap_or_else(|| panic!("the agent asks the person: {body}"))
        .clone();
    let answer = json!({key: {"action": "accept", "content": {"answer": "durability"}}});
    let (status, body) = send_traced(
        server.addr,
        &call.resume(token(&body), answer),
        Some(&client.traceparent()),
    )
    .await;
    assert!(status.is_success(), "{body}");
    assert!(
        body["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.starts_with("Answer: ")),
        "{body}"
    );

    let spans = receiver
        .wait_for("the model's spans", |spans| {
            spans
                .iter()
                .filter(|span| span.trace_id == client.trace_id && span.kind == CLIENT)
                .count()
                >= 2
        })
        .await;
    let server_spans: Vec<&Span> = spans
        .iter()
        .filter(|span| span.trace_id == client.trace_id && span.name == "tools/call research")
        .collect();
    let calls: Vec<&Span> = spans
        .iter()
        .filter(|span| span.trace_id == client.trace_id && span.name.starts_with("chat "))
        .collect();
    assert!(calls.len() >= 2, "{calls:#?}");
    // Each request ran several rounds (the model's answers passed within it): the first
    // request's span is the saga's first and links nowhere, the second links once.
    let mut requests = server_spans.clone();
    requests.sort_by_key(|span| span.start);
    let links: Vec<usize> = requests.iter().map(|span| span.links.len()).collect();
    assert_eq!(links, [0, 1], "{requests:#?}");
    for call in &calls {
        assert_eq!(call.name, "chat gpt-test");
        assert_eq!(call.kind, CLIENT);
        assert_eq!(call.attr("gen_ai.operation.name"), Some("chat"));
        assert_eq!(call.attr("gen_ai.provider.name"), Some("openai"));
        assert_eq!(call.attr("gen_ai.request.model"), Some("gpt-test"));
        assert!(call.attr("gen_ai.response.model").is_some(), "{call:#?}");
        assert_eq!(call.attr("gen_ai.usage.input_tokens"), Some("20"));
        assert_eq!(call.attr("gen_ai.usage.output_tokens"), Some("8"));
        assert!(call.attr("gen_ai.response.finish_reasons").is_some());
        // Within one of the saga's rounds (directly, or under its transition).
        let mut parent = spans
            .iter()
            .find(|span| span.span_id == call.parent_span_id)
            .expect("its parent arrived");
        if parent.name == "saga.transition" {
            parent = spans
                .iter()
                .find(|span| span.span_id == parent.parent_span_id)
                .expect("the transition's round arrived");
        }
        assert!(
            server_spans
                .iter()
                .any(|round| round.span_id == parent.span_id),
            "a round's model call: {call:#?} under {parent:#?}"
        );
    }
    for span in spans.iter().filter(|span| span.trace_id == client.trace_id) {
        for secret in [question, KEY, "Bearer", "durability"] {
            assert!(!span.carries(secret), "{span:#?} carries {secret:?}");
        }
    }
}

/// A refused round (a token that does not open) and a tool's own error result are errors
/// of their spans: `error.type` the JSON-RPC code or `tool_error`, status `ERROR`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_and_tool_errors_are_errors_of_their_spans() {
    let receiver = Receiver::start().await;
    let server = traced("deploy", &receiver, "saga-deploy").start();
    let client = ClientSpan::new(6);
    let forged = Call::deploy().resume("not-a-token", accept_target("production"));
    let (_, body) = send_traced(server.addr, &forged, Some(&client.traceparent())).await;
    let code = body["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("refused: {body}"));
    // The deploy saga declined at its form ends with the tool's own error result.
    let (_, body) = send_traced(server.addr, &Call::deploy(), Some(&client.traceparent())).await;
    let declined = Call::deploy().resume(token(&body), json!({"elicit-1": {"action": "decline"}}));
    let (_, body) = send_traced(server.addr, &declined, Some(&client.traceparent())).await;
    assert_eq!(body["result"]["isError"], json!(true), "{body}");
    // A malformed answer, its text a client's: refused, and in no span or event (the
    // server's log names it; the export does not).
    const SECRET: &str = "client-secret-in-an-answer-5f2e";
    let (_, body) = send_traced(server.addr, &Call::deploy(), Some(&client.traceparent())).await;
    let round2 = Call::deploy().resume(token(&body), accept_target("production"));
    let (_, body) = send_traced(server.addr, &round2, Some(&client.traceparent())).await;
    let malformed = Call::deploy().resume(
        token(&body),
        json!({"sample-2": {
            "role": SECRET,
            "content": {"type": "text", "text": "Yes."},
            "model": "m"
        }}),
    );
    let (_, body) = send_traced(server.addr, &malformed, Some(&client.traceparent())).await;
    assert_eq!(body["error"]["code"], json!(-32602), "{body}");
    // The refusal names it to the client who sent it (and the server's log does too).
    assert!(body.to_string().contains(SECRET), "{body}");
    let spans = receiver
        .wait_for("six rounds", |spans| {
            rounds_of(spans, &client.trace_id).len() == 6
        })
        .await;
    for span in &spans {
        assert!(
            !span.carries(SECRET),
            "{span:#?} carries the client's answer"
        );
    }
    let rounds = &rounds_of(&spans, &client.trace_id)[..3];
    let errors: Vec<_> = rounds
        .iter()
        .map(|round| (round.attr("error.type"), round.status))
        .collect();
    assert_eq!(
        errors,
        [
            (Some(code.to_string().as_str()), 2),
            (None, 0),
            (Some("tool_error"), 2)
        ]
    );
    assert_eq!(
        rounds[0].attr("rpc.response.status_code"),
        Some(code.to_string().as_str())
    );
    assert_eq!(
        rounds[0].type_of("rpc.response.status_code"),
        Some("string")
    );
    for round in rounds {
        assert_conventions(round);
    }
}

/// Requests rmcp answers itself (`tools/list`, an unknown tool named by 7 KB of text, an
/// unsupported protocol version, `server/discover`, an `initialize`) export none of rmcp's
/// spans or events (its `serve_inner`, "Service initialized as server" with the
/// parameters, "response error" quoting the tool's name): only saga's spans are exported,
/// and none carries the client's text (the fifth review, finding 3).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_dependencys_span_or_event_is_exported() {
    let receiver = Receiver::start().await;
    let server = traced("deploy", &receiver, "saga-no-rmcp").start();
    let client = ClientSpan::new(9);
    let traceparent = client.traceparent();
    let name = format!("unknown-{}", "n".repeat(7_000));
    let unknown = Call::new(&name, json!({}));
    let (_, body) = send_traced(server.addr, &unknown, Some(&traceparent)).await;
    assert!(
        body.get("error").is_some() || body["result"]["isError"] == true,
        "{body}"
    );
    let mut list = saga_examples::harness::http::request(json!(2), "tools/list", json!({}));
    list = saga_examples::harness::http::with_meta(list);
    list["params"]["_meta"]["traceparent"] = json!(traceparent);
    Post::mcp(server.addr).rpc(&list).send().await;
    let mut discover =
        saga_examples::harness::http::request(json!(3), "server/discover", json!({}));
    discover = saga_examples::harness::http::with_meta(discover);
    Post::mcp(server.addr).rpc(&discover).send().await;
    let mut old = Call::deploy().message();
    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1999-01-01-unheard");
    Post::mcp(server.addr).rpc(&old).send().await;
    let initialize = saga_examples::harness::http::request(
        json!(4),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "client-name-7c1d", "version": "1"}}),
    );
    Post::mcp(server.addr)
        .rpc(&initialize)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await;
    // A call of saga's own last: once its span is in, the ones before it are too.
    let (_, _) = send_traced(server.addr, &Call::deploy(), Some(&traceparent)).await;
    receiver
        .wait_for("the deploy call's span", |spans| {
            !rounds_of(spans, &client.trace_id).is_empty()
        })
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let spans = receiver.spans();
    for span in &spans {
        assert_ne!(span.name, "serve_inner", "{span:#?}");
        assert!(
            !span.carries("nnnnnnnnnn"),
            "{span:#?} quotes the tool's name"
        );
        assert!(
            !span.carries("client-name-7c1d"),
            "{span:#?} quotes initialize"
        );
        assert!(
            !span.carries("1999-01-01-unheard"),
            "{span:#?} quotes the version"
        );
        assert!(
            span.events
                .iter()
                .all(|(name, _)| !name.contains("Service initialized")
                    && !name.contains("response error")),
            "{span:#?} carries rmcp's events"
        );
    }
}

/// With `OTEL_TRACES_SAMPLER=parentbased_traceidratio` at 0, twenty calls whose client
/// asks for sampling (`traceparent …-01`) export no span: the client's flag does not
/// override the operator's ratio (the fifth review, finding 4). With
/// `SAGA_OTEL_TRUST_CLIENT_SAMPLED=true` it does, as the specification's samplers do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_sampled_flag_does_not_override_the_operators_ratio() {
    for trusted in [false, true] {
        let receiver = Receiver::start().await;
        let mut spawn = traced("deploy", &receiver, "saga-sampled")
            .env("OTEL_TRACES_SAMPLER", "parentbased_traceidratio")
            .env("OTEL_TRACES_SAMPLER_ARG", "0");
        if trusted {
            spawn = spawn.env("SAGA_OTEL_TRUST_CLIENT_SAMPLED", "true");
        }
        let server = spawn.start();
        let client = ClientSpan::new(10);
        for _ in 0..20 {
            let (_, body) =
                send_traced(server.addr, &Call::deploy(), Some(&client.traceparent())).await;
            assert!(body["result"]["requestState"].is_string(), "{body}");
        }
        // Metrics are exported whatever is sampled: once they are in, the spans of the
        // same batches would be too.
        receiver
            .wait_for_metric("mcp.server.operation.duration")
            .await;
        tokio::time::sleep(Duration::from_millis(700)).await;
        let calls = rounds_of(&receiver.spans(), &client.trace_id).len();
        if trusted {
            assert_eq!(
                calls, 20,
                "trusted: every call the client sampled is exported"
            );
        } else {
            assert_eq!(
                calls, 0,
                "a ratio of 0 exports nothing, whatever the client asks"
            );
        }
    }
}

/// SIGTERM (how Docker, Kubernetes and systemd stop a process) flushes what the exporter
/// holds: three calls' spans, batched for 5 s, arrive once the server stopped (before,
/// SIGTERM killed the process and none arrived).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_flushes_the_spans_it_holds() {
    let receiver = Receiver::start().await;
    let mut server = traced("deploy", &receiver, "saga-sigterm")
        .env("OTEL_BSP_SCHEDULE_DELAY", "5000")
        .start();
    let client = ClientSpan::new(11);
    for _ in 0..3 {
        let (_, body) =
            send_traced(server.addr, &Call::deploy(), Some(&client.traceparent())).await;
        assert!(body["result"]["requestState"].is_string(), "{body}");
    }
    server.terminate();
    let status = server.wait_exit("SIGTERM", Duration::from_secs(30));
    assert!(status.success(), "{status:?}");
    let spans = receiver
        .wait_for("the three calls' spans", |spans| {
            rounds_of(spans, &client.trace_id).len() == 3
        })
        .await;
    assert_eq!(rounds_of(&spans, &client.trace_id).len(), 3);
}

/// The exporter reads the variables OpenTelemetry names for OTLP/HTTP: a traces endpoint
/// used as it is (no `/v1/traces` added), and headers (`key=value`, percent-decoded) sent
/// with every export, the signal's own over the general ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_exporter_reads_the_endpoint_and_headers_variables() {
    let receiver = Receiver::start().await;
    let mut server = traced("deploy", &receiver, "saga-headers")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
        .env(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            &format!("{}/v1/traces", receiver.endpoint()),
        )
        .env("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=general")
        .env(
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
            "x-tenant=blue%20team, x-other=1",
        )
        .start();
    let client = ClientSpan::new(21);
    let (_, body) = send_traced(server.addr, &Call::deploy(), Some(&client.traceparent())).await;
    assert!(body["result"]["requestState"].is_string(), "{body}");
    receiver
        .wait_for("the call's span", |spans| {
            rounds_of(spans, &client.trace_id).len() == 1
        })
        .await;
    let tenants = receiver.tenants();
    assert!(!tenants.is_empty());
    assert!(
        tenants.iter().all(|t| t.as_deref() == Some("blue team")),
        "{tenants:?}"
    );
    server.terminate();
}

/// A 2025-11-25 session over stdio, the official TypeScript client sending its context in
/// `_meta`: the one request runs every round of the saga (the server asks during the
/// call), so the trace has one MCP server span, the client's child, with a transition per
/// round under it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_over_stdio_is_one_span_with_a_transition_per_round() {
    let (node, dir) = typescript_client();
    let receiver = Receiver::start().await;
    let client = ClientSpan::new(7);
    let binary = saga_examples::harness::process::example_binary("deploy");
    let driven = tokio::process::Command::new(&node)
        .arg(format!("{dir}/drive.mjs"))
        .arg("--stdio")
        .arg(&binary)
        .args(["--tool", "deploy", "--era", "2025-11-25"])
        .args(["--traceparent", &client.traceparent()])
        .env("SAGA_KEYS", KEY_HEX)
        .env("RUST_LOG", "error")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("OTEL_SERVICE_NAME", "saga-stdio")
        .output()
        .await
        .expect("node runs");
    assert!(
        driven.status.success(),
        "drive.mjs: {}",
        String::from_utf8_lossy(&driven.stderr)
    );
    let spans = receiver
        .wait_for("the session's call and its three transitions", |spans| {
            rounds_of(spans, &client.trace_id)
                .first()
                .is_some_and(|call| {
                    spans
                        .iter()
                        .filter(|span| span.parent_span_id == call.span_id)
                        .count()
                        >= 3
                })
        })
        .await;
    let calls = rounds_of(&spans, &client.trace_id);
    assert_eq!(calls.len(), 1, "{calls:#?}");
    let call = calls[0];
    assert_server_span(call, "2025-11-25");
    assert_eq!(call.parent_span_id, client.span_id);
    assert_eq!(call.service, "saga-stdio");
    assert_eq!(call.attr("saga.outcome"), Some("complete"));
    // Its later rounds ran in the span that is the saga's first: no link to itself.
    assert!(call.links.is_empty(), "{call:#?}");
    let mut transitions: Vec<&Span> = spans
        .iter()
        .filter(|span| span.parent_span_id == call.span_id && span.name == "saga.transition")
        .collect();
    transitions.sort_by_key(|span| span.start);
    let rounds: Vec<_> = transitions.iter().map(|t| t.attr("saga.round")).collect();
    assert_eq!(rounds, [Some("1"), Some("2"), Some("3")]);
}

/// `saga call` sends a trace context of its own and prints its trace id: the saga it drove
/// is that one trace on the server's side, every round a child of the CLI's span.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saga_call_prints_the_trace_its_saga_is() {
    let receiver = Receiver::start().await;
    let server = traced("deploy", &receiver, "saga-deploy").start();
    let answers = AnswersFile::new(
        "otel",
        r#"{"elicit-1": {"target": "production"}, "sample-2": "Yes, all systems are green."}"#,
    );
    let output = tokio::process::Command::new(saga_cli())
        .args(["call", "--answers"])
        .arg(answers.path())
        .arg(format!("http://{}/mcp", server.addr))
        .args(["complex_tool", "initial_arg=x"])
        .env("NO_COLOR", "1")
        .output()
        .await
        .expect("saga runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let trace_id = stdout
        .lines()
        .find_map(|line| line.strip_prefix("trace "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("a trace id: {stdout}"))
        .to_owned();
    assert_eq!(trace_id.len(), 32, "{stdout}");
    let spans = receiver
        .wait_for("the CLI's three rounds", |spans| {
            rounds_of(spans, &trace_id).len() == 3
        })
        .await;
    let rounds = rounds_of(&spans, &trace_id);
    let parent = &rounds[0].parent_span_id;
    assert_eq!(parent.len(), 16, "the CLI's span is the parent");
    assert!(rounds.iter().all(|round| &round.parent_span_id == parent));
    for later in &rounds[1..] {
        assert_eq!(
            later.links,
            vec![(trace_id.clone(), rounds[0].span_id.clone())]
        );
    }
}

/// Every request saga serves gets an MCP server span in the client's trace, named
/// `{mcp.method.name}` as the conventions name it, with their attribute types; an error's
/// span says its code (issue 97).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_method_gets_a_span_in_the_clients_trace() {
    use saga_examples::harness::http::{request, with_meta};
    let receiver = Receiver::start().await;
    let server = traced("conformance_server", &receiver, "saga-methods").start();
    let client = ClientSpan::new(11);
    let methods = [
        ("server/discover", json!({})),
        ("tools/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("tasks/get", json!({"taskId": "no-such-task"})),
        // Removed in 2026-07-28, refused by the handler, in its span.
        ("logging/setLevel", json!({"level": "info"})),
    ];
    // A task request the tasks extension's checks refuse (its client did not declare
    // the extension) never reaches its handler, and gets no span, on either path; nor
    // does a method rmcp refuses before the handler (`ping`, removed in 2026-07-28).
    // Sent first, in a trace of its own: once the others' spans are in, theirs would be
    // too.
    let refused_client = ClientSpan::new(12);
    for (method, params, status) in [
        ("tasks/get", json!({"taskId": "t-1"}), 400),
        ("ping", json!({}), 404),
    ] {
        let mut refused = with_meta(request(json!(99), method, params));
        refused["params"]["_meta"]["traceparent"] = json!(refused_client.traceparent());
        let (seen, body) = Post::mcp(server.addr).rpc(&refused).send().await;
        assert_eq!(seen, status, "{method}: {body}");
    }
    for (n, (method, params)) in methods.iter().enumerate() {
        let mut message = with_meta(request(json!(n + 1), method, params.clone()));
        message["params"]["_meta"]["traceparent"] = json!(client.traceparent());
        if method.starts_with("tasks/") {
            // A client of the tasks extension: one without it is refused before the method.
            message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
                ["io.modelcontextprotocol/tasks"] = json!({});
        }
        Post::mcp(server.addr).rpc(&message).send().await;
    }
    let spans = receiver
        .wait_for("a span for every method", |spans| {
            methods.iter().all(|(method, _)| {
                spans
                    .iter()
                    .any(|span| span.trace_id == client.trace_id && span.name == *method)
            })
        })
        .await;
    for (method, _) in &methods {
        let span = spans
            .iter()
            .find(|span| span.trace_id == client.trace_id && span.name == *method)
            .expect("found above");
        assert_eq!(span.kind, SERVER, "{span:#?}");
        assert_eq!(
            span.parent_span_id, client.span_id,
            "{method} is the client's child"
        );
        assert_eq!(span.attr("mcp.method.name"), Some(*method));
        assert_eq!(
            span.type_of("jsonrpc.request.id"),
            Some("string"),
            "{span:#?}"
        );
        assert_eq!(span.attr("mcp.protocol.version"), Some("2026-07-28"));
        assert_conventions(span);
    }
    assert!(
        !spans
            .iter()
            .any(|span| span.trace_id == refused_client.trace_id),
        "a refused task request or ping has no span: {spans:#?}"
    );
    let unknown = spans
        .iter()
        .find(|span| span.trace_id == client.trace_id && span.name == "tasks/get")
        .expect("found above");
    assert!(unknown.attr("error.type").is_some(), "{unknown:#?}");
    assert_eq!(unknown.type_of("rpc.response.status_code"), Some("string"));
}

/// The metrics the MCP conventions name for a server, with their kinds, units and
/// attributes typed as they say: `mcp.server.operation.duration` for every request
/// (calls and other methods), `mcp.server.session.duration` when a 2025-11-25 session
/// ends, and saga's counts of sessions and tasks under `saga.`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_named_and_typed_as_the_conventions_say() {
    use saga_examples::harness::session::Session;
    let receiver = Receiver::start().await;
    let server = traced("deploy", &receiver, "metrics").start();
    let url = format!("http://{}/mcp", server.addr);
    let (_, body) = send_traced(server.addr, &Call::deploy(), None).await;
    assert!(body["result"]["requestState"].is_string(), "{body}");
    let session = Session::open(&url, json!({"elicitation": {}})).await;
    let listed = session
        .ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    assert!(session.delete().await.is_success());
    for name in [
        "mcp.server.operation.duration",
        "mcp.server.session.duration",
        "saga.server.sessions",
    ] {
        receiver.wait_for_metric(name).await;
    }
    let metrics = receiver.metrics();
    let find = |name: &str| {
        metrics
            .iter()
            .filter(|metric| metric.name == name)
            .collect::<Vec<_>>()
    };
    let operations = find("mcp.server.operation.duration");
    assert!(
        operations
            .iter()
            .all(|m| m.kind == "histogram" && m.unit == "s")
    );
    let points: Vec<_> = operations.iter().flat_map(|m| m.points.iter()).collect();
    for method in ["tools/call", "tools/list"] {
        assert!(
            points.iter().any(|point| point
                .iter()
                .any(|(key, value, kind)| key == "mcp.method.name"
                    && value == method
                    && *kind == "string")),
            "{method} in {points:#?}"
        );
    }
    let call = points
        .iter()
        .find(|point| point.iter().any(|(_, value, _)| value == "tools/call"))
        .expect("a call's point");
    assert!(
        call.iter()
            .any(|(key, value, kind)| key == "gen_ai.tool.name"
                && value == "complex_tool"
                && *kind == "string"),
        "{call:#?}"
    );
    assert!(
        call.iter()
            .any(|(key, value, _)| key == "mcp.protocol.version" && value == "2026-07-28"),
        "{call:#?}"
    );
    let sessions = find("mcp.server.session.duration");
    assert!(
        sessions
            .iter()
            .all(|m| m.kind == "histogram" && m.unit == "s")
    );
    assert!(
        sessions
            .iter()
            .flat_map(|m| m.points.iter())
            .all(|point| point
                .iter()
                .any(|(key, value, kind)| key == "network.transport"
                    && value == "tcp"
                    && *kind == "string")),
        "{sessions:#?}"
    );
    let live = find("saga.server.sessions");
    assert!(
        live.iter()
            .all(|m| m.kind == "gauge" && m.unit == "{session}"),
        "{live:#?}"
    );
    // No metric carries an attribute the conventions or saga's docs do not name.
    let named = [
        "mcp.method.name",
        "gen_ai.tool.name",
        "mcp.protocol.version",
        "error.type",
        "network.transport",
        "network.protocol.name",
        "saga.task.status",
    ];
    for metric in &metrics {
        for point in &metric.points {
            for (key, _, _) in point {
                assert!(named.contains(&key.as_str()), "{}: {key}", metric.name);
            }
        }
    }
}

/// Sampling is decided before the spans are made: an unsampled call exports nothing of
/// its work (no round, no store write left as a root of a trace of its own), a sampled
/// one exports its span with its rounds under it, and a trace the server begins is kept
/// at the operator's ratio, not at its square (saga's decision and the SDK's, each
/// drawing a trace id).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsampled_call_exports_nothing_and_the_ratio_holds() {
    let receiver = Receiver::start().await;
    let server = traced("deploy", &receiver, "sampled")
        .env("OTEL_TRACES_SAMPLER", "traceidratio")
        .env("OTEL_TRACES_SAMPLER_ARG", "0.5")
        .start();
    // The ratio keys on a trace id's low 64 bits: a small number is sampled, a large one
    // is not, whichever replica decides.
    let traceparent = |n: u64, sampled: bool| {
        let low = if sampled { n } else { u64::MAX - n };
        format!("00-{:016x}{low:016x}-{:016x}-01", 0xabcd_u64 + n, n + 1)
    };
    for n in 0..10 {
        for sampled in [true, false] {
            let (_, body) =
                send_traced(server.addr, &Call::deploy(), Some(&traceparent(n, sampled))).await;
            assert!(body["result"]["requestState"].is_string(), "{body}");
        }
    }
    // Traces the server begins: the ratio, not its square.
    const ROOTS: usize = 200;
    for _ in 0..ROOTS {
        let (_, body) = send_traced(server.addr, &Call::deploy(), None).await;
        assert!(body["result"]["requestState"].is_string(), "{body}");
    }
    receiver
        .wait_for_metric("mcp.server.operation.duration")
        .await;
    receiver
        .wait_for("the sampled calls", |spans| {
            (0..10).all(|n| {
                let trace = &traceparent(n, true)[3..35];
                spans
                    .iter()
                    .any(|span| span.trace_id == trace && span.name == "saga.transition")
            })
        })
        .await;
    // Let whatever else would come arrive.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let spans = receiver.spans();
    for n in 0..10 {
        let kept = &traceparent(n, true)[3..35];
        let calls = rounds_of(&spans, kept);
        assert_eq!(calls.len(), 1, "the sampled call's span");
        assert!(
            spans
                .iter()
                .any(|span| span.name == "saga.transition"
                    && span.parent_span_id == calls[0].span_id)
        );
        let dropped = &traceparent(n, false)[3..35];
        assert!(
            !spans.iter().any(|span| span.trace_id == dropped),
            "nothing of an unsampled call"
        );
    }
    // No span of the server's is a root unless it is a call's: an unsampled call's
    // rounds did not become traces of their own.
    let ids: std::collections::HashSet<&str> =
        spans.iter().map(|span| span.span_id.as_str()).collect();
    for span in &spans {
        if span.name != "tools/call complex_tool" {
            assert!(
                ids.contains(span.parent_span_id.as_str()),
                "a span whose parent was not exported: {span:#?}"
            );
        }
    }
    let roots = spans
        .iter()
        .filter(|span| span.name == "tools/call complex_tool" && span.parent_span_id.is_empty())
        .count();
    // Binomial(200, 0.5): 100 ± 7; at the ratio's square it would be 50 ± 6.
    assert!(
        (65..=135).contains(&roots),
        "{roots} of {ROOTS} traces the server began were kept at a ratio of 0.5"
    );
}

/// A task the server began a trace for is sampled whole or not at all: its steps are
/// exported exactly when its creation was, at a ratio (the creation was decided on one
/// trace id and the SDK gave it another; the steps follow the creation, not the ratio
/// asked again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tasks_steps_are_sampled_as_its_creation_was() {
    let receiver = Receiver::start().await;
    let store = std::env::temp_dir().join(format!("saga-otel-ratio-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&store);
    let server = traced("migrate", &receiver, "ratio")
        .env("SAGA_TASKS", &format!("sqlite:{}", store.display()))
        .env("OTEL_TRACES_SAMPLER", "traceidratio")
        .env("OTEL_TRACES_SAMPLER_ARG", "0.5")
        .start();
    let tasks = TaskClient::new();
    let mut ids = Vec::new();
    for _ in 0..16 {
        let id = tasks
            .create(
                server.addr,
                "migrate",
                json!({"tables": 2, "millis_per_table": 5, "label": "ratio"}),
            )
            .await;
        ids.push(id);
    }
    for id in &ids {
        let done = tasks
            .settled(server.addr, id, Duration::from_secs(60))
            .await;
        assert_eq!(done["status"], "completed", "{done}");
    }
    receiver
        .wait_for_metric("mcp.server.operation.duration")
        .await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let spans = receiver.spans();
    let mut traced = 0;
    for id in &ids {
        let creation = spans.iter().find(|span| {
            span.name == "tools/call migrate" && span.attr("saga.task.id") == Some(id.as_str())
        });
        let steps: Vec<&Span> = spans
            .iter()
            .filter(|span| {
                span.name == "task migrate" && span.attr("saga.task.id") == Some(id.as_str())
            })
            .collect();
        match creation {
            Some(creation) => {
                traced += 1;
                assert!(steps.len() >= 2, "every step of a sampled task: {steps:#?}");
                for step in &steps {
                    assert_eq!(step.parent_span_id, creation.span_id);
                }
            }
            None => assert!(steps.is_empty(), "no step of an unsampled task: {steps:#?}"),
        }
    }
    assert!(
        (1..16).contains(&traced),
        "{traced} of 16 tasks traced at a ratio of 0.5"
    );
    let _ = std::fs::remove_file(&store);
}
