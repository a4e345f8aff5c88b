//! The walk and a typed read in one pass: a `Deserializer` that counts every value
//! serde_json reads for a type exactly as the walk counts it (each scalar, array, object
//! and key once; each array and object one level deeper) and finds a key named twice in
//! any object, so a body read through [`read_within`] has passed the walk's checks.
//!
//! Why: the direct path would otherwise read every MRTR `tools/call` twice, once to check
//! it and once to build its params, and the walk alone was about a tenth of a request.
//!
//! It only ever accepts less than the walk. Whatever it cannot count as the walk does
//! fails the read, and the caller takes the two-pass path, which decides:
//!
//! - a value read as bytes (serde_json does not check that such a string is UTF-8);
//! - an enum (serde_json reads its tag without a visitor to count it);
//! - serde_json's raw values (captured as text, never visited);
//! - a key that is not read as a string, so it cannot be compared with the others.
//!
//! A value the type skips (`IgnoredAny`, an unknown field) is read by the walk's own
//! visitor, because serde_json skips it without checking its strings.
//!
//! What a refused body costs: the read builds values until it fails (never more than the
//! budget's count of them), and then the two passes run. So a hostile body that looks
//! like a call costs about one parse more than the walk alone would, bounded by the
//! same budget and body size.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{JsonBudget, Keys, Node, RESERVED_KEY, Walk, is_reserved};

/// `body` read as a `T`, when it is one JSON value within `budget` that names no key
/// twice in any object; `None` for every body the walk would refuse, and for some it
/// would pass (see the module docs).
pub(crate) fn read_within<'de, T: de::Deserialize<'de>>(
    body: &'de [u8],
    budget: JsonBudget,
) -> Option<T> {
    let mut walk = Walk::new(budget);
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let value = T::deserialize(Budgeted {
        inner: &mut deserializer,
        walk: &mut walk,
    })
    .ok()?;
    deserializer.end().ok()?;
    Some(value)
}

/// Why a read gave up: the caller reads the body in two passes instead.
fn two_passes<E: de::Error>() -> E {
    E::custom("this value is read in two passes")
}

/// `$method`s of `Deserializer` that hand the call to the inner deserializer, with the
/// visitor wrapped by `self.wrap`.
macro_rules! forward_to_inner {
    ($($method:ident $(($($arg:ident: $ty:ty),*))?;)*) => {$(
        fn $method<V: Visitor<'de>>(
            self,
            $($($arg: $ty,)*)?
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            let (inner, visitor) = self.wrap(visitor);
            inner.$method($($($arg,)*)? visitor)
        }
    )*};
}

/// The methods both deserializers below forward unchanged but for the visitor.
macro_rules! forward_reads {
    () => {
        forward_to_inner! {
            deserialize_any;
            deserialize_bool;
            deserialize_i8;
            deserialize_i16;
            deserialize_i32;
            deserialize_i64;
            deserialize_i128;
            deserialize_u8;
            deserialize_u16;
            deserialize_u32;
            deserialize_u64;
            deserialize_u128;
            deserialize_f32;
            deserialize_f64;
            deserialize_char;
            deserialize_str;
            deserialize_string;
            deserialize_option;
            deserialize_unit;
            deserialize_unit_struct(name: &'static str);
            deserialize_seq;
            deserialize_tuple(len: usize);
            deserialize_tuple_struct(name: &'static str, len: usize);
            deserialize_map;
            deserialize_struct(name: &'static str, fields: &'static [&'static str]);
            deserialize_identifier;
        }
    };
}

/// A value read for the type, counted against the walk's budget.
struct Budgeted<'w, D> {
    inner: D,
    walk: &'w mut Walk,
}

impl<'w, D> Budgeted<'w, D> {
    fn wrap<V>(self, visitor: V) -> (D, Counted<'w, V>) {
        let counted = Counted {
            visitor,
            walk: self.walk,
        };
        (self.inner, counted)
    }
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Budgeted<'_, D> {
    type Error = D::Error;

    forward_reads!();

    fn deserialize_bytes<V: Visitor<'de>>(self, _: V) -> Result<V::Value, D::Error> {
        Err(two_passes())
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, _: V) -> Result<V::Value, D::Error> {
        Err(two_passes())
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, D::Error> {
        Err(two_passes())
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        // serde_json's raw value asks for a newtype of this name and keeps the text
        // unread.
        if is_reserved(name) {
            return Err(two_passes());
        }
        let (inner, visitor) = self.wrap(visitor);
        inner.deserialize_newtype_struct(name, visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        Node(self.walk, None).deserialize(self.inner)?;
        visitor.visit_unit()
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// A visitor that counts what it is shown before showing it to the type's own.
struct Counted<'w, V> {
    visitor: V,
    walk: &'w mut Walk,
}

impl<V> Counted<'_, V> {
    fn count<E: de::Error>(&mut self) -> Result<(), E> {
        self.walk.count().map_err(E::custom)
    }
}

/// The scalar visits serde_json makes, each one value.
macro_rules! count_scalars {
    ($($method:ident($ty:ty);)*) => {$(
        fn $method<E: de::Error>(mut self, value: $ty) -> Result<V::Value, E> {
            self.count()?;
            self.visitor.$method(value)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Counted<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    count_scalars! {
        visit_bool(bool);
        visit_i64(i64);
        visit_i128(i128);
        visit_u64(u64);
        visit_u128(u128);
        visit_f64(f64);
        visit_str(&str);
        visit_borrowed_str(&'de str);
        visit_string(String);
    }

    fn visit_unit<E: de::Error>(mut self) -> Result<V::Value, E> {
        self.count()?;
        self.visitor.visit_unit()
    }

    fn visit_none<E: de::Error>(mut self) -> Result<V::Value, E> {
        self.count()?;
        self.visitor.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<V::Value, D::Error> {
        let walk = self.walk;
        self.visitor.visit_some(Budgeted { inner, walk })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, inner: D) -> Result<V::Value, D::Error> {
        let walk = self.walk;
        self.visitor.visit_newtype_struct(Budgeted { inner, walk })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, inner: A) -> Result<V::Value, A::Error> {
        let walk = self.walk;
        walk.count()
            .and_then(|()| walk.enter())
            .map_err(de::Error::custom)?;
        let value = self.visitor.visit_seq(CountedSeq {
            inner,
            walk: &mut *walk,
        })?;
        walk.depth -= 1;
        Ok(value)
    }

    fn visit_map<A: MapAccess<'de>>(self, inner: A) -> Result<V::Value, A::Error> {
        let walk = self.walk;
        walk.count()
            .and_then(|()| walk.enter())
            .map_err(de::Error::custom)?;
        let value = self.visitor.visit_map(CountedMap {
            inner,
            walk: &mut *walk,
            keys: Keys::default(),
        })?;
        walk.depth -= 1;
        Ok(value)
    }
}

/// An element or a value of an object, read through [`Budgeted`].
struct Seeded<'w, S> {
    seed: S,
    walk: &'w mut Walk,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seeded<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, inner: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(Budgeted {
            inner,
            walk: self.walk,
        })
    }
}

struct CountedSeq<'w, A> {
    inner: A,
    walk: &'w mut Walk,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for CountedSeq<'_, A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        let walk = &mut *self.walk;
        self.inner.next_element_seed(Seeded { seed, walk })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

struct CountedMap<'w, 'de, A> {
    inner: A,
    walk: &'w mut Walk,
    keys: Keys<'de>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for CountedMap<'_, 'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let mut name = None;
        let Some(key) = self.inner.next_key_seed(KeySeed {
            seed,
            name: &mut name,
        })?
        else {
            return Ok(None);
        };
        self.walk.count().map_err(de::Error::custom)?;
        let name = name.ok_or_else(two_passes)?;
        if self.keys.contains(&name) {
            return Err(de::Error::custom("an object names the same key twice"));
        }
        // Refused before the type reads the value: serde_json's `Value` would parse it
        // as a document of its own (see `RESERVED_PREFIX`).
        if is_reserved(&name) {
            return Err(de::Error::custom(RESERVED_KEY));
        }
        self.keys.insert(name);
        Ok(Some(key))
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        let walk = &mut *self.walk;
        self.inner.next_value_seed(Seeded { seed, walk })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// An object's key, read for the type while its text is kept in `name` for the
/// duplicate check.
struct KeySeed<'n, 'de, K> {
    seed: K,
    name: &'n mut Option<Cow<'de, str>>,
}

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'_, 'de, K> {
    type Value = K::Value;

    fn deserialize<D: Deserializer<'de>>(self, inner: D) -> Result<K::Value, D::Error> {
        self.seed.deserialize(KeyName {
            inner,
            name: self.name,
        })
    }
}

struct KeyName<'n, 'de, D> {
    inner: D,
    name: &'n mut Option<Cow<'de, str>>,
}

impl<'n, 'de, D> KeyName<'n, 'de, D> {
    fn wrap<V>(self, visitor: V) -> (D, Named<'n, 'de, V>) {
        let named = Named {
            visitor,
            name: self.name,
        };
        (self.inner, named)
    }
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for KeyName<'_, 'de, D> {
    type Error = D::Error;

    forward_reads!();

    forward_to_inner! {
        deserialize_bytes;
        deserialize_byte_buf;
        deserialize_newtype_struct(name: &'static str);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_ignored_any;
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// A key's visitor that keeps the key's text. A key read as anything but text (a number,
/// bytes) reaches the visitor's default, which fails the read.
struct Named<'n, 'de, V> {
    visitor: V,
    name: &'n mut Option<Cow<'de, str>>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Named<'_, 'de, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<V::Value, E> {
        *self.name = Some(Cow::Borrowed(key));
        self.visitor.visit_borrowed_str(key)
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<V::Value, E> {
        *self.name = Some(Cow::Owned(key.to_owned()));
        self.visitor.visit_str(key)
    }

    fn visit_string<E: de::Error>(self, key: String) -> Result<V::Value, E> {
        *self.name = Some(Cow::Owned(key.clone()));
        self.visitor.visit_string(key)
    }
}

#[cfg(test)]
mod tests {
    use super::super::walk;
    use super::*;
    use serde_json::Value;

    const BUDGET: JsonBudget = JsonBudget {
        max_depth: 6,
        max_values: 40,
    };

    /// Bodies at and around every edge the walk checks.
    fn edges() -> Vec<Vec<u8>> {
        let mut bodies: Vec<Vec<u8>> = [
            &br#"{"a":1,"b":[true,null,"x",-2.5e3],"c":{"d":{}}}"#[..],
            br#"{"a":1,"a":2}"#,
            br#"{"x":{"k":1,"k":1}}"#,
            br#"{"a":1,"\u0061":2}"#,
            br#"[{"a":1},{"a":1}]"#,
            br#"{"a":"\ud800"}"#,
            b"{\"a\":\"\xff\"}",
            br#"{"a":1} {}"#,
            br#"{"a":"#,
            b"",
            br#"18446744073709551616"#,
            br#"-0"#,
            br#""just text""#,
        ]
        .iter()
        .map(|body| body.to_vec())
        .collect();
        for depth in 4..9 {
            bodies.push(format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes());
            bodies.push(format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth)).into_bytes());
        }
        for count in 36..42 {
            let items = vec!["0"; count].join(",");
            bodies.push(format!("[{items}]").into_bytes());
        }
        bodies
    }

    /// Small JSON-like texts, most of them sound, with keys drawn from a few names so
    /// that objects repeat them, some escaped.
    fn generated(seed: u64, count: usize) -> Vec<Vec<u8>> {
        let mut state = seed;
        let mut next = move |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        fn value(next: &mut dyn FnMut(u64) -> u64, depth: usize, out: &mut String) {
            let keys = ["a", "b", "\\u0062", "c", "\\n"];
            match next(if depth > 7 { 5 } else { 8 }) {
                0 => out.push_str("null"),
                1 => out.push_str(["1", "-2", "3.5", "1e2", "01", "1."][next(6) as usize]),
                2 => out.push_str(
                    ["\"x\"", "\"\\u00e9\"", "\"\\ud83d\\ude00\"", "\"\\q\""][next(4) as usize],
                ),
                3 => out.push_str(["true", "false", "tru"][next(3) as usize]),
                4 => out.push(['[', '{', ']', '}', ','][next(5) as usize]),
                5 | 6 => {
                    out.push('{');
                    for index in 0..next(4) {
                        if index > 0 {
                            out.push(',');
                        }
                        out.push('"');
                        out.push_str(keys[next(keys.len() as u64) as usize]);
                        out.push_str("\":");
                        value(next, depth + 1, out);
                    }
                    out.push('}');
                }
                _ => {
                    out.push('[');
                    for index in 0..next(5) {
                        if index > 0 {
                            out.push(',');
                        }
                        value(next, depth + 1, out);
                    }
                    out.push(']');
                }
            }
        }
        (0..count)
            .map(|_| {
                let mut out = String::new();
                value(&mut next, 0, &mut out);
                out.into_bytes()
            })
            .collect()
    }

    fn corpus() -> Vec<Vec<u8>> {
        let mut bodies = edges();
        bodies.extend(generated(0x5a6a_2026, 4000));
        bodies
    }

    /// Read as a `Value`, every value is visited: the one pass and the walk agree on
    /// every body, both ways.
    #[test]
    fn read_as_a_value_it_accepts_what_the_walk_accepts() {
        let (mut accepted, mut refused) = (0, 0);
        for body in corpus() {
            let walked = walk(&body, BUDGET).is_ok();
            let read = read_within::<Value>(&body, BUDGET);
            assert_eq!(read.is_some(), walked, "{}", String::from_utf8_lossy(&body));
            if let Some(read) = read {
                let plain: Value = serde_json::from_slice(&body).expect("the walk passed it");
                assert_eq!(read, plain);
                accepted += 1;
            } else {
                refused += 1;
            }
        }
        // The corpus reaches both sides of the checks.
        assert!(accepted > 500 && refused > 500, "{accepted} / {refused}");
    }

    /// A type that skips most of the body, reads some of it as its own types, and keeps
    /// the rest as values.
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)] // read to be checked
    struct Partial {
        a: Option<Value>,
        #[serde(default)]
        b: Option<Vec<Value>>,
    }

    /// A type that reads less of the body still never accepts a body the walk refuses:
    /// what it skips is walked.
    #[test]
    fn a_type_that_skips_values_accepts_nothing_the_walk_refuses() {
        let mut accepted = 0;
        for body in corpus() {
            if read_within::<Partial>(&body, BUDGET).is_some() {
                assert!(
                    walk(&body, BUDGET).is_ok(),
                    "{}",
                    String::from_utf8_lossy(&body)
                );
                accepted += 1;
            }
        }
        assert!(accepted > 100, "{accepted}");
        // serde_json skips an ignored string without checking it is UTF-8, and a skipped
        // object's keys without comparing them.
        for body in [
            &b"{\"z\":\"\xff\",\"a\":1}"[..],
            br#"{"z":{"k":1,"k":2},"a":1}"#,
            br#"{"z":[[[[[[[1]]]]]]],"a":1}"#,
        ] {
            assert!(serde_json::from_slice::<Partial>(body).is_ok());
            assert!(read_within::<Partial>(body, BUDGET).is_none());
        }
    }

    /// A key serde_json reserves is refused before the type reads its value, wherever
    /// the type would read it into a `Value`.
    #[test]
    fn keys_the_json_parser_reserves_are_refused_before_their_value_is_read() {
        let body = format!(r#"{{"a":{}}}"#, super::super::tests::hidden(3, 50));
        let budget = JsonBudget {
            max_depth: 64,
            max_values: 100_000,
        };
        assert!(serde_json::from_str::<Value>(&body).is_ok());
        assert!(read_within::<Value>(body.as_bytes(), budget).is_none());
        assert!(read_within::<Partial>(body.as_bytes(), budget).is_none());
    }

    #[test]
    fn what_it_cannot_count_is_left_to_two_passes() {
        #[derive(serde::Deserialize)]
        enum Tag {
            A,
        }
        #[derive(serde::Deserialize)]
        #[allow(dead_code)] // read to be checked
        struct Tagged {
            tag: Tag,
        }
        assert!(serde_json::from_slice::<Tagged>(br#"{"tag":"A"}"#).is_ok());
        assert!(read_within::<Tagged>(br#"{"tag":"A"}"#, BUDGET).is_none());

        #[derive(serde::Deserialize)]
        #[allow(dead_code)] // read to be checked
        struct Raw<'a> {
            #[serde(borrow)]
            raw: &'a serde_json::value::RawValue,
        }
        assert!(serde_json::from_slice::<Raw>(br#"{"raw":[1,2]}"#).is_ok());
        assert!(read_within::<Raw>(br#"{"raw":[1,2]}"#, BUDGET).is_none());

        let numbered = br#"{"1":true}"#;
        let keyed: std::collections::BTreeMap<u32, bool> =
            serde_json::from_slice(numbered).expect("a number key");
        assert_eq!(keyed.len(), 1);
        assert!(read_within::<std::collections::BTreeMap<u32, bool>>(numbered, BUDGET).is_none());

        #[derive(serde::Deserialize)]
        #[allow(dead_code)] // read to be checked
        struct Bytes {
            #[serde(with = "serde_bytes_like")]
            data: Vec<u8>,
        }
        mod serde_bytes_like {
            pub(super) fn deserialize<'de, D: serde::Deserializer<'de>>(
                deserializer: D,
            ) -> Result<Vec<u8>, D::Error> {
                struct Visit;
                impl serde::de::Visitor<'_> for Visit {
                    type Value = Vec<u8>;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("bytes")
                    }
                    fn visit_bytes<E>(self, bytes: &[u8]) -> Result<Vec<u8>, E> {
                        Ok(bytes.to_vec())
                    }
                }
                deserializer.deserialize_bytes(Visit)
            }
        }
        let invalid = b"{\"data\":\"\xff\"}";
        assert!(serde_json::from_slice::<Bytes>(invalid).is_ok());
        assert!(walk(invalid, BUDGET).is_err());
        assert!(read_within::<Bytes>(invalid, BUDGET).is_none());
    }
}
