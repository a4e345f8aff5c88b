//! Form-mode elicitation: what a type asks for, and the check an answer must pass before
//! the tool sees it.

use serde_json::{Map, Value, json};

/// A type the user can be asked for with a form-mode elicitation.
///
/// Derive it with `#[derive(Elicit)]` on a struct of primitive fields. `String`, `bool`,
/// and every integer and float type implement it as a one-field form whose field is
/// `value`; an integer type's range is in the schema and checked (`elicit::<u8>` takes
/// 0 to 255).
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
    /// against [`Elicit::requested_schema`]; this is the typed read. A [`FormError`] says
    /// which field is wrong and why (a `String` reason converts with `?` or `.into()`); the
    /// tool sees it as [`SagaError::InvalidAnswer`](crate::engine::SagaError::InvalidAnswer).
    fn from_content(content: &Map<String, Value>) -> Result<Self, FormError>;

    /// [`Elicit::from_content`] given the content to keep: the runtime calls this one.
    /// The default borrows; an impl can move strings out instead of copying them.
    fn from_owned_content(content: Map<String, Value>) -> Result<Self, FormError> {
        Self::from_content(&content)
    }
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

fn single_field(content: &Map<String, Value>) -> Result<&Value, FormError> {
    content
        .get(VALUE_FIELD)
        .ok_or_else(|| FormError::new(format!("missing field `{VALUE_FIELD}`")))
}

impl Elicit for String {
    fn requested_schema() -> Map<String, Value> {
        single_field_schema(json!({"type": "string"}))
    }
    fn from_content(content: &Map<String, Value>) -> Result<Self, FormError> {
        single_field(content)?
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| FormError::of_field(VALUE_FIELD, "is not a string"))
    }
    fn from_owned_content(content: Map<String, Value>) -> Result<Self, FormError> {
        match content
            .into_iter()
            .find_map(|(name, value)| (name == VALUE_FIELD).then_some(value))
        {
            Some(Value::String(text)) => Ok(text),
            Some(_) => Err(FormError::of_field(VALUE_FIELD, "is not a string")),
            None => Err(FormError::new(format!("missing field `{VALUE_FIELD}`"))),
        }
    }
}

impl Elicit for bool {
    fn requested_schema() -> Map<String, Value> {
        single_field_schema(json!({"type": "boolean"}))
    }
    fn from_content(content: &Map<String, Value>) -> Result<Self, FormError> {
        single_field(content)?
            .as_bool()
            .ok_or_else(|| FormError::of_field(VALUE_FIELD, "is not a boolean"))
    }
}

impl Elicit for i64 {
    fn requested_schema() -> Map<String, Value> {
        single_field_schema(json!({"type": "integer"}))
    }
    fn from_content(content: &Map<String, Value>) -> Result<Self, FormError> {
        as_integer(single_field(content)?)
            .ok_or_else(|| FormError::of_field(VALUE_FIELD, "is not an integer"))
    }
}

impl Elicit for f64 {
    fn requested_schema() -> Map<String, Value> {
        single_field_schema(json!({"type": "number"}))
    }
    fn from_content(content: &Map<String, Value>) -> Result<Self, FormError> {
        single_field(content)?
            .as_f64()
            .ok_or_else(|| FormError::of_field(VALUE_FIELD, "is not a number"))
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
pub fn check_content(schema: &Map<String, Value>, content: &Value) -> Result<(), FormError> {
    ContentCheck::new(schema).check(content)
}

/// Why an answer does not fit its form, or cannot be read as the form's type: the field
/// (none when the error is about the whole answer) and the rule it breaks, in words a
/// person reads ("is above the maximum 240").
///
/// What [`Elicit::from_content`] and [`ElicitField::parse`] return; the tool meets it as
/// [`SagaError::InvalidAnswer`](crate::engine::SagaError::InvalidAnswer). The runtime's own
/// check of an answer against the form's schema makes one too, and its reason never quotes
/// the value the client sent: that reason goes back into the question asked again, and
/// into the log.
///
/// ```
/// use saga_runtime::prelude::*;
///
/// let error = FormError::new("is above the maximum 240").in_field("minutes");
/// assert_eq!(error.to_string(), "`minutes` is above the maximum 240");
/// assert_eq!(error.field(), Some("minutes"));
/// assert_eq!(error.reason(), "is above the maximum 240");
/// ```
///
/// [`ElicitField::parse`]: crate::engine::ElicitField::parse
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormError {
    pub(crate) field: Option<String>,
    pub(crate) rule: String,
}

impl FormError {
    /// An error about the answer or about one value, whose field is not named (yet):
    /// `reason` reads after the field's name, e.g. "is not a string".
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            field: None,
            rule: reason.into(),
        }
    }

    /// The same error about the field `name`; a field already named is kept.
    #[must_use]
    pub fn in_field(mut self, name: &str) -> Self {
        if self.field.is_none() {
            self.field = Some(name.to_owned());
        }
        self
    }

    /// The field the error is about, when it names one.
    pub fn field(&self) -> Option<&str> {
        self.field.as_deref()
    }

    /// What is wrong, without the field's name.
    pub fn reason(&self) -> &str {
        &self.rule
    }

    fn of_field(field: &str, rule: impl Into<String>) -> Self {
        Self::new(rule).in_field(field)
    }

    /// The sentence added to a question asked again: the field as its form names it,
    /// or "the answer" for a one-field form (whose one field no person named).
    pub(crate) fn asked_again_note(&self) -> String {
        match self.field.as_deref() {
            None => format!("\n\nYour last answer was not accepted: {}.", self.rule),
            Some(VALUE_FIELD) => format!(
                "\n\nYour last answer was not accepted: the answer {}.",
                self.rule
            ),
            Some(field) => format!(
                "\n\nYour last answer was not accepted: `{field}` {}.",
                self.rule
            ),
        }
    }
}

impl std::fmt::Display for FormError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.field {
            Some(field) => write!(f, "`{field}` {}", self.rule),
            None => f.write_str(&self.rule),
        }
    }
}

impl std::error::Error for FormError {}

/// A hand-written `from_content` can keep building its reasons as strings: `?` turns one
/// into a field-less [`FormError`].
impl From<String> for FormError {
    fn from(reason: String) -> Self {
        Self::new(reason)
    }
}

impl From<&str> for FormError {
    fn from(reason: &str) -> Self {
        Self::new(reason)
    }
}

/// A form-mode schema read once into the checks [`check_content`] makes: an answer type's
/// form is checked on every round that reads its answer, and walking the schema's JSON
/// each time was most of the check.
#[derive(Debug, Clone, Default)]
pub(crate) struct ContentCheck {
    required: Vec<String>,
    properties: Vec<(String, PropertyCheck)>,
    /// The fields whose schema gives a `default` (`#[elicit(default = …)]`), with it: an
    /// answer that leaves one out (or sends `null`) gets the default, as serde's
    /// `#[serde(default)]` would give it, whatever the client showed.
    defaults: Vec<(String, Value)>,
}

#[derive(Debug, Clone)]
enum PropertyCheck {
    String {
        length: Bounds<u64>,
        format: Option<String>,
        allowed: Vec<String>,
    },
    Number {
        integer: bool,
        /// Whether an answer above `i64::MAX` is a whole number the property takes: where
        /// its minimum is 0 or more and it has no maximum (a `u64` field: MCP's schema
        /// holds an `i64` bound, so a `u64`'s range cannot be written out). Elsewhere (an
        /// `i64` field, unbounded) such an answer is refused here, and asked again. An
        /// `i64` field given a minimum of 0 and no maximum takes it here and refuses it
        /// as out of range when it is read.
        above_i64: bool,
        range: Bounds<f64>,
    },
    Boolean,
    Array {
        items: Bounds<u64>,
        allowed: Vec<String>,
    },
    /// A property type form mode does not define: nothing this server sent, so the schema
    /// came from a tool author's hand-written Elicit impl; its parser is trusted.
    Unchecked,
}

/// A property's lower and upper bound, each optional, read from two schema keywords.
#[derive(Debug, Clone, Copy)]
struct Bounds<T> {
    min: Option<T>,
    max: Option<T>,
}

/// A bound as a reason shows it: as the schema's JSON writes it, not as Rust's `Display`,
/// which writes `f32::MAX` out in 39 digits.
trait Shown: PartialOrd + Copy {
    fn shown(self) -> String;
}

impl Shown for u64 {
    fn shown(self) -> String {
        self.to_string()
    }
}

impl Shown for f64 {
    fn shown(self) -> String {
        // Whole numbers as integers (`255`, not `255.0`); very large or small ones with an
        // exponent (`3.4028235e38`), as JSON writers print them.
        if self != 0.0 && !(1e-4..1e16).contains(&self.abs()) {
            format!("{self:e}")
        } else {
            self.to_string()
        }
    }
}

impl<T: Shown> Bounds<T> {
    fn read(property: &Value, [min, max]: [&str; 2], number: fn(&Value) -> Option<T>) -> Self {
        Self {
            min: property.get(min).and_then(number),
            max: property.get(max).and_then(number),
        }
    }

    fn is_set(&self) -> bool {
        self.min.is_some() || self.max.is_some()
    }

    /// `Err("{below} {min}{unit}")` or `Err("{above} {max}{unit}")` where `value` falls
    /// outside.
    fn check(&self, value: T, [below, above]: [&str; 2], unit: &str) -> Result<(), FormError> {
        if let Some(min) = self.min
            && value < min
        {
            return Err(FormError::new(format!("{below} {}{unit}", min.shown())));
        }
        if let Some(max) = self.max
            && value > max
        {
            return Err(FormError::new(format!("{above} {}{unit}", max.shown())));
        }
        Ok(())
    }
}

impl ContentCheck {
    pub(crate) fn new(schema: &Map<String, Value>) -> Self {
        let required = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| strings(names.iter()))
            .unwrap_or_default();
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| {
                properties
                    .iter()
                    .map(|(name, property)| (name.clone(), PropertyCheck::new(property)))
                    .collect()
            })
            .unwrap_or_default();
        let defaults = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| {
                properties
                    .iter()
                    .filter_map(|(name, property)| {
                        Some((name.clone(), property.get("default")?.clone()))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            required,
            properties,
            defaults,
        }
    }

    /// Whether a field of the form has a default.
    pub(crate) fn has_defaults(&self) -> bool {
        !self.defaults.is_empty()
    }

    /// Gives each field of `content` that is missing or `null` its default, if it has
    /// one. An accepted answer without content is the empty object here, when the form
    /// has defaults.
    pub(crate) fn fill_defaults(&self, content: &mut Option<Value>) {
        if self.defaults.is_empty() {
            return;
        }
        let content = content.get_or_insert_with(|| Value::Object(Map::new()));
        let Some(object) = content.as_object_mut() else {
            return;
        };
        for (name, default) in &self.defaults {
            if object.get(name).is_none_or(Value::is_null) {
                object.insert(name.clone(), default.clone());
            }
        }
    }

    pub(crate) fn check(&self, content: &Value) -> Result<(), FormError> {
        let content = content
            .as_object()
            .ok_or_else(|| FormError::new("content is not an object"))?;
        self.check_object(content)
    }

    pub(crate) fn check_object(&self, content: &Map<String, Value>) -> Result<(), FormError> {
        for name in &self.required {
            if content.get(name).is_none_or(Value::is_null) {
                return Err(FormError::of_field(name, "is required and is missing"));
            }
        }
        for (name, property) in &self.properties {
            match content.get(name) {
                None | Some(Value::Null) => {}
                Some(value) => property
                    .check(value)
                    .map_err(|misfit| misfit.in_field(name))?,
            }
        }
        Ok(())
    }
}

impl PropertyCheck {
    fn new(property: &Value) -> Self {
        match property.get("type").and_then(Value::as_str) {
            Some("string") => PropertyCheck::String {
                length: Bounds::read(property, ["minLength", "maxLength"], Value::as_u64),
                format: property
                    .get("format")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                allowed: allowed_constants(property),
            },
            Some(kind @ ("number" | "integer")) => PropertyCheck::Number {
                integer: kind == "integer",
                above_i64: property.get("maximum").is_none()
                    && property
                        .get("minimum")
                        .and_then(Value::as_f64)
                        .is_some_and(|minimum| minimum >= 0.0),
                range: Bounds::read(property, ["minimum", "maximum"], Value::as_f64),
            },
            Some("boolean") => PropertyCheck::Boolean,
            Some("array") => PropertyCheck::Array {
                items: Bounds::read(property, ["minItems", "maxItems"], Value::as_u64),
                allowed: property
                    .get("items")
                    .map(allowed_constants)
                    .unwrap_or_default(),
            },
            _ => PropertyCheck::Unchecked,
        }
    }

    fn check(&self, value: &Value) -> Result<(), FormError> {
        match self {
            PropertyCheck::String {
                length,
                format,
                allowed,
            } => {
                let text = value.as_str().ok_or("is not a string")?;
                if length.is_set() {
                    let chars = text.chars().count() as u64;
                    length.check(chars, ["is shorter than", "is longer than"], " characters")?;
                }
                if let Some(format) = format {
                    check_format(format, text)?;
                }
                if !allowed.is_empty() && !allowed.iter().any(|option| option == text) {
                    return Err(FormError::new(format!("is not one of {allowed:?}")));
                }
                Ok(())
            }
            PropertyCheck::Number {
                integer,
                above_i64,
                range,
            } => {
                let number = value.as_f64().ok_or("is not a number")?;
                // A whole number: an `i64` (or a float that is one, `3.0`), or, where the
                // property takes one (a `u64` field), a `u64` above `i64::MAX`.
                if *integer && as_integer(value).is_none() && !(*above_i64 && value.is_u64()) {
                    return Err("is not an integer".into());
                }
                range.check(number, ["is below the minimum", "is above the maximum"], "")
            }
            PropertyCheck::Boolean => value
                .as_bool()
                .map(drop)
                .ok_or_else(|| "is not a boolean".into()),
            PropertyCheck::Array { items, allowed } => {
                let values = value.as_array().ok_or("is not an array")?;
                items.check(
                    values.len() as u64,
                    ["has fewer than", "has more than"],
                    " items",
                )?;
                for item in values {
                    let text = item.as_str().ok_or("has an item that is not a string")?;
                    if !allowed.is_empty() && !allowed.iter().any(|option| option == text) {
                        return Err(FormError::new(format!("has an item not in {allowed:?}")));
                    }
                }
                Ok(())
            }
            PropertyCheck::Unchecked => Ok(()),
        }
    }
}

fn strings<'a>(values: impl Iterator<Item = &'a Value>) -> Vec<String> {
    values
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// The values a single- or multi-select accepts: `enum`, or the `const`s of
/// `oneOf` / `anyOf`.
fn allowed_constants(property: &Value) -> Vec<String> {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return strings(values.iter());
    }
    strings(
        ["oneOf", "anyOf"]
            .iter()
            .filter_map(|keyword| property.get(*keyword).and_then(Value::as_array))
            .flatten()
            .filter_map(|option| option.get("const")),
    )
}

fn check_format(format: &str, text: &str) -> Result<(), FormError> {
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
        Err(FormError::new(format!("is not a valid {format}")))
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

    /// A `u64` field's answer above `i64::MAX` is a whole number (it was refused as "not
    /// an integer", so such a field could never be answered with one).
    #[test]
    fn integers_above_i64_are_whole_numbers() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "serial": {"type": "integer", "minimum": 0},
                "count": {"type": "integer"},
                "few": {"type": "integer", "minimum": 0, "maximum": 10},
            },
        }));
        assert!(check_content(&s, &json!({"serial": u64::MAX})).is_ok());
        assert!(check_content(&s, &json!({"serial": -1})).is_err());
        assert!(check_content(&s, &json!({"serial": 0.5})).is_err());
        // Not where the property is unbounded (an `i64` field's) or has a maximum: refused
        // here, and so asked again, where the `i64`'s reading would fail the call.
        assert!(check_content(&s, &json!({"count": 1u64 << 63})).is_err());
        assert!(check_content(&s, &json!({"few": 1u64 << 63})).is_err());
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

    /// A form's check is read once and kept; the kept one judges as the one read for a
    /// single answer, with the same messages.
    #[test]
    fn a_kept_check_judges_as_a_fresh_one() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "color": {"type": "string", "enum": ["red", "green"], "minLength": 3},
                "size": {"type": "string", "anyOf": [{"const": "s"}], "format": "email"},
                "tags": {"type": "array", "items": {"oneOf": [{"const": "a"}]}, "minItems": 1},
                "n": {"type": "integer", "minimum": 1, "maximum": 3},
                "ok": {"type": "boolean"},
                "other": {"type": "object"}
            },
            "required": ["color", "n"]
        }));
        let kept = ContentCheck::new(&s);
        for content in [
            json!({"color": "red", "n": 2}),
            json!({"color": "blue", "n": 2}),
            json!({"color": "red", "n": 2.5}),
            json!({"color": "red", "n": 4, "tags": []}),
            json!({"color": "red", "n": 1, "tags": ["a", "b"]}),
            json!({"color": "red", "n": 1, "size": "s"}),
            json!({"color": "red", "n": 1, "ok": 1, "other": 2}),
            json!({"n": 1}),
            json!(7),
        ] {
            let fresh = check_content(&s, &content);
            assert_eq!(kept.check(&content), fresh, "{content}");
        }
        assert_eq!(
            kept.check(&json!({"color": "blue", "n": 2}))
                .map_err(|m| m.to_string()),
            Err(r#"`color` is not one of ["red", "green"]"#.to_owned())
        );
    }

    #[test]
    fn primitives_round_trip() {
        let content = json!({"value": 42}).as_object().unwrap().clone();
        assert_eq!(i64::from_content(&content).unwrap(), 42);
        assert_eq!(f64::from_content(&content).unwrap(), 42.0);
        assert!(bool::from_content(&content).is_err());
        assert!(String::from_content(&content).is_err());
        for content in [
            json!({"value": "prod"}),
            json!({"value": 4}),
            json!({"other": "x"}),
        ] {
            let content = content.as_object().unwrap().clone();
            assert_eq!(
                String::from_owned_content(content.clone()),
                String::from_content(&content)
            );
        }
        assert!(check_content(&i64::requested_schema(), &json!({"value": 42})).is_ok());
        assert!(check_content(&bool::requested_schema(), &json!({"value": 42})).is_err());
    }

    #[test]
    fn huge_integers_do_not_wrap() {
        assert_eq!(as_integer(&json!(9.3e18)), None);
        assert_eq!(as_integer(&json!(-4.0)), Some(-4));
    }
}
