//! From JSON Schema to prompts: the fields of an elicitation form (MCP's restricted
//! schema: a flat object of strings, numbers, booleans and enums), how to read a typed
//! answer for one, and how to type a `key=value` tool argument.

use serde_json::{Map, Value};

/// What kind of answer a field takes, with its checks.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// Free text, with optional length bounds and a format hint (`email`, `uri`, `date`…).
    Text {
        /// Minimum length in characters.
        min_len: Option<u64>,
        /// Maximum length in characters.
        max_len: Option<u64>,
        /// The schema's `format`.
        format: Option<String>,
    },
    /// A whole number within optional bounds.
    Integer {
        /// Inclusive minimum.
        min: Option<Bound>,
        /// Inclusive maximum.
        max: Option<Bound>,
    },
    /// A number within optional bounds.
    Number {
        /// Inclusive minimum.
        min: Option<Bound>,
        /// Inclusive maximum.
        max: Option<Bound>,
    },
    /// Yes or no.
    Boolean,
    /// One of `values` (shown as `titles`).
    Choice {
        /// The values sent back.
        values: Vec<String>,
        /// What the user sees, one per value.
        titles: Vec<String>,
    },
    /// Any number of `values`, within optional bounds on how many.
    MultiChoice {
        /// The values sent back.
        values: Vec<String>,
        /// What the user sees, one per value.
        titles: Vec<String>,
        /// Minimum number of items.
        min_items: Option<u64>,
        /// Maximum number of items.
        max_items: Option<u64>,
    },
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The property name, the key of the answer.
    pub name: String,
    /// What to ask: the title, or the name.
    pub label: String,
    /// The description, if any.
    pub description: Option<String>,
    /// The kind of answer and its checks.
    pub kind: Kind,
    /// Whether the form needs it.
    pub required: bool,
    /// The schema's default.
    pub default: Option<Value>,
}

/// The fields of a form-mode `requestedSchema`, in the schema's order.
pub fn fields(schema: &Value) -> Vec<Field> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| Field {
            name: name.clone(),
            label: str_of(property, "title").unwrap_or_else(|| name.clone()),
            description: str_of(property, "description"),
            kind: kind(property),
            required: required.contains(&name.as_str()),
            default: property.get("default").cloned(),
        })
        .collect()
}

fn str_of(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// A number field's bound as its schema writes it: shown as written, where an `f64`
/// turned `u64::MAX` into `18446744073709552000`, and compared exactly when both sides are
/// whole numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound(serde_json::Number);

impl Bound {
    /// Whether `n` is below this bound.
    fn above(&self, n: &serde_json::Number) -> bool {
        compare(n, &self.0) == std::cmp::Ordering::Less
    }

    /// Whether `n` is above this bound.
    fn below(&self, n: &serde_json::Number) -> bool {
        compare(n, &self.0) == std::cmp::Ordering::Greater
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl From<i64> for Bound {
    fn from(n: i64) -> Self {
        Bound(n.into())
    }
}

/// Two JSON numbers in order: exactly when both are whole (`i64` or `u64`), as `f64`
/// otherwise.
fn compare(a: &serde_json::Number, b: &serde_json::Number) -> std::cmp::Ordering {
    let whole = |n: &serde_json::Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (whole(a), whole(b)) {
        (Some(a), Some(b)) => a.cmp(&b),
        _ => {
            let (a, b) = (
                a.as_f64().unwrap_or(f64::NAN),
                b.as_f64().unwrap_or(f64::NAN),
            );
            a.partial_cmp(&b).unwrap_or(std::cmp::Ordering::Equal)
        }
    }
}

fn num_of(value: &Value, key: &str) -> Option<Bound> {
    match value.get(key)? {
        Value::Number(n) => Some(Bound(n.clone())),
        _ => None,
    }
}

fn u64_of(value: &Value, key: &str) -> Option<u64> {
    value.get(key).and_then(Value::as_u64)
}

/// The values and titles of an enum schema: `enum` (+ legacy `enumNames`), or `oneOf` /
/// `anyOf` of `{const, title}`.
fn choices(schema: &Value) -> Option<(Vec<String>, Vec<String>)> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values.iter().map(plain).collect();
        let titles = schema
            .get("enumNames")
            .and_then(Value::as_array)
            .filter(|names| names.len() == values.len())
            .map(|names| names.iter().map(plain).collect())
            .unwrap_or_else(|| values.clone());
        return Some((values, titles));
    }
    let options = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)?;
    let mut values = Vec::new();
    let mut titles = Vec::new();
    for option in options {
        let value = option.get("const").map(plain)?;
        titles.push(str_of(option, "title").unwrap_or_else(|| value.clone()));
        values.push(value);
    }
    Some((values, titles))
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The schema's type; of a list such as `["integer", "null"]` (an `Option`), the first
/// that is not `null`.
fn type_of(property: &Value) -> &str {
    match property.get("type") {
        Some(Value::String(ty)) => ty,
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|ty| *ty != "null")
            .unwrap_or(""),
        _ => "",
    }
}

fn kind(property: &Value) -> Kind {
    let ty = type_of(property);
    if ty == "array" {
        let items = property.get("items").cloned().unwrap_or(Value::Null);
        let (values, titles) = choices(&items).unwrap_or_default();
        return Kind::MultiChoice {
            values,
            titles,
            min_items: u64_of(property, "minItems"),
            max_items: u64_of(property, "maxItems"),
        };
    }
    if let Some((values, titles)) = choices(property) {
        return Kind::Choice { values, titles };
    }
    match ty {
        "integer" => Kind::Integer {
            min: num_of(property, "minimum"),
            max: num_of(property, "maximum"),
        },
        "number" => Kind::Number {
            min: num_of(property, "minimum"),
            max: num_of(property, "maximum"),
        },
        "boolean" => Kind::Boolean,
        _ => Kind::Text {
            min_len: u64_of(property, "minLength"),
            max_len: u64_of(property, "maxLength"),
            format: str_of(property, "format"),
        },
    }
}

/// Reads a typed line for a text, integer or number field: `Ok(None)` for an empty
/// answer to an optional field, `Err` with a message to show when the answer does not
/// pass the field's checks. Booleans accept `y/yes/true` and `n/no/false`.
pub fn parse_input(field: &Field, text: &str) -> Result<Option<Value>, String> {
    let text = text.trim();
    if text.is_empty() {
        return if field.required {
            Err(format!("{} is required", field.label))
        } else {
            Ok(None)
        };
    }
    match &field.kind {
        Kind::Text {
            min_len, max_len, ..
        } => {
            let len = text.chars().count() as u64;
            if let Some(min) = min_len
                && len < *min
            {
                return Err(format!("at least {min} characters"));
            }
            if let Some(max) = max_len
                && len > *max
            {
                return Err(format!("at most {max} characters"));
            }
            Ok(Some(Value::String(text.to_owned())))
        }
        Kind::Integer { min, max } => {
            // Any whole number JSON holds: an `i64`, or a `u64` past it.
            let n: serde_json::Number = match text.parse::<i64>() {
                Ok(n) => n.into(),
                Err(_) => text
                    .parse::<u64>()
                    .map_err(|_| format!("{text:?} is not a whole number"))?
                    .into(),
            };
            bounds(&n, min.as_ref(), max.as_ref())?;
            Ok(Some(Value::Number(n)))
        }
        Kind::Number { min, max } => {
            let n = text
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .ok_or_else(|| format!("{text:?} is not a number"))?;
            bounds(&n, min.as_ref(), max.as_ref())?;
            Ok(Some(Value::Number(n)))
        }
        Kind::Boolean => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Some(Value::Bool(true))),
            "n" | "no" | "false" => Ok(Some(Value::Bool(false))),
            _ => Err("answer yes or no".into()),
        },
        Kind::Choice { values, .. } => {
            if values.iter().any(|v| v == text) {
                Ok(Some(Value::String(text.to_owned())))
            } else {
                Err(format!("one of: {}", values.join(", ")))
            }
        }
        Kind::MultiChoice { .. } => Err("choose from the list".into()),
    }
}

fn bounds(n: &serde_json::Number, min: Option<&Bound>, max: Option<&Bound>) -> Result<(), String> {
    if let Some(min) = min
        && min.above(n)
    {
        return Err(format!("at least {min}"));
    }
    if let Some(max) = max
        && max.below(n)
    {
        return Err(format!("at most {max}"));
    }
    Ok(())
}

/// A short description of a property's type for `saga tools`: `string`, `integer
/// (1..=20)`, `one of a|b`, `string?` is not used: requiredness is shown separately.
pub fn describe_type(property: &Value) -> String {
    let ty = describe_kind(property);
    if is_nullable(property) {
        format!("{ty} or null")
    } else {
        ty
    }
}

/// Whether `null` is a value the schema allows: a type list with `"null"` (an `Option`
/// as schemars writes it), or an `anyOf`/`oneOf` with a `{"type": "null"}` branch.
fn is_nullable(property: &Value) -> bool {
    let null_type = |schema: &Value| match schema.get("type") {
        Some(Value::String(ty)) => ty == "null",
        Some(Value::Array(types)) => types.iter().any(|ty| ty == "null"),
        _ => false,
    };
    null_type(property)
        || ["anyOf", "oneOf"].iter().any(|key| {
            property
                .get(*key)
                .and_then(Value::as_array)
                .is_some_and(|branches| branches.iter().any(null_type))
        })
}

fn describe_kind(property: &Value) -> String {
    match kind(property) {
        Kind::Text { format, .. } => {
            let ty = match type_of(property) {
                "" => "any",
                ty => ty,
            };
            match format {
                Some(format) => format!("{ty} ({format})"),
                None => ty.to_owned(),
            }
        }
        Kind::Integer { min, max } => with_range("integer", min.as_ref(), max.as_ref()),
        Kind::Number { min, max } => with_range("number", min.as_ref(), max.as_ref()),
        Kind::Boolean => "boolean".into(),
        Kind::Choice { values, .. } => format!("one of {}", values.join("|")),
        Kind::MultiChoice { values, .. } if !values.is_empty() => {
            format!("list of {}", values.join("|"))
        }
        Kind::MultiChoice { .. } => "array".into(),
    }
}

fn with_range(name: &str, min: Option<&Bound>, max: Option<&Bound>) -> String {
    match (min, max) {
        (None, None) => name.into(),
        (Some(min), None) => format!("{name} (>= {min})"),
        (None, Some(max)) => format!("{name} (<= {max})"),
        (Some(min), Some(max)) => format!("{name} ({min}..={max})"),
    }
}

/// Parses `key=value` tool arguments. A value is typed by the tool's input schema when it
/// names the key: a `string` property keeps the text as it is; otherwise the value is
/// JSON when it parses as JSON, else a string.
pub fn parse_arguments(
    pairs: &[String],
    input_schema: Option<&Map<String, Value>>,
) -> Result<Map<String, Value>, String> {
    let properties = input_schema
        .and_then(|schema| schema.get("properties"))
        .and_then(Value::as_object);
    let mut arguments = Map::new();
    for pair in pairs {
        let Some((key, raw)) = pair.split_once('=') else {
            return Err(format!("argument {pair:?} is not key=value"));
        };
        if key.is_empty() {
            return Err(format!("argument {pair:?} has an empty key"));
        }
        let declared = properties
            .and_then(|p| p.get(key))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str);
        let value = match declared {
            Some("string") => Value::String(raw.to_owned()),
            _ => serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned())),
        };
        arguments.insert(key.to_owned(), value);
    }
    Ok(arguments)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> Value {
        json!({
            "type": "object",
            "properties": {
                "target": {"type": "string", "description": "Where to deploy.", "minLength": 2},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 20, "default": 3},
                "region": {"type": "string", "enum": ["eu-west", "us-east"]},
                "tier": {"type": "string", "oneOf": [
                    {"const": "gold", "title": "Gold"}, {"const": "free", "title": "Free"}]},
                "notify": {"type": "boolean", "title": "Notify me"},
                "ratio": {"type": "number", "maximum": 1.5},
                "zones": {"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 1}
            },
            "required": ["target", "replicas", "region"]
        })
    }

    fn field<'a>(fields: &'a [Field], name: &str) -> &'a Field {
        fields.iter().find(|f| f.name == name).expect("field")
    }

    #[test]
    fn maps_every_kind_of_form_field() {
        let fields = fields(&form());
        assert_eq!(fields.len(), 7);
        let target = field(&fields, "target");
        assert!(target.required);
        assert_eq!(target.description.as_deref(), Some("Where to deploy."));
        assert_eq!(
            target.kind,
            Kind::Text {
                min_len: Some(2),
                max_len: None,
                format: None
            }
        );
        let replicas = field(&fields, "replicas");
        assert_eq!(
            replicas.kind,
            Kind::Integer {
                min: Some(Bound::from(1)),
                max: Some(Bound::from(20))
            }
        );
        assert_eq!(replicas.default, Some(json!(3)));
        assert_eq!(
            field(&fields, "region").kind,
            Kind::Choice {
                values: vec!["eu-west".into(), "us-east".into()],
                titles: vec!["eu-west".into(), "us-east".into()],
            }
        );
        assert_eq!(
            field(&fields, "tier").kind,
            Kind::Choice {
                values: vec!["gold".into(), "free".into()],
                titles: vec!["Gold".into(), "Free".into()],
            }
        );
        let notify = field(&fields, "notify");
        assert_eq!(notify.kind, Kind::Boolean);
        assert_eq!(notify.label, "Notify me");
        assert!(!notify.required);
        assert!(matches!(
            field(&fields, "zones").kind,
            Kind::MultiChoice {
                min_items: Some(1),
                ..
            }
        ));
    }

    #[test]
    fn checks_typed_answers_against_the_schema() {
        let fields = fields(&form());
        let replicas = field(&fields, "replicas");
        assert_eq!(parse_input(replicas, "5"), Ok(Some(json!(5))));
        assert!(parse_input(replicas, "0").is_err());
        assert!(parse_input(replicas, "21").is_err());
        assert!(parse_input(replicas, "2.5").is_err());
        assert!(parse_input(replicas, "").is_err(), "required");
        let target = field(&fields, "target");
        assert!(parse_input(target, "x").is_err(), "minLength");
        assert_eq!(parse_input(target, " eu "), Ok(Some(json!("eu"))));
        let ratio = field(&fields, "ratio");
        assert_eq!(parse_input(ratio, ""), Ok(None), "optional");
        assert_eq!(parse_input(ratio, "1.25"), Ok(Some(json!(1.25))));
        assert!(parse_input(ratio, "2").is_err());
        assert!(parse_input(ratio, "NaN").is_err());
        let notify = field(&fields, "notify");
        assert_eq!(parse_input(notify, "yes"), Ok(Some(json!(true))));
        assert!(parse_input(notify, "maybe").is_err());
    }

    #[test]
    fn types_arguments_by_json_or_schema() {
        let pairs: Vec<String> = ["a=x", "n=5", "o={\"k\":1}", "s=5", "e=a=b"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let schema = json!({"properties": {"s": {"type": "string"}}});
        let arguments = parse_arguments(&pairs, schema.as_object()).unwrap();
        assert_eq!(arguments["a"], json!("x"));
        assert_eq!(arguments["n"], json!(5));
        assert_eq!(arguments["o"], json!({"k": 1}));
        assert_eq!(arguments["s"], json!("5"), "typed as string by the schema");
        assert_eq!(arguments["e"], json!("a=b"));
        assert!(parse_arguments(&["novalue".into()], None).is_err());
        assert!(parse_arguments(&["=x".into()], None).is_err());
    }

    /// A `u64` field's bound is shown as the schema writes it, and checked exactly: the
    /// largest `u64` is taken, one past it is not a whole number JSON holds.
    #[test]
    fn a_u64_bound_is_shown_and_checked_exactly() {
        let schema = json!({"type": "integer", "minimum": 0, "maximum": u64::MAX});
        assert_eq!(describe_type(&schema), "integer (0..=18446744073709551615)");
        let kind = Kind::Integer {
            min: num_of(&schema, "minimum"),
            max: num_of(&schema, "maximum"),
        };
        let field = Field {
            name: "n".into(),
            label: "n".into(),
            description: None,
            kind,
            required: true,
            default: None,
        };
        assert_eq!(
            parse_input(&field, "18446744073709551615"),
            Ok(Some(json!(u64::MAX)))
        );
        assert!(parse_input(&field, "18446744073709551616").is_err());
        assert_eq!(parse_input(&field, "-1"), Err("at least 0".to_owned()));
        // Bounds past what an f64 holds exactly are compared exactly.
        let near = Kind::Integer {
            min: None,
            max: Some(Bound(serde_json::Number::from(9_007_199_254_740_993u64))),
        };
        let field = Field {
            kind: near,
            ..field
        };
        assert!(parse_input(&field, "9007199254740993").is_ok());
        assert_eq!(
            parse_input(&field, "9007199254740994"),
            Err("at most 9007199254740993".to_owned())
        );
    }

    #[test]
    fn describes_types_for_the_tool_list() {
        assert_eq!(
            describe_type(&json!({"type": "integer", "minimum": 1, "maximum": 20})),
            "integer (1..=20)"
        );
        assert_eq!(
            describe_type(&json!({"type": "string", "enum": ["a", "b"]})),
            "one of a|b"
        );
        assert_eq!(
            describe_type(&json!({"type": ["integer", "null"], "minimum": 0})),
            "integer (>= 0) or null"
        );
        // An `Option<String>` output field, as schemars writes it.
        assert_eq!(
            describe_type(&json!({"type": ["string", "null"]})),
            "string or null"
        );
        assert_eq!(
            describe_type(&json!({"anyOf": [{"$ref": "#/$defs/Room"}, {"type": "null"}]})),
            "any or null"
        );
        assert_eq!(
            describe_type(&json!({"type": "string", "format": "email"})),
            "string (email)"
        );
    }
}
