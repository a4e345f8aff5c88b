//! URL-mode elicitation (`elicitation/create` with a `url`): [`elicit_url`].

use rmcp::model::ElicitationAction;

use crate::engine::asks::outside::AwaitedOutsideASaga;
use crate::engine::caller::error::SagaError;
use crate::engine::kinds::form::protocol::FormAnswer;
use crate::engine::kinds::table::{Answer, Asked};
use crate::engine::kinds::url::protocol::UrlAsked;
use crate::engine::round::answers::{Answers, mismatch};
use crate::engine::round::requests::{Request, Suspension};

// Awaiting this request outside a saga is one error that says what to write
// (`asks/outside.rs`).
crate::engine::asks::outside::awaited_outside! {
    AwaitedOutsideASaga:
    [] ElicitUrl => <ElicitUrl as Suspension>::Output;
}

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

impl Suspension for ElicitUrl {
    type Output = Result<(), SagaError>;
    fn requests(self, round: &mut Vec<Request>) {
        round.push(self.into());
    }
    fn take(answers: &mut Answers, index: usize) -> Self::Output {
        answers.elicit_url(index)
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
