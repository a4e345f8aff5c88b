//! The tests' one raw-HTTP client: requests written header by header and byte by byte, so
//! that what a test asserts is exactly what a client sends and sees.
//!
//! - [`Post`]: one request to a server's MCP endpoint, with MCP 2026-07-28's headers unless
//!   told otherwise. Its answer comes as `(status, body)`, the body parsed as JSON (or a
//!   JSON string holding the text when it is not JSON); as a [`Reply`], which keeps the
//!   content type; or as the raw response, for a stream.
//! - [`Call`]: one `tools/call` round of MCP 2026-07-28 (MRTR), built up field by field.
//! - The deploy example's rounds and answers ([`deploy_round1`], [`accept_target`], …), and
//!   what a round may answer ([`asks`], [`complete`], [`refused`], …).
//!
//! Sessions (MCP 2025-11-25) are [`super::session`]'s, and the tasks extension's requests
//! [`super::tasks`]'s; both send through [`Post`].

use std::net::SocketAddr;
use std::time::Duration;

pub use reqwest::{Method, StatusCode};
use saga_runtime::state::INVALID_STATE_MESSAGE;
use serde_json::{Map, Value, json};

/// The protocol version raw-HTTP tests speak.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// An HTTP client for tests: no proxy, and no request longer than 60 s.
pub fn client() -> reqwest::Client {
    builder().build().expect("an HTTP client")
}

/// A [`client`] that keeps no idle connection: for requests after which the server closes
/// the connection (a body over the limit), where a pooled one would fail the next request.
pub fn one_shot_client() -> reqwest::Client {
    builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("an HTTP client")
}

/// A [`one_shot_client`] whose connections come from `address` (any of 127.0.0.0/8 on
/// Linux): another machine, as the server's per-address pools see it.
pub fn client_at(address: &str) -> reqwest::Client {
    builder()
        .pool_max_idle_per_host(0)
        .local_address(address.parse::<std::net::IpAddr>().expect("an IP address"))
        .build()
        .expect("an HTTP client")
}

fn builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(60))
}

/// The `_meta` MCP 2026-07-28 requires of every request, declaring `capabilities`.
pub fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// Every client capability a saga may need: elicitation, sampling and roots.
pub fn every_capability() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

/// A JSON-RPC request.
pub fn request(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// `message` with the `_meta` of a 2026-07-28 client that declares every capability, unless
/// its params carry a `_meta` already.
pub fn with_meta(mut message: Value) -> Value {
    if let Some(params) = message.get_mut("params").and_then(Value::as_object_mut) {
        params
            .entry("_meta")
            .or_insert_with(|| meta(every_capability()));
    }
    message
}

/// The `Mcp-Name` MCP 2026-07-28 requires beside `message`, for the methods that have one:
/// the tool's or prompt's `name`, the resource's `uri`, the task's `taskId`.
pub fn mcp_name(message: &Value) -> Option<&str> {
    let key = match message["method"].as_str()? {
        "tools/call" | "prompts/get" => "name",
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return None,
    };
    message["params"][key].as_str()
}

/// Whether `response` is a stream of server-sent events.
pub fn is_event_stream(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"))
}

/// What a client sees of a response: its status, content type and body (JSON, or a JSON
/// string holding the text when it is not JSON).
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub status: StatusCode,
    pub content_type: Option<String>,
    pub body: Value,
}

/// One raw HTTP request, `POST` to an MCP endpoint unless told otherwise.
#[derive(Debug, Clone)]
pub struct Post {
    client: Option<reqwest::Client>,
    method: Method,
    url: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Post {
    /// A POST to `url` with `Content-Type: application/json`, `Accept: application/json,
    /// text/event-stream` and `MCP-Protocol-Version: 2026-07-28`, and no body yet.
    pub fn to(url: impl Into<String>) -> Self {
        Self {
            client: None,
            method: Method::POST,
            url: url.into(),
            headers: vec![
                ("content-type".into(), "application/json".into()),
                (
                    "accept".into(),
                    "application/json, text/event-stream".into(),
                ),
                ("mcp-protocol-version".into(), PROTOCOL_VERSION.into()),
            ],
            body: Vec::new(),
        }
    }

    /// [`Post::to`] the MCP endpoint (`/mcp`) of the server at `addr`.
    pub fn mcp(addr: SocketAddr) -> Self {
        Self::to(format!("http://{addr}/mcp"))
    }

    /// Sends `message` (a JSON-RPC message) with the headers MCP 2026-07-28 derives from
    /// it: `Mcp-Method`, and `Mcp-Name` when the method has one (see [`mcp_name`]).
    pub fn rpc(self, message: &Value) -> Self {
        let post = match message["method"].as_str() {
            Some(method) => self.header("mcp-method", method),
            None => self,
        };
        let post = match mcp_name(message) {
            Some(name) => post.header("mcp-name", name),
            None => post,
        };
        post.json(message)
    }

    /// Another HTTP method.
    pub fn method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }

    /// Another path on the same server (`/other` for `http://host/other`).
    pub fn path(mut self, path: &str) -> Self {
        let (host, _) = self.host_and_path();
        self.url = format!("http://{host}{path}");
        self
    }

    /// The same request to the server at `addr`, on the same path.
    pub fn at(mut self, addr: SocketAddr) -> Self {
        let (_, path) = self.host_and_path();
        self.url = format!("http://{addr}{path}");
        self
    }

    fn host_and_path(&self) -> (String, String) {
        let rest = self.url.strip_prefix("http://").expect("an http:// URL");
        let at = rest.find('/').unwrap_or(rest.len());
        (rest[..at].to_owned(), rest[at..].to_owned())
    }

    /// Sets the header `name` (in place of any of that name, whatever its case); an empty
    /// `value` leaves it out.
    pub fn header(self, name: &str, value: &str) -> Self {
        let mut post = self.without(name);
        if !value.is_empty() {
            post.headers.push((name.to_owned(), value.to_owned()));
        }
        post
    }

    /// [`Post::header`] for each of `headers`, in order.
    pub fn headers(self, headers: &[(&str, &str)]) -> Self {
        headers
            .iter()
            .fold(self, |post, (name, value)| post.header(name, value))
    }

    /// Adds one more header `name`, keeping any already there: a header sent twice.
    pub fn repeat_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Leaves the header `name` out.
    pub fn without(mut self, name: &str) -> Self {
        self.headers
            .retain(|(header, _)| !header.eq_ignore_ascii_case(name));
        self
    }

    /// The body, as these bytes.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    /// The body, as this JSON.
    pub fn json(self, body: &Value) -> Self {
        self.body(serde_json::to_vec(body).expect("JSON serializes"))
    }

    /// Sends through `client` (its pool, its timeouts) instead of a fresh [`client`].
    pub fn with_client(mut self, client: &reqwest::Client) -> Self {
        self.client = Some(client.clone());
        self
    }

    /// Sends it; the response, or the transport's failure.
    pub async fn try_response(self) -> Result<reqwest::Response, reqwest::Error> {
        let client = self.client.unwrap_or_else(client);
        let mut request = client.request(self.method, &self.url);
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        request.body(self.body).send().await
    }

    /// Sends it; the response (to read a stream, or its headers).
    pub async fn response(self) -> reqwest::Response {
        self.try_response().await.expect("the server answers")
    }

    /// Sends it; the status, content type and whole body, or the transport's failure
    /// (connection refused or reset, the response cut off).
    pub async fn try_reply(self) -> Result<Reply, reqwest::Error> {
        let response = self.try_response().await?;
        let status = response.status();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let text = response.text().await?;
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Ok(Reply {
            status,
            content_type,
            body,
        })
    }

    /// Sends it; the status, content type and whole body.
    pub async fn reply(self) -> Reply {
        self.try_reply().await.expect("the server answers")
    }

    /// Sends it; the status and the whole body, or the transport's failure.
    pub async fn try_send(self) -> Result<(StatusCode, Value), reqwest::Error> {
        let reply = self.try_reply().await?;
        Ok((reply.status, reply.body))
    }

    /// Sends it; the status and the whole body.
    pub async fn send(self) -> (StatusCode, Value) {
        self.try_send().await.expect("the server answers")
    }
}

// ---------------------------------------------------------------------------------------
// tools/call rounds
// ---------------------------------------------------------------------------------------

/// One `tools/call` round of MCP 2026-07-28, built up field by field: by default from a
/// client that declares elicitation and sampling, with request id 1.
#[derive(Debug, Clone)]
pub struct Call {
    id: Value,
    name: String,
    arguments: Value,
    capabilities: Option<Value>,
    authorization: Option<String>,
    params: Map<String, Value>,
}

impl Call {
    /// A first round of `name` with `arguments`.
    pub fn new(name: &str, arguments: Value) -> Self {
        Self {
            id: json!(1),
            name: name.to_owned(),
            arguments,
            capabilities: Some(json!({"elicitation": {}, "sampling": {}})),
            authorization: None,
            params: Map::new(),
        }
    }

    /// A first round of the deploy example's tool, with `initial_arg` `"x"`.
    pub fn deploy() -> Self {
        Self::new(DEPLOY, json!({"initial_arg": "x"}))
    }

    /// Round 2 of the deploy saga: round 1's `token` resumed with the target `production`.
    pub fn deploy_target(token: impl Into<String>) -> Self {
        Self::deploy().resume(token, accept_target("production"))
    }

    /// Round 3 of the deploy saga: round 2's `token` resumed with the LLM saying `text`.
    pub fn deploy_verdict(token: impl Into<String>, text: &str) -> Self {
        Self::deploy().resume(token, verdict(text))
    }

    /// The next round of the same call: resuming `token` with `answers`.
    pub fn resume(&self, token: impl Into<String>, answers: Value) -> Self {
        self.clone().state(token).answers(answers)
    }

    /// The request id.
    pub fn id(mut self, id: impl Into<Value>) -> Self {
        self.id = id.into();
        self
    }

    /// Another tool (the `Mcp-Name` header follows).
    pub fn name(mut self, name: &str) -> Self {
        name.clone_into(&mut self.name);
        self
    }

    /// Other arguments.
    pub fn arguments(mut self, arguments: Value) -> Self {
        self.arguments = arguments;
        self
    }

    /// The client capabilities its `_meta` declares.
    pub fn capabilities(mut self, capabilities: Value) -> Self {
        self.capabilities = Some(capabilities);
        self
    }

    /// No `_meta` at all.
    pub fn without_meta(mut self) -> Self {
        self.capabilities = None;
        self
    }

    /// Sent with `Authorization: authorization`: another principal.
    pub fn authorization(mut self, authorization: &str) -> Self {
        self.authorization = Some(authorization.to_owned());
        self
    }

    /// Resuming the round `token` (`requestState`) ended.
    pub fn state(self, token: impl Into<String>) -> Self {
        self.param("requestState", json!(token.into()))
    }

    /// With these `inputResponses`.
    pub fn answers(self, responses: Value) -> Self {
        self.param("inputResponses", responses)
    }

    /// With the param `key` set to `value`, beside the others.
    pub fn param(mut self, key: &str, value: Value) -> Self {
        self.params.insert(key.to_owned(), value);
        self
    }

    /// The JSON-RPC message.
    pub fn message(&self) -> Value {
        let mut params = json!({"name": self.name, "arguments": self.arguments});
        if let Some(capabilities) = &self.capabilities {
            params["_meta"] = meta(capabilities.clone());
        }
        if let Some(object) = params.as_object_mut() {
            object.extend(self.params.clone());
        }
        request(self.id.clone(), "tools/call", params)
    }

    /// The request to `addr`, with its transport headers.
    pub fn post(&self, addr: SocketAddr) -> Post {
        let post = Post::mcp(addr).rpc(&self.message());
        match &self.authorization {
            Some(authorization) => post.header("authorization", authorization),
            None => post,
        }
    }

    /// Sends it to `addr`; the status and the body.
    pub async fn send(&self, addr: SocketAddr) -> (StatusCode, Value) {
        self.post(addr).send().await
    }

    /// [`Call::send`] through `client`.
    pub async fn send_with(
        &self,
        client: &reqwest::Client,
        addr: SocketAddr,
    ) -> (StatusCode, Value) {
        self.post(addr).with_client(client).send().await
    }
}

// ---------------------------------------------------------------------------------------
// The deploy example's saga
// ---------------------------------------------------------------------------------------

/// The deploy example's tool.
pub const DEPLOY: &str = "complex_tool";

/// Its text when the deployment goes ahead, to `production`.
pub const DEPLOYED: &str = "Deployment to production initiated successfully based on confirmation.";

/// The answer to its first round: the deployment target `target`.
pub fn accept_target(target: impl Into<Value>) -> Value {
    json!({"elicit-1": {"action": "accept", "content": {"target": target.into()}}})
}

/// The answer to its second round: the LLM's `role` says `content`.
pub fn verdict_as(role: &str, content: Value) -> Value {
    json!({"sample-2": {
        "role": role,
        "content": content,
        "model": "test-model",
        "stopReason": "endTurn"
    }})
}

/// The answer to its second round: the assistant says `text`.
pub fn verdict(text: &str) -> Value {
    verdict_as("assistant", json!({"type": "text", "text": text}))
}

/// Round 1 of the deploy saga as `call` (a [`Call::deploy`], from any caller) to `addr`;
/// the token asking for `elicit-1`.
pub async fn deploy_round1(addr: SocketAddr, call: &Call) -> String {
    let (status, body) = call.send(addr).await;
    asks(status, &body, &["elicit-1"])
}

/// Rounds 1 and 2, the target `production`; the token asking for `sample-2`.
pub async fn deploy_round2(addr: SocketAddr, call: &Call) -> String {
    let token = deploy_round1(addr, call).await;
    let target = accept_target("production");
    let (status, body) = call.resume(token, target).send(addr).await;
    asks(status, &body, &["sample-2"])
}

/// Round 2 of the deploy saga, resuming round 1's `token` (issued by another server) on
/// two servers: the one at `refusing` must refuse it, the one at `taking` take it and ask
/// for `sample-2`. The token of that round.
pub async fn deploy_token_refused_then_taken(
    token: String,
    refusing: SocketAddr,
    taking: SocketAddr,
) -> String {
    let resume = Call::deploy_target(token);
    let (status, body) = resume.send(refusing).await;
    refused(status, &body);
    let (status, body) = resume.send(taking).await;
    asks(status, &body, &["sample-2"])
}

/// Round 1 of the deploy saga at `addr`; round 2, sent `later`, must be refused (the
/// token has expired by then).
pub async fn deploy_token_refused_after(addr: SocketAddr, later: Duration) {
    let token = deploy_round1(addr, &Call::deploy()).await;
    tokio::time::sleep(later).await;
    let (status, body) = Call::deploy_target(token).send(addr).await;
    refused(status, &body);
}

/// The whole saga, the LLM saying yes; the final text.
pub async fn deploy_to_the_end(addr: SocketAddr, call: &Call) -> String {
    let token = deploy_round2(addr, call).await;
    let (status, body) = call.resume(token, verdict("Yes")).send(addr).await;
    complete(status, &body).0
}

// ---------------------------------------------------------------------------------------
// What a round answered
// ---------------------------------------------------------------------------------------

/// The `result` of an answer (HTTP 200, no error) whose `resultType` is `result_type`.
#[track_caller]
fn result_of<'a>(status: StatusCode, body: &'a Value, result_type: &str) -> &'a Value {
    assert_eq!(status, StatusCode::OK, "{body:#}");
    assert!(body.get("error").is_none(), "expected a result: {body:#}");
    let result = &body["result"];
    assert_eq!(result["resultType"], result_type, "{body:#}");
    result
}

/// An `input_required` result: its `requestState` and its `inputRequests`.
#[track_caller]
pub fn input_required(status: StatusCode, body: &Value) -> (String, Value) {
    let result = result_of(status, body, "input_required");
    let token = result["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no requestState: {body:#}"))
        .to_owned();
    assert!(!token.is_empty());
    (token, result["inputRequests"].clone())
}

/// An `input_required` result asking for exactly the keys `keys`; its token.
#[track_caller]
pub fn asks(status: StatusCode, body: &Value, keys: &[&str]) -> String {
    let (token, requests) = input_required(status, body);
    let requests = requests
        .as_object()
        .unwrap_or_else(|| panic!("no inputRequests: {body:#}"));
    let found: Vec<&str> = requests.keys().map(String::as_str).collect();
    assert_eq!(found, keys, "{body:#}");
    token
}

/// A `complete` result; its text and whether it is an error.
#[track_caller]
pub fn complete(status: StatusCode, body: &Value) -> (String, bool) {
    let result = result_of(status, body, "complete");
    assert!(result.get("requestState").is_none(), "{body:#}");
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {body:#}"))
        .to_owned();
    let is_error = result["isError"].as_bool().unwrap_or(false);
    (text, is_error)
}

/// A JSON-RPC error (never a result, never HTTP 5xx); the error.
#[track_caller]
pub fn jsonrpc_error(status: StatusCode, body: &Value) -> Value {
    assert!(!status.is_server_error(), "HTTP {status}: {body:#}");
    assert!(body.get("result").is_none(), "expected an error: {body:#}");
    assert_eq!(body["jsonrpc"], "2.0", "{body:#}");
    body.get("error")
        .unwrap_or_else(|| panic!("HTTP {status}, no JSON-RPC error: {body:#}"))
        .clone()
}

/// Why `(status, body)` is not the one refusal every bad token gets (HTTP 200, JSON-RPC
/// `-32602` with [`INVALID_STATE_MESSAGE`] and no data), if it is not.
pub fn refusal_problem(status: StatusCode, body: &Value) -> Option<String> {
    let ok = status == StatusCode::OK
        && body.get("result").is_none()
        && body["jsonrpc"] == "2.0"
        && body["error"]["code"] == -32602
        && body["error"]["message"] == INVALID_STATE_MESSAGE
        && body["error"].get("data").is_none_or(Value::is_null);
    (!ok).then(|| format!("HTTP {status}: {body:#}"))
}

/// The one refusal every bad token gets.
#[track_caller]
pub fn refused(status: StatusCode, body: &Value) {
    if let Some(problem) = refusal_problem(status, body) {
        panic!("expected -32602 {INVALID_STATE_MESSAGE:?}, got {problem}");
    }
}
