//! The connection, and the sessions loop: a 2025-11-25 server sends its requests during
//! the call, and the handler answers each through the [`Responder`].

#![allow(deprecated)] // sampling and roots: deprecated in 2026-07-28, still served

use anyhow::Context as _;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, Implementation, ListRootsResult, ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleClient, RunningService, ServiceError};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData};
use serde_json::{Map, Value, json};

use super::respond::{Capability, Responder};
use crate::listing::{Seen, Tee, http_transport};
use crate::target::Target;
use crate::terminal::one_line;

/// A `notifications/progress` as one line: `… 3/9 table 3`.
pub(super) fn progress_line(params: &rmcp::model::ProgressNotificationParam) -> String {
    let mut line = format!("… progress {}", params.progress);
    if let Some(total) = params.total {
        line.push_str(&format!("/{total}"));
    }
    if let Some(message) = &params.message {
        line.push_str(&format!(" {}", one_line(message)));
    }
    line
}

/// The most rounds one `saga call` goes through before it gives up, MRTR or task.
pub(crate) const MAX_ROUNDS: usize = 1_000;

/// The rmcp client handler: declares what `saga` can answer, and answers server-sent
/// requests of a 2025-11-25 session.
pub(crate) struct Handler(std::sync::Arc<Responder>);

pub(super) fn capabilities(without: &[Capability], tasks: bool) -> ClientCapabilities {
    let mut declared = json!({
        "elicitation": {"form": {}, "url": {}},
        "sampling": {"tools": {}},
        "roots": {}
    });
    if let Some(declared) = declared.as_object_mut() {
        if tasks {
            let mut extensions = Map::new();
            extensions.insert(rmcp::model::TASKS_EXTENSION_ID.into(), json!({}));
            declared.insert("extensions".into(), Value::Object(extensions));
        }
        for capability in without {
            match capability {
                Capability::Elicitation => drop(declared.remove("elicitation")),
                Capability::Url => {
                    if let Some(Value::Object(elicitation)) = declared.get_mut("elicitation") {
                        elicitation.remove("url");
                    }
                }
                Capability::Sampling => drop(declared.remove("sampling")),
                Capability::SamplingTools => {
                    if let Some(Value::Object(sampling)) = declared.get_mut("sampling") {
                        sampling.remove("tools");
                    }
                }
                Capability::Roots => drop(declared.remove("roots")),
            }
        }
    }
    serde_json::from_value(declared).unwrap_or_default()
}

fn internal(error: anyhow::Error) -> ErrorData {
    ErrorData::internal_error(format!("{error:#}"), None)
}

impl Handler {
    fn session_answer<T: serde::de::DeserializeOwned>(
        &self,
        kind: &str,
        method: &str,
        params: Value,
    ) -> Result<T, ErrorData> {
        let key = self.0.next_session_key(kind);
        let request = json!({"method": method, "params": params});
        // The server only hears that the client failed; the call stops with saga's reason.
        let stop = |error: anyhow::Error| {
            let refusal = internal(anyhow::anyhow!("{error:#}"));
            self.0.set_stop(error);
            refusal
        };
        if let Some(error) = self.0.session_reask(&key, &request) {
            return Err(stop(error));
        }
        let answer = self.0.answer(&key, &request).map_err(stop)?;
        self.0.session_answered(&request);
        serde_json::from_value(answer).map_err(|e| stop(e.into()))
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let config = ClientConfig::new(
            capabilities(&self.0.without, self.0.tasks),
            Implementation::new("saga-cli", env!("CARGO_PKG_VERSION")),
        );
        if self.0.session {
            config.with_protocol_version(ProtocolVersion::V_2025_11_25)
        } else {
            config
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let params = serde_json::to_value(request).map_err(|e| internal(e.into()))?;
        self.session_answer("elicitation", "elicitation/create", params)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let params = serde_json::to_value(params).map_err(|e| internal(e.into()))?;
        self.session_answer("sampling", "sampling/createMessage", params)
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.session_answer("roots", "roots/list", Value::Null)
    }

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        // Not over a prompt on screen: progress shown then would tear it apart.
        if self.0.asking.try_lock().is_ok() {
            say!("{}", progress_line(&params));
        }
    }
}

pub(crate) type Client = RunningService<RoleClient, Handler>;

/// A connected client, the task support its tools declared, and the server's process
/// (killed when this is dropped) when it is a child.
pub(crate) struct Connection {
    pub(crate) client: Client,
    pub(crate) seen: Seen,
    _child: Option<tokio::process::Child>,
}

pub(crate) async fn connect(
    target: &Target,
    responder: std::sync::Arc<Responder>,
) -> anyhow::Result<Connection> {
    let lifecycle = if responder.session {
        ClientLifecycleMode::Initialize
    } else {
        ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        }
    };
    let handler = Handler(responder);
    let seen = Seen::default();
    match target {
        Target::Http(url) => {
            let transport = http_transport(url, seen.clone())?;
            let connected = crate::deadline::answer(
                &format!("connecting to {url}"),
                handler.serve_with_lifecycle(transport, lifecycle),
            )
            .await?;
            let client = match connected {
                Ok(client) => client,
                Err(error) => return Err(cannot_connect(url, error).await),
            };
            Ok(Connection {
                client,
                seen,
                _child: None,
            })
        }
        Target::Stdio(words) => {
            let Some((program, args)) = words.split_first() else {
                anyhow::bail!("--stdio needs a command");
            };
            let mut command = tokio::process::Command::new(program);
            command
                .args(args)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                // The server's log would tear the prompts apart.
                .stderr(std::process::Stdio::null())
                .kill_on_drop(true);
            let mut child = command
                .spawn()
                .with_context(|| format!("cannot start {program:?}"))?;
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                anyhow::bail!("cannot talk to {program:?}: no pipes to it");
            };
            let client = crate::deadline::answer(
                "initialize",
                handler.serve_with_lifecycle((Tee::new(stdout, seen.clone()), stdin), lifecycle),
            )
            .await?
            .map_err(|e| root_cause(&format!("cannot talk MCP with {:?}", words.join(" ")), e))?;
            Ok(Connection {
                client,
                seen,
                _child: Some(child),
            })
        }
    }
}

/// Why the server at `url` could not be reached: the innermost cause of `error`, and what
/// its OAuth challenge asks for when it sends one.
pub(crate) async fn cannot_connect(
    url: &str,
    error: impl std::error::Error + Send + Sync + 'static,
) -> anyhow::Error {
    let failed = root_cause(&format!("cannot connect to {url}"), error);
    match crate::target::auth_hint(url).await {
        Some(hint) => failed.context(hint),
        None => failed,
    }
}

/// `what` and the innermost cause of `error` (rmcp's outer messages name its internals).
fn root_cause(what: &str, error: impl std::error::Error + Send + Sync + 'static) -> anyhow::Error {
    let error = anyhow::Error::from(error);
    let text = error.root_cause().to_string();
    // rmcp flattens its causes into one message: keep the innermost part.
    let inner = text.rsplit("error: ").next().unwrap_or(&text);
    let inner = inner.split(", when ").next().unwrap_or(inner);
    anyhow::anyhow!("{what}: {inner}")
}

/// One clear line for a failed request.
pub(crate) fn request_error(what: &str, error: ServiceError) -> anyhow::Error {
    match error {
        ServiceError::McpError(error) => {
            let mut line = format!("{what}: server error {}: {}", error.code.0, error.message);
            if let Some(required) = error
                .data
                .as_ref()
                .and_then(|d| d.get("requiredCapabilities"))
            {
                line.push_str(&format!(" (required capabilities: {required})"));
                // A tool that runs only as a task, called as a plain call.
                if required.to_string().contains("tasks") {
                    line.push_str("; this tool runs only as a task: call it with --task");
                }
            }
            anyhow::anyhow!(line)
        }
        // A 401 or 403 with a challenge: what it says, not rmcp's "Insufficient scope".
        other => match other.auth_challenge() {
            Some(challenge) => {
                anyhow::anyhow!("{what}: {}", crate::target::challenge_line(challenge))
            }
            // rmcp's message names its transport's type (`WorkerTransport<…>`): the
            // innermost cause says what happened.
            None if matches!(other, ServiceError::TransportSend(_)) => root_cause(
                &format!("{what}: the connection to the server broke"),
                other,
            ),
            None if matches!(other, ServiceError::TransportClosed) => anyhow::anyhow!(
                "{what}: the server closed the connection (if it restarted, run the call again)"
            ),
            None => anyhow::anyhow!("{what}: {other}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_connection_is_said_without_rmcps_types() {
        type Transport = rmcp::transport::async_rw::AsyncRwTransport<
            RoleClient,
            tokio::io::DuplexStream,
            tokio::io::DuplexStream,
        >;
        let broken = ServiceError::TransportSend(rmcp::transport::DynamicTransportError::new::<
            Transport,
            RoleClient,
        >(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "connection reset by peer",
        )));
        assert!(broken.to_string().contains("AsyncRwTransport"), "{broken}");
        let line = request_error("tools/call", broken).to_string();
        assert_eq!(
            line,
            "tools/call: the connection to the server broke: connection reset by peer"
        );
        let closed = request_error("tools/call", ServiceError::TransportClosed).to_string();
        assert!(!closed.contains("Transport"), "{closed}");
    }

    #[test]
    fn a_task_only_tool_called_plainly_says_to_add_task() {
        let error = rmcp::ErrorData::new(
            rmcp::model::ErrorCode(-32021),
            "Missing required client capability",
            Some(
                serde_json::json!({"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}),
            ),
        );
        let line = request_error("tools/call", ServiceError::McpError(error)).to_string();
        assert!(line.ends_with("call it with --task"), "{line}");
    }
}
