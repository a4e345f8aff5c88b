//! URL-mode elicitation (`elicitation/create` with a `url`): [`elicit_url`].

use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, InputRequest, UrlElicitationCapability,
};
use serde_json::Value;

use super::form::{FormAnswer, resend_elicitation};
use super::{Answer, AskKind, Asked, read_elicit_result};
use crate::engine::answers::{Answers, mismatch};
use crate::engine::context::SagaContext;
use crate::engine::error::SagaError;
use crate::engine::expand_support::Suspension;
use crate::engine::fnv::Fnv;
use crate::engine::requests::Request;

/// Sends the user to a URL (`elicitation/create`, URL mode), for steps that must not pass
/// through the client, such as entering a secret or completing an OAuth flow. The answer
/// only says the user went; the tool decides whether the outside step is done.
pub fn elicit_url(url: impl Into<String>, message: impl Into<String>) -> ElicitUrl {
    ElicitUrl {
        url: url.into(),
        message: message.into(),
        key: None,
        elicitation_id: None,
    }
}

/// A pending URL-mode elicitation; see [`elicit_url`].
#[must_use = "a request does nothing until the saga awaits it"]
#[derive(Debug)]
pub struct ElicitUrl {
    url: String,
    message: String,
    key: Option<String>,
    elicitation_id: Option<String>,
}

impl ElicitUrl {
    /// Pins the `inputRequests` key.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Sets the `elicitationId` (a random one is generated otherwise).
    pub fn elicitation_id(mut self, id: impl Into<String>) -> Self {
        self.elicitation_id = Some(id.into());
        self
    }
}

impl From<ElicitUrl> for Request {
    fn from(url: ElicitUrl) -> Self {
        Request::new(
            url.key,
            Asked::Url(UrlAsked {
                message: url.message,
                url: url.url,
                elicitation_id: url.elicitation_id,
            }),
        )
    }
}

/// A URL elicitation as the tool asked it.
#[derive(Debug, Clone)]
pub(crate) struct UrlAsked {
    message: String,
    url: String,
    elicitation_id: Option<String>,
}

pub(crate) struct UrlKind;

impl AskKind for UrlKind {
    type Asked = UrlAsked;
    type Answered = ElicitResult;

    /// Form and URL elicitations share the method, and so the prefix.
    const PREFIX: &'static str = "elicit";

    /// The elicitation id is drawn here when the tool sets none, not by the tool, so it
    /// could not be stated again word for word: the token always keeps it.
    const RESTATABLE: bool = false;

    fn lacks(cx: &SagaContext, required: &mut ClientCapabilities) -> bool {
        if cx.can_elicit_url() {
            return false;
        }
        let elicitation = required
            .elicitation
            .get_or_insert_with(ElicitationCapability::default);
        elicitation.url = Some(UrlElicitationCapability::default());
        true
    }

    fn digest(asked: &UrlAsked, hash: &mut Fnv) {
        hash.write(b"U");
        hash.write_str(&asked.message);
        hash.write_str(&asked.url);
        hash.write_str(asked.elicitation_id.as_deref().unwrap_or_default());
    }

    fn input(asked: UrlAsked, _tool: &str) -> Result<InputRequest, ErrorData> {
        Ok(InputRequest::Elicitation(ElicitRequest::new(
            ElicitRequestParams::UrlElicitationParams {
                meta: None,
                message: asked.message,
                url: asked.url,
                elicitation_id: asked.elicitation_id.unwrap_or_else(crate::state::random_id),
            },
        )))
    }

    fn resend(params: &str) -> serde_json::Result<InputRequest> {
        resend_elicitation(params)
    }

    fn parse(value: Value, _kept: bool, key: &str) -> Result<ElicitResult, ErrorData> {
        read_elicit_result(value, key)
    }
}

impl Suspension for ElicitUrl {
    type Output = Result<(), SagaError>;
    fn requests(self, round: &mut Vec<Request>) {
        round.push(self.into());
    }
    fn take(answers: &mut Answers, index: usize) -> Self::Output {
        answers.elicit_url(index)
    }
}

impl SagaContext {
    /// Whether the client accepts URL-mode elicitation.
    pub fn can_elicit_url(&self) -> bool {
        self.capabilities()
            .elicitation
            .as_ref()
            .is_some_and(|elicitation| elicitation.url.is_some())
    }
}

impl Answers {
    /// The answer to an [`elicit_url`] at `index`.
    pub fn elicit_url(&mut self, index: usize) -> Result<(), SagaError> {
        match self.take(index)? {
            Answer::Url(result) | Answer::Form(FormAnswer { result, .. }) => match result.action {
                ElicitationAction::Accept => Ok(()),
                ElicitationAction::Decline => Err(SagaError::Declined),
                // `cancel`, and any action a later protocol adds: the user did not accept.
                _ => Err(SagaError::Cancelled),
            },
            other => Err(mismatch("an elicitation", &other)),
        }
    }
}
