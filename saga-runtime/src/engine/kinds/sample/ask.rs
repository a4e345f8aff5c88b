//! Sampling (`sampling/createMessage`): [`sample`], a completion from the client's LLM.

use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ModelHint, ModelPreferences, SamplingMessage,
    SamplingMessageContentBlock,
};
use serde::{Deserialize, Serialize};
use std::marker::PhantomData;

use crate::engine::asks::outside::AwaitedOutsideASaga;
use crate::engine::caller::error::SagaError;
use crate::engine::kinds::table::{Answer, Asked};
use crate::engine::round::answers::{Answers, mismatch};
use crate::engine::round::requests::{Request, Suspension};

// Awaiting this request outside a saga is one error that says what to write
// (`asks/outside.rs`).
crate::engine::asks::outside::awaited_outside! {
    AwaitedOutsideASaga:
    [] Sample => <Sample as Suspension>::Output;
}

/// The default `maxTokens` of [`sample`] when the tool does not set one.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

/// Asks the client's LLM (`sampling/createMessage`) with `prompt` as the user message.
///
/// ```
/// use saga_runtime::prelude::*;
/// let request: Request = sample("Is it safe?")
///     .system("Answer Yes or No.")
///     .max_tokens(5)
///     .temperature(0.0)
///     .model_hint("claude")
///     .into();
/// # let _ = request;
/// ```
pub fn sample(prompt: impl Into<String>) -> Sample {
    Sample {
        prompt: prompt.into(),
        history: Vec::new(),
        params: CreateMessageRequestParams::new(Vec::new(), DEFAULT_MAX_TOKENS),
        key: None,
        answer: PhantomData,
    }
}

/// A pending sampling request; see [`sample`], and [`sample_messages`] for a
/// conversation. `A` is what it answers with: [`Sampled`] (text), or a [`Turn`] once
/// [`Sample::tools`] offered the model tools.
///
/// [`sample_messages`]: crate::engine::sample_messages
/// [`Turn`]: crate::engine::Turn
#[must_use = "a request does nothing until the saga awaits it"]
#[derive(Debug)]
pub struct Sample<A = Sampled> {
    prompt: String,
    history: Vec<SamplingMessage>,
    pub(crate) params: CreateMessageRequestParams,
    key: Option<String>,
    answer: PhantomData<fn() -> A>,
}

impl<A> Sample<A> {
    /// Pins the `inputRequests` key.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Sets the system prompt.
    pub fn system(mut self, text: impl Into<String>) -> Self {
        self.params.system_prompt = Some(text.into());
        self
    }

    /// Sets `maxTokens` (default [`DEFAULT_MAX_TOKENS`]).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.params.max_tokens = max_tokens;
        self
    }

    /// Sets the sampling temperature.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.params.temperature = Some(temperature);
        self
    }

    /// Adds a model name hint; hints keep their order of preference.
    pub fn model_hint(mut self, name: impl Into<String>) -> Self {
        let preferences = self
            .params
            .model_preferences
            .get_or_insert_with(ModelPreferences::default);
        preferences
            .hints
            .get_or_insert_with(Vec::new)
            .push(ModelHint::new(name));
        self
    }

    /// How much the client should favour capability when picking a model (0 to 1).
    pub fn intelligence_priority(mut self, priority: f32) -> Self {
        self.preferences().intelligence_priority = Some(priority);
        self
    }

    /// How much the client should favour speed when picking a model (0 to 1).
    pub fn speed_priority(mut self, priority: f32) -> Self {
        self.preferences().speed_priority = Some(priority);
        self
    }

    /// How much the client should favour low cost when picking a model (0 to 1).
    pub fn cost_priority(mut self, priority: f32) -> Self {
        self.preferences().cost_priority = Some(priority);
        self
    }

    fn preferences(&mut self) -> &mut ModelPreferences {
        self.params
            .model_preferences
            .get_or_insert_with(ModelPreferences::default)
    }

    /// Sets the earlier turns of the conversation, sent before the prompt. An empty prompt
    /// sends these messages alone.
    pub fn messages(mut self, history: Vec<SamplingMessage>) -> Self {
        self.history = history;
        self
    }

    /// The request's key and its params, the prompt appended to the history.
    pub(crate) fn into_parts(self) -> (Option<String>, CreateMessageRequestParams) {
        let mut params = self.params;
        params.messages = self.history;
        if !self.prompt.is_empty() {
            params
                .messages
                .push(SamplingMessage::user_text(self.prompt));
        }
        (self.key, params)
    }

    /// The same request answering with `B`: the builder changes what `.await` gives.
    pub(crate) fn answering<B>(self) -> Sample<B> {
        Sample {
            prompt: self.prompt,
            history: self.history,
            params: self.params,
            key: self.key,
            answer: PhantomData,
        }
    }
}

impl From<Sample> for Request {
    fn from(sample: Sample) -> Self {
        let (key, params) = sample.into_parts();
        Request::new(key, Asked::Sample(Box::new(params)))
    }
}

impl Suspension for Sample {
    type Output = Result<Sampled, SagaError>;
    fn requests(self, round: &mut Vec<Request>) {
        round.push(self.into());
    }
    fn take(answers: &mut Answers, index: usize) -> Self::Output {
        answers.sampled(index)
    }
}

impl Answers {
    /// The answer to a [`sample`] at `index`.
    pub fn sampled(&mut self, index: usize) -> Result<Sampled, SagaError> {
        match self.take(index)? {
            Answer::Sample(result) => Ok(Sampled::from_result(*result)),
            other => Err(mismatch("a sampling result", &other)),
        }
    }
}

/// What the client's LLM answered to a [`sample`].
///
/// Owned and serializable, so it can be kept across later suspensions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sampled {
    text: String,
    model: String,
    stop_reason: Option<String>,
}

impl Sampled {
    /// A result as a client would return it: what a scripted answer gives.
    pub fn new(text: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            model: model.into(),
            stop_reason: None,
        }
    }

    fn from_result(result: CreateMessageResult) -> Self {
        let text = result
            .message
            .content
            .into_vec()
            .into_iter()
            .filter_map(|block| match block {
                SamplingMessageContentBlock::Text(text) => Some(text.text),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("");
        Self {
            text,
            model: result.model,
            stop_reason: result.stop_reason,
        }
    }

    /// The text of the answer (text blocks joined; empty if it had none).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The model that answered.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Why generation stopped (`endTurn`, `maxTokens`, …), when the client said.
    pub fn stop_reason(&self) -> Option<&str> {
        self.stop_reason.as_deref()
    }
}
