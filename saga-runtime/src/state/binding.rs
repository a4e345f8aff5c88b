//! What a token is bound to: the request that started the saga and who sent it.

use ring::digest::{Context, SHA256, digest};
use serde_json::{Map, Value};

/// The request a token belongs to. Its digest goes into the AEAD's associated data, so a
/// token presented for another tool, method, principal or set of arguments fails to open.
///
/// ```
/// use saga_runtime::state::Binding;
/// use serde_json::json;
///
/// let a = Binding::new("deploy", "tools/call", "alice", json!({"x": 1, "y": 2}).as_object());
/// let b = Binding::new("deploy", "tools/call", "alice", json!({"y": 2, "x": 1}).as_object());
/// assert_eq!(a, b, "key order does not matter");
/// let c = Binding::new("deploy", "tools/call", "bob", json!({"x": 1, "y": 2}).as_object());
/// assert_ne!(a, c);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Binding {
    digest: [u8; 32],
}

impl Binding {
    /// Binds to a tool (or prompt, or resource) name, the JSON-RPC method, the principal,
    /// and the request's arguments. Absent arguments and `{}` bind the same.
    pub fn new(
        name: &str,
        method: &str,
        principal: &str,
        arguments: Option<&Map<String, Value>>,
    ) -> Self {
        // Sized for usual arguments at once: grown from empty, the buffer was reallocated
        // at every doubling, several times for every request.
        let mut canonical = Vec::with_capacity(256);
        match arguments {
            Some(map) => write_object(map, &mut canonical),
            None => canonical.extend_from_slice(b"{}"),
        }
        // ring's SHA-256: every request computes this, and ring has vector code for CPUs
        // without the SHA extensions, where `sha2` falls back to scalar code.
        let mut hasher = Context::new(&SHA256);
        hasher.update(b"saga/binding/v1\0");
        for part in [name.as_bytes(), method.as_bytes(), principal.as_bytes()] {
            hasher.update(&(part.len() as u64).to_be_bytes());
            hasher.update(part);
        }
        hasher.update(digest(&SHA256, &canonical).as_ref());
        let mut digest = [0; 32];
        digest.copy_from_slice(hasher.finish().as_ref());
        Self { digest }
    }

    pub(crate) fn digest(&self) -> &[u8; 32] {
        &self.digest
    }
}

/// Writes JSON with object keys sorted and no whitespace, so that two encodings of the
/// same arguments hash the same whatever order the client wrote them in.
pub(crate) fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => write_object(map, out),
        Value::Array(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        Value::String(text) => write_string(text, out),
        scalar => write_json(scalar, out),
    }
}

fn write_object(map: &Map<String, Value>, out: &mut Vec<u8>) {
    // On the stack for the usual handful of keys: every request binds its arguments.
    let mut entries: smallvec::SmallVec<[(&String, &Value); 8]> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.push(b'{');
    for (index, (key, value)) in entries.into_iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write_string(key, out);
        out.push(b':');
        write_canonical(value, out);
    }
    out.push(b'}');
}

pub(crate) fn write_string(text: &str, out: &mut Vec<u8>) {
    write_json(text, out);
}

/// `value` as compact JSON, written in place: the same text as its `Display`, without the
/// intermediate `String`.
fn write_json<T: serde::Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) {
    // Writing a string or a scalar into a `Vec` cannot fail: no I/O, and no map keys to
    // reject.
    let _ = serde_json::to_writer(out, value);
}

/// The principal of a request that carries no identity (stdio, or HTTP without an
/// `Authorization` header).
pub const ANONYMOUS: &str = "anonymous";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A binding is sealed into every token: its bytes must not change with the code that
    /// computes them. This is the definition, written with another SHA-256.
    #[test]
    fn the_digest_is_the_one_tokens_were_sealed_with() {
        use sha2::{Digest as _, Sha256};
        let arguments =
            json!({"replicas": 3, "initial_arg": "x", "nested": {"b": 1.5, "a": [true, null]}});
        let mut canonical = Vec::new();
        write_object(arguments.as_object().unwrap(), &mut canonical);
        let mut expected = Sha256::new();
        expected.update(b"saga/binding/v1\0");
        for part in ["deploy", "tools/call", "alice"] {
            expected.update((part.len() as u64).to_be_bytes());
            expected.update(part);
        }
        expected.update(Sha256::digest(&canonical));
        let expected: [u8; 32] = expected.finalize().into();
        let binding = Binding::new("deploy", "tools/call", "alice", arguments.as_object());
        assert_eq!(binding.digest(), &expected);
        assert_eq!(
            canonical,
            br#"{"initial_arg":"x","nested":{"a":[true,null],"b":1.5},"replicas":3}"#
        );
    }

    #[test]
    fn nested_key_order_is_irrelevant() {
        let a = json!({"outer": {"b": [1, {"d": 1, "c": 2}], "a": null}});
        let b = json!({"outer": {"a": null, "b": [1, {"c": 2, "d": 1}]}});
        assert_eq!(
            Binding::new("t", "m", "p", a.as_object()),
            Binding::new("t", "m", "p", b.as_object())
        );
    }

    #[test]
    fn every_component_matters() {
        let args = json!({"x": 1});
        let base = Binding::new("t", "m", "p", args.as_object());
        assert_ne!(base, Binding::new("u", "m", "p", args.as_object()));
        assert_ne!(base, Binding::new("t", "n", "p", args.as_object()));
        assert_ne!(base, Binding::new("t", "m", "q", args.as_object()));
        assert_ne!(
            base,
            Binding::new("t", "m", "p", json!({"x": 2}).as_object())
        );
        assert_ne!(
            base,
            Binding::new("t", "m", "p", json!({"x": "1"}).as_object())
        );
    }

    #[test]
    fn fields_cannot_slide_into_each_other() {
        assert_ne!(
            Binding::new("ab", "c", "p", None),
            Binding::new("a", "bc", "p", None)
        );
    }

    #[test]
    fn absent_arguments_equal_empty_object() {
        assert_eq!(
            Binding::new("t", "m", "p", None),
            Binding::new("t", "m", "p", json!({}).as_object())
        );
    }
}
