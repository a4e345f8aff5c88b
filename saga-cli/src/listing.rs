//! What rmcp's model of a tool leaves out: its `execution.taskSupport` (MCP tasks
//! extension). rmcp's `Tool` has no `execution` field, so the tool lists are read as they
//! come off the wire too: an HTTP client that reads `tools/list` responses itself, and a
//! reader of a child's stdout that looks at each line. Both feed [`Seen`].

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::StreamExt as _;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ServerJsonRpcMessage};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse,
};
use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};

use crate::http::{HttpError, said_whole};

/// The most bytes of one `tools/list` response (or one line of a stdio server) read for
/// its tools' `execution`: above it, the tools are listed without it.
const MAX_LIST_BYTES: usize = 17 * 1024 * 1024;
/// rmcp's bound on one SSE event, for a caller of `post_message` that gives none.
const DEFAULT_MAX_SSE_EVENT_SIZE: usize = 16 * 1024 * 1024;
/// The most tools whose task support is kept.
const MAX_SEEN: usize = 10_000;
/// The most characters of a `taskSupport` kept (a server's string).
const MAX_SUPPORT_CHARS: usize = 64;

/// Each tool's `execution.taskSupport` as its server listed it, by tool name (only
/// tools that declare one).
#[derive(Debug, Clone, Default)]
pub struct Seen(Arc<Mutex<HashMap<String, String>>>);

impl Seen {
    /// The `taskSupport` tool `name` declared, if it declared one.
    pub fn task_support(&self, name: &str) -> Option<String> {
        self.0.lock().ok()?.get(name).cloned()
    }

    /// Reads one JSON-RPC message: when it is a tool list, keeps its tools' task support.
    pub fn record(&self, message: &[u8]) {
        let Ok(value) = serde_json::from_slice::<Value>(message) else {
            return;
        };
        let Some(tools) = value
            .get("result")
            .and_then(|result| result.get("tools"))
            .and_then(Value::as_array)
        else {
            return;
        };
        let Ok(mut seen) = self.0.lock() else {
            return;
        };
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let support = tool
                .get("execution")
                .and_then(|execution| execution.get("taskSupport"));
            match support {
                Some(support) if seen.len() < MAX_SEEN || seen.contains_key(name) => {
                    let text = match support {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    };
                    seen.insert(
                        name.to_owned(),
                        text.chars().take(MAX_SUPPORT_CHARS).collect(),
                    );
                }
                Some(_) => {}
                None => {
                    seen.remove(name);
                }
            }
        }
    }
}

/// Whether `message` is a `tools/list` request.
fn is_tool_list(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        ClientJsonRpcMessage::Request(request)
            if matches!(request.request, ClientRequest::ListToolsRequest(_))
    )
}

/// The transport to the Streamable HTTP server at `url`, recording into `seen`: the bearer
/// token (`--token`, `SAGA_TOKEN`) and the `--header`s of this run on every request. Every
/// command that talks to a server over HTTP connects through it.
pub fn http_transport(
    url: &str,
    seen: Seen,
) -> anyhow::Result<StreamableHttpClientTransport<Recording>> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(crate::http::reachable(url)?);
    if let Some(token) = crate::target::token() {
        config = config.auth_header(token);
    }
    config.custom_headers = crate::target::headers().iter().cloned().collect();
    Ok(StreamableHttpClientTransport::with_client(
        Recording::new(seen)?,
        config,
    ))
}

/// rmcp's reqwest client, but for `tools/list`, whose JSON answer it reads itself first
/// (to see each tool's `execution`) and then gives rmcp as rmcp would have read it. Any
/// other answer to it (an error status, an SSE stream, another content type) is left to
/// rmcp's client, which asks again; an SSE stream is then read as it passes.
#[derive(Clone)]
pub struct Recording {
    http: reqwest::Client,
    seen: Seen,
}

impl Recording {
    /// A client that records into `seen`. Like rmcp's own default: no idle connections
    /// kept, and only same-origin 307/308 redirects followed (which keep the method and
    /// body), at most 10.
    pub fn new(seen: Seen) -> anyhow::Result<Self> {
        let policy = reqwest::redirect::Policy::custom(|attempt| {
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            let keeps_body = matches!(
                attempt.status(),
                reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
            );
            if attempt.previous().len() > 10 {
                attempt.error("too many redirects")
            } else if same_origin && keeps_body {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(policy)
            .build()?;
        Ok(Self { http, seen })
    }

    /// The body and session id of a successful JSON answer to `message`, or `None` for
    /// anything else.
    async fn json_answer(
        &self,
        uri: &str,
        message: &ClientJsonRpcMessage,
        session_id: Option<&str>,
        auth_header: Option<&str>,
        custom_headers: &HashMap<HeaderName, HeaderValue>,
    ) -> Option<(Vec<u8>, Option<String>)> {
        let mut request = self
            .http
            .post(uri)
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .header(reqwest::header::CONTENT_TYPE, "application/json");
        if let Some(auth) = auth_header {
            request = request.bearer_auth(auth);
        }
        for (name, value) in custom_headers {
            request = request.header(name, value);
        }
        if let Some(session_id) = session_id {
            request = request.header("mcp-session-id", session_id);
        }
        let body = serde_json::to_vec(message).ok()?;
        let mut response = request.body(body).send().await.ok()?;
        let json = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .is_some_and(|ct| ct.as_bytes().starts_with(b"application/json"));
        if !response.status().is_success() || !json {
            return None;
        }
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.ok()? {
            if bytes.len() + chunk.len() > MAX_LIST_BYTES {
                return None;
            }
            bytes.extend_from_slice(&chunk);
        }
        Some((bytes, session))
    }
}

impl StreamableHttpClient for Recording {
    type Error = HttpError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            DEFAULT_MAX_SSE_EVENT_SIZE,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let listing = is_tool_list(&message);
        if listing
            && let Some((body, session)) = self
                .json_answer(
                    &uri,
                    &message,
                    session_id.as_deref(),
                    auth_header.as_deref(),
                    &custom_headers,
                )
                .await
            && let Ok(parsed) = serde_json::from_slice::<ServerJsonRpcMessage>(&body)
        {
            self.seen.record(&body);
            return Ok(StreamableHttpPostResponse::Json(parsed, session));
        }
        let response = self
            .http
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
            .map_err(said_whole)?;
        Ok(match response {
            StreamableHttpPostResponse::Sse(stream, session) if listing => {
                let seen = self.seen.clone();
                let stream = stream.inspect(move |event| {
                    if let Ok(event) = event
                        && let Some(data) = &event.data
                    {
                        seen.record(data.as_bytes());
                    }
                });
                StreamableHttpPostResponse::Sse(stream.boxed(), session)
            }
            other => other,
        })
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.http
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
            .map_err(said_whole)
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<
        futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>,
        StreamableHttpError<Self::Error>,
    > {
        self.http
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
            .map_err(said_whole)
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<
        futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>,
        StreamableHttpError<Self::Error>,
    > {
        self.http
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
            .map_err(said_whole)
    }
}

/// A child's stdout, passed on unchanged, whose lines (newline-delimited JSON-RPC) are
/// also given to [`Seen::record`] when they hold a tool list.
pub struct Tee<R> {
    inner: R,
    line: Vec<u8>,
    /// The current line outgrew [`MAX_LIST_BYTES`]: it is passed on, not read.
    overflow: bool,
    seen: Seen,
}

impl<R> Tee<R> {
    /// Reads `inner`, recording into `seen`.
    pub fn new(inner: R, seen: Seen) -> Self {
        Self {
            inner,
            line: Vec::new(),
            overflow: false,
            seen,
        }
    }

    fn scan(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let (part, ends_line) = match bytes.iter().position(|&b| b == b'\n') {
                Some(at) => (&bytes[..at], true),
                None => (bytes, false),
            };
            if !self.overflow {
                if self.line.len() + part.len() > MAX_LIST_BYTES {
                    self.overflow = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(part);
                }
            }
            if ends_line {
                // Only a line that may be a tool list is parsed a second time.
                if !self.overflow && contains(&self.line, b"\"tools\"") {
                    self.seen.record(&self.line);
                }
                self.line.clear();
                self.overflow = false;
                bytes = &bytes[part.len() + 1..];
            } else {
                bytes = &[];
            }
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

impl<R: AsyncRead + Unpin> AsyncRead for Tee<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            let read = buf.filled()[before..].to_vec();
            this.scan(&read);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt as _;

    #[test]
    fn keeps_each_tools_task_support() {
        let seen = Seen::default();
        seen.record(
            br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[
                {"name":"a","inputSchema":{},"execution":{"taskSupport":"optional"}},
                {"name":"b","inputSchema":{}},
                {"name":"c","inputSchema":{},"execution":{"taskSupport":"required"}}]}}"#,
        );
        assert_eq!(seen.task_support("a").as_deref(), Some("optional"));
        assert_eq!(seen.task_support("b"), None);
        assert_eq!(seen.task_support("c").as_deref(), Some("required"));
        // Anything else is not a list; a later list wins.
        seen.record(br#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#);
        seen.record(b"not json");
        seen.record(br#"{"result":{"tools":[{"name":"a","inputSchema":{}}]}}"#);
        assert_eq!(seen.task_support("a"), None);
        assert_eq!(seen.task_support("c").as_deref(), Some("required"));
    }

    #[test]
    fn a_servers_long_task_support_is_cut() {
        let seen = Seen::default();
        let long = "x".repeat(10_000);
        seen.record(
            format!(r#"{{"result":{{"tools":[{{"name":"a","execution":{{"taskSupport":"{long}"}}}}]}}}}"#)
                .as_bytes(),
        );
        assert_eq!(
            seen.task_support("a").map(|s| s.len()),
            Some(MAX_SUPPORT_CHARS)
        );
    }

    #[tokio::test]
    async fn the_tee_passes_every_byte_and_reads_lines_split_across_reads() {
        let text = concat!(
            r#"{"jsonrpc":"2.0","id":0,"result":{}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","execution":{"taskSupport":"optional"}}]}}"#,
            "\n"
        );
        let seen = Seen::default();
        // A reader that gives 7 bytes at a time.
        let (mut writer, reader) = tokio::io::duplex(7);
        let feeder = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt as _;
            writer.write_all(text.as_bytes()).await.unwrap();
        });
        let mut tee = Tee::new(reader, seen.clone());
        let mut out = String::new();
        tee.read_to_string(&mut out).await.unwrap();
        feeder.await.unwrap();
        assert_eq!(out, text);
        assert_eq!(seen.task_support("t").as_deref(), Some("optional"));
    }

    #[test]
    fn an_overlong_line_is_passed_on_unread() {
        let seen = Seen::default();
        let mut tee = Tee::new(tokio::io::empty(), seen.clone());
        tee.scan(br#"{"result":{"tools":[{"name":"big","execution":{"taskSupport":"optional"}}],"pad":""#);
        tee.scan(&vec![b'x'; MAX_LIST_BYTES]);
        tee.scan(b"\"}}\n");
        assert_eq!(seen.task_support("big"), None);
        assert!(tee.line.is_empty() && !tee.overflow);
        tee.scan(
            b"{\"result\":{\"tools\":[{\"name\":\"small\",\"execution\":{\"taskSupport\":\"required\"}}]}}\n",
        );
        assert_eq!(seen.task_support("small").as_deref(), Some("required"));
    }
}
