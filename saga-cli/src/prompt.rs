//! Asking a person, with `inquire`: forms field by field, URL elicitations, sampling.
//!
//! Esc cancels a form (action `cancel`); answering `n` to "Answer this form?" declines it;
//! Ctrl-C quits `saga`. A form of one required yes-or-no field is asked as that question
//! alone.

use inquire::error::InquireError;
use inquire::validator::Validation;
use inquire::{Confirm, MultiSelect, Select, Text};

use crate::terminal::clean;
use serde_json::{Map, Value, json};

use crate::schema::{Field, Kind, parse_input};

/// Ctrl-C at a prompt: `saga` quits (and, with `--task`, cancels its task first).
#[derive(Debug, Clone, Copy)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// Why a prompt ended without an answer.
enum Stop {
    /// Esc: the form is cancelled.
    Cancel,
    /// Ctrl-C, or no terminal: give up.
    Quit(anyhow::Error),
}

fn stop(error: InquireError) -> Stop {
    match error {
        InquireError::OperationCanceled => Stop::Cancel,
        InquireError::OperationInterrupted => Stop::Quit(Interrupted.into()),
        InquireError::NotTTY => Stop::Quit(anyhow::anyhow!(
            "cannot ask: stdin is not a terminal (use --answers FILE)"
        )),
        other => Stop::Quit(anyhow::anyhow!("cannot ask: {other}")),
    }
}

/// Asks a form-mode elicitation; gives the `ElicitResult` as JSON.
pub fn form(message: &str, schema: &Value) -> anyhow::Result<Value> {
    say!("  {}", crate::terminal::indent(message));
    let fields = crate::schema::fields(schema);
    if let [field] = fields.as_slice()
        && matches!(field.kind, Kind::Boolean)
        && field.required
    {
        // A yes-or-no question: its one answer is the form's, asked once (not "Answer
        // this form?" and then the value).
        return match ask_field(field) {
            Ok(Some(value)) => {
                Ok(json!({"action": "accept", "content": {field.name.clone(): value}}))
            }
            Ok(None) => Ok(json!({"action": "accept", "content": {}})),
            Err(why) => stopped(why),
        };
    }
    let ask = Confirm::new("Answer this form?")
        .with_default(true)
        .with_help_message("Enter: yes · n: decline · Esc: cancel")
        .prompt();
    match ask {
        Ok(true) => {}
        Ok(false) => return Ok(json!({"action": "decline"})),
        Err(error) => return stopped(stop(error)),
    }
    let mut content = Map::new();
    for field in &fields {
        match ask_field(field) {
            Ok(Some(value)) => {
                content.insert(field.name.clone(), value);
            }
            Ok(None) => {}
            Err(why) => return stopped(why),
        }
    }
    Ok(json!({"action": "accept", "content": content}))
}

fn stopped(why: Stop) -> anyhow::Result<Value> {
    match why {
        Stop::Cancel => {
            say!("  (cancelled)");
            Ok(json!({"action": "cancel"}))
        }
        Stop::Quit(error) => Err(error),
    }
}

fn help(field: &Field) -> String {
    let mut parts = Vec::new();
    if let Some(description) = &field.description {
        parts.push(description.clone());
    }
    match &field.kind {
        Kind::Integer { min, max } | Kind::Number { min, max } => {
            if let Some(min) = min {
                parts.push(format!("min {min}"));
            }
            if let Some(max) = max {
                parts.push(format!("max {max}"));
            }
        }
        Kind::Text {
            min_len,
            max_len,
            format,
        } => {
            if let Some(format) = format {
                parts.push(format.clone());
            }
            if let Some(min) = min_len {
                parts.push(format!("at least {min} characters"));
            }
            if let Some(max) = max_len {
                parts.push(format!("at most {max} characters"));
            }
        }
        _ => {}
    }
    if !field.required {
        parts.push("optional: Enter skips".into());
    }
    parts.push("Esc cancels the form".into());
    parts.join(" · ")
}

fn ask_field(field: &Field) -> Result<Option<Value>, Stop> {
    // Every text the server chose is shown escaped (see `terminal`).
    let label = format!("{}:", clean(&field.label));
    let help = clean(&help(field));
    match &field.kind {
        Kind::Boolean => {
            let default = field
                .default
                .as_ref()
                .and_then(Value::as_bool)
                .unwrap_or(false);
            Confirm::new(&label)
                .with_default(default)
                .with_help_message(&help)
                .prompt()
                .map(|b| Some(Value::Bool(b)))
                .map_err(stop)
        }
        Kind::Choice { values, titles } => {
            let mut options: Vec<String> = titles.iter().map(|title| clean(title)).collect();
            if !field.required {
                options.push("(skip)".into());
            }
            let cursor = field
                .default
                .as_ref()
                .and_then(Value::as_str)
                .and_then(|d| values.iter().position(|v| v == d))
                .unwrap_or(0);
            let chosen = Select::new(&label, options)
                .with_starting_cursor(cursor)
                .with_help_message(&help)
                .raw_prompt()
                .map_err(stop)?;
            Ok(values.get(chosen.index).map(|v| Value::String(v.clone())))
        }
        Kind::MultiChoice {
            values,
            titles,
            min_items,
            max_items,
        } => {
            let (min, max) = (*min_items, *max_items);
            let shown: Vec<String> = titles.iter().map(|title| clean(title)).collect();
            let chosen = MultiSelect::new(&label, shown)
                .with_help_message(&help)
                .with_validator(move |list: &[inquire::list_option::ListOption<&String>]| {
                    let n = list.len() as u64;
                    Ok(match (min, max) {
                        (Some(min), _) if n < min => {
                            Validation::Invalid(format!("choose at least {min}").into())
                        }
                        (_, Some(max)) if n > max => {
                            Validation::Invalid(format!("choose at most {max}").into())
                        }
                        _ => Validation::Valid,
                    })
                })
                .raw_prompt()
                .map_err(stop)?;
            let picked: Vec<Value> = chosen
                .iter()
                .filter_map(|option| values.get(option.index))
                .map(|v| Value::String(v.clone()))
                .collect();
            Ok(Some(Value::Array(picked)))
        }
        Kind::Text { .. } | Kind::Integer { .. } | Kind::Number { .. } => {
            let checked = field.clone();
            let default = field.default.as_ref().map(|d| match d {
                Value::String(s) => clean(s),
                other => clean(&other.to_string()),
            });
            let mut prompt =
                Text::new(&label)
                    .with_help_message(&help)
                    .with_validator(move |text: &str| {
                        Ok(match parse_input(&checked, text) {
                            Ok(_) => Validation::Valid,
                            Err(why) => Validation::Invalid(clean(&why).into()),
                        })
                    });
            if let Some(default) = &default {
                prompt = prompt.with_default(default);
            }
            let text = prompt.prompt().map_err(stop)?;
            parse_input(field, &text).map_err(|why| Stop::Quit(anyhow::anyhow!(why)))
        }
    }
}

/// Shows a URL-mode elicitation and asks whether the user completed it.
pub fn url(message: &str, url: &str) -> anyhow::Result<Value> {
    say!("  {}", crate::terminal::indent(message));
    println!("  open: {}", crate::terminal::url(url));
    match Confirm::new("Done (accept)?")
        .with_default(true)
        .with_help_message("Enter: accept · n: decline · Esc: cancel")
        .prompt()
    {
        Ok(true) => Ok(json!({"action": "accept"})),
        Ok(false) => Ok(json!({"action": "decline"})),
        Err(error) => stopped(stop(error)),
    }
}

/// Asks for the model's answer to a sampling request (already shown): its text, or, when
/// the request offers `tools` (their names), a call of one of them with its input as a
/// JSON object; `id` names that call.
pub fn sampling(tools: &[String], id: &str) -> anyhow::Result<Value> {
    let unanswered = |error| match stop(error) {
        Stop::Cancel => anyhow::anyhow!("sampling request left unanswered"),
        Stop::Quit(error) => error,
    };
    if !tools.is_empty() {
        const TEXT: &str = "answer with text";
        let mut options = vec![TEXT.to_owned()];
        options.extend(tools.iter().map(|tool| format!("call {}", clean(tool))));
        let chosen = Select::new("Answer as the model:", options)
            .with_help_message("↑↓ to move, enter to choose · Esc quits")
            .raw_prompt()
            .map_err(unanswered)?;
        if chosen.index > 0 {
            let tool = &tools[chosen.index - 1];
            let input = Text::new(&format!("Input of {} (a JSON object):", clean(tool)))
                .with_default("{}")
                .with_validator(|text: &str| {
                    Ok(match serde_json::from_str::<Value>(text) {
                        Ok(Value::Object(_)) => Validation::Valid,
                        _ => Validation::Invalid("a JSON object, as {\"query\": \"…\"}".into()),
                    })
                })
                .prompt()
                .map_err(unanswered)?;
            let input: Value = serde_json::from_str(&input).unwrap_or_else(|_| json!({}));
            return Ok(crate::answers::tool_use_result(id, tool, input));
        }
    }
    Text::new("Answer as the model:")
        .with_help_message("the text the client's LLM would answer · Esc quits")
        .prompt()
        .map(|text| crate::answers::sampling_result(&text))
        .map_err(unanswered)
}
