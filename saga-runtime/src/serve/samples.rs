//! A run in which the server's model answers the samples it takes ([`crate::model`]):
//! the route of a call whose context has a server model ([`super::route`]).

use rmcp::ErrorData;
use rmcp::model::CallToolResponse;

use crate::engine::family::Saga;
use crate::engine::{Call, MAX_REPLAYED_CHECKPOINTS, SagaContext};
use crate::state::StateCodec;

/// Runs `call`, the server's model answering the samples it takes: each round that asks
/// only such samples is answered here, and the saga goes on in this request. A round that
/// also asks the client is sent to it without the samples; when its answers come back
/// (the same round, asked again for the samples), the model answers them and the round
/// is given both.
pub(crate) async fn run_serving_samples(
    codec: &StateCodec,
    saga: &Saga,
    mut call: Call,
    cx: &SagaContext,
) -> Result<CallToolResponse, ErrorData> {
    use crate::engine::sampling::{is_sample, model_takes, serve_when_answered};
    // What the client answered in this request, for the round its token asked.
    let mut client_answers = call.input_responses.clone().unwrap_or_default();
    let mut client_failures = call.failures.clone();
    // The samples served in this request, said in the response's `_meta`.
    let mut log: Vec<serde_json::Value> = Vec::new();
    let said = |mut response: CallToolResponse, log: Vec<serde_json::Value>| {
        if !log.is_empty() {
            super::tools::stamp_meta(
                &mut response,
                crate::engine::model::SAMPLES_META_KEY,
                serde_json::Value::Array(log),
            );
        }
        Ok(response)
    };
    // The token this request resumed names its rounds across retries: the model's
    // answers are kept for a retry of it (`model::RoundOfRequest`).
    let resumed = call.request_state.clone();
    for place in 0..=MAX_REPLAYED_CHECKPOINTS {
        let round = resumed.as_deref().map(|token| {
            crate::engine::model::kept::RoundOfRequest::new(cx.principal(), token, place)
        });
        let response = saga.run(codec, call.clone(), cx).await?;
        let CallToolResponse::InputRequired(mut required) = response else {
            return said(response, log);
        };
        let Some(requests) = required.input_requests.as_mut() else {
            return said(CallToolResponse::InputRequired(required), log);
        };
        if !requests.values().any(|request| model_takes(cx, request)) {
            return said(CallToolResponse::InputRequired(required), log);
        }
        let Some(served) = serve_when_answered(
            requests,
            cx,
            &mut client_answers,
            &mut client_failures,
            round.as_ref(),
        )
        .await
        else {
            // The client answers its part first; the model is asked once that is in.
            return said(CallToolResponse::InputRequired(required), log);
        };
        log.extend(served.log);
        let unanswered =
            |key: &String| !client_answers.contains_key(key) && !client_failures.contains_key(key);
        if requests
            .iter()
            .any(|(key, request)| is_sample(request) && unanswered(key))
        {
            // Left to the client (the model failed under `ServerFirst`).
            return said(CallToolResponse::InputRequired(required), log);
        }
        call.request_state = required.request_state;
        call.input_responses = Some(std::mem::take(&mut client_answers));
        call.failures = std::mem::take(&mut client_failures);
        call.model = served.model;
        tokio::task::yield_now().await;
    }
    Err(ErrorData::invalid_request(
        format!(
            "the saga asked the server's model more than {MAX_REPLAYED_CHECKPOINTS} times \
             in one request"
        ),
        None,
    ))
}
