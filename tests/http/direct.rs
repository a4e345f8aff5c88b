//! The direct path (`serve::http::direct`) answers exactly as rmcp's transport does.
//!
//! Two servers with the same tools and keys, one with the direct path (the default) and
//! one without (`direct_calls(false)`: every request through rmcp), receive the same raw
//! HTTP requests: valid rounds, and requests that are wrong in each way rmcp checks
//! (headers, protocol metadata, the JSON-RPC message) or that saga refuses (tokens,
//! answers, arguments). Status, content type and body must be the same, byte for byte
//! once the fresh token of an `input_required` result is set aside.
//!
//! The comparison would pass vacuously if the direct path never ran, so a probe tool
//! reports which path served it (`SagaContext::peer` is rmcp's, and the direct path has
//! none): valid calls must take the direct path, and calls it must leave to rmcp must not.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use saga_examples::deploy;
use saga_examples::harness::http::{Post, Reply};
use saga_examples::harness::serving::{Running, serve_local};
use saga_examples::with_schema::WithInputSchema;
use saga_runtime::prelude::*;
#[allow(deprecated)] // logging is deprecated in 2026-07-28 (SEP-2577), still served
use saga_runtime::rmcp::model::{LoggingLevel, PromptMessage, Role};
use saga_runtime::serve::{HttpLimits, SagaServer};
use serde_json::{Value, json};

const VERSION: &str = "2026-07-28";
const TOOL: &str = "complex_tool";

/// Reports whether rmcp's per-request service ran it (a peer is rmcp's).
#[saga_tool]
async fn probe(cx: &SagaContext) -> Result<String, SagaError> {
    Ok(if cx.peer().is_some() {
        "rmcp"
    } else {
        "direct"
    }
    .into())
}

/// Panics in the middle of a call.
#[saga_tool]
async fn boom(fail: bool) -> Result<String, SagaError> {
    if fail {
        panic!("the tool broke");
    }
    let target: deploy::Target = elicit("Where to?").await?;
    Ok(target.target)
}

/// Says what the context tells a tool about its client.
#[saga_tool]
async fn client_of(cx: &SagaContext) -> Result<String, SagaError> {
    Ok(format!(
        "{:?}",
        cx.client_info()
            .map(|info| (info.name.clone(), info.version.clone()))
    ))
}

/// Reports progress and logs at two levels before its answer; asks first when told to,
/// fails when told to.
#[allow(deprecated)] // logging is deprecated in 2026-07-28 (SEP-2577), still served
#[saga_tool]
async fn reporter(cx: &SagaContext, ask: bool, fail: bool) -> Result<String, SagaError> {
    cx.progress(1.0, Some(2.0), Some("half".into())).await;
    cx.log(LoggingLevel::Debug, "a detail").await;
    cx.log(LoggingLevel::Info, json!({"step": 1})).await;
    if fail {
        return Err(SagaError::msg("reported, then failed"));
    }
    if ask {
        let target: deploy::Target = elicit("Where to?").await?;
        cx.progress(2.0, Some(2.0), None).await;
        return Ok(target.target);
    }
    cx.progress(2.0, Some(2.0), None).await;
    Ok("reported".into())
}

/// Reports progress around two checkpoints, and logs once.
#[allow(deprecated)] // logging is deprecated in 2026-07-28 (SEP-2577), still served
#[saga_tool]
async fn stepper(cx: &SagaContext) -> Result<String, SagaError> {
    cx.progress(1.0, Some(3.0), None).await;
    checkpoint().await;
    cx.log(LoggingLevel::Info, "between").await;
    cx.progress(2.0, Some(3.0), None).await;
    checkpoint().await;
    cx.progress(3.0, Some(3.0), None).await;
    Ok("stepped".into())
}

/// Reports progress, then, as a task, answers at its first checkpoint.
#[saga_tool(task)]
async fn early(cx: &SagaContext) -> Result<String, SagaError> {
    cx.progress(1.0, None, Some("before the task".into())).await;
    checkpoint().await;
    Ok("early".into())
}

/// Echoes its region, which SEP-2243 puts in an `Mcp-Param-Region` header too, and says
/// which path served it (as `probe` does).
#[saga_tool]
async fn regional(cx: &SagaContext, region: String) -> Result<String, SagaError> {
    let path = if cx.peer().is_some() {
        "rmcp"
    } else {
        "direct"
    };
    Ok(format!("{region} via {path}"))
}

/// A retired build only (no current one), with the same kind of header.
#[saga_tool]
async fn regional_v0(region: String) -> Result<String, SagaError> {
    Ok(region)
}

/// `regional`'s schema: its `region` is also an `Mcp-Param-Region` header.
fn regional_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        "required": ["region"],
    })
}

/// Fails on purpose, with a message of its own.
#[saga_tool]
async fn refuse_politely() -> Result<String, SagaError> {
    Err(SagaError::msg("not today"))
}

fn server(direct: bool) -> SagaServer {
    server_within(direct, HttpLimits::default())
}

fn server_within(direct: bool, limits: HttpLimits) -> SagaServer {
    SagaServer::builder()
        .info("probe-server", "1.0.0")
        .http_limits(limits)
        .keys(KeyRing::from_keys([[5u8; 32]]).expect("one key"))
        .tool(deploy::complex_tool)
        .tool(probe)
        .tool(boom)
        .tool(refuse_politely)
        .tool(reporter)
        .tool(stepper)
        .tool(client_of)
        .tool(WithInputSchema::new(regional, regional_schema()))
        .retired(WithInputSchema::new(regional_v0, regional_schema()))
        .direct_calls(direct)
        .build()
        .expect("the server builds")
}

struct Pair {
    direct: Running,
    rmcp: Running,
}

async fn pair() -> Pair {
    Pair {
        direct: serve_local(server(true)).await,
        rmcp: serve_local(server(false)).await,
    }
}

/// Where a request is written before [`same`] sends it to both servers.
const UNSENT: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "direct-test-client", "version": "1"},
    })
}

fn deploy_params() -> Value {
    json!({"name": TOOL, "arguments": {"initial_arg": "x", "replicas": 3}, "_meta": meta()})
}

fn message(params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
}

/// One raw request (headers as sent, repeats kept, and the body's bytes) of `params`.
fn raw(params: Value) -> Post {
    Post::mcp(UNSENT).rpc(&message(params))
}

async fn send(addr: SocketAddr, raw: &Post) -> Reply {
    raw.clone().at(addr).reply().await
}

async fn send_to(addr: SocketAddr, path: &str, raw: &Post) -> Reply {
    raw.clone().at(addr).path(path).reply().await
}

/// The body with a fresh token set aside (tokens are random per seal); the token itself
/// is returned so a test can go on with it.
fn without_token(seen: &mut Reply) -> Option<String> {
    let state = seen.body.pointer_mut("/result/requestState")?;
    let token = state.as_str().map(str::to_owned);
    *state = json!("<token>");
    token
}

/// Sends `raw` to both servers and requires the same answer; returns it (token set
/// aside) and the rmcp server's token, if any.
async fn same(pair: &Pair, case: &str, raw: &Post) -> (Reply, Option<String>) {
    let mut direct = send(pair.direct.addr, raw).await;
    let mut rmcp = send(pair.rmcp.addr, raw).await;
    without_token(&mut direct);
    let token = without_token(&mut rmcp);
    assert_eq!(direct, rmcp, "{case}: the two paths answer differently");
    (rmcp, token)
}

async fn served_by(addr: SocketAddr, raw: &Post) -> String {
    let seen = send(addr, raw).await;
    seen.body["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("the probe did not complete: {seen:?}"))
        .to_owned()
}

fn probe_call() -> Post {
    raw(json!({"name": "probe", "arguments": {}, "_meta": meta()}))
}

#[tokio::test]
async fn valid_calls_take_the_direct_path_and_others_are_left_to_rmcp() {
    let pair = pair().await;
    assert_eq!(served_by(pair.direct.addr, &probe_call()).await, "direct");
    assert_eq!(served_by(pair.rmcp.addr, &probe_call()).await, "rmcp");
    // Header names are case-insensitive; the direct path still serves.
    let shouting = probe_call()
        .header("mcp-method", "tools/call")
        .without("mcp-name")
        .repeat_header("mcp-name", "probe");
    assert_eq!(served_by(pair.direct.addr, &shouting).await, "direct");

    // A call that asks for notifications is served directly too (its response carries
    // them: `notifications_answer_the_same`), and so are headers rmcp would let pass:
    // an `Origin` under its default config (no allowlist), a name in SEP-2243's Base64
    // wrapper, an `Mcp-Param-*` header for a tool whose schema names none.
    let mut progress = meta();
    progress["progressToken"] = json!("p-1");
    let mut logging = meta();
    logging["io.modelcontextprotocol/logLevel"] = json!("debug");
    let also_direct = [
        (
            "a progress token",
            raw(json!({"name": "probe", "arguments": {}, "_meta": progress})),
        ),
        (
            "a log level",
            raw(json!({"name": "probe", "arguments": {}, "_meta": logging})),
        ),
        (
            "an Origin header",
            probe_call().repeat_header("origin", "http://localhost:3000"),
        ),
        (
            "a Base64-wrapped Mcp-Name",
            probe_call().header("mcp-name", "=?base64?cHJvYmU=?="),
        ),
        (
            "an Mcp-Param header",
            probe_call().repeat_header("mcp-param-region", "eu"),
        ),
    ];
    for (case, call) in &also_direct {
        assert_eq!(served_by(pair.direct.addr, call).await, "direct", "{case}");
        assert_eq!(served_by(pair.rmcp.addr, call).await, "rmcp", "{case}");
    }
    // What is left to rmcp: a header this path would have to judge as rmcp does.
    let left_to_rmcp = [(
        "an Accept with a quoted parameter",
        probe_call().header(
            "accept",
            r#"application/json;profile="a,b", text/event-stream"#,
        ),
    )];
    for (case, raw) in left_to_rmcp {
        let seen = send(pair.direct.addr, &raw).await;
        // rmcp may answer as JSON or as an SSE stream (with notifications); either way
        // the probe's text says who ran it.
        let text = match &seen.body {
            Value::String(sse) => sse.clone(),
            json => json.to_string(),
        };
        assert!(
            text.contains("rmcp") && !text.contains("direct"),
            "{case}: expected rmcp to serve it, got {seen:?}"
        );
    }
}

/// The events of an SSE body, each a JSON message with its fresh token set aside; a body
/// that is not a stream is one message.
fn events(reply: &Reply) -> Vec<Value> {
    let Value::String(text) = &reply.body else {
        let mut message = reply.body.clone();
        if let Some(state) = message.pointer_mut("/result/requestState") {
            *state = json!("<token>");
        }
        return vec![message];
    };
    text.split("\n\n")
        .filter(|event| !event.is_empty())
        .map(|event| {
            let data = event
                .strip_prefix("data: ")
                .unwrap_or_else(|| panic!("not a data event: {event:?}"));
            let mut message: Value = serde_json::from_str(data).expect("an event is JSON");
            if let Some(state) = message.pointer_mut("/result/requestState") {
                *state = json!("<token>");
            }
            message
        })
        .collect()
}

/// `seen`, the events of a response of request `id` whose content type was
/// `content_type`: `messages` of them, the notifications first (a stream, when there are
/// any) and the answer last.
fn notices_then_answer(
    case: &str,
    seen: &[Value],
    content_type: Option<&str>,
    messages: usize,
    id: i64,
) {
    assert_eq!(seen.len(), messages, "{case}: {seen:#?}");
    assert!(
        seen.last().is_some_and(|answer| answer["id"] == id),
        "{case}: {seen:#?}"
    );
    if messages > 1 {
        assert_eq!(content_type, Some("text/event-stream"), "{case}");
        assert!(
            seen[..seen.len() - 1].iter().all(|notice| notice["method"]
                .as_str()
                .is_some_and(|m| m.starts_with("notifications/"))),
            "{case}: {seen:#?}"
        );
    }
}

/// A call that asks for progress or log messages is answered as rmcp answers it, both
/// ways its response can go: a stream of its notifications then its answer, once it sent
/// one; one JSON message when it sent none (a key present but not readable asks for
/// nothing). Its answer in a stream may be a result, a request for input or an error.
#[tokio::test]
async fn notifications_answer_the_same() {
    let pair = pair().await;
    let with = |extra: &[(&str, Value)], ask: bool, fail: bool| {
        let mut meta = meta();
        for (key, value) in extra {
            meta[*key] = value.clone();
        }
        raw(json!({"name": "reporter", "arguments": {"ask": ask, "fail": fail}, "_meta": meta}))
    };
    let token = ("progressToken", json!("p-1"));
    let number_token = ("progressToken", json!(7));
    let info = ("io.modelcontextprotocol/logLevel", json!("info"));
    let debug = ("io.modelcontextprotocol/logLevel", json!("debug"));
    let cases = [
        (
            "a progress token",
            with(std::slice::from_ref(&token), false, false),
            3,
        ),
        ("a number as token", with(&[number_token], false, false), 3),
        (
            "the info level",
            with(std::slice::from_ref(&info), false, false),
            2,
        ),
        ("the debug level", with(&[debug], false, false), 3),
        (
            "both",
            with(&[token.clone(), info.clone()], false, false),
            4,
        ),
        (
            "both, then a question",
            with(&[token.clone(), info.clone()], true, false),
            3,
        ),
        (
            "both, then an error",
            with(&[token.clone(), info], false, true),
            3,
        ),
        (
            "a token that is not one",
            with(
                &[("progressToken", json!({"not": "a token"}))],
                false,
                false,
            ),
            1,
        ),
        (
            "a level that is not one",
            with(
                &[("io.modelcontextprotocol/logLevel", json!("loud"))],
                false,
                false,
            ),
            1,
        ),
    ];
    for (case, raw, messages) in &cases {
        let direct = send(pair.direct.addr, raw).await;
        let rmcp = send(pair.rmcp.addr, raw).await;
        assert_eq!(direct.status, rmcp.status, "{case}");
        assert_eq!(direct.content_type, rmcp.content_type, "{case}");
        let seen = events(&direct);
        assert_eq!(
            seen,
            events(&rmcp),
            "{case}: the two paths answer differently"
        );
        // Notifications first, in the order sent, and the answer last.
        notices_then_answer(case, &seen, direct.content_type.as_deref(), *messages, 7);
        // With no token to set aside, byte for byte.
        if seen
            .iter()
            .all(|message| message.pointer("/result/requestState").is_none())
        {
            assert_eq!(direct.body, rmcp.body, "{case}");
        }
    }
    // A probe that the streams above were the direct path's.
    let mut asks = meta();
    asks["progressToken"] = json!("p-1");
    let call = raw(json!({"name": "probe", "arguments": {}, "_meta": asks}));
    assert_eq!(served_by(pair.direct.addr, &call).await, "direct");
}

/// A client that asked to be streamed through a call's checkpoints (seed 002) and for
/// progress and log messages gets them all in that one stream, in the order the call sent
/// them: a notification, a resume policy at each checkpoint, then the result.
#[tokio::test]
async fn a_streamed_call_carries_its_notifications_in_order() {
    let pair = pair().await;
    let mut asks = meta();
    asks["progressToken"] = json!("p-9");
    asks["io.modelcontextprotocol/logLevel"] = json!("info");
    asks["io.modelcontextprotocol/clientCapabilities"]["extensions"] =
        json!({"resumableRequests": {}});
    let call = raw(json!({"name": "stepper", "arguments": {}, "_meta": asks}));
    let seen = send(pair.direct.addr, &call).await;
    assert_eq!(seen.content_type.as_deref(), Some("text/event-stream"));
    let Value::String(text) = &seen.body else {
        panic!("a stream: {seen:?}");
    };
    let methods: Vec<String> = text
        .split("\n\n")
        .filter(|event| !event.is_empty())
        .map(|event| {
            let data = event
                .strip_prefix("event: message\ndata: ")
                .unwrap_or_else(|| panic!("a seed 002 event: {event:?}"));
            let message: Value = serde_json::from_str(data).expect("JSON");
            match message["method"].as_str() {
                Some("notifications/progress") => {
                    assert_eq!(message["params"]["progressToken"], "p-9", "{message}");
                    format!("progress {}", message["params"]["progress"])
                }
                Some(method) => method.to_owned(),
                None => format!("result {}", message["result"]["content"][0]["text"]),
            }
        })
        .collect();
    assert_eq!(
        methods,
        [
            "progress 1.0",
            "notifications/requests/resumePolicy",
            "notifications/message",
            "progress 2.0",
            "notifications/requests/resumePolicy",
            "progress 3.0",
            r#"result "stepped""#,
        ],
        "{text}"
    );
}

/// A tool whose schema names an `Mcp-Param-*` header, current or only retired, has its
/// headers checked as rmcp checks them: a call whose headers match is served directly,
/// and one whose headers are wrong, missing, extra or repeated is refused alike.
#[tokio::test]
async fn a_tool_whose_schema_names_a_header_is_checked_alike() {
    let pair = pair().await;
    let call = |tool: &str, arguments: Value| {
        raw(json!({"name": tool, "arguments": arguments, "_meta": meta()}))
    };
    let matching = call("regional", json!({"region": "eu"})).header("mcp-param-region", "eu");
    let text = |reply: &Reply| reply.body["result"]["content"][0]["text"].clone();
    assert_eq!(
        text(&send(pair.direct.addr, &matching).await),
        "eu via direct"
    );
    assert_eq!(text(&send(pair.rmcp.addr, &matching).await), "eu via rmcp");
    let wrapped =
        call("regional", json!({"region": "é"})).header("mcp-param-region", "=?base64?w6k=?=");
    assert_eq!(
        text(&send(pair.direct.addr, &wrapped).await),
        "é via direct"
    );
    for tool in ["regional", "regional_v0"] {
        let cases = [
            (
                "the header wrong",
                call(tool, json!({"region": "eu"})).header("mcp-param-region", "us"),
            ),
            ("the header missing", call(tool, json!({"region": "eu"}))),
            (
                "the header without its argument",
                call(tool, json!({})).header("mcp-param-region", "eu"),
            ),
            (
                "the header twice",
                call(tool, json!({"region": "eu"}))
                    .header("mcp-param-region", "eu")
                    .repeat_header("mcp-param-region", "eu"),
            ),
            (
                "a wrapper that does not decode",
                call(tool, json!({"region": "eu"})).header("mcp-param-region", "=?base64?ZXU?="),
            ),
        ];
        for (case, raw) in &cases {
            let (refused, _) = same(&pair, &format!("{tool}: {case}"), raw).await;
            assert_eq!(refused.status, 400, "{tool}: {case}: {refused:?}");
        }
    }
    // The retired build's headers matching: the call goes on to be refused by its
    // family (no token), alike on both.
    let retired = call("regional_v0", json!({"region": "eu"})).header("mcp-param-region", "eu");
    same(&pair, "a retired build's matching header", &retired).await;
}

/// Serves `router` on a loopback port for the rest of the test.
async fn serve_router(router: axum::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port is free");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

/// Under a config with allowed origins, an `Origin` it names is served directly and any
/// other is refused as rmcp refuses it, on both servers alike.
#[tokio::test]
async fn an_allowlist_of_origins_answers_the_same() {
    let config = saga_runtime::serve::default_http_config().with_allowed_origins([
        "http://good.example",
        "https://app.example:*",
        "null",
    ]);
    let direct = serve_router(server(true).router_with(config.clone())).await;
    let rmcp = serve_router(server(false).router_with(config)).await;
    let cases = [
        ("named", "http://good.example", true),
        (
            "named, a port this rmcp lets any be",
            "http://good.example:8080",
            true,
        ),
        ("any port", "https://app.example:8443", true),
        ("null", "null", true),
        ("another host", "http://evil.example", false),
        ("another scheme", "https://good.example", false),
        ("not an origin", "good.example", false),
    ];
    for (case, origin, admitted) in cases {
        let call = raw(deploy_params()).repeat_header("origin", origin);
        let mut from_direct = send(direct, &call).await;
        let mut from_rmcp = send(rmcp, &call).await;
        without_token(&mut from_direct);
        without_token(&mut from_rmcp);
        assert_eq!(
            from_direct, from_rmcp,
            "{case}: the two paths answer differently"
        );
        assert_eq!(
            from_direct.status == 200,
            admitted,
            "{case}: {from_direct:?}"
        );
        if admitted {
            let probing = probe_call().repeat_header("origin", origin);
            assert_eq!(served_by(direct, &probing).await, "direct", "{case}");
        }
    }
    // Told to check with no allowlist: any Origin is refused alike, none is served.
    let strict = saga_runtime::serve::default_http_config().enforce_origin_validation();
    let direct = serve_router(server(true).router_with(strict.clone())).await;
    let rmcp = serve_router(server(false).router_with(strict)).await;
    let with_origin = raw(deploy_params()).repeat_header("origin", "http://localhost:3000");
    let from_direct = send(direct, &with_origin).await;
    assert_eq!(from_direct, send(rmcp, &with_origin).await);
    assert_eq!(from_direct.status, 403, "{from_direct:?}");
    assert_eq!(served_by(direct, &probe_call()).await, "direct");
}

/// A call that asks for progress and becomes a task sends what its first leg reports
/// before the task's creation, on both paths alike, whether or not its client also asked
/// to be streamed (the task wins over the stream).
#[tokio::test]
async fn a_call_that_becomes_a_task_reports_alike() {
    let build = |direct: bool| {
        SagaServer::builder()
            .info("probe-server", "1.0.0")
            .keys(KeyRing::from_keys([[5u8; 32]]).expect("one key"))
            .tool(early)
            .tasks(TaskStore::memory())
            .direct_calls(direct)
            .build()
            .expect("the server builds")
    };
    let (direct, rmcp) = (
        serve_local(build(true)).await,
        serve_local(build(false)).await,
    );
    for streamed in [false, true] {
        let mut asks = meta();
        asks["progressToken"] = json!("t-1");
        let extensions = &mut asks["io.modelcontextprotocol/clientCapabilities"]["extensions"];
        *extensions = json!({"io.modelcontextprotocol/tasks": {}});
        if streamed {
            extensions["resumableRequests"] = json!({});
        }
        let call = raw(json!({"name": "early", "arguments": {}, "_meta": asks}));
        let from_direct = send(direct.addr, &call).await;
        let from_rmcp = send(rmcp.addr, &call).await;
        let masked = |reply: &Reply| -> Vec<Value> {
            events(reply)
                .into_iter()
                .map(|mut message| {
                    for field in ["taskId", "createdAt", "lastUpdatedAt"] {
                        if let Some(value) = message.pointer_mut(&format!("/result/{field}")) {
                            *value = json!("<fresh>");
                        }
                    }
                    message
                })
                .collect()
        };
        let seen = masked(&from_direct);
        assert_eq!(seen, masked(&from_rmcp), "streamed: {streamed}");
        assert_eq!(from_direct.status, from_rmcp.status);
        assert_eq!(from_direct.content_type, from_rmcp.content_type);
        assert_eq!(seen.len(), 2, "a notification, then the task: {seen:#?}");
        assert_eq!(seen[0]["method"], "notifications/progress", "{seen:#?}");
        assert_eq!(seen[1]["result"]["resultType"], "task", "{seen:#?}");
    }
}

/// A tool sees the same client on both paths: the one `_meta` names, or, when it names
/// none, what rmcp's stateless context answers then (its default client).
#[tokio::test]
async fn a_tool_sees_the_same_client_info_on_both_paths() {
    let pair = pair().await;
    let mut anonymous = meta();
    anonymous
        .as_object_mut()
        .expect("an object")
        .remove("io.modelcontextprotocol/clientInfo");
    let named = raw(json!({"name": "client_of", "arguments": {}, "_meta": meta()}));
    let direct = served_by(pair.direct.addr, &named).await;
    assert_eq!(direct, r#"Some(("direct-test-client", "1"))"#);
    assert_eq!(direct, served_by(pair.rmcp.addr, &named).await);
    let unnamed = raw(json!({"name": "client_of", "arguments": {}, "_meta": anonymous}));
    assert_eq!(
        served_by(pair.direct.addr, &unnamed).await,
        served_by(pair.rmcp.addr, &unnamed).await
    );
}

/// The guard wraps the router's fallback too: a valid call sent to another path is the
/// router's 404 on both, never a call.
#[tokio::test]
async fn only_the_mcp_path_is_served() {
    let pair = pair().await;
    for path in ["/other", "/mcp/", "/mcp/x", "/"] {
        let direct = send_to(pair.direct.addr, path, &probe_call()).await;
        let rmcp = send_to(pair.rmcp.addr, path, &probe_call()).await;
        assert_eq!(direct, rmcp, "{path}: the two paths answer differently");
        assert!(
            !direct.body.to_string().contains("direct"),
            "{path}: the direct path ran the tool: {direct:?}"
        );
    }
}

#[tokio::test]
async fn a_whole_saga_and_its_wrong_turns_answer_the_same() {
    let pair = pair().await;
    let (first, token) = same(&pair, "round 1", &raw(deploy_params())).await;
    assert_eq!(first.status, 200);
    assert_eq!(first.body["result"]["resultType"], "input_required");
    let token = token.expect("round 1 gives a token");

    let round = |answers: Value, token: &str| {
        let mut params = deploy_params();
        params["requestState"] = json!(token);
        params["inputResponses"] = answers;
        raw(params)
    };
    let target = json!({"elicit-1": {"action": "accept", "content": {"target": "production"}}});
    let (second, token2) = same(&pair, "round 2", &round(target.clone(), &token)).await;
    assert_eq!(second.body["result"]["resultType"], "input_required");
    let token2 = token2.expect("round 2 gives a token");
    let verdict = json!({"sample-2": {
        "role": "assistant",
        "content": {"type": "text", "text": "Yes, it is safe."},
        "model": "m",
        "stopReason": "endTurn"
    }});
    let (third, _) = same(&pair, "round 3", &round(verdict.clone(), &token2)).await;
    assert_eq!(
        third.body["result"]["content"][0]["text"],
        "Deployment to production initiated successfully based on confirmation."
    );

    let other_arguments = round(target.clone(), &token).json(&message(json!({
        "name": TOOL,
        "arguments": {"initial_arg": "y", "replicas": 3},
        "requestState": token,
        "inputResponses": target,
        "_meta": meta(),
    })));
    let string_id = raw(deploy_params()).json(&json!({
        "jsonrpc": "2.0", "id": "call-1", "method": "tools/call", "params": deploy_params()
    }));
    let cases = [
        ("the answer missing", round(json!({}), &token)),
        (
            "an answer off its schema",
            round(
                json!({"elicit-1": {"action": "accept", "content": {"target": 5}}}),
                &token,
            ),
        ),
        (
            "a declined form",
            round(json!({"elicit-1": {"action": "decline"}}), &token),
        ),
        ("an answer to another round", round(verdict.clone(), &token)),
        ("a forged token", round(target.clone(), "AAAAnot-a-token")),
        ("a token for other arguments", other_arguments),
        ("a string id", string_id),
        (
            "arguments of the wrong type",
            raw(json!({"name": TOOL, "arguments": {"initial_arg": 5}, "_meta": meta()})),
        ),
        ("no arguments", raw(json!({"name": TOOL, "_meta": meta()}))),
        (
            "an unknown tool",
            raw(json!({"name": "nope", "arguments": {}, "_meta": meta()})),
        ),
        (
            "a panicking tool",
            raw(json!({"name": "boom", "arguments": {"fail": true}, "_meta": meta()})),
        ),
        (
            "a tool returning an error",
            raw(json!({"name": "refuse_politely", "arguments": {}, "_meta": meta()})),
        ),
        (
            "a client that cannot elicit",
            raw(
                json!({"name": "boom", "arguments": {"fail": false}, "_meta": {
                    "io.modelcontextprotocol/protocolVersion": VERSION,
                    "io.modelcontextprotocol/clientCapabilities": {},
                }}),
            ),
        ),
        (
            "no client info",
            raw(
                json!({"name": "boom", "arguments": {"fail": false}, "_meta": {
                    "io.modelcontextprotocol/protocolVersion": VERSION,
                    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
                }}),
            ),
        ),
        (
            "an unknown params field",
            raw(
                json!({"name": TOOL, "arguments": {"initial_arg": "x"}, "extra": 1, "_meta": meta()}),
            ),
        ),
    ];
    for (case, raw) in &cases {
        if std::env::var("ONLY_CASE").is_ok_and(|only| !case.contains(&only)) {
            continue;
        }
        eprintln!("case {case}");
        same(&pair, case, raw).await;
    }
}

#[tokio::test]
async fn transport_refusals_are_rmcps_on_both() {
    let pair = pair().await;
    let valid = raw(deploy_params());
    let mut no_version_meta = deploy_params();
    no_version_meta["_meta"]
        .as_object_mut()
        .expect("meta")
        .remove("io.modelcontextprotocol/protocolVersion");
    let mut no_capabilities = deploy_params();
    no_capabilities["_meta"]
        .as_object_mut()
        .expect("meta")
        .remove("io.modelcontextprotocol/clientCapabilities");
    let mut old_meta = deploy_params();
    old_meta["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let non_string_name = valid.clone().json(&message(json!({
        "name": 5, "arguments": {}, "_meta": meta()
    })));
    let cases = [
        (
            "no MCP-Protocol-Version",
            valid.clone().without("mcp-protocol-version"),
        ),
        (
            "an unknown MCP-Protocol-Version",
            valid.clone().header("mcp-protocol-version", "2099-01-01"),
        ),
        (
            "a header version other than _meta's",
            valid.clone().header("mcp-protocol-version", "2025-11-25"),
        ),
        ("_meta without a version", raw(no_version_meta)),
        ("_meta without capabilities", raw(no_capabilities)),
        (
            "an older version in both",
            raw(old_meta).header("mcp-protocol-version", "2025-11-25"),
        ),
        ("no Mcp-Method", valid.clone().without("mcp-method")),
        (
            "another Mcp-Method",
            valid.clone().header("mcp-method", "tools/list"),
        ),
        ("no Mcp-Name", valid.clone().without("mcp-name")),
        (
            "another Mcp-Name",
            valid.clone().header("mcp-name", "probe"),
        ),
        (
            "Mcp-Name twice",
            valid.clone().repeat_header("mcp-name", TOOL),
        ),
        (
            "Mcp-Method twice",
            valid.clone().repeat_header("mcp-method", "tools/call"),
        ),
        (
            "MCP-Protocol-Version twice",
            valid.clone().repeat_header("mcp-protocol-version", VERSION),
        ),
        (
            "a Base64 Mcp-Name that matches",
            valid
                .clone()
                .header("mcp-name", "=?base64?Y29tcGxleF90b29s?="),
        ),
        (
            "a Base64 Mcp-Name that does not",
            valid.clone().header("mcp-name", "=?base64?cHJvYmU=?="),
        ),
        (
            "a Base64 wrapper that does not decode",
            valid
                .clone()
                .header("mcp-name", "=?base64?Y29tcGxleF90b29s?"),
        ),
        (
            "a Base64 wrapper without its padding",
            valid
                .clone()
                .header("mcp-name", "=?base64?Y29tcGxleF90b29s=?="),
        ),
        (
            "a Base64 wrapper of bytes that are not text",
            valid.clone().header("mcp-name", "=?base64?/w==?="),
        ),
        (
            "an Origin and an Mcp-Param header, with a wrapped name",
            valid
                .clone()
                .header("mcp-name", "=?base64?Y29tcGxleF90b29s?=")
                .repeat_header("origin", "https://app.example")
                .repeat_header("mcp-param-region", "eu"),
        ),
        (
            "Accept without SSE",
            valid.clone().header("accept", "application/json"),
        ),
        (
            "Accept weighing SSE out",
            valid
                .clone()
                .header("accept", "application/json, text/event-stream;q=0"),
        ),
        (
            "Accept in two headers",
            valid
                .clone()
                .header("accept", "application/json")
                .repeat_header("accept", "text/event-stream"),
        ),
        (
            "a Host that is not allowed",
            valid.clone().repeat_header("host", "evil.example"),
        ),
        (
            "an allowed Host on another port",
            valid.clone().repeat_header("host", "localhost:9"),
        ),
        (
            "an Origin",
            valid
                .clone()
                .repeat_header("origin", "http://localhost:3000"),
        ),
        (
            "an Mcp-Param header",
            valid.clone().repeat_header("mcp-param-region", "eu"),
        ),
        ("a params.name that is not a string", non_string_name),
    ];
    for (case, raw) in &cases {
        same(&pair, case, raw).await;
    }
}

/// Bodies whose JSON-RPC shape is unusual: the direct path reads a message more strictly
/// than rmcp does and leaves the rest to it, so both servers must still agree.
#[tokio::test]
async fn unusual_messages_answer_the_same() {
    let pair = pair().await;
    let params = deploy_params().to_string();
    let meta = meta().to_string();
    // A body of the given top-level members, written as they are (JSON text, so that
    // order and repeats stay as written).
    let members = |text: String| {
        Post::mcp(UNSENT)
            .header("mcp-method", "tools/call")
            .header("mcp-name", TOOL)
            .body(format!("{{{text}}}"))
    };
    // A well-formed envelope around `params` written as they are.
    let call = |params: String| {
        members(format!(
            r#""jsonrpc":"2.0","id":3,"method":"tools/call","params":{{{params}}}"#
        ))
    };
    // The deploy call with this `jsonrpc` and `id`, and `extra` members after its params.
    let envelope = |jsonrpc: &str, id: &str, extra: &str| {
        members(format!(
            r#""jsonrpc":"{jsonrpc}","id":{id},"method":"tools/call","params":{params}{extra}"#
        ))
    };
    // The deploy call's params with `extra` members before `_meta`.
    let deploy = |arguments: &str, extra: &str| {
        call(format!(
            r#""name":"{TOOL}","arguments":{{{arguments}}},{extra}"_meta":{meta}"#
        ))
    };
    let cases = [
        (
            "members in another order",
            members(format!(
                r#""params":{params},"method":"tools/call","id":3,"jsonrpc":"2.0""#
            )),
        ),
        (
            "a stray result member",
            envelope("2.0", "3", r#","result":{}"#),
        ),
        (
            "an extra top-level member",
            envelope("2.0", "3", r#","x":1"#),
        ),
        ("jsonrpc 1.0", envelope("1.0", "3", "")),
        ("a fractional id", envelope("2.0", "1.5", "")),
        ("an integer id in float form", envelope("2.0", "3.0", "")),
        ("an id in exponent form", envelope("2.0", "3e0", "")),
        ("a null id", envelope("2.0", "null", "")),
        (
            "an id past i64",
            envelope("2.0", "18446744073709551615", ""),
        ),
        ("a negative id", envelope("2.0", "-4", "")),
        ("the id twice", envelope("2.0", r#"3,"id":4"#, "")),
        (
            "no params",
            members(r#""jsonrpc":"2.0","id":3,"method":"tools/call""#.into()),
        ),
        (
            "the tool name twice",
            call(format!(
                r#""name":"probe","name":"{TOOL}","arguments":{{"initial_arg":"x"}},"_meta":{meta}"#
            )),
        ),
        (
            "_meta twice",
            deploy(r#""initial_arg":"x""#, r#""_meta":{},"#),
        ),
        (
            "an argument key twice",
            deploy(r#""initial_arg":"x","initial_arg":"y""#, ""),
        ),
        (
            "an argument key twice, once through an escape",
            deploy(r#""initial_arg":"x","initial\u005farg":"y""#, ""),
        ),
        (
            "a _meta key twice",
            deploy(r#""initial_arg":"x""#, r#""_meta":{"a":1,"a":2},"#),
        ),
        (
            "the message inside an array",
            Post::mcp(UNSENT)
                .header("mcp-method", "tools/call")
                .header("mcp-name", TOOL)
                .body(format!(
                    r#"[{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{params}}}]"#
                )),
        ),
        (
            "params as an array of their members",
            members(format!(
                r#""jsonrpc":"2.0","id":3,"method":"tools/call","params":[{meta},"{TOOL}",{{"initial_arg":"x"}},null,null]"#
            )),
        ),
        (
            "an argument under a key the JSON parser reserves",
            deploy(
                r#""initial_arg":"x","extra":{"$serde_json::private::RawValue":"[1]"}"#,
                "",
            ),
        ),
        (
            "the message as an array of its members",
            Post::mcp(UNSENT)
                .header("mcp-method", "tools/call")
                .header("mcp-name", TOOL)
                .body(format!(r#"["2.0",3,"tools/call",{params}]"#)),
        ),
        (
            "an argument that is not UTF-8",
            Post::mcp(UNSENT)
                .header("mcp-method", "tools/call")
                .header("mcp-name", TOOL)
                .body(
                    [
                        &br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":""#[..],
                        TOOL.as_bytes(),
                        b"\",\"arguments\":{\"initial_arg\":\"\xff\"},\"_meta\":",
                        meta.as_bytes(),
                        b"}}",
                    ]
                    .concat(),
                ),
        ),
        (
            "a lone surrogate in an argument",
            deploy(r#""initial_arg":"\ud800""#, ""),
        ),
        (
            "escapes in the tool name",
            call(format!(
                r#""name":"complex\u005ftool","arguments":{{"initial_arg":"x"}},"_meta":{meta}"#
            )),
        ),
        (
            "a null requestState",
            deploy(r#""initial_arg":"x""#, r#""requestState":null,"#),
        ),
    ];
    for (case, raw) in &cases {
        if std::env::var("ONLY_CASE").is_ok_and(|only| !case.contains(&only)) {
            continue;
        }
        eprintln!("case {case}");
        same(&pair, case, raw).await;
    }
}

/// Counts what the guard's JSON check counts: each scalar, array, object and key.
fn values_in(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(values_in).sum::<usize>(),
        Value::Object(map) => {
            1 + map
                .values()
                .map(|value| 1 + values_in(value))
                .sum::<usize>()
        }
        _ => 1,
    }
}

/// How many arrays and objects deep `value` nests.
fn depth_of(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth_of).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth_of).max().unwrap_or(0),
        _ => 0,
    }
}

/// The direct path checks a call's JSON bounds in the same pass that reads it: a call at
/// each bound runs there, and one past it is refused as rmcp's path refuses it.
#[tokio::test]
async fn a_call_at_the_json_bounds_runs_directly_and_one_past_them_is_refused_alike() {
    let padded = |pad: Value| {
        let mut meta = meta();
        meta["x-pad"] = pad;
        message(json!({"name": "probe", "arguments": {}, "_meta": meta}))
    };
    let deepest = padded(json!([[[[["deep"]]]]]));
    let largest = padded(json!([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]));
    let (max_depth, max_values) = (depth_of(&deepest), values_in(&largest));
    assert!(values_in(&deepest) <= max_values && depth_of(&largest) <= max_depth);
    let limits = HttpLimits::default()
        .max_json_depth(max_depth)
        .max_json_values(max_values);
    let pair = Pair {
        direct: serve_local(server_within(true, limits.clone())).await,
        rmcp: serve_local(server_within(false, limits)).await,
    };
    for (case, at_bound) in [
        ("at the depth bound", &deepest),
        ("at the value bound", &largest),
    ] {
        let raw = Post::mcp(UNSENT).rpc(at_bound);
        assert_eq!(served_by(pair.direct.addr, &raw).await, "direct", "{case}");
        assert_eq!(served_by(pair.rmcp.addr, &raw).await, "rmcp", "{case}");
    }
    for (case, past) in [
        ("one level deeper", padded(json!([[[[[["deep"]]]]]]))),
        (
            "one value more",
            padded(json!([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13])),
        ),
    ] {
        let raw = Post::mcp(UNSENT).rpc(&past);
        let (reply, _) = same(&pair, case, &raw).await;
        assert_eq!(reply.status, 400, "{case}: {reply:?}");
        assert_eq!(reply.body["error"]["code"], -32600, "{case}: {reply:?}");
    }
}

/// A call's answer is framed as rmcp frames it: one JSON body of a stated length, not a
/// chunked stream (which costs a chunk header and trailer on every answer).
#[tokio::test]
async fn an_answer_states_its_length_as_rmcps_does() {
    let pair = pair().await;
    for (server, addr) in [("direct", pair.direct.addr), ("rmcp", pair.rmcp.addr)] {
        let response = probe_call().at(addr).response().await;
        let headers = response.headers();
        let length = headers
            .get("content-length")
            .and_then(|length| length.to_str().ok())
            .and_then(|length| length.parse::<usize>().ok());
        let chunked = headers.get("transfer-encoding").cloned();
        let body = response.bytes().await.expect("a body");
        assert_eq!(length, Some(body.len()), "{server}: chunked {chunked:?}");
        assert_eq!(chunked, None, "{server}");
    }
}

/// `serve_listener` hands a request to the MCP path straight to the guard, past axum's
/// routing (`serve::http::listener::Front`): it must answer every request as the router
/// does when the same server's [`SagaServer::router`] is served by axum itself.
#[tokio::test]
async fn the_listeners_shortcut_to_the_guard_answers_as_the_router_does() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port is free");
    let routed = listener
        .local_addr()
        .expect("a bound listener has an address");
    tokio::spawn(std::future::IntoFuture::into_future(axum::serve(
        listener,
        server(true).router(),
    )));
    let shortcut = serve_local(server(true)).await;

    let (first, token) = {
        let mut via_shortcut = send(shortcut.addr, &raw(deploy_params())).await;
        let mut via_router = send(routed, &raw(deploy_params())).await;
        without_token(&mut via_shortcut);
        let token = without_token(&mut via_router);
        assert_eq!(via_shortcut, via_router, "round 1");
        (via_router, token)
    };
    assert_eq!(first.body["result"]["resultType"], "input_required");
    assert!(token.is_some(), "round 1 gives a token: {first:?}");
    assert_eq!(served_by(shortcut.addr, &probe_call()).await, "direct");

    let cases = [
        (
            "a GET without a session",
            probe_call().method(reqwest::Method::GET),
        ),
        (
            "a DELETE without a session",
            probe_call().method(reqwest::Method::DELETE),
        ),
        ("a PUT", probe_call().method(reqwest::Method::PUT)),
        ("a body that is not JSON", probe_call().body("{not json")),
        (
            "another content type",
            probe_call().header("content-type", "text/plain"),
        ),
        (
            "an Origin header",
            probe_call().repeat_header("origin", "http://evil.example"),
        ),
        ("another host", probe_call().header("host", "evil.example")),
        (
            "a notification",
            Post::mcp(UNSENT).rpc(&json!({
                "jsonrpc": "2.0", "method": "notifications/initialized"
            })),
        ),
    ];
    for (case, request) in cases {
        let via_shortcut = send(shortcut.addr, &request).await;
        let via_router = send(routed, &request).await;
        assert_eq!(
            via_shortcut, via_router,
            "{case}: the listener and the router differ"
        );
    }
    for path in ["/other", "/mcp/", "/mcp/x", "/"] {
        let via_shortcut = send_to(shortcut.addr, path, &probe_call()).await;
        let via_router = send_to(routed, path, &probe_call()).await;
        assert_eq!(
            via_shortcut, via_router,
            "{path}: the listener and the router differ"
        );
    }
}

/// A prompt, for a server that lists prompts.
#[saga_prompt]
async fn greeting(name: String) -> Result<Prompt, SagaError> {
    Ok(Prompt::new(vec![PromptMessage::new_text(
        Role::User,
        format!("Greet {name}."),
    )]))
}

/// A resource, and a template of them, for a server that lists resources.
#[saga_resource]
async fn note(uri: String) -> Result<Contents, SagaError> {
    Ok(Contents::text(uri, "text/plain", "a note"))
}

#[saga_resource]
async fn numbered(uri: String, id: String) -> Result<Contents, SagaError> {
    Ok(Contents::text(uri, "text/plain", id))
}

/// A stateless request of a list `method` with `params` (when given), id 7.
fn list_of(method: &str, params: Option<Value>) -> Post {
    let mut message = json!({"jsonrpc": "2.0", "id": 7, "method": method});
    if let Some(params) = params {
        message["params"] = params;
    }
    Post::mcp(UNSENT).rpc(&message)
}

/// The status, content type and bytes of `raw`'s answer from the server at `addr`: a
/// list's bytes must be the same, the order of its members too.
async fn bytes_of(addr: SocketAddr, raw: &Post) -> (u16, Option<String>, Vec<u8>) {
    let response = raw.clone().at(addr).response().await;
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let body = response.bytes().await.expect("a body").to_vec();
    (status, content_type, body)
}

const LISTS: [&str; 5] = [
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "server/discover",
];

/// A stateless listing (`tools/list`, `prompts/list`, `resources/list`,
/// `resources/templates/list`, `server/discover`) is answered by the direct path (the unit tests in
/// `serve::http::direct` check which it takes) exactly as rmcp answers it: the same bytes
/// for each list it takes and for each it leaves to rmcp; on a server with prompts,
/// resources and a task store (whose tools declare their `execution.taskSupport`), and on
/// one without (where a prompt or resource list is a method not found).
#[tokio::test]
async fn lists_answer_the_same() {
    let with_all = |direct: bool| {
        SagaServer::builder()
            .info("probe-server", "1.0.0")
            .keys(KeyRing::from_keys([[5u8; 32]]).expect("one key"))
            .tool(early)
            .tool(probe)
            .prompt(greeting)
            .resource("note://one", note)
            .resource_template("note://numbered/{id}", numbered)
            .tasks(TaskStore::memory())
            .direct_calls(direct)
            .build()
            .expect("the server builds")
    };
    let plain = pair().await;
    let full = Pair {
        direct: serve_local(with_all(true)).await,
        rmcp: serve_local(with_all(false)).await,
    };
    let with_meta = |extra: Value| {
        let mut params = json!({"_meta": meta()});
        if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
            params.extend(extra);
        }
        Some(params)
    };
    let mut no_capabilities = meta();
    no_capabilities
        .as_object_mut()
        .expect("meta")
        .remove("io.modelcontextprotocol/clientCapabilities");
    let mut old_meta = meta();
    old_meta["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let mut progress = meta();
    progress["progressToken"] = json!("p-1");
    let mut compared = 0;
    for method in LISTS {
        let valid = list_of(method, with_meta(json!({})));
        let cases = [
            ("a list", valid.clone()),
            (
                "a list with a cursor",
                list_of(method, with_meta(json!({"cursor": "next"}))),
            ),
            (
                "a null cursor",
                list_of(method, with_meta(json!({"cursor": null}))),
            ),
            (
                "a cursor that is no string",
                list_of(method, with_meta(json!({"cursor": 5}))),
            ),
            (
                "an unknown param",
                list_of(method, with_meta(json!({"extra": [1, 2]}))),
            ),
            (
                "a progress token",
                list_of(method, Some(json!({"_meta": progress}))),
            ),
            ("no params", list_of(method, None)),
            ("no _meta", list_of(method, Some(json!({})))),
            (
                "no capabilities",
                list_of(method, Some(json!({"_meta": no_capabilities}))),
            ),
            (
                "another era's _meta",
                list_of(method, Some(json!({"_meta": old_meta}))),
            ),
            (
                "a string id",
                valid.clone().json(&json!({
                    "jsonrpc": "2.0", "id": "l-1", "method": method, "params": {"_meta": meta()}
                })),
            ),
            (
                "a header naming a call",
                valid.clone().header("mcp-method", "tools/call"),
            ),
            (
                "a header naming another list",
                valid.clone().header(
                    "mcp-method",
                    if method == "tools/list" {
                        "prompts/list"
                    } else {
                        "tools/list"
                    },
                ),
            ),
            ("no Mcp-Method", valid.clone().without("mcp-method")),
            (
                "two Mcp-Method",
                valid.clone().repeat_header("mcp-method", method),
            ),
            (
                "a stray Mcp-Name",
                valid.clone().header("mcp-name", "probe"),
            ),
            (
                "an Origin",
                valid.clone().header("origin", "http://localhost:3000"),
            ),
            (
                "another version header",
                valid.clone().header("mcp-protocol-version", "2025-11-25"),
            ),
            (
                "an Accept without SSE",
                valid.clone().header("accept", "application/json"),
            ),
        ];
        for (servers, name) in [(&plain, "plain"), (&full, "with all")] {
            for (case, raw) in &cases {
                let direct = bytes_of(servers.direct.addr, raw).await;
                let rmcp = bytes_of(servers.rmcp.addr, raw).await;
                assert_eq!(
                    (direct.0, &direct.1, String::from_utf8_lossy(&direct.2)),
                    (rmcp.0, &rmcp.1, String::from_utf8_lossy(&rmcp.2)),
                    "{method} on {name}, {case}: the two paths answer differently"
                );
                compared += 1;
            }
        }
    }
    assert_eq!(compared, LISTS.len() * 19 * 2);
    // Not vacuous: the lists are lists, a task tool declares its support, and a server
    // without prompts has no prompt list.
    let listed = send(
        full.direct.addr,
        &list_of("tools/list", with_meta(json!({}))),
    )
    .await;
    let tools = listed.body["result"]["tools"].as_array().expect("a list");
    let declared = tools
        .iter()
        .find(|tool| tool["name"] == "early")
        .expect("early is listed");
    assert_eq!(
        declared["execution"]["taskSupport"], "optional",
        "{listed:?}"
    );
    for (method, member, name) in [
        ("prompts/list", "prompts", "greeting"),
        ("resources/list", "resources", "note"),
        ("resources/templates/list", "resourceTemplates", "numbered"),
    ] {
        let listed = send(full.direct.addr, &list_of(method, with_meta(json!({})))).await;
        assert_eq!(
            listed.body["result"][member][0]["name"], name,
            "{method}: {listed:?}"
        );
        let none = send(plain.direct.addr, &list_of(method, with_meta(json!({})))).await;
        assert_eq!(none.body["error"]["code"], -32601, "{method}: {none:?}");
    }
    let discovered = send(
        full.direct.addr,
        &list_of("server/discover", with_meta(json!({}))),
    )
    .await;
    let result = &discovered.body["result"];
    assert_eq!(result["supportedVersions"][0], VERSION, "{discovered:?}");
    assert!(
        result["capabilities"]["prompts"].is_object()
            && result["capabilities"]["resources"].is_object(),
        "{discovered:?}"
    );
}

/// Becomes a task at its checkpoint, then asks where to go.
#[saga_tool(task)]
async fn waiter() -> Result<String, SagaError> {
    checkpoint().await;
    let target: deploy::Target = elicit("Where to?").await?;
    Ok(target.target)
}

/// `_meta` of a client of the tasks extension.
fn task_meta() -> Value {
    let mut meta = meta();
    meta["io.modelcontextprotocol/clientCapabilities"]["extensions"] =
        json!({"io.modelcontextprotocol/tasks": {}});
    meta
}

/// A stateless request of a task `method` for `task_id`, with `extra` params.
fn task_request(method: &str, task_id: &str, meta: Value, extra: Value) -> Post {
    let mut params = json!({"taskId": task_id, "_meta": meta});
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    Post::mcp(UNSENT).rpc(&json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params}))
}

/// A reply with what differs between two servers' tasks (their ids, their clocks) set
/// aside, and `id` written as `<task>`.
fn masked(mut reply: Reply, id: &str) -> Reply {
    let text = reply.body.to_string().replace(id, "<task>");
    reply.body = serde_json::from_str(&text).expect("JSON");
    for field in ["createdAt", "lastUpdatedAt"] {
        if let Some(value) = reply.body.pointer_mut(&format!("/result/{field}")) {
            *value = json!("<time>");
        }
    }
    reply
}

/// Starts `waiter` as a task on the server at `addr`; its id, once it waits for input.
async fn waiting_task(addr: SocketAddr) -> String {
    let call = raw(json!({"name": "waiter", "arguments": {}, "_meta": task_meta()}));
    let begun = send(addr, &call).await;
    let id = begun.body["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {begun:?}"))
        .to_owned();
    for _ in 0..200 {
        let seen = send(
            addr,
            &task_request("tasks/get", &id, task_meta(), json!({})),
        )
        .await;
        if seen.body["result"]["status"] == "input_required" {
            return id;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the task never waited for its input");
}

/// A request about the task whose id it is given.
type OfTask = Box<dyn Fn(&str) -> Post>;

/// `tasks/get`, `tasks/update` and `tasks/cancel` of a stateless client are answered by
/// the direct path (the unit tests in `serve::http::direct` check which it takes) as rmcp
/// answers them: the same status, type and body, the task's id and clocks set aside, for
/// a task's whole life and for every request rmcp would refuse or read otherwise.
#[tokio::test]
async fn task_requests_answer_the_same() {
    let with_tasks = |direct: bool| {
        SagaServer::builder()
            .info("probe-server", "1.0.0")
            .keys(KeyRing::from_keys([[5u8; 32]]).expect("one key"))
            .tool(waiter)
            .tasks(TaskStore::memory())
            .direct_calls(direct)
            .build()
            .expect("the server builds")
    };
    let tasked = Pair {
        direct: serve_local(with_tasks(true)).await,
        rmcp: serve_local(with_tasks(false)).await,
    };
    let plain = pair().await;
    let ids = (
        waiting_task(tasked.direct.addr).await,
        waiting_task(tasked.rmcp.addr).await,
    );
    // Each request of `of` for the task on each server; both answers must agree.
    let alike = |case: &'static str, of: OfTask| {
        let (direct_id, rmcp_id) = (ids.0.clone(), ids.1.clone());
        let (direct_addr, rmcp_addr) = (tasked.direct.addr, tasked.rmcp.addr);
        async move {
            let direct = masked(send(direct_addr, &of(&direct_id)).await, &direct_id);
            let rmcp = masked(send(rmcp_addr, &of(&rmcp_id)).await, &rmcp_id);
            assert_eq!(direct, rmcp, "{case}: the two paths answer differently");
            direct
        }
    };
    let get = |meta: fn() -> Value, extra: Value| -> OfTask {
        Box::new(move |id| task_request("tasks/get", id, meta(), extra.clone()))
    };
    let waiting = alike("get a waiting task", get(task_meta, json!({}))).await;
    assert_eq!(
        waiting.body["result"]["status"], "input_required",
        "{waiting:?}"
    );
    let key = waiting.body["result"]["inputRequests"]
        .as_object()
        .and_then(|requests| requests.keys().next().cloned())
        .unwrap_or_else(|| panic!("an input request: {waiting:?}"));
    let refusals: Vec<(&'static str, OfTask)> = vec![
        ("without the tasks capability", get(meta, json!({}))),
        (
            "with inputResponses",
            get(task_meta, json!({"inputResponses": {}})),
        ),
        ("with an unknown param", get(task_meta, json!({"extra": 1}))),
        (
            "an unknown task",
            Box::new(|_| task_request("tasks/get", "no-such-task", task_meta(), json!({}))),
        ),
        (
            "another task's Mcp-Name",
            Box::new(|id| {
                task_request("tasks/get", id, task_meta(), json!({})).header("mcp-name", "other")
            }),
        ),
        (
            "no Mcp-Name",
            Box::new(|id| {
                task_request("tasks/get", id, task_meta(), json!({})).without("mcp-name")
            }),
        ),
        (
            "a header naming another task method",
            Box::new(|id| {
                task_request("tasks/get", id, task_meta(), json!({}))
                    .header("mcp-method", "tasks/cancel")
            }),
        ),
        (
            "an update without answers",
            Box::new(|id| task_request("tasks/update", id, task_meta(), json!({}))),
        ),
        (
            "an update of an unknown key",
            Box::new(|id| {
                task_request(
                    "tasks/update",
                    id,
                    task_meta(),
                    json!({"inputResponses": {"no-such-key": {"action": "decline"}}}),
                )
            }),
        ),
        (
            "a cancel of an unknown task",
            Box::new(|_| task_request("tasks/cancel", "no-such-task", task_meta(), json!({}))),
        ),
    ];
    for (case, of) in refusals {
        alike(case, of).await;
    }
    // The task goes on with its answer, on both, and ends alike.
    let answer =
        json!({"inputResponses": {key.clone(): {"action": "accept", "content": {"target": "eu"}}}});
    let update = alike(
        "an update",
        Box::new(move |id| task_request("tasks/update", id, task_meta(), answer.clone())),
    )
    .await;
    assert!(update.body.get("result").is_some(), "{update:?}");
    // Each server's worker ends it in its own time: the answers are compared once both
    // have.
    for (addr, id) in [(tasked.direct.addr, &ids.0), (tasked.rmcp.addr, &ids.1)] {
        let mut polls = 0;
        while send(addr, &task_request("tasks/get", id, task_meta(), json!({})))
            .await
            .body["result"]["status"]
            != "completed"
        {
            polls += 1;
            assert!(polls < 500, "the task never completed");
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
    let ended = alike("get an ended task", get(task_meta, json!({}))).await;
    assert_eq!(ended.body["result"]["status"], "completed", "{ended:?}");
    alike(
        "a cancel of an ended task",
        Box::new(|id| task_request("tasks/cancel", id, task_meta(), json!({}))),
    )
    .await;
    // A server without tasks has no task methods, on either path.
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let extra = if method == "tasks/update" {
            json!({"inputResponses": {}})
        } else {
            json!({})
        };
        let request = task_request(method, "t-1", task_meta(), extra);
        let (seen, _) = same(&plain, method, &request).await;
        assert_eq!(seen.body["error"]["code"], -32601, "{method}: {seen:?}");
    }
}

/// A prompt that asks first.
#[saga_prompt]
async fn asking() -> Result<Prompt, SagaError> {
    let target: deploy::Target = elicit("Where to?").await?;
    Ok(Prompt::new(vec![PromptMessage::new_text(
        Role::User,
        format!("Deploy to {}.", target.target),
    )]))
}

/// A stateless request of a catalog `method` with `params` (and `_meta`), id 5.
fn catalog_request(method: &str, mut params: Value) -> Post {
    params["_meta"] = meta();
    Post::mcp(UNSENT).rpc(&json!({"jsonrpc": "2.0", "id": 5, "method": method, "params": params}))
}

/// `prompts/get` and `resources/read` of a stateless client are answered by the direct
/// path (the unit tests in `serve::http::direct` check which it takes) as rmcp answers
/// them: a prompt, one that asks and its second round, a resource and a templated one,
/// and each request rmcp refuses or answers otherwise.
#[tokio::test]
async fn catalog_requests_answer_the_same() {
    let with_catalog = |direct: bool| {
        SagaServer::builder()
            .info("probe-server", "1.0.0")
            .keys(KeyRing::from_keys([[5u8; 32]]).expect("one key"))
            .tool(probe)
            .prompt(greeting)
            .prompt(asking)
            .resource("note://one", note)
            .resource_template("note://numbered/{id}", numbered)
            .direct_calls(direct)
            .build()
            .expect("the server builds")
    };
    let full = Pair {
        direct: serve_local(with_catalog(true)).await,
        rmcp: serve_local(with_catalog(false)).await,
    };
    let plain = pair().await;
    let greet = catalog_request(
        "prompts/get",
        json!({"name": "greeting", "arguments": {"name": "Ada"}}),
    );
    let read = catalog_request("resources/read", json!({"uri": "note://one"}));
    let mut progress = meta();
    progress["progressToken"] = json!("p-1");
    let cases = [
        ("a prompt", greet.clone()),
        (
            "a prompt without its argument",
            catalog_request("prompts/get", json!({"name": "greeting"})),
        ),
        (
            "an unknown prompt",
            catalog_request("prompts/get", json!({"name": "nothing"})),
        ),
        (
            "a prompt's other Mcp-Name",
            greet.clone().header("mcp-name", "asking"),
        ),
        (
            "a prompt without Mcp-Name",
            greet.clone().without("mcp-name"),
        ),
        (
            "a prompt that asks for progress",
            greet
                .clone()
                .json(&json!({"jsonrpc": "2.0", "id": 5, "method": "prompts/get",
                "params": {"name": "greeting", "arguments": {"name": "Ada"}, "_meta": progress}})),
        ),
        (
            "a prompt under a header naming a resource read",
            greet.clone().header("mcp-method", "resources/read"),
        ),
        ("a resource", read.clone()),
        (
            "a templated resource",
            catalog_request("resources/read", json!({"uri": "note://numbered/7"})),
        ),
        (
            "an unknown resource",
            catalog_request("resources/read", json!({"uri": "note://two"})),
        ),
        (
            "a resource's other Mcp-Name",
            read.clone().header("mcp-name", "note://numbered/7"),
        ),
        (
            "a resource with an unknown param",
            catalog_request("resources/read", json!({"uri": "note://one", "extra": 1})),
        ),
    ];
    for (servers, name) in [(&full, "with a catalog"), (&plain, "without")] {
        for (case, raw) in &cases {
            same(servers, &format!("{name}, {case}"), raw).await;
        }
    }
    // A prompt that asks: its first round, then its second with rmcp's token (both
    // servers hold the same key), alike.
    let (first, token) = same(
        &full,
        "a prompt that asks",
        &catalog_request("prompts/get", json!({"name": "asking"})),
    )
    .await;
    assert_eq!(
        first.body["result"]["resultType"], "input_required",
        "{first:?}"
    );
    let key = first.body["result"]["inputRequests"]
        .as_object()
        .and_then(|requests| requests.keys().next().cloned())
        .unwrap_or_else(|| panic!("an input request: {first:?}"));
    let second = catalog_request(
        "prompts/get",
        json!({"name": "asking", "requestState": token.expect("a token"),
               "inputResponses": {key: {"action": "accept", "content": {"target": "eu"}}}}),
    );
    let (done, _) = same(&full, "the asking prompt's second round", &second).await;
    assert_eq!(
        done.body["result"]["messages"][0]["content"]["text"], "Deploy to eu.",
        "{done:?}"
    );
    // Not vacuous: the prompt and the resources are read.
    let greeted = send(full.direct.addr, &greet).await;
    assert_eq!(
        greeted.body["result"]["messages"][0]["content"]["text"], "Greet Ada.",
        "{greeted:?}"
    );
    let noted = send(full.direct.addr, &read).await;
    assert_eq!(
        noted.body["result"]["contents"][0]["text"], "a note",
        "{noted:?}"
    );
}

/// `T`, except that it refuses every first round with the error a tool may make of a
/// resource it cannot find (`-32002`).
struct FindsNothing<T>(T);

impl<T: SagaTool> SagaTool for FindsNothing<T> {
    type State = T::State;

    fn tool(&self) -> saga_runtime::rmcp::model::Tool {
        self.0.tool()
    }

    fn version(&self) -> u16 {
        self.0.version()
    }

    fn layout(
        &self,
    ) -> Result<saga_runtime::engine::StateLayout, saga_runtime::engine::LayoutError> {
        self.0.layout()
    }

    fn build_tag(&self) -> u16 {
        self.0.build_tag()
    }

    fn start(
        &self,
        _: saga_runtime::rmcp::model::JsonObject,
    ) -> Result<Self::State, saga_runtime::rmcp::ErrorData> {
        Err(saga_runtime::rmcp::ErrorData::resource_not_found(
            "no such repository",
            None,
        ))
    }

    fn step(
        &self,
        state: Self::State,
        answers: Answers,
        cx: &SagaContext,
    ) -> impl Future<Output = Step<Self::State>> + Send {
        self.0.step(state, answers, cx)
    }

    fn restate(
        &self,
        state: Self::State,
        cx: &SagaContext,
    ) -> Option<Vec<saga_runtime::engine::Request>> {
        self.0.restate(state, cx)
    }
}

/// A call's error is passed on as the tool made it, on both paths: rmcp maps a missing
/// resource's `-32002` to 2026-07-28's `-32602` for every other method, but returns a
/// `tools/call`'s error before that (the review of the direct path's listings found the
/// direct path mapping it).
#[tokio::test]
async fn a_calls_own_error_code_is_passed_on_alike() {
    let build = |direct: bool| {
        SagaServer::builder()
            .info("probe-server", "1.0.0")
            .keys(KeyRing::from_keys([[5u8; 32]]).expect("one key"))
            .tool(FindsNothing(probe))
            .direct_calls(direct)
            .build()
            .expect("the server builds")
    };
    let pair = Pair {
        direct: serve_local(build(true)).await,
        rmcp: serve_local(build(false)).await,
    };
    let (seen, _) = same(&pair, "a tool's -32002", &probe_call()).await;
    assert_eq!(seen.body["error"]["code"], -32002, "{seen:?}");
}

/// A prompt that reports progress and logs at two levels, and says which path served it.
#[allow(deprecated)] // logging is deprecated in 2026-07-28 (SEP-2577), still served
#[saga_prompt]
async fn reporting(cx: &SagaContext) -> Result<Prompt, SagaError> {
    cx.progress(1.0, Some(2.0), Some("half".into())).await;
    cx.log(LoggingLevel::Debug, "a detail").await;
    cx.log(LoggingLevel::Info, json!({"step": 1})).await;
    let path = if cx.peer().is_some() {
        "rmcp"
    } else {
        "direct"
    };
    Ok(Prompt::new(vec![PromptMessage::new_text(
        Role::User,
        format!("Reported by {path}."),
    )]))
}

/// A resource that reports progress before its contents.
#[saga_resource]
async fn reported(cx: &SagaContext, uri: String) -> Result<Contents, SagaError> {
    cx.progress(1.0, None, None).await;
    Ok(Contents::text(uri, "text/plain", "reported"))
}

/// A `prompts/get` or `resources/read` that asks for progress or log messages is answered
/// as rmcp answers it: a stream of the notifications its saga sent, then its answer; one
/// JSON message when it sent none it asked for. Served by the direct path (the prompt
/// says which path ran it, and rmcp's answer says "rmcp").
#[tokio::test]
async fn a_catalog_requests_notifications_answer_the_same() {
    let build = |direct: bool| {
        SagaServer::builder()
            .info("probe-server", "1.0.0")
            .keys(KeyRing::from_keys([[5u8; 32]]).expect("one key"))
            .tool(probe)
            .prompt(reporting)
            .prompt(greeting)
            .resource("note://reported", reported)
            .direct_calls(direct)
            .build()
            .expect("the server builds")
    };
    let pair = Pair {
        direct: serve_local(build(true)).await,
        rmcp: serve_local(build(false)).await,
    };
    let asked = |method: &str, params: Value, extra: &[(&str, Value)]| {
        let mut meta = meta();
        for (key, value) in extra {
            meta[*key] = value.clone();
        }
        let mut params = params;
        params["_meta"] = meta;
        Post::mcp(UNSENT)
            .rpc(&json!({"jsonrpc": "2.0", "id": 5, "method": method, "params": params}))
    };
    let report = || json!({"name": "reporting"});
    let token = ("progressToken", json!("p-1"));
    let info = ("io.modelcontextprotocol/logLevel", json!("info"));
    let debug = ("io.modelcontextprotocol/logLevel", json!("debug"));
    let cases = [
        (
            "progress",
            asked("prompts/get", report(), std::slice::from_ref(&token)),
            2,
        ),
        (
            "the info level",
            asked("prompts/get", report(), std::slice::from_ref(&info)),
            2,
        ),
        (
            "the debug level",
            asked("prompts/get", report(), &[debug]),
            3,
        ),
        (
            "both",
            asked("prompts/get", report(), &[token.clone(), info.clone()]),
            3,
        ),
        (
            "a token that is not one",
            asked(
                "prompts/get",
                report(),
                &[("progressToken", json!({"not": "a token"}))],
            ),
            1,
        ),
        (
            "a prompt that sends nothing",
            asked(
                "prompts/get",
                json!({"name": "greeting", "arguments": {"name": "Ada"}}),
                &[token.clone(), info],
            ),
            1,
        ),
        (
            "an unknown prompt",
            asked(
                "prompts/get",
                json!({"name": "nothing"}),
                std::slice::from_ref(&token),
            ),
            1,
        ),
        (
            "a resource",
            asked(
                "resources/read",
                json!({"uri": "note://reported"}),
                std::slice::from_ref(&token),
            ),
            2,
        ),
    ];
    for (case, raw, messages) in &cases {
        let direct = send(pair.direct.addr, raw).await;
        let rmcp = send(pair.rmcp.addr, raw).await;
        assert_eq!(direct.status, rmcp.status, "{case}");
        assert_eq!(direct.content_type, rmcp.content_type, "{case}");
        let mut seen = events(&direct);
        let mut theirs = events(&rmcp);
        // The prompt names the path that ran it: required to be its own, then set aside.
        for (answers, path) in [(&mut seen, "direct"), (&mut theirs, "rmcp")] {
            if let Some(text) = answers
                .last_mut()
                .and_then(|answer| answer.pointer_mut("/result/messages/0/content/text"))
                && (*text == json!("Reported by rmcp.") || *text == json!("Reported by direct."))
            {
                assert_eq!(*text, json!(format!("Reported by {path}.")), "{case}");
                *text = json!("Reported.");
            }
        }
        assert_eq!(seen, theirs, "{case}: the two paths answer differently");
        notices_then_answer(case, &seen, direct.content_type.as_deref(), *messages, 5);
    }
}

/// The methods a stateless client may send that saga does not serve (`ping`,
/// `completion/complete`, `logging/setLevel`, `resources/subscribe`,
/// `resources/unsubscribe`, `subscriptions/listen`) are refused by the direct path (the
/// unit tests in `serve::http::direct` check which it takes) exactly as rmcp refuses
/// them, byte for byte; and each request rmcp answers otherwise (params it cannot read, a
/// wrong `Mcp-Name`, no `_meta`) is answered alike.
#[tokio::test]
async fn unserved_methods_answer_the_same() {
    let with_resources = |direct: bool| {
        SagaServer::builder()
            .info("probe-server", "1.0.0")
            .keys(KeyRing::from_keys([[5u8; 32]]).expect("one key"))
            .tool(probe)
            .prompt(greeting)
            .resource("note://one", note)
            .direct_calls(direct)
            .build()
            .expect("the server builds")
    };
    // With prompts, saga declares completions, and completes nothing: an empty one.
    let full = Pair {
        direct: serve_local(with_resources(true)).await,
        rmcp: serve_local(with_resources(false)).await,
    };
    let plain = pair().await;
    let request = |method: &str, mut params: Value| {
        params["_meta"] = meta();
        Post::mcp(UNSENT)
            .rpc(&json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params}))
    };
    let complete = json!({"ref": {"type": "ref/prompt", "name": "greeting"},
                          "argument": {"name": "name", "value": "A"}});
    let subscribe = request("resources/subscribe", json!({"uri": "note://one"}));
    let listen = json!({"notifications": {"toolsListChanged": true}});
    let cases = [
        ("ping", request("ping", json!({}))),
        (
            "ping with another member",
            request("ping", json!({"extra": 1})),
        ),
        (
            "ping under an Mcp-Name",
            request("ping", json!({})).header("mcp-name", "anything"),
        ),
        (
            "ping without _meta",
            Post::mcp(UNSENT).rpc(&json!({"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {}})),
        ),
        (
            "ping without params",
            Post::mcp(UNSENT).rpc(&json!({"jsonrpc": "2.0", "id": 9, "method": "ping"})),
        ),
        ("a completion", request("completion/complete", complete.clone())),
        (
            "a completion without its argument",
            request("completion/complete", json!({"ref": complete["ref"]})),
        ),
        (
            "a log level",
            request("logging/setLevel", json!({"level": "info"})),
        ),
        (
            "a log level that is not one",
            request("logging/setLevel", json!({"level": "loud"})),
        ),
        ("a subscription", subscribe.clone()),
        (
            "a subscription to an unknown resource",
            request("resources/subscribe", json!({"uri": "note://two"})),
        ),
        (
            "a subscription without Mcp-Name",
            subscribe.clone().without("mcp-name"),
        ),
        (
            "a subscription under another Mcp-Name",
            subscribe.clone().header("mcp-name", "note://two"),
        ),
        (
            "a subscription without a URI",
            request("resources/subscribe", json!({})),
        ),
        (
            "an unsubscription",
            request("resources/unsubscribe", json!({"uri": "note://one"})),
        ),
        ("a listen", request("subscriptions/listen", listen.clone())),
        (
            "a listen without its filter",
            request("subscriptions/listen", json!({})),
        ),
        (
            "a ping under a header naming a completion",
            request("ping", json!({})).header("mcp-method", "completion/complete"),
        ),
        (
            "a ping with its id a float",
            Post::mcp(UNSENT)
                .rpc(&json!({"jsonrpc": "2.0", "id": 9.0, "method": "ping", "params": {"_meta": meta()}})),
        ),
    ];
    for (servers, name) in [(&full, "with prompts and resources"), (&plain, "without")] {
        for (case, raw) in &cases {
            let direct = bytes_of(servers.direct.addr, raw).await;
            let rmcp = bytes_of(servers.rmcp.addr, raw).await;
            assert_eq!(
                direct,
                rmcp,
                "{name}, {case}: {} against {}",
                String::from_utf8_lossy(&direct.2),
                String::from_utf8_lossy(&rmcp.2)
            );
        }
    }
    // Not vacuous: a completion is an empty one with prompts, refused without.
    let (status, _, body) = bytes_of(full.direct.addr, &cases[5].1).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let body: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(body["result"]["completion"]["values"], json!([]), "{body}");
    let (status, _, _) = bytes_of(plain.direct.addr, &cases[5].1).await;
    assert_eq!(status, 404);
    for (case, raw) in &cases[..1] {
        let (status, _, body) = bytes_of(full.direct.addr, raw).await;
        assert_eq!(status, 404, "{case}");
        let body: Value = serde_json::from_slice(&body).expect("JSON");
        assert_eq!(body["error"]["code"], -32601, "{case}: {body}");
    }
}

/// A seed-000 request of `method` with `params` (and `_meta`), id 3.
fn seed_request(method: &str, mut params: Value) -> Post {
    params["_meta"] = meta();
    Post::mcp(UNSENT).rpc(&json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": params}))
}

/// Sends `raw` to both servers and requires the same status, content type and events,
/// each fresh `sagaToken` set aside; returns the rmcp server's answer (its token kept).
async fn same_seed(pair: &Pair, case: &str, raw: &Post) -> Value {
    let direct = send(pair.direct.addr, raw).await;
    let rmcp = send(pair.rmcp.addr, raw).await;
    assert_eq!(direct.status, rmcp.status, "{case}");
    assert_eq!(direct.content_type, rmcp.content_type, "{case}");
    let masked = |reply: &Reply| {
        let mut seen = events(reply);
        for message in &mut seen {
            if let Some(token) = message.pointer_mut("/result/sagaToken") {
                *token = json!("<token>");
            }
        }
        seen
    };
    assert_eq!(
        masked(&direct),
        masked(&rmcp),
        "{case}: the two paths answer differently"
    );
    events(&rmcp).pop().expect("an answer")
}

/// Seed 000's `tools/callSaga` and `tools/resumeSaga` of a stateless client are served by
/// the direct path (the probe says which path ran it; the unit tests in
/// `serve::http::direct` check which requests it takes) and answered as rmcp answers
/// them: a saga's whole life, with the second round resumed from rmcp's token, each
/// refusal of the format, and a call that asks for progress and log messages.
#[tokio::test]
async fn seed_calls_answer_the_same() {
    let pair = pair().await;
    let start = seed_request(
        "tools/callSaga",
        json!({"name": TOOL, "arguments": {"initial_arg": "x", "replicas": 3}}),
    );
    let suspended = same_seed(&pair, "a saga's first round", &start).await;
    assert_eq!(suspended["result"]["state"], "suspended", "{suspended}");
    let token = suspended["result"]["sagaToken"].clone();
    let steps: Vec<Value> = suspended["result"]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|step| json!({"stepId": step["stepId"], "result": {"action": "accept", "content": {"target": "eu", "confirm": true}}}))
        .collect();
    let resume = seed_request(
        "tools/resumeSaga",
        json!({"sagaToken": token, "completedSteps": steps}),
    );
    let resumed = same_seed(&pair, "its second round", &resume).await;
    assert!(resumed.get("result").is_some(), "{resumed}");
    let mut with_progress = meta();
    with_progress["progressToken"] = json!("p-1");
    with_progress["io.modelcontextprotocol/logLevel"] = json!("info");
    let cases = [
        (
            "an unknown tool",
            seed_request("tools/callSaga", json!({"name": "nothing"})),
        ),
        (
            "no name",
            seed_request("tools/callSaga", json!({"arguments": {}})),
        ),
        (
            "an unknown member",
            seed_request("tools/callSaga", json!({"name": "probe", "extra": 1})),
        ),
        ("only _meta", seed_request("tools/callSaga", json!({}))),
        (
            // The first bad key named: the params' order is kept (the review found the
            // direct path taking `_meta` out with a swap that reordered them).
            "two unknown members",
            Post::mcp(UNSENT).rpc(
                &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/callSaga",
                "params": {"_meta": meta(), "name": "probe", "x": 1, "y": 2}}),
            ),
        ),
        (
            "two members of the wrong type",
            Post::mcp(UNSENT).rpc(
                &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/resumeSaga",
                "params": {"_meta": meta(), "sagaToken": 5, "completedSteps": 7}}),
            ),
        ),
        (
            "a token that is not one",
            seed_request("tools/resumeSaga", json!({"sagaToken": "bm90aGluZw.xyz"})),
        ),
        (
            "a token of an unknown tool",
            seed_request(
                "tools/resumeSaga",
                json!({"sagaToken": "bm90aGluZw.xyz", "completedSteps": []}),
            ),
        ),
        (
            "a step with neither result nor error",
            seed_request(
                "tools/resumeSaga",
                json!({"sagaToken": token, "completedSteps": [{"stepId": "s"}]}),
            ),
        ),
        (
            "a tool that fails",
            seed_request("tools/callSaga", json!({"name": "refuse_politely"})),
        ),
        (
            "progress and log messages",
            Post::mcp(UNSENT).rpc(
                &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/callSaga",
                "params": {"name": "reporter", "arguments": {"ask": false, "fail": false},
                           "_meta": with_progress}}),
            ),
        ),
        (
            "without _meta",
            Post::mcp(UNSENT).rpc(
                &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/callSaga",
                "params": {"name": "probe"}}),
            ),
        ),
        (
            "under a header naming the other method",
            start.clone().header("mcp-method", "tools/resumeSaga"),
        ),
    ];
    for (case, raw) in &cases {
        same_seed(&pair, case, raw).await;
    }
    // Not vacuous: the probe names the direct path, and the streamed case is a stream.
    let probing = seed_request("tools/callSaga", json!({"name": "probe"}));
    let seen = send(pair.direct.addr, &probing).await;
    assert_eq!(
        seen.body["result"]["content"][0]["text"], "direct",
        "{seen:?}"
    );
    let seen = send(pair.rmcp.addr, &probing).await;
    assert_eq!(
        seen.body["result"]["content"][0]["text"], "rmcp",
        "{seen:?}"
    );
    let (_, notifying) = cases
        .iter()
        .find(|(case, _)| *case == "progress and log messages")
        .expect("the case");
    let streamed = send(pair.direct.addr, notifying).await;
    assert_eq!(
        streamed.content_type.as_deref(),
        Some("text/event-stream"),
        "{streamed:?}"
    );
}

/// A stateless client's notifications are accepted by the direct path (the unit tests in
/// `serve::http::direct` check which it takes) as rmcp's transport accepts them, `202`
/// with no body, and every post rmcp answers otherwise (a mismatched `Mcp-Method`, a
/// message with an id, a custom method) is answered alike.
#[tokio::test]
async fn notifications_of_a_client_are_accepted_alike() {
    let pair = pair().await;
    let notice = |method: &str, params: Option<Value>| {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        Post::mcp(UNSENT).rpc(&message)
    };
    let cases = [
        (
            "a cancellation",
            notice(
                "notifications/cancelled",
                Some(json!({"requestId": 7, "reason": "no longer needed"})),
            ),
        ),
        (
            "a cancellation without its request",
            notice("notifications/cancelled", Some(json!({"reason": "x"}))),
        ),
        (
            "progress",
            notice(
                "notifications/progress",
                Some(json!({"progressToken": "p", "progress": 1})),
            ),
        ),
        ("initialized", notice("notifications/initialized", None)),
        (
            "initialized with _meta",
            notice("notifications/initialized", Some(json!({"_meta": meta()}))),
        ),
        (
            "roots changed",
            notice("notifications/roots/list_changed", Some(json!({}))),
        ),
        (
            "params that are not an object",
            notice("notifications/initialized", Some(json!([1]))),
        ),
        (
            "a custom notification",
            notice("notifications/custom", Some(json!({"a": 1}))),
        ),
        (
            "under a header naming another",
            notice("notifications/initialized", None)
                .header("mcp-method", "notifications/cancelled"),
        ),
        (
            "with an id",
            Post::mcp(UNSENT).rpc(&json!({"jsonrpc": "2.0", "id": 1, "method": "notifications/initialized"})),
        ),
        (
            "without the version header",
            notice("notifications/initialized", None).without("mcp-protocol-version"),
        ),
        (
            "a key named twice",
            notice("notifications/initialized", None).body(
                r#"{"jsonrpc":"2.0","method":"notifications/initialized","method":"notifications/initialized"}"#,
            ),
        ),
    ];
    for (case, raw) in &cases {
        let direct = bytes_of(pair.direct.addr, raw).await;
        let rmcp = bytes_of(pair.rmcp.addr, raw).await;
        assert_eq!(
            direct,
            rmcp,
            "{case}: {} against {}",
            String::from_utf8_lossy(&direct.2),
            String::from_utf8_lossy(&rmcp.2)
        );
    }
    // Not vacuous: accepted, with no body.
    let (status, _, body) = bytes_of(pair.direct.addr, &cases[0].1).await;
    assert_eq!((status, body.len()), (202, 0));
}
