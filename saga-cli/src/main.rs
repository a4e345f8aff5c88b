//! `saga`: try MCP tools by hand in a terminal, and look inside saga tokens.
//!
//! ```text
//! saga tools URL                         # the tools and their arguments
//! saga call URL TOOL key=value…          # drive a call to completion, asking you
//! saga call --stdio "CMD ARGS" TOOL …    # the same with a server started as a child
//! saga call --task URL TOOL …            # as a task: tasks/get, tasks/update, tasks/cancel
//! saga task get|watch|cancel URL TASK_ID  # re-attach to a task by its id
//! saga inspect TOKEN                     # a token's tool, version and point, and whether SAGA_KEYS opens it
//! saga graph URL TOOL                    # a tool's diagram (Mermaid); --example NAME TOOL from an example
//! ```

/// Prints a line that may hold a server's text, with every control character (C0, C1,
/// DEL) and bidirectional override escaped: a server's strings are untrusted, and a
/// terminal obeys the sequences it prints (clipboard writes, screen clears, links,
/// titles, cursor moves).
macro_rules! say {
    ($($arg:tt)*) => {
        println!("{}", $crate::terminal::clean_lines(&format!($($arg)*)))
    };
}

mod answers;
mod call;
mod deadline;
mod graph;
mod http;
mod inspect;
mod listing;
mod prompt;
mod schema;
mod target;
mod task;
mod terminal;
mod trace;

use target::Target;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

const CALL_HELP: &str = "\
Drives one tools/call to completion over MCP 2026-07-28 multi round-trip requests: each
round is printed; forms are asked field by field; URL elicitations are shown and
confirmed; sampling requests are shown and answered by the text you type (or, when a
request offers tools, by a call of one you choose, its input typed as JSON); roots come
from --root.

Keys in forms: Enter accepts the default, Esc cancels the form (action \"cancel\"),
answering \"n\" to \"Answer this form?\" declines it (action \"decline\"), Ctrl-C quits.

--answers FILE answers without asking, from a JSON object keyed by inputRequests key:
  {\"elicit-1\": {\"action\": \"accept\", \"content\": {\"target\": \"production\"}},
   \"sample-2\": \"Yes, all systems are green.\",
   \"other\": \"decline\"}
An elicitation takes an ElicitResult, \"accept\"/\"decline\"/\"cancel\", or a bare object
(the accepted content); a sampling request takes the model's text, or a tool call
{\"tool_use\": {\"name\": \"search\", \"input\": {…}}} when it offers tools; roots need no
entry.

With --answers, a request the server asks again (the same key in the next round, or in a
task's next input_required) means it did not accept the file's answer: saga stops there,
prints the server's message for it (a saga server appends why), and exits 2.

With --session (a 2025-11-25 session) the server's requests have no keys: the answers
file keys them elicitation-N, sampling-N, roots-N, where N counts every request of the
call so far, whatever its kind, from 1 (so an elicitation then a sampling request are
elicitation-1 and sampling-2). A request the file already answered, asked again, or one
with no entry, stops saga as above.

--task declares the MCP tasks extension (io.modelcontextprotocol/tasks): a task tool's
call becomes a task at its first checkpoint; saga polls tasks/get at the server's
pollIntervalMs, shows each status, answers an input_required task's requests with
tasks/update (prompts or --answers, keyed by the task's inputRequests keys), and prints
the completed task's result. Ctrl-C sends tasks/cancel (so does saga giving up on the
task: an --answers answer asked again); any other error leaves the task running and says
how to follow it again. While the server cannot be reached (a restart), saga keeps
polling for up to 120 s. `saga task get|watch|cancel URL TASK_ID` re-attaches to a task
by its id. A server that does not offer the extension (in the era used; --session for
2025-11-25) is refused.

SAGA_REQUEST_TIMEOUT=SECONDS (default 120) bounds how long saga waits for any one answer
of the server's: connecting, each tools/list page, each round over MRTR, each tasks/get
and tasks/update. A call in a --session waits for its answer as long as you take to
answer its questions.

Exit status: 0 on a result, 1 on a result with isError, 2 on any error (a failed or
cancelled task included), 130 on Ctrl-C with --task (after tasks/cancel).";

/// A terminal client for MCP tools (2026-07-28 multi round-trip requests) and a saga
/// token inspector.
#[derive(Debug, Parser)]
#[command(name = "saga", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Lists a server's tools: title, arguments (name, type, required, description),
    /// output schema and task support (`execution.taskSupport`).
    Tools {
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Calls a tool and drives it to completion, asking you (or --answers) for input.
    #[command(
        after_long_help = CALL_HELP,
        override_usage = "saga call [OPTIONS] URL TOOL [KEY=VALUE]...\n       saga call [OPTIONS] --stdio CMD TOOL [KEY=VALUE]..."
    )]
    Call {
        #[command(flatten)]
        server: ServerArgs,
        /// Answers from a JSON file instead of prompts (see --help).
        #[arg(long, value_name = "FILE")]
        answers: Option<PathBuf>,
        /// A root to offer for roots/list (a path or a URI); repeatable. Default: the
        /// current directory.
        #[arg(long = "root", value_name = "PATH|URI")]
        roots: Vec<String>,
        /// Print each round's requestState whole (for `saga inspect`), not shortened.
        #[arg(long)]
        show_state: bool,
        /// Do not declare this client capability (repeatable), to see how the server
        /// copes: a request needing it should fail with -32021.
        #[arg(long, value_enum, value_name = "CAPABILITY")]
        without: Vec<call::Capability>,
        /// Open a 2025-11-25 session (`initialize`) instead of `server/discover`: the
        /// server sends its requests during the call; --answers keys them
        /// `elicitation-N`, `sampling-N`, `roots-N`, N one counter across kinds, from 1.
        #[arg(long)]
        session: bool,
        /// Declare the MCP tasks extension and follow the task the call becomes: poll
        /// tasks/get, answer input_required with tasks/update; Ctrl-C sends tasks/cancel.
        #[arg(long)]
        task: bool,
        /// The tool, then its arguments as `key=value`. A value is JSON when it parses as
        /// JSON, else a string; a property the tool types as string stays a string.
        #[arg(value_name = "TOOL KEY=VALUE")]
        rest: Vec<String>,
    },
    /// Re-attaches to a task by its id (MCP tasks extension): `get` shows its status (and
    /// its result once it has one), `watch` follows it to its end as `call --task` does
    /// (Ctrl-C stops watching and leaves it running), `cancel` sends tasks/cancel.
    #[command(override_usage = "saga task get|watch|cancel [OPTIONS] URL TASK_ID")]
    Task {
        /// What to do: get, watch or cancel.
        #[arg(value_enum)]
        action: task::Action,
        #[command(flatten)]
        server: TaskServerArgs,
        /// Answers from a JSON file instead of prompts, for `watch` (as `call --answers`).
        #[arg(long, value_name = "FILE")]
        answers: Option<PathBuf>,
        /// `URL TASK_ID`, or `TASK_ID` with --stdio: the task's id as `call --task`
        /// printed it.
        #[arg(value_name = "URL TASK_ID", required = true, num_args = 1..=2)]
        rest: Vec<String>,
    },
    /// Prints a tool's diagram (Mermaid stateDiagram-v2 text): from a server's tools/list,
    /// or with --example NAME from `cargo run --example NAME -- --graph TOOL`.
    Graph {
        /// Ask this example of the current Cargo project instead of a server: it runs
        /// `cargo run --example NAME -- --graph TOOL`, which works where the example prints
        /// the tool's `SagaTool::diagram()` for `--graph TOOL`, as saga's own examples do;
        /// for any other server, run it and use `saga graph URL TOOL`.
        #[arg(long, value_name = "NAME")]
        example: Option<String>,
        /// With --example: the workspace member whose example it is (`cargo run -p PKG`),
        /// where the default members do not have it.
        #[arg(long, short = 'p', value_name = "PKG", requires = "example")]
        package: Option<String>,
        /// Write the diagram (Mermaid text) to FILE instead of printing it.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Not drawn by saga: no Rust renderer draws Mermaid state diagrams faithfully.
        /// Refused with the two commands that draw it (--out FILE.mmd, then mermaid-cli).
        #[arg(long, value_name = "FILE", hide = true)]
        svg: Option<PathBuf>,
        /// A bearer token, as for `saga call`. Default: $SAGA_TOKEN.
        #[arg(long, value_name = "TOKEN")]
        token: Option<String>,
        /// A header sent with every HTTP request, `NAME:VALUE`; repeatable.
        #[arg(long = "header", short = 'H', value_name = "NAME:VALUE")]
        headers: Vec<String>,
        /// `URL TOOL`, or `TOOL` with --example.
        #[arg(value_name = "[URL] TOOL", required = true, num_args = 1..=2)]
        rest: Vec<String>,
    },
    /// Shows a saga token's header and whether the keys in SAGA_KEYS open it.
    Inspect {
        /// The token (a requestState).
        token: String,
        /// The layout file that names the token's tool and point (default: saga.layout in
        /// the current directory, when there is one).
        #[arg(long, value_name = "FILE")]
        layout: Option<PathBuf>,
    },
}

/// Where the server is: a URL, or a command to start with `--stdio`.
#[derive(Debug, Args)]
struct ServerArgs {
    /// Start this command (split like a shell would) and talk MCP on its stdin/stdout.
    #[arg(long, value_name = "CMD ARGS")]
    stdio: Option<String>,
    /// The Streamable HTTP endpoint, e.g. http://127.0.0.1:8080/mcp (not with --stdio).
    #[arg(value_name = "URL")]
    url: Option<String>,
    /// A bearer token for a server that authorizes (OAuth): sent as `Authorization:
    /// Bearer TOKEN` with every HTTP request. Default: $SAGA_TOKEN.
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    /// A header sent with every HTTP request, `NAME:VALUE` (an API key: `--header
    /// 'X-Api-Key: k-123'`); repeatable.
    #[arg(long = "header", short = 'H', value_name = "NAME:VALUE")]
    headers: Vec<String>,
}

/// Where the server of `saga task` is: as [`ServerArgs`], its URL required unless
/// `--stdio` is given (the task's id follows it).
#[derive(Debug, Args)]
struct TaskServerArgs {
    /// Start this command (split like a shell would) and talk MCP on its stdin/stdout.
    #[arg(long, value_name = "CMD ARGS")]
    stdio: Option<String>,
    /// A bearer token, as for `saga call`. Default: $SAGA_TOKEN.
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    /// A header sent with every HTTP request, `NAME:VALUE`; repeatable.
    #[arg(long = "header", short = 'H', value_name = "NAME:VALUE")]
    headers: Vec<String>,
}

impl TaskServerArgs {
    /// The server and the task's id of `saga task`'s words: `URL TASK_ID`, or `TASK_ID`
    /// with --stdio.
    fn target_and_id(&self, rest: &[String]) -> anyhow::Result<(Target, String)> {
        match (&self.stdio, rest) {
            (Some(command), [id]) => Ok((stdio_target(command)?, id.clone())),
            (Some(_), _) => anyhow::bail!("with --stdio, give the task's id alone"),
            (None, [url, id]) => Ok((Target::Http(url.clone()), id.clone())),
            (None, _) => anyhow::bail!("give the server's URL, then the task's id"),
        }
    }
}

/// The target, tool and arguments of `saga call`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CallLine {
    target: Target,
    tool: String,
    pairs: Vec<String>,
}

fn stdio_target(command: &str) -> anyhow::Result<Target> {
    let words =
        shell_words::split(command).map_err(|e| anyhow::anyhow!("--stdio {command:?}: {e}"))?;
    if words.is_empty() {
        anyhow::bail!("--stdio needs a command");
    }
    Ok(Target::Stdio(words))
}

fn target(server: &ServerArgs) -> anyhow::Result<Target> {
    match (&server.stdio, &server.url) {
        (Some(_), Some(url)) => anyhow::bail!("give either a URL ({url}) or --stdio, not both"),
        (Some(command), None) => stdio_target(command),
        (None, Some(url)) => Ok(Target::Http(url.clone())),
        (None, None) => anyhow::bail!("give a URL or --stdio \"CMD ARGS\""),
    }
}

/// `saga call`'s words: with --stdio `TOOL k=v…`, else `URL TOOL k=v…`.
fn call_line(server: &ServerArgs, rest: &[String]) -> anyhow::Result<CallLine> {
    let mut words: Vec<String> = server
        .url
        .iter()
        .cloned()
        .chain(rest.iter().cloned())
        .collect();
    let target = match &server.stdio {
        Some(command) => stdio_target(command)?,
        None => {
            if words.is_empty() {
                anyhow::bail!("give a URL or --stdio \"CMD ARGS\"");
            }
            Target::Http(words.remove(0))
        }
    };
    if words.is_empty() {
        anyhow::bail!("give the tool to call");
    }
    let tool = words.remove(0);
    if tool.contains('=') {
        anyhow::bail!("{tool:?} looks like an argument; the tool's name comes first");
    }
    Ok(CallLine {
        target,
        tool,
        pairs: words,
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return fail(&anyhow::anyhow!("cannot start the runtime: {error}")),
    };
    let outcome = runtime.block_on(run(cli));
    // Do not wait for a child server or a pending request to wind down.
    runtime.shutdown_background();
    match outcome {
        Ok(code) => code,
        Err(error) => fail(&error),
    }
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Command::Tools { server } | Command::Call { server, .. } => {
            credentials(server.token.as_deref(), &server.headers)?;
        }
        Command::Task { server, .. } => credentials(server.token.as_deref(), &server.headers)?,
        Command::Graph { token, headers, .. } => credentials(token.as_deref(), headers)?,
        Command::Inspect { .. } => {}
    }
    match cli.command {
        Command::Tools { server } => {
            call::list_tools(&target(&server)?).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Call {
            server,
            answers,
            roots,
            show_state,
            without,
            session,
            task,
            rest,
        } => {
            let line = call_line(&server, &rest)?;
            let answers = read_answers(answers)?;
            let roots = call::roots(&roots)?;
            let outcome = call::call(
                &line.target,
                &line.tool,
                &line.pairs,
                call::Responder::new(answers, roots)
                    .without(without)
                    .session(session)
                    .tasks(task),
                show_state,
            )
            .await?;
            Ok(match outcome {
                call::Outcome::Done(false) => ExitCode::SUCCESS,
                call::Outcome::Done(true) => ExitCode::from(1),
                call::Outcome::Interrupted => ExitCode::from(130),
            })
        }
        Command::Task {
            action,
            server,
            answers,
            rest,
        } => {
            let (target, id) = server.target_and_id(&rest)?;
            let answers = read_answers(answers)?;
            let responder = call::Responder::new(answers, call::roots(&[])?).tasks(true);
            let outcome = task::attach(&target, responder, action, &id).await?;
            Ok(match outcome {
                call::Outcome::Done(false) => ExitCode::SUCCESS,
                call::Outcome::Done(true) => ExitCode::from(1),
                call::Outcome::Interrupted => ExitCode::from(130),
            })
        }
        Command::Graph {
            example,
            package,
            out,
            svg,
            rest,
            ..
        } => {
            if let Some(svg) = svg {
                anyhow::bail!("{}", graph::no_svg(&svg, &rest));
            }
            let (source, tool) = graph::source(example, package, &rest)?;
            graph::graph(&source, &tool, out.as_deref()).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Inspect { token, layout } => {
            inspect::inspect(&token, layout.as_deref())?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Sets what every HTTP request of this run carries: the bearer token (`--token`, else
/// `$SAGA_TOKEN`) and the `--header`s.
fn credentials(token: Option<&str>, headers: &[String]) -> anyhow::Result<()> {
    let token = token
        .map(str::to_owned)
        .or_else(|| std::env::var("SAGA_TOKEN").ok())
        .filter(|token| !token.is_empty());
    target::set_token(token);
    target::set_headers(headers)
}

/// The answers of an `--answers` file, if one is given.
fn read_answers(path: Option<PathBuf>) -> anyhow::Result<Option<answers::Answers>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let text =
        std::fs::read_to_string(&path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    answers::Answers::parse(&text)
        .map(Some)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// One line on stderr, exit status 2.
fn fail(error: &anyhow::Error) -> ExitCode {
    let line = format!("{error:#}").replace(['\n', '\r'], " ");
    eprintln!("saga: error: {}", terminal::clean(&line));
    ExitCode::from(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_usage_names_the_url_once_and_the_tool() {
        use clap::CommandFactory as _;
        let mut cli = Cli::command();
        let usage = cli
            .find_subcommand_mut("call")
            .expect("the call subcommand")
            .render_usage()
            .to_string();
        assert!(
            usage.contains("saga call [OPTIONS] URL TOOL [KEY=VALUE]..."),
            "{usage}"
        );
        assert!(
            usage.contains("saga call [OPTIONS] --stdio CMD TOOL [KEY=VALUE]..."),
            "{usage}"
        );
        assert!(!usage.contains("[[URL]"), "{usage}");
    }

    fn parse(words: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("saga").chain(words.iter().copied()))
    }

    fn line(words: &[&str]) -> anyhow::Result<CallLine> {
        match parse(words)?.command {
            Command::Call { server, rest, .. } => call_line(&server, &rest),
            other => anyhow::bail!("not a call: {other:?}"),
        }
    }

    #[test]
    fn parses_a_call_over_http() {
        let call = line(&[
            "call",
            "http://h/mcp",
            "complex_tool",
            "initial_arg=x",
            "n=2",
        ])
        .unwrap();
        assert_eq!(call.target, Target::Http("http://h/mcp".into()));
        assert_eq!(call.tool, "complex_tool");
        assert_eq!(call.pairs, vec!["initial_arg=x", "n=2"]);
    }

    #[test]
    fn parses_a_call_over_stdio() {
        let call = line(&[
            "call",
            "--stdio",
            "cargo run --example 'de ploy'",
            "t",
            "a=1",
        ])
        .unwrap();
        assert_eq!(
            call.target,
            Target::Stdio(vec![
                "cargo".into(),
                "run".into(),
                "--example".into(),
                "de ploy".into()
            ])
        );
        assert_eq!(call.tool, "t");
        assert_eq!(call.pairs, vec!["a=1"]);
    }

    #[test]
    fn refuses_incomplete_calls() {
        assert!(line(&["call", "http://h/mcp"]).is_err(), "no tool");
        assert!(
            line(&["call", "--stdio", "srv", "a=1"]).is_err(),
            "argument as tool"
        );
        assert!(
            line(&["call", "--stdio", "", "t"]).is_err(),
            "empty command"
        );
        assert!(line(&["call"]).is_err());
    }

    #[test]
    fn parses_call_options() {
        let cli = parse(&[
            "call",
            "--answers",
            "a.json",
            "--root",
            "/w",
            "--root",
            "file:///x",
            "http://h",
            "t",
        ])
        .unwrap();
        match cli.command {
            Command::Call { answers, roots, .. } => {
                assert_eq!(answers, Some(PathBuf::from("a.json")));
                assert_eq!(roots, vec!["/w", "file:///x"]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tools_takes_a_url_or_stdio() {
        for words in [
            &["tools", "http://h/mcp"][..],
            &["tools", "--stdio", "srv --stdio"],
        ] {
            match parse(words).unwrap().command {
                Command::Tools { server } => assert!(target(&server).is_ok()),
                other => panic!("{other:?}"),
            }
        }
        match parse(&["tools"]).unwrap().command {
            Command::Tools { server } => assert!(target(&server).is_err()),
            other => panic!("{other:?}"),
        }
    }
}
