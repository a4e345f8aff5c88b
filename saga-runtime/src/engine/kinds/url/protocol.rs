//! URL-mode elicitation's protocol (`elicitation/create` with a `url`); a tool asks with
//! [`elicit_url`](crate::engine::elicit_url).

use crate::engine::caller::error::Failure;
use rmcp::model::{
    ClientCapabilities, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationCapability,
    InputRequest, UrlElicitationCapability,
};
use serde_json::Value;

use crate::engine::caller::context::SagaContext;
use crate::engine::identity::fnv::Fnv;
use crate::engine::kinds::form::protocol::resend_elicitation;
use crate::engine::kinds::kind::{AskKind, read_elicit_result};

/// A URL elicitation as the tool asked it.
#[derive(Debug, Clone)]
pub(crate) struct UrlAsked {
    pub(crate) message: String,
    pub(crate) url: String,
    pub(crate) elicitation_id: Option<String>,
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

    fn input(asked: UrlAsked, _tool: &str) -> Result<InputRequest, Failure> {
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

    fn parse(value: Value, _kept: bool, key: &str) -> Result<ElicitResult, Failure> {
        read_elicit_result(value, key)
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
