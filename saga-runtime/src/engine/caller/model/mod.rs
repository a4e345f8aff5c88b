//! Who answers a `sample()`: the client's LLM, or a model the server calls.
//!
//! Most MCP clients cannot sample (MCP 2026-07-28 deprecates sampling, SEP-2577, though it
//! stays in the protocol until 2027-07-28 at the earliest). A server configured with a
//! [`Model`] answers a tool's `sample()` itself when its [`SamplingPolicy`] says so, and
//! the tool's code does not change: the answer reads as a client's would, and the saga
//! goes on in the same request, with no round trip.
//!
//! ```no_run
//! # #[cfg(feature = "openai")]
//! # fn build(greet: impl saga_runtime::engine::SagaTool) -> anyhow::Result<()> {
//! use saga_runtime::model::{OpenAiCompatible, SamplingPolicy};
//! use saga_runtime::prelude::*;
//!
//! let model = OpenAiCompatible::new(
//!     "https://api.openai.com/v1",
//!     std::env::var("OPENAI_API_KEY")?,
//!     "gpt-4o-mini",
//! )?;
//! let server = SagaServer::builder()
//!     .keys(KeyRing::from_env("SAGA_KEYS")?)
//!     .model(model) // answers when the client cannot sample
//!     .sampling_policy(SamplingPolicy::ClientFirst)
//!     .tool(greet)
//!     .build()?;
//! # let _ = server; Ok(()) }
//! ```
//!
//! A model costs the server money, so its use is bounded ([`SamplingLimits`]): requests and
//! tokens per minute per caller's pool (a verified principal, or the unverified callers at
//! one address), a prompt size, a timeout, and a global number of samples at once of which
//! the unverified callers together hold at most a part.

mod budget;
pub(crate) mod kept;
#[cfg(feature = "openai")]
mod openai;

use std::sync::Arc;

use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, Role, SamplingMessage,
    SamplingMessageContentBlock,
};

pub(crate) use budget::Budgets;
pub use budget::{Limited, SamplingLimits};
#[cfg(feature = "openai")]
pub use openai::OpenAiCompatible;

/// A boxed future, as [`Model`] returns it.
pub use futures::future::BoxFuture;

/// A model the server calls to answer a `sample()`. Implement it for a provider of your
/// own; `OpenAiCompatible` (feature `openai`) speaks the chat completions API that
/// OpenAI, vLLM, llama.cpp's server, Ollama, LM Studio and most hosted providers serve.
pub trait Model: Send + Sync + std::fmt::Debug + 'static {
    /// Answers one sampling request: its system prompt, messages, `maxTokens`,
    /// temperature and model hints, as the tool made it. The runtime has already checked
    /// [`SamplingLimits`] and bounds the call by their timeout.
    fn complete<'a>(
        &'a self,
        request: &'a CreateMessageRequestParams,
    ) -> BoxFuture<'a, Result<Completion, ModelError>>;

    /// The provider, as OpenTelemetry's GenAI conventions name it (`openai`), for the
    /// call's span (feature `otel`). `None` by default.
    fn provider_name(&self) -> Option<&str> {
        None
    }

    /// The model `request` asks of the provider, for the call's span (feature `otel`).
    /// `None` by default.
    fn request_model<'a>(&'a self, request: &'a CreateMessageRequestParams) -> Option<&'a str> {
        let _ = request;
        None
    }
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Completion {
    /// The text it wrote.
    pub text: String,
    /// The model that wrote it, as the provider names it.
    pub model: String,
    /// Why it stopped, as MCP says it (`endTurn`, `maxTokens`, `stopSequence`), if known.
    pub stop_reason: Option<String>,
    /// Tokens the provider counted (prompt and completion), if it said.
    pub tokens: Option<u64>,
    /// Of them, the prompt's, if it said.
    pub input_tokens: Option<u64>,
    /// Of them, the completion's, if it said.
    pub output_tokens: Option<u64>,
    /// The tools it asks to be called, in order, when the sample offered tools
    /// ([`Sample::tools`](crate::engine::Sample::tools)).
    pub tool_uses: Vec<crate::engine::caller::tool_use::ToolUse>,
}

impl Completion {
    /// A completion of `text` by `model`.
    pub fn new(text: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            model: model.into(),
            stop_reason: None,
            tokens: None,
            input_tokens: None,
            output_tokens: None,
            tool_uses: Vec::new(),
        }
    }

    /// This completion, asking for one more tool use.
    pub fn with_tool_use(mut self, tool_use: crate::engine::caller::tool_use::ToolUse) -> Self {
        self.tool_uses.push(tool_use);
        self
    }

    /// This completion, saying why it stopped.
    pub fn with_stop_reason(mut self, reason: impl Into<String>) -> Self {
        self.stop_reason = Some(reason.into());
        self
    }

    /// This completion, with the tokens it cost.
    pub fn with_tokens(mut self, tokens: u64) -> Self {
        self.tokens = Some(tokens);
        self
    }

    /// This completion, with the prompt's and the completion's tokens (and their sum as
    /// its tokens, unless it has them).
    pub fn with_usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.input_tokens = Some(input_tokens);
        self.output_tokens = Some(output_tokens);
        self.tokens = self
            .tokens
            .or(Some(input_tokens.saturating_add(output_tokens)));
        self
    }

    /// The answer as a client's LLM gives it.
    pub(crate) fn into_result(self) -> CreateMessageResult {
        let message = if self.tool_uses.is_empty() {
            SamplingMessage::new(
                Role::Assistant,
                SamplingMessageContentBlock::text(self.text),
            )
        } else {
            // As a client's LLM writes it: its text, if any, then its tool uses.
            let text =
                (!self.text.is_empty()).then(|| SamplingMessageContentBlock::text(self.text));
            let uses = self.tool_uses.into_iter().map(|used| {
                SamplingMessageContentBlock::ToolUse(rmcp::model::ToolUseContent::new(
                    used.id(),
                    used.name(),
                    used.input_json().clone(),
                ))
            });
            SamplingMessage::new_multiple(Role::Assistant, text.into_iter().chain(uses).collect())
        };
        let result = CreateMessageResult::new(message, self.model);
        match self.stop_reason {
            Some(reason) => result.with_stop_reason(reason),
            None => result,
        }
    }
}

/// Why the server's model gave no answer. The tool sees it as a [`SagaError`] with this
/// reason; the client sees only that the sample failed, never a key or the provider's own
/// words.
///
/// [`SagaError`]: crate::engine::SagaError
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// No answer within [`SamplingLimits::timeout`].
    #[error("the model did not answer in time")]
    Timeout,
    /// The provider answered with an HTTP error status.
    #[error("the model's provider answered with HTTP status {0}")]
    Status(u16),
    /// The provider could not be reached.
    #[error("the model's provider could not be reached")]
    Unreachable,
    /// The model declined to answer.
    #[error("the model declined to answer")]
    Refused,
    /// The provider's answer is not the documented format.
    #[error("the model's provider answered in an unexpected format")]
    Malformed,
    /// The request holds what the provider cannot take (an image, a tool result).
    #[error("the model cannot take this request: {0}")]
    Unsupported(String),
    /// A bound of [`SamplingLimits`] refused the sample.
    #[error("{0}")]
    Limited(Limited),
    /// The model asked for a tool the sample did not offer (its name, control characters
    /// escaped), or for more than [`MAX_TOOL_USES`](crate::engine::caller::tool_use::MAX_TOOL_USES) at once.
    #[error("the model asked for a tool the sample did not offer: {0:?}")]
    UnofferedTool(String),
}

impl ModelError {
    /// A name for the kind of failure, from a closed set: what a span's `error.type` and
    /// a log line may say of it.
    pub fn kind(&self) -> &'static str {
        match self {
            ModelError::Timeout => "timeout",
            ModelError::Status(_) => "http_status",
            ModelError::Unreachable => "unreachable",
            ModelError::Refused => "refused",
            ModelError::Malformed => "malformed",
            ModelError::Unsupported(_) => "unsupported",
            ModelError::Limited(_) => "limited",
            ModelError::UnofferedTool(_) => "unoffered_tool",
        }
    }
}

/// Who answers a `sample()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SamplingPolicy {
    /// The client when its request declares sampling, the server's model otherwise (the
    /// default with a model).
    #[default]
    ClientFirst,
    /// The server's model, always: no client is asked.
    ServerFirst,
    /// The client only: a client that cannot sample gets `-32021` (the behaviour, and
    /// the default, without a model).
    ClientOnly,
    /// The server's model only.
    ServerOnly,
}

impl SamplingPolicy {
    /// Whether the server answers, for a client that can (or cannot) sample.
    pub(crate) fn server_answers(self, client_can_sample: bool) -> bool {
        match self {
            Self::ClientFirst => !client_can_sample,
            Self::ServerFirst | Self::ServerOnly => true,
            Self::ClientOnly => false,
        }
    }
}

/// A server's model, its policy and its bounds: what a request's context carries.
#[derive(Clone)]
pub(crate) struct ServerModel {
    pub(crate) model: Arc<dyn Model>,
    pub(crate) policy: SamplingPolicy,
    pub(crate) limits: SamplingLimits,
    pub(crate) budgets: Arc<Budgets>,
    /// Answers kept for a retry of the request that asked them.
    kept: Arc<kept::Kept>,
}

impl std::fmt::Debug for ServerModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerModel")
            .field("model", &self.model)
            .field("policy", &self.policy)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl ServerModel {
    pub(crate) fn new(
        model: Arc<dyn Model>,
        policy: SamplingPolicy,
        limits: SamplingLimits,
    ) -> Self {
        Self {
            model,
            policy,
            budgets: Budgets::new(&limits),
            limits,
            kept: Arc::default(),
        }
    }

    /// Answers `request` for a caller of `pool`, within the bounds: the caller's budget
    /// and a place among the samples running are taken first, the prompt measured, then
    /// the model called within the timeout, and what the provider gave bounded
    /// ([`SamplingLimits::max_answer_bytes`]). With a `retry` key, an answer kept for
    /// that round is given again, free, and a new answer kept under it.
    pub(crate) async fn answer(
        &self,
        mut request: CreateMessageRequestParams,
        pool: &crate::engine::caller::pool::Pool,
        retry: Option<kept::RetryKey>,
    ) -> Result<CreateMessageResult, ModelError> {
        if let Some(answer) = retry.as_ref().and_then(|key| self.kept.get(key)) {
            return Ok(answer);
        }
        request.max_tokens = request.max_tokens.min(self.limits.max_tokens);
        // The tools' schemas are sent too, and count as the prompt does.
        let tools = request.tools.as_ref().map_or(Ok(0), |tools| {
            serde_json::to_vec(tools).map(|json| json.len())
        });
        let prompt = serde_json::to_vec(&(&request.system_prompt, &request.messages))
            .and_then(|json| Ok(json.len().saturating_add(tools?)))
            .unwrap_or(usize::MAX);
        if prompt > self.limits.max_prompt_bytes {
            return Err(ModelError::Limited(Limited::PromptSize));
        }
        // The prompt costs too: a large one with a small `maxTokens` is not nearly free.
        let cost = u64::from(request.max_tokens).saturating_add(prompt.div_ceil(4) as u64);
        let admitted = self
            .budgets
            .admit(pool, cost)
            .map_err(ModelError::Limited)?;
        let started = std::time::Instant::now();
        let answered = tokio::time::timeout(self.limits.timeout, self.model.complete(&request));
        // The call's GenAI span (feature `otel`), recorded below from the answer as it is
        // kept: bounded, so that a provider's long model name or reason is cut once.
        #[cfg(feature = "otel")]
        let span = crate::otel::model_span(crate::otel::ModelRequest {
            provider: self.model.provider_name(),
            model: self.model.request_model(&request),
            max_tokens: request.max_tokens,
            temperature: request.temperature,
        });
        #[cfg(feature = "otel")]
        let answered = span.instrument(answered);
        let answered = answered.await.unwrap_or(Err(ModelError::Timeout));
        let tokens = answered.as_ref().ok().and_then(|c| c.tokens);
        crate::metrics::model_call(started.elapsed(), tokens);
        if let Some(actual) = tokens {
            self.budgets.settle(pool, &admitted, actual);
        }
        // Checked as the provider wrote them: a name is cut only once it is offered.
        let answered = answered.and_then(|completion| {
            Ok(completion
                .offered(&request, self.limits.max_answer_bytes)?
                .bounded(self.limits.max_answer_bytes))
        });
        #[cfg(feature = "otel")]
        crate::otel::model_answered(
            &span,
            match &answered {
                Ok(completion) => Ok(crate::otel::ModelAnswer {
                    model: &completion.model,
                    finish_reason: completion.stop_reason.as_deref(),
                    input_tokens: completion.input_tokens,
                    output_tokens: completion.output_tokens,
                }),
                Err(error) => Err(error.kind()),
            },
        );
        let answer = answered?.into_result();
        if let Some(key) = retry {
            self.kept.put(key, &answer);
        }
        Ok(answer)
    }
}

/// The most bytes of a model's name taken from a provider.
const MAX_MODEL_NAME_BYTES: usize = 128;

/// `text` cut to at most `max` bytes, at a character's boundary.
fn cut(text: &mut String, max: usize) -> bool {
    if text.len() <= max {
        return false;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    true
}

impl Completion {
    /// What the server takes of a provider's completion: its text at most
    /// `max_answer_bytes` (cut, it reads as stopped at `maxTokens`), its model's name at
    /// most 128 bytes without control characters, so that a provider's words reach the
    /// tool and the client (`_meta["saga/samples"]`) bounded and one line long.
    fn bounded(mut self, max_answer_bytes: usize) -> Self {
        if cut(&mut self.text, max_answer_bytes) {
            self.stop_reason = Some("maxTokens".to_owned());
        }
        self.model
            .retain(|c| !c.is_control() && !crate::log::is_invisible_format(c));
        cut(&mut self.model, MAX_MODEL_NAME_BYTES);
        if let Some(reason) = &mut self.stop_reason {
            reason.retain(|c| !c.is_control() && !crate::log::is_invisible_format(c));
            cut(reason, MAX_MODEL_NAME_BYTES);
        }
        self
    }
}

impl Completion {
    /// The completion, if each tool it uses is one `request` offered, they are at most
    /// [`MAX_TOOL_USES`](crate::engine::caller::tool_use::MAX_TOOL_USES) with distinct ids,
    /// and their ids, names and inputs at most `max_answer_bytes` together: a provider's
    /// model is not trusted to keep to the tools it was given.
    fn offered(
        self,
        request: &CreateMessageRequestParams,
        max_answer_bytes: usize,
    ) -> Result<Self, ModelError> {
        if self.tool_uses.len() > crate::engine::caller::tool_use::MAX_TOOL_USES {
            return Err(ModelError::Malformed);
        }
        // Ids, names and inputs count, since none of them can be cut as text is. A name is
        // never cut: once offered, it is one of the server's own.
        let use_bytes = self.tool_uses.iter().fold(0usize, |sum, used| {
            let input = serde_json::to_vec(used.input_json()).map_or(usize::MAX, |json| json.len());
            sum.saturating_add(input)
                .saturating_add(used.id().len())
                .saturating_add(used.name().len())
        });
        if use_bytes > max_answer_bytes {
            return Err(ModelError::Limited(Limited::AnswerSize));
        }
        let ids_distinct = self.tool_uses.iter().enumerate().all(|(at, used)| {
            !used.id().is_empty()
                && self.tool_uses[..at]
                    .iter()
                    .all(|other| other.id() != used.id())
        });
        if !ids_distinct {
            return Err(ModelError::Malformed);
        }
        let offered = request.tools.as_deref().unwrap_or_default();
        match self
            .tool_uses
            .iter()
            .find(|used| !offered.iter().any(|tool| tool.name == used.name()))
        {
            Some(used) => Err(ModelError::UnofferedTool(crate::log::sanitized(
                used.name(),
            ))),
            None => Ok(self),
        }
    }
}

/// The `_meta` key under which an MRTR response (MCP 2026-07-28) lists the samples the
/// server's model answered in its request (`[{"key": "sample-2", "answeredBy": "server",
/// "model": "…"}]`, or `"outcome": "failed"`), so that a client, `saga call` among them,
/// can say who answered. A session's, a task's and a replayed call's results do not
/// carry it: the server's log says who answered there.
pub const SAMPLES_META_KEY: &str = "saga/samples";
