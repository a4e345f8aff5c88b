//! `saga tools`: every tool a server lists, paged and bounded, described one by one.

#![allow(deprecated)] // sampling and roots: deprecated in 2026-07-28, still served

use rmcp::model::Tool;
use serde_json::{Map, Value};

use super::respond::Responder;
use super::session::{connect, request_error};
use crate::schema::describe_type;
use crate::target::Target;
use crate::terminal::one_line;

/// The most `tools/list` pages followed: a server that always answers with a next cursor
/// would otherwise be followed forever.
const MAX_TOOL_PAGES: usize = 100;
/// The most tools, and bytes of them, kept from a server's list.
const MAX_TOOLS: usize = 10_000;
const MAX_TOOL_BYTES: usize = 16 * 1024 * 1024;

/// Every tool of the server, following `nextCursor` within the bounds above.
pub(super) async fn all_tools(
    peer: &rmcp::service::Peer<rmcp::RoleClient>,
) -> anyhow::Result<Vec<rmcp::model::Tool>> {
    let mut tools = Vec::new();
    let mut bytes = 0usize;
    let mut cursor = None;
    for _ in 0..MAX_TOOL_PAGES {
        let page = crate::deadline::answer(
            "tools/list",
            peer.list_tools(Some(
                rmcp::model::PaginatedRequestParams::default().with_cursor(cursor),
            )),
        )
        .await?
        .map_err(|e| request_error("tools/list", e))?;
        bytes += serde_json::to_vec(&page.tools).map_or(0, |text| text.len());
        tools.extend(page.tools);
        if tools.len() > MAX_TOOLS || bytes > MAX_TOOL_BYTES {
            anyhow::bail!(
                "the server's tool list is over {MAX_TOOLS} tools or {} MiB; stopped reading it",
                MAX_TOOL_BYTES / (1024 * 1024)
            );
        }
        cursor = page.next_cursor;
        if cursor.is_none() {
            return Ok(tools);
        }
    }
    anyhow::bail!(
        "the server's tool list went on past {MAX_TOOL_PAGES} pages (a nextCursor every time); \
         stopped reading it"
    )
}

/// `saga tools`: prints every tool and its arguments.
pub async fn list_tools(target: &Target) -> anyhow::Result<()> {
    let connection = connect(
        target,
        std::sync::Arc::new(Responder::new(None, Vec::new())),
    )
    .await?;
    let tools = all_tools(&connection.client).await?;
    for (i, tool) in tools.iter().enumerate() {
        if i > 0 {
            println!();
        }
        let support = connection.seen.task_support(&tool.name);
        print!(
            "{}",
            crate::terminal::clean_lines(&describe_tool(tool, support.as_deref()))
        );
    }
    if tools.is_empty() {
        say!("(no tools)");
    }
    let _ = connection.client.cancel().await;
    Ok(())
}

/// A tool's name, description, title, a table of its arguments, its output schema and
/// whether it runs as a task (`task_support`: its `execution.taskSupport`, if declared).
pub(super) fn describe_tool(tool: &Tool, task_support: Option<&str>) -> String {
    let mut out = String::new();
    out.push_str(&one_line(&tool.name));
    if let Some(description) = &tool.description {
        // A description may run over lines; they go deeper than the tool's own fields.
        out.push_str(&format!(
            " — {}",
            description.trim().replace('\n', "\n    ")
        ));
    }
    out.push('\n');
    let title = tool
        .title
        .as_deref()
        .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.as_deref()));
    if let Some(title) = title {
        out.push_str(&format!("  title: {}\n", one_line(title.trim())));
    }
    let schema: &Map<String, Value> = &tool.input_schema;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = schema.get("properties").and_then(Value::as_object);
    let rows: Vec<(String, String, &str, String)> = properties
        .into_iter()
        .flatten()
        .map(|(name, property)| {
            (
                one_line(name),
                one_line(&describe_type(property)),
                if required.contains(&name.as_str()) {
                    "required"
                } else {
                    "optional"
                },
                one_line(
                    property
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                ),
            )
        })
        .collect();
    if rows.is_empty() {
        out.push_str("  (no arguments)\n");
    }
    let name_width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let type_width = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    for (name, ty, required, description) in rows {
        out.push_str(
            format!("  {name:name_width$}  {ty:type_width$}  {required:8}  {description}")
                .trim_end(),
        );
        out.push('\n');
    }
    if let Some(output) = &tool.output_schema {
        out.push_str(&format!(
            "  output: {}\n",
            one_line(&describe_output(output))
        ));
    }
    // Absent, the extension's default is "forbidden"; but servers that run tasks do not
    // all say so per tool (saga's own do not send `execution` yet), so absent is shown
    // as absent.
    out.push_str(&format!(
        "  task support: {}\n",
        one_line(task_support.unwrap_or("not declared"))
    ));
    out
}

/// The most characters of an output schema shown by `saga tools`.
pub(super) const MAX_OUTPUT_CHARS: usize = 160;

/// An output schema on one line: an object as `{name: type, name?: type}` (`?` for an
/// optional property), anything else as its type; cut at [`MAX_OUTPUT_CHARS`].
pub(super) fn describe_output(schema: &Map<String, Value>) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let text = match schema.get("properties").and_then(Value::as_object) {
        Some(properties) => {
            let fields: Vec<String> = properties
                .iter()
                .map(|(name, property)| {
                    let optional = if required.contains(&name.as_str()) {
                        ""
                    } else {
                        "?"
                    };
                    format!("{name}{optional}: {}", describe_type(property))
                })
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        None => describe_type(&Value::Object(schema.clone())),
    };
    if text.chars().count() > MAX_OUTPUT_CHARS {
        let cut: String = text.chars().take(MAX_OUTPUT_CHARS).collect();
        format!("{cut}…")
    } else {
        text
    }
}
