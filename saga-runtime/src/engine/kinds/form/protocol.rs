//! Form-mode elicitation's protocol (`elicitation/create` with a `requestedSchema`); a tool
//! asks with [`elicit`](crate::engine::elicit).

use crate::engine::caller::error::Failure;
use rmcp::model::{
    ClientCapabilities, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationCapability,
    InputRequest,
};
use serde_json::Value;

use crate::engine::caller::context::SagaContext;
use crate::engine::caller::error::tool_bug;
use crate::engine::forms::type_form::Form;
use crate::engine::identity::fnv::Fnv;
use crate::engine::kinds::kind::{AskKind, read_elicit_result};

/// A form as the tool asked it.
#[derive(Debug, Clone)]
pub(crate) struct FormAsked {
    pub(crate) message: String,
    /// The answer type's form, built once per type (see [`Form`]).
    pub(crate) form: &'static Form,
}

/// An answer to a form.
#[derive(Debug, Clone)]
pub(crate) struct FormAnswer {
    pub(crate) result: ElicitResult,
    /// Whether the token kept the form, so that the runtime checks the content before
    /// the step. A form the tool states again from its state is checked against the form
    /// of the type it is read as, when it is read.
    pub(crate) kept: bool,
}

pub(crate) struct FormKind;

impl AskKind for FormKind {
    type Asked = FormAsked;
    type Answered = FormAnswer;

    const PREFIX: &'static str = "elicit";

    fn lacks(cx: &SagaContext, required: &mut ClientCapabilities) -> bool {
        if cx.can_elicit() {
            return false;
        }
        required
            .elicitation
            .get_or_insert_with(ElicitationCapability::default);
        true
    }

    fn digest(asked: &FormAsked, hash: &mut Fnv) {
        hash.write(b"F");
        hash.write_str(&asked.message);
        hash.write(&asked.form.digest.to_le_bytes());
    }

    fn kept_params(asked: &FormAsked) -> Option<String> {
        asked.form.params_json(&asked.message)
    }

    fn input(asked: FormAsked, tool: &str) -> Result<InputRequest, Failure> {
        let requested_schema = match &asked.form.typed {
            Ok(schema) => schema.clone(),
            Err(reason) => return Err(tool_bug(tool, reason)),
        };
        Ok(InputRequest::Elicitation(ElicitRequest::new(
            ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: asked.message,
                requested_schema,
            },
        )))
    }

    fn resend(params: &str) -> serde_json::Result<InputRequest> {
        resend_elicitation(params)
    }

    fn parse(value: Value, kept: bool, key: &str) -> Result<FormAnswer, Failure> {
        Ok(FormAnswer {
            result: read_elicit_result(value, key)?,
            kept,
        })
    }
}

/// An elicitation, either mode, sent again from its kept params.
pub(crate) fn resend_elicitation(params: &str) -> serde_json::Result<InputRequest> {
    serde_json::from_str::<ElicitRequestParams>(params)
        .map(|params| InputRequest::Elicitation(ElicitRequest::new(params)))
}

impl SagaContext {
    /// Whether the client accepts form-mode elicitation (`elicitation: {}` means form).
    pub fn can_elicit(&self) -> bool {
        self.capabilities()
            .elicitation
            .as_ref()
            .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none())
    }
}
