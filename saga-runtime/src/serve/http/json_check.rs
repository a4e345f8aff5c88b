//! The first look at a request body, before anything builds a value from it: it must be
//! one JSON value, nested no deeper and holding no more values than the limits allow,
//! with no object naming a key twice. This walks the text once and allocates only the
//! keys of the object being read, so a hostile body costs its size and nothing more.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Why a body was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JsonProblem {
    /// Not JSON: JSON-RPC's `-32700 Parse error`.
    Syntax(String),
    /// JSON, but over a limit or with a duplicate key: `-32600 Invalid Request`.
    Refused(String),
}

/// The limits the walk enforces.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JsonBudget {
    pub(crate) max_depth: usize,
    pub(crate) max_values: usize,
}

/// Checks `body` against `budget`.
pub(crate) fn check(body: &[u8], budget: JsonBudget) -> Result<(), JsonProblem> {
    let mut walk = Walk {
        budget,
        depth: 0,
        values: 0,
        refusal: None,
    };
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    // serde_json's own recursion guard (128) stays on as a backstop.
    let outcome = Node(&mut walk)
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end());
    match (outcome, walk.refusal) {
        (_, Some(refusal)) => Err(JsonProblem::Refused(refusal)),
        (Ok(()), None) => Ok(()),
        (Err(error), None) if error.is_syntax() || error.is_eof() => {
            Err(JsonProblem::Syntax(error.to_string()))
        }
        (Err(error), None) => Err(JsonProblem::Refused(error.to_string())),
    }
}

struct Walk {
    budget: JsonBudget,
    depth: usize,
    values: usize,
    /// Set when a limit is crossed; the walk then fails with a custom error.
    refusal: Option<String>,
}

impl Walk {
    fn count(&mut self) -> Result<(), String> {
        self.values += 1;
        if self.values > self.budget.max_values {
            return Err(format!(
                "the request holds more than {} JSON values",
                self.budget.max_values
            ));
        }
        Ok(())
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > self.budget.max_depth {
            return Err(format!(
                "the request nests JSON deeper than {} levels",
                self.budget.max_depth
            ));
        }
        Ok(())
    }

    fn refuse<E: de::Error>(&mut self, why: String) -> E {
        let error = E::custom(&why);
        self.refusal = Some(why);
        error
    }
}

struct Node<'w>(&'w mut Walk);

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.0.count().map_err(|why| self.0.refuse(why))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.0.count().map_err(|why| self.0.refuse(why))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.0.count().map_err(|why| self.0.refuse(why))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.0.count().map_err(|why| self.0.refuse(why))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.0.count().map_err(|why| self.0.refuse(why))
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.0.count().map_err(|why| self.0.refuse(why))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let walk = self.0;
        if let Err(why) = walk.count().and_then(|()| walk.enter()) {
            return Err(walk.refuse(why));
        }
        while seq.next_element_seed(Node(walk))?.is_some() {}
        walk.depth -= 1;
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let walk = self.0;
        if let Err(why) = walk.count().and_then(|()| walk.enter()) {
            return Err(walk.refuse(why));
        }
        let mut keys = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if let Err(why) = walk.count() {
                return Err(walk.refuse(why));
            }
            if !keys.insert(key) {
                let why = "an object in the request names the same key twice".to_owned();
                return Err(walk.refuse(why));
            }
            map.next_value_seed(Node(walk))?;
        }
        walk.depth -= 1;
        Ok(())
    }
}

/// Only the shape of a JSON-RPC message's envelope, read without building its params.
#[derive(serde::Deserialize)]
pub(crate) struct Envelope {
    jsonrpc: Option<serde_json::Value>,
    id: Option<serde_json::Value>,
    pub(crate) method: Option<String>,
    result: Option<IgnoredAny>,
    error: Option<IgnoredAny>,
}

impl Envelope {
    /// Reads the envelope of a body that passed [`check`]: a JSON-RPC 2.0 request,
    /// notification or response, whose id (when present) is a string or an integer.
    pub(crate) fn read(body: &[u8]) -> Result<Self, String> {
        let envelope: Envelope = serde_json::from_slice(body)
            .map_err(|_| "a JSON-RPC message must be a JSON object".to_owned())?;
        if envelope.jsonrpc.as_ref().and_then(|v| v.as_str()) != Some("2.0") {
            return Err("`jsonrpc` must be \"2.0\"".into());
        }
        match &envelope.id {
            None => {}
            Some(serde_json::Value::String(_)) => {}
            Some(serde_json::Value::Number(n)) if n.is_i64() || n.is_u64() => {}
            Some(_) => return Err("`id` must be a string or an integer".into()),
        }
        let is_response = envelope.result.is_some() || envelope.error.is_some();
        if envelope.method.is_none() && !(is_response && envelope.id.is_some()) {
            return Err(
                "a JSON-RPC message needs a `method`, or an `id` with a `result` or an `error`"
                    .into(),
            );
        }
        Ok(envelope)
    }

    /// Whether the message has an id: a request or a response, not a notification.
    pub(crate) fn has_id(&self) -> bool {
        self.id.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: JsonBudget = JsonBudget {
        max_depth: 8,
        max_values: 100,
    };

    #[test]
    fn ordinary_messages_pass() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,{"b":null}]}}}"#;
        assert_eq!(check(body, BUDGET), Ok(()));
    }

    #[test]
    fn malformed_json_is_a_syntax_problem() {
        for body in [&b"{"[..], b"{\"a\":}", b"", b"[1,2", b"{} {}", b"nul"] {
            assert!(
                matches!(check(body, BUDGET), Err(JsonProblem::Syntax(_))),
                "{:?}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn duplicate_keys_are_refused_at_any_depth() {
        for body in [&br#"{"a":1,"a":2}"#[..], br#"{"x":{"id":1,"id":1}}"#] {
            assert!(
                matches!(check(body, BUDGET), Err(JsonProblem::Refused(why)) if why.contains("twice"))
            );
        }
    }

    #[test]
    fn depth_and_value_count_are_bounded() {
        let deep = format!("{}{}", "[".repeat(9), "]".repeat(9));
        assert!(
            matches!(check(deep.as_bytes(), BUDGET), Err(JsonProblem::Refused(why)) if why.contains("deeper"))
        );
        let shallow = format!("{}{}", "[".repeat(8), "]".repeat(8));
        assert_eq!(check(shallow.as_bytes(), BUDGET), Ok(()));
        let many = format!("[{}0]", "0,".repeat(100));
        assert!(
            matches!(check(many.as_bytes(), BUDGET), Err(JsonProblem::Refused(why)) if why.contains("values"))
        );
    }

    #[test]
    fn envelopes_follow_json_rpc_2() {
        assert!(Envelope::read(br#"{"jsonrpc":"2.0","id":"a","method":"m"}"#).is_ok());
        assert!(Envelope::read(br#"{"jsonrpc":"2.0","method":"notifications/x"}"#).is_ok());
        assert!(Envelope::read(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#).is_ok());
        for bad in [
            &br#"{"jsonrpc":"1.0","id":1,"method":"m"}"#[..],
            br#"{"id":1,"method":"m"}"#,
            br#"{"jsonrpc":"2.0","id":{"a":1},"method":"m"}"#,
            br#"{"jsonrpc":"2.0","id":[1],"method":"m"}"#,
            br#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            br#"{"jsonrpc":"2.0","id":1}"#,
            br#"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#,
        ] {
            assert!(
                Envelope::read(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
