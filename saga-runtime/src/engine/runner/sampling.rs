//! A round's samples answered by the server's model, for the request's context: what
//! each path that runs a call (a stateless request, a session, a replay, a task) does
//! before it sends the client its requests.

use std::collections::BTreeMap;

use rmcp::model::{CreateMessageRequestParams, InputRequest, InputRequests, InputResponses};

use crate::engine::caller::context::SagaContext;
use crate::engine::caller::model::SamplingPolicy;
use crate::engine::caller::model::kept::RoundOfRequest;
use crate::engine::kinds::kind::StepFailure;
use crate::engine::round::collect::{ModelAnswers, SamplesFrom};

/// What the server's model gave a round: answers, and failures (which the tool reads as
/// [`SagaError::ModelFailed`](crate::engine::SagaError::ModelFailed)), by key.
#[derive(Debug, Default)]
pub(crate) struct Served {
    pub(crate) model: ModelAnswers,
    /// What each served sample was, for [`SAMPLES_META_KEY`](crate::engine::caller::model::SAMPLES_META_KEY).
    pub(crate) log: Vec<serde_json::Value>,
}

/// Whether `request` is a sample.
pub(crate) fn is_sample(request: &InputRequest) -> bool {
    matches!(request, InputRequest::CreateMessage(_))
}

/// Whether the server's model takes `request` for `cx`: a sample, with tools or
/// without, that the policy gives it for what this client declared.
pub(crate) fn model_takes(cx: &SagaContext, request: &InputRequest) -> bool {
    match request {
        InputRequest::CreateMessage(request) => cx
            .server_model_for(request.params.tools.is_some())
            .is_some(),
        _ => false,
    }
}

/// Whether the server's model takes some of the samples of this request's rounds.
pub(crate) fn takes_samples(cx: &SagaContext) -> bool {
    cx.server_model_for(false).is_some() || cx.server_model_for(true).is_some()
}

/// Whose answers to a sample a round reads for `cx`: under
/// [`SamplingPolicy::ServerOnly`] the model's only, so that a client's result, error or
/// decline for a sample it was never sent is not heard (the round reads it as missing,
/// and the model answers).
pub(crate) fn samples_from(cx: &SagaContext) -> SamplesFrom {
    if cx
        .server_model()
        .is_some_and(|model| model.policy == SamplingPolicy::ServerOnly)
    {
        SamplesFrom::ModelOnly
    } else {
        SamplesFrom::Anyone
    }
}

/// A stateless request's round that holds samples the server's model takes: once the
/// client has answered its part (each request that is not a sample has an entry in
/// `answers` or `failures`), the model answers the samples the client has not, and they
/// are taken out of `requests` (see [`serve_round`]). Until then, `requests` keeps only
/// the client's part, which is sent to it, and `None` is returned: the model is asked
/// once the client's answers are in, so that it is not asked again for a round asked
/// again. Under [`SamplingPolicy::ServerOnly`] the client's entries for the samples are
/// dropped first: it is not heard about them.
pub(crate) async fn serve_when_answered(
    requests: &mut InputRequests,
    cx: &SagaContext,
    answers: &mut InputResponses,
    failures: &mut BTreeMap<String, StepFailure>,
    round: Option<&RoundOfRequest>,
) -> Option<Served> {
    if samples_from(cx) == SamplesFrom::ModelOnly {
        for (key, _) in requests.iter().filter(|(_, request)| is_sample(request)) {
            answers.remove(key);
            failures.remove(key);
        }
    }
    let answered = |key: &str| answers.contains_key(key) || failures.contains_key(key);
    let clients_part_in = requests
        .iter()
        .filter(|(_, request)| !model_takes(cx, request))
        .all(|(key, _)| answered(key));
    if !clients_part_in {
        requests.retain(|_, request| !model_takes(cx, request));
        return None;
    }
    // A sample the client answered (sent to it under `ClientFirst`, or after the model
    // failed under `ServerFirst`) is its: the model is not asked it again.
    requests.retain(|key, request| !(model_takes(cx, request) && answered(key)));
    Some(serve_round(requests, cx, round).await)
}

/// Answers the samples of a round that the server's model takes for `cx`, and takes them
/// out of `requests`: what is left goes to the client. A failure is that sample's answer
/// (the tool reads [`SagaError::ModelFailed`](crate::engine::SagaError::ModelFailed)), except under
/// [`SamplingPolicy::ServerFirst`] for a client that can sample, which is asked instead.
/// At most as many run at once as one pool may hold, so that a round of many samples
/// waits for places rather than failing on its own share.
///
/// `round` names the round across retries of its request, where a token does: an answer
/// the model gave it is then given again to a retry, free
/// ([`RoundOfRequest`]).
pub(crate) async fn serve_round(
    requests: &mut InputRequests,
    cx: &SagaContext,
    round: Option<&RoundOfRequest>,
) -> Served {
    use futures::StreamExt as _;
    let mut served = Served::default();
    // Without a model taking them, the samples are the client's, as before models: no
    // scan of the round (the stateless path would not make one either).
    let Some(model) = cx
        .server_model_for(false)
        .or_else(|| cx.server_model_for(true))
    else {
        return served;
    };
    let taken: Vec<(String, CreateMessageRequestParams)> = requests
        .iter()
        .filter_map(|(key, request)| match request {
            InputRequest::CreateMessage(asked) if model_takes(cx, request) => {
                Some((key.clone(), asked.params.clone()))
            }
            _ => None,
        })
        .collect();
    let pool = cx.pool(false);
    let answered: Vec<_> = futures::stream::iter(taken)
        .map(|(key, params)| {
            let pool = &pool;
            let retry = round.map(|round| round.sample(&key, &params));
            let tools = params.tools.is_some();
            async move { (key, tools, model.answer(params, pool, retry).await) }
        })
        .buffered(model.budgets.per_pool())
        .collect()
        .await;
    for (key, tools, answer) in answered {
        match answer {
            Ok(result) => {
                crate::metrics::sample("server", true);
                served.log.push(serde_json::json!({
                    "key": key, "answeredBy": "server", "model": result.model
                }));
                requests.remove(&key);
                served.model.answers.insert(
                    key,
                    serde_json::to_value(result).unwrap_or(serde_json::Value::Null),
                );
            }
            Err(error) => {
                crate::metrics::sample("server", false);
                tracing::info!(key = %crate::log::Escaped(&key), %error, "the server's model did not answer a sample");
                let client_can = if tools {
                    cx.client_can_sample_with_tools()
                } else {
                    cx.client_can_sample()
                };
                if model.policy == SamplingPolicy::ServerFirst && client_can {
                    crate::metrics::sample("client", true);
                    continue;
                }
                served.log.push(serde_json::json!({
                    "key": key, "answeredBy": "server", "outcome": "failed"
                }));
                requests.remove(&key);
                served.model.failures.insert(key, error.to_string());
            }
        }
    }
    served
}
