//! A client of the MCP tasks extension over raw HTTP (2026-07-28, the extension declared
//! in each request's `_meta`), sending through [`Post`].

use std::net::SocketAddr;

use serde_json::{Value, json};

use super::http::{PROTOCOL_VERSION, Post, client, request};

#[derive(Clone)]
pub struct TaskClient {
    http: reqwest::Client,
    authorization: Option<String>,
    samples: bool,
    traceparent: Option<String>,
}

impl Default for TaskClient {
    fn default() -> Self {
        Self::new()
    }
}

impl TaskClient {
    pub fn new() -> Self {
        Self {
            http: client(),
            authorization: None,
            samples: false,
            traceparent: None,
        }
    }

    /// The same client, declaring sampling with tools too: a task's samples are asked of
    /// it.
    pub fn sampling(mut self) -> Self {
        self.samples = true;
        self
    }

    /// The same client, connecting from `address` (see [`super::http::client_at`]).
    pub fn from_address(mut self, address: &str) -> Self {
        self.http = super::http::client_at(address);
        self
    }

    /// The same client, sending this W3C `traceparent` in every request's `_meta`.
    pub fn traceparent(mut self, traceparent: &str) -> Self {
        self.traceparent = Some(traceparent.to_owned());
        self
    }

    /// The same client, sending `Authorization: who`: another principal.
    pub fn authorization(mut self, who: &str) -> Self {
        self.authorization = Some(who.to_owned());
        self
    }

    /// One request with the tasks extension declared; the whole JSON-RPC response.
    pub async fn request(&self, addr: SocketAddr, method: &str, mut params: Value) -> Value {
        let mut capabilities = json!({
            "elicitation": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        });
        if self.samples {
            capabilities["sampling"] = json!({"tools": {}});
        }
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientCapabilities": capabilities
        });
        if let Some(traceparent) = &self.traceparent {
            params["_meta"]["traceparent"] = json!(traceparent);
        }
        let message = request(1, method, params);
        let mut attempt = 0;
        let response = loop {
            let mut post = Post::mcp(addr).rpc(&message).with_client(&self.http);
            if let Some(who) = &self.authorization {
                post = post.header("authorization", who);
            }
            match post.try_response().await {
                Ok(response) => break response,
                // A pooled keep-alive connection the server closed while it idled (its
                // header read timeout) fails before the request reaches it: the client's
                // race, not the server's answer. Once more, on a fresh connection.
                Err(error) if attempt < 2 && (error.is_request() || error.is_connect()) => {
                    attempt += 1;
                }
                Err(error) => panic!("the server answers: {error:?}"),
            }
        };
        response.json().await.expect("a JSON response")
    }

    /// Calls `tool`, which must answer with a task; its id.
    pub async fn create(&self, addr: SocketAddr, tool: &str, arguments: Value) -> String {
        let answer = self
            .request(
                addr,
                "tools/call",
                json!({"name": tool, "arguments": arguments}),
            )
            .await;
        assert_eq!(answer["result"]["resultType"], "task", "{answer}");
        answer["result"]["taskId"]
            .as_str()
            .expect("a task id")
            .to_owned()
    }

    /// The task's `tasks/get` result.
    pub async fn status(&self, addr: SocketAddr, id: &str) -> Value {
        self.request(addr, "tasks/get", json!({"taskId": id})).await["result"].clone()
    }

    /// The task once it is no longer `working` (done, failed, or asking), polled every
    /// 50 ms; panics when it still works after `within`.
    pub async fn settled(&self, addr: SocketAddr, id: &str, within: std::time::Duration) -> Value {
        let deadline = std::time::Instant::now() + within;
        loop {
            let task = self.status(addr, id).await;
            if task["status"] != "working" {
                return task;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "still working: {task}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// The task once its status is `status`, polled every 50 ms; panics when it fails or
    /// has not reached it within 30 s.
    pub async fn reached(&self, addr: SocketAddr, id: &str, status: &str) -> Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let task = self.status(addr, id).await;
            if task["status"] == status {
                return task;
            }
            assert!(
                task["status"] != "failed" && std::time::Instant::now() < deadline,
                "task {id} never reached {status}: {task}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}
