//! Whom a bound protects (SECURITY.md, "Whom each bound protects"): identities a client
//! makes up share its address's pool, the unverified pools together leave room for
//! verified principals, and clients that stop reading their responses lose their
//! connection at the write timeout. Each test attacks a server on a loopback port from
//! several loopback addresses (127.0.0.x, as other machines) and then requires a fresh
//! client to be served.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use saga_examples::harness::http::{Post, StatusCode, client_at, meta, request};
use saga_examples::harness::serving::{Running, serve_local};
use saga_runtime::prelude::*;
use saga_runtime::serve::HttpLimits;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt as _;

/// The API key the servers here verify, sent as `x-api-key`.
const API_KEY: &str = "k-verified";

/// Holds its request for `seconds`.
#[saga_tool]
async fn hold(seconds: u64) -> Result<String, SagaError> {
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    Ok("held".into())
}

/// Answers at once.
#[saga_tool]
async fn quick() -> Result<String, SagaError> {
    Ok("quick".into())
}

/// A result of `bytes` bytes: more than a socket's buffers hold.
#[saga_tool]
async fn big(bytes: usize) -> Result<String, SagaError> {
    Ok("x".repeat(bytes.min(16 << 20)))
}

/// Checkpoints `times` times with `bytes` of state: a streamed call (seed 002) sends a
/// resume policy carrying a token of that state at each, megabytes in all. The state is
/// random bytes, which are not deflated: each token is as large as it.
#[saga_tool]
async fn chatty(times: u32, bytes: usize) -> Result<String, SagaError> {
    let kept = saga_examples::harness::noise::noise_bytes(3, bytes.min(40_000));
    for _ in 0..times.min(1_000) {
        checkpoint().await;
    }
    Ok(format!("{} kept", kept.len()))
}

/// A server of the tools above with `limits`, verifying [`API_KEY`].
async fn start(limits: HttpLimits) -> Running {
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(hold)
        .tool(quick)
        .tool(big)
        .tool(chatty)
        .http_limits(limits)
        .authenticate(|parts| {
            (parts.headers.get("x-api-key")?.as_bytes() == API_KEY.as_bytes())
                .then(|| "tester".to_owned())
        })
        .build()
        .expect("the server builds");
    serve_local(server).await
}

/// An MRTR `tools/call` message of `tool`.
fn call_message(tool: &str, arguments: Value) -> Value {
    let mut params = json!({"name": tool, "arguments": arguments});
    params["_meta"] = meta(json!({}));
    params["_meta"]["io.modelcontextprotocol/clientInfo"] =
        json!({"name": "pools", "version": "0"});
    request(json!(1), "tools/call", params)
}

/// A `tools/call` of `tool` from `address`, as `headers`: the status and body.
async fn call_from(
    addr: SocketAddr,
    address: &str,
    headers: &[(&str, &str)],
    tool: &str,
    arguments: Value,
) -> (StatusCode, Value) {
    Post::to(format!("http://{addr}/mcp"))
        .headers(headers)
        .rpc(&call_message(tool, arguments))
        .with_client(&client_at(address))
        .send()
        .await
}

/// Starts `count` calls of `hold` that take far longer than the test, from `address`,
/// each under an identity of its own; after `settle`, how many were refused (the rest
/// hold a slot).
async fn hold_slots(addr: SocketAddr, address: &str, count: usize, settle: Duration) -> usize {
    let mut calls = Vec::new();
    for n in 0..count {
        let address = address.to_owned();
        calls.push(tokio::spawn(async move {
            let who = format!("Bearer made-up-{address}-{n}");
            call_from(
                addr,
                &address,
                &[("authorization", &who)],
                "hold",
                json!({"seconds": 600}),
            )
            .await
            .0
        }));
    }
    tokio::time::sleep(settle).await;
    let mut refused = 0;
    for call in calls {
        if call.is_finished() {
            let status = call.await.expect("joined");
            assert!(
                status == StatusCode::TOO_MANY_REQUESTS
                    || status == StatusCode::SERVICE_UNAVAILABLE,
                "a refused call: {status}"
            );
            refused += 1;
        }
    }
    refused
}

/// A fresh client's `quick` call from `address` with `headers`: its status.
async fn fresh(addr: SocketAddr, address: &str, headers: &[(&str, &str)]) -> StatusCode {
    let (status, body) = call_from(addr, address, headers, "quick", json!({})).await;
    if status == StatusCode::OK {
        assert_eq!(body["result"]["content"][0]["text"], "quick", "{body}");
    }
    status
}

/// Point 7 of the second hardening pass: ordinary calls that hold their slot for their
/// whole run take only their pool's share of the slots. Made-up identities at one address
/// share one share; the unverified addresses together take 75 %; a verified principal is
/// served beside them all.
#[tokio::test]
async fn made_up_identities_take_one_share_of_the_slots_and_verified_callers_are_served() {
    let running = start(
        HttpLimits::default()
            .max_concurrent_requests(8)
            .max_requests_per_principal(2)
            .queue_timeout(Duration::from_millis(300)),
    )
    .await;
    let addr = running.addr;
    let settle = Duration::from_millis(1500);
    // Twelve identities at one address: two slots held, ten refused (429, its share).
    assert_eq!(hold_slots(addr, "127.0.0.1", 12, settle).await, 10);
    // A fresh client at another address is served meanwhile.
    assert_eq!(fresh(addr, "127.0.0.9", &[]).await, StatusCode::OK);
    // Two more addresses: the unverified part (6 of 8) is spent.
    assert_eq!(hold_slots(addr, "127.0.0.2", 12, settle).await, 10);
    assert_eq!(hold_slots(addr, "127.0.0.3", 12, settle).await, 10);
    let started = Instant::now();
    assert_eq!(
        fresh(addr, "127.0.0.4", &[]).await,
        StatusCode::SERVICE_UNAVAILABLE,
        "the unverified callers' part is spent"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "it waited its queue time"
    );
    // A verified principal, from any address, still is served: twice at once.
    let (first, second) = tokio::join!(
        fresh(addr, "127.0.0.1", &[("x-api-key", API_KEY)]),
        fresh(addr, "127.0.0.4", &[("x-api-key", API_KEY)]),
    );
    assert_eq!((first, second), (StatusCode::OK, StatusCode::OK));
}

/// A fresh client at `address` is served within a few seconds of `began` (the write
/// timeout's 2 s, and a little), retrying what is shed meanwhile.
async fn served_soon(addr: SocketAddr, address: &str, began: Instant, what: &str) {
    let served = loop {
        let status = fresh(addr, address, &[]).await;
        if status == StatusCode::OK || began.elapsed() > Duration::from_secs(30) {
            break status;
        }
    };
    assert_eq!(served, StatusCode::OK, "{what}");
    println!(
        "{what}: a fresh client served {:?} after they began",
        began.elapsed()
    );
    assert!(
        began.elapsed() < Duration::from_secs(8),
        "{what}: {:?}",
        began.elapsed()
    );
}

/// The raw HTTP/1.1 request of an MRTR `tools/call` of `big`.
fn raw_big_call(addr: SocketAddr, bytes: usize, who: &str) -> Vec<u8> {
    raw_call(addr, &call_message("big", json!({"bytes": bytes})), who)
}

/// The raw HTTP/1.1 request of MRTR `message`.
fn raw_call(addr: SocketAddr, message: &Value, who: &str) -> Vec<u8> {
    let body = message.to_string();
    let name = message["params"]["name"].as_str().unwrap_or_default();
    format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n\
         mcp-method: tools/call\r\nmcp-name: {name}\r\nauthorization: {who}\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A connection from `address` with a tiny receive buffer that sends `requests`
/// (pipelined) and never reads.
async fn stalled_reader(
    addr: SocketAddr,
    address: &str,
    requests: &[Vec<u8>],
) -> tokio::net::TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket.set_recv_buffer_size(1024).expect("a small buffer");
    socket
        .bind(SocketAddr::new(address.parse().expect("an address"), 0))
        .expect("bound");
    let mut stream = socket.connect(addr).await.expect("connected");
    for request in requests {
        stream.write_all(request).await.expect("sent");
    }
    stream
}

/// Point 1: clients that pipeline requests whose responses they never read held their
/// connections, and each response's bytes, for ever. A write that waits past the write
/// timeout now closes its connection.
#[tokio::test]
async fn clients_that_stop_reading_lose_their_connections_at_the_write_timeout() {
    let running = start(
        HttpLimits::default()
            .max_connections(8)
            .write_timeout(Duration::from_secs(2)),
    )
    .await;
    let addr = running.addr;
    // Eight connections from five addresses, each asking twice (pipelined) for 8 MiB and
    // reading none of it: every connection the server takes.
    let began = Instant::now();
    let mut stalled = Vec::new();
    for n in 0..8 {
        let address = format!("127.0.0.{}", 10 + n % 5);
        let request = raw_big_call(addr, 8 << 20, &format!("Bearer made-up-{n}"));
        stalled.push(stalled_reader(addr, &address, &[request.clone(), request]).await);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    // A fresh client waits in the listen backlog until a connection closes: within the
    // write timeout (and a little), although none of them read a byte or hung up.
    let started = Instant::now();
    let served =
        tokio::time::timeout(Duration::from_secs(30), fresh(addr, "127.0.0.20", &[])).await;
    assert_eq!(
        served.ok(),
        Some(StatusCode::OK),
        "a fresh client is served"
    );
    println!(
        "stalled readers: a fresh client served {:?} after they took every connection",
        started.elapsed()
    );
    // The first of them stalled as soon as it was sent, and held its connection for the
    // write timeout (2 s) from then.
    assert!(
        began.elapsed() > Duration::from_millis(1800),
        "the stalled readers held every connection: {:?}",
        began.elapsed()
    );
    assert!(
        began.elapsed() < Duration::from_secs(8),
        "{:?}",
        began.elapsed()
    );
    drop(stalled);
}

/// Point 1, streamed: a call streamed as it runs (seed 002's `resumableRequests`, no
/// session) holds its slot while its body streams, and runs only while its body is
/// polled. Clients that never read held every slot for ever, and the run-time bound
/// never fired; the write timeout now ends them.
///
/// Each call seals a 40 KB state at every checkpoint until its stream fills the sockets'
/// buffers, which in a debug build takes the server a second or more of CPU for the eight
/// of them: on one thread with the test's own client, the eighth connection was made
/// after the first call's write timeout (2 s) had already given its slot back, and the
/// check below saw a free slot. Two threads, and a write timeout longer than that setup,
/// keep the check inside the window it tests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_calls_nobody_reads_give_their_slots_back_at_the_write_timeout() {
    let running = start(
        HttpLimits::default()
            .max_concurrent_requests(8)
            .max_requests_per_principal(8)
            .write_timeout(Duration::from_secs(4))
            .queue_timeout(Duration::from_millis(500)),
    )
    .await;
    let addr = running.addr;
    let began = Instant::now();
    let mut stalled = Vec::new();
    for n in 0..8 {
        let mut message = call_message("chatty", json!({"times": 400, "bytes": 40_000}));
        message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
            json!({"resumableRequests": {}});
        let request = raw_call(addr, &message, &format!("Bearer made-up-{n}"));
        // Verified callers' reserve aside, every slot: 6 of 8 (75 %) for the unverified.
        let address = format!("127.0.0.{}", 60 + n);
        stalled.push(stalled_reader(addr, &address, &[request]).await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        fresh(addr, "127.0.0.70", &[]).await,
        StatusCode::SERVICE_UNAVAILABLE,
        "the streamed calls hold the unverified callers' slots while nobody reads them"
    );
    served_soon(addr, "127.0.0.70", began, "streamed calls nobody reads").await;
    drop(stalled);
}

/// Points 1, 3 and 7 at once: stalled readers, slot holders and made-up identities at
/// several addresses, and a verified client is still served, as is a client at an
/// address of its own once the stalled readers are gone.
#[tokio::test]
async fn a_fresh_client_is_served_under_every_attack_at_once() {
    let running = start(
        HttpLimits::default()
            .max_concurrent_requests(8)
            .max_requests_per_principal(2)
            .write_timeout(Duration::from_secs(2))
            .queue_timeout(Duration::from_millis(500)),
    )
    .await;
    let addr = running.addr;
    let mut stalled = Vec::new();
    for n in 0..4 {
        let address = format!("127.0.0.{}", 30 + n);
        let request = raw_big_call(addr, 8 << 20, &format!("Bearer stalled-{n}"));
        stalled.push(stalled_reader(addr, &address, &[request.clone(), request]).await);
    }
    let settle = Duration::from_millis(1000);
    for address in ["127.0.0.40", "127.0.0.41", "127.0.0.42"] {
        hold_slots(addr, address, 6, settle).await;
    }
    assert_eq!(
        fresh(addr, "127.0.0.50", &[("x-api-key", API_KEY)]).await,
        StatusCode::OK,
        "a verified client is served beside every attack"
    );
    drop(stalled);
}

/// What the guide tells an application that serves `router()` itself: axum's
/// `into_make_service_with_connect_info::<SocketAddr>()` gives saga each caller's
/// address, and identities made up at one address then share one share.
#[tokio::test]
async fn a_router_served_with_connect_info_pools_by_address() {
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(hold)
        .tool(quick)
        .http_limits(
            HttpLimits::default()
                .max_concurrent_requests(8)
                .max_requests_per_principal(2)
                .queue_timeout(Duration::from_millis(300)),
        )
        .build()
        .expect("the server builds");
    let app = server.router();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
    });
    // Six identities made up at one address: two slots held, four refused (429).
    assert_eq!(
        hold_slots(addr, "127.0.0.1", 6, Duration::from_millis(1000)).await,
        4
    );
    assert_eq!(fresh(addr, "127.0.0.9", &[]).await, StatusCode::OK);
}

/// Requests that resend the id of a session request still in flight wait for it holding
/// a slot each, so that a client cannot park any number of them (each with its body)
/// beside its share: beyond it they are refused at once, as any request would be.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resends_of_an_id_in_flight_wait_within_the_callers_share() {
    use saga_examples::harness::session::Session;
    let running = start(
        HttpLimits::default()
            .max_concurrent_requests(8)
            .max_requests_per_principal(2)
            .queue_timeout(Duration::from_millis(200)),
    )
    .await;
    let url = format!("http://{}/mcp", running.addr);
    let session = Session::open(&url, json!({})).await;
    let call = json!({
        "jsonrpc": "2.0", "id": "dup", "method": "tools/call",
        "params": {"name": "hold", "arguments": {"seconds": 4}}
    });
    let _first = session.request(call.clone()).await;
    let started = Instant::now();
    let resends = futures::future::join_all((0..6).map(|_| async {
        let response = session.post(&call).await;
        (response.status(), started.elapsed())
    }))
    .await;
    let refused_at_once = resends
        .iter()
        .filter(|(status, took)| {
            *status == StatusCode::TOO_MANY_REQUESTS && *took < Duration::from_millis(1500)
        })
        .count();
    assert!(
        refused_at_once >= 4,
        "resends beyond the share waited instead: {resends:?}"
    );
}
