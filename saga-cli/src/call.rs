//! Talking to a server with rmcp's client: `saga tools` and `saga call`.
//!
//! The client connects with `server/discover` (MCP 2026-07-28) and drives a call through
//! its `input_required` rounds itself. When the server does not answer `server/discover`,
//! rmcp falls back to a 2025-11-25 session (`initialize`); the server then sends its
//! elicitation, sampling and roots requests during the call, and the same prompts (or
//! `--answers` entries keyed `elicitation-N` / `sampling-N`) answer them.

#![allow(deprecated)] // sampling and roots: deprecated in 2026-07-28, still served

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
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData};
use serde_json::{Map, Value, json};

use crate::Target;
use crate::answers::Answers;
use crate::schema::{describe_type, parse_arguments};

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
                say!("[{key}] roots/list → {}", uris.join(", "));
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
            say!("[{key}] elicitation (url)");
            if let Some(answers) = &self.answers {
                say!("  {message}");
                println!("  open: {}", crate::terminal::url(url));
                return answers.elicitation(key).map_err(anyhow::Error::msg);
            }
            return block(|| crate::prompt::url(message, url));
        }
        say!("[{key}] elicitation (form)");
        let schema = params
            .get("requestedSchema")
            .cloned()
            .unwrap_or(Value::Null);
        if let Some(answers) = &self.answers {
            say!("  {message}");
            let answer = answers.elicitation(key).map_err(anyhow::Error::msg)?;
            say!("  answered from file: {answer}");
            return Ok(answer);
        }
        block(|| crate::prompt::form(message, &schema))
    }

    fn sample(&self, key: &str, params: &Value) -> anyhow::Result<Value> {
        let max_tokens = params.get("maxTokens").and_then(Value::as_u64).unwrap_or(0);
        say!("[{key}] sampling (max {max_tokens} tokens)");
        if let Some(system) = params.get("systemPrompt").and_then(Value::as_str) {
            say!("  system: {system}");
        }
        for message in params
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let role = message.get("role").and_then(Value::as_str).unwrap_or("?");
            say!("  {role}: {}", content_text(message.get("content")));
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
const MAX_ROUNDS: usize = 1_000;
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

/// The rmcp client handler: declares what `saga` can answer, and answers server-sent
/// requests of a 2025-11-25 session.
struct Handler(std::sync::Arc<Responder>);

fn capabilities(without: &[Capability]) -> ClientCapabilities {
    let mut declared = json!({
        "elicitation": {"form": {}, "url": {}},
        "sampling": {},
        "roots": {}
    });
    if let Some(declared) = declared.as_object_mut() {
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
        let answer = self
            .0
            .answer(&key, &json!({"method": method, "params": params}))
            .map_err(internal)?;
        serde_json::from_value(answer).map_err(|e| internal(e.into()))
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let config = ClientConfig::new(
            capabilities(&self.0.without),
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
}

type Client = RunningService<RoleClient, Handler>;

async fn connect(target: &Target, responder: std::sync::Arc<Responder>) -> anyhow::Result<Client> {
    let lifecycle = if responder.session {
        ClientLifecycleMode::Initialize
    } else {
        ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        }
    };
    let handler = Handler(responder);
    match target {
        Target::Http(url) => {
            let transport = StreamableHttpClientTransport::from_uri(url.clone());
            handler
                .serve_with_lifecycle(transport, lifecycle)
                .await
                .map_err(|e| root_cause(&format!("cannot connect to {url}"), e))
        }
        Target::Stdio(words) => {
            let mut command = tokio::process::Command::new(&words[0]);
            command.args(&words[1..]);
            // The server's log would tear the prompts apart.
            let (transport, _) = TokioChildProcess::builder(command)
                .stderr(std::process::Stdio::null())
                .spawn()
                .with_context(|| format!("cannot start {:?}", words[0]))?;
            handler
                .serve_with_lifecycle(transport, lifecycle)
                .await
                .map_err(|e| root_cause(&format!("cannot talk MCP with {:?}", words.join(" ")), e))
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
fn request_error(what: &str, error: ServiceError) -> anyhow::Error {
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
        let page = peer
            .list_tools(Some(
                rmcp::model::PaginatedRequestParams::default().with_cursor(cursor),
            ))
            .await
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
    let client = connect(
        target,
        std::sync::Arc::new(Responder::new(None, Vec::new())),
    )
    .await?;
    let tools = all_tools(&client).await?;
    for (i, tool) in tools.iter().enumerate() {
        if i > 0 {
            println!();
        }
        print!("{}", crate::terminal::clean_lines(&describe_tool(tool)));
    }
    if tools.is_empty() {
        say!("(no tools)");
    }
    let _ = client.cancel().await;
    Ok(())
}

/// A tool's name, description and a table of its arguments.
fn describe_tool(tool: &Tool) -> String {
    let mut out = String::new();
    out.push_str(&tool.name);
    if let Some(description) = &tool.description {
        out.push_str(&format!(" — {}", description.trim()));
    }
    out.push('\n');
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
                name.clone(),
                describe_type(property),
                if required.contains(&name.as_str()) {
                    "required"
                } else {
                    "optional"
                },
                property
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
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
    out
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

/// `saga call`: drives `tool` to completion; gives whether the result is an error.
pub async fn call(
    target: &Target,
    tool: &str,
    pairs: &[String],
    responder: Responder,
    show_state: bool,
) -> anyhow::Result<bool> {
    let responder = std::sync::Arc::new(responder);
    let client = connect(target, responder.clone()).await?;
    let tools = all_tools(&client).await?;
    let Some(found) = tools.iter().find(|t| t.name == tool) else {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        anyhow::bail!(
            "no tool named {tool:?} (the server has: {})",
            names.join(", ")
        );
    };
    let arguments =
        parse_arguments(pairs, Some(&found.input_schema)).map_err(anyhow::Error::msg)?;
    let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    for round in 1..=MAX_ROUNDS {
        say!("── round {round} ──");
        say!(
            "→ tools/call {tool} {}",
            Value::Object(params.arguments.clone().unwrap_or_default())
        );
        let response = client
            .call_tool_once(params.clone())
            .await
            .map_err(|e| request_error(&format!("tools/call {tool}"), e))?;
        match response {
            CallToolResponse::Complete(result) => {
                let is_error = print_result(&result, round)?;
                let _ = client.cancel().await;
                return Ok(is_error);
            }
            CallToolResponse::InputRequired(result) => {
                let requests = result.input_requests.unwrap_or_default();
                let keys: Vec<&str> = requests.keys().map(String::as_str).collect();
                if requests.is_empty() {
                    say!("← input_required: no requests (checkpoint), retrying");
                } else {
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
                    responses.insert(key.clone(), responder.answer(key, &request)?);
                }
                params.input_responses = (!responses.is_empty()).then_some(responses);
                params.request_state = result.request_state;
            }
            other => anyhow::bail!("tools/call {tool}: unexpected response {other:?}"),
        }
    }
    // A server that keeps asking (say, again and again for an answer from `--answers` that
    // fails its schema) must not hold a script forever.
    anyhow::bail!("tools/call {tool}: still asking after {MAX_ROUNDS} rounds; giving up")
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

fn print_result(result: &CallToolResult, rounds: usize) -> anyhow::Result<bool> {
    let is_error = result.is_error.unwrap_or(false);
    if is_error {
        say!("── ERROR (isError: true) after {rounds} round(s) ──");
    } else {
        say!("── result after {rounds} round(s) ──");
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
        let all = serde_json::to_value(capabilities(&[])).unwrap();
        assert!(all["sampling"].is_object() && all["roots"].is_object());
        assert!(all["elicitation"]["url"].is_object());
        let some =
            serde_json::to_value(capabilities(&[Capability::Sampling, Capability::Url])).unwrap();
        assert!(some.get("sampling").is_none());
        assert!(some["elicitation"]["form"].is_object());
        assert!(some["elicitation"].get("url").is_none());
        assert!(some["roots"].is_object());
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
        let text = describe_tool(&tool);
        assert!(text.starts_with("complex_tool — Deploys.\n"), "{text}");
        assert!(
            text.contains("initial_arg  string          required  first"),
            "{text}"
        );
        assert!(
            text.contains("replicas     integer (>= 0)  optional"),
            "{text}"
        );
    }
}
