//! How `serde_json` reads a number from its text: which visit it makes, and the value.
//!
//! Shared by the transcoding of JSON slots ([`super::json`]) and the MessagePack reader,
//! which reads some numbers of a transcoded slot from their text ([`super::msgpack`]).

use std::sync::OnceLock;

/// A JSON number as `serde_json` visits it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Number {
    U64(u64),
    I64(i64),
    F64(f64),
}

/// Where a float is asked: an `f32` is parsed to the nearest `f32` (`serde_json`'s
/// `float_roundtrip`), anything else to the nearest `f64`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Precision {
    Single,
    Double,
}

/// Whether `text` is a JSON integer: an optional `-`, then `0` or digits not led by `0`.
fn integer(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    match digits.as_bytes() {
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// `text`, a JSON number, as `serde_json` visits it: an integer as `u64` or, negative, as
/// `i64`; `-0`, an integer beyond 64 bits and any other number as a float, by
/// `serde_json`'s own parser, so that it reads as the same float.
pub(crate) fn number(text: &str, precision: Precision) -> Result<Number, &'static str> {
    if integer(text) {
        if let Ok(value) = text.parse::<u64>() {
            return Ok(Number::U64(value));
        }
        if let Ok(value) = text.parse::<i64>()
            && value != 0
        {
            return Ok(Number::I64(value));
        }
    }
    let float = match precision {
        Precision::Double => serde_json::from_str::<f64>(text),
        Precision::Single => serde_json::from_str::<f32>(text).map(f64::from),
    };
    float
        .map(Number::F64)
        .map_err(|_| "a saved JSON number does not parse")
}

/// `text` as `serde_json` reads a 128-bit integer: an `i128`, or where `signed` is
/// false, a `u128` (its bits), never led by `-`.
pub(crate) fn wide(text: &str, signed: bool) -> Result<i128, &'static str> {
    let out_of_range = "a saved JSON number is out of range";
    if !integer(text) {
        return Err("a saved JSON number is not an integer");
    }
    if signed {
        text.parse::<i128>().map_err(|_| out_of_range)
    } else {
        text.parse::<u128>()
            .map(|value| value as i128)
            .map_err(|_| out_of_range)
    }
}

/// Whether this build's `serde_json` reads numbers by their digits
/// (`arbitrary_precision`, which any crate of the build may turn on): a number's text
/// then comes back as it was written, not as the `f64` nearest it.
pub(crate) fn arbitrary_precision() -> bool {
    static DIGITS: OnceLock<bool> = OnceLock::new();
    *DIGITS.get_or_init(|| {
        const PRECISE: &str = "0.100000000000000000000000000001";
        serde_json::from_str::<serde_json::Number>(PRECISE)
            .is_ok_and(|number| number.to_string() == PRECISE)
    })
}
