//! A JSON slot's value, read without compiling `serde_json`'s reader for its type.
//!
//! Builds from `ac76824` until issue 80 kept a type only `serde_json` read back
//! (`Box<RawValue>`, or a type holding one) as `serde_json`'s text, marked `J`; such a
//! type is MessagePack now ([`super`]), and these slots are only read, from tokens and
//! task records those builds sealed. `serde_json::from_slice::<T>` would be compiled for
//! every saved type `T`, since which types are JSON is known only when the program runs:
//! with its writer, about 1,300 lines of LLVM IR per tool that no tool without a
//! `RawValue` runs (issue 80, BENCHMARKS.md). Here the text is transcoded, by code compiled
//! once, to the MessagePack that [`super::msgpack`]'s reader (compiled per type already)
//! reads, with each value's place in the text beside it, and that reader reads it as
//! `serde_json` did: as a human-readable format; numbers as `serde_json` visits them
//! (`u64`, `i64`, else a float by its own parser, `-0` included), and where an `f32` or a
//! 128-bit integer is asked, from their text as `serde_json` parses those; a `RawValue` as
//! the text it was written as; map keys that are numbers or booleans from their quoted
//! text (only keys); unit variants by name only. What it cannot read as `serde_json` did
//! (any number reached through `deserialize_any` where `serde_json` reads numbers by their
//! digits, its `arbitrary_precision`) it refuses, never reads otherwise. The module's
//! tests read every value both ways, and the values a changed type makes `serde_json`
//! refuse.

#[cfg(test)]
use serde::de::DeserializeOwned;

use super::json_number::{Number, Precision, number};
use super::msgpack::{self, Input, JsonSpan};

/// Nesting deeper than this is refused, as [`msgpack`]'s reader refuses it (`serde_json`
/// reads values 127 deep, so no slot it read back holds deeper ones but in a `RawValue`'s
/// text, which it does not limit).
const MAX_DEPTH: usize = 1024;

/// A JSON slot's text as [`msgpack`]'s reader reads it.
pub(crate) fn transcoded(json: &[u8]) -> Result<Input<'_>, msgpack::Error> {
    let text = std::str::from_utf8(json)
        .map_err(|_| msgpack::Error::new("a saved JSON value is not UTF-8"))?;
    let (bytes, spans) = transcode(text)?;
    Ok(Input {
        bytes: bytes.into(),
        some_marked: false,
        json: Some((text, spans)),
    })
}

/// The value a JSON slot's text holds, as `T`.
#[cfg(test)]
fn from_json<T: DeserializeOwned>(json: &[u8]) -> Result<T, msgpack::Error> {
    msgpack::read_input(&transcoded(json)?)
}

/// `text` as unmarked MessagePack ([`msgpack`]'s `from_slice` form: `null` is `nil`, a
/// value is itself), with the span of text each value came from, by its offset.
fn transcode(text: &str) -> Result<(Vec<u8>, Vec<JsonSpan>), msgpack::Error> {
    let mut out = Transcoder {
        text,
        at: 0,
        bytes: Vec::with_capacity(text.len() + 16),
        spans: Vec::new(),
    };
    out.value(0, false)?;
    out.space();
    if out.at != out.text.len() {
        return Err(msgpack::Error::new(
            "trailing characters in a saved JSON value",
        ));
    }
    Ok((out.bytes, out.spans))
}

/// The extension tag of a number `serde_json` would not read as a float (`1e400`), kept
/// so that only a visit of it fails.
const UNREAD_NUMBER: i8 = -1;

struct Transcoder<'a> {
    text: &'a str,
    at: usize,
    bytes: Vec<u8>,
    spans: Vec<JsonSpan>,
}

fn offset(value: usize) -> Result<u32, msgpack::Error> {
    u32::try_from(value).map_err(|_| msgpack::Error::new("a saved JSON value is too long"))
}

fn malformed() -> msgpack::Error {
    msgpack::Error::new("a saved JSON value is malformed")
}

impl Transcoder<'_> {
    /// The byte at the cursor, if the text goes on.
    fn byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn space(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.byte() {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        self.space();
        if self.byte() == Some(byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// The next value; `key`: a map's key.
    fn value(&mut self, depth: usize, key: bool) -> Result<(), msgpack::Error> {
        self.space();
        let at = offset(self.bytes.len())?;
        let start = self.at;
        // The span's place is kept before the value's own, so that the spans stay sorted.
        let span = self.spans.len();
        self.spans.push(JsonSpan {
            at,
            start: offset(start)?,
            end: 0,
        });
        match self.byte() {
            Some(b'{') => self.container(depth, b'}', 0xdf)?,
            Some(b'[') => self.container(depth, b']', 0xdd)?,
            Some(b'"') => self.string(key)?,
            Some(b't') => self.literal(b"true", 0xc3)?,
            Some(b'f') => self.literal(b"false", 0xc2)?,
            Some(b'n') => self.literal(b"null", 0xc0)?,
            Some(b'-' | b'0'..=b'9') => {
                while let Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') = self.byte() {
                    self.at += 1;
                }
                let digits = self.text.get(start..self.at).ok_or_else(malformed)?;
                // A number `serde_json` does not read as an `f64` (`1e400`) may be in a
                // `RawValue`'s text, which keeps it as it is: it is read only if visited.
                let Ok(number) = number(digits, Precision::Double) else {
                    self.bytes
                        .extend_from_slice(&[0xd4, UNREAD_NUMBER as u8, 0]);
                    self.spans[span].end = offset(self.at)?;
                    return Ok(());
                };
                match number {
                    Number::U64(value) => {
                        self.bytes.push(0xcf);
                        self.bytes.extend_from_slice(&value.to_be_bytes());
                    }
                    Number::I64(value) => {
                        self.bytes.push(0xd3);
                        self.bytes.extend_from_slice(&value.to_be_bytes());
                    }
                    Number::F64(value) => {
                        self.bytes.push(0xcb);
                        self.bytes.extend_from_slice(&value.to_be_bytes());
                    }
                }
            }
            _ => return Err(malformed()),
        }
        self.spans[span].end = offset(self.at)?;
        Ok(())
    }

    fn literal(&mut self, word: &[u8], marker: u8) -> Result<(), msgpack::Error> {
        let rest = self.text.as_bytes().get(self.at..).unwrap_or_default();
        if !rest.starts_with(word) {
            return Err(malformed());
        }
        self.at += word.len();
        self.bytes.push(marker);
        Ok(())
    }

    /// A sequence (`]`) or a map (`}`), its length written after its items.
    fn container(&mut self, depth: usize, close: u8, marker: u8) -> Result<(), msgpack::Error> {
        if depth + 1 >= MAX_DEPTH {
            return Err(msgpack::Error::new(
                "a saved JSON value is nested too deeply",
            ));
        }
        self.at += 1;
        self.bytes.push(marker);
        let length_at = self.bytes.len();
        self.bytes.extend_from_slice(&[0; 4]);
        let mut len: u32 = 0;
        if !self.eat(close) {
            loop {
                if close == b'}' {
                    self.space();
                    if self.byte() != Some(b'"') {
                        return Err(malformed());
                    }
                    self.value(depth + 1, true)?;
                    if !self.eat(b':') {
                        return Err(malformed());
                    }
                }
                self.value(depth + 1, false)?;
                len = len.checked_add(1).ok_or_else(malformed)?;
                if self.eat(close) {
                    break;
                }
                if !self.eat(b',') {
                    return Err(malformed());
                }
            }
        }
        self.bytes[length_at..length_at + 4].copy_from_slice(&len.to_be_bytes());
        Ok(())
    }

    /// A string: a map's key as `str8` or `str16` (the reader reads only those as a key,
    /// where a number is asked), any other as `str32`.
    fn string(&mut self, key: bool) -> Result<(), msgpack::Error> {
        let text = self.string_value()?;
        let len = offset(text.len())?;
        match u16::try_from(len) {
            Ok(short) if key && short <= 0xff => self.bytes.extend_from_slice(&[0xd9, short as u8]),
            Ok(short) if key => {
                self.bytes.push(0xda);
                self.bytes.extend_from_slice(&short.to_be_bytes());
            }
            _ => {
                self.bytes.push(0xdb);
                self.bytes.extend_from_slice(&len.to_be_bytes());
            }
        }
        self.bytes.extend_from_slice(text.as_bytes());
        Ok(())
    }

    /// A string's value: its text where it has no escape, else as `serde_json` reads it.
    fn string_value(&mut self) -> Result<String, msgpack::Error> {
        let start = self.at;
        self.at += 1;
        let mut escaped = false;
        loop {
            match self.byte() {
                Some(b'"') => break,
                Some(b'\\') => {
                    escaped = true;
                    self.at += 2;
                }
                Some(_) => self.at += 1,
                None => return Err(malformed()),
            }
        }
        self.at += 1;
        let quoted = self.text.get(start..self.at).ok_or_else(malformed)?;
        if escaped {
            serde_json::from_str::<String>(quoted).map_err(|_| malformed())
        } else {
            Ok(quoted[1..quoted.len() - 1].to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    //! Every value read both ways: `serde_json::from_slice`, which JSON slots were read
    //! with before, and [`from_json`]. Both read the same value, or both refuse it.

    use std::collections::{BTreeMap, HashMap};
    use std::fmt::Debug;

    use serde::{Deserialize, Serialize};
    use serde_json::value::RawValue;
    use serde_json::{Value, json};

    use super::*;
    use crate::engine::identity::slot::same::same_value;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).expect("raw JSON")
    }

    /// `text` read both ways as `T`: the same value, or refused by both.
    fn same_as_serde_json<T: Serialize + DeserializeOwned + Debug>(text: &[u8]) -> Option<T> {
        let theirs = serde_json::from_slice::<T>(text);
        let ours = from_json::<T>(text);
        match (theirs, ours) {
            (Ok(theirs), Ok(ours)) => {
                assert!(
                    same_value(&theirs, &ours),
                    "{}: {theirs:?} read as {ours:?}",
                    String::from_utf8_lossy(text)
                );
                Some(ours)
            }
            (Err(_), Err(_)) => None,
            (theirs, ours) => panic!(
                "{}: serde_json {theirs:?}, transcoded {ours:?}",
                String::from_utf8_lossy(text)
            ),
        }
    }

    /// `value` written by `serde_json`, compactly and pretty, read back both ways.
    fn reads<T: Serialize + DeserializeOwned + Debug>(value: &T) {
        for text in [
            serde_json::to_vec(value).expect("writes"),
            serde_json::to_vec_pretty(value).expect("writes"),
        ] {
            let read = same_as_serde_json::<T>(&text);
            assert!(
                read.is_some(),
                "{} is refused",
                String::from_utf8_lossy(&text)
            );
        }
    }

    #[derive(Debug, Serialize, Deserialize)]
    struct Held {
        body: Box<RawValue>,
        parts: Vec<Box<RawValue>>,
        maybe: Option<Box<RawValue>>,
        by_id: BTreeMap<u32, Box<RawValue>>,
        note: String,
    }

    #[derive(Debug, Serialize, Deserialize)]
    enum Kind {
        Unit,
        New(i64),
        Pair(u8, String),
        Named { raw: Box<RawValue>, at: f64 },
    }

    #[derive(Debug, Serialize, Deserialize)]
    struct Unit;

    #[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
    struct Id(String);

    #[derive(Debug, Serialize, Deserialize)]
    struct Wide {
        small: i128,
        least: i128,
        most: u128,
        keys: BTreeMap<i128, bool>,
    }

    #[derive(Debug, Serialize, Deserialize)]
    #[serde(untagged)]
    enum Loose {
        Number(f64),
        Text(String),
        List(Vec<u64>),
    }

    #[derive(Debug, Serialize, Deserialize)]
    #[serde(tag = "type")]
    enum Tagged {
        A { n: i64 },
        B { v: Value },
    }

    #[test]
    fn raw_values_come_back_as_their_text() {
        let held = Held {
            body: raw(r#"{ "a" : [1, 2.50, "x\n", 1.0e3] ,"b":null }"#),
            parts: vec![raw("  7 "), raw(r#""é\u00e9""#), raw("[ ]"), raw("-0")],
            maybe: Some(raw("true")),
            by_id: BTreeMap::from([(3, raw("{}")), (u32::MAX, raw("12345678901234567890123"))]),
            note: "tab\there \"quoted\" ü 🎉".into(),
        };
        reads(&held);
        let text = serde_json::to_vec(&held).expect("writes");
        let read: Held = from_json(&text).expect("reads");
        assert_eq!(read.body.get(), held.body.get());
        assert_eq!(read.parts[1].get(), r#""é\u00e9""#);
        assert_eq!(read.by_id[&u32::MAX].get(), "12345678901234567890123");
        for kind in [
            Kind::Unit,
            Kind::New(-5),
            Kind::Pair(7, "x".into()),
            Kind::Named {
                raw: raw(r#"[{"k": 1}]"#),
                at: 0.1,
            },
        ] {
            reads(&kind);
        }
    }

    #[test]
    fn scalars_read_as_serde_json_reads_them() {
        reads(&(u64::MAX, i64::MIN, 0u8, -1i32, 1.5f32, 0.1f32));
        reads(&[
            0.1,
            1e300,
            -0.0,
            f64::MIN_POSITIVE,
            5e-324,
            123456.789,
            f64::MAX,
        ]);
        reads(&Wide {
            small: 5,
            least: i128::MIN,
            most: u128::MAX,
            keys: BTreeMap::from([(i128::MIN, true), (-1, false), (i128::MAX, true)]),
        });
        reads(&(
            (),
            Unit,
            Id("x".into()),
            Some(Some(3u8)),
            None::<Option<u8>>,
            'c',
        ));
        reads(&vec![0u8, 255, 7]);
        reads(&"\u{0}\u{1f}\\/\"\u{2028}".to_owned());
    }

    #[test]
    fn map_keys_read_from_their_quoted_text() {
        reads(&BTreeMap::from([
            (-3i64, "a".to_owned()),
            (4, "b".to_owned()),
        ]));
        reads(&BTreeMap::from([(true, 1u8), (false, 2)]));
        reads(&HashMap::from([('x', 1i32), ('y', 2)]));
        reads(&BTreeMap::from([(u64::MAX, ())]));
        reads(&BTreeMap::from([(Id("k".into()), 1u8)]));
    }

    #[test]
    fn any_values_read_in_their_order() {
        reads(
            &json!({"z": 1, "a": [1.5, -2, "s", null, {"y": true, "b": {}}], "m": 18446744073709551615u64}),
        );
        let text = br#"{"z":1,"a":2,"m":3}"#;
        let value: Value = from_json(text).expect("reads");
        assert_eq!(
            value.to_string(),
            r#"{"z":1,"a":2,"m":3}"#,
            "preserve_order kept"
        );
        for loose in [
            Loose::Number(2.5),
            Loose::Text("t".into()),
            Loose::List(vec![1, 2]),
        ] {
            reads(&loose);
        }
        reads(&Tagged::A { n: -7 });
        reads(&Tagged::B {
            v: json!([1, {"q": "r"}]),
        });
    }

    #[test]
    fn what_serde_json_refuses_is_refused() {
        for text in [
            &b""[..],
            b"{",
            b"[1,]",
            b"{\"a\" 1}",
            b"\"unterminated",
            b"tru",
            b"1 2",
            b"-",
            b"\"\\uD800\"",
            b"\xff",
        ] {
            assert!(same_as_serde_json::<Value>(text).is_none(), "{text:?}");
        }
        // As deep as serde_json reads (a deeper value was never sealed: its read-back
        // failed), and refused far deeper, without a stack overflow.
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n)).into_bytes();
        assert!(same_as_serde_json::<Value>(&deep(127)).is_some());
        assert!(
            from_json::<Value>(&deep(100_000)).is_err(),
            "no stack overflow"
        );
    }

    #[test]
    fn an_integer_beyond_64_bits_is_a_float_where_any_value_is_asked() {
        // As `serde_json` reads it through `deserialize_any`: the nearest `f64`.
        let text =
            b"[170141183460469231731687303715884105727, -170141183460469231731687303715884105729]";
        assert!(same_as_serde_json::<Value>(text).is_some());
    }

    #[derive(Debug, Serialize, Deserialize)]
    struct Addressed {
        ip: std::net::IpAddr,
        socket: std::net::SocketAddr,
        raw: Box<RawValue>,
    }

    /// A type that writes itself as text to a human-readable format (`serde_json`) is
    /// read back as that text.
    #[test]
    fn a_type_written_as_text_reads_back_as_text() {
        reads(&Addressed {
            ip: "127.0.0.1".parse().expect("ip"),
            socket: "[::1]:8080".parse().expect("socket"),
            raw: raw("{}"),
        });
    }

    /// `text` read both ways as `T` is refused by both.
    fn refused<T: Serialize + DeserializeOwned + Debug>(text: &[u8]) {
        assert!(
            same_as_serde_json::<T>(text).is_none(),
            "{} read as {}",
            String::from_utf8_lossy(text),
            std::any::type_name::<T>()
        );
    }

    /// What `serde_json` refuses where a type changed between the build that sealed a JSON
    /// slot and the one that reads it, this reader refuses too: never another value.
    #[test]
    fn a_changed_type_is_refused_where_serde_json_refused_it() {
        // 128-bit integers keep their sign and their range.
        refused::<u128>(b"-1");
        refused::<i128>(b"340282366920938463463374607431768211455");
        refused::<i128>(b"1.5");
        refused::<i128>(b"007");
        // `-0` is a float to serde_json.
        refused::<i64>(b"-0");
        assert!(same_as_serde_json::<f64>(b"-0").is_some_and(|v| v.is_sign_negative()));
        assert!(same_as_serde_json::<Value>(b"-0").is_some());
        // Quoted numbers and booleans are read so only as keys, as JSON writes them.
        refused::<BTreeMap<String, u64>>(br#"{"n":"5"}"#);
        refused::<bool>(br#""true""#);
        refused::<BTreeMap<u64, u8>>(br#"{"007":1}"#);
        refused::<BTreeMap<u64, u8>>(br#"{"+5":1}"#);
        refused::<BTreeMap<u64, u8>>(br#"{"5.0":1}"#);
        refused::<BTreeMap<u128, u8>>(br#"{"-1":1}"#);
        let keys = br#"{"-170141183460469231731687303715884105728":1,"17":2}"#;
        assert!(same_as_serde_json::<BTreeMap<i128, u8>>(keys).is_some());
        let keys = br#"{"340282366920938463463374607431768211455":1}"#;
        assert!(same_as_serde_json::<BTreeMap<u128, u8>>(keys).is_some());
        // An enum by its index.
        refused::<Kind>(b"1");
    }

    /// Floats asked as `f32` are parsed to the nearest `f32` from their text.
    #[test]
    fn an_f32_is_rounded_once() {
        for text in [
            &b"1.00000005960464478"[..],
            b"0.1",
            b"3.4028235e38",
            b"1e-45",
            b"16777217",
        ] {
            let read = same_as_serde_json::<f32>(text);
            assert!(read.is_some(), "{}", String::from_utf8_lossy(text));
        }
        let map = br#"{"a":1.00000005960464478}"#;
        assert!(same_as_serde_json::<BTreeMap<String, f32>>(map).is_some());
    }

    /// A `RawValue`'s text is kept as it is, whatever it holds: numbers no float holds,
    /// nesting deeper than `serde_json` reads a value.
    #[test]
    fn a_raw_values_text_is_not_read_as_values() {
        let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
        for text in [
            "[1e400, -1e999]",
            "123456789012345678901234567890",
            deep.as_str(),
        ] {
            let json = serde_json::to_vec(&vec![raw(text)]).expect("writes");
            let read = same_as_serde_json::<Vec<Box<RawValue>>>(&json).expect("reads");
            assert_eq!(read[0].get(), text);
        }
        // Read as a value, such a number is refused, as serde_json refuses it.
        refused::<Value>(b"[1e400]");
    }

    /// A map key that names a private type of serde_json is refused when it is written:
    /// a `Value` would read the map back as that type.
    #[test]
    fn a_key_private_to_serde_json_is_not_written() {
        let mut bytes = Vec::new();
        let value = json!({"$serde_json::private::RawValue": "[1]"});
        assert!(super::super::write::append(&mut bytes, &value).is_err());
        let mut bytes = Vec::new();
        assert!(super::super::write::append(&mut bytes, &json!({"$serde": 1})).is_ok());
    }

    #[test]
    fn this_build_reads_numbers_as_floats() {
        assert!(!super::super::json_number::arbitrary_precision());
    }
}
