//! SEP-2243's `Mcp-Param-*` headers: the arguments a tool's input schema marks with
//! `x-mcp-header`, and the check rmcp's transport makes of a `tools/call`'s headers
//! against them, made the same way for the direct path (`http::direct`), so that a call
//! rmcp would refuse is left to rmcp to refuse.
//!
//! What rmcp 3.11 reads (`transport/common/mcp_headers.rs`): an annotation is an
//! `x-mcp-header` string, not empty, on a property reached from the schema's root through
//! `properties` keys alone (nested ones too); any other is ignored. For each, the header
//! `Mcp-Param-<name>` given at most once, as text, and the argument at that path (not
//! `null`; a string, a boolean or a number, written as JSON writes it) are both absent,
//! or both present and equal once the header's Base64 wrapper is undone.

use http::{HeaderMap, HeaderName};
use rmcp::model::JsonObject;
use serde_json::Value;

/// SEP-2243's wrapper of a header value that is not plain ASCII: `=?base64?…?=`.
const BASE64_PREFIX: &str = "=?base64?";
const BASE64_SUFFIX: &str = "?=";

/// The annotated arguments of one tool's input schema.
#[derive(Debug, Default)]
pub(crate) struct ParamHeaders(Box<[Annotation]>);

/// One annotated argument: its path from the arguments' root, and its header's name
/// (`None` when `Mcp-Param-<name>` is not a header name: no request can carry it).
#[derive(Debug)]
struct Annotation {
    path: Box<[String]>,
    header: Option<HeaderName>,
}

impl ParamHeaders {
    /// The annotations of `schema`, as rmcp finds them.
    pub(crate) fn of(schema: &JsonObject) -> Self {
        let mut found = Vec::new();
        collect(schema.get("properties"), &mut Vec::new(), &mut found);
        Self(found.into_boxed_slice())
    }

    /// Whether rmcp's check passes for a call with `arguments` and `headers`.
    pub(crate) fn pass(&self, headers: &HeaderMap, arguments: Option<&JsonObject>) -> bool {
        self.0.iter().all(|annotation| {
            let sent = match &annotation.header {
                Some(name) => {
                    let mut values = headers.get_all(name).iter();
                    match (values.next(), values.next()) {
                        (None, _) => None,
                        (Some(value), None) => match value.to_str() {
                            Ok(value) => Some(value),
                            Err(_) => return false,
                        },
                        (Some(_), Some(_)) => return false,
                    }
                }
                None => None,
            };
            let argument = arguments
                .and_then(|arguments| value_at(arguments, &annotation.path))
                .and_then(as_header_text);
            match (sent, argument) {
                (None, None) => true,
                (Some(sent), Some(argument)) => decode(sent).is_some_and(|sent| *sent == *argument),
                _ => false,
            }
        })
    }
}

/// Each `x-mcp-header` string along `properties` chains under `properties`.
fn collect(properties: Option<&Value>, path: &mut Vec<String>, found: &mut Vec<Annotation>) {
    let Some(Value::Object(properties)) = properties else {
        return;
    };
    for (name, schema) in properties {
        path.push(name.clone());
        if let Some(Value::String(header)) = schema.get("x-mcp-header")
            && !header.is_empty()
        {
            found.push(Annotation {
                path: path.clone().into_boxed_slice(),
                header: HeaderName::try_from(format!("mcp-param-{header}")).ok(),
            });
        }
        collect(schema.get("properties"), path, found);
        path.pop();
    }
}

/// The value at `path` in `arguments`, every step present.
fn value_at<'a>(arguments: &'a JsonObject, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter()
        .try_fold(arguments.get(first)?, |value, key| value.get(key))
}

/// An argument as its header says it: a string as it is, a boolean or a number as JSON
/// writes it; `None` for `null`, an array or an object.
fn as_header_text(value: &Value) -> Option<std::borrow::Cow<'_, str>> {
    match value {
        Value::String(text) => Some(std::borrow::Cow::Borrowed(text)),
        Value::Bool(flag) => Some(std::borrow::Cow::Owned(flag.to_string())),
        Value::Number(number) => Some(std::borrow::Cow::Owned(number.to_string())),
        _ => None,
    }
}

/// A header value read as rmcp reads it: in SEP-2243's wrapper, standard Base64 of UTF-8
/// text; otherwise the value itself. `None` for a wrapper that does not decode, which
/// rmcp refuses.
pub(crate) fn decode(value: &str) -> Option<std::borrow::Cow<'_, str>> {
    use base64::Engine as _;
    match value
        .strip_prefix(BASE64_PREFIX)
        .and_then(|inner| inner.strip_suffix(BASE64_SUFFIX))
    {
        Some(inner) => {
            let bytes = base64::prelude::BASE64_STANDARD.decode(inner).ok()?;
            String::from_utf8(bytes).ok().map(std::borrow::Cow::Owned)
        }
        None => Some(std::borrow::Cow::Borrowed(value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> JsonObject {
        value.as_object().cloned().expect("an object")
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(HeaderName::try_from(*name).unwrap(), value.parse().unwrap());
        }
        headers
    }

    /// Annotations are found where rmcp finds them, and nowhere else.
    #[test]
    fn annotations_are_read_along_properties_only() {
        let schema = object(json!({
            "type": "object",
            "x-mcp-header": "Root",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "blank": {"type": "string", "x-mcp-header": ""},
                "number": {"type": "string", "x-mcp-header": 5},
                "nested": {"type": "object", "properties": {
                    "zone": {"type": "string", "x-mcp-header": "Zone"}
                }},
                "off": {"anyOf": [{"x-mcp-header": "Off"}]},
            },
            "$defs": {"d": {"x-mcp-header": "Def"}},
        }));
        let found = ParamHeaders::of(&schema);
        let paths: Vec<String> = found.0.iter().map(|a| a.path.join(".")).collect();
        assert_eq!(paths, ["region", "nested.zone"]);
        assert!(
            ParamHeaders::of(&object(json!({"type": "object"})))
                .0
                .is_empty()
        );
    }

    /// The check passes where rmcp's does, and only there.
    #[test]
    fn headers_are_checked_as_rmcp_checks_them() {
        let schema = object(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "flag": {"type": "boolean", "x-mcp-header": "Flag"},
        }}));
        let check = ParamHeaders::of(&schema);
        let args = object(json!({"region": "eu", "count": 3, "flag": true}));
        let all = [
            ("mcp-param-region", "eu"),
            ("Mcp-Param-Count", "3"),
            ("mcp-param-flag", "true"),
        ];
        assert!(check.pass(&headers(&all), Some(&args)));
        // Wrapped in Base64 ("eu").
        let wrapped = [all[1], all[2], ("mcp-param-region", "=?base64?ZXU=?=")];
        assert!(check.pass(&headers(&wrapped), Some(&args)));
        // An argument absent or null wants no header; then none may come.
        let some = object(json!({"region": "eu", "count": null}));
        assert!(check.pass(&headers(&[all[0]]), Some(&some)));
        assert!(!check.pass(&headers(&[all[0], all[1]]), Some(&some)));
        for (case, sent) in [
            ("missing", vec![all[0], all[1]]),
            ("wrong", vec![("mcp-param-region", "us"), all[1], all[2]]),
            (
                "number as written",
                vec![all[0], ("mcp-param-count", "3.0"), all[2]],
            ),
            ("twice", vec![all[0], all[0], all[1], all[2]]),
            (
                "a wrapper that does not decode",
                vec![("mcp-param-region", "=?base64?ZXU?="), all[1], all[2]],
            ),
        ] {
            assert!(!check.pass(&headers(&sent), Some(&args)), "{case}");
        }
        // An array or object argument is not a header's: its header must be absent.
        let listed = object(json!({"region": ["eu"], "count": 3, "flag": true}));
        assert!(check.pass(&headers(&all[1..]), Some(&listed)));
        assert!(!check.pass(&headers(&all), Some(&listed)));
    }

    /// `Mcp-Name` and `Mcp-Param-*` values decode alike.
    #[test]
    fn a_wrapped_value_is_decoded_as_rmcp_decodes_it() {
        assert_eq!(decode("probe").as_deref(), Some("probe"));
        assert_eq!(decode("=?base64?cHJvYmU=?=").as_deref(), Some("probe"));
        assert_eq!(decode("=?base64?w6lsYW4=?=").as_deref(), Some("\u{e9}lan"));
        assert_eq!(
            decode("=?base64?cHJvYmU=").as_deref(),
            Some("=?base64?cHJvYmU=")
        );
        for broken in ["=?base64?cHJvYmU?=", "=?base64?!!!?=", "=?base64?/w==?="] {
            assert_eq!(decode(broken), None, "{broken}");
        }
    }
}
