//! `saga graph`: prints a tool's diagram (Mermaid `stateDiagram-v2` text, see
//! `SagaTool::diagram`), read from the tool's `_meta` in a server's `tools/list`
//! (`saga/diagram`), or from an example of the current Cargo project
//! (`cargo run --quiet --example NAME -- --graph TOOL`).
//!
//! `--out FILE` writes the text to `FILE`. `--svg FILE` is refused, with the commands that
//! draw one: no Rust renderer of Mermaid state diagrams was found faithful enough (the
//! ones on crates.io drop the quotes of messages, overlap labels, or need a newer Rust
//! than saga), and writing anything but an SVG to a file named by `--svg` surprised users.

use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use rmcp::model::{PaginatedRequestParams, ProtocolVersion, Tool};
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use saga_wire::DIAGRAM_META_KEY;

/// The most `tools/list` pages followed (a server that always gives a next cursor).
const MAX_PAGES: usize = 100;
/// The most bytes of tools read from a server.
const MAX_BYTES: usize = 16 * 1024 * 1024;
/// The most characters of a diagram printed.
const MAX_DIAGRAM_CHARS: usize = 1024 * 1024;
/// How long a server has to connect and list its tools.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Where the diagram comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A server's `tools/list`, at this Streamable HTTP URL.
    Url(String),
    /// `cargo run --example NAME -- --graph TOOL` in the current directory, with
    /// `-p PACKAGE` when one is named (an example of a member other than the default ones).
    Example(String, Option<String>),
}

/// The source and the tool of `saga graph [--example NAME] [URL] TOOL`.
pub fn source(
    example: Option<String>,
    package: Option<String>,
    words: &[String],
) -> anyhow::Result<(Source, String)> {
    match (example, words) {
        (Some(name), [tool]) => Ok((Source::Example(name, package), tool.clone())),
        (Some(_), _) => anyhow::bail!(
            "with --example NAME, give the tool alone: saga graph --example NAME TOOL"
        ),
        (None, [url, tool]) => Ok((Source::Url(url.clone()), tool.clone())),
        (None, _) => {
            anyhow::bail!("give a URL and a tool (saga graph URL TOOL), or --example NAME TOOL")
        }
    }
}

/// `saga graph`: prints the diagram of `tool`, or writes it to `out`.
pub async fn graph(source: &Source, tool: &str, out: Option<&Path>) -> anyhow::Result<()> {
    let diagram = match source {
        Source::Url(url) => {
            let text = tokio::time::timeout(TIMEOUT, from_server(url, tool))
                .await
                .map_err(|_| {
                    anyhow::anyhow!("{url} did not list its tools within {TIMEOUT:?}")
                })??;
            // A server's text: every control character escaped before it reaches the
            // terminal or a file.
            crate::terminal::clean_lines(&text)
        }
        Source::Example(name, package) => {
            crate::terminal::clean_lines(&from_example(name, package.as_deref(), tool)?)
        }
    };
    match out {
        None => print!("{diagram}"),
        Some(file) => {
            std::fs::write(file, &diagram)
                .with_context(|| format!("cannot write {}", file.display()))?;
            eprintln!("saga: the diagram is in {} (Mermaid text)", file.display());
        }
    }
    Ok(())
}

/// Why `--svg FILE` is refused, and the two commands that draw `FILE` (`rest`: the
/// command's other words, repeated in the first).
pub fn no_svg(svg: &Path, rest: &[String]) -> String {
    let mmd = svg.with_extension("mmd");
    format!(
        "saga does not draw SVG: no Rust renderer draws Mermaid state diagrams faithfully; \
         write the text with `saga graph --out {} {}` and draw it with Mermaid's own CLI, \
         `npx @mermaid-js/mermaid-cli -i {} -o {}`",
        mmd.display(),
        rest.join(" "),
        mmd.display(),
        svg.display()
    )
}

/// The diagram in the `_meta` of the server's tool `name`.
async fn from_server(url: &str, name: &str) -> anyhow::Result<String> {
    let lifecycle = ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    };
    let transport = crate::listing::http_transport(url, crate::listing::Seen::default())?;
    let client = match ().serve_with_lifecycle(transport, lifecycle).await {
        Ok(client) => client,
        Err(error) => return Err(crate::call::cannot_connect(url, error).await),
    };
    let found = find_tool(&client, name).await;
    let _ = client.cancel().await;
    let tool = found?;
    let Some(diagram) = diagram_of(&tool) else {
        anyhow::bail!(
            "the tool {name:?} has no diagram: its tools/list entry has no _meta \
             {DIAGRAM_META_KEY:?} (a saga server lists its #[saga_tool] diagrams only when \
             built with `.diagrams_in_tool_list(true)`; `saga graph --example NAME TOOL` reads \
             one from an example instead)"
        );
    };
    if diagram.chars().count() > MAX_DIAGRAM_CHARS {
        anyhow::bail!("the diagram of {name:?} is over {MAX_DIAGRAM_CHARS} characters");
    }
    Ok(diagram.to_owned())
}

/// The tool `name` of the server's list, following `nextCursor` within bounds.
async fn find_tool(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    name: &str,
) -> anyhow::Result<Tool> {
    let mut cursor = None;
    let mut bytes = 0usize;
    let mut names: Vec<String> = Vec::new();
    for _ in 0..MAX_PAGES {
        let page = crate::deadline::answer(
            "tools/list",
            client.list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor))),
        )
        .await?
        .map_err(|e| anyhow::anyhow!("tools/list: {e}"))?;
        bytes += serde_json::to_vec(&page.tools).map_or(0, |text| text.len());
        if bytes > MAX_BYTES {
            anyhow::bail!(
                "the server's tool list is over {} MiB",
                MAX_BYTES / (1024 * 1024)
            );
        }
        for tool in page.tools {
            if tool.name == name {
                return Ok(tool);
            }
            if names.len() < 50 {
                names.push(tool.name.to_string());
            }
        }
        cursor = page.next_cursor;
        if cursor.is_none() {
            anyhow::bail!(
                "the server has no tool {name:?}; its tools: {}",
                if names.is_empty() {
                    "(none)".to_owned()
                } else {
                    names.join(", ")
                }
            );
        }
    }
    anyhow::bail!("the server's tool list went on past {MAX_PAGES} pages")
}

/// The diagram a tool's `tools/list` entry carries under [`DIAGRAM_META_KEY`], if any
/// (the runtime's `engine::diagram_of`, which the CLI does not build).
fn diagram_of(tool: &Tool) -> Option<&str> {
    tool.meta.as_ref()?.0.get(DIAGRAM_META_KEY)?.as_str()
}

/// The diagram the example `name` prints with `--graph TOOL`.
fn from_example(name: &str, package: Option<&str>, tool: &str) -> anyhow::Result<String> {
    for (what, word) in [
        ("example", name),
        ("tool", tool),
        ("package", package.unwrap_or("p")),
    ] {
        if word.is_empty() || word.starts_with('-') {
            anyhow::bail!("{word:?} is not the name of a {what}");
        }
    }
    let mut cargo = std::process::Command::new(std::env::var_os("CARGO").unwrap_or("cargo".into()));
    cargo.args(["run", "--quiet"]);
    if let Some(package) = package {
        cargo.args(["-p", package]);
    }
    let command = match package {
        Some(package) => format!("cargo run -p {package} --example {name} -- --graph {tool}"),
        None => format!("cargo run --example {name} -- --graph {tool}"),
    };
    let output = cargo
        .args(["--example", name, "--", "--graph", tool])
        .env("RUST_BACKTRACE", "0")
        .env("RUST_LIB_BACKTRACE", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .context("cannot run cargo")?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        anyhow::bail!(
            "`{command}` failed ({}): {}",
            output.status,
            failure(&stderr)
        );
    }
    let text = String::from_utf8(output.stdout)
        .map_err(|_| anyhow::anyhow!("the example printed a diagram that is not UTF-8"))?;
    if !text.starts_with("stateDiagram-v2") {
        anyhow::bail!(
            "`{command}` printed no diagram (does the \
             example serve through saga's example CLI, which reads --graph?)"
        );
    }
    Ok(text)
}

/// What a failed `cargo run` says: its first error line (cargo's, or the example's
/// `Error: …`), else its last lines.
fn failure(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().map(str::trim).collect();
    if let Some(line) = lines
        .iter()
        .find(|line| line.starts_with("error:") || line.starts_with("Error:"))
    {
        return (*line).to_owned();
    }
    let start = lines.len().saturating_sub(3);
    lines[start..].join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_is_refused_with_the_commands_that_draw_it() {
        let words = ["http://h/mcp".to_owned(), "complex_tool".to_owned()];
        let text = no_svg(Path::new("out/deploy.svg"), &words);
        assert!(
            text.contains("saga graph --out out/deploy.mmd http://h/mcp complex_tool"),
            "{text}"
        );
        assert!(
            text.contains("npx @mermaid-js/mermaid-cli -i out/deploy.mmd -o out/deploy.svg"),
            "{text}"
        );
    }

    #[test]
    fn reads_its_words() {
        let words = |list: &[&str]| list.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            source(None, None, &words(&["http://h/mcp", "complex_tool"])).unwrap(),
            (Source::Url("http://h/mcp".into()), "complex_tool".into())
        );
        assert_eq!(
            source(Some("deploy".into()), None, &words(&["complex_tool"])).unwrap(),
            (
                Source::Example("deploy".into(), None),
                "complex_tool".into()
            )
        );
        assert!(source(None, None, &words(&["complex_tool"])).is_err());
        assert!(source(Some("deploy".into()), None, &words(&["http://h", "t"])).is_err());
        assert_eq!(
            source(
                Some("deploy".into()),
                Some("examples".into()),
                &words(&["t"])
            )
            .unwrap(),
            (
                Source::Example("deploy".into(), Some("examples".into())),
                "t".into()
            )
        );
    }

    #[test]
    fn names_what_failed() {
        assert_eq!(
            failure("warning: x\nError: no tool \"nope\" here\n\nStack backtrace:\n  0: a\n"),
            "Error: no tool \"nope\" here"
        );
        assert_eq!(failure("a\nb\nc\nd\n"), "b / c / d");
    }

    #[test]
    fn refuses_flags_as_names() {
        assert!(from_example("--release", None, "t").is_err());
        assert!(from_example("deploy", None, "-x").is_err());
        assert!(from_example("", None, "t").is_err());
        assert!(from_example("deploy", Some("--offline"), "t").is_err());
    }
}
