//! A 2025-11-25 session over raw Streamable HTTP, for tests that check the messages
//! themselves: `initialize`, requests whose responses stream as SSE, and answers to the
//! server's own requests. Requests go through [`Post`], the tests' one raw-HTTP client.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::http::{Post, client, is_event_stream, request};

/// The session-era protocol version these sessions negotiate.
pub const SESSION_VERSION: &str = "2025-11-25";

/// The `initialize` request that opens a session, from a client that declares
/// `capabilities` (the version is negotiated in the body: no `MCP-Protocol-Version`).
pub fn initialize(url: &str, capabilities: Value) -> Post {
    Post::to(url).without("mcp-protocol-version").json(&request(
        0,
        "initialize",
        json!({
            "protocolVersion": SESSION_VERSION,
            "capabilities": capabilities,
            "clientInfo": {"name": "saga-tests", "version": "0"}
        }),
    ))
}

/// A request in the session `id` (its `Mcp-Session-Id` and version), sent with
/// `Authorization: who` when there is one.
pub fn in_session(url: &str, id: &str, who: Option<&str>) -> Post {
    let post = Post::to(url)
        .header("mcp-session-id", id)
        .header("mcp-protocol-version", SESSION_VERSION);
    match who {
        Some(who) => post.header("authorization", who),
        None => post,
    }
}

/// The session id an `initialize` response carries.
pub fn session_id(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// A 2025-11-25 session over raw HTTP.
pub struct Session {
    http: reqwest::Client,
    url: String,
    id: String,
    who: Option<String>,
}

impl Session {
    /// Opens a session at `url`, as the anonymous principal.
    pub async fn open(url: &str, capabilities: Value) -> Session {
        Self::open_as(url, None, capabilities).await
    }

    /// Opens a session at `url` with `Authorization: who` (on every request of it).
    pub async fn open_as(url: &str, who: Option<&str>, capabilities: Value) -> Session {
        let http = client();
        let mut initialize = initialize(url, capabilities).with_client(&http);
        if let Some(who) = who {
            initialize = initialize.header("authorization", who);
        }
        let response = initialize.response().await;
        assert_eq!(response.status(), StatusCode::OK, "initialize");
        let id = session_id(&response).expect("a session id");
        let mut events = Events::new(response);
        let result = events.next().await.expect("an initialize result");
        assert_eq!(
            result["result"]["protocolVersion"], SESSION_VERSION,
            "{result}"
        );
        let session = Session {
            http,
            url: url.to_owned(),
            id,
            who: who.map(str::to_owned),
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let status = session.post(&initialized).await.status();
        assert!(status.is_success(), "initialized: {status}");
        session
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    fn in_session(&self) -> Post {
        in_session(&self.url, &self.id, self.who.as_deref()).with_client(&self.http)
    }

    pub async fn post(&self, message: &Value) -> reqwest::Response {
        self.in_session().json(message).response().await
    }

    /// Opens a standalone stream (`GET`); the response, whatever its status.
    pub async fn get(&self) -> reqwest::Response {
        self.in_session()
            .method(Method::GET)
            .without("content-type")
            .header("accept", "text/event-stream")
            .response()
            .await
    }

    /// Opens the session's standalone stream (`GET`), where notifications that belong to
    /// no request arrive.
    pub async fn listen(&self) -> Events {
        let response = self.get().await;
        assert!(response.status().is_success(), "GET: {}", response.status());
        Events::new(response)
    }

    /// Ends the session (`DELETE`); the status.
    pub async fn delete(&self) -> StatusCode {
        self.in_session()
            .method(Method::DELETE)
            .without("content-type")
            .response()
            .await
            .status()
    }

    /// Sends a request and reads its response stream.
    pub async fn request(&self, message: Value) -> Events {
        Events::new(self.post(&message).await)
    }

    /// Sends a request; the first message of its response (its answer, unless the server
    /// sends something else first).
    pub async fn ask(&self, message: Value) -> Value {
        self.request(message).await.next().await.expect("an answer")
    }

    /// Answers a server-to-client request.
    pub async fn answer(&self, request: &Value, result: Value) {
        let response = json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
        let status = self.post(&response).await.status();
        assert!(status.is_success(), "the answer was refused: {status}");
    }
}

/// The JSON-RPC messages of one response, JSON or SSE.
pub struct Events {
    response: reqwest::Response,
    buffer: String,
    sse: bool,
    done: bool,
}

impl Events {
    pub fn new(response: reqwest::Response) -> Self {
        let sse = is_event_stream(&response);
        Events {
            response,
            buffer: String::new(),
            sse,
            done: false,
        }
    }

    pub async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let data: String = event
                    .lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if data.is_empty() {
                    continue;
                }
                return Some(serde_json::from_str(&data).expect("an event holds JSON"));
            }
            if self.done {
                if self.sse || self.buffer.trim().is_empty() {
                    return None;
                }
                let whole = std::mem::take(&mut self.buffer);
                return Some(serde_json::from_str(&whole).expect("a JSON body"));
            }
            match tokio::time::timeout(Duration::from_secs(30), self.response.chunk()).await {
                Ok(Ok(Some(chunk))) => self.buffer.push_str(&String::from_utf8_lossy(&chunk)),
                Ok(Ok(None)) | Ok(Err(_)) => self.done = true,
                Err(_) => panic!("no event within 30 s; so far: {:?}", self.buffer),
            }
        }
    }

    /// The next `count` messages, each a resume policy (with a `maxWait`) of the request
    /// `id`; the last one's `resumeToken`.
    pub async fn policies(&mut self, count: usize, id: &str) -> String {
        let mut token = None;
        for _ in 0..count {
            let message = self.next().await.expect("the call streams");
            assert_eq!(
                message["method"], "notifications/requests/resumePolicy",
                "{message}"
            );
            let policy = &message["params"];
            assert_eq!(policy["requestId"], id, "{message}");
            assert!(
                policy["maxWait"].as_u64().is_some_and(|wait| wait > 0),
                "{message}"
            );
            token = policy["resumeToken"].as_str().map(str::to_owned);
        }
        token.expect("a token")
    }

    /// The next message that is not a resume policy, and the last policy's params before it.
    pub async fn next_after_policy(&mut self) -> (Option<Value>, Value) {
        let mut policy = None;
        loop {
            let message = self.next().await.expect("the stream goes on");
            if message["method"] == "notifications/requests/resumePolicy" {
                policy = Some(message["params"].clone());
            } else {
                return (policy, message);
            }
        }
    }
}
