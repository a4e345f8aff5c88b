//! What one request may cost, and the checks no path may skip: one regression test per
//! finding of the attack run on the `deploy` server (issue "Hardening"), over HTTP.
//!
//! Most run against the `deploy` example as its own process, with default settings; the
//! ones that need a tool that panics, asks for roots, or a server option run an
//! in-process server on a loopback socket. The figures printed here (CPU per request,
//! peak RSS, time to serve under slow connections) are the ones SECURITY.md quotes; run
//! with `cargo test -p saga-workspace --test http hardening:: -- --nocapture --test-threads 1` to see them.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use saga_examples::deploy;
use saga_examples::harness::http::{
    Call, DEPLOYED, Method, Post, client, deploy_to_the_end, every_capability, meta, request,
    verdict_as,
};
use saga_examples::harness::process::{ServerProcess, Spawn};
use saga_examples::harness::serving::{Running, serve_local};
use saga_runtime::__support::PANIC_MESSAGE;
use saga_runtime::prelude::*;
use saga_runtime::serve::default_http_config;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt as _;

const KEY_HEX: &str = "7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e";
const MIB: usize = 1024 * 1024;

// ---------------------------------------------------------------------------------------
// Raw HTTP
// ---------------------------------------------------------------------------------------

/// A `tools/call` of `name` from a client of every capability (roots too).
fn call(name: &str, arguments: Value) -> Call {
    Call::new(name, arguments).capabilities(every_capability())
}

/// Runs the deploy saga to its end; returns the final text.
async fn full_saga(addr: SocketAddr) -> String {
    deploy_to_the_end(addr, &Call::deploy()).await
}

// ---------------------------------------------------------------------------------------
// 1. Replay loop
// ---------------------------------------------------------------------------------------

/// A first call that brings an answer failing its form's schema used to replay 1,000
/// rounds in one request (and end in -32603). A re-ask now ends the replay at once: the
/// request costs about what the answers it brings cost.
#[tokio::test]
async fn an_answer_that_fails_its_schema_ends_the_replay_at_once() {
    let mut server = ServerProcess::deploy(KEY_HEX);
    let client = client();
    let big = json!({"initial_arg": "x".repeat(600 * 1024)});
    let wrong = json!({"elicit-1": {"action": "accept", "content": {"target": 12345}}});

    let round = |call: Call| call.post(server.addr).with_client(&client);
    // For scale: an ordinary first round, and one whose arguments are as big.
    let per_call = |request: Post, times: u32| {
        let before = server.cpu_time();
        async move {
            for _ in 0..times {
                let (status, _) = request.clone().send().await;
                assert_eq!(status, 200);
            }
            before
        }
    };
    let before = per_call(round(Call::deploy()), 400).await;
    let normal = (server.cpu_time() - before) / 400;
    let before = per_call(round(Call::deploy().arguments(big.clone())), 20).await;
    let normal_big = (server.cpu_time() - before) / 20;

    // MRTR: inputResponses without requestState, with an answer that fails its schema.
    let attack = round(Call::deploy().arguments(big.clone()).answers(wrong));
    let (status, reply) = attack.clone().send().await;
    assert_eq!(status, 200, "{reply:#}");
    assert_eq!(reply["result"]["resultType"], "input_required", "{reply:#}");
    assert!(
        reply["result"]["inputRequests"]["elicit-1"].is_object(),
        "{reply:#}"
    );
    let cpu = server.cpu_time();
    for _ in 0..20 {
        attack.clone().send().await;
    }
    let attack_cpu = (server.cpu_time() - cpu) / 20;

    // dependent-requests: the same answer as a dependent response.
    let mut dependent = Call::deploy().arguments(big.clone()).message();
    dependent["dependent_responses"] =
        json!({"elicit-1": {"result": {"action": "accept", "content": {"target": 12345}}}});
    let (status, reply) = round(Call::deploy())
        .json(&dependent)
        .header("mcp-result-format", "dependent-requests")
        .send()
        .await;
    assert_eq!(status, 200, "{reply:#}");
    assert!(
        reply["dependent_requests"]["elicit-1"].is_object(),
        "{reply:#}"
    );

    // Two such requests at once leave an unrelated call served as usual.
    let started = Instant::now();
    let attacks: Vec<_> = (0..2)
        .map(|_| tokio::spawn(attack.clone().send()))
        .collect();
    assert_eq!(full_saga(server.addr).await, DEPLOYED);
    let unrelated = started.elapsed();
    for attack in attacks {
        assert_eq!(attack.await.expect("joined").0, 200);
    }
    println!(
        "replay: server CPU per request: an ordinary first round {normal:?}; one with 600 KB of \
         arguments {normal_big:?}; the same with an answer failing its schema {attack_cpu:?} \
         ({:.1}x the ordinary round, {:.1}x the same-size round); a full saga beside two such \
         requests took {unrelated:?}",
        attack_cpu.as_secs_f64() / normal.as_secs_f64().max(1e-9),
        attack_cpu.as_secs_f64() / normal_big.as_secs_f64().max(1e-9),
    );
    server.assert_alive();
}

// ---------------------------------------------------------------------------------------
// 2. One validation path
// ---------------------------------------------------------------------------------------

/// Whether a reply shows the tool ran: a result or the format's own answer.
fn ran(reply: &Value) -> bool {
    reply.get("result").is_some() || reply.get("dependent_requests").is_some()
}

/// Every malformed request the default path refuses is refused the same way with a
/// format selected, and the tool does not run.
#[tokio::test]
async fn every_format_gets_the_default_paths_checks() {
    let server = ServerProcess::deploy(KEY_HEX);
    let client = client();
    let good = Call::deploy().post(server.addr).with_client(&client);
    let request = |body: &str| good.clone().body(body);
    let with_good_meta =
        |envelope: &str| request(&envelope.replace("META", &meta(every_capability()).to_string()));
    let cases = [
        ("another path", good.clone().path("/other")),
        ("PUT", good.clone().method(Method::PUT)),
        ("GET", request("").method(Method::GET)),
        (
            "a mismatched Mcp-Name",
            good.clone().header("mcp-name", "other"),
        ),
        ("no Mcp-Name", good.clone().without("mcp-name")),
        (
            "a mismatched Mcp-Method",
            good.clone().header("mcp-method", "tools/list"),
        ),
        ("no Mcp-Method", good.clone().without("mcp-method")),
        (
            "a bogus MCP-Protocol-Version",
            good.clone().header("mcp-protocol-version", "1999-01-01"),
        ),
        (
            "no MCP-Protocol-Version",
            good.clone().without("mcp-protocol-version"),
        ),
        (
            "text/plain",
            good.clone().header("content-type", "text/plain"),
        ),
        (
            "a duplicate key",
            with_good_meta(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"complex_tool","name":"complex_tool","arguments":{"initial_arg":"x"},"_meta":META}}"#,
            ),
        ),
        (
            "jsonrpc 1.0",
            with_good_meta(
                r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"complex_tool","arguments":{"initial_arg":"x"},"_meta":META}}"#,
            ),
        ),
        (
            "an object id",
            with_good_meta(
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":{"name":"complex_tool","arguments":{"initial_arg":"x"},"_meta":META}}"#,
            ),
        ),
        (
            "an array id",
            with_good_meta(
                r#"{"jsonrpc":"2.0","id":[1],"method":"tools/call","params":{"name":"complex_tool","arguments":{"initial_arg":"x"},"_meta":META}}"#,
            ),
        ),
        (
            "a notification",
            with_good_meta(
                r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"complex_tool","arguments":{"initial_arg":"x"},"_meta":META}}"#,
            ),
        ),
        (
            "no _meta",
            request(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"complex_tool","arguments":{"initial_arg":"x"}}}"#,
            ),
        ),
    ];
    for format in ["dependent-requests", "resume-token"] {
        for (label, request) in &cases {
            let (default_status, default_reply) = request.clone().send().await;
            let (status, reply) = request
                .clone()
                .header("mcp-result-format", format)
                .send()
                .await;
            assert!(
                !ran(&default_reply),
                "{label}: the default path ran the tool: {default_reply:#}"
            );
            assert!(!ran(&reply), "{label} ({format}): the tool ran: {reply:#}");
            assert_eq!(
                status, default_status,
                "{label} ({format}): {reply:#} vs {default_reply:#}"
            );
        }
        // And a sound request in the format is served.
        let (status, reply) = good
            .clone()
            .header("mcp-result-format", format)
            .send()
            .await;
        assert_eq!(status, 200, "{format}: {reply:#}");
    }
}

/// serde_json, reading a `Value`, parses the string under its reserved key
/// `$serde_json::private::RawValue` as a document of its own: past the depth, value and
/// duplicate-key checks, and, nested in itself (each level 120 deep, under serde_json's
/// 128 per document), deep enough to overflow the stack and abort the server. Such a key
/// is refused before anything reads a value, on every path.
#[tokio::test]
async fn json_hidden_under_a_key_the_parser_reserves_is_refused() {
    let mut hidden = format!("{}{}", "[".repeat(120), "]".repeat(120));
    for _ in 0..50 {
        let escaped = hidden.replace('\\', "\\u005c").replace('"', "\\u0022");
        hidden = format!(r#"{{"$serde_json::private::RawValue":"{escaped}"}}"#);
    }
    assert!(hidden.len() < 64 * 1024, "{}", hidden.len());
    let server = ServerProcess::deploy(KEY_HEX);
    let client = client();
    let good = Call::deploy().post(server.addr).with_client(&client);
    let meta = meta(every_capability()).to_string();
    let bodies = [
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"complex_tool","arguments":{{"initial_arg":"x","extra":{hidden}}},"_meta":{meta}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"complex_tool","arguments":{{"initial_arg":"x"}},"_meta":{hidden}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"complex_tool","arguments":{{"initial_arg":"x"}},"inputResponses":{{"elicit-1":{hidden}}},"_meta":{meta}}}}}"#
        ),
    ];
    for format in [None, Some("dependent-requests"), Some("resume-token")] {
        for body in &bodies {
            let request = good.clone().body(body.as_str());
            let request = match format {
                Some(format) => request.header("mcp-result-format", format),
                None => request,
            };
            let (status, reply) = request.send().await;
            assert_eq!(status, 400, "{format:?}: {reply:#}");
            assert_eq!(reply["error"]["code"], -32600, "{format:?}: {reply:#}");
        }
    }
    // And the server is still there.
    assert!(full_saga(server.addr).await.contains(DEPLOYED));
}

/// The configured allowed origins and body limit hold with a format selected too.
#[tokio::test]
async fn every_format_gets_the_configured_origins_and_body_limit() {
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(deploy::complex_tool)
        .build()
        .expect("a server");
    let config = default_http_config()
        .with_allowed_origins(["http://good.example"])
        .with_max_request_body_bytes(16 * 1024);
    let router = server.router_with(config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(async move { axum::serve(listener, router).await });
    let client = client();
    let big = json!({"initial_arg": "x".repeat(32 * 1024)});
    for format in ["", "dependent-requests", "resume-token"] {
        let good = Call::deploy()
            .post(addr)
            .with_client(&client)
            .header("mcp-result-format", format);
        let big = Call::deploy()
            .arguments(big.clone())
            .post(addr)
            .with_client(&client)
            .header("mcp-result-format", format);
        let (status, reply) = good
            .clone()
            .header("origin", "http://evil.example")
            .send()
            .await;
        assert_eq!(status, 403, "{format}: {reply:#}");
        assert!(!ran(&reply));
        let (status, reply) = big.send().await;
        assert_eq!(status, 413, "{format}: {reply:#}");
        let (status, reply) = good.header("origin", "http://good.example").send().await;
        assert_eq!(status, 200, "{format}: {reply:#}");
    }
}

// ---------------------------------------------------------------------------------------
// 3. Memory
// ---------------------------------------------------------------------------------------

/// Twenty 4 MiB bodies of `arguments.x = [0,0,…]` at once, then twenty bodies just under
/// the body limit holding one long string: the server's peak RSS stays under 200 MiB, and
/// it serves normally afterwards. (Before: 395 MiB for one such request, 1.45 GB for 20.)
#[tokio::test]
async fn twenty_huge_requests_at_once_stay_under_200_mib() {
    let mut server = ServerProcess::deploy(KEY_HEX);
    let before = server.rss_kib();
    let zeros = {
        let mut body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"complex_tool","arguments":{"initial_arg":"x","x":["#.to_vec();
        while body.len() < 4 * MIB {
            body.extend_from_slice(b"0,");
        }
        body.extend_from_slice(b"0]}}}");
        body
    };
    let string = Call::deploy()
        .arguments(json!({"initial_arg": "x".repeat(MIB - 2048)}))
        .message()
        .to_string()
        .into_bytes();
    for (label, body, expected) in [
        ("4 MiB of zeros", zeros, 413u16),
        ("1 MiB string", string, 200),
    ] {
        // A client of its own per round: the server closes a connection it answered 413
        // on, and a pooled one reused from that round could break mid-write (a race of
        // the client's pool, not of the server).
        let request = Call::deploy()
            .post(server.addr)
            .with_client(&client())
            .body(body);
        let requests: Vec<_> = (0..20)
            .map(|_| tokio::spawn(request.clone().try_send()))
            .collect();
        for request in requests {
            match request.await.expect("joined") {
                Ok((status, reply)) => {
                    assert_eq!(status.as_u16(), expected, "{label}: {reply:#}");
                }
                // The server answers 413 as soon as the limit is crossed and closes the
                // connection: a client still writing the rest sees the pipe break.
                Err(error) if expected == 413 && error.is_request() => {}
                Err(error) => panic!("{label}: {error:?}"),
            }
        }
        println!(
            "memory: after 20 × {label} at once: RSS {} KiB, peak {} KiB (before any: {before} KiB)",
            server.rss_kib(),
            server.memory_kib("VmHWM")
        );
    }
    let peak = server.memory_kib("VmHWM");
    assert!(peak < 200 * 1024, "peak RSS {peak} KiB");
    assert_eq!(full_saga(server.addr).await, DEPLOYED);
    server.assert_alive();
}

// ---------------------------------------------------------------------------------------
// 4. Slow connections
// ---------------------------------------------------------------------------------------

/// 300 connections that send half their headers and stall, against a server limited to
/// 256 open files: a real client still completes a saga (once the header read timeout,
/// 10 s by default, frees the stalled sockets). Before, the stalled connections stayed
/// open forever and the call timed out.
#[tokio::test]
async fn a_real_client_gets_through_300_slow_connections() {
    let mut server = Spawn::new("deploy", KEY_HEX).max_open_files(256).start();
    let mut slow = Vec::new();
    for _ in 0..300 {
        let Ok(Ok(mut stream)) = tokio::time::timeout(
            Duration::from_secs(2),
            tokio::net::TcpStream::connect(server.addr),
        )
        .await
        else {
            continue; // the backlog is full: as stalled as it gets
        };
        let _ = stream
            .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl")
            .await;
        slow.push(stream);
    }
    let started = Instant::now();
    assert_eq!(full_saga(server.addr).await, DEPLOYED);
    println!(
        "slowloris: {} stalled connections held; a full saga completed in {:?}",
        slow.len(),
        started.elapsed()
    );
    server.assert_alive();
}

// ---------------------------------------------------------------------------------------
// 5. Panics
// ---------------------------------------------------------------------------------------

/// Picks an item; panics when the index is out of bounds, after a suspension.
#[saga_tool]
async fn pick(items: Vec<String>) -> Result<String, SagaError> {
    let index: i64 = elicit("Which index?").await?;
    Ok(items[index as usize].clone())
}

/// Counts, then panics after a checkpoint.
#[saga_tool]
async fn count_then_panic(limit: u32) -> Result<String, SagaError> {
    checkpoint().await;
    let items: Vec<u32> = (0..limit).collect();
    Ok(items[limit as usize + 1].to_string())
}

/// A hand-written tool whose `step` panics before it returns its future (it is not an
/// `async fn`): the panic is that call's, as one inside the future is.
struct PanicsEagerly;

impl saga_runtime::engine::SagaTool for PanicsEagerly {
    type State = u8;

    fn tool(&self) -> saga_runtime::rmcp::model::Tool {
        let schema = json!({"type": "object"});
        saga_runtime::rmcp::model::Tool::new(
            "panics_eagerly",
            "panics",
            schema.as_object().cloned().unwrap_or_default(),
        )
    }

    fn start(
        &self,
        _arguments: saga_runtime::rmcp::model::JsonObject,
    ) -> Result<u8, saga_runtime::rmcp::ErrorData> {
        Ok(0)
    }

    fn step(
        &self,
        state: u8,
        _answers: Answers,
        _cx: &saga_runtime::engine::SagaContext,
    ) -> impl std::future::Future<Output = Step<u8>> + Send {
        let none: Vec<u8> = Vec::new();
        let picked = none[usize::from(state)];
        std::future::ready(Step::done(picked.to_string()))
    }
}

async fn fragile_server() -> Running {
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(pick)
        .tool(count_then_panic)
        .tool(PanicsEagerly)
        .tool(deploy::complex_tool)
        .build()
        .expect("a server");
    serve_local(server).await
}

#[track_caller]
fn is_panic_error(reply: &Value) {
    assert_eq!(reply["error"]["code"], -32603, "{reply:#}");
    assert_eq!(reply["error"]["message"], PANIC_MESSAGE, "{reply:#}");
}

/// A panic in tool code after a suspension ends that call alone with -32603, at once, in
/// every format and over stdio; the server goes on serving.
#[tokio::test]
async fn a_panic_after_a_suspension_ends_that_call_alone() {
    let running = fragile_server().await;
    let addr = running.addr;
    let items = json!({"items": ["a", "b"]});
    let answer = json!({"elicit-1": {"action": "accept", "content": {"value": 99}}});

    // MRTR: round 1, then the answer that makes the tool index out of bounds.
    let picking = call("pick", items.clone());
    let (_, first) = picking.send(addr).await;
    let token = first["result"]["requestState"].as_str().expect("a token");
    let (status, reply) = picking
        .clone()
        .state(token)
        .answers(answer.clone())
        .send(addr)
        .await;
    assert_eq!(status, 200);
    is_panic_error(&reply);

    // dependent-requests.
    let mut body = picking.message();
    body["dependent_responses"] = json!({"elicit-1": {"result": answer["elicit-1"]}});
    let (_, reply) = picking
        .post(addr)
        .json(&body)
        .header("mcp-result-format", "dependent-requests")
        .send()
        .await;
    is_panic_error(&reply);

    // resume-token, after a checkpoint.
    let count = call("count_then_panic", json!({"limit": 3}));
    let resume_token = |call: &Call| call.post(addr).header("mcp-result-format", "resume-token");
    let (_, first) = resume_token(&count).send().await;
    let token = first["result"]["nextResumeToken"]
        .as_str()
        .expect("a resume token");
    let (_, reply) = resume_token(&count.param("resumeToken", json!(token)))
        .send()
        .await;
    is_panic_error(&reply);

    // tools/callSaga, then tools/resumeSaga with the answer.
    let params = json!({"name": "pick", "arguments": items, "_meta": meta(every_capability())});
    let (_, started) = Post::mcp(addr)
        .rpc(&request(5, "tools/callSaga", params))
        .send()
        .await;
    let saga_token = started["result"]["sagaToken"]
        .as_str()
        .unwrap_or_else(|| panic!("{started:#}"));
    let step_id = started["result"]["steps"][0]["stepId"]
        .as_str()
        .expect("a step id");
    let params = json!({
        "sagaToken": saga_token,
        "completedSteps": [{"stepId": step_id, "result": answer["elicit-1"]}],
        "_meta": meta(every_capability()),
    });
    let (_, reply) = Post::mcp(addr)
        .rpc(&request(6, "tools/resumeSaga", params))
        .send()
        .await;
    is_panic_error(&reply);

    // The same server serves the next call.
    assert_eq!(full_saga(addr).await, DEPLOYED);
}

/// A hand-written step that panics while it makes its future, before any poll, ends
/// that call alone too.
#[tokio::test]
async fn a_step_that_panics_before_its_future_ends_that_call_alone() {
    let running = fragile_server().await;
    let (status, reply) = call("panics_eagerly", json!({})).send(running.addr).await;
    assert_eq!(status, 200);
    is_panic_error(&reply);
    assert_eq!(full_saga(running.addr).await, DEPLOYED);
}

/// The same over stdio: the panicking call gets its error line, and the next call works.
#[tokio::test]
async fn a_panic_over_stdio_ends_that_call_alone() {
    use tokio::io::{AsyncBufReadExt as _, BufReader};
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(count_then_panic)
        .build()
        .expect("a server");
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_end);
    tokio::spawn(server.serve_io(server_read, server_write));
    let (client_read, mut client_write) = tokio::io::split(client_end);
    let mut lines = BufReader::new(client_read).lines();
    let mut exchange = async |message: Value| -> Value {
        client_write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .expect("written");
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("an answer within 10 s")
            .expect("readable")
            .expect("a line");
        serde_json::from_str(&line).expect("JSON")
    };
    let count = call("count_then_panic", json!({"limit": 2}));
    let first = exchange(count.message()).await;
    let token = first["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("{first:#}"))
        .to_owned();
    let reply = exchange(count.clone().state(token).message()).await;
    is_panic_error(&reply);
    let again = exchange(count.message()).await;
    assert!(again["result"]["requestState"].is_string(), "{again:#}");
}

/// A stdio server whose future is dropped (a caller's shutdown `select!`, an aborted
/// task) lets go of its input: the task that forwards its lines stops with it, instead
/// of reading the stream for ever.
#[tokio::test]
async fn a_dropped_stdio_server_stops_reading_its_input() {
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(count_then_panic)
        .build()
        .expect("a server");
    let (mut client_in, server_read) = tokio::io::duplex(1024);
    let (server_write, client_out) = tokio::io::duplex(64 * 1024);
    let serving = tokio::spawn(server.serve_io(server_read, server_write));
    // A whole exchange first, so that the server (and its forwarding task) runs.
    let message = call("count_then_panic", json!({"limit": 2})).message();
    client_in
        .write_all(format!("{message}\n").as_bytes())
        .await
        .expect("written");
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(client_out));
    let answer = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("an answer within 10 s")
        .expect("readable");
    assert!(answer.is_some(), "the server answers before it is dropped");
    serving.abort();
    let _ = serving.await;
    // Once the forwarding task has dropped the server's end, a write fails. (No newline:
    // a whole line would reach the dropped server and end the task that way instead.)
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if client_in.write_all(b"x").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(
        closed.is_ok(),
        "the server's input was still read after its future was dropped"
    );
}

// ---------------------------------------------------------------------------------------
// 6. Malformed JSON
// ---------------------------------------------------------------------------------------

/// A body that is not JSON gets HTTP 400 with JSON-RPC `-32700`; JSON that is not a
/// JSON-RPC message gets HTTP 400 with `-32600` (before: HTTP 415 with plain text).
#[tokio::test]
async fn malformed_json_is_a_parse_error() {
    let server = ServerProcess::deploy(KEY_HEX);
    let request = Call::deploy().post(server.addr).with_client(&client());
    for body in [r#"{"jsonrpc": "2.0", "id": 1,"#, "not json", "{\"a\":}", ""] {
        let (status, reply) = request.clone().body(body).send().await;
        assert_eq!(status, 400, "{body:?}: {reply:#}");
        assert_eq!(reply["error"]["code"], -32700, "{body:?}: {reply:#}");
        assert_eq!(reply["id"], Value::Null);
    }
    for body in ["[1, 2]", "42", r#"{"jsonrpc": "2.0"}"#] {
        let (status, reply) = request.clone().body(body).send().await;
        assert_eq!(status, 400, "{body:?}: {reply:#}");
        assert_eq!(reply["error"]["code"], -32600, "{body:?}: {reply:#}");
    }
}

// ---------------------------------------------------------------------------------------
// 7. Log injection
// ---------------------------------------------------------------------------------------

/// Newlines and terminal escapes in what a client sends are escaped in the log.
#[tokio::test]
async fn client_strings_are_escaped_in_the_log() {
    let server = Spawn::new("deploy", KEY_HEX)
        .log("info")
        .capture_stderr()
        .start();
    let (_, first) = Call::deploy().send(server.addr).await;
    let token = first["result"]["requestState"].as_str().expect("a token");
    let evil = "accept\nFORGED-LINE level=ERROR \u{1b}[31mred\u{1b}[0m";
    let (_, reply) = Call::deploy()
        .state(token)
        .answers(json!({"elicit-1": {"action": evil}}))
        .send(server.addr)
        .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply:#}");
    // Give the log a moment to reach the pipe.
    let mut log = String::new();
    for _ in 0..50 {
        log = server.stderr();
        if log.contains("FORGED-LINE") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(log.contains("FORGED-LINE"), "the refusal is logged: {log}");
    assert!(
        !log.contains('\u{1b}'),
        "a raw escape reached the log: {log:?}"
    );
    assert!(
        !log.lines().any(|line| line.starts_with("FORGED-LINE")),
        "a client forged a log line: {log}"
    );
}

// ---------------------------------------------------------------------------------------
// 8. Loose answer checks
// ---------------------------------------------------------------------------------------

/// Sampling answers must be the assistant's text; anything else is `-32602`.
#[tokio::test]
async fn sampling_answers_must_be_the_assistants_text() {
    let server = ServerProcess::deploy(KEY_HEX);
    let (_, first) = Call::deploy().send(server.addr).await;
    let token = first["result"]["requestState"].as_str().expect("a token");
    let (_, second) = Call::deploy_target(token).send(server.addr).await;
    let token = second["result"]["requestState"].as_str().expect("a token");
    for (label, answer) in [
        (
            "role user",
            verdict_as("user", json!({"type": "text", "text": "Yes"})),
        ),
        (
            "an image",
            verdict_as(
                "assistant",
                json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
            ),
        ),
        (
            "text and an image",
            verdict_as(
                "assistant",
                json!([{"type": "text", "text": "Yes"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}]),
            ),
        ),
    ] {
        let (_, reply) = Call::deploy()
            .state(token)
            .answers(answer)
            .send(server.addr)
            .await;
        assert_eq!(reply["error"]["code"], -32602, "{label}: {reply:#}");
    }
    let (_, reply) = Call::deploy_verdict(token, "Yes").send(server.addr).await;
    assert_eq!(reply["result"]["content"][0]["text"], DEPLOYED, "{reply:#}");
}

/// Lists the client's roots.
#[saga_tool]
async fn client_roots() -> Result<String, SagaError> {
    let found = list_roots().await?;
    Ok(found
        .iter()
        .map(|r| r.uri.clone())
        .collect::<Vec<_>>()
        .join(" "))
}

/// Roots must be `file://` URIs.
#[tokio::test]
async fn roots_must_be_file_uris() {
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(client_roots)
        .build()
        .expect("a server");
    let running = serve_local(server).await;
    let roots = call("client_roots", json!({}));
    let (_, first) = roots.send(running.addr).await;
    let token = first["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("{first:#}"));
    let answer =
        |uri: &str| json!({"roots-1": {"roots": [{"uri": "file:///home/a"}, {"uri": uri}]}});
    for uri in [
        "https://evil.example/",
        "javascript:alert(1)",
        "/etc/passwd",
        "",
    ] {
        let (_, reply) = roots
            .clone()
            .state(token)
            .answers(answer(uri))
            .send(running.addr)
            .await;
        assert_eq!(reply["error"]["code"], -32602, "{uri:?}: {reply:#}");
    }
    let (_, reply) = roots
        .state(token)
        .answers(answer("file:///srv"))
        .send(running.addr)
        .await;
    assert_eq!(
        reply["result"]["content"][0]["text"], "file:///home/a file:///srv",
        "{reply:#}"
    );
}

/// A client's step error reaches the tool's result with its control characters escaped.
#[tokio::test]
async fn a_clients_step_error_is_escaped_in_the_result() {
    let server = ServerProcess::deploy(KEY_HEX);
    let mut body = Call::deploy().message();
    body["dependent_responses"] =
        json!({"elicit-1": {"error": {"code": -1, "message": "bad\nFORGED\u{1b}[31mred"}}});
    let (_, reply) = Call::deploy()
        .post(server.addr)
        .json(&body)
        .header("mcp-result-format", "dependent-requests")
        .send()
        .await;
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{reply:#}"));
    assert_eq!(reply["result"]["isError"], true, "{reply:#}");
    assert!(text.contains("FORGED"), "{text:?}");
    assert!(!text.chars().any(char::is_control), "{text:?}");
}

// ---------------------------------------------------------------------------------------
// 9. Principal
// ---------------------------------------------------------------------------------------

/// With `.principal_headers(["x-api-key"])`, a token issued to one API key is refused for
/// another; the default (Authorization only) would take it.
#[tokio::test]
async fn principal_headers_bind_tokens_to_the_named_headers() {
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .principal_headers(["x-api-key"])
        .tool(deploy::complex_tool)
        .build()
        .expect("a server");
    let running = serve_local(server).await;
    let as_key = |call: &Call, key: &str| call.post(running.addr).header("x-api-key", key);
    let (_, first) = as_key(&Call::deploy(), "alice").send().await;
    let token = first["result"]["requestState"].as_str().expect("a token");
    let resume = Call::deploy_target(token);
    let (_, reply) = as_key(&resume, "bob").send().await;
    assert_eq!(reply["error"]["code"], -32602, "{reply:#}");
    let (_, reply) = resume.send(running.addr).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply:#}");
    let (_, reply) = as_key(&resume, "alice").send().await;
    assert!(
        reply["result"]["inputRequests"]["sample-2"].is_object(),
        "{reply:#}"
    );
}
