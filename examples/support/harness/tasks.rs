//! A client of the MCP tasks extension over raw HTTP (2026-07-28, the extension declared
//! in each request's `_meta`).

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};

const VERSION: &str = "2026-07-28";

#[derive(Clone)]
pub struct TaskClient {
    http: reqwest::Client,
}

impl Default for TaskClient {
    fn default() -> Self {
        Self::new()
    }
}

impl TaskClient {
    pub fn new() -> Self {
        Self {
            http: reqwest::Client::builder()
                .no_proxy()
                .timeout(Duration::from_secs(60))
                .build()
                .expect("an HTTP client"),
        }
    }

    /// One request with the tasks extension declared; the whole JSON-RPC response.
    pub async fn request(&self, addr: SocketAddr, method: &str, mut params: Value) -> Value {
        let name = params
            .get("name")
            .or_else(|| params.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": {
                "elicitation": {},
                "extensions": {"io.modelcontextprotocol/tasks": {}}
            }
        });
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut attempt = 0;
        let response = loop {
            let mut request = self
                .http
                .post(format!("http://{addr}/mcp"))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", VERSION)
                .header("mcp-method", method);
            if let Some(name) = &name {
                request = request.header("mcp-name", name.as_str());
            }
            match request.json(&body).send().await {
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
}
