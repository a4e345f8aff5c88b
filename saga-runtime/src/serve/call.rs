//! Running a call: one transition of a saga, bounded in time and routed by the client's
//! era, and the in-process replay of the formats that carry no state token.
//!
//! Apart from the registry in `tools.rs`, which only builds and looks up tools: this is
//! the path every `tools/call` takes.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::Either;
use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CallToolResponse, InputResponses};
use rmcp::service::{RequestContext, RoleServer};

use super::tools::{CallBounds, SagaTools, stamp_server_info};
use super::wire::WireCall;
use crate::engine::family::Saga;
use crate::engine::{Call, MAX_REPLAYED_CHECKPOINTS, SagaContext, StepFailure};

impl SagaTools {
    /// Handles a `tools/call`: one transition of the named saga. The result carries the
    /// registry's `serverInfo` (see [`SagaToolsBuilder::info`](super::SagaToolsBuilder::info)) in its `_meta`.
    pub fn call<'a>(
        &'a self,
        params: CallToolRequestParams,
        context: &'a RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send + 'a {
        // A plain function that returns a boxed future, not an `async fn`: an `async
        // fn`'s body is compiled in each crate that awaits it, and this box is made here,
        // so the call path is compiled once, in saga-runtime. saga's own server awaits
        // `call_stamped`, unboxed.
        self.call_stamped(params, context).boxed()
    }

    /// [`call`](Self::call), unboxed: what saga's own server awaits.
    pub(super) async fn call_stamped(
        &self,
        params: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let response = self.call_unstamped(params, context).await?;
        Ok(self.stamped(response))
    }

    pub(super) async fn call_unstamped(
        &self,
        params: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let cx = self.context(context);
        // A header-selected wire format left its decoding beside the request.
        let wire = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<WireCall>())
            .map_or_else(WireCall::default, WireCall::clone);
        self.call_in(params, &cx, wire).await
    }

    /// A `tools/call` whose context is built already, not yet stamped: the entry of the
    /// HTTP direct path (`serve::http::direct`), which stamps it or has its reply writer
    /// write the stamp.
    pub(crate) fn call_unstamped_in(
        &self,
        params: CallToolRequestParams,
        cx: &SagaContext,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> {
        self.call_in(params, cx, WireCall::default())
    }

    /// `response` with the registry's `serverInfo` in its `_meta`, if it has one.
    pub(crate) fn stamped(&self, mut response: CallToolResponse) -> CallToolResponse {
        if let Some(info) = &self.inner.info_meta {
            stamp_server_info(&mut response, info);
        }
        response
    }

    /// The `serverInfo` that [`SagaTools::stamped`] puts in a result's `_meta`.
    pub(crate) fn server_info_meta(&self) -> Option<&serde_json::Value> {
        self.inner.info_meta.as_ref()
    }

    // `call_in`, `call_routed`, `run_call` and `run_saga` return the future of the layer
    // they pick, not an `async fn`'s own: each `async fn` layer kept the call (208 bytes)
    // and moved it, and the future beneath it, once more for every request
    // (BENCHMARKS.md).
    fn call_in(
        &self,
        params: CallToolRequestParams,
        cx: &SagaContext,
        wire: WireCall,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> {
        if let Some(error) = wire.error {
            return Either::Left(std::future::ready(Err(error)));
        }
        let call = Call {
            method: wire.format.bound_method().into(),
            name: params.name.into_owned(),
            arguments: params.arguments,
            request_state: params.request_state,
            input_responses: params.input_responses,
            failures: wire.failures,
            ..Call::default()
        };
        Either::Right(self.bounded(cx, self.call_routed(call, cx)))
    }

    /// `run`, stopped with `-32603` once it has run longer than
    /// [`SagaToolsBuilder::max_run_time`](super::SagaToolsBuilder::max_run_time) allows. A
    /// session's request is not bounded so: it waits for its client, and each request it
    /// sends is bounded by the client request timeout instead; the session driver bounds
    /// each run between two of the client's answers by the same limit.
    pub(crate) fn bounded<T>(
        &self,
        cx: &SagaContext,
        run: impl Future<Output = Result<T, ErrorData>>,
    ) -> impl Future<Output = Result<T, ErrorData>> {
        // A combinator, not an `async fn`: an `async fn` would keep `run` as an argument
        // and again inside the timeout it awaits, doubling the size of every request's
        // future (and the bytes copied to build it).
        if cx.is_session() {
            return Either::Left(run);
        }
        let max = self.inner.bounds.max_run_time;
        Either::Right(tokio::time::timeout(max, run).map(move |outcome| {
            outcome.unwrap_or_else(|_| {
                tracing::warn!(?max, "a request ran longer than the run-time bound");
                Err(ErrorData::internal_error(
                    format!(
                        "the request ran longer than this server allows one request ({} s) \
                         and was stopped",
                        max.as_secs_f64()
                    ),
                    None,
                ))
            })
        }))
    }

    /// A call as a task (for a task tool) or an ordinary run: what a `tools/call` runs,
    /// and what [`TestClient`](crate::testing::TestClient) runs for each round.
    pub(crate) fn call_routed(
        &self,
        call: Call,
        cx: &SagaContext,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> {
        if let Some(tasks) = &self.inner.tasks {
            let support = match self.saga(&call.name) {
                Ok(saga) => saga.task_support(),
                Err(error) => return Either::Left(Either::Left(std::future::ready(Err(error)))),
            };
            if support != crate::tasks::TaskSupport::Forbidden {
                // Boxed, as the session and replay paths below: rmcp spawns a task per
                // request whose future holds this one, and the largest path would
                // otherwise size (and copy) every request's task (BENCHMARKS.md).
                return Either::Left(Either::Right(Box::pin(tasks.call(self, support, call, cx))));
            }
        }
        Either::Right(self.run_call(call, cx))
    }

    /// Whether the principals are verified identities; see
    /// [`SagaToolsBuilder::verified_principals`](super::SagaToolsBuilder::verified_principals).
    pub fn principals_verified(&self) -> bool {
        self.inner.identity.verified
    }

    pub(crate) fn bounds(&self) -> CallBounds {
        self.inner.bounds
    }

    pub(crate) fn in_flight(&self) -> &super::in_flight::InFlight {
        &self.inner.in_flight
    }

    /// The server's tasks, when a [`TaskStore`](crate::tasks::TaskStore) is configured.
    pub(crate) fn tasks(&self) -> Option<&Arc<crate::tasks::Tasks>> {
        self.inner.tasks.as_ref()
    }

    /// Starts what runs beside requests (the takeover of orphaned tasks), once the server
    /// serves, so that a replica restarted after a crash takes over tasks before any
    /// client asks it about one.
    pub(crate) fn start_background(&self) {
        if let Some(tasks) = self.tasks() {
            tasks.ensure_sweeper(self);
        }
    }

    /// Runs one transition for an already-decoded call and context: the entry point for a
    /// transport or a wire format of your own, which decodes its requests into a [`Call`]
    /// and its context into a [`SagaContext`], and answers with the response. `SagaServer`
    /// and the seed formats use it the same way.
    ///
    /// A first request (no `requestState`) that already carries answers (or step
    /// failures) is replayed in process from the start, each answer given once, until the
    /// saga needs one the request does not bring; at most
    /// [`MAX_REPLAYED_CHECKPOINTS`] checkpoints pass.
    ///
    /// ```
    /// use saga_runtime::engine::{Call, SagaContext};
    /// use saga_runtime::prelude::*;
    /// use saga_runtime::rmcp::model::{CallToolResponse, ClientCapabilities};
    ///
    /// #[saga_tool]
    /// async fn greet() -> Result<String, SagaError> {
    ///     let name: String = elicit("Your name?").key("name").await?;
    ///     Ok(format!("Hello, {name}!"))
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> anyhow::Result<()> {
    /// let tools = SagaTools::builder().keys(KeyRing::ephemeral()).tool(greet).build()?;
    /// // What your transport decoded: the call, and who sent it with what capabilities.
    /// let cx = SagaContext::new("alice").with_capabilities(
    ///     ClientCapabilities::builder().enable_elicitation().build(),
    /// );
    /// let first = tools.run(Call::tool("greet", None), &cx).await?;
    /// let CallToolResponse::InputRequired(asked) = first else {
    ///     panic!("greet asks first");
    /// };
    /// assert!(asked.input_requests.is_some_and(|requests| requests.contains_key("name")));
    /// // The client's retry: the same call, the token, and its answers.
    /// let retry = Call {
    ///     request_state: asked.request_state,
    ///     input_responses: Some(serde_json::from_value(serde_json::json!({
    ///         "name": {"action": "accept", "content": {"value": "Ada"}}
    ///     }))?),
    ///     ..Call::tool("greet", None)
    /// };
    /// let CallToolResponse::Complete(done) = tools.run(retry, &cx).await? else {
    ///     panic!("greet ends after its answer");
    /// };
    /// assert_eq!(serde_json::to_value(&done)?["content"][0]["text"], "Hello, Ada!");
    /// # Ok(())
    /// # }
    /// ```
    pub fn run<'a>(
        &'a self,
        call: Call,
        cx: &'a SagaContext,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send + 'a {
        // Boxed here, for the reason `call` is; saga's own callers await `run_call`.
        self.run_call(call, cx).boxed()
    }

    /// See `run`.
    pub(crate) fn run_call(
        &self,
        call: Call,
        cx: &SagaContext,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> {
        match self.saga(&call.name) {
            Ok(saga) => Either::Left(self.run_saga(saga, call, cx)),
            Err(error) => Either::Right(std::future::ready(Err(error))),
        }
    }

    pub(crate) fn saga(&self, name: &str) -> Result<&Saga, ErrorData> {
        match self.inner.by_name.get(name) {
            Some(&index) => Ok(&self.inner.entries[index].saga),
            None => {
                tracing::info!(tool = %crate::log::Escaped(name), "call of an unknown tool");
                Err(ErrorData::invalid_params(
                    format!("unknown tool: {name}"),
                    None,
                ))
            }
        }
    }

    pub(super) fn run_saga(
        &self,
        saga: &Saga,
        call: Call,
        cx: &SagaContext,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> {
        self.run_saga_until(saga, call, cx, super::session::DriveUntil::End)
    }

    /// [`SagaTools::run`], but a session call stops at its first checkpoint (where a task
    /// begins) instead of running on in process.
    pub(crate) async fn run_until_checkpoint(
        &self,
        call: Call,
        cx: &SagaContext,
    ) -> Result<CallToolResponse, ErrorData> {
        let saga = self.saga(&call.name)?.clone();
        self.run_saga_until(&saga, call, cx, super::session::DriveUntil::Checkpoint)
            .await
    }

    async fn run_saga_until(
        &self,
        saga: &Saga,
        mut call: Call,
        cx: &SagaContext,
        until: super::session::DriveUntil,
    ) -> Result<CallToolResponse, ErrorData> {
        // Two requests resuming one token at once would run its work side by side.
        let _marked = match &call.request_state {
            Some(token) => Some(self.inner.in_flight.enter(token).ok_or_else(|| {
                tracing::info!(tool = %crate::log::Escaped(&call.name), "a token resumed while its work still runs");
                ErrorData::invalid_request(
                    "this requestState is already being resumed by a request that is still \
                     running; wait for its answer, which carries the next state",
                    None,
                )
            })?),
            None => None,
        };
        let fresh_with_answers = call.request_state.is_none()
            && (call
                .input_responses
                .as_ref()
                .is_some_and(|answers| !answers.is_empty())
                || !call.failures.is_empty());
        if cx.is_session() {
            let driver = super::session::Driver {
                codec: self.codec(),
                session_codec: self.session_codec(),
                in_flight: self.in_flight(),
                client_request_timeout: self.bounds().client_request_timeout,
                max_run_time: self.bounds().max_run_time,
            };
            return Box::pin(super::session::drive(driver, saga, call, cx, until)).await;
        }
        if fresh_with_answers {
            let pool = call.input_responses.take().unwrap_or_default();
            let failures = std::mem::take(&mut call.failures);
            return Box::pin(self.replay(saga, call, pool, failures, cx)).await;
        }
        if crate::engine::sampling::takes_samples(cx) {
            return Box::pin(self.run_serving_samples(saga, call, cx)).await;
        }
        saga.run(&self.inner.codec, call, cx).await
    }

    /// A run in which the server's model answers the samples it takes
    /// ([`crate::model`]): each round that asks only such samples is answered here, and
    /// the saga goes on in this request. A round that also asks the client is sent to it
    /// without the samples; when its answers come back (the same round, asked again for
    /// the samples), the model answers them and the round is given both.
    async fn run_serving_samples(
        &self,
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
            let response = saga.run(&self.inner.codec, call.clone(), cx).await?;
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
            let unanswered = |key: &String| {
                !client_answers.contains_key(key) && !client_failures.contains_key(key)
            };
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

    /// Runs a saga from its start in process, one transition at a time, feeding each
    /// round the answers `pool` (and `failures`) hold for its keys, until it completes or
    /// asks for something the pool does not answer; that last response is returned.
    ///
    /// For requests that bring answers but no state: the dependent-requests format, and
    /// a first MRTR call whose answers are already known (the conformance suite sends
    /// such calls). Code between suspensions runs again on each replay.
    ///
    /// The work is bounded by what the request brings: each answer is given once (a round
    /// that asks for a key again, as when an answer failed its schema, ends the replay
    /// with that request), and at most [`MAX_REPLAYED_CHECKPOINTS`] checkpoints pass.
    /// Between rounds the task yields, so a long replay does not hold up other requests.
    pub(super) async fn replay(
        &self,
        saga: &Saga,
        mut call: Call,
        mut pool: InputResponses,
        mut failures: BTreeMap<String, StepFailure>,
        cx: &SagaContext,
    ) -> Result<CallToolResponse, ErrorData> {
        use crate::engine::sampling::{model_takes, serve_when_answered, takes_samples};
        let mut checkpoints = 0;
        loop {
            let mut response = saga.run(&self.inner.codec, call.clone(), cx).await?;
            let CallToolResponse::InputRequired(required) = &mut response else {
                return Ok(response);
            };
            // The round's keys, the samples among them: the client's entries and the
            // model's answers are given to the round by these.
            let keys: Vec<String> = required
                .input_requests
                .as_ref()
                .map(|requests| requests.keys().cloned().collect())
                .unwrap_or_default();
            let mut served = crate::engine::sampling::Served::default();
            if let Some(requests) = required.input_requests.as_mut()
                && takes_samples(cx)
                && requests.values().any(|request| model_takes(cx, request))
            {
                // No token names the call: nothing is kept for a retry.
                match serve_when_answered(requests, cx, &mut pool, &mut failures, None).await {
                    // The server's model answers the samples beside the pool's answers.
                    Some(answered) => served = answered,
                    // The client answers its part first (see `run_serving_samples`).
                    None => return Ok(response),
                }
            }
            if keys.is_empty() {
                checkpoints += 1;
                if checkpoints > MAX_REPLAYED_CHECKPOINTS {
                    return Err(ErrorData::invalid_request(
                        format!(
                            "the saga checkpoints more than {MAX_REPLAYED_CHECKPOINTS} times, \
                             more than one request without a requestState may run; \
                             call it with MRTR (MCP 2026-07-28), which carries its state"
                        ),
                        None,
                    ));
                }
            } else if !keys.iter().all(|key| {
                pool.contains_key(key) || failures.contains_key(key) || served.model.has(key)
            }) {
                return Ok(response);
            }
            call.input_responses = Some(
                keys.iter()
                    .filter_map(|key| pool.remove(key).map(|answer| (key.clone(), answer)))
                    .collect(),
            );
            call.failures = keys
                .iter()
                .filter_map(|key| failures.remove(key).map(|failure| (key.clone(), failure)))
                .collect();
            call.model = served.model;
            call.request_state = required.request_state.clone();
            tokio::task::yield_now().await;
        }
    }
}
