//! One round asked and answered as a transition asks and reads it, without a server or a
//! token: for a driver of your own, or to unit-test a hand-written `SagaTool::step`
//! (`saga_runtime::testing::KeyedRound`).

use std::collections::BTreeMap;

use rmcp::ErrorData;
use rmcp::model::{InputRequests, InputResponses};

use crate::engine::round::answers::Answers;
use crate::engine::round::asking::{self, Assigned};
use crate::engine::round::collect::{Collected, ModelAnswers, SamplesFrom, collect};
use crate::engine::round::pending::Pendings;
use crate::engine::round::requests::Request;

/// A round of requests under the keys a transition gives them (`elicit-1`, `sample-2`, …),
/// and the [`Answers`] a step reads from a client's responses, read and checked as a
/// transition reads and checks them. It knows no client's capabilities: it asks whatever
/// it is given.
///
/// ```
/// use saga_runtime::prelude::*;
/// use saga_runtime::testing::KeyedRound;
///
/// let mut last_key = 0; // a call's first round
/// let round = KeyedRound::new(vec![elicit::<bool>("Go on?").into()], &mut last_key).unwrap();
/// assert_eq!(last_key, 1);
/// assert_eq!(round.requests().keys().collect::<Vec<_>>(), ["elicit-1"]);
///
/// let responses = serde_json::from_value(serde_json::json!({
///     "elicit-1": {"action": "accept", "content": {"value": true}}
/// }))
/// .unwrap();
/// let mut answers = round.answers(responses).unwrap().expect("every request is answered");
/// assert!(answers.elicit::<bool>(0).unwrap());
///
/// // A round with an answer missing would be asked again.
/// assert!(round.answers(Default::default()).unwrap().is_none());
/// ```
#[derive(Debug)]
pub struct KeyedRound {
    pending: Pendings,
    requests: InputRequests,
}

impl KeyedRound {
    /// `requests` under the keys a transition gives them, numbered on from `*last_key`
    /// (0 before a call's first round), which ends at the last number given: a call
    /// numbers its requests across its rounds. A request the tool keyed itself
    /// (`.key("..")`) keeps its key. An error where a transition would end the call as the
    /// tool's bug (`-32603`, the reason in the log, as a transition logs it): two requests
    /// of one key, or a request that does not encode.
    pub fn new(requests: Vec<Request>, last_key: &mut u32) -> Result<Self, ErrorData> {
        let Assigned {
            pending,
            input_requests,
            ..
        } = asking::assign(requests, last_key, "KeyedRound")?;
        Ok(Self {
            pending,
            requests: input_requests,
        })
    }

    /// The requests as a client receives them (`inputRequests`), by key.
    pub fn requests(&self) -> &InputRequests {
        &self.requests
    }

    /// The answers in `responses`, in the round's order: `None` where a transition would
    /// ask the round again (an answer missing or of another kind than asked, or a form
    /// kept with its schema answered outside it); an error for a response a transition
    /// refuses outright. A restatable form's content is checked as the step reads it
    /// ([`Answers::elicit`] gives `SagaError::DoesNotFit`), as in a transition.
    pub fn answers(&self, responses: InputResponses) -> Result<Option<Answers>, ErrorData> {
        let model = ModelAnswers::default();
        match collect(
            &self.pending,
            responses,
            &BTreeMap::new(),
            &model,
            SamplesFrom::Anyone,
        )? {
            Collected::All(answers) => Ok(Some(Answers::new(answers))),
            Collected::Ask { .. } => Ok(None),
        }
    }
}
