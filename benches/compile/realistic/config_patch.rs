//! A JSON document kept across questions and edited in place.
use saga_runtime::prelude::*;
use serde_json::{Value, json};

/// Asks for each missing key of a configuration and returns the completed document.
#[saga_tool]
pub async fn config_patch(config: Value, required: Vec<String>) -> Result<String, SagaError> {
    let mut config = config;
    let mut asked = 0;
    for key in &required {
        if config.get(key).is_some() {
            continue;
        }
        let value: String = elicit(format!("Value for `{key}`?")).await?;
        asked += 1;
        if let Some(object) = config.as_object_mut() {
            object.insert(key.clone(), json!(value));
        }
    }
    let summary = json!({ "asked": asked, "config": config });
    Ok(summary.to_string())
}
