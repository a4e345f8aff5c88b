//! A local server of the OpenAI chat completions API, as OpenAI documents it: `POST
//! /v1/chat/completions` with a bearer key (checked: a wrong one is `401`), a JSON body of
//! `model`, `messages`, `max_tokens` and `temperature`, and a reply of `choices[0].message`.
//! It answers `"echo: <the last user message>"` and keeps every request it was sent, so
//! that a test sees what saga mapped. What it does can be changed: answer slowly, with an
//! error status, with malformed JSON, or with a refusal.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// How the server answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Behaviour {
    /// `echo: <last user message>`.
    Echo,
    /// This text.
    Say(String),
    /// After this long.
    Slow(Duration),
    /// With this status and a body naming a secret of the provider's.
    Status(u16),
    /// With a body that is not JSON.
    Malformed,
    /// With a refusal.
    Refuse,
    /// With status 503 when the last user message contains this text; else as `Echo`.
    FailOn(String),
    /// As `Echo`, naming this model.
    Named(String),
    /// With this status and a body that echoes the request's headers, as some providers'
    /// debug pages do: the bearer key among them.
    EchoHeaders(u16),
    /// A small research agent, for a request that offers tools, decided by what the
    /// conversation holds so far: with no tool results yet, two `search` calls at once
    /// (parallel tool calls: the last user message, then `"saga"`); after those, an
    /// `ask_user` call when that tool is offered; then the answer, `Answer: ` and every
    /// tool result's text joined by ` | ` (`finish_reason` `stop`). A request without
    /// tools is answered as `Echo`.
    Research,
    /// Calls this tool with these arguments (a JSON text, as the API carries it) at every
    /// request: a model that never stops, or asks for a tool it was not offered, or
    /// gives input that does not fit.
    CallTool(String, String),
}

/// The server: its address, and what it was sent.
pub struct FakeOpenAi {
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    state: Arc<Shared>,
    _server: tokio::task::JoinHandle<()>,
}

struct Shared {
    key: String,
    behaviour: Mutex<Behaviour>,
    requests: Mutex<Vec<Value>>,
}

/// The text the provider puts in its error bodies: a test checks it never reaches a client.
pub const PROVIDER_SECRET: &str = "provider-internal-detail-7f3a";

impl FakeOpenAi {
    /// Starts one that accepts the bearer key `key`.
    pub async fn start(key: &str) -> Self {
        let state = Arc::new(Shared {
            key: key.to_owned(),
            behaviour: Mutex::new(Behaviour::Echo),
            requests: Mutex::new(Vec::new()),
        });
        let app = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(complete))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let addr: SocketAddr = listener.local_addr().expect("an address");
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            base_url: format!("http://{addr}/v1"),
            state,
            _server: server,
        }
    }

    /// Answers from now on as `behaviour` says.
    pub fn behave(&self, behaviour: Behaviour) {
        *self.state.behaviour.lock().expect("lock") = behaviour;
    }

    /// Every request body it was sent with the right key, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.state.requests.lock().expect("lock").clone()
    }
}

async fn complete(
    State(state): State<Arc<Shared>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let authorized = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value == format!("Bearer {}", state.key));
    if !authorized {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})),
        )
            .into_response();
    }
    state.requests.lock().expect("lock").push(body.clone());
    let behaviour = state.behaviour.lock().expect("lock").clone();
    let last_user = body["messages"]
        .as_array()
        .and_then(|messages| messages.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|message| message["content"].as_str())
        .unwrap_or("")
        .to_owned();
    let reply = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": body["model"],
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": format!("echo: {last_user}")},
            "finish_reason": "stop"
        }],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}
    });
    match behaviour {
        Behaviour::Echo => Json(reply).into_response(),
        Behaviour::FailOn(text) if last_user.contains(&text) => {
            (StatusCode::SERVICE_UNAVAILABLE, "overloaded").into_response()
        }
        Behaviour::FailOn(_) => Json(reply).into_response(),
        Behaviour::Say(text) => {
            let mut reply = reply;
            reply["choices"][0]["message"]["content"] = json!(text);
            Json(reply).into_response()
        }
        Behaviour::Slow(delay) => {
            tokio::time::sleep(delay).await;
            Json(reply).into_response()
        }
        Behaviour::Status(status) => (
            StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            Json(json!({"error": {"message": PROVIDER_SECRET}})),
        )
            .into_response(),
        Behaviour::Malformed => (StatusCode::OK, "{\"choices\": [oops").into_response(),
        Behaviour::Named(model) => {
            let mut reply = reply;
            reply["model"] = json!(model);
            Json(reply).into_response()
        }
        Behaviour::EchoHeaders(status) => {
            let echoed: serde_json::Map<String, Value> = headers
                .iter()
                .map(|(name, value)| {
                    let value = value.to_str().unwrap_or_default().to_owned();
                    (name.to_string(), Value::String(value))
                })
                .collect();
            (
                StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                Json(json!({"error": {"message": "bad request", "request_headers": echoed}})),
            )
                .into_response()
        }
        Behaviour::Research if body.get("tools").is_some() => Json(research(&body)).into_response(),
        Behaviour::Research => Json(reply).into_response(),
        Behaviour::CallTool(name, arguments) => Json(tool_calls(
            &body,
            vec![(name, arguments)],
        ))
        .into_response(),
        Behaviour::Refuse => Json(json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "refusal": PROVIDER_SECRET}, "finish_reason": "stop"}]
        }))
        .into_response(),
    }
}

/// [`Behaviour::Research`]'s reply to a request that offers tools.
fn research(body: &Value) -> Value {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let results: Vec<&str> = messages
        .iter()
        .filter(|message| message["role"] == "tool")
        .filter_map(|message| message["content"].as_str())
        .collect();
    let offered = |name: &str| {
        body["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|tool| tool["function"]["name"] == name))
    };
    let question = messages
        .iter()
        .find(|message| message["role"] == "user")
        .and_then(|message| message["content"].as_str())
        .unwrap_or("")
        .to_owned();
    match results.len() {
        0 => tool_calls(
            body,
            vec![
                ("search".into(), json!({"query": question}).to_string()),
                ("search".into(), json!({"query": "saga"}).to_string()),
            ],
        ),
        2 if offered("ask_user") => tool_calls(
            body,
            vec![(
                "ask_user".into(),
                json!({"question": "Which part matters most to you?"}).to_string(),
            )],
        ),
        _ => json!({
            "id": "chatcmpl-r",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": format!("Answer: {}", results.join(" | "))},
                "finish_reason": "stop"
            }],
            "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28}
        }),
    }
}

/// A reply that calls `calls` (name, arguments as JSON text) at once, with ids unique
/// within the conversation, as OpenAI documents it: `content` null, `tool_calls`, and
/// `finish_reason` `tool_calls`.
fn tool_calls(body: &Value, calls: Vec<(String, String)>) -> Value {
    let turn = body["messages"].as_array().map_or(0, Vec::len);
    let calls: Vec<Value> = calls
        .into_iter()
        .enumerate()
        .map(|(index, (name, arguments))| {
            json!({
                "id": format!("call_{turn}_{index}"),
                "type": "function",
                "function": {"name": name, "arguments": arguments}
            })
        })
        .collect();
    json!({
        "id": "chatcmpl-t",
        "object": "chat.completion",
        "model": body["model"],
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": null, "tool_calls": calls},
            "finish_reason": "tool_calls"
        }],
        "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28}
    })
}
