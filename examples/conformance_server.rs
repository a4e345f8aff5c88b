//! The server the MCP conformance suite (`@modelcontextprotocol/conformance`) tests, at
//! protocol 2026-07-28 and in 2025-11-25 sessions: every tool, prompt and resource their
//! server scenarios call, each written as a saga. The same tools serve both eras;
//! `scripts/conformance.sh` builds it, starts it and runs both requirement sets.
//!
//! ```text
//! cargo run -p saga-workspace --example conformance_server -- --http 127.0.0.1:0
//! ```

// Logging and sampling are deprecated by MCP 2026-07-28 (SEP-2577) but the 2025-11-25
// scenarios exercise them.
#![allow(deprecated)]

use std::time::Duration;

use saga_examples::with_schema::WithInputSchema;
use saga_runtime::prelude::*;
use saga_runtime::rmcp::model::{LoggingLevel, PromptMessage, ResourceContents, Role};
use serde_json::json;

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
/// One millisecond of 8 kHz 8-bit mono silence.
const WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

// ── the forms the tools ask for ──────────────────────────────────────────────────────

/// `test_elicitation`'s form.
#[derive(Debug, Elicit, Serialize, Deserialize)]
struct UserResponse {
    /// User's response
    username: String,
    /// User's email address
    email: String,
}

/// SEP-1034: a default for every primitive type.
#[derive(Debug, Elicit, Serialize, Deserialize)]
struct WithDefaults {
    #[elicit(default = "John Doe")]
    name: String,
    #[elicit(default = 30)]
    age: i64,
    #[elicit(default = 95.5)]
    score: f64,
    #[elicit(default = "active")]
    status: Status,
    #[elicit(default = true)]
    verified: bool,
}

#[derive(Debug, Elicit, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Active,
    Inactive,
    Pending,
}

/// SEP-1330: the five enum shapes, one of them the deprecated `enumNames`, which
/// `#[derive(Elicit)]` does not write: a hand-written form. Its answer is kept as JSON text.
#[derive(Debug, Serialize, Deserialize)]
struct EnumChoices(String);

impl Elicit for EnumChoices {
    fn requested_schema() -> serde_json::Map<String, serde_json::Value> {
        let titled = |titles: [&str; 3], prefix: &str| {
            titles
                .iter()
                .enumerate()
                .map(|(i, title)| json!({"const": format!("{prefix}{}", i + 1), "title": title}))
                .collect::<Vec<_>>()
        };
        let schema = json!({
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": titled(["First Option", "Second Option", "Third Option"], "value")},
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array", "minItems": 1, "maxItems": 3,
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "items": {"anyOf": titled(["First Choice", "Second Choice", "Third Choice"], "value")},
                },
            },
            "required": [],
        });
        schema.as_object().cloned().unwrap_or_default()
    }

    fn from_content(
        content: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Self, FormError> {
        serde_json::to_string(content)
            .map(EnumChoices)
            .map_err(|error| FormError::new(error.to_string()))
    }
}

#[derive(Elicit, Serialize, Deserialize)]
struct UserName {
    name: String,
}

#[derive(Elicit, Serialize, Deserialize)]
struct Confirm {
    ok: bool,
}

#[derive(Elicit, Serialize, Deserialize)]
struct FavoriteColor {
    color: String,
}

#[derive(Elicit, Serialize, Deserialize)]
struct UserContext {
    context: String,
}

// ── plain tools ──────────────────────────────────────────────────────────────────────

/// Returns a simple text.
#[saga_tool]
async fn test_simple_text() -> Result<&'static str, SagaError> {
    Ok("This is a simple text response for testing.")
}

/// Returns an image.
#[saga_tool]
async fn test_image_content() -> Result<Vec<Content>, SagaError> {
    Ok(vec![Content::image(PNG, "image/png")])
}

/// Returns an audio clip.
#[saga_tool]
async fn test_audio_content() -> Result<Vec<Content>, SagaError> {
    Ok(vec![Content::audio(WAV, "audio/wav")])
}

/// Returns an embedded resource.
#[saga_tool]
async fn test_embedded_resource() -> Result<Vec<Content>, SagaError> {
    Ok(vec![Content::resource(
        ResourceContents::text(
            "This is an embedded resource content.",
            "test://embedded-resource",
        )
        .with_mime_type("text/plain"),
    )])
}

/// Returns text, an image and an embedded resource.
#[saga_tool]
async fn test_multiple_content_types() -> Result<Vec<Content>, SagaError> {
    Ok(vec![
        Content::text("Multiple content types test:"),
        Content::image(PNG, "image/png"),
        Content::resource(
            ResourceContents::text(
                r#"{"test":"data","value":123}"#,
                "test://mixed-content-resource",
            )
            .with_mime_type("application/json"),
        ),
    ])
}

/// Always fails, as a tool error (`isError: true`).
#[saga_tool]
async fn test_error_handling() -> Result<String, String> {
    Err("This tool intentionally returns an error for testing".into())
}

/// Reports progress three times, 50 ms apart, then finishes.
#[saga_tool]
async fn test_tool_with_progress(cx: &SagaContext) -> Result<String, SagaError> {
    for step in [0.0, 50.0, 100.0] {
        cx.progress(step, Some(100.0), Some(format!("{step}% done")))
            .await;
        if step < 100.0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    Ok("Progress test completed.".into())
}

/// Needs the client's LLM (sampling); refused when the client does not declare it.
#[saga_tool]
async fn test_missing_capability() -> Result<String, SagaError> {
    let answer = sample("Say hello.").max_tokens(20).await?;
    Ok(format!("The client's LLM said: {}", answer.text()))
}

/// Asks the user for their name (as an input-required result, never on a stream).
#[saga_tool]
async fn test_streaming_elicitation() -> Result<String, SagaError> {
    let user: UserName = elicit("What is your name?").key("user_name").await?;
    Ok(format!("Hello, {}!", user.name))
}

/// Succeeds; logs nothing unless the client sets a log level.
#[saga_tool]
async fn test_logging_tool() -> Result<&'static str, SagaError> {
    Ok("Logging test completed.")
}

// ── tools of the 2025-11-25 scenarios (server-to-client requests in a session) ────────

/// Sends three log messages while it runs.
#[saga_tool]
async fn test_tool_with_logging(cx: &SagaContext) -> Result<&'static str, SagaError> {
    cx.log(LoggingLevel::Info, "Tool execution started").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    cx.log(LoggingLevel::Info, "Tool processing data").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    cx.log(LoggingLevel::Info, "Tool execution completed").await;
    Ok("Logging test completed: sent 3 log messages.")
}

/// Asks the client's LLM.
#[saga_tool]
async fn test_sampling(prompt: String) -> Result<String, SagaError> {
    let answer = sample(prompt).max_tokens(100).await?;
    Ok(format!("LLM response: {}", answer.text()))
}

/// What an elicitation came back with, as the 2025-11-25 scenarios print it.
fn described<T: std::fmt::Debug>(outcome: Result<T, SagaError>) -> Result<String, SagaError> {
    match outcome {
        Ok(content) => Ok(format!("action=accept, content={content:?}")),
        Err(SagaError::Declined) => Ok("action=decline".into()),
        Err(SagaError::Cancelled) => Ok("action=cancel".into()),
        Err(other) => Err(other),
    }
}

/// Asks the user for a name and an email.
#[saga_tool]
async fn test_elicitation(message: String) -> Result<String, SagaError> {
    let outcome = elicit::<UserResponse>(message).await;
    Ok(format!("User response: {}", described(outcome)?))
}

/// Asks with a default for every primitive type (SEP-1034).
#[saga_tool]
async fn test_elicitation_sep1034_defaults() -> Result<String, SagaError> {
    let outcome =
        elicit::<WithDefaults>("Please review and update the form fields with defaults").await;
    Ok(format!("Elicitation completed: {}", described(outcome)?))
}

/// Asks with the five enum shapes (SEP-1330).
#[saga_tool]
async fn test_elicitation_sep1330_enums() -> Result<String, SagaError> {
    let outcome = elicit::<EnumChoices>("Please select options from the enum fields").await;
    Ok(format!("Elicitation completed: {}", described(outcome)?))
}

// ── multi round-trip tools (SEP-2322) ────────────────────────────────────────────────

/// Asks the user's name, then greets them.
#[saga_tool]
async fn test_input_required_result_elicitation() -> Result<String, SagaError> {
    let user: UserName = elicit("What is your name?").key("user_name").await?;
    Ok(format!("Hello, {}!", user.name))
}

/// Asks the client's LLM for the capital of France.
#[saga_tool]
async fn test_input_required_result_sampling() -> Result<String, SagaError> {
    let answer = sample("What is the capital of France?")
        .max_tokens(100)
        .key("capital_question")
        .await?;
    Ok(format!("The client's LLM answered: {}", answer.text()))
}

/// Lists the client's roots.
#[saga_tool]
async fn test_input_required_result_list_roots() -> Result<String, SagaError> {
    let roots = list_roots().key("client_roots").await?;
    let uris: Vec<String> = roots.into_iter().map(|root| root.uri).collect();
    Ok(format!(
        "The client has {} root(s): {}",
        uris.len(),
        uris.join(", ")
    ))
}

/// Asks for a confirmation, carrying its state in `requestState`.
#[saga_tool]
async fn test_input_required_result_request_state() -> Result<String, SagaError> {
    let confirm: Confirm = elicit("Please confirm").key("confirm").await?;
    Ok(format!("state-ok: confirmed={}", confirm.ok))
}

/// Asks the user, the client's LLM and the client's roots in one round.
#[saga_tool]
async fn test_input_required_result_multiple_inputs() -> Result<String, SagaError> {
    let (user, greeting, roots) = join!(
        elicit::<UserName>("What is your name?").key("user_name"),
        sample("Generate a greeting").max_tokens(50).key("greeting"),
        list_roots().key("client_roots"),
    );
    let user = user?;
    let greeting = greeting?;
    let roots = roots?;
    Ok(format!(
        "{} {} ({} root(s))",
        greeting.text(),
        user.name,
        roots.len()
    ))
}

/// Asks two questions, one round each.
#[saga_tool]
async fn test_input_required_result_multi_round() -> Result<String, SagaError> {
    let user: UserName = elicit("Step 1: What is your name?").key("step1").await?;
    let color: FavoriteColor = elicit("Step 2: What is your favorite color?")
        .key("step2")
        .await?;
    Ok(format!(
        "{}'s favorite color is {}.",
        user.name, color.color
    ))
}

/// Asks for a confirmation; its sealed `requestState` refuses any tampering.
#[saga_tool]
async fn test_input_required_result_tampered_state() -> Result<String, SagaError> {
    let confirm: Confirm = elicit("Please confirm").key("confirm").await?;
    Ok(format!("Confirmed: {}", confirm.ok))
}

/// Asks for a name through whatever the client declared: elicitation, else sampling,
/// else its roots.
#[saga_tool]
async fn test_input_required_result_capabilities(cx: &SagaContext) -> Result<String, SagaError> {
    if cx.can_elicit() {
        let user: UserName = elicit("What is your name?").key("user_name").await?;
        Ok(format!("Hello, {}!", user.name))
    } else if cx.can_sample() {
        let greeting = sample("Generate a greeting")
            .max_tokens(50)
            .key("greeting")
            .await?;
        Ok(format!("The client's LLM says: {}", greeting.text()))
    } else if cx.can_list_roots() {
        let roots = list_roots().key("client_roots").await?;
        Ok(format!("The client has {} root(s).", roots.len()))
    } else {
        Ok("The client declared no capability to ask with.".into())
    }
}

// ── tools whose input schema the suite checks verbatim ───────────────────────────────

/// Takes any JSON; its input schema is the suite's JSON Schema 2020-12 sample.
#[saga_tool]
async fn json_schema_2020_12_tool() -> Result<&'static str, SagaError> {
    Ok("JSON Schema 2020-12 tool called.")
}

/// Echoes the region, which the client also sends in the `Mcp-Param-Region` header.
#[saga_tool]
async fn test_custom_header(region: String) -> Result<String, SagaError> {
    Ok(format!("Region: {region}"))
}

fn json_schema_2020_12() -> serde_json::Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "city": {"type": "string"}
                }
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

fn custom_header_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}
        },
        "required": ["region"]
    })
}

// ── prompts ──────────────────────────────────────────────────────────────────────────

/// A simple prompt without arguments.
#[saga_prompt]
async fn test_simple_prompt() -> Result<Prompt, SagaError> {
    Ok(Prompt::new(vec![PromptMessage::new_text(
        Role::User,
        "This is a simple prompt for testing.",
    )]))
}

/// A prompt with two required arguments.
#[saga_prompt]
async fn test_prompt_with_arguments(arg1: String, arg2: String) -> Result<Prompt, SagaError> {
    Ok(Prompt::new(vec![PromptMessage::new_text(
        Role::User,
        format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"),
    )]))
}

/// A prompt that embeds the given resource.
#[saga_prompt]
async fn test_prompt_with_embedded_resource(
    #[arg(rename = "resourceUri")] resource_uri: String,
) -> Result<Prompt, SagaError> {
    Ok(Prompt::new(vec![
        PromptMessage::new(
            Role::User,
            Content::resource(
                ResourceContents::text("Embedded resource content for testing.", resource_uri)
                    .with_mime_type("text/plain"),
            ),
        ),
        PromptMessage::new_text(Role::User, "Please process the embedded resource above."),
    ]))
}

/// A prompt with an image.
#[saga_prompt]
async fn test_prompt_with_image() -> Result<Prompt, SagaError> {
    Ok(Prompt::new(vec![
        PromptMessage::new(Role::User, Content::image(PNG, "image/png")),
        PromptMessage::new_text(Role::User, "Please analyze the image above."),
    ]))
}

/// A prompt that first asks the user which context to use.
#[saga_prompt]
async fn test_input_required_result_prompt() -> Result<Prompt, SagaError> {
    let answer: UserContext = elicit("What context should the prompt use?")
        .key("user_context")
        .await?;
    Ok(Prompt::new(vec![PromptMessage::new_text(
        Role::User,
        format!("Answer with this context in mind: {}", answer.context),
    )]))
}

// ── resources ────────────────────────────────────────────────────────────────────────

/// A static text resource.
#[saga_resource]
async fn static_text(uri: String) -> Result<Contents, SagaError> {
    Ok(Contents::text(
        uri,
        "text/plain",
        "This is the content of the static text resource.",
    ))
}

/// The resource the conformance suite subscribes to.
#[saga_resource]
async fn watched(uri: String) -> Result<Contents, SagaError> {
    Ok(Contents::text(
        uri,
        "text/plain",
        "Watched resource content.",
    ))
}

/// A static binary resource (a PNG).
#[saga_resource]
async fn static_binary(uri: String) -> Result<Contents, SagaError> {
    Ok(Contents::blob(uri, "image/png", PNG))
}

/// Data for an id.
#[saga_resource]
async fn template_data(uri: String, id: String) -> Result<Contents, SagaError> {
    let data = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
    Ok(Contents::text(uri, "application/json", data.to_string()))
}

// ── tasks (MCP tasks extension, SEP-2663) ───────────────────────────────────────────
// A task tool becomes a task at its first checkpoint; what it asks before that is asked
// over MRTR, synchronously.

/// Greets someone (never a task).
#[saga_tool]
async fn greet(name: String) -> Result<String, SagaError> {
    Ok(format!("Hello, {name}!"))
}

/// Waits `seconds`, then answers: a task for a client that supports tasks.
#[saga_tool(task)]
async fn slow_compute(seconds: f64, label: String) -> Result<String, SagaError> {
    checkpoint().await;
    let seconds = if seconds.is_finite() {
        seconds.clamp(0.0, 600.0)
    } else {
        0.0
    };
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    Ok(format!("{label}: done after {seconds} s"))
}

/// A job that fails as tools fail (a result with `isError`), after a second.
#[saga_tool(task = "required")]
async fn failing_job() -> Result<String, SagaError> {
    checkpoint().await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(SagaError::msg("the job failed"))
}

/// A job whose code panics: the task fails with a protocol error.
#[saga_tool(task)]
async fn protocol_error_job() -> Result<String, SagaError> {
    checkpoint().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    panic!("the job hit a bug");
}

/// Whether to go ahead.
#[derive(Debug, Elicit, Serialize, Deserialize)]
struct Confirmation {
    /// Go ahead?
    confirm: bool,
}

/// Deletes a file once the user confirms, as a task.
#[saga_tool(task)]
async fn confirm_delete(filename: String) -> Result<String, SagaError> {
    checkpoint().await;
    let answer: Confirmation = elicit(format!("Delete {filename}?")).await?;
    Ok(if answer.confirm {
        format!("Deleted {filename}")
    } else {
        format!("Kept {filename}")
    })
}

/// A named confirmation.
#[derive(Debug, Elicit, Serialize, Deserialize)]
struct NamedConfirmation {
    /// A name.
    name: String,
    /// Go ahead?
    confirm: bool,
}

/// Asks two questions at once, as a task.
#[saga_tool(task)]
async fn multi_input() -> Result<String, SagaError> {
    checkpoint().await;
    let (first, second) = join!(
        elicit::<NamedConfirmation>("First input?"),
        elicit::<NamedConfirmation>("Second input?"),
    );
    Ok(format!("Got {} and {}", first?.name, second?.name))
}

/// Asks the user's name synchronously (MRTR), then works on as a task.
#[saga_tool(task = "required")]
async fn test_tool_with_task() -> Result<String, SagaError> {
    let user: UserName = elicit("What is your name?").await?;
    checkpoint().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(format!("Hello, {}! The task is done.", user.name))
}

/// The conformance server, with the given keys.
pub fn server(keys: KeyRing) -> anyhow::Result<SagaServer> {
    Ok(SagaServer::builder()
        .info("saga-conformance-server", env!("CARGO_PKG_VERSION"))
        .keys(keys)
        // http-header-validation calls the first tool with `{}`: it must be this one.
        .tool(test_simple_text)
        .tool(test_image_content)
        .tool(test_audio_content)
        .tool(test_embedded_resource)
        .tool(test_multiple_content_types)
        .tool(test_error_handling)
        .tool(test_tool_with_progress)
        .tool(test_missing_capability)
        .tool(test_streaming_elicitation)
        .tool(test_logging_tool)
        .tool(test_tool_with_logging)
        .tool(test_sampling)
        .tool(test_elicitation)
        .tool(test_elicitation_sep1034_defaults)
        .tool(test_elicitation_sep1330_enums)
        .tool(test_input_required_result_elicitation)
        .tool(test_input_required_result_sampling)
        .tool(test_input_required_result_list_roots)
        .tool(test_input_required_result_request_state)
        .tool(test_input_required_result_multiple_inputs)
        .tool(test_input_required_result_multi_round)
        .tool(test_input_required_result_tampered_state)
        .tool(test_input_required_result_capabilities)
        .tool(WithInputSchema::new(
            json_schema_2020_12_tool,
            json_schema_2020_12(),
        ))
        .tool(WithInputSchema::new(
            test_custom_header,
            custom_header_schema(),
        ))
        .tool(greet)
        .tool(slow_compute)
        .tool(failing_job)
        .tool(protocol_error_job)
        .tool(confirm_delete)
        .tool(multi_input)
        .tool(test_tool_with_task)
        .tasks(TaskStore::memory())
        .prompt(test_simple_prompt)
        .prompt(test_prompt_with_arguments)
        .prompt(test_prompt_with_embedded_resource)
        .prompt(test_prompt_with_image)
        .prompt(test_input_required_result_prompt)
        // caching reads the first resource without answers: it must be this one.
        .resource("test://static-text", static_text)
        .resource("test://static-binary", static_binary)
        .resource("test://watched-resource", watched)
        .resource_template("test://template/{id}/data", template_data)
        .build()?)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    saga_examples::cli::init_logging();
    saga_examples::cli::serve(server(saga_examples::cli::keys()?)?).await
}
