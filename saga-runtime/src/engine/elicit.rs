//! Form-mode elicitation: what a type asks for, and the check an answer must pass before
//! the tool sees it.

use serde_json::{Map, Value, json};

/// A type the user can be asked for with a form-mode elicitation.
///
/// Derive it with `#[derive(Elicit)]` on a struct of primitive fields. `String`, `bool`,
/// `i64` and `f64` implement it as a one-field form whose field is `value`.
///
/// ```
/// use saga_runtime::prelude::*;
///
/// let schema = <String as Elicit>::requested_schema();
/// assert_eq!(schema["properties"]["value"]["type"], "string");
/// let content = serde_json::json!({"value": "prod"});
/// assert_eq!(String::from_content(content.as_object().unwrap()).unwrap(), "prod");
/// ```
///
/// # `#[derive(Elicit)]`
///
/// On a struct with named fields, each field is a property: `String`, `bool`, an integer
/// or float type, a unit-only enum deriving `Elicit` (single select), `Vec` of such an enum
/// (multi select), or `Option` of any of these (not required). Doc comments become
/// `description`; `#[serde(rename)]` / `#[serde(rename_all)]` change wire names;
/// `#[elicit(...)]` refines a field with `title`, `description`, `format` (`"email"`,
/// `"uri"`, `"date"`, `"date-time"`), `min_length` / `max_length` (strings), `min` / `max`
/// (numbers), `min_items` / `max_items` (multi selects) and `default`. On a unit-only enum,
/// a variant's `#[elicit(title = "...")]` or doc comment titles its option; the enum is
/// also a one-field form (`value`).
///
/// ```
/// use saga_runtime::prelude::*;
///
/// #[derive(Elicit)]
/// #[serde(rename_all = "snake_case")]
/// enum Region { EuWest, UsEast }
///
/// #[derive(Elicit)]
/// struct Target {
///     /// Where to deploy.
///     region: Region,
///     #[elicit(min = 1, max = 10, default = 2)]
///     replicas: Option<u8>,
/// }
///
/// let schema = serde_json::Value::Object(Target::requested_schema());
/// assert_eq!(schema["properties"]["region"]["enum"], serde_json::json!(["eu_west", "us_east"]));
/// assert_eq!(schema["required"], serde_json::json!(["region"]));
/// ```
///
/// An `Elicit` type is `'static` (an owned answer): the runtime builds its schema once
/// per type and reuses it for every request that asks for it.
pub trait Elicit: Sized + 'static {
    /// The `requestedSchema`: a flat object of primitive properties (MCP form mode).
    fn requested_schema() -> Map<String, Value>;

    /// Reads an accepted answer's `content`. The runtime has already checked the content
    /// against [`Elicit::requested_schema`]; this is the typed read.
    fn from_content(content: &Map<String, Value>) -> Result<Self, String>;
}

const VALUE_FIELD: &str = "value";

fn single_field_schema(property: Value) -> Map<String, Value> {
    let schema = json!({
        "type": "object",
        "properties": { VALUE_FIELD: property },
        "required": [VALUE_FIELD],
    });
    match schema {
        Value::Object(map) => map,
        _ => unreachable!("json! of an object literal is an object"),
    }
}

fn single_field(content: &Map<String, Value>) -> Result<&Value, String> {
    content
        .get(VALUE_FIELD)
        .ok_or_else(|| format!("missing field `{VALUE_FIELD}`"))
}

impl Elicit for String {
    fn requested_schema() -> Map<String, Value> {
        single_field_schema(json!({"type": "string"}))
    }
    fn from_content(content: &Map<String, Value>) -> Result<Self, String> {
        single_field(content)?
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("`{VALUE_FIELD}` is not a string"))
    }
}

impl Elicit for bool {
    fn requested_schema() -> Map<String, Value> {
        single_field_schema(json!({"type": "boolean"}))
    }
    fn from_content(content: &Map<String, Value>) -> Result<Self, String> {
        single_field(content)?
            .as_bool()
            .ok_or_else(|| format!("`{VALUE_FIELD}` is not a boolean"))
    }
}

impl Elicit for i64 {
    fn requested_schema() -> Map<String, Value> {
        single_field_schema(json!({"type": "integer"}))
    }
    fn from_content(content: &Map<String, Value>) -> Result<Self, String> {
        as_integer(single_field(content)?)
            .ok_or_else(|| format!("`{VALUE_FIELD}` is not an integer"))
    }
}

impl Elicit for f64 {
    fn requested_schema() -> Map<String, Value> {
        single_field_schema(json!({"type": "number"}))
    }
    fn from_content(content: &Map<String, Value>) -> Result<Self, String> {
        single_field(content)?
            .as_f64()
            .ok_or_else(|| format!("`{VALUE_FIELD}` is not a number"))
    }
}

/// Reads an integer, accepting `3.0` (JSON has one number type; some clients send floats).
pub fn as_integer(value: &Value) -> Option<i64> {
    if let Some(int) = value.as_i64() {
        return Some(int);
    }
    let float = value.as_f64()?;
    // i64::MAX as f64 rounds up to 2^63, which does not fit; the strict bound excludes it.
    let in_range = float >= i64::MIN as f64 && float < i64::MAX as f64;
    (float.fract() == 0.0 && in_range).then_some(float as i64)
}

/// Checks an accepted elicitation's content against the form-mode schema that was sent.
///
/// Only the vocabulary MCP allows in form mode is checked: property `type`, `enum`,
/// `oneOf`/`anyOf` constants, string `minLength`/`maxLength`/`format`, number
/// `minimum`/`maximum`, array `minItems`/`maxItems`, and `required`. Properties the schema
/// does not name are ignored, as JSON Schema allows.
pub fn check_content(schema: &Map<String, Value>, content: &Value) -> Result<(), String> {
    let content = content
        .as_object()
        .ok_or_else(|| "content is not an object".to_owned())?;
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if content.get(name).is_none_or(Value::is_null) {
                return Err(format!("required field `{name}` is missing"));
            }
        }
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (name, property) in properties {
        match content.get(name) {
            None | Some(Value::Null) => {}
            Some(value) => {
                check_property(property, value).map_err(|why| format!("`{name}` {why}"))?
            }
        }
    }
    Ok(())
}

fn check_property(property: &Value, value: &Value) -> Result<(), String> {
    match property.get("type").and_then(Value::as_str) {
        Some("string") => {
            let text = value.as_str().ok_or("is not a string")?;
            let chars = text.chars().count() as u64;
            if let Some(min) = property.get("minLength").and_then(Value::as_u64)
                && chars < min
            {
                return Err(format!("is shorter than {min} characters"));
            }
            if let Some(max) = property.get("maxLength").and_then(Value::as_u64)
                && chars > max
            {
                return Err(format!("is longer than {max} characters"));
            }
            if let Some(format) = property.get("format").and_then(Value::as_str) {
                check_format(format, text)?;
            }
            let allowed = allowed_constants(property);
            if !allowed.is_empty() && !allowed.contains(&text) {
                return Err(format!("is not one of {allowed:?}"));
            }
            Ok(())
        }
        Some(kind @ ("number" | "integer")) => {
            let number = value.as_f64().ok_or("is not a number")?;
            if kind == "integer" && as_integer(value).is_none() {
                return Err("is not an integer".into());
            }
            if let Some(min) = property.get("minimum").and_then(Value::as_f64)
                && number < min
            {
                return Err(format!("is below the minimum {min}"));
            }
            if let Some(max) = property.get("maximum").and_then(Value::as_f64)
                && number > max
            {
                return Err(format!("is above the maximum {max}"));
            }
            Ok(())
        }
        Some("boolean") => value
            .as_bool()
            .map(drop)
            .ok_or_else(|| "is not a boolean".into()),
        Some("array") => {
            let items = value.as_array().ok_or("is not an array")?;
            let count = items.len() as u64;
            if let Some(min) = property.get("minItems").and_then(Value::as_u64)
                && count < min
            {
                return Err(format!("has fewer than {min} items"));
            }
            if let Some(max) = property.get("maxItems").and_then(Value::as_u64)
                && count > max
            {
                return Err(format!("has more than {max} items"));
            }
            let allowed = property
                .get("items")
                .map(allowed_constants)
                .unwrap_or_default();
            for item in items {
                let text = item.as_str().ok_or("has an item that is not a string")?;
                if !allowed.is_empty() && !allowed.contains(&text) {
                    return Err(format!("has an item not in {allowed:?}"));
                }
            }
            Ok(())
        }
        // A property type form mode does not define: nothing this server sent, so the
        // schema came from a tool author's hand-written Elicit impl; trust its parser.
        _ => Ok(()),
    }
}

/// The values a single- or multi-select accepts: `enum`, or the `const`s of
/// `oneOf` / `anyOf`.
fn allowed_constants(property: &Value) -> Vec<&str> {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return values.iter().filter_map(Value::as_str).collect();
    }
    ["oneOf", "anyOf"]
        .iter()
        .filter_map(|keyword| property.get(*keyword).and_then(Value::as_array))
        .flatten()
        .filter_map(|option| option.get("const").and_then(Value::as_str))
        .collect()
}

fn check_format(format: &str, text: &str) -> Result<(), String> {
    let ok = match format {
        "email" => text.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && domain.contains('.') && !text.contains(char::is_whitespace)
        }),
        "uri" => text.split_once(':').is_some_and(|(scheme, _)| {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        }),
        "date" => is_date(text),
        "date-time" => text.split_once(['T', 't']).is_some_and(|(date, time)| {
            is_date(date) && time.len() >= 8 && time.as_bytes()[2] == b':'
        }),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("is not a valid {format}"))
    }
}

fn is_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes
            .iter()
            .enumerate()
            .all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn required_and_types_are_checked() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 2},
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "ok": {"type": "boolean"}
            },
            "required": ["name"]
        }));
        assert!(check_content(&s, &json!({"name": "Al", "age": 3, "ok": true})).is_ok());
        assert!(check_content(&s, &json!({"name": "Al", "age": 3.0})).is_ok());
        assert!(check_content(&s, &json!({})).is_err());
        assert!(check_content(&s, &json!({"name": null})).is_err());
        assert!(check_content(&s, &json!({"name": "A"})).is_err());
        assert!(check_content(&s, &json!({"name": 5})).is_err());
        assert!(check_content(&s, &json!({"name": "Al", "age": 3.5})).is_err());
        assert!(check_content(&s, &json!({"name": "Al", "age": -1})).is_err());
        assert!(check_content(&s, &json!({"name": "Al", "ok": "yes"})).is_err());
        assert!(check_content(&s, &json!("Al")).is_err());
    }

    #[test]
    fn selects_and_formats_are_checked() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "color": {"type": "string", "enum": ["red", "green"]},
                "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}]},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 2},
                "mail": {"type": "string", "format": "email"},
                "day": {"type": "string", "format": "date"}
            }
        }));
        assert!(check_content(&s, &json!({"color": "red", "size": "s", "tags": ["a", "b"], "mail": "a@b.io", "day": "2026-07-28"})).is_ok());
        assert!(check_content(&s, &json!({"color": "blue"})).is_err());
        assert!(check_content(&s, &json!({"size": "m"})).is_err());
        assert!(check_content(&s, &json!({"tags": ["c"]})).is_err());
        assert!(check_content(&s, &json!({"tags": ["a", "b", "a"]})).is_err());
        assert!(check_content(&s, &json!({"mail": "nope"})).is_err());
        assert!(check_content(&s, &json!({"day": "28/07/2026"})).is_err());
    }

    #[test]
    fn primitives_round_trip() {
        let content = json!({"value": 42}).as_object().unwrap().clone();
        assert_eq!(i64::from_content(&content).unwrap(), 42);
        assert_eq!(f64::from_content(&content).unwrap(), 42.0);
        assert!(bool::from_content(&content).is_err());
        assert!(String::from_content(&content).is_err());
        assert!(check_content(&i64::requested_schema(), &json!({"value": 42})).is_ok());
        assert!(check_content(&bool::requested_schema(), &json!({"value": 42})).is_err());
    }

    #[test]
    fn huge_integers_do_not_wrap() {
        assert_eq!(as_integer(&json!(9.3e18)), None);
        assert_eq!(as_integer(&json!(-4.0)), Some(-4));
    }
}
