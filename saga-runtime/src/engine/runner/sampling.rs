//! A round's samples answered by the server's model, for the request's context: what
//! each path that runs a call (a stateless request, a session, a replay, a task) does
//! before it sends the client its requests.

use std::collections::BTreeMap;

use rmcp::model::{CreateMessageRequestParams, InputRequest, InputRequests, InputResponses};

use crate::engine::call::context::SagaContext;
use crate::engine::call::model::SamplingPolicy;
use crate::engine::kinds::kind::StepFailure;

/// What the server's model gave a round: answers, and failures (which the tool reads as a
/// `SagaError` with the reason), by key.
#[derive(Debug, Default)]
pub(crate) struct Served {
    pub(crate) answers: InputResponses,
    pub(crate) failures: BTreeMap<String, StepFailure>,
    /// What each served sample was, for [`SAMPLES_META_KEY`](super::SAMPLES_META_KEY).
    pub(crate) log: Vec<serde_json::Value>,
}

/// Whether `request` is a sample.
pub(crate) fn is_sample(request: &InputRequest) -> bool {
    matches!(request, InputRequest::CreateMessage(_))
}

/// Whether the server's model takes the samples of this request's rounds.
pub(crate) fn takes_samples(cx: &SagaContext) -> bool {
    cx.server_model().is_some()
}

/// Answers the samples of a round that the server's model takes for `cx`, all at once,
/// and takes them out of `requests`: what is left goes to the client. A failure is that
/// sample's answer (the tool reads a `SagaError` with the reason), except under
/// [`SamplingPolicy::ServerFirst`] for a client that can sample, which is asked instead.
pub(crate) async fn serve_round(requests: &mut InputRequests, cx: &SagaContext) -> Served {
    let mut served = Served::default();
    // Without a model taking them, the samples are the client's, as before models: no
    // scan of the round (the stateless path would not make one either).
    let Some(model) = cx.server_model() else {
        return served;
    };
    let taken: Vec<(String, CreateMessageRequestParams)> = requests
        .iter()
        .filter_map(|(key, request)| match request {
            InputRequest::CreateMessage(request) => Some((key.clone(), request.params.clone())),
            _ => None,
        })
        .collect();
    let pool = cx.pool(false);
    let answered = futures::future::join_all(
        taken
            .into_iter()
            .map(|(key, params)| async { (key, model.answer(params, &pool).await) }),
    )
    .await;
    for (key, answer) in answered {
        match answer {
            Ok(result) => {
                crate::metrics::sample("server", true);
                served.log.push(serde_json::json!({
                    "key": key, "answeredBy": "server", "model": result.model
                }));
                requests.remove(&key);
                served.answers.insert(
                    key,
                    serde_json::to_value(result).unwrap_or(serde_json::Value::Null),
                );
            }
            Err(error) => {
                crate::metrics::sample("server", false);
                tracing::info!(key = %crate::log::Escaped(&key), %error, "the server's model did not answer a sample");
                if model.policy == SamplingPolicy::ServerFirst && cx.can_sample() {
                    crate::metrics::sample("client", true);
                    continue;
                }
                served.log.push(serde_json::json!({
                    "key": key, "answeredBy": "server", "outcome": "failed"
                }));
                requests.remove(&key);
                served.failures.insert(
                    key,
                    StepFailure {
                        code: -32603,
                        message: error.to_string(),
                    },
                );
            }
        }
    }
    served
}
