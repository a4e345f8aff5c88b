//! The plain run of a saga: its body as one ordinary async function, answered by a
//! scripted client at each suspension. saga's differential tests compare it with the state
//! machine; it is compiled only with the `plain-run` feature, which only they enable.

use rmcp::model::{InputRequests, InputResponses};

use crate::engine::round::answers::Answers;
use crate::engine::round::asking::{self, assign};
use crate::engine::round::collect::{Collected, collect};
use crate::engine::round::requests::Request;

/// Where the answers of a plain (non-suspending) run come from: a scripted client.
pub trait Script: Send {
    /// Answers a round's requests, as an MRTR client would.
    fn respond(&mut self, requests: &InputRequests) -> InputResponses;
}

/// Runs a tool's body as one ordinary async function, asking a [`Script`] at each
/// suspension. The requests, their keys, and the checks on answers are those of the state
/// machine: only the suspending differs. The differential tests compare the two.
#[derive(Debug, Default)]
pub struct PlainRun {
    next_key: u32,
    /// How many rounds the run asked for, answers asked again included.
    pub rounds: u32,
    /// Why the script's answers could not be used, if they could not; the tool then saw
    /// [`SagaError::InvalidAnswer`](crate::engine::SagaError::InvalidAnswer).
    pub failure: Option<String>,
}

impl PlainRun {
    /// Asks `requests` of `script` until it answers them all usably (at most 8 tries).
    pub fn ask(&mut self, script: &mut dyn Script, requests: Vec<Request>) -> Answers {
        match self.try_ask(script, requests) {
            Ok(answers) => answers,
            Err(reason) => {
                self.failure.get_or_insert(reason);
                Answers::none()
            }
        }
    }

    fn try_ask(
        &mut self,
        script: &mut dyn Script,
        requests: Vec<Request>,
    ) -> Result<Answers, String> {
        let asking::Assigned {
            pending,
            input_requests: input,
            ..
        } = assign(requests, &mut self.next_key, "plain run")
            .map_err(|error| error.message.to_string())?;
        for _ in 0..8 {
            self.rounds += 1;
            match collect(&pending, script.respond(&input), &Default::default()) {
                Ok(Collected::All(answers)) => return Ok(Answers::new(answers)),
                Ok(Collected::Ask { .. }) => continue,
                Err(error) => return Err(error.message.to_string()),
            }
        }
        Err("the script was asked 8 times without a usable answer".into())
    }

    /// A checkpoint: in a plain run, only a counted round.
    pub fn checkpoint(&mut self) {
        self.rounds += 1;
    }
}
