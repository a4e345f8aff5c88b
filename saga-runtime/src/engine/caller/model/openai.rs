//! The OpenAI-compatible chat completions API (feature `openai`): `POST
//! {base}/chat/completions` with a bearer key, as OpenAI documents it and vLLM, llama.cpp's
//! server, Ollama, LM Studio and most hosted providers serve it.
//!
//! The HTTP client is `crate::net`'s: hyper's over rustls with *ring* and the system's
//! root certificates.

use std::time::Duration;

use rmcp::model::{
    CreateMessageRequestParams, Role, SamplingMessage, SamplingMessageContentBlock, ToolChoiceMode,
};
use serde_json::{Value, json};

use super::{Completion, Model, ModelError};
use futures::future::BoxFuture;

/// The largest reply read from the provider: a reply larger than any completion of the
/// largest `maxTokens` is refused, not buffered.
const MAX_REPLY_BYTES: usize = 4 * 1024 * 1024;

/// A provider of the chat completions API.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use saga_runtime::model::OpenAiCompatible;
/// // A local Ollama, whose key is not checked:
/// let ollama = OpenAiCompatible::new("http://127.0.0.1:11434/v1", "ollama", "llama3.2")?;
/// // A hosted provider; a tool's model hint picks among the allowed models:
/// let openai = OpenAiCompatible::new(
///     "https://api.openai.com/v1",
///     std::env::var("OPENAI_API_KEY")?,
///     "gpt-4o-mini",
/// )?
/// .allow_hinted(["gpt-4o"]);
/// # let _ = (ollama, openai); Ok(()) }
/// ```
#[derive(Clone)]
pub struct OpenAiCompatible {
    endpoint: http::Uri,
    key: String,
    model: String,
    hinted: Vec<String>,
    client: Client,
}

type Client = crate::net::Client;

impl std::fmt::Debug for OpenAiCompatible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("OpenAiCompatible")
            .field("endpoint", &self.endpoint)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl OpenAiCompatible {
    /// The API at `base_url` (`https://api.openai.com/v1`, `http://127.0.0.1:8000/v1`),
    /// with the bearer key `key`, answering with `model` unless a tool's hint names an
    /// allowed one ([`OpenAiCompatible::allow_hinted`]).
    pub fn new(
        base_url: impl AsRef<str>,
        key: impl Into<String>,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        let endpoint: http::Uri = format!(
            "{}/chat/completions",
            base_url.as_ref().trim_end_matches('/')
        )
        .parse()
        .map_err(|_| ModelError::Unsupported("the base URL is not a URL".into()))?;
        let client = crate::net::client(Duration::from_secs(10)).map_err(|error| {
            tracing::warn!(%error, "no HTTP client for the server's model");
            ModelError::Unreachable
        })?;
        Ok(Self {
            endpoint,
            key: key.into(),
            model: model.into(),
            hinted: Vec::new(),
            client,
        })
    }

    /// Models a tool's `model_hint(..)` may pick, besides the default; a hint names one
    /// when it is a part of its name (as MCP's hints are read). Other hints are ignored.
    pub fn allow_hinted<S: Into<String>>(mut self, models: impl IntoIterator<Item = S>) -> Self {
        self.hinted = models.into_iter().map(Into::into).collect();
        self
    }

    /// The model for `request`: the first hint an allowed model contains, or the default.
    fn model_for(&self, request: &CreateMessageRequestParams) -> &str {
        let hints = request
            .model_preferences
            .as_ref()
            .and_then(|preferences| preferences.hints.as_ref());
        hints
            .into_iter()
            .flatten()
            .filter_map(|hint| hint.name.as_deref())
            .find_map(|hint| self.hinted.iter().find(|model| model.contains(hint)))
            .map_or(&self.model, |model| model)
    }

    /// The request body: the system prompt first, then each message as the chat
    /// completions API writes it (a model's tool uses as its `tool_calls`, each tool
    /// result as a `tool` message), the tools offered as `function` tools, and the
    /// tool choice.
    fn body(&self, request: &CreateMessageRequestParams) -> Result<Value, ModelError> {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if let Some(system) = &request.system_prompt {
            messages.push(json!({"role": "system", "content": system}));
        }
        for message in &request.messages {
            chat_messages(message, &mut messages)?;
        }
        let mut body = json!({
            "model": self.model_for(request),
            "messages": messages,
            "max_tokens": request.max_tokens,
        });
        if let Some(temperature) = request.temperature {
            body["temperature"] = json!(temperature);
        }
        if let Some(stop) = &request.stop_sequences {
            body["stop"] = json!(stop);
        }
        if let Some(tools) = &request.tools {
            let functions: Vec<Value> = tools
                .iter()
                .map(|tool| {
                    let mut parameters = (*tool.input_schema).clone();
                    // A dialect marker some providers' schema checks refuse.
                    parameters.remove("$schema");
                    json!({"type": "function", "function": {
                        "name": tool.name,
                        "description": tool.description.as_deref().unwrap_or_default(),
                        "parameters": parameters,
                    }})
                })
                .collect();
            body["tools"] = Value::Array(functions);
            if let Some(mode) = request
                .tool_choice
                .as_ref()
                .and_then(|choice| choice.mode.as_ref())
            {
                body["tool_choice"] = json!(match mode {
                    ToolChoiceMode::Required => "required",
                    ToolChoiceMode::None => "none",
                    // `Auto`, and any mode a later MCP adds: the model decides.
                    _ => "auto",
                });
            }
        }
        Ok(body)
    }
}

/// One MCP message as chat completions messages: its text (one message), an assistant's
/// tool uses as that message's `tool_calls`, and each tool result as a `tool` message of
/// its own, before any text the user wrote beside them (the API wants a call's result
/// right after the call).
fn chat_messages(message: &SamplingMessage, into: &mut Vec<Value>) -> Result<(), ModelError> {
    let mut text = String::new();
    let mut calls = Vec::new();
    for block in message.content.iter() {
        match block {
            SamplingMessageContentBlock::Text(part) => text.push_str(&part.text),
            SamplingMessageContentBlock::ToolUse(used) if message.role == Role::Assistant => {
                calls.push(json!({
                    "id": used.id,
                    "type": "function",
                    "function": {
                        "name": used.name,
                        // The API carries arguments as a JSON text.
                        "arguments": Value::Object(used.input.clone()).to_string(),
                    },
                }));
            }
            SamplingMessageContentBlock::ToolResult(result) if message.role == Role::User => {
                let mut content = String::new();
                for part in &result.content {
                    match part.as_text() {
                        Some(part) => content.push_str(&part.text),
                        None => {
                            return Err(ModelError::Unsupported(
                                "only text tool results are sent to the server's model".into(),
                            ));
                        }
                    }
                }
                if result.is_error == Some(true) {
                    content.insert_str(0, "Error: ");
                }
                into.push(json!({
                    "role": "tool",
                    "tool_call_id": result.tool_use_id,
                    "content": content,
                }));
            }
            _ => {
                return Err(ModelError::Unsupported(
                    "only text, tool uses and tool results are sent to the server's model".into(),
                ));
            }
        }
    }
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    if !calls.is_empty() {
        let content = if text.is_empty() {
            Value::Null
        } else {
            Value::String(text)
        };
        into.push(json!({"role": role, "content": content, "tool_calls": calls}));
    } else if !text.is_empty()
        || !message
            .content
            .iter()
            .any(|block| matches!(block, SamplingMessageContentBlock::ToolResult(_)))
    {
        into.push(json!({"role": role, "content": text}));
    }
    Ok(())
}

/// What stands for a credential taken out of a logged text.
const REDACTED: &str = "[redacted]";

/// `text` without the provider key `key`, and without anything that reads as a
/// credential: the value after `Bearer ` (and so an echoed `Authorization` header), and
/// `sk-…` keys of any provider's. For the server's log.
pub(crate) fn redacted(text: &str, key: &str) -> String {
    // Only the head of a reply is logged (200 characters): what lies past 64 KiB is not
    // looked at, so that a provider's huge body costs one pass over 64 KiB at most.
    let mut head = text.len().min(64 * 1024);
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let text = &text[..head];
    let text = if key.len() >= 4 {
        text.replace(key, REDACTED)
    } else {
        text.to_owned()
    };
    // `Bearer X`, in any case: X goes. ASCII lower-casing keeps every byte's offset.
    let text = redact_after(&text, &text.to_ascii_lowercase(), "bearer ", 1);
    // `sk-…` (OpenAI's, Anthropic's `sk-ant-…`, most providers' keys), when it is longer
    // than a word.
    redact_after(&text, &text, "sk-", 8)
}

/// `text` with the run of credential characters after each `marker` (found in `find_in`,
/// of the same byte offsets) replaced by [`REDACTED`] when it is at least `min` long (the
/// marker itself goes too for `sk-`, kept for `bearer `). One pass.
fn redact_after(text: &str, find_in: &str, marker: &str, min: usize) -> String {
    let credential_char = |c: char| c.is_ascii_alphanumeric() || "-_.~+/=".contains(c);
    let keeps_marker = marker.ends_with(' ');
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(found) = find_in[at..].find(marker) {
        let begin = at + found;
        let start = begin + marker.len();
        let end = text[start..]
            .find(|c: char| !credential_char(c))
            .map_or(text.len(), |n| start + n);
        if end - start >= min {
            out.push_str(&text[at..if keeps_marker { start } else { begin }]);
            out.push_str(REDACTED);
        } else {
            out.push_str(&text[at..end]);
        }
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// A chat completion reply read as the documented format: the first choice's message.
pub(crate) fn read_reply(reply: &[u8]) -> Result<Completion, ModelError> {
    let reply: Value = serde_json::from_slice(reply).map_err(|_| ModelError::Malformed)?;
    let choice = reply
        .get("choices")
        .and_then(|choices| choices.get(0))
        .ok_or(ModelError::Malformed)?;
    let message = choice.get("message").ok_or(ModelError::Malformed)?;
    let tool_uses = read_tool_calls(message.get("tool_calls"))?;
    let text = match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        // Some servers answer with content parts: their text, in order.
        Some(Value::Array(parts))
            if !parts.is_empty()
                && parts
                    .iter()
                    .all(|part| part.get("text").is_some_and(Value::is_string)) =>
        {
            parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect()
        }
        _ if message
            .get("refusal")
            .is_some_and(|refusal| refusal.is_string()) =>
        {
            return Err(ModelError::Refused);
        }
        // A message of tool calls alone has no content (`null`, or none).
        None | Some(Value::Null) if !tool_uses.is_empty() => String::new(),
        _ => return Err(ModelError::Malformed),
    };
    let model = reply
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_owned();
    let mut completion = Completion::new(text, model);
    completion.tool_uses = tool_uses;
    match choice.get("finish_reason").and_then(Value::as_str) {
        Some("stop") => completion = completion.with_stop_reason("endTurn"),
        Some("length") => completion = completion.with_stop_reason("maxTokens"),
        Some("tool_calls" | "function_call") => completion = completion.with_stop_reason("toolUse"),
        Some("content_filter") => return Err(ModelError::Refused),
        Some(other) => completion = completion.with_stop_reason(other),
        None => {}
    }
    let usage = reply.get("usage");
    let count = |name: &str| {
        usage
            .and_then(|usage| usage.get(name))
            .and_then(Value::as_u64)
    };
    if let Some(tokens) = count("total_tokens") {
        completion = completion.with_tokens(tokens);
    }
    if let (Some(input), Some(output)) = (count("prompt_tokens"), count("completion_tokens")) {
        completion = completion.with_usage(input, output);
    }
    Ok(completion)
}

/// A reply message's `tool_calls` as tool uses: each a `function` call with an id, a name
/// and arguments that are a JSON object written as text. Anything else is not the
/// documented format.
fn read_tool_calls(
    calls: Option<&Value>,
) -> Result<Vec<crate::engine::caller::tool_use::ToolUse>, ModelError> {
    let calls = match calls {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(calls)) => calls,
        Some(_) => return Err(ModelError::Malformed),
    };
    if calls.len() > crate::engine::caller::tool_use::MAX_TOOL_USES {
        return Err(ModelError::Malformed);
    }
    calls
        .iter()
        .map(|call| {
            let id = call.get("id").and_then(Value::as_str);
            let function = call.get("function");
            let name = function.and_then(|f| f.get("name")).and_then(Value::as_str);
            let arguments = function
                .and_then(|f| f.get("arguments"))
                .and_then(Value::as_str)
                .map(|text| if text.trim().is_empty() { "{}" } else { text });
            let (Some(id), Some(name), Some(arguments)) = (id, name, arguments) else {
                return Err(ModelError::Malformed);
            };
            match serde_json::from_str::<Value>(arguments) {
                Ok(Value::Object(input)) => Ok(crate::engine::caller::tool_use::ToolUse::new(
                    id, name, input,
                )),
                _ => Err(ModelError::Malformed),
            }
        })
        .collect()
}

impl Model for OpenAiCompatible {
    fn complete<'a>(
        &'a self,
        request: &'a CreateMessageRequestParams,
    ) -> BoxFuture<'a, Result<Completion, ModelError>> {
        Box::pin(async move {
            let body =
                serde_json::to_vec(&self.body(request)?).map_err(|_| ModelError::Malformed)?;
            let post = http::Request::post(self.endpoint.clone())
                .header(http::header::AUTHORIZATION, format!("Bearer {}", self.key))
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(http_body_util::Full::new(hyper::body::Bytes::from(body)))
                .map_err(|_| ModelError::Malformed)?;
            let response = self.client.request(post).await.map_err(|error| {
                let error = redacted(&error.to_string(), &self.key);
                tracing::warn!(error = %crate::log::Escaped(&error), "the server's model could not be reached");
                ModelError::Unreachable
            })?;
            let status = response.status();
            let limited = http_body_util::Limited::new(response.into_body(), MAX_REPLY_BYTES);
            let reply = http_body_util::BodyExt::collect(limited)
                .await
                .map_err(|_| ModelError::Malformed)?
                .to_bytes();
            if !status.is_success() {
                // The provider's words stay in the server's log, without the key or any
                // credential a provider that echoes its request would put back in them:
                // redacted over the whole reply first, so that the cut cannot keep half
                // a key.
                let text = redacted(&String::from_utf8_lossy(&reply), &self.key);
                tracing::warn!(
                    status = status.as_u16(),
                    reply = %crate::log::Escaped(&text),
                    "the server's model answered with an error"
                );
                return Err(ModelError::Status(status.as_u16()));
            }
            read_reply(&reply)
        })
    }

    fn provider_name(&self) -> Option<&str> {
        Some("openai")
    }

    fn request_model<'a>(&'a self, request: &'a CreateMessageRequestParams) -> Option<&'a str> {
        Some(self.model_for(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hint_picks_only_an_allowed_model() {
        let provider = OpenAiCompatible::new("http://127.0.0.1:1/v1", "k", "default")
            .expect("a client")
            .allow_hinted(["gpt-4o"]);
        let asked = |hint: &str| {
            let request: crate::engine::Request = crate::engine::sample("hi")
                .model_hint(hint)
                .system("be brief")
                .into();
            let crate::engine::kinds::table::Asked::Sample(params) = request.asked else {
                panic!("a sample");
            };
            provider.body(&params).expect("a body")
        };
        assert_eq!(asked("gpt-4o")["model"], "gpt-4o");
        assert_eq!(
            asked("4o")["model"],
            "gpt-4o",
            "a hint is a part of the name"
        );
        assert_eq!(
            asked("claude")["model"],
            "default",
            "a hint not allowed is ignored"
        );
        assert_eq!(
            asked("x")["messages"][0],
            json!({"role": "system", "content": "be brief"})
        );
    }

    #[test]
    fn credentials_are_redacted_from_what_is_logged() {
        let key = "sk-live-0123456789abcdef";
        let echoed = format!(
            "{{\"error\":\"bad\",\"headers\":{{\"authorization\":\"Bearer {key}\",\"x\":\"AUTHORIZATION: bearer other-token.v1\"}},\"other\":\"sk-proj-abcdefghijkl\"}}"
        );
        let shown = redacted(&echoed, key);
        assert!(!shown.contains("0123456789abcdef"), "{shown}");
        assert!(!shown.contains("other-token"), "{shown}");
        assert!(!shown.contains("abcdefghijkl"), "{shown}");
        assert!(shown.contains("\"error\":\"bad\""), "{shown}");
        // A key that is no `sk-` key, and not after `Bearer`, still goes.
        assert_eq!(
            redacted("key=local-key-77", "local-key-77"),
            "key=[redacted]"
        );
        // Short words are left alone.
        assert_eq!(redacted("ask-me bearer", "k"), "ask-me bearer");
        // A `Bearer ` before no credential, before multi-byte text, or repeated, neither
        // panics nor takes long.
        assert_eq!(redacted("Bearer !ééééé", "k"), "Bearer !ééééé");
        let many = "bearer ".repeat(200_000);
        assert!(
            redacted(&many, "k").len() <= 2 * 64 * 1024,
            "only the head is read"
        );
    }

    /// A sample with tools, a choice and a history of tool uses and results becomes the
    /// API's `tools`, `tool_choice`, an assistant message's `tool_calls` and `tool`
    /// messages, in order.
    #[test]
    fn tools_and_their_history_map_to_the_api() {
        use crate::engine::{SamplingMessage, SamplingTool, ToolChoice, ToolUse, Turn};
        let provider = OpenAiCompatible::new("http://127.0.0.1:1/v1", "k", "m").expect("a client");
        let mut input = rmcp::model::JsonObject::new();
        input.insert("query".into(), json!("rust"));
        let turn = Turn::new("Let me look.", "m")
            .with_tool_use(ToolUse::new("c1", "search", input.clone()))
            .with_tool_use(ToolUse::new("c2", "search", input));
        let (first, second) = (turn.tool_uses()[0].clone(), turn.tool_uses()[1].clone());
        let mut history = vec![SamplingMessage::user_text("q")];
        history.extend(turn.continue_with([first.result("found"), second.error("down")]));
        let mut schema = rmcp::model::JsonObject::new();
        schema.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
        schema.insert("type".into(), json!("object"));
        let request: crate::engine::Request = crate::engine::sample_messages(history)
            .tools([SamplingTool::new("search", "Search", schema)])
            .tool_choice(ToolChoice::Required)
            .into();
        let crate::engine::kinds::table::Asked::ToolSample(params) = request.asked else {
            panic!("a sample with tools");
        };
        let body = provider.body(&params).expect("a body");
        assert_eq!(body["tool_choice"], "required");
        assert_eq!(
            body["tools"],
            json!([{"type": "function", "function": {
                "name": "search", "description": "Search", "parameters": {"type": "object"}
            }}])
        );
        let messages = body["messages"].as_array().expect("messages");
        assert_eq!(messages.len(), 4, "{messages:?}");
        assert_eq!(messages[1]["role"], "assistant");
        assert_eq!(messages[1]["content"], "Let me look.");
        assert_eq!(messages[1]["tool_calls"][1]["id"], "c2");
        assert_eq!(
            messages[1]["tool_calls"][0]["function"]["arguments"],
            r#"{"query":"rust"}"#
        );
        assert_eq!(
            messages[2],
            json!({"role": "tool", "tool_call_id": "c1", "content": "found"})
        );
        assert_eq!(
            messages[3],
            json!({"role": "tool", "tool_call_id": "c2", "content": "Error: down"})
        );
    }

    /// Parallel tool calls and their `finish_reason` read as tool uses; arguments that are
    /// not a JSON object, or a call without an id, are not the documented format.
    #[test]
    fn tool_calls_read_as_documented() {
        let reply = br#"{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[
            {"id":"a","type":"function","function":{"name":"search","arguments":"{\"query\":\"x\"}"}},
            {"id":"b","type":"function","function":{"name":"ask_user","arguments":""}}
        ]},"finish_reason":"tool_calls"}]}"#;
        let completion = read_reply(reply).expect("read");
        assert_eq!(completion.text, "");
        assert_eq!(completion.stop_reason.as_deref(), Some("toolUse"));
        assert_eq!(completion.tool_uses.len(), 2);
        assert_eq!(completion.tool_uses[0].name(), "search");
        assert_eq!(completion.tool_uses[0].input_json()["query"], "x");
        assert!(
            completion.tool_uses[1].input_json().is_empty(),
            "empty arguments are {{}}"
        );
        for malformed in [
            &br#"{"choices":[{"message":{"content":null,"tool_calls":[{"id":"a","function":{"name":"s","arguments":"[1]"}}]}}]}"#[..],
            br#"{"choices":[{"message":{"content":null,"tool_calls":[{"function":{"name":"s","arguments":"{}"}}]}}]}"#,
            br#"{"choices":[{"message":{"content":null,"tool_calls":{"id":"a"}}}]}"#,
        ] {
            assert_eq!(read_reply(malformed), Err(ModelError::Malformed));
        }
    }

    #[test]
    fn replies_read_as_documented() {
        let reply = br#"{"id":"c","object":"chat.completion","model":"m-1","choices":[{"index":0,"message":{"role":"assistant","content":"Yes"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}"#;
        let completion = read_reply(reply).expect("read");
        assert_eq!(completion.text, "Yes");
        assert_eq!(completion.model, "m-1");
        assert_eq!(completion.stop_reason.as_deref(), Some("endTurn"));
        assert_eq!(completion.tokens, Some(6));
        let refused =
            br#"{"choices":[{"message":{"role":"assistant","content":null,"refusal":"no"}}]}"#;
        assert_eq!(read_reply(refused), Err(ModelError::Refused));
        for malformed in [
            &b"not json"[..],
            br#"{"choices":[]}"#,
            br#"{"choices":[{"message":{"content":7}}]}"#,
            br#"[]"#,
        ] {
            assert_eq!(read_reply(malformed), Err(ModelError::Malformed));
        }
    }
}
