//! The route of a call, chosen once, and the one dispatch that follows it.
//!
//! Every transport (HTTP, stdio, the seed formats, a user's own rmcp server) builds a
//! [`Call`] and a [`SagaContext`] and hands them to [`dispatch`]. [`route`] reads the
//! call, its tool and its context once and names the way it runs ([`Route`]); [`follow`]
//! runs that way and nothing else decides again:
//!
//! | route | when | runs |
//! |---|---|---|
//! | [`Route::Task`] | a task tool, a client that declared tasks | to the first checkpoint, then [`Tasks::begin`](crate::tasks::Tasks::begin) |
//! | [`Route::ThroughCheckpoints`] | a task tool, a client without tasks | its checkpoints passed within the request |
//! | [`Route::Ordinary`] | any other call | by its [`Source`] |
//!
//! Each is the one drive ([`drive`](crate::engine::runner::drive::drive)) with the
//! [`Source`]'s policy: a session's ([`super::session`]), an in-process replay's
//! ([`super::replay`]), or a stateless request's ([`super::stateless`]), told what its
//! checkpoints do ([`AtCheckpoint`]).

use futures::FutureExt as _;
use std::sync::Arc;
use tracing::Instrument as _;

use futures::future::Either;
use rmcp::ErrorData;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::{RequestContext, RoleServer};

use super::replay::Replay;
use super::session::{Session, SessionTools};
use super::stateless::Stateless;
use super::tools::{SagaTools, stamp_server_info};
use super::wire::WireCall;
use super::wire::resumable;
use crate::engine::runner::drive::{AtCheckpoint, drive};
use crate::engine::runner::family::Saga;
use crate::engine::runner::per_call::OnRetry;
use crate::engine::{Call, SagaContext};
use crate::tasks::{TaskSupport, Tasks};

/// The way a call runs: chosen by [`route`], run by [`follow`].
pub(crate) enum Route<'a> {
    /// A task tool called by a client that declared the tasks extension: it runs to its
    /// first checkpoint (gathering input before it, as any call), where its task begins
    /// in the server's tasks.
    Task(&'a Arc<Tasks>, &'a Saga, Source),
    /// A task tool called by a client without the extension: an ordinary call whose
    /// checkpoints pass within it, as many as a request may; past them the client gets
    /// the state to go on from, as over MRTR.
    ThroughCheckpoints(&'a Arc<Tasks>, &'a Saga, Source),
    /// A call whose client asked for a stream (seed 002 in the stateless era, see
    /// [`super::streamed`]): its checkpoints pass within the response, each with a resume
    /// token. Only a transport that can stream answers it (`routed` hands it over), and
    /// only its doors route one.
    Streamed(&'a Saga),
    /// Any other call.
    Ordinary(&'a Saga, Source),
}

/// Where a call's answers come from, and so whose policy drives it: chosen by
/// [`source_of`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// A session's call (MCP 2025-11-25): driven in process, its requests sent to the
    /// client.
    Session,
    /// A first request (no `requestState`) that brings answers: replayed from the start.
    Replay,
    /// A stateless request: one round, and those its server's model answers.
    Stateless,
}

impl Source {
    /// What a checkpoint does on an ordinary call: a stateless request's client carries
    /// the state on; a session's client and a replay's format carry none, so the
    /// checkpoint passes within the request.
    fn at_checkpoint(self) -> AtCheckpoint {
        match self {
            Self::Stateless => AtCheckpoint::Respond,
            Self::Session | Self::Replay => AtCheckpoint::Pass,
        }
    }
}

/// The way a call came in: what its transport and its format allow it to become.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Door {
    /// A `tools/call` through rmcp's handler (a session's, stdio's, a stateless request
    /// rmcp serves, a user's own rmcp server): a task tool becomes a task for a client
    /// that declared the extension.
    ToolsCall,
    /// A stateless `tools/call` served on the HTTP direct path, whose response may be a
    /// stream: as [`Door::ToolsCall`], and streamed for a client that declared
    /// `resumableRequests` (seed 002) when it does not become a task.
    StreamableCall,
    /// A stateless `requests/resume` (seed 002): streamed, never a task.
    Resume,
    /// A format without tasks (`tools/callSaga`): a tool that runs only as a task is
    /// refused, as `tools/call` refuses it for a client without the extension; any other
    /// runs as an ordinary call.
    WithoutTasks,
    /// Its later rounds (`tools/resumeSaga`): an ordinary call, whatever the tool, so that
    /// a call begun before its tool became task-only (a deploy) goes on.
    ResumeWithoutTasks,
    /// [`SagaTools::run`]: an ordinary call, whatever the tool.
    Own,
}

impl Door {
    /// Whether a call through this door may become a task: `None` never, `Some(false)`
    /// refuses a task-only tool.
    fn tasks(self) -> Option<bool> {
        match self {
            Self::ToolsCall | Self::StreamableCall => Some(true),
            Self::WithoutTasks => Some(false),
            Self::Resume | Self::ResumeWithoutTasks | Self::Own => None,
        }
    }

    /// Whether the call's response is a stream, unless it becomes a task.
    fn streams(self, cx: &SagaContext) -> bool {
        match self {
            Self::StreamableCall => resumable::declared(cx.capabilities()),
            Self::Resume => true,
            Self::ToolsCall | Self::WithoutTasks | Self::ResumeWithoutTasks | Self::Own => false,
        }
    }
}

/// The route of `call`: the one place its way is chosen.
pub(crate) fn route<'a>(
    tools: &'a SagaTools,
    call: &Call,
    cx: &SagaContext,
    door: Door,
) -> Result<Route<'a>, ErrorData> {
    let saga = tools.saga(&call.name)?;
    tools.gate(&call.name, cx)?;
    let streams = door.streams(cx);
    if let (Some(tasks), Some(allowed)) = (tools.tasks(), door.tasks()) {
        match saga.task_support() {
            TaskSupport::Forbidden => {}
            _ if allowed && cx.capabilities().supports_tasks() => {
                return Ok(Route::Task(tasks, saga, source_of(call, cx)));
            }
            TaskSupport::Required => return Err(crate::tasks::tasks_required()),
            TaskSupport::Optional if !allowed || streams => {}
            TaskSupport::Optional => {
                return Ok(Route::ThroughCheckpoints(tasks, saga, source_of(call, cx)));
            }
        }
    }
    if streams {
        return Ok(Route::Streamed(saga));
    }
    Ok(Route::Ordinary(saga, source_of(call, cx)))
}

/// Whose policy drives `call`.
pub(crate) fn source_of(call: &Call, cx: &SagaContext) -> Source {
    if cx.is_session() {
        return Source::Session;
    }
    let brings_answers = call
        .input_responses
        .as_ref()
        .is_some_and(|answers| !answers.is_empty())
        || !call.failures.is_empty();
    if call.request_state.is_none() && brings_answers {
        Source::Replay
    } else {
        Source::Stateless
    }
}

/// A call of any transport: routed, then followed within the run-time bound.
pub(crate) fn dispatch<'a>(
    tools: &'a SagaTools,
    call: Call,
    cx: &'a SagaContext,
    door: Door,
) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + 'a {
    // Combinators, not `async fn`s, down to the run: each `async fn` layer kept the call
    // (208 bytes) and moved it, and the future beneath it, once more for every request
    // (BENCHMARKS.md).
    match routed(tools, call, cx, door) {
        Ok(Routed::Run(run)) => Either::Left(run),
        // No stream here: the transport that calls this cannot send one, and its doors
        // route none (`Door::streams`).
        Ok(Routed::Streamed(..)) => Either::Right(std::future::ready(Err(not_streamed()))),
        Err(error) => Either::Right(std::future::ready(Err(error))),
    }
}

/// A call routed: streamed by the transport (which takes the call back), or the future
/// that follows its route within the run-time bound.
// `F` is the run's future, larger than the call: the lint reads a type parameter as empty.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Routed<'a, F> {
    Streamed(&'a Saga, Call),
    Run(F),
}

/// `call` routed through `door`, and, unless it is streamed, the future that runs it:
/// made here, so that a transport's future holds the call once, inside it.
pub(crate) fn routed<'a>(
    tools: &'a SagaTools,
    call: Call,
    cx: &'a SagaContext,
    door: Door,
) -> Result<Routed<'a, impl Future<Output = Result<CallToolResponse, ErrorData>> + 'a>, ErrorData> {
    Ok(match route(tools, &call, cx, door)? {
        Route::Streamed(saga) => Routed::Streamed(saga, call),
        route => Routed::Run(bounded(tools, cx, follow(tools, route, call, cx))),
    })
}

/// A call of a saga that is not a tool (a prompt's, a resource's): never a task,
/// followed within the run-time bound.
pub(crate) fn dispatch_saga<'a>(
    tools: &'a SagaTools,
    saga: &'a Saga,
    call: Call,
    cx: &'a SagaContext,
) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + 'a {
    let source = source_of(&call, cx);
    bounded(
        tools,
        cx,
        follow(tools, Route::Ordinary(saga, source), call, cx),
    )
}

/// Runs `call` the way `route` names.
pub(crate) fn follow<'a>(
    tools: &'a SagaTools,
    route: Route<'a>,
    call: Call,
    cx: &'a SagaContext,
) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + 'a {
    match route {
        // A round whose outcome is recorded runs to its end whether its client waits or
        // not (boxed, as the rarer runs below).
        Route::Ordinary(saga, source) if detaches(tools, &call, source) => {
            Either::Right(detached(tools, saga, source, source.at_checkpoint(), call, cx).boxed())
        }
        Route::Ordinary(saga, source) => Either::Left(drive_by(
            tools,
            saga,
            source,
            source.at_checkpoint(),
            OnRetry::AnswerAgain,
            call,
            cx,
        )),
        // Boxed, as the rarer runs below: rmcp spawns a task per request whose future
        // holds this one, and the largest path would otherwise size (and copy) every
        // request's task (BENCHMARKS.md).
        Route::Task(tasks, saga, source) => {
            Either::Right(begin_task(tools, tasks, saga, source, call, cx).boxed())
        }
        // `routed` hands a streamed call to its transport: only a door that cannot stream
        // gets here, and none routes a stream (`Door::streams`).
        Route::Streamed(_) => Either::Right(std::future::ready(Err(not_streamed())).boxed()),
        Route::ThroughCheckpoints(tasks, saga, source) => Either::Right(
            async move {
                tasks.ensure_sweeper(tools);
                if detaches(tools, &call, source) {
                    return detached(tools, saga, source, AtCheckpoint::Pass, call, cx).await;
                }
                drive_by(
                    tools,
                    saga,
                    source,
                    AtCheckpoint::Pass,
                    OnRetry::AnswerAgain,
                    call,
                    cx,
                )
                .await
            }
            .boxed(),
        ),
    }
}

/// Whether `call` runs [`detached`]: it brings a token whose round's outcome is recorded,
/// on a path bounded by the run time (not a session's, which waits for its client).
fn detaches(tools: &SagaTools, call: &Call, source: Source) -> bool {
    call.request_state.is_some() && source != Source::Session && tools.codec().records_outcomes()
}

/// `call` of `saga` driven in a task of its own, bounded by the run time: a client that
/// hangs up (its timeout) does not stop the round, whose outcome is then recorded for the
/// same request sent again.
///
/// The round takes over its request's place among the HTTP bounds (its caller's share
/// and the server's total): a client that hangs up does not free room for another round
/// while this one runs. Past [`MAX_DETACHED`](super::tools::MAX_DETACHED) rounds running
/// so (callers without an HTTP place: `SagaTools::run`), the request is refused as one
/// still running (`-32600`, retryable) before its token is claimed, so that a retry runs
/// the round; run attached, a hang-up would spend the token with the round undone.
fn detached<'a>(
    tools: &'a SagaTools,
    saga: &'a Saga,
    source: Source,
    at_checkpoint: AtCheckpoint,
    call: Call,
    cx: &'a SagaContext,
) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send + 'a {
    let Ok(place) = Arc::clone(tools.detached()).try_acquire_owned() else {
        tracing::info!(tool = %crate::log::Escaped(&call.name), "refusing a round: as many run detached as may");
        return Either::Left(std::future::ready(Err(busy())));
    };
    // Kept by the round until it ends, whether its client waits or not.
    let request_place = cx.take_place();
    let (tools, saga, cx) = (tools.clone(), Arc::clone(saga), cx.clone());
    // A margin under the request's own bound, which began a little earlier: the round's
    // error is recorded before the request answers with the same.
    let max = tools
        .bounds()
        .max_run_time
        .saturating_sub(std::time::Duration::from_millis(250));
    let run = tokio::spawn(
        async move {
            let _places = (place, request_place);
            let run = drive_by(
                &tools,
                &saga,
                source,
                at_checkpoint,
                OnRetry::AnswerAgain,
                call,
                &cx,
            );
            // Stopped at the bound, the drive gives its claim back (or, in a store that
            // does not renew leases, spends it: a retry is refused).
            tokio::time::timeout(max, run)
                .await
                .unwrap_or_else(|_| Err(ran_too_long(max)))
        }
        .instrument(tracing::Span::current()),
    );
    Either::Right(run.map(|joined| {
        joined.unwrap_or_else(|error| {
            crate::engine::runner::unwind::log_task_failure(error, "a round");
            Err(stopped_before_answering())
        })
    }))
}

/// What a call whose task stopped before it answered (a panic outside its steps, which
/// the log names) answers, on every path that runs a call in a task of its own.
pub(crate) fn stopped_before_answering() -> ErrorData {
    ErrorData::internal_error("the round stopped before it answered", None)
}

/// What a round refused before it starts, for want of room to run detached, answers:
/// `-32600`, which its `data` says may be sent again (its token is not claimed).
fn busy() -> ErrorData {
    ErrorData::invalid_request(
        "the server is running as many rounds as it may; send the same request again shortly",
        Some(serde_json::json!({"retryable": true, "retryAfterMs": 1000})),
    )
}

/// The error of a streamed route reaching a transport that cannot stream: no door that
/// such a transport passes streams, so this says a door was added wrongly.
fn not_streamed() -> ErrorData {
    ErrorData::internal_error(
        "a call routed to a stream reached a transport that cannot stream",
        None,
    )
}

/// `call` driven by `source`'s policy, its checkpoints doing what `at_checkpoint` says.
///
/// An `async` block, not an `async fn`: an `async fn` keeps the call (256 bytes) twice,
/// as passed and moved into its body, in every request's future (BENCHMARKS.md).
#[allow(clippy::manual_async_fn)] // the point: see the doc
fn drive_by<'a>(
    tools: &'a SagaTools,
    saga: &'a Saga,
    source: Source,
    at_checkpoint: AtCheckpoint,
    on_retry: OnRetry,
    mut call: Call,
    cx: &'a SagaContext,
) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + 'a {
    async move {
        // Two requests resuming one token at once would run its work side by side.
        // With recorded outcomes, the second waits for the first's answer instead.
        let _marked = match &call.request_state {
            Some(token) => Some(match tools.in_flight().enter(token) {
                Some(marked) => marked,
                // Boxed: the wait is rare, and every request's future would hold it.
                None => Box::pin(
                    tools
                        .in_flight()
                        .enter_waiting(
                            token,
                            tools.codec().records_outcomes(),
                            tools.codec().retry_wait(),
                        ),
                )
                .await
                .inspect_err(|_| {
                    tracing::info!(tool = %crate::log::Escaped(&call.name), "a token resumed while its work still runs");
                })?,
            }),
            None => None,
        };
        match source {
            Source::Session => {
                let driver = SessionTools {
                    codec: tools.codec(),
                    session_codec: tools.session_codec(),
                    in_flight: tools.in_flight(),
                    client_request_timeout: tools.bounds().client_request_timeout,
                    max_run_time: tools.bounds().max_run_time,
                };
                let mut policy = Session::new(driver, saga, &call, cx, at_checkpoint)?;
                Box::pin(drive(saga, &mut call, cx, &mut policy, on_retry)).await
            }
            Source::Replay => {
                let mut policy = Replay::new(tools.codec(), &mut call, at_checkpoint);
                Box::pin(drive(saga, &mut call, cx, &mut policy, on_retry)).await
            }
            Source::Stateless => {
                let mut policy = Stateless::new(tools.codec(), &call, cx, at_checkpoint);
                drive(saga, &mut call, cx, &mut policy, on_retry).await
            }
        }
    }
}

/// [`Route::Task`]: the run to the first checkpoint, and the task that begins there.
async fn begin_task(
    tools: &SagaTools,
    tasks: &Arc<Tasks>,
    saga: &Saga,
    source: Source,
    call: Call,
    cx: &SagaContext,
) -> Result<CallToolResponse, ErrorData> {
    tasks.ensure_sweeper(tools);
    // Its first run's answer begins a task, and is not one to give again: a retry of the
    // request would continue the task's state beside its worker. Its token is spent, and
    // a creation sent again that finds an earlier answer recorded is refused
    // (`OnRetry::Refuse`).
    let first = drive_by(
        tools,
        saga,
        source,
        AtCheckpoint::Respond,
        OnRetry::Refuse,
        call.clone(),
        cx,
    )
    .await?;
    tasks.begin(tools, saga, call, cx, first).await
}

/// `run`, stopped with `-32603` once it has run longer than
/// [`SagaToolsBuilder::max_run_time`](super::SagaToolsBuilder::max_run_time) allows. A
/// session's request is not bounded so: it waits for its client, and each request it
/// sends is bounded by the client request timeout instead; the session driver bounds
/// each run between two of the client's answers by the same limit.
pub(crate) fn bounded<T>(
    tools: &SagaTools,
    cx: &SagaContext,
    run: impl Future<Output = Result<T, ErrorData>>,
) -> impl Future<Output = Result<T, ErrorData>> {
    // A combinator, not an `async fn`: an `async fn` would keep `run` as an argument
    // and again inside the timeout it awaits, doubling the size of every request's
    // future (and the bytes copied to build it).
    if cx.is_session() {
        return Either::Left(run);
    }
    let max = tools.bounds().max_run_time;
    Either::Right(
        tokio::time::timeout(max, run)
            .map(move |outcome| outcome.unwrap_or_else(|_| Err(ran_too_long(max)))),
    )
}

/// What a request stopped at the run-time bound `max` answers.
fn ran_too_long(max: std::time::Duration) -> ErrorData {
    tracing::warn!(?max, "a request ran longer than the run-time bound");
    ErrorData::internal_error(
        format!(
            "the request ran longer than this server allows one request ({} s) and was \
             stopped",
            max.as_secs_f64()
        ),
        None,
    )
}

/// A `tools/call` as rmcp hands it over, to its response (not yet stamped).
pub(crate) fn tools_call<'a>(
    tools: &'a SagaTools,
    params: CallToolRequestParams,
    cx: &'a SagaContext,
    wire: WireCall,
) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + 'a {
    match call_of(params, wire) {
        Ok(call) => Either::Left(dispatch(tools, call, cx, Door::ToolsCall)),
        Err(error) => Either::Right(std::future::ready(Err(error))),
    }
}

/// The call a `tools/call`'s params make, in the wire format `wire` read them in.
pub(crate) fn call_of(params: CallToolRequestParams, wire: WireCall) -> Result<Call, ErrorData> {
    if let Some(error) = wire.error {
        return Err(error);
    }
    Ok(Call {
        method: wire.format.bound_method().into(),
        name: params.name.into_owned(),
        arguments: params.arguments,
        request_state: params.request_state,
        input_responses: params.input_responses,
        failures: wire.failures,
        ..Call::default()
    })
}

/// The registry's doors for a user's own server: a `tools/call` of rmcp, a call decoded
/// by a transport of one's own, and the routes of rmcp's `#[tool_router]`.
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
        // `rmcp_call`, unboxed.
        async move {
            let response = rmcp_call(self, params, context).await?;
            Ok(self.stamped(response))
        }
        .boxed()
    }

    /// Runs one transition for an already-decoded call and context: the entry point for a
    /// transport or a wire format of your own, which decodes its requests into a [`Call`]
    /// and its context into a [`SagaContext`], and answers with the response. `SagaServer`
    /// and the seed formats use it the same way.
    ///
    /// A first request (no `requestState`) that already carries answers (or step
    /// failures) is replayed in process from the start, each answer given once, until the
    /// saga needs one the request does not bring; at most
    /// [`MAX_REPLAYED_CHECKPOINTS`](crate::engine::MAX_REPLAYED_CHECKPOINTS) checkpoints pass.
    /// The run is not bounded here: the transport that calls it bounds its requests, as
    /// saga's own bound each by
    /// [`SagaToolsBuilder::max_run_time`](super::SagaToolsBuilder::max_run_time). It needs
    /// no timers of the runtime it runs on.
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
        // Boxed here, for the reason `call` is. Never a task, and not bounded: the
        // transport that calls it bounds its requests (and its runtime may have no timers).
        async move {
            let route = route(self, &call, cx, Door::Own)?;
            follow(self, route, call, cx).await
        }
        .boxed()
    }

    /// The tools as routes of an rmcp [`ToolRouter`], to merge with a server written with
    /// rmcp's `#[tool_router]` and `#[tool_handler]`:
    ///
    /// ```ignore
    /// Self { tool_router: Self::tool_router() + sagas.router() }
    /// ```
    ///
    /// `tools/list` then lists them beside the server's own tools, and `tools/call` runs
    /// them, with MRTR rounds; their results carry the host server's `serverInfo`.
    pub fn router<S>(&self) -> ToolRouter<S>
    where
        S: rmcp::ServerHandler + Send + Sync + 'static,
    {
        let mut router = ToolRouter::new();
        for tool in self.listed() {
            let sagas = self.clone();
            router.add_route(ToolRoute::new_dyn(
                tool.clone(),
                move |context: ToolCallContext<'_, S>| {
                    let sagas = sagas.clone();
                    Box::pin(async move {
                        let info = serde_json::to_value(context.service.get_info().server_info)
                            .unwrap_or_default();
                        let mut params = CallToolRequestParams::new(context.name);
                        params.arguments = context.arguments;
                        params.input_responses = context.input_responses;
                        params.request_state = context.request_state;
                        let mut response =
                            rmcp_call(&sagas, params, &context.request_context).await?;
                        stamp_server_info(&mut response, &info);
                        Ok(response)
                    })
                },
            ));
        }
        router
    }
}

/// A `tools/call` of an rmcp request context, not yet stamped: its head read from the
/// request, then [`tools_call`].
pub(crate) async fn rmcp_call(
    tools: &SagaTools,
    params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let cx = tools.context(context);
    tools_call(tools, params, &cx, super::head::wire_call(context)).await
}
