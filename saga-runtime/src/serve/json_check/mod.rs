//! The first look at a request body, before anything builds a value from it: it must be
//! one JSON value, nested no deeper and holding no more values than the limits allow,
//! with no object naming a key twice. This walks the text once and allocates only the
//! keys of the object being read, so a hostile body costs its size and nothing more.
//!
//! A request the direct path serves (the usual MRTR `tools/call`, a stateless
//! `tools/list`) is checked while it is read instead ([`typed::read_within`]): the same
//! counts in the same pass that builds its params.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use smallvec::SmallVec;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

// The direct path's one-pass read (`typed::read_within`); without HTTP nothing reads it.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) mod typed;

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

/// Checks `body` against `budget`, and reads the JSON-RPC envelope's shape on the way, so
/// the body is walked once.
fn walk(body: &[u8], budget: JsonBudget) -> Result<Envelope, JsonProblem> {
    walk_with(body, Walk::new(budget))
}

fn walk_with(body: &[u8], mut walk: Walk) -> Result<Envelope, JsonProblem> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    // serde_json's own recursion guard (128) stays on as a backstop.
    let outcome = Node(&mut walk, None)
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end());
    match (outcome, walk.refusal) {
        (_, Some(refusal)) => Err(JsonProblem::Refused(refusal)),
        (Ok(()), None) => Ok(walk.envelope),
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
    /// Whether an object may name a key twice (a walk that looks for reserved keys only).
    repeats_allowed: bool,
    /// What the top-level object says of itself.
    envelope: Envelope,
}

/// A top-level field whose value the envelope records.
#[derive(Clone, Copy)]
enum Field {
    Jsonrpc,
    Id,
    Method,
}

/// The kind of a recorded value, all the envelope needs of it.
#[derive(Debug, Default, Clone, PartialEq)]
enum Seen {
    #[default]
    Absent,
    Text(String),
    /// A string too long to keep (over [`KEPT_TEXT`] bytes).
    LongText,
    /// An integer, kept: a request's id is one.
    Integer(i128),
    Other,
}

/// The longest top-level string kept: every JSON-RPC version and MCP method is shorter.
const KEPT_TEXT: usize = 256;

impl Walk {
    fn new(budget: JsonBudget) -> Self {
        Self {
            budget,
            depth: 0,
            values: 0,
            refusal: None,
            repeats_allowed: false,
            envelope: Envelope::default(),
        }
    }

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

/// A value to walk; `Some(field)` when it is that top-level field of the message.
struct Node<'w>(&'w mut Walk, Option<Field>);

impl Node<'_> {
    fn record(&mut self, seen: Seen) {
        let envelope = &mut self.0.envelope;
        match self.1 {
            Some(Field::Jsonrpc) => envelope.jsonrpc = seen,
            Some(Field::Id) => envelope.id = seen,
            Some(Field::Method) => {
                envelope.method_too_long = seen == Seen::LongText;
                envelope.method = match seen {
                    Seen::Text(method) => Some(method),
                    _ => None,
                };
                envelope.method_seen = true;
            }
            None => {}
        }
    }

    fn scalar<E: de::Error>(mut self, seen: Seen) -> Result<(), E> {
        self.record(seen);
        self.0.count().map_err(|why| self.0.refuse(why))
    }
}

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
        self.scalar(Seen::Other)
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<(), E> {
        self.scalar(Seen::Integer(n.into()))
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<(), E> {
        self.scalar(Seen::Integer(n.into()))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.scalar(Seen::Other)
    }
    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        // Only a top-level field's text is kept, and only the short ones it can be.
        let seen = match self.1 {
            Some(_) if text.len() <= KEPT_TEXT => Seen::Text(text.to_owned()),
            Some(_) => Seen::LongText,
            None => Seen::Other,
        };
        self.scalar(seen)
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.scalar(Seen::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.record(Seen::Other);
        let walk = self.0;
        if let Err(why) = walk.count().and_then(|()| walk.enter()) {
            return Err(walk.refuse(why));
        }
        while seq.next_element_seed(Node(walk, None))?.is_some() {}
        walk.depth -= 1;
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        self.record(Seen::Other);
        let walk = self.0;
        if let Err(why) = walk.count().and_then(|()| walk.enter()) {
            return Err(walk.refuse(why));
        }
        let top = walk.depth == 1;
        if top {
            walk.envelope.object = true;
        }
        let mut keys = Keys::default();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            if let Err(why) = walk.count() {
                return Err(walk.refuse(why));
            }
            if !walk.repeats_allowed && keys.contains(&key) {
                let why = "an object in the request names the same key twice".to_owned();
                return Err(walk.refuse(why));
            }
            if is_reserved(&key) {
                return Err(walk.refuse(RESERVED_KEY.to_owned()));
            }
            let field = if top {
                match &*key {
                    "jsonrpc" => Some(Field::Jsonrpc),
                    "id" => Some(Field::Id),
                    "method" => Some(Field::Method),
                    "result" => {
                        walk.envelope.result = true;
                        None
                    }
                    "error" => {
                        walk.envelope.error = true;
                        None
                    }
                    _ => None,
                }
            } else {
                None
            };
            map.next_value_seed(Node(walk, field))?;
            keys.insert(key);
        }
        walk.depth -= 1;
        Ok(())
    }
}

/// The prefix of the object keys serde_json gives a meaning of its own: an object whose
/// first key is `$serde_json::private::RawValue` is read into a `Value` by parsing that
/// key's string as another JSON document, which no limit here would see (its depth, its
/// values, its keys), and which can nest the same way again until the stack overflows.
const RESERVED_PREFIX: &str = "$serde_json::private::";

const RESERVED_KEY: &str = "an object key in the request starts with `$serde_json::private::`, which the JSON parser reserves";

/// Whether some object in `body` names a key serde_json reserves ([`RESERVED_PREFIX`]),
/// whatever its size: for stdio, whose lines have no budget but must not hide documents.
pub(crate) fn names_reserved_key(body: &[u8]) -> bool {
    // A key can start with `$` only where the text holds a `$` or a `\u` escape; a line
    // with neither is not parsed a second time.
    let may_hold_dollar = body.contains(&b'$') || body.windows(2).any(|pair| pair == b"\\u");
    if !may_hold_dollar {
        return false;
    }
    let unbounded = JsonBudget {
        max_depth: usize::MAX,
        max_values: usize::MAX,
    };
    let walk = Walk {
        repeats_allowed: true,
        ..Walk::new(unbounded)
    };
    matches!(walk_with(body, walk), Err(JsonProblem::Refused(why)) if why == RESERVED_KEY)
}

/// Whether `key` is one serde_json reserves ([`RESERVED_PREFIX`]).
fn is_reserved(key: &str) -> bool {
    key.starts_with(RESERVED_PREFIX)
}

/// An object's key, borrowed from the body unless it holds escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(key)))
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key.to_owned())))
            }
            fn visit_string<E: de::Error>(self, key: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The keys an object has named so far. Most objects name a handful, compared in place
/// and the first eight kept inline (every object of a request would otherwise allocate); past
/// [`Keys::SCANNED`] they move to a hash set, so a hostile object with many keys costs
/// linear time, not quadratic.
#[derive(Default)]
struct Keys<'de> {
    few: SmallVec<[Cow<'de, str>; 8]>,
    many: HashSet<Cow<'de, str>>,
}

impl<'de> Keys<'de> {
    const SCANNED: usize = 16;

    fn contains(&self, key: &str) -> bool {
        self.few.iter().any(|seen| seen == key) || self.many.contains(key)
    }

    fn insert(&mut self, key: Cow<'de, str>) {
        if self.few.len() < Self::SCANNED {
            self.few.push(key);
        } else {
            self.many.insert(key);
        }
    }
}

/// Only the shape of a JSON-RPC message's envelope, recorded during the walk.
#[derive(Debug, Default)]
pub(crate) struct Envelope {
    object: bool,
    jsonrpc: Seen,
    id: Seen,
    method_seen: bool,
    method_too_long: bool,
    pub(crate) method: Option<String>,
    result: bool,
    error: bool,
}

impl Envelope {
    /// Checks `body` against `budget` (see [`JsonProblem`]) and reads its envelope: a JSON-RPC 2.0 request,
    /// notification or response, whose id (when present) is a string or an integer. A
    /// sound body with another shape is `Refused`.
    pub(crate) fn read(body: &[u8], budget: JsonBudget) -> Result<Self, JsonProblem> {
        let envelope = walk(body, budget)?;
        let refuse = |why: &str| Err(JsonProblem::Refused(why.to_owned()));
        if !envelope.object {
            return refuse("a JSON-RPC message must be a JSON object");
        }
        if envelope.jsonrpc != Seen::Text("2.0".into()) {
            return refuse("`jsonrpc` must be \"2.0\"");
        }
        if !matches!(
            envelope.id,
            Seen::Absent | Seen::Text(_) | Seen::LongText | Seen::Integer(_)
        ) {
            return refuse("`id` must be a string or an integer");
        }
        if envelope.method_too_long {
            return refuse(&format!(
                "`method` is longer than {KEPT_TEXT} bytes: no such method exists"
            ));
        }
        if envelope.method_seen && envelope.method.is_none() {
            return refuse("`method` must be a string");
        }
        let is_response = envelope.result || envelope.error;
        if envelope.method.is_none() && !(is_response && envelope.has_id()) {
            return refuse(
                "a JSON-RPC message needs a `method`, or an `id` with a `result` or an `error`",
            );
        }
        Ok(envelope)
    }

    /// Whether the message has an id: a request or a response, not a notification.
    pub(crate) fn has_id(&self) -> bool {
        self.id != Seen::Absent
    }

    /// The message's id as the walk kept it: a string of at most 256 bytes or an
    /// integer; `None` for none, or a longer string (which the walk does not keep).
    pub(crate) fn id(&self) -> Option<serde_json::Value> {
        match &self.id {
            Seen::Text(text) => Some(serde_json::Value::String(text.clone())),
            Seen::Integer(n) => serde_json::Number::from_i128(*n).map(serde_json::Value::Number),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk alone, without the envelope's rules.
    fn check(body: &[u8], budget: JsonBudget) -> Result<(), JsonProblem> {
        walk(body, budget).map(|_| ())
    }

    const BUDGET: JsonBudget = JsonBudget {
        max_depth: 8,
        max_values: 100,
    };

    #[test]
    fn the_envelope_keeps_a_requests_id() {
        let id = |body: &str| Envelope::read(body.as_bytes(), BUDGET).ok()?.id();
        let request = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        assert_eq!(id(&request("7")), Some(serde_json::json!(7)));
        assert_eq!(id(&request("-7")), Some(serde_json::json!(-7)));
        assert_eq!(id(&request(r#""r-1""#)), Some(serde_json::json!("r-1")));
        assert_eq!(id(&request(&format!("\"{}\"", "x".repeat(300)))), None);
        assert_eq!(id(r#"{"jsonrpc":"2.0","method":"ping"}"#), None);
    }

    #[test]
    fn a_long_string_id_is_an_id_and_a_long_method_is_named_as_such() {
        let long = "x".repeat(300);
        let body = format!(r#"{{"jsonrpc":"2.0","id":"{long}","method":"ping"}}"#);
        let envelope = Envelope::read(body.as_bytes(), BUDGET).expect("a long string id is an id");
        assert!(envelope.has_id());
        let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{long}"}}"#);
        match Envelope::read(body.as_bytes(), BUDGET) {
            Err(JsonProblem::Refused(why)) => assert!(why.contains("longer than"), "{why}"),
            _ => panic!("a method of 300 bytes is refused"),
        }
    }

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

    /// A JSON document hidden in a string under serde_json's raw-value key, `levels` deep,
    /// the innermost an array nested `depth` deep.
    pub(super) fn hidden(levels: usize, depth: usize) -> String {
        let mut text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        for _ in 0..levels {
            let escaped = text.replace('\\', "\\u005c").replace('"', "\\u0022");
            text = format!(r#"{{"$serde_json::private::RawValue":"{escaped}"}}"#);
        }
        text
    }

    fn nesting(value: &serde_json::Value) -> usize {
        match value {
            serde_json::Value::Array(items) => 1 + items.iter().map(nesting).max().unwrap_or(0),
            serde_json::Value::Object(map) => 1 + map.values().map(nesting).max().unwrap_or(0),
            _ => 0,
        }
    }

    /// serde_json parses a string under its raw-value key as a document of its own when
    /// it reads a `Value`, past every limit the walk sees; the walk refuses the key.
    #[test]
    fn keys_the_json_parser_reserves_are_refused() {
        let body = format!(r#"{{"a":{}}}"#, hidden(2, 120));
        // What the walk stands between: a string two objects deep to it, 121 levels to a
        // `Value`.
        let value: serde_json::Value = serde_json::from_str(&body).expect("serde_json reads it");
        assert!(nesting(&value) > 100, "{}", nesting(&value));
        for body in [
            body.clone(),
            r#"{"$serde_json::private::RawValue":"1"}"#.to_owned(),
            r#"{"a":1,"$serde_json::private::Number":"1"}"#.to_owned(),
            r#"[{"$serde_json::private::Raw\u0056alue":"[]"}]"#.to_owned(),
        ] {
            assert!(
                matches!(check(body.as_bytes(), BUDGET), Err(JsonProblem::Refused(why)) if why.contains("reserves")),
                "{body}"
            );
        }
        // A string value, or a key that only contains the prefix, is ordinary.
        let body = br#"{"a":"$serde_json::private::RawValue","x$serde_json::private::":1}"#;
        assert_eq!(check(body, BUDGET), Ok(()));
    }

    #[test]
    fn duplicates_are_found_past_the_scanned_keys_and_through_escapes() {
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        let unique = format!("{{{}}}", many.join(","));
        assert_eq!(check(unique.as_bytes(), BUDGET), Ok(()));
        for repeated in ["k3", "k30"] {
            let body = format!("{{{},\"{repeated}\":0}}", many.join(","));
            assert!(
                matches!(check(body.as_bytes(), BUDGET), Err(JsonProblem::Refused(why)) if why.contains("twice")),
                "{repeated}"
            );
        }
        // `\u0061` is `a`: the same key, spelled with an escape.
        let escaped = br#"{"a":1,"\u0061":2}"#;
        assert!(
            matches!(check(escaped, BUDGET), Err(JsonProblem::Refused(why)) if why.contains("twice"))
        );
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
        assert!(Envelope::read(br#"{"jsonrpc":"2.0","id":"a","method":"m"}"#, BUDGET).is_ok());
        assert!(Envelope::read(br#"{"jsonrpc":"2.0","method":"notifications/x"}"#, BUDGET).is_ok());
        assert!(Envelope::read(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#, BUDGET).is_ok());
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
                Envelope::read(bad, BUDGET).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
