//! Talking to a server with rmcp's client: `saga tools` and `saga call`.
//!
//! The client connects with `server/discover` (MCP 2026-07-28) and drives a call through
//! its `input_required` rounds itself. When the server does not answer `server/discover`,
//! rmcp falls back to a 2025-11-25 session (`initialize`); the server then sends its
//! elicitation, sampling and roots requests during the call, and the same prompts (or
//! `--answers` entries keyed `elicitation-N` / `sampling-N`) answer them. With `--task`
//! the client declares the MCP tasks extension and follows the task the call becomes
//! (see [`crate::task`]).

#![allow(deprecated)] // sampling and roots: deprecated in 2026-07-28, still served

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Context as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    Implementation, ListRootsResult, ProtocolVersion, Tool,
};
use rmcp::service::{RequestContext, RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData};
use serde_json::{Map, Value, json};

use crate::Target;
use crate::answers::Answers;
use crate::listing::{Recording, Seen, Tee};
use crate::schema::{describe_type, parse_arguments};
use crate::terminal::one_line;

/// Answers input requests: from a file, or by asking the person at the terminal.
#[derive(Debug)]
pub struct Responder {
    answers: Option<Answers>,
    roots: Vec<Value>,
    /// Counts the requests of a 2025-11-25 session, which have no keys of their own.
    session_requests: AtomicUsize,
    /// One prompt at a time.
    asking: Mutex<()>,
    /// Capabilities not to declare (`--without`).
    without: Vec<Capability>,
    /// Open a 2025-11-25 session with `initialize` instead of `server/discover`.
    session: bool,
    /// Declare the MCP tasks extension and follow the task a call becomes (`--task`).
    tasks: bool,
    /// The session requests answered from the file, as [`same_request`] compares them.
    answered: Mutex<Vec<Value>>,
    /// Why the call must stop: set when a session request could not be answered (the
    /// server only hears an error; the person must hear why).
    stop: Mutex<Option<anyhow::Error>>,
    /// Wakes the call when [`Responder::stop`] is set.
    stopped: tokio::sync::Notify,
}

/// Ctrl-C at a prompt: `saga` quits (and, with `--task`, cancels its task first).
#[derive(Debug, Clone, Copy)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// How `saga call` ended, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A result; `true` when it has `isError`.
    Done(bool),
    /// Ctrl-C (with `--task`: after `tasks/cancel`).
    Interrupted,
}

/// A client capability `saga` declares unless told not to (`--without`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Capability {
    /// `elicitation` (form and URL mode).
    Elicitation,
    /// URL-mode elicitation only.
    Url,
    /// `sampling`.
    Sampling,
    /// `roots`.
    Roots,
}

impl Responder {
    /// Answers from `answers` when given, else by prompting; offers `roots`.
    pub fn new(answers: Option<Answers>, roots: Vec<Value>) -> Self {
        Self {
            answers,
            roots,
            session_requests: AtomicUsize::new(0),
            asking: Mutex::new(()),
            without: Vec::new(),
            session: false,
            tasks: false,
            answered: Mutex::new(Vec::new()),
            stop: Mutex::new(None),
            stopped: tokio::sync::Notify::new(),
        }
    }

    /// Declares the MCP tasks extension and follows the task a call becomes (`--task`).
    pub fn tasks(mut self, tasks: bool) -> Self {
        self.tasks = tasks;
        self
    }

    /// Whether the answers come from a file (`--answers`) rather than a person.
    pub fn is_scripted(&self) -> bool {
        self.answers.is_some()
    }

    /// Stops the call with `error` (the first one set wins).
    fn set_stop(&self, error: anyhow::Error) {
        if let Ok(mut stop) = self.stop.lock()
            && stop.is_none()
        {
            *stop = Some(error);
        }
        self.stopped.notify_one();
    }

    /// The error the call was stopped with, if it was.
    fn take_stop(&self) -> Option<anyhow::Error> {
        self.stop.lock().ok().and_then(|mut stop| stop.take())
    }

    /// Runs `request` unless the call is stopped first; a stop set meanwhile wins over
    /// the request's outcome (the server's error for a request saga could not answer says
    /// less than saga's own).
    pub(crate) async fn until_stopped<T>(
        &self,
        request: impl std::future::Future<Output = T>,
    ) -> anyhow::Result<T> {
        tokio::select! {
            biased;
            () = self.stopped.notified() => {
                Err(self.take_stop().unwrap_or_else(|| anyhow::anyhow!("stopped")))
            }
            outcome = request => match self.take_stop() {
                Some(error) => Err(error),
                None => Ok(outcome),
            },
        }
    }

    /// In a session, with `--answers`: the error that stops the call when `request`,
    /// keyed `key` by its counter, is one the file already answered (the server asks it
    /// again because it did not accept the answer), or has no entry in the file.
    fn session_reask(&self, key: &str, request: &Value) -> Option<anyhow::Error> {
        let answers = self.answers.as_ref()?;
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        let again = self
            .answered
            .lock()
            .is_ok_and(|answered| answered.iter().any(|seen| same_request(seen, request)));
        if again {
            return Some(asked_again(key, request));
        }
        if method != "roots/list" && answers.get(key).is_none() {
            say!(
                "[{}] {}: no answer in the answers file",
                one_line(key),
                one_line(method)
            );
            say!("  {}", crate::terminal::indent(&request_message(request)));
            return Some(anyhow::anyhow!(
                "the answers file has no answer for {key:?} (the server asked: {})",
                request_message(request)
            ));
        }
        None
    }

    /// Remembers a session request answered from the file.
    fn session_answered(&self, request: &Value) {
        if self.answers.is_some()
            && let Ok(mut answered) = self.answered.lock()
        {
            answered.push(request.clone());
        }
    }

    /// Opens a 2025-11-25 session (`initialize`) instead of using `server/discover`
    /// (`--session`): the server then sends its requests during the call.
    pub fn session(mut self, session: bool) -> Self {
        self.session = session;
        self
    }

    /// Leaves `without` out of the declared capabilities, to see how a server copes.
    pub fn without(mut self, without: Vec<Capability>) -> Self {
        self.without = without;
        self
    }

    /// The answer to the input request `request` (`{"method": …, "params": …}`) keyed
    /// `key`, after printing what it asks.
    pub fn answer(&self, key: &str, request: &Value) -> anyhow::Result<Value> {
        let _one_at_a_time = self.asking.lock().unwrap_or_else(|e| e.into_inner());
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        match method {
            "elicitation/create" => self.elicit(key, &params),
            "sampling/createMessage" => self.sample(key, &params),
            "roots/list" => {
                let uris: Vec<&str> = self
                    .roots
                    .iter()
                    .filter_map(|r| r.get("uri").and_then(Value::as_str))
                    .collect();
                let uris: Vec<String> = uris.into_iter().map(one_line).collect();
                say!("[{}] roots/list → {}", one_line(key), uris.join(", "));
                match self.answers.as_ref().and_then(|a| a.get(key)) {
                    Some(given) => Ok(given.clone()),
                    None => Ok(json!({"roots": self.roots})),
                }
            }
            other => anyhow::bail!("input request {key:?} has an unknown method {other:?}"),
        }
    }

    fn elicit(&self, key: &str, params: &Value) -> anyhow::Result<Value> {
        let message = params.get("message").and_then(Value::as_str).unwrap_or("");
        let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
        if mode == "url" {
            let url = params.get("url").and_then(Value::as_str).unwrap_or("");
            say!("[{}] elicitation (url)", one_line(key));
            if let Some(answers) = &self.answers {
                say!("  {}", crate::terminal::indent(message));
                println!("  open: {}", crate::terminal::url(url));
                return answers.elicitation(key).map_err(anyhow::Error::msg);
            }
            return block(|| crate::prompt::url(message, url));
        }
        say!("[{}] elicitation (form)", one_line(key));
        let schema = params
            .get("requestedSchema")
            .cloned()
            .unwrap_or(Value::Null);
        if let Some(answers) = &self.answers {
            say!("  {}", crate::terminal::indent(message));
            let answer = answers.elicitation(key).map_err(anyhow::Error::msg)?;
            say!("  answered from file: {answer}");
            return Ok(answer);
        }
        block(|| crate::prompt::form(message, &schema))
    }

    fn sample(&self, key: &str, params: &Value) -> anyhow::Result<Value> {
        let max_tokens = params.get("maxTokens").and_then(Value::as_u64).unwrap_or(0);
        say!("[{}] sampling (max {max_tokens} tokens)", one_line(key));
        if let Some(system) = params.get("systemPrompt").and_then(Value::as_str) {
            say!("  system: {}", crate::terminal::indent(system));
        }
        for message in params
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let role = message.get("role").and_then(Value::as_str).unwrap_or("?");
            say!(
                "  {}: {}",
                one_line(role),
                crate::terminal::indent(&content_text(message.get("content")))
            );
        }
        if let Some(answers) = &self.answers {
            let answer = answers.sampling(key).map_err(anyhow::Error::msg)?;
            say!(
                "  answered from file: {}",
                content_text(answer.get("content"))
            );
            return Ok(answer);
        }
        block(crate::prompt::sampling)
    }

    fn next_session_key(&self, kind: &str) -> String {
        let n = self.session_requests.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{kind}-{n}")
    }
}

/// The most rounds one `saga call` goes through before it gives up.
pub(crate) const MAX_ROUNDS: usize = 1_000;

/// What a server appends to the message of a request it asks again because it did not
/// accept the answer (saga's servers do).
const NOT_ACCEPTED: &str = "\n\nYour last answer was not accepted";

/// Whether `a` and `b` ask the same thing: the same method and parameters, the message
/// compared without the reason a server appends when it asks again.
fn same_request(a: &Value, b: &Value) -> bool {
    fn normal(request: &Value) -> Value {
        let mut request = request.clone();
        if let Some(Value::String(message)) = request.pointer_mut("/params/message")
            && let Some(at) = message.find(NOT_ACCEPTED)
        {
            message.truncate(at);
        }
        request
    }
    normal(a) == normal(b)
}

/// What an input request says to the person: an elicitation's message, a sampling
/// request's messages, or its method.
pub(crate) fn request_message(request: &Value) -> String {
    let params = request.get("params");
    if let Some(message) = params
        .and_then(|p| p.get("message"))
        .and_then(Value::as_str)
    {
        return message.to_owned();
    }
    if let Some(messages) = params
        .and_then(|p| p.get("messages"))
        .and_then(Value::as_array)
    {
        return messages
            .iter()
            .map(|m| content_text(m.get("content")))
            .collect::<Vec<_>>()
            .join(" / ");
    }
    request
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned()
}

/// With `--answers`: the server asked `key` again, so it did not accept the file's
/// answer, and the same answer would be refused again. Shows the server's message (which
/// says why, from a saga server) and gives the error that ends the call.
pub(crate) fn asked_again(key: &str, request: &Value) -> anyhow::Error {
    let message = request_message(request);
    say!(
        "[{}] asked again: the server did not accept the answer from the answers file",
        one_line(key)
    );
    say!("  {}", crate::terminal::indent(&message));
    anyhow::anyhow!(
        "the server asked {key:?} again: it did not accept the answer from the answers file. \
         It says: {message}"
    )
}
/// Runs a blocking prompt without stalling the runtime's other tasks.
fn block<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

/// The text of a sampling message's content (one block or an array of blocks).
fn content_text(content: Option<&Value>) -> String {
    let block_text = |block: &Value| match block.get("type").and_then(Value::as_str) {
        Some("text") => block
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        Some(other) => format!("[{other}]"),
        None => block.to_string(),
    };
    match content {
        Some(Value::Array(blocks)) => blocks.iter().map(block_text).collect::<Vec<_>>().join(" "),
        Some(block) => block_text(block),
        None => String::new(),
    }
}

/// A `notifications/progress` as one line: `… 3/9 table 3`.
fn progress_line(params: &rmcp::model::ProgressNotificationParam) -> String {
    let mut line = format!("… progress {}", params.progress);
    if let Some(total) = params.total {
        line.push_str(&format!("/{total}"));
    }
    if let Some(message) = &params.message {
        line.push_str(&format!(" {}", one_line(message)));
    }
    line
}

/// The rmcp client handler: declares what `saga` can answer, and answers server-sent
/// requests of a 2025-11-25 session.
pub(crate) struct Handler(std::sync::Arc<Responder>);

fn capabilities(without: &[Capability], tasks: bool) -> ClientCapabilities {
    let mut declared = json!({
        "elicitation": {"form": {}, "url": {}},
        "sampling": {},
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

async fn connect(
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
            let transport = StreamableHttpClientTransport::with_client(
                Recording::new(seen.clone())?,
                StreamableHttpClientTransportConfig::with_uri(url.clone()),
            );
            let client = crate::deadline::answer(
                &format!("connecting to {url}"),
                handler.serve_with_lifecycle(transport, lifecycle),
            )
            .await?
            .map_err(|e| root_cause(&format!("cannot connect to {url}"), e))?;
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
            }
            anyhow::anyhow!(line)
        }
        other => anyhow::anyhow!("{what}: {other}"),
    }
}

/// The most `tools/list` pages followed: a server that always answers with a next cursor
/// would otherwise be followed forever.
const MAX_TOOL_PAGES: usize = 100;
/// The most tools, and bytes of them, kept from a server's list.
const MAX_TOOLS: usize = 10_000;
const MAX_TOOL_BYTES: usize = 16 * 1024 * 1024;

/// Every tool of the server, following `nextCursor` within the bounds above.
async fn all_tools(
    peer: &rmcp::service::Peer<rmcp::RoleClient>,
) -> anyhow::Result<Vec<rmcp::model::Tool>> {
    let mut tools = Vec::new();
    let mut bytes = 0usize;
    let mut cursor = None;
    for _ in 0..MAX_TOOL_PAGES {
        let page = crate::deadline::answer(
            "tools/list",
            peer.list_tools(Some(
                rmcp::model::PaginatedRequestParams::default().with_cursor(cursor),
            )),
        )
        .await?
        .map_err(|e| request_error("tools/list", e))?;
        bytes += serde_json::to_vec(&page.tools).map_or(0, |text| text.len());
        tools.extend(page.tools);
        if tools.len() > MAX_TOOLS || bytes > MAX_TOOL_BYTES {
            anyhow::bail!(
                "the server's tool list is over {MAX_TOOLS} tools or {} MiB; stopped reading it",
                MAX_TOOL_BYTES / (1024 * 1024)
            );
        }
        cursor = page.next_cursor;
        if cursor.is_none() {
            return Ok(tools);
        }
    }
    anyhow::bail!(
        "the server's tool list went on past {MAX_TOOL_PAGES} pages (a nextCursor every time); \
         stopped reading it"
    )
}

/// `saga tools`: prints every tool and its arguments.
pub async fn list_tools(target: &Target) -> anyhow::Result<()> {
    let connection = connect(
        target,
        std::sync::Arc::new(Responder::new(None, Vec::new())),
    )
    .await?;
    let tools = all_tools(&connection.client).await?;
    for (i, tool) in tools.iter().enumerate() {
        if i > 0 {
            println!();
        }
        let support = connection.seen.task_support(&tool.name);
        print!(
            "{}",
            crate::terminal::clean_lines(&describe_tool(tool, support.as_deref()))
        );
    }
    if tools.is_empty() {
        say!("(no tools)");
    }
    let _ = connection.client.cancel().await;
    Ok(())
}

/// A tool's name, description, title, a table of its arguments, its output schema and
/// whether it runs as a task (`task_support`: its `execution.taskSupport`, if declared).
fn describe_tool(tool: &Tool, task_support: Option<&str>) -> String {
    let mut out = String::new();
    out.push_str(&one_line(&tool.name));
    if let Some(description) = &tool.description {
        // A description may run over lines; they go deeper than the tool's own fields.
        out.push_str(&format!(
            " — {}",
            description.trim().replace('\n', "\n    ")
        ));
    }
    out.push('\n');
    let title = tool
        .title
        .as_deref()
        .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.as_deref()));
    if let Some(title) = title {
        out.push_str(&format!("  title: {}\n", one_line(title.trim())));
    }
    let schema: &Map<String, Value> = &tool.input_schema;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = schema.get("properties").and_then(Value::as_object);
    let rows: Vec<(String, String, &str, String)> = properties
        .into_iter()
        .flatten()
        .map(|(name, property)| {
            (
                one_line(name),
                one_line(&describe_type(property)),
                if required.contains(&name.as_str()) {
                    "required"
                } else {
                    "optional"
                },
                one_line(
                    property
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                ),
            )
        })
        .collect();
    if rows.is_empty() {
        out.push_str("  (no arguments)\n");
    }
    let name_width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let type_width = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    for (name, ty, required, description) in rows {
        out.push_str(
            format!("  {name:name_width$}  {ty:type_width$}  {required:8}  {description}")
                .trim_end(),
        );
        out.push('\n');
    }
    if let Some(output) = &tool.output_schema {
        out.push_str(&format!(
            "  output: {}\n",
            one_line(&describe_output(output))
        ));
    }
    // Absent, the extension's default is "forbidden"; but servers that run tasks do not
    // all say so per tool (saga's own do not send `execution` yet), so absent is shown
    // as absent.
    out.push_str(&format!(
        "  task support: {}\n",
        one_line(task_support.unwrap_or("not declared"))
    ));
    out
}

/// The most characters of an output schema shown by `saga tools`.
const MAX_OUTPUT_CHARS: usize = 160;

/// An output schema on one line: an object as `{name: type, name?: type}` (`?` for an
/// optional property), anything else as its type; cut at [`MAX_OUTPUT_CHARS`].
fn describe_output(schema: &Map<String, Value>) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let text = match schema.get("properties").and_then(Value::as_object) {
        Some(properties) => {
            let fields: Vec<String> = properties
                .iter()
                .map(|(name, property)| {
                    let optional = if required.contains(&name.as_str()) {
                        ""
                    } else {
                        "?"
                    };
                    format!("{name}{optional}: {}", describe_type(property))
                })
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        None => describe_type(&Value::Object(schema.clone())),
    };
    if text.chars().count() > MAX_OUTPUT_CHARS {
        let cut: String = text.chars().take(MAX_OUTPUT_CHARS).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// The roots to offer: `--root` values as `file://` URIs (paths made absolute), or the
/// current directory.
pub fn roots(given: &[String]) -> anyhow::Result<Vec<Value>> {
    let current;
    let given: Vec<&str> = if given.is_empty() {
        current = std::env::current_dir()
            .context("the current directory")?
            .display()
            .to_string();
        vec![current.as_str()]
    } else {
        given.iter().map(String::as_str).collect()
    };
    given.into_iter().map(root).collect()
}

fn root(text: &str) -> anyhow::Result<Value> {
    if text.contains("://") {
        return Ok(json!({"uri": text}));
    }
    let path = Path::new(text);
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .context("the current directory")?
            .join(path)
    };
    let name = absolute
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "/".into());
    Ok(json!({"uri": format!("file://{}", absolute.display()), "name": name}))
}

/// `saga call`: drives `tool` to completion.
pub async fn call(
    target: &Target,
    tool: &str,
    pairs: &[String],
    responder: Responder,
    show_state: bool,
) -> anyhow::Result<Outcome> {
    let responder = std::sync::Arc::new(responder);
    let connection = connect(target, responder.clone()).await?;
    let client = &connection.client;
    if responder.tasks {
        let offered = client
            .peer_info()
            .is_some_and(|info| info.capabilities.supports_tasks());
        if !offered {
            let era = if responder.session {
                "in a 2025-11-25 session"
            } else {
                "(MCP 2026-07-28)"
            };
            anyhow::bail!(
                "--task: the server does not offer tasks {era}: its capabilities declare no \
                 {} extension; call without --task",
                rmcp::model::TASKS_EXTENSION_ID
            );
        }
    }
    let tools = all_tools(client).await?;
    let Some(found) = tools.iter().find(|t| t.name == tool) else {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        anyhow::bail!(
            "no tool named {tool:?} (the server has: {})",
            names.join(", ")
        );
    };
    if responder.tasks && connection.seen.task_support(tool).as_deref() == Some("forbidden") {
        anyhow::bail!(
            "--task: the tool {tool:?} does not run as a task (its execution.taskSupport is \
             \"forbidden\"); call it without --task"
        );
    }
    let arguments =
        parse_arguments(pairs, Some(&found.input_schema)).map_err(anyhow::Error::msg)?;
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    let task = crate::task::Slot::default();
    let run = drive(client, &responder, tool, params, show_state, &task);
    let outcome = if responder.tasks {
        crate::task::until_interrupted(client, &task, run).await
    } else {
        run.await
    };
    let _ = connection.client.cancel().await;
    outcome
}

/// The rounds of a call: MRTR rounds until a result, or (with `--task`) the task the call
/// becomes, followed to its end.
async fn drive(
    client: &Client,
    responder: &Responder,
    tool: &str,
    mut params: CallToolRequestParams,
    show_state: bool,
    task: &crate::task::Slot,
) -> anyhow::Result<Outcome> {
    // The keys answered in the round before: with --answers, one asked again is refused.
    let mut answered: BTreeSet<String> = BTreeSet::new();
    for round in 1..=MAX_ROUNDS {
        say!("── round {round} ──");
        say!(
            "→ tools/call {tool} {}{}",
            Value::Object(params.arguments.clone().unwrap_or_default()),
            if responder.tasks {
                " (tasks extension declared)"
            } else {
                ""
            }
        );
        let response = responder
            .until_stopped(crate::deadline::answer(
                &format!("tools/call {tool}"),
                client.call_tool_once(params.clone()),
            ))
            .await??
            .map_err(|e| request_error(&format!("tools/call {tool}"), e))?;
        say_served_samples(&response);
        match response {
            CallToolResponse::Complete(result) => {
                if responder.tasks {
                    say!("← a result: the server ran the call without a task");
                }
                let is_error = print_result(&result, &format!("after {round} round(s)"))?;
                return Ok(Outcome::Done(is_error));
            }
            CallToolResponse::InputRequired(result) => {
                let requests = result.input_requests.unwrap_or_default();
                let keys: Vec<&str> = requests.keys().map(String::as_str).collect();
                if requests.is_empty() {
                    say!("← input_required: no requests (checkpoint), retrying");
                } else {
                    let keys: Vec<String> = keys.into_iter().map(one_line).collect();
                    say!(
                        "← input_required: {} request(s): {}",
                        requests.len(),
                        keys.join(", ")
                    );
                }
                if let Some(state) = &result.request_state {
                    say!("← requestState {}", shown_state(state, show_state));
                }
                let mut responses = rmcp::model::InputResponses::new();
                for (key, request) in &requests {
                    let request = serde_json::to_value(request)?;
                    if responder.is_scripted() && answered.contains(key) {
                        return Err(asked_again(key, &request));
                    }
                    responses.insert(key.clone(), responder.answer(key, &request)?);
                }
                answered = responses.keys().cloned().collect();
                params.input_responses = (!responses.is_empty()).then_some(responses);
                params.request_state = result.request_state;
            }
            CallToolResponse::Task(created) if responder.tasks => {
                return crate::task::follow(client, responder, created, task).await;
            }
            CallToolResponse::Task(created) => anyhow::bail!(
                "tools/call {tool}: the server answered with task {} though saga did not \
                 declare tasks (try --task)",
                created.task.task_id
            ),
            other => anyhow::bail!("tools/call {tool}: unexpected response {other:?}"),
        }
    }
    // A server that keeps asking must not hold a script forever.
    anyhow::bail!("tools/call {tool}: still asking after {MAX_ROUNDS} rounds; giving up")
}

/// Says which samples the server's own model answered in this request (its `_meta`
/// `saga/samples`): the client never saw them.
fn say_served_samples(response: &CallToolResponse) {
    let meta = match response {
        CallToolResponse::Complete(result) => result.meta.as_ref(),
        CallToolResponse::InputRequired(result) => result.meta.as_ref(),
        _ => None,
    };
    let Some(served) = meta
        .and_then(|meta| meta.0.get("saga/samples"))
        .and_then(Value::as_array)
    else {
        return;
    };
    for sample in served {
        let key = one_line(sample["key"].as_str().unwrap_or("?"));
        match sample["model"].as_str() {
            Some(model) if sample["outcome"] != "failed" => say!(
                "← [{key}] sampling answered by the server's model ({})",
                one_line(model)
            ),
            _ => say!("← [{key}] sampling: the server's model did not answer"),
        }
    }
}

/// The token as printed: whole with `--show-state`, else its ends and its length.
fn shown_state(state: &str, whole: bool) -> String {
    let chars: Vec<char> = state.chars().collect();
    if whole || chars.len() <= 24 {
        return state.to_owned();
    }
    let head: String = chars[..12].iter().collect();
    let tail: String = chars[chars.len() - 6..].iter().collect();
    format!(
        "{head}…{tail} ({} chars; --show-state prints it whole)",
        chars.len()
    )
}

/// Prints a tool's result (`when`: "after 2 round(s)", "of task …"); gives whether it
/// is an error.
pub(crate) fn print_result(result: &CallToolResult, when: &str) -> anyhow::Result<bool> {
    let is_error = result.is_error.unwrap_or(false);
    if is_error {
        say!("── ERROR (isError: true) {when} ──");
    } else {
        say!("── result {when} ──");
    }
    for block in &result.content {
        let value = serde_json::to_value(block)?;
        let text = content_text(Some(&value));
        if is_error {
            say!("error: {text}");
        } else {
            say!("{text}");
        }
    }
    if let Some(structured) = &result.structured_content {
        say!(
            "structuredContent:\n{}",
            serde_json::to_string_pretty(structured)?
        );
    }
    Ok(is_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortens_the_token_unless_asked() {
        let token = "A".repeat(12) + &"B".repeat(100) + "CCCCCC";
        assert_eq!(shown_state(&token, true), token);
        let short = shown_state(&token, false);
        assert!(
            short.starts_with("AAAAAAAAAAAA…CCCCCC (118 chars"),
            "{short}"
        );
        assert_eq!(shown_state("abc", false), "abc");
    }

    #[test]
    fn declares_capabilities_but_those_left_out() {
        let all = serde_json::to_value(capabilities(&[], false)).unwrap();
        assert!(all["sampling"].is_object() && all["roots"].is_object());
        assert!(all["elicitation"]["url"].is_object());
        assert!(all.get("extensions").is_none(), "{all}");
        let some = serde_json::to_value(capabilities(
            &[Capability::Sampling, Capability::Url],
            false,
        ))
        .unwrap();
        assert!(some.get("sampling").is_none());
        assert!(some["elicitation"]["form"].is_object());
        assert!(some["elicitation"].get("url").is_none());
        assert!(some["roots"].is_object());
    }

    #[test]
    fn declares_the_tasks_extension_with_task() {
        let declared = capabilities(&[], true);
        assert!(declared.supports_tasks());
        let json = serde_json::to_value(&declared).unwrap();
        assert!(
            json["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
            "{json}"
        );
        assert!(json["elicitation"]["form"].is_object());
    }

    #[test]
    fn a_request_asked_again_with_its_reason_is_the_same_request() {
        let first = json!({"method": "elicitation/create", "params": {
            "mode": "form", "message": "Book a meeting for Ada",
            "requestedSchema": {"type": "object", "properties": {"duration": {"type": "integer", "maximum": 240}}}}});
        let mut again = first.clone();
        again["params"]["message"] = json!(
            "Book a meeting for Ada\n\nYour last answer was not accepted: `duration` is above the maximum 240."
        );
        assert!(same_request(&first, &again));
        assert!(same_request(&first, &first));
        let mut other = first.clone();
        other["params"]["message"] = json!("Book a meeting for Bob");
        assert!(!same_request(&first, &other));
        let mut other_schema = first.clone();
        other_schema["params"]["requestedSchema"]["properties"] = json!({});
        assert!(!same_request(&first, &other_schema));
    }

    #[test]
    fn with_answers_a_session_stops_at_a_request_asked_again_or_without_an_entry() {
        let answers = Answers::parse(r#"{"elicitation-1": {"duration": 300}}"#).unwrap();
        let responder = Responder::new(Some(answers), Vec::new());
        let ask = |message: &str| {
            json!({"method": "elicitation/create", "params": {"mode": "form", "message": message,
                "requestedSchema": {"type": "object", "properties": {}}}})
        };
        let first = ask("How long?");
        assert!(responder.session_reask("elicitation-1", &first).is_none());
        responder.session_answered(&first);
        // Asked again with the reason: refused, and the error carries the server's words.
        let again = ask(
            "How long?\n\nYour last answer was not accepted: `duration` is above the maximum 240.",
        );
        let error = responder
            .session_reask("elicitation-2", &again)
            .expect("a re-ask stops the call");
        let text = format!("{error:#}");
        assert!(text.contains("elicitation-2"), "{text}");
        assert!(
            text.contains("`duration` is above the maximum 240"),
            "{text}"
        );
        // Another question with no entry for its counter stops too, quoting it.
        let error = responder
            .session_reask("elicitation-2", &ask("Which room?"))
            .expect("no entry stops the call");
        assert!(format!("{error:#}").contains("Which room?"), "{error:#}");
        // Roots need no entry.
        assert!(
            responder
                .session_reask("roots-3", &json!({"method": "roots/list"}))
                .is_none()
        );
        // A person at the terminal is asked again instead.
        let person = Responder::new(None, Vec::new());
        person.session_answered(&first);
        assert!(person.session_reask("elicitation-2", &again).is_none());
    }

    #[tokio::test]
    async fn a_stop_wins_over_the_requests_own_outcome() {
        let responder = Responder::new(None, Vec::new());
        assert_eq!(responder.until_stopped(async { 7 }).await.unwrap(), 7);
        responder.set_stop(anyhow::anyhow!("no answer for elicitation-2"));
        let error = responder
            .until_stopped(std::future::pending::<()>())
            .await
            .unwrap_err();
        assert_eq!(error.to_string(), "no answer for elicitation-2");
    }

    #[test]
    fn progress_is_one_line() {
        let params: rmcp::model::ProgressNotificationParam = serde_json::from_value(
            json!({"progressToken": 1, "progress": 50, "total": 100, "message": "50% done"}),
        )
        .unwrap();
        assert_eq!(progress_line(&params), "… progress 50/100 50% done");
        let params: rmcp::model::ProgressNotificationParam =
            serde_json::from_value(json!({"progressToken": 1, "progress": 3})).unwrap();
        assert_eq!(progress_line(&params), "… progress 3");
    }

    #[test]
    fn session_keys_share_one_counter_across_kinds() {
        let responder = Responder::new(None, Vec::new());
        assert_eq!(responder.next_session_key("elicitation"), "elicitation-1");
        assert_eq!(responder.next_session_key("sampling"), "sampling-2");
        assert_eq!(responder.next_session_key("roots"), "roots-3");
        assert_eq!(responder.next_session_key("elicitation"), "elicitation-4");
    }

    #[test]
    fn roots_are_file_uris() {
        let roots = roots(&["/srv/app".into(), "https://x/y".into()]).unwrap();
        assert_eq!(roots[0], json!({"uri": "file:///srv/app", "name": "app"}));
        assert_eq!(roots[1], json!({"uri": "https://x/y"}));
        let default = super::roots(&[]).unwrap();
        assert_eq!(default.len(), 1);
        assert!(default[0]["uri"].as_str().unwrap().starts_with("file:///"));
    }

    #[test]
    fn answers_from_a_file_without_a_terminal() {
        let answers = Answers::parse(r#"{"e": {"target": "prod"}, "s": "Yes"}"#).unwrap();
        let responder = Responder::new(Some(answers), vec![json!({"uri": "file:///w"})]);
        let elicit = json!({"method": "elicitation/create", "params": {
            "mode": "form", "message": "m", "requestedSchema": {"type": "object", "properties": {}}}});
        assert_eq!(
            responder.answer("e", &elicit).unwrap(),
            json!({"action": "accept", "content": {"target": "prod"}})
        );
        let sample = json!({"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "q"}}], "maxTokens": 5}});
        assert_eq!(
            responder.answer("s", &sample).unwrap()["content"]["text"],
            "Yes"
        );
        let roots = json!({"method": "roots/list"});
        assert_eq!(
            responder.answer("r", &roots).unwrap(),
            json!({"roots": [{"uri": "file:///w"}]})
        );
        assert!(responder.answer("missing", &sample).is_err());
        assert!(responder.answer("e", &json!({"method": "x/y"})).is_err());
    }

    #[test]
    fn a_servers_line_breaks_forge_no_line_of_a_tool_listing() {
        let tool: Tool = serde_json::from_value(json!({
            "name": "t\nforged_tool — Looks real.",
            "title": "T\n  title: forged",
            "description": "Line one.\nforged_tool_2 — Also real?",
            "inputSchema": {"type": "object", "properties": {
                "a\n  forged_arg  string  required": {
                    "type": "string",
                    "enum": ["x\n  forged_enum  string  required"],
                    "description": "d\n  forged_description"
                }
            }}
        }))
        .unwrap();
        let text = describe_tool(&tool, Some("optional\n  task support: forged"));
        // Every line the listing prints is its own: a tool's line, a deeper description
        // line, or one of the tool's two-space fields; no server text starts a line.
        for line in text.lines() {
            assert!(
                line.starts_with("t\\u{a}forged_tool")
                    || line.starts_with("    forged_tool_2")
                    || line.starts_with("  title: T\\u{a}")
                    || line.starts_with("  a\\u{a}")
                    || line.starts_with("  task support: optional\\u{a}"),
                "a forged line: {line:?}\n{text}"
            );
        }
        assert_eq!(text.lines().count(), 5, "{text}");
    }

    #[test]
    fn progress_messages_stay_on_their_line() {
        let params: rmcp::model::ProgressNotificationParam = serde_json::from_value(json!({
            "progressToken": 1, "progress": 1.0, "total": 3.0,
            "message": "step\n← task x: completed"
        }))
        .unwrap();
        assert_eq!(
            progress_line(&params),
            "… progress 1/3 step\\u{a}← task x: completed"
        );
    }

    #[test]
    fn lists_arguments_with_types_and_requiredness() {
        let tool: Tool = serde_json::from_value(json!({
            "name": "complex_tool",
            "description": "Deploys.",
            "inputSchema": {"type": "object", "properties": {
                "initial_arg": {"type": "string", "description": "first"},
                "replicas": {"type": ["integer", "null"], "minimum": 0}
            }, "required": ["initial_arg"]}
        }))
        .unwrap();
        let text = describe_tool(&tool, None);
        assert!(text.starts_with("complex_tool — Deploys.\n"), "{text}");
        assert!(text.ends_with("  task support: not declared\n"), "{text}");
        assert!(
            !text.contains("title:") && !text.contains("output:"),
            "{text}"
        );
        assert!(
            text.contains("initial_arg  string          required  first"),
            "{text}"
        );
        assert!(
            text.contains("replicas     integer (>= 0)  optional"),
            "{text}"
        );
    }

    #[test]
    fn shows_the_title_output_schema_and_task_support() {
        let tool: Tool = serde_json::from_value(json!({
            "name": "book_meeting",
            "title": "Book a meeting",
            "inputSchema": {"type": "object", "properties": {"organiser": {"type": "string"}},
                            "required": ["organiser"]},
            "outputSchema": {"type": "object", "properties": {
                "room": {"enum": ["aurora", "cosmos"]},
                "minutes": {"type": "integer", "minimum": 15},
                "notes": {"type": "string"}
            }, "required": ["room", "minutes"]}
        }))
        .unwrap();
        let text = describe_tool(&tool, Some("optional"));
        assert!(
            text.starts_with("book_meeting\n  title: Book a meeting\n  organiser"),
            "{text}"
        );
        assert!(
            text.contains(
                "  output: {room: one of aurora|cosmos, minutes: integer (>= 15), notes?: string}\n"
            ),
            "{text}"
        );
        assert!(text.ends_with("  task support: optional\n"), "{text}");
        // A title in the annotations only, and an output that is not an object.
        let tool: Tool = serde_json::from_value(json!({
            "name": "t", "inputSchema": {"type": "object"},
            "annotations": {"title": "Tee"}, "outputSchema": {"type": "string"}
        }))
        .unwrap();
        let text = describe_tool(&tool, Some("required"));
        assert!(text.contains("  title: Tee\n"), "{text}");
        assert!(text.contains("  output: string\n"), "{text}");
    }

    #[test]
    fn a_long_output_schema_is_cut() {
        let mut properties = Map::new();
        for i in 0..100 {
            properties.insert(format!("field_{i}"), json!({"type": "string"}));
        }
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), Value::Object(properties));
        let shown = describe_output(&schema);
        assert_eq!(shown.chars().count(), MAX_OUTPUT_CHARS + 1, "{shown}");
        assert!(shown.ends_with('…'));
    }
}
