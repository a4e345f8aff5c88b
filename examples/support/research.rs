//! `research`: an agent loop in straight-line code. The model (the client's LLM, or the
//! server's own) is offered three tools, `search` (a local function over a fixed corpus
//! of notes), `read_page` (a page of the project's log, about 20 KB: what real agents read
//! each turn) and `ask_user` (which becomes an `elicit`), and loops: each model turn is a
//! round, the conversation is a saved local, and the loop survives a restart or a deploy
//! between turns. With a state store (`SAGA_STATES`), a conversation too long for its
//! token is kept there by reference. Served by `examples/research.rs`.

use saga_runtime::prelude::*;

/// `search`'s input.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Search {
    /// Words to look for in the notes.
    pub query: String,
}

/// `read_page`'s input.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReadPage {
    /// Which page of the log, from 0.
    pub page: u32,
}

/// `ask_user`'s input.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct AskUser {
    /// The question for the person.
    pub question: String,
}

/// What the person answers to `ask_user`.
#[derive(Debug, Elicit, Serialize, Deserialize)]
pub struct Reply {
    /// Your answer.
    pub answer: String,
}

/// The most model turns one call takes: a model that never stops ends the call with an
/// error after these.
pub const MAX_TURNS: usize = 24;

/// Bytes of a page `read_page` returns.
pub const PAGE_BYTES: usize = 20 * 1024;

/// Page `page` of the project's request log: [`PAGE_BYTES`] bytes of lines as a server
/// writes them (a time, a request id, a path, a status, a duration), different on every
/// page. Deflated, such text keeps about a fifth of its bytes.
pub fn read_page(page: u32) -> String {
    let mut x = 0x2545_f491u32 ^ page.wrapping_mul(0x9e37_79b9);
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    const PATHS: [&str; 6] = [
        "/api/v1/items",
        "/api/v1/orders",
        "/api/v1/users",
        "/mcp",
        "/health",
        "/api/v1/search",
    ];
    let mut text = String::with_capacity(PAGE_BYTES + 120);
    let mut line = 0u32;
    while text.len() < PAGE_BYTES {
        let r = next();
        let status = [200, 200, 200, 201, 204, 404, 500][(r % 7) as usize];
        text.push_str(&format!(
            "2026-11-{:02} {:02}:{:02}:{:02} page={page} line={line} id={:08x} GET {}/{} status={status} ms={}\n",
            1 + page % 28,
            (line / 3600) % 24,
            (line / 60) % 60,
            line % 60,
            next(),
            PATHS[(r >> 8) as usize % PATHS.len()],
            (r >> 12) % 10_000,
            (r >> 20) % 900,
        ));
        line += 1;
    }
    text.truncate(PAGE_BYTES);
    text
}

/// The notes `search` looks in: (topic, text).
pub const NOTES: &[(&str, &str)] = &[
    (
        "saga",
        "saga compiles one async function into a state machine sealed into the client's token.",
    ),
    (
        "mrtr",
        "MCP 2026-07-28 answers input_required with the requests and an opaque requestState.",
    ),
    (
        "sampling",
        "A sample may offer tools; the model answers with tool uses or text.",
    ),
    (
        "tasks",
        "A task keeps its state in a store and survives the death of its worker.",
    ),
];

/// The notes whose topic or text holds a word of `query` (case-insensitive), one per
/// line; `no notes found` when none does.
pub fn search(query: &str) -> String {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.len() > 2)
        .map(str::to_lowercase)
        .collect();
    let found: Vec<String> = NOTES
        .iter()
        .filter(|(topic, text)| {
            let text = text.to_lowercase();
            words
                .iter()
                .any(|word| topic.contains(word.as_str()) || text.contains(word.as_str()))
        })
        .map(|(topic, text)| format!("{topic}: {text}"))
        .collect();
    if found.is_empty() {
        "no notes found".to_owned()
    } else {
        found.join("\n")
    }
}

/// Answers a question from the project's notes: the model searches them and asks the
/// person what it cannot find, then answers.
#[saga_tool]
pub async fn research(question: String) -> Result<String, SagaError> {
    answer_from_notes(question).await
}

/// The same loop as a durable task (MCP tasks extension): it begins at once, and a
/// worker's death between two turns loses nothing.
#[saga_tool(task = "required")]
pub async fn research_task(question: String) -> Result<String, SagaError> {
    checkpoint().await;
    answer_from_notes(question).await
}

/// The agent loop: each model turn is a round; the conversation is saved state.
#[saga_fn]
pub async fn answer_from_notes(question: String) -> Result<String, SagaError> {
    let tools = [
        SamplingTool::of::<Search>("search", "Search the project's notes"),
        SamplingTool::of::<ReadPage>("read_page", "Read a page of the project's log"),
        SamplingTool::of::<AskUser>("ask_user", "Ask the person a question"),
    ];
    let mut history = vec![SamplingMessage::user(question)];
    for _turn in 0..MAX_TURNS {
        let turn = sample_messages(history.clone())
            .system("Answer from the notes; search them first.")
            .tools(tools.clone())
            .max_tokens(400)
            .await?;
        if turn.tool_uses().is_empty() {
            return Ok(turn.text().to_owned());
        }
        let mut results = Vec::new();
        for call in turn.tool_uses() {
            let result = match call.name() {
                "search" => match call.input::<Search>() {
                    Ok(input) => call.result(search(&input.query)),
                    // The model reads why and may try again.
                    Err(misfit) => call.error(misfit.to_string()),
                },
                "read_page" => match call.input::<ReadPage>() {
                    Ok(input) => call.result(read_page(input.page)),
                    Err(misfit) => call.error(misfit.to_string()),
                },
                "ask_user" => match call.input::<AskUser>() {
                    Ok(input) => {
                        let reply: Reply = elicit(input.question).await?;
                        call.result(reply.answer)
                    }
                    Err(misfit) => call.error(misfit.to_string()),
                },
                other => call.error(format!("no tool named {other}")),
            };
            results.push(result);
        }
        history.extend(turn.continue_with(results));
    }
    Err(SagaError::Tool(format!(
        "the model did not answer within {MAX_TURNS} turns"
    )))
}

/// The server of this example, with the given keys; with `SAGA_MODEL_URL` set, a
/// server-side model answers the samples a client cannot ([`crate::cli::model`]); with a
/// task store (`SAGA_TASKS`, [`crate::cli::task_store`]), `research_task` runs it as a
/// task; with a state store (`states`, from `SAGA_STATES`), a conversation whose token
/// would pass 8 KiB is kept there.
pub fn server(
    keys: KeyRing,
    tasks: Option<TaskStore>,
    states: Option<TaskStore>,
) -> anyhow::Result<SagaServer> {
    let mut builder = SagaServer::builder()
        .info("research-server", env!("CARGO_PKG_VERSION"))
        .keys(keys)
        .tool(research)
        // For `saga graph URL research`.
        .diagrams_in_tool_list(true);
    if let Some(model) = crate::cli::model()? {
        builder = builder.model(model);
    }
    if let Some(store) = states {
        builder = builder.state_store(store);
    }
    if let Some(store) = tasks {
        builder = builder
            .tool(research_task)
            .task_settings(crate::cli::task_settings(store));
    }
    Ok(builder.build()?)
}
