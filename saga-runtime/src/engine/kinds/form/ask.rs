//! Form-mode elicitation (`elicitation/create` with a `requestedSchema`): [`elicit`].

use std::marker::PhantomData;

use rmcp::model::ElicitationAction;
use serde_json::Value;

use crate::engine::asks::outside::AwaitedOutsideASaga;
use crate::engine::caller::error::SagaError;
use crate::engine::forms::elicit::{ContentCheck, Elicit, FormError};
use crate::engine::forms::type_form::{Form, cached_form};
use crate::engine::kinds::form::protocol::{FormAnswer, FormAsked};
use crate::engine::kinds::table::{Answer, Asked};
use crate::engine::round::answers::{Answers, mismatch};
use crate::engine::round::requests::{Request, Suspension};

// Awaiting this request outside a saga is one error that says what to write
// (`asks/outside.rs`).
crate::engine::asks::outside::awaited_outside! {
    AwaitedOutsideASaga:
    [T: Elicit] ElicitForm<T> => <ElicitForm<T> as Suspension>::Output;
}

/// Asks the user to fill in a form for a `T` (`elicitation/create`, form mode).
///
/// ```
/// use saga_runtime::prelude::*;
/// let request: Request = elicit::<String>("Which environment?").key("env").into();
/// assert_eq!(request.key(), Some("env"));
/// ```
pub fn elicit<T: Elicit>(message: impl Into<String>) -> ElicitForm<T> {
    ElicitForm {
        message: message.into(),
        key: None,
        answer: PhantomData,
    }
}

/// A pending form-mode elicitation; see [`elicit`].
#[must_use = "a request does nothing until the saga awaits it"]
#[derive(Debug)]
pub struct ElicitForm<T> {
    message: String,
    key: Option<String>,
    answer: PhantomData<fn() -> T>,
}

impl<T> ElicitForm<T> {
    /// Pins the `inputRequests` key.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}

impl<T: Elicit> From<ElicitForm<T>> for Request {
    fn from(form: ElicitForm<T>) -> Self {
        Request::new(
            form.key,
            Asked::Form(FormAsked {
                message: form.message,
                form: cached_form::<T>(),
            }),
        )
    }
}

impl<T: Elicit> Suspension for ElicitForm<T> {
    type Output = Result<T, SagaError>;
    fn requests(self, round: &mut Vec<Request>) {
        round.push(self.into());
    }
    fn take(answers: &mut Answers, index: usize) -> Self::Output {
        // The guard of a round the token keeps no form of called `fits` already.
        answers.elicit_fitted::<T>(index)
    }
    fn fits(answers: &Answers, index: usize) -> bool {
        answers.fits::<T>(index)
    }
}

/// `judge` of `content` as the tool reads it: with the form's defaults given (a copy,
/// only when the form has defaults).
fn with_defaults<R>(check: &ContentCheck, content: &Value, judge: impl FnOnce(&Value) -> R) -> R {
    if !check.has_defaults() {
        return judge(content);
    }
    let mut filled = Some(content.clone()).filter(|content| !content.is_null());
    check.fill_defaults(&mut filled);
    judge(filled.as_ref().unwrap_or(&Value::Null))
}

impl Answers {
    /// The answer to an [`elicit`] at `index`.
    ///
    /// When the token keeps the form, the runtime has checked the answer against the form
    /// as it was sent, and asked again for a misfit, before the step. When the tool states
    /// the form again from its state
    /// ([`Step::suspend_restatable`](crate::engine::Step::suspend_restatable)), the answer
    /// is checked here against `T`'s form: accepted content outside it is
    /// [`SagaError::DoesNotFit`], which the tool answers with
    /// [`Step::AskAgain`](crate::engine::Step::AskAgain), as MRTR asks (see
    /// [`Answers::fits`] to check a round's forms before reading any).
    pub fn elicit<T: Elicit>(&mut self, index: usize) -> Result<T, SagaError> {
        self.read_elicit(index, false)
    }

    /// [`Answers::elicit`] where the answer already passed [`Answers::fits`] (a
    /// `#[saga_tool]` checks a round's answers before it reads any).
    pub(crate) fn elicit_fitted<T: Elicit>(&mut self, index: usize) -> Result<T, SagaError> {
        self.read_elicit(index, true)
    }

    fn read_elicit<T: Elicit>(&mut self, index: usize, fitted: bool) -> Result<T, SagaError> {
        // Only the form and the read are `T`'s: the rest is compiled once.
        let content = self.elicited_content(index, fitted, cached_form::<T>)?;
        T::from_owned_content(content).map_err(|error| SagaError::InvalidAnswer(error.to_string()))
    }

    /// The accepted content of the elicitation answered at `index`, its defaults given
    /// and checked against `form` (unless `fitted` or kept, checked already).
    fn elicited_content(
        &mut self,
        index: usize,
        fitted: bool,
        form: fn() -> &'static Form,
    ) -> Result<serde_json::Map<String, Value>, SagaError> {
        let (result, checked) = match self.take(index)? {
            Answer::Form(FormAnswer { mut result, kept }) => {
                if !kept {
                    // A kept form's defaults were given before the check; this form's
                    // are given here, before `T` reads the content.
                    form().check.fill_defaults(&mut result.content);
                }
                (result, kept || fitted)
            }
            Answer::Url(result) => (result, true),
            other => return Err(mismatch("an elicitation", &other)),
        };
        match result.action {
            ElicitationAction::Accept => match result.content {
                Some(Value::Object(content)) => {
                    if !checked {
                        form()
                            .check
                            .check_object(&content)
                            .map_err(|misfit| SagaError::DoesNotFit(misfit.to_string()))?;
                    }
                    Ok(content)
                }
                // The runtime asks again for a kept form's answer like this one; the tool
                // that checks its own must be told to do the same.
                _ if !checked => Err(SagaError::DoesNotFit("content is not an object".into())),
                _ => Err(SagaError::InvalidAnswer(
                    "elicitation content is not an object".into(),
                )),
            },
            ElicitationAction::Decline => Err(SagaError::Declined),
            // `cancel`, and any action a later protocol adds: the user did not accept.
            _ => Err(SagaError::Cancelled),
        }
    }

    /// Whether the answer at `index` can be read as a `T` without
    /// [`SagaError::DoesNotFit`]: a declined or cancelled form, and any other kind of
    /// answer, fits. A hand-written tool whose round asks several forms checks them all
    /// before it reads any, so that it acts on none of them when it must ask again.
    pub fn fits<T: Elicit>(&self, index: usize) -> bool {
        // Only an answer to a form the token keeps no schema of can misfit here: the
        // runtime checked every other before the step.
        let check = &cached_form::<T>().check;
        self.unchecked_content(index).is_none_or(|content| {
            with_defaults(check, content, |content| check.check(content)).is_ok()
        })
    }

    /// Why the answer at `index` does not fit `form`, where the runtime could not check it
    /// before the step (a form whose token keeps no schema): what a form asked again says.
    pub(crate) fn misfit(&self, index: usize, form: &Form) -> Option<FormError> {
        let content = self.unchecked_content(index)?;
        with_defaults(&form.check, content, |content| form.check.check(content)).err()
    }

    /// The accepted content at `index` of a form the token kept no schema of.
    fn unchecked_content(&self, index: usize) -> Option<&Value> {
        match self.slot(index)? {
            Answer::Form(FormAnswer {
                result,
                kept: false,
            }) if result.action == ElicitationAction::Accept => {
                Some(result.content.as_ref().unwrap_or(&Value::Null))
            }
            _ => None,
        }
    }
}
