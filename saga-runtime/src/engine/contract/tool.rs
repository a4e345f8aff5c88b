//! The contract between a saga and the runtime.

use std::future::Future;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::engine::caller::context::SagaContext;
use crate::engine::contract::output::ToolOutput;
use crate::engine::identity::layout::shape::LayoutError;
use crate::engine::identity::points::{Points, StateLayout};
use crate::engine::round::answers::Answers;
use crate::engine::round::requests::Request;

/// A tool written as a state machine. `#[saga_tool]` implements it from a straight-line
/// async function; it can also be written by hand (see `examples/support/deploy.rs`).
///
/// The runtime drives it one transition per request: it rebuilds the state from the
/// arguments ([`SagaTool::start`]) or from the sealed token, hands it the answers to the
/// previous round, and runs [`SagaTool::step`] once. The step either finishes, or says what
/// to ask the client next together with the state to resume from; the runtime seals that
/// state into the next token and keeps nothing.
pub trait SagaTool: Send + Sync + 'static {
    /// Everything the saga needs to resume: the live locals at each suspension.
    type State: Serialize + DeserializeOwned + Send + 'static;

    /// The tool's `tools/list` entry: name, title, description, `inputSchema`,
    /// `outputSchema`. A `#[saga_tool]`'s `_meta` also carries its diagram, which a
    /// [`SagaTools`](crate::serve::SagaTools) lists only when built to
    /// ([`SagaToolsBuilder::diagrams_in_tool_list`](crate::serve::SagaToolsBuilder::diagrams_in_tool_list)).
    fn tool(&self) -> Tool;

    /// A change of meaning that keeps the saved layout: tokens and tasks sealed at another
    /// version are refused, even where the layout matches. `#[saga_tool(version = N)]`
    /// sets it; 0 by default. See the crate's "Deploying changes" section.
    fn version(&self) -> u16 {
        0
    }

    /// The layout of [`SagaTool::State`], point by point: by default traced from the
    /// type itself, each variant of an enum a suspension point (a state that is not an
    /// enum is one point). `#[saga_tool]` traces the types rustc inferred inside its step.
    #[doc(hidden)]
    fn layout(&self) -> Result<StateLayout, LayoutError> {
        StateLayout::of::<Self::State>()
    }

    /// A tag of the code that states requests again (see
    /// [`Step::suspend_restatable`]): a round asked by a build with another tag is asked
    /// again as this build states it, without comparing the two; within one tag, a round
    /// stated differently is the tool's bug (`-32603`). `#[saga_tool]` derives it from the
    /// tool's and its helpers' code. A hand-written tool that rewords a request it
    /// restates changes it with the wording, so that rounds asked by the build before are
    /// asked again in the new words after a deploy.
    fn build_tag(&self) -> u16 {
        0
    }

    /// The initial state, from the call's arguments. A refusal is a JSON-RPC error
    /// (`-32602`, see [`invalid_arguments`]).
    fn start(&self, arguments: JsonObject) -> Result<Self::State, ErrorData>;

    /// Runs the saga from `state` up to its next suspension or its end.
    fn step(
        &self,
        state: Self::State,
        answers: Answers,
        cx: &SagaContext,
    ) -> impl Future<Output = Step<Self::State>> + Send;

    /// States again the requests of the round that `state` suspended at with
    /// [`Step::suspend_restatable`]: the runtime calls it when that round must be sent
    /// again (a request had no answer) and the token keeps no copy of them. The answer is
    /// the whole round, in the same order, built from `state` exactly as the first time;
    /// nothing else may happen, which is why this is not `async`. Requests stated
    /// differently are caught by the round's digest and end the call with an internal
    /// error.
    ///
    /// `None`, the default, for a state whose round cannot be stated again: a tool that
    /// never calls `suspend_restatable` keeps this default. `#[saga_tool]` writes it for
    /// every suspension it makes restatable. A wrapper that passes `step` through to
    /// another tool passes `restate` through too, or the wrapped tool's restatable rounds
    /// end with an error when they are asked again.
    fn restate(&self, state: Self::State, cx: &SagaContext) -> Option<Vec<Request>> {
        let _ = (state, cx);
        None
    }

    /// The names of the state's variants, by their encoded index, for the log; empty when
    /// the state names itself through serde (an enum of named variants). `#[saga_tool]`
    /// fills it with its suspension variants (`AfterElicitTarget`, …).
    fn state_names(&self) -> &'static [&'static str] {
        &[]
    }

    /// The tool's diagram: Mermaid `stateDiagram-v2` text. `#[saga_tool]` builds it from
    /// the function as written; a tool written by hand shows its start and its
    /// [`state_names`](SagaTool::state_names) only, by default
    /// ([`minimal_diagram`](crate::engine::minimal_diagram)).
    ///
    /// Its nodes: the start (the call, with its arguments); one per suspension point,
    /// named by its state variant as in [`state_names`](SagaTool::state_names) and the
    /// log (`AfterElicitTarget`), with what it asks (the kind, the message as written, the
    /// key when `.key("…")` pins it); one per `checkpoint()`; one per helper call, naming
    /// the helper, whose own diagram is its `#[saga_fn]`'s (`helper(..).diagram()`); and
    /// the exits: the result (`Done`), the error a `?` returns (`Failed`) and each
    /// `return`. Its edges carry their conditions as written (`if …`, `match … { arm }`,
    /// `for … in …`; a request's answer in a condition reads `answer`). A loop that
    /// suspends is a choice node with its back edges (`next`, `continue`); paths from
    /// several places meet at a choice node before a branch; a `join!` or `join_all` is
    /// one node, one round.
    ///
    /// Where else it shows: in the tool's rustdoc (the generated struct's docs, drawn by
    /// Mermaid in the browser), in the `_meta` of [`SagaTool::tool`] under
    /// [`DIAGRAM_META_KEY`](crate::engine::DIAGRAM_META_KEY), and in `tools/list` for
    /// `saga graph URL TOOL` when the server lists diagrams
    /// ([`SagaToolsBuilder::diagrams_in_tool_list`](crate::serve::SagaToolsBuilder::diagrams_in_tool_list),
    /// off by default: a listed diagram shows the conditions and messages as the code
    /// states them to whoever lists the tools). A server of your own that lists
    /// [`SagaTool::tool`] as it is shows it too.
    ///
    /// The syntax cannot tell a `#[saga_fn]` from an ordinary `async fn` (the types do,
    /// when the tool is built), so this text, and the rustdoc, draw every `f(..).await`
    /// as a possible helper call. The diagram in `tools/list` (what `saga graph` shows)
    /// is this one with each ordinary `async fn`'s call joined around: only calls that
    /// can suspend are nodes there.
    ///
    /// Text from the code is made safe for Mermaid: `;` is shown as `⁏`, a `:` Mermaid
    /// would refuse as `∶`, the `<`/`>` of generics as `‹`/`›`, and lines are cut at 80
    /// characters.
    ///
    /// ```
    /// use saga_runtime::prelude::*;
    ///
    /// #[saga_tool]
    /// async fn greet() -> Result<String, SagaError> {
    ///     let name: String = elicit("Your name?").key("name").await?;
    ///     Ok(format!("Hello, {name}!"))
    /// }
    ///
    /// let diagram = greet.diagram();
    /// assert!(diagram.starts_with("stateDiagram-v2\n"));
    /// assert!(diagram.contains("    AfterElicitName : elicit String\n"));
    /// assert!(diagram.contains("    AfterElicitName : key \"name\"\n"));
    /// assert!(diagram.contains("    AfterElicitName --> Failed : ?\n"));
    /// ```
    fn diagram(&self) -> String {
        crate::engine::contract::diagram::minimal_diagram(&self.tool().name, self.state_names())
    }

    /// Whether the tool may run as a task (MCP tasks extension); `#[saga_tool(task)]`
    /// says so. A server without a [`TaskStore`](crate::tasks::TaskStore) runs every tool
    /// as an ordinary call.
    fn task_support(&self) -> TaskSupport {
        TaskSupport::Forbidden
    }

    /// `state` as JSON, for [`SagaServer::inspect`](crate::serve::SagaServer::inspect) and
    /// the examples' `--inspect`: serde's own rendering unless the tool knows better.
    /// `#[saga_tool]` overrides it to show the suspension's variant and its saved locals
    /// with their own types, which exist only inside the generated `step`. Only the
    /// runtime calls it.
    #[doc(hidden)]
    fn state_json(&self, state: Self::State) -> Result<serde_json::Value, String> {
        serde_json::to_value(&state).map_err(|error| error.to_string())
    }
}

/// A saga served as a prompt (`prompts/get`), registered with `.prompt(..)`.
/// `#[saga_prompt]` implements it, after checking that the function returns a
/// [`Prompt`](crate::engine::Prompt) (or `Result<Prompt, E>`); a hand-written [`SagaTool`] whose
/// output is a `Prompt` implements it with `impl SagaPrompt for MyPrompt {}`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prompt",
    label = "registered as a prompt here",
    note = "write the function with #[saga_prompt] (it returns `Result<Prompt, E>`); a #[saga_tool] is registered with `.tool(..)`"
)]
pub trait SagaPrompt: SagaTool {}

/// A saga served as a resource (`resources/read`), registered with `.resource(uri, ..)`
/// or `.resource_template(template, ..)`. `#[saga_resource]` implements it, after
/// checking that the function returns [`Contents`](crate::engine::Contents) (or
/// `Result<Contents, E>`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource",
    label = "registered as a resource here",
    note = "write the function with #[saga_resource] (it returns `Result<Contents, E>`); a #[saga_tool] is registered with `.tool(..)`"
)]
pub trait SagaResource: SagaTool {}

/// The outcome of one transition.
#[derive(Debug)]
pub enum Step<S> {
    /// Ask the client for these, all in one round, and resume from `state`.
    Suspend {
        /// The state to seal.
        state: S,
        /// The requests of the round, in the order the answers will be read.
        requests: Vec<Request>,
    },
    /// Yield with only a `requestState`; the client retries at once.
    Checkpoint(S),
    /// The requests of the last round again, stated from the state they were made in:
    /// the tool's own verdict that an answer does not fit what was asked. The runtime
    /// sends them under the same keys, with the same state and expiry.
    AskAgain(Vec<Request>),
    /// The tool finished.
    Done(CallToolResult),
}

impl<S> Step<S> {
    /// Suspends on the given requests.
    pub fn suspend<R: Into<Request>>(state: S, requests: impl IntoIterator<Item = R>) -> Self {
        Step::Suspend {
            state,
            requests: requests.into_iter().map(Into::into).collect(),
        }
    }

    /// Suspends on requests the tool can state again, word for word, from `state` alone:
    /// the token then keeps only their keys and a digest, not their params, which makes
    /// it shorter and each round cheaper. `#[saga_tool]` does this for every suspension
    /// whose requests it can restate from the saved locals.
    ///
    /// In return the tool keeps two promises for `state`:
    ///
    /// - [`SagaTool::restate`] gives the whole round again, in the same order, built from
    ///   `state` as the first time, and does nothing else: the runtime calls it when a
    ///   request had no answer, and to show an inspected token's round.
    /// - When the tool is next stepped from `state`, a form's answer is checked as the
    ///   tool reads it (the token keeps no schema to check it against):
    ///   [`Answers::elicit`] gives [`SagaError::DoesNotFit`] for content outside `T`'s
    ///   form, and the tool asks again with [`Step::AskAgain`].
    ///   [`Answers::fits`] checks a round's forms before any is read.
    ///
    /// A URL elicitation is always kept whole (its id is drawn by the runtime), but is
    /// still stated again in its place in the round. [`Request::restatable`] makes the
    /// same promise for one request of a round.
    ///
    /// Switching an existing tool's suspension to this changes what its tokens hold:
    /// bump [`SagaTool::version`] with it, so that a server still on the old build
    /// refuses the new tokens during a rolling upgrade.
    ///
    /// ```
    /// use saga_runtime::prelude::*;
    /// # #[derive(serde::Serialize, serde::Deserialize)] enum State { Start, AfterName }
    /// fn ask_name() -> Request {
    ///     elicit::<String>("Your name?").into()
    /// }
    /// // In `SagaTool::step`:
    /// fn step(state: State, mut answers: Answers) -> Step<State> {
    ///     match state {
    ///         State::Start => Step::suspend_restatable(State::AfterName, [ask_name()]),
    ///         State::AfterName => match answers.elicit::<String>(0) {
    ///             Ok(name) => Step::done(format!("Hello, {name}!")),
    ///             Err(SagaError::DoesNotFit(_)) => Step::AskAgain(vec![ask_name()]),
    ///             Err(error) => Step::done(Err::<String, _>(error)),
    ///         },
    ///     }
    /// }
    /// // In `SagaTool::restate`:
    /// fn restate(state: State) -> Option<Vec<Request>> {
    ///     match state {
    ///         State::AfterName => Some(vec![ask_name()]),
    ///         State::Start => None,
    ///     }
    /// }
    /// # let _ = (step, restate);
    /// ```
    ///
    /// [`Answers::elicit`]: crate::engine::Answers::elicit
    /// [`Answers::fits`]: crate::engine::Answers::fits
    /// [`SagaError::DoesNotFit`]: crate::engine::SagaError::DoesNotFit
    pub fn suspend_restatable<R: Into<Request>>(
        state: S,
        requests: impl IntoIterator<Item = R>,
    ) -> Self {
        Step::Suspend {
            state,
            requests: requests
                .into_iter()
                .map(|request| request.into().restatable())
                .collect(),
        }
    }

    /// Yields with only a `requestState`.
    pub fn checkpoint(state: S) -> Self {
        Step::Checkpoint(state)
    }

    /// Finishes with the tool's output.
    pub fn done(output: impl ToolOutput) -> Self {
        Step::Done(output.into_call_tool_result())
    }
}

/// The `tools/list` entry a `#[saga_tool]` starts from: its name and its arguments'
/// schema, without the schema's `title` (the argument struct's generated name). The
/// expansion adds the rest. Not generic, so that it is compiled once for every tool.
#[doc(hidden)]
pub fn described(name: &'static str, arguments: std::sync::Arc<JsonObject>) -> Tool {
    let mut schema = (*arguments).clone();
    schema.remove("title");
    let mut tool = Tool::new(name, "", std::sync::Arc::new(schema));
    tool.description = None;
    tool
}

/// Reads a call's arguments into `A`; a mismatch is `-32602` with serde's reason, which
/// names the offending field.
///
/// ```
/// use saga_runtime::engine::parse_arguments;
/// #[derive(serde::Deserialize)]
/// struct Args { n: u32 }
/// let bad = serde_json::json!({"n": "three"});
/// let err = parse_arguments::<Args>(bad.as_object().unwrap().clone()).err().unwrap();
/// assert_eq!(err.code.0, -32602);
/// ```
pub fn parse_arguments<A: DeserializeOwned>(arguments: JsonObject) -> Result<A, ErrorData> {
    serde_path_to_error::deserialize(serde_json::Value::Object(arguments))
        .map_err(|error| invalid_arguments(crate::engine::caller::tool_use::at_path(&error)))
}

/// The `-32602` error for arguments that do not fit the tool's input schema.
pub fn invalid_arguments(reason: impl std::fmt::Display) -> ErrorData {
    ErrorData::invalid_params(format!("invalid arguments: {reason}"), None)
}

/// Whether a tool may run as a task: `#[saga_tool(task)]` is [`TaskSupport::Optional`],
/// `#[saga_tool(task = "required")]` [`TaskSupport::Required`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Always an ordinary call.
    #[default]
    Forbidden,
    /// A task for a client that declares the extension, an ordinary call otherwise (its
    /// checkpoints then run within the call).
    Optional,
    /// Only as a task: a client without the extension gets `-32021`.
    Required,
}

/// A tool's suspension points, built from the tool: here rather than beside [`Points`],
/// which sits below the contract.
impl Points {
    /// The points of `tool`, traced from its state's types: what a server computes once
    /// per tool when it is built, and the transition needs.
    pub fn of<T: SagaTool>(tool: &T) -> Result<Self, LayoutError> {
        Self::named(tool, &tool.tool().name)
    }

    /// [`Points::of`], for the tool registered as `name`.
    pub(crate) fn named<T: SagaTool>(tool: &T, name: &str) -> Result<Self, LayoutError> {
        Points::from_layout(
            name,
            tool.version(),
            tool.build_tag(),
            std::any::type_name::<T::State>(),
            tool.layout()?,
        )
    }
}
