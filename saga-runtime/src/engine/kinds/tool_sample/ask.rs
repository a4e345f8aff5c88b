//! Sampling with tools (MCP 2025-11-25, SEP-1577): a [`sample`] that offers the model
//! tools ([`Sample::tools`]) answers with a [`Turn`]: text, or the tools the model wants
//! called ([`Turn::tool_uses`]). The tool runs them and samples again with their results
//! ([`Turn::continue_with`]): an agent loop written as a plain `loop`, whose history is a
//! saved local like any other, so that it survives a restart or a deploy between turns.
//!
//! ```
//! use saga_runtime::prelude::*;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Search {
//!     /// What to look for.
//!     query: String,
//! }
//!
//! #[saga_tool]
//! /// Answers a question, searching the notes as the model asks.
//! async fn research(question: String) -> Result<String, SagaError> {
//!     let tools = [SamplingTool::of::<Search>("search", "Search the notes")];
//!     let mut history = vec![SamplingMessage::user(question)];
//!     for _turn in 0..8 {
//!         let turn = sample_messages(history.clone()).tools(tools.clone()).max_tokens(400).await?;
//!         if turn.tool_uses().is_empty() {
//!             return Ok(turn.text().to_owned());
//!         }
//!         let mut results = Vec::new();
//!         for call in turn.tool_uses() {
//!             results.push(match call.name() {
//!                 "search" => call.result(format!("no notes on {}", call.input::<Search>()?.query)),
//!                 other => call.error(format!("no tool named {other}")),
//!             });
//!         }
//!         history.extend(turn.continue_with(results));
//!     }
//!     Err(SagaError::Tool("the model did not finish in 8 turns".into()))
//! }
//! # fn main() {}
//! ```
//!
//! The client answers such a sample when its request declares `sampling.tools`; otherwise
//! the server's model does, if the server has one and its
//! [`SamplingPolicy`](crate::model::SamplingPolicy) lets it. A client that did not
//! declare `sampling.tools` is never sent one. A tool use of a tool the sample did not
//! offer is refused, from the client (`-32602`) and from the server's model (the tool
//! reads [`SagaError::ModelFailed`]).
//!
//! [`sample`]: crate::engine::sample

use std::sync::Arc;

use rmcp::model::{
    CreateMessageResult, JsonObject, Role, SamplingContent, SamplingMessageContentBlock, Tool,
    ToolChoice as McpToolChoice, ToolChoiceMode, ToolUseContent,
};
use serde::{Deserialize, Serialize};

use crate::engine::asks::outside::AwaitedOutsideASaga;
use crate::engine::caller::error::SagaError;
use crate::engine::caller::tool_use::{ToolResult, ToolUse};
use crate::engine::kinds::sample::ask::{Sample, Sampled, sample};
use crate::engine::kinds::table::{Answer, Asked};
use crate::engine::round::answers::{Answers, mismatch};
use crate::engine::round::requests::{Request, Suspension};

// Awaiting this request outside a saga is one error that says what to write
// (`asks/outside.rs`).
crate::engine::asks::outside::awaited_outside! {
    AwaitedOutsideASaga:
    [] Sample<Turn> => <Sample<Turn> as Suspension>::Output;
}

/// Asks the model (the client's LLM or the server's) to continue the conversation
/// `history`, with no prompt of its own: [`sample`]`("").`[`messages`](Sample::messages)`(history)`.
/// The usual start of a loop that offers [`Sample::tools`].
pub fn sample_messages(history: Vec<SamplingMessage>) -> Sample {
    sample("").messages(history)
}

/// One message of a sampled conversation (MCP's `SamplingMessage`): its role and its
/// content blocks. Named here so that a tool's code names saga's, and keeps compiling
/// without a warning while MCP deprecates sampling (SEP-2577).
pub type SamplingMessage = rmcp::model::SamplingMessage;

/// The messages of a conversation, written as MCP writes them: `SamplingMessage::user(..)`
/// and `SamplingMessage::assistant(..)`, each one text block. In the prelude.
pub trait SamplingMessages: Sized {
    /// A user's message of `text`.
    fn user(text: impl Into<String>) -> Self;
    /// The assistant's (the model's) message of `text`.
    fn assistant(text: impl Into<String>) -> Self;
}

impl SamplingMessages for SamplingMessage {
    fn user(text: impl Into<String>) -> Self {
        SamplingMessage::user_text(text)
    }

    fn assistant(text: impl Into<String>) -> Self {
        SamplingMessage::assistant_text(text)
    }
}

/// A tool the model may ask for during a sample: its name, what it does, and the schema
/// of its input.
///
/// Owned and serializable, so that a loop can keep its tools across its turns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SamplingTool {
    name: String,
    description: String,
    input_schema: JsonObject,
}

impl SamplingTool {
    /// A tool whose input is an `Args`: its schema is made from the type as a
    /// `#[saga_tool]`'s own arguments' is (JSON Schema 2020-12, doc comments as
    /// descriptions), and [`ToolUse::input`] reads the model's input back as an `Args`.
    pub fn of<Args: schemars::JsonSchema>(
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        let mut input_schema = (*crate::engine::forms::json_schema::args_schema::<Args>()).clone();
        // The argument struct's name says nothing to the model.
        input_schema.remove("title");
        Self::new(name, description, input_schema)
    }

    /// A tool whose input schema is written by hand (a JSON Schema object).
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: JsonObject,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            input_schema,
        }
    }

    /// Its name, as the model's tool uses name it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What it does, for the model.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The JSON Schema of its input.
    pub fn input_schema(&self) -> &JsonObject {
        &self.input_schema
    }

    fn to_mcp(&self) -> Tool {
        Tool::new(
            self.name.clone(),
            self.description.clone(),
            Arc::new(self.input_schema.clone()),
        )
    }
}

/// Whether the model must, may or must not use the tools offered (`toolChoice.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (MCP's default).
    #[default]
    Auto,
    /// The model must use at least one tool.
    Required,
    /// The model must not use any.
    None,
}

impl Sample<Sampled> {
    /// Offers the model `tools`: the sample then answers with a [`Turn`], text or the
    /// tool uses the model asks for. Only a client that declares `sampling.tools` is sent
    /// such a sample; otherwise the server's model answers it, or the call fails with
    /// `-32021` naming `sampling.tools`.
    pub fn tools(self, tools: impl IntoIterator<Item = SamplingTool>) -> Sample<Turn> {
        let mut sample = self.answering::<Turn>();
        sample.params.tools = Some(tools.into_iter().map(|tool| tool.to_mcp()).collect());
        sample
    }
}

impl From<Sample<Turn>> for Request {
    fn from(sample: Sample<Turn>) -> Self {
        let (key, params) = sample.into_parts();
        Request::new(key, Asked::ToolSample(Box::new(params)))
    }
}

impl Suspension for Sample<Turn> {
    type Output = Result<Turn, SagaError>;
    fn requests(self, round: &mut Vec<Request>) {
        round.push(self.into());
    }
    fn take(answers: &mut Answers, index: usize) -> Self::Output {
        answers.turn(index)
    }
}

impl Sample<Turn> {
    /// Whether the model must, may or must not use the tools (default: it decides).
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        let mode = match choice {
            ToolChoice::Auto => ToolChoiceMode::Auto,
            ToolChoice::Required => ToolChoiceMode::Required,
            ToolChoice::None => ToolChoiceMode::None,
        };
        let mut choice = McpToolChoice::default();
        choice.mode = Some(mode);
        self.params.tool_choice = Some(choice);
        self
    }
}

/// What the model answered to a sample that offered tools: its text, and the tools it
/// asks to be called, in order (none when it answered).
///
/// Owned and serializable, so it can be kept across later suspensions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    text: String,
    model: String,
    stop_reason: Option<String>,
    tool_uses: Vec<ToolUse>,
}

impl Turn {
    /// An answer of `text` by `model`, as a scripted client or model gives one; add tool
    /// uses with [`Turn::with_tool_use`].
    pub fn new(text: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            model: model.into(),
            stop_reason: None,
            tool_uses: Vec::new(),
        }
    }

    /// This answer, asking for one more tool use.
    pub fn with_tool_use(mut self, tool_use: ToolUse) -> Self {
        self.tool_uses.push(tool_use);
        self
    }

    pub(crate) fn from_result(result: CreateMessageResult) -> Self {
        let mut text = String::new();
        let mut tool_uses = Vec::new();
        for block in result.message.content.into_vec() {
            match block {
                SamplingMessageContentBlock::Text(part) => text.push_str(&part.text),
                SamplingMessageContentBlock::ToolUse(used) => {
                    tool_uses.push(ToolUse::new(used.id, used.name, used.input));
                }
                // The kind's check lets nothing else through.
                _ => {}
            }
        }
        Self {
            text,
            model: result.model,
            stop_reason: result.stop_reason,
            tool_uses,
        }
    }

    /// The text of the answer (text blocks joined; often empty beside tool uses).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The model that answered.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Why generation stopped (`endTurn`, `toolUse`, `maxTokens`, …), when known.
    pub fn stop_reason(&self) -> Option<&str> {
        self.stop_reason.as_deref()
    }

    /// The tools the model asks to be called, in its order: empty when it answered.
    pub fn tool_uses(&self) -> &[ToolUse] {
        &self.tool_uses
    }

    /// The model's message as it wrote it (its text, then its tool uses), for a history.
    pub fn message(&self) -> SamplingMessage {
        if self.tool_uses.is_empty() {
            return SamplingMessage::assistant_text(self.text.clone());
        }
        let mut blocks = Vec::with_capacity(1 + self.tool_uses.len());
        if !self.text.is_empty() {
            blocks.push(SamplingMessageContentBlock::text(self.text.clone()));
        }
        blocks.extend(self.tool_uses.iter().map(|used| {
            SamplingMessageContentBlock::ToolUse(ToolUseContent::new(
                used.id(),
                used.name(),
                used.input_json().clone(),
            ))
        }));
        SamplingMessage::new_multiple(Role::Assistant, blocks)
    }

    /// The next messages of the conversation: the model's message with its tool uses,
    /// then a user message with a result for each (`results`, in any order). A tool use
    /// `results` has no result for is answered as an error ("no result"), since MCP asks
    /// that every tool use have its result; a result for no tool use of this turn is
    /// dropped.
    pub fn continue_with(
        self,
        results: impl IntoIterator<Item = ToolResult>,
    ) -> Vec<SamplingMessage> {
        let message = self.message();
        if self.tool_uses.is_empty() {
            return vec![message];
        }
        let mut results: Vec<ToolResult> = results.into_iter().collect();
        let answered = self
            .tool_uses
            .iter()
            .map(|used| {
                let result = results
                    .iter()
                    .position(|result| result.tool_use_id() == used.id())
                    .map(|at| results.swap_remove(at))
                    .unwrap_or_else(|| used.error("no result"));
                SamplingMessageContentBlock::ToolResult(result.into_mcp())
            })
            .collect();
        vec![message, SamplingMessage::new_multiple(Role::User, answered)]
    }
}

/// Its tool uses, in order: `for call in &turn` is `for call in turn.tool_uses()`.
impl<'a> IntoIterator for &'a Turn {
    type Item = &'a ToolUse;
    type IntoIter = std::slice::Iter<'a, ToolUse>;

    fn into_iter(self) -> Self::IntoIter {
        self.tool_uses.iter()
    }
}

impl Answers {
    /// The answer to a sample that offered tools ([`Sample::tools`]) at `index`.
    pub fn turn(&mut self, index: usize) -> Result<Turn, SagaError> {
        match self.take(index)? {
            Answer::ToolSample(result) => Ok(Turn::from_result(*result)),
            other => Err(mismatch("a sampling result", &other)),
        }
    }
}

/// The names of the tools `content` uses that `offered` does not hold, for a refusal.
pub(crate) fn unoffered<'a>(
    content: &'a SamplingContent<SamplingMessageContentBlock>,
    offered: Option<&[Tool]>,
) -> Option<&'a str> {
    content.iter().find_map(|block| match block {
        SamplingMessageContentBlock::ToolUse(used)
            if !offered
                .unwrap_or_default()
                .iter()
                .any(|tool| tool.name == used.name) =>
        {
            Some(used.name.as_str())
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Deserialize, schemars::JsonSchema, Debug, PartialEq)]
    struct Search {
        /// What to look for.
        query: String,
    }

    fn object(value: serde_json::Value) -> JsonObject {
        match value {
            serde_json::Value::Object(object) => object,
            _ => panic!("an object"),
        }
    }

    #[test]
    fn a_tools_schema_comes_from_its_type() {
        let tool = SamplingTool::of::<Search>("search", "Search the notes");
        assert_eq!(tool.name(), "search");
        let schema = tool.input_schema();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["query"]));
        assert_eq!(
            schema["properties"]["query"]["description"],
            "What to look for."
        );
        assert!(!schema.contains_key("title"));
    }

    #[test]
    fn input_that_does_not_fit_names_the_tool() {
        let fits = ToolUse::new("c1", "search", object(json!({"query": "rust"})));
        assert_eq!(
            fits.input::<Search>().expect("fits"),
            Search {
                query: "rust".into()
            }
        );
        let misfit = ToolUse::new("c2", "search", object(json!({"q": 1})));
        let error = misfit.input::<Search>().expect_err("does not fit");
        let shown = error.to_string();
        assert!(
            shown.contains("search") && shown.contains("query"),
            "{shown}"
        );
    }

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Strict {
        query: String,
    }

    /// The model's words in the error (an unknown field's name) are escaped.
    #[test]
    fn a_misfits_reason_is_escaped() {
        let hostile = ToolUse::new(
            "c",
            "se\u{1b}[31march",
            object(json!({"query": "x", "evil\u{1b}[2J": 1})),
        );
        let shown = hostile
            .input::<Strict>()
            .expect_err("unknown field")
            .to_string();
        assert!(!shown.contains('\u{1b}'), "{shown:?}");
        assert!(shown.contains("evil"), "{shown}");
    }

    #[test]
    fn continuing_answers_every_tool_use_in_order() {
        let turn = Turn::new("", "m")
            .with_tool_use(ToolUse::new("a", "search", JsonObject::new()))
            .with_tool_use(ToolUse::new("b", "search", JsonObject::new()));
        let b = turn.tool_uses()[1].result("found");
        let next = turn.continue_with([
            b,
            ToolUse::new("zzz", "x", JsonObject::new()).result("stray"),
        ]);
        assert_eq!(next.len(), 2);
        let value = serde_json::to_value(&next).expect("json");
        assert_eq!(value[0]["role"], "assistant");
        assert_eq!(value[0]["content"][0]["type"], "tool_use");
        assert_eq!(value[0]["content"][1]["id"], "b");
        assert_eq!(value[1]["role"], "user");
        assert_eq!(value[1]["content"][0]["toolUseId"], "a");
        assert_eq!(value[1]["content"][0]["isError"], true);
        assert_eq!(value[1]["content"][1]["toolUseId"], "b");
        assert_eq!(value[1]["content"][1]["content"][0]["text"], "found");
        assert_eq!(value[1]["content"].as_array().map(Vec::len), Some(2));
        // A history of these is what rmcp's own check accepts.
        let mut params = rmcp::model::CreateMessageRequestParams::new(
            [vec![SamplingMessage::user("q")], next].concat(),
            10,
        );
        params.tools = Some(vec![SamplingTool::of::<Search>("search", "s").to_mcp()]);
        params.validate().expect("balanced");
    }

    #[test]
    fn a_turn_without_tool_uses_continues_with_its_text() {
        let next = Turn::new("done", "m").continue_with([]);
        assert_eq!(next, vec![SamplingMessage::assistant("done")]);
    }
}
