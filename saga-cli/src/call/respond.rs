//! The answers: each input request the server makes, answered from `--answers` or by
//! asking the person at the terminal, whichever era it comes in.

#![allow(deprecated)] // sampling and roots: deprecated in 2026-07-28, still served

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Context as _;
use serde_json::{Value, json};

use crate::answers::Answers;
use crate::terminal::one_line;

/// Answers input requests: from a file, or by asking the person at the terminal.
#[derive(Debug)]
pub struct Responder {
    answers: Option<Answers>,
    roots: Vec<Value>,
    /// Counts the requests of a 2025-11-25 session, which have no keys of their own.
    session_requests: AtomicUsize,
    /// One prompt at a time.
    pub(super) asking: Mutex<()>,
    /// Capabilities not to declare (`--without`).
    pub(super) without: Vec<Capability>,
    /// Open a 2025-11-25 session with `initialize` instead of `server/discover`.
    pub(super) session: bool,
    /// Declare the MCP tasks extension and follow the task a call becomes (`--task`).
    pub(super) tasks: bool,
    /// The session requests answered from the file, as [`same_request`] compares them.
    answered: Mutex<Vec<Value>>,
    /// Why the call must stop: set when a session request could not be answered (the
    /// server only hears an error; the person must hear why).
    stop: Mutex<Option<anyhow::Error>>,
    /// Wakes the call when [`Responder::stop`] is set.
    stopped: tokio::sync::Notify,
}

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
    /// `sampling.tools` only: samples that offer tools.
    SamplingTools,
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
    pub(super) fn set_stop(&self, error: anyhow::Error) {
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
    pub(super) fn session_reask(&self, key: &str, request: &Value) -> Option<anyhow::Error> {
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
    pub(super) fn session_answered(&self, request: &Value) {
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
        let tools: Vec<String> = params
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|tool| {
                let name = tool.get("name").and_then(Value::as_str)?;
                let description = tool
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                say!("  tool {}: {}", one_line(name), one_line(description));
                Some(name.to_owned())
            })
            .collect();
        if let Some(mode) = params.pointer("/toolChoice/mode").and_then(Value::as_str) {
            say!("  tool choice: {}", one_line(mode));
        }
        if let Some(answers) = &self.answers {
            let answer = answers.sampling(key).map_err(anyhow::Error::msg)?;
            say!(
                "  answered from file: {}",
                content_text(answer.get("content"))
            );
            return Ok(answer);
        }
        let id = key.to_owned();
        block(move || crate::prompt::sampling(&tools, &id))
    }

    pub(super) fn next_session_key(&self, kind: &str) -> String {
        let n = self.session_requests.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{kind}-{n}")
    }
}

/// What a server appends to the message of a request it asks again because it did not
/// accept the answer (saga's servers do).
const NOT_ACCEPTED: &str = "\n\nYour last answer was not accepted";

/// Whether `a` and `b` ask the same thing: the same method and parameters, the message
/// compared without the reason a server appends when it asks again.
pub(super) fn same_request(a: &Value, b: &Value) -> bool {
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
fn request_message(request: &Value) -> String {
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
    anyhow::Error::new(GaveUp(format!(
        "the server asked {key:?} again: it did not accept the answer from the answers file. \
         It says: {message}"
    )))
}

/// saga's own decision to stop a call it cannot go on with (its answers file has no
/// answer the server accepts): a task the call created is then cancelled, where an error
/// of the server or the network leaves it running.
#[derive(Debug)]
pub(crate) struct GaveUp(String);

impl std::fmt::Display for GaveUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GaveUp {}
/// Runs a blocking prompt without stalling the runtime's other tasks.
fn block<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

/// The text of a sampling message's content (one block or an array of blocks).
pub(super) fn content_text(content: Option<&Value>) -> String {
    let block_text = |block: &Value| match block.get("type").and_then(Value::as_str) {
        Some("text") => block
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        Some("tool_use") => format!(
            "[calls {} {}]",
            one_line(block.get("name").and_then(Value::as_str).unwrap_or("?")),
            one_line(&block.get("input").map(Value::to_string).unwrap_or_default())
        ),
        Some("tool_result") => format!(
            "[result of {}{}: {}]",
            one_line(
                block
                    .get("toolUseId")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
            ),
            if block.get("isError") == Some(&Value::Bool(true)) {
                ", an error"
            } else {
                ""
            },
            one_line(&content_text(block.get("content")))
        ),
        // A type of the server's choosing: one line, whatever it holds.
        Some(other) => format!("[{}]", one_line(other)),
        None => block.to_string(),
    };
    match content {
        Some(Value::Array(blocks)) => blocks.iter().map(block_text).collect::<Vec<_>>().join(" "),
        Some(block) => block_text(block),
        None => String::new(),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Finding 11 of the third hardening pass: a content block's type with a line break
    /// made one line more wherever a result or a sample's message was shown.
    #[test]
    fn a_content_type_cannot_forge_a_line() {
        let block = serde_json::json!({"type": "image\n── result ──\nforged"});
        let shown = content_text(Some(&block));
        assert_eq!(shown.lines().count(), 1, "{shown}");
        assert!(shown.starts_with("[image\\u{a}"), "{shown}");
    }
}
