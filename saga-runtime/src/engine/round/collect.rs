//! Reading the client's answers to a round: each checked against what was asked before
//! the tool sees it.

use crate::engine::caller::error::Failure;
use rmcp::model::{ElicitationAction, InputResponses};
use std::collections::BTreeMap;

use serde_json::Value;

use crate::engine::forms::elicit::{ContentCheck, FormError};
use crate::engine::forms::type_form::Form;
use crate::engine::kinds::form::protocol::FormAnswer;
use crate::engine::kinds::kind::StepFailure;
use crate::engine::kinds::table::Answer;
use crate::engine::round::answers::AnswerSlots;
use crate::engine::round::pending::Pending;

/// What the server's model gave a round ([`crate::model`]), kept apart from what the
/// client sent: a failure of the model's reads as the server's
/// ([`SagaError::ModelFailed`](crate::engine::SagaError::ModelFailed)), and where the
/// client is not heard about samples (`SamplingPolicy::ServerOnly`) only these answer
/// them.
///
/// A [`Call`](crate::engine::Call) you build yourself leaves it empty (`Default`): only
/// the runtime's own paths fill it, with what the server's model answered.
#[derive(Debug, Clone, Default)]
pub struct ModelAnswers {
    /// The model's answers, by key.
    pub(crate) answers: InputResponses,
    /// Why the model gave no answer, by key.
    pub(crate) failures: BTreeMap<String, String>,
}

impl ModelAnswers {
    /// Whether the model answered (or failed) `key`.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.answers.contains_key(key) || self.failures.contains_key(key)
    }

    /// Whether the model gave this round nothing.
    pub(crate) fn is_empty(&self) -> bool {
        self.answers.is_empty() && self.failures.is_empty()
    }
}

/// Whose answers to a round's samples are heard: the client's too, or the server's model's
/// only (`SamplingPolicy::ServerOnly`: a client's result, error or decline for a sample is
/// not heard at all, so it cannot put its words in the tool's hands).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SamplesFrom {
    /// The client or the model.
    Anyone,
    /// The model only.
    ModelOnly,
}

/// What the client's `inputResponses` amount to.
pub(crate) enum Collected {
    /// Every pending request has a usable answer, in pending order (each `Some`, as
    /// [`Answers`](crate::engine::Answers) keeps them until the tool takes them).
    All(AnswerSlots),
    /// Something is missing or unusable: ask the same requests again. `misfits` are the
    /// answers outside their forms, by position in the round, to say why.
    Ask {
        reason: String,
        misfits: Vec<(usize, FormError)>,
    },
}

/// Reads the answers to `pending` out of `responses`. A response that is not the result
/// type its request calls for is a malformed request (`-32602`); a missing response, or a
/// form whose content does not match the schema that was sent, means asking again.
/// Responses to keys that are not pending are ignored. The model's answers (`model`)
/// come first; under [`SamplesFrom::ModelOnly`] nothing the client sent for a sample is
/// read.
pub(crate) fn collect(
    pending: &[Pending],
    mut responses: InputResponses,
    failures: &BTreeMap<String, StepFailure>,
    model: &ModelAnswers,
    samples: SamplesFrom,
) -> Result<Collected, Failure> {
    let mut answers = AnswerSlots::with_capacity(pending.len());
    let mut missing = Vec::new();
    for entry in pending {
        let key = entry.key();
        if let Some(reason) = model.failures.get(&*key) {
            answers.push(Some(Answer::ModelFailed(reason.clone())));
            continue;
        }
        let from_model = model.answers.get(&*key).cloned();
        let client_heard =
            from_model.is_none() && !(samples == SamplesFrom::ModelOnly && entry.kind.is_sample());
        if client_heard && let Some(failure) = failures.get(&*key) {
            answers.push(Some(Answer::Failed(failure.clone())));
            continue;
        }
        let from_client = || {
            if client_heard {
                responses.remove(&*key)
            } else {
                None
            }
        };
        let Some(value) = from_model.or_else(from_client) else {
            missing.push(key);
            continue;
        };
        // A kept request's answer is checked against it below; the kind reads the shape.
        answers.push(Some(entry.kind.parse(
            value,
            entry.params.is_some(),
            &key,
        )?));
    }
    if !missing.is_empty() {
        return Ok(Collected::Ask {
            reason: format!("no answer for {missing:?}"),
            misfits: Vec::new(),
        });
    }
    let mut misfits = Vec::new();
    for (index, (entry, answer)) in pending.iter().zip(answers.iter_mut()).enumerate() {
        // A form the token keeps no params of is an `Answer::FormUnchecked`, checked as
        // the tool reads it: there is no schema here to check it against.
        if let (Some(params), Some(Answer::Form(FormAnswer { result, kept: true }))) =
            (&entry.params, answer)
            && result.action == ElicitationAction::Accept
        {
            let read;
            let check = match Form::of_params(params) {
                Some(form) => &form.kept_check,
                None => {
                    read = ContentCheck::new(&entry.requested_schema().unwrap_or_default());
                    &read
                }
            };
            // A field left out gets its default before the check, as the tool reads it.
            check.fill_defaults(&mut result.content);
            let verdict = check.check(result.content.as_ref().unwrap_or(&Value::Null));
            if let Err(misfit) = verdict {
                misfits.push((index, misfit));
            }
        }
    }
    if !misfits.is_empty() {
        return Ok(Collected::Ask {
            reason: "an answer does not fit its form".to_owned(),
            misfits,
        });
    }
    Ok(Collected::All(answers))
}
