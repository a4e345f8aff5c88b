//! A map built across samples, an element of a borrowed map by key kept across them.
use std::collections::HashMap;

use saga_runtime::prelude::*;

/// Translates each string with the model, asking the person about the long ones.
#[saga_tool]
pub async fn translate_strings(
    strings: HashMap<String, String>,
    language: String,
) -> Result<String, SagaError> {
    let mut done: HashMap<String, String> = HashMap::new();
    let mut keys: Vec<String> = strings.keys().cloned().collect();
    keys.sort();
    for key in &keys {
        let source = &strings[key];
        let out = sample(format!("Translate into {language}: {source}"))
            .max_tokens(200)
            .await?;
        let mut text = out.text().to_owned();
        if text.len() > source.len() * 2 {
            text = elicit(format!("'{key}' came out long: {text}. Your wording?")).await?;
        }
        done.insert(key.clone(), text);
    }
    let mut lines: Vec<String> = done.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    lines.sort();
    Ok(lines.join("\n"))
}
