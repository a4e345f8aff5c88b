//! Integer formats that validators know. schemars writes a Rust integer's width as its
//! own `format` (`uint32`, `int8`, `uint`, …), which is no format of JSON Schema's or
//! OpenAPI's: clients that validate schemas (Mastra's, among others) warn at each. A tool's
//! schemas say the same with `int32`/`int64` where the type fits, and with `minimum` and
//! `maximum` for the range, which every validator reads.

use schemars::Schema;
use schemars::transform::{Transform, transform_subschemas};
use serde_json::{Map, Number, Value};

/// The rewrite as a schemars transform: applied where schemars generates a schema
/// (`args_schema`), and it walks only where a schema holds subschemas (`properties`,
/// `items`, `$defs`, `anyOf`, …), never into values (`default`, `examples`, `const`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct IntegerFormats;

impl Transform for IntegerFormats {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(object) = schema.as_object_mut() {
            rewrite_one(object);
        }
        transform_subschemas(self, schema);
    }
}

/// [`IntegerFormats`] over a schema made elsewhere (rmcp's output schema).
pub(crate) fn rewrite(schema: &mut Map<String, Value>) {
    let mut value = Value::Object(std::mem::take(schema));
    if let Ok(root) = <&mut Schema>::try_from(&mut value) {
        IntegerFormats.transform(root);
    }
    if let Value::Object(object) = value {
        *schema = object;
    }
}

/// The format, minimum and maximum that say what schemars' `format` said.
fn standard(format: &str) -> Option<(Option<&'static str>, i128, Option<i128>)> {
    Some(match format {
        "int8" => (Some("int32"), i8::MIN.into(), Some(i8::MAX.into())),
        "int16" => (Some("int32"), i16::MIN.into(), Some(i16::MAX.into())),
        "uint8" => (Some("int32"), 0, Some(u8::MAX.into())),
        "uint16" => (Some("int32"), 0, Some(u16::MAX.into())),
        "uint32" => (Some("int64"), 0, Some(u32::MAX.into())),
        // `isize`: int64 on every target saga builds for.
        "int" => (Some("int64"), i64::MIN.into(), Some(i64::MAX.into())),
        // Wider than int64: no format, and a maximum only where JSON numbers hold it.
        "uint64" | "uint" => (None, 0, Some(u64::MAX.into())),
        "uint128" => (None, 0, None),
        "int128" => (None, i128::MIN, None),
        _ => return None,
    })
}

fn rewrite_one(schema: &mut Map<String, Value>) {
    let is_integer = match schema.get("type") {
        Some(Value::String(ty)) => ty == "integer",
        Some(Value::Array(types)) => types.iter().any(|ty| ty == "integer"),
        _ => false,
    };
    let Some(Value::String(format)) = schema.get("format") else {
        return;
    };
    let Some((format, minimum, maximum)) = is_integer.then(|| standard(format)).flatten() else {
        return;
    };
    match format {
        Some(format) => {
            schema.insert("format".to_owned(), Value::String(format.to_owned()));
        }
        None => {
            schema.remove("format");
        }
    }
    // A bound the schema states already (`#[schemars(range(..))]`) is the narrower one.
    if let Some(minimum) = number(minimum) {
        schema.entry("minimum").or_insert(minimum);
    }
    if let Some(maximum) = maximum.and_then(number) {
        schema.entry("maximum").or_insert(maximum);
    }
}

/// `value` as a JSON number, where one holds it exactly.
fn number(value: i128) -> Option<Value> {
    if let Ok(value) = i64::try_from(value) {
        return Some(Value::Number(Number::from(value)));
    }
    u64::try_from(value)
        .ok()
        .map(|value| Value::Number(Number::from(value)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rewritten(schema: Value) -> Value {
        let Value::Object(mut object) = schema else {
            panic!("an object")
        };
        rewrite(&mut object);
        Value::Object(object)
    }

    #[test]
    fn each_width_becomes_a_known_format_and_its_range() {
        let schema = rewritten(json!({"type": "object", "properties": {
            "a": {"type": "integer", "format": "uint32", "minimum": 0},
            "b": {"type": ["integer", "null"], "format": "uint8", "minimum": 0},
            "c": {"type": "integer", "format": "int16"},
            "d": {"type": "integer", "format": "uint64", "minimum": 0},
            "e": {"type": "integer", "format": "int64"},
            "f": {"type": "integer", "format": "uint32", "minimum": 1, "maximum": 20},
            "g": {"type": "string", "format": "uint32"},
            "format": {"type": "string"},
            "h": {"type": "array", "items": {"type": "integer", "format": "uint16", "minimum": 0}}
        }}));
        let p = &schema["properties"];
        assert_eq!(
            p["a"],
            json!({"type": "integer", "format": "int64", "minimum": 0, "maximum": 4294967295u64})
        );
        assert_eq!(
            p["b"],
            json!({"type": ["integer", "null"], "format": "int32", "minimum": 0, "maximum": 255})
        );
        assert_eq!(
            p["c"],
            json!({"type": "integer", "format": "int32", "minimum": -32768, "maximum": 32767})
        );
        assert_eq!(
            p["d"],
            json!({"type": "integer", "minimum": 0, "maximum": u64::MAX})
        );
        assert_eq!(
            p["e"],
            json!({"type": "integer", "format": "int64"}),
            "a known format stays"
        );
        assert_eq!(
            p["f"],
            json!({"type": "integer", "format": "int64", "minimum": 1, "maximum": 20}),
            "its own range stays"
        );
        assert_eq!(
            p["g"],
            json!({"type": "string", "format": "uint32"}),
            "not an integer: untouched"
        );
        assert_eq!(
            p["format"],
            json!({"type": "string"}),
            "a property named format"
        );
        assert_eq!(
            p["h"]["items"],
            json!({"type": "integer", "format": "int32", "minimum": 0, "maximum": 65535})
        );
    }

    #[test]
    fn definitions_are_rewritten_too() {
        let schema = rewritten(json!({"$defs": {"Room": {"type": "object", "properties": {
            "seats": {"type": "integer", "format": "uint", "minimum": 0}
        }}}}));
        assert_eq!(
            schema["$defs"]["Room"]["properties"]["seats"],
            json!({"type": "integer", "minimum": 0, "maximum": u64::MAX})
        );
    }
}
