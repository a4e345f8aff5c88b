//! A 2025-11-25 session over raw Streamable HTTP, for tests that check the messages
//! themselves: `initialize`, requests whose responses stream as SSE, and answers to the
//! server's own requests.

use std::time::Duration;

use serde_json::{Value, json};

/// The session-era protocol version these sessions negotiate.
pub const SESSION_VERSION: &str = "2025-11-25";

/// A 2025-11-25 session over raw HTTP.
pub struct Session {
    http: reqwest::Client,
    url: String,
    id: String,
}

impl Session {
    pub async fn open(url: &str, capabilities: Value) -> Session {
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(60))
            .build()
            .expect("an HTTP client");
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": SESSION_VERSION,
                "capabilities": capabilities,
                "clientInfo": {"name": "seed-002-test", "version": "0"}
            }
        });
        let response = http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .json(&initialize)
            .send()
            .await
            .expect("initialize is answered");
        let id = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("a session id")
            .to_owned();
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
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let status = session.post(&initialized).await.status();
        assert!(status.is_success(), "initialized: {status}");
        session
    }

    pub async fn post(&self, message: &Value) -> reqwest::Response {
        self.http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", SESSION_VERSION)
            .json(message)
            .send()
            .await
            .expect("the server answers")
    }

    /// Opens the session's standalone stream (`GET`), where notifications that belong to
    /// no request arrive.
    pub async fn listen(&self) -> Events {
        let response = self
            .http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", SESSION_VERSION)
            .send()
            .await
            .expect("the server answers");
        assert!(response.status().is_success(), "GET: {}", response.status());
        Events::new(response)
    }

    /// Sends a request and reads its response stream.
    pub async fn request(&self, message: Value) -> Events {
        Events::new(self.post(&message).await)
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
        let sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
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
