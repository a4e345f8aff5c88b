//! A MessagePack slot's value, read as `rmp-serde` reads it, with the parsing compiled
//! once.
//!
//! Why not `rmp_serde::Deserializer`: its parsing of markers and lengths is inside its
//! generic methods, so it is compiled again for each visitor type that reads it: each
//! struct a tool saves as MessagePack, and each of that struct's field enums (about 2,000
//! lines of LLVM IR apiece, issue 43). Here one function, not generic, reads the next
//! [`Token`] (a marker with its length or its scalar), and only the `match` that hands a
//! token to a visitor is compiled per visitor. Like `rmp-serde`, it reads as it visits:
//! nothing is allocated but what the visitor builds.
//!
//! What a visitor is told is what `rmp-serde` 1.3 (the writer of these bytes) tells it
//! for the same bytes (as its reader of a `Read`, which copies): numbers by their encoded
//! width (`visit_u8` for a positive fixint), strings as `visit_str` (and as bytes where
//! they are not UTF-8), `nil` as a unit or `None`, a unit struct from `nil` or `[]`, an
//! enum from a one-entry map or a string, an extension type as `rmp-serde`'s
//! `_ExtStruct`, a sequence or map that its visitor leaves unread refused, nesting as
//! deep. The module's tests read the same bytes both ways and compare.
//!
//! Two additions: a `RawValue` of `serde_json` reads back from the one-entry map it writes
//! itself as; and bytes transcoded from a JSON slot ([`super::json`]) are read as
//! `serde_json` read that slot's text, where the two formats differ (human-readable; keys
//! that are numbers or booleans; 128-bit integers and `f32`s from their text; enums by
//! name only).

use std::fmt;

use serde::de::{self, DeserializeSeed, Unexpected, Visitor};

use super::values;

/// Nesting deeper than this is refused, as `rmp-serde` refuses it.
const MAX_DEPTH: u16 = 1024;

/// Why a MessagePack slot's value could not be read.
#[derive(Debug)]
pub(crate) struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    // Out of line and cold: serde's error constructors (`missing_field`, `invalid_type`,
    // ...) all end here with a `fmt::Arguments`, and inlined, each call site of each saved
    // type's visitor got its own copy of the formatting (29 in one form's decoding). Now
    // each crate compiles one copy per message type, and the call sites only call it.
    #[cold]
    #[inline(never)]
    fn custom<T: fmt::Display>(message: T) -> Self {
        Error(message.to_string())
    }
}

impl Error {
    pub(crate) fn new(message: &str) -> Self {
        Error(message.to_owned())
    }
}

fn error(message: &str) -> Error {
    Error(message.to_owned())
}

/// One marker of MessagePack, with its scalar, its bytes, or its length.
#[derive(Debug, Clone, Copy)]
enum Token<'a> {
    Nil,
    Bool(bool),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
    /// A string's bytes (UTF-8 is checked where it is visited, as `rmp-serde` does).
    Str(&'a [u8]),
    Bin(&'a [u8]),
    /// A sequence of this many values, which follow.
    Array(u32),
    /// A map of this many entries, which follow.
    Map(u32),
    /// An extension type: its tag and its bytes.
    Ext(i8, &'a [u8]),
    /// `Some`, whose value follows: the marker 0xc1, which MessagePack leaves unused,
    /// where options are marked ([`super::write`]).
    Some,
}

/// The newtype name `rmp-serde` reads and writes an extension type as.
const EXT_STRUCT: &str = "_ExtStruct";

/// The bytes being read, and the token read ahead, if one was.
pub(crate) struct Stream<'a> {
    input: &'a [u8],
    ahead: Option<Token<'a>>,
    /// The marker byte of the last token read (a `[]` and a 16-byte string are read
    /// only in their shortest encoding, as `rmp-serde` reads them).
    marker: u8,
    depth: u16,
    /// Whether `Some` is marked (0xc1), as [`super::write`] writes it; else 0xc1 is
    /// refused and `Some(x)` is `x`, as `rmp-serde` writes it.
    some_marked: bool,
    /// Where the bytes were transcoded from a JSON slot's text ([`super::json`]): that
    /// text, read as `serde_json` reads it where MessagePack and JSON differ.
    json: Option<JsonSource<'a>>,
    /// The length of the whole input, and where the last token read began in it.
    len: usize,
    start: usize,
    /// Values it may still read: the state's bound on them, less what its other slots
    /// read ([`super::values`]); `None` where no state is being read.
    left: Option<usize>,
}

/// A JSON slot's text, and where each value of its MessagePack transcoding came from.
#[derive(Clone, Copy)]
struct JsonSource<'a> {
    text: &'a str,
    /// Sorted by `at`: one per value.
    spans: &'a [JsonSpan],
}

/// A value of a transcoded JSON slot: its offset in the MessagePack, and its text's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JsonSpan {
    pub(crate) at: u32,
    pub(crate) start: u32,
    pub(crate) end: u32,
}

/// The name `serde_json` reads a `RawValue` through, as a newtype of a one-entry map of
/// this key to the value's text.
pub(crate) const RAW_VALUE: &str = "$serde_json::private::RawValue";

/// The prefix of the names of `serde_json`'s private types.
pub(crate) const SERDE_JSON_PRIVATE: &str = "$serde_json::private::";

/// The value `bytes` holds, to its last byte, as `T`: bytes `rmp-serde` wrote, where
/// `Some(x)` is `x` (the slots sealed before options were marked).
#[cfg(test)]
pub(crate) fn from_slice<T: de::DeserializeOwned>(bytes: &[u8]) -> Result<T, Error> {
    read_input(&Input::msgpack(bytes, false))
}

/// The value `bytes` holds, to its last byte, as `T`: bytes [`super::write`] wrote, where
/// `Some(x)` is 0xc1 then `x`.
pub(crate) fn from_slice_marked<T: de::DeserializeOwned>(bytes: &[u8]) -> Result<T, Error> {
    read_input(&Input::msgpack(bytes, true))
}

/// A saved local's bytes as this reader reads them: MessagePack, its options marked or
/// not, or a JSON slot's text transcoded to MessagePack ([`super::json`]). Made by code
/// compiled once; only [`read_input`] is compiled per type.
pub(crate) struct Input<'a> {
    pub(crate) bytes: std::borrow::Cow<'a, [u8]>,
    pub(crate) some_marked: bool,
    /// A JSON slot's text, and the span each transcoded value came from (by `at`).
    pub(crate) json: Option<(&'a str, Vec<JsonSpan>)>,
}

impl<'a> Input<'a> {
    pub(crate) fn msgpack(bytes: &'a [u8], some_marked: bool) -> Self {
        Input {
            bytes: bytes.into(),
            some_marked,
            json: None,
        }
    }

    fn stream(&self) -> Stream<'_> {
        Stream {
            input: &self.bytes,
            ahead: None,
            marker: 0,
            depth: 0,
            some_marked: self.some_marked,
            json: self
                .json
                .as_ref()
                .map(|(text, spans)| JsonSource { text, spans }),
            len: self.bytes.len(),
            start: 0,
            left: None,
        }
    }
}

/// The value `input` holds, to its last byte, as `T`.
// Out of line: its callers (the slots' reading and their read-back checks, in every form)
// share one copy of `T`'s reading; all but `T::deserialize` is `Input`'s, compiled once.
#[inline(never)]
pub(crate) fn read_input<T: de::DeserializeOwned>(input: &Input<'_>) -> Result<T, Error> {
    let mut stream = input.stream();
    stream.left = values::left();
    let value = T::deserialize(&mut stream);
    values::set_left(stream.left);
    let value = value?;
    stream.end()?;
    Ok(value)
}

/// How many values (scalars, sequences, maps, keys, options' markers) MessagePack `bytes`
/// hold, counted without reading them into anything; what a malformed tail holds is not
/// counted.
pub(crate) fn values_in(bytes: &[u8]) -> usize {
    let input = Input::msgpack(bytes, true);
    let mut stream = input.stream();
    let mut count = 0usize;
    while !stream.input.is_empty() && stream.token().is_ok() {
        count += 1;
    }
    count
}

impl<'a> Stream<'a> {
    fn end(&self) -> Result<(), Error> {
        if self.input.is_empty() && self.ahead.is_none() {
            Ok(())
        } else {
            Err(error("trailing bytes in a saved local"))
        }
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], Error> {
        if self.input.len() < len {
            return Err(error("a saved local ends early"));
        }
        let (taken, rest) = self.input.split_at(len);
        self.input = rest;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// A length of `width` bytes, big-endian.
    fn len(&mut self, width: u8) -> Result<u32, Error> {
        Ok(match width {
            1 => u32::from(self.array::<1>()?[0]),
            2 => u32::from(u16::from_be_bytes(self.array()?)),
            _ => u32::from_be_bytes(self.array()?),
        })
    }

    /// The next token: the one read ahead, or the next in the input.
    fn token(&mut self) -> Result<Token<'a>, Error> {
        if let Some(token) = self.ahead.take() {
            return Ok(token);
        }
        if let Some(left) = &mut self.left {
            // Refused before it is read whole: past the bound, the state costs more
            // memory than this server lets one request hold.
            *left = left.checked_sub(1).ok_or_else(|| {
                values::note_exceeded();
                error("the saved state holds more values than this server reads back")
            })?;
        }
        self.start = self.len - self.input.len();
        let [marker] = self.array::<1>()?;
        self.marker = marker;
        Ok(match marker {
            0x00..=0x7f => Token::U8(marker),
            0x80..=0x8f => Token::Map(u32::from(marker & 0x0f)),
            0x90..=0x9f => Token::Array(u32::from(marker & 0x0f)),
            0xa0..=0xbf => Token::Str(self.take(usize::from(marker & 0x1f))?),
            0xc0 => Token::Nil,
            0xc2 => Token::Bool(false),
            0xc3 => Token::Bool(true),
            0xc4..=0xc6 => {
                let len = self.len(1 << (marker - 0xc4))?;
                Token::Bin(self.take(len as usize)?)
            }
            0xca => Token::F32(f32::from_be_bytes(self.array()?)),
            0xcb => Token::F64(f64::from_be_bytes(self.array()?)),
            0xcc => Token::U8(self.array::<1>()?[0]),
            0xcd => Token::U16(u16::from_be_bytes(self.array()?)),
            0xce => Token::U32(u32::from_be_bytes(self.array()?)),
            0xcf => Token::U64(u64::from_be_bytes(self.array()?)),
            0xd0 => Token::I8(i8::from_be_bytes(self.array()?)),
            0xd1 => Token::I16(i16::from_be_bytes(self.array()?)),
            0xd2 => Token::I32(i32::from_be_bytes(self.array()?)),
            0xd3 => Token::I64(i64::from_be_bytes(self.array()?)),
            0xd9..=0xdb => {
                let len = self.len(1 << (marker - 0xd9))?;
                Token::Str(self.take(len as usize)?)
            }
            0xdc | 0xdd => Token::Array(self.len(2 << (marker - 0xdc))?),
            0xde | 0xdf => Token::Map(self.len(2 << (marker - 0xde))?),
            0xe0..=0xff => Token::I8(marker as i8),
            0xc7..=0xc9 | 0xd4..=0xd8 => {
                let len = match marker {
                    0xd4..=0xd8 => 1 << (marker - 0xd4),
                    _ => self.len(1 << (marker - 0xc7))?,
                };
                let [tag] = self.array::<1>()?;
                Token::Ext(tag as i8, self.take(len as usize)?)
            }
            0xc1 if self.some_marked => Token::Some,
            // 0xc1 is never used by MessagePack.
            _ => return Err(error("a saved local holds the unused MessagePack marker")),
        })
    }

    /// The next token, read ahead: the next `token()` gives it again.
    fn peek(&mut self) -> Result<Token<'a>, Error> {
        let token = self.token()?;
        self.ahead = Some(token);
        Ok(token)
    }

    /// Enters a sequence, a map or an extension type: `rmp-serde` reads 1,023 levels.
    fn enter(&mut self) -> Result<(), Error> {
        if self.depth + 1 >= MAX_DEPTH {
            return Err(error("depth limit exceeded"));
        }
        self.depth += 1;
        Ok(())
    }

    /// Leaves a sequence or map of which `left` values were not read.
    fn leave(&mut self, left: u32) -> Result<(), Error> {
        self.depth -= 1;
        match left {
            0 => Ok(()),
            _ => Err(error("a saved sequence or map was not read to its end")),
        }
    }

    /// The next token where a scalar is asked for: past a `Some` marker, as `rmp-serde`
    /// read `Some(5)` where a field that was an `Option<u32>` is now a `u32` (a saved type
    /// changed between deploys, read by name). `None` stays `nil`, and is refused there.
    fn unwrapped(&mut self) -> Result<Token<'a>, Error> {
        match self.token()? {
            Token::Some => self.token(),
            // `serde_json` writes a map's keys as strings, a number's or a boolean's
            // text in quotes, and reads them so where a number or a boolean is asked; only
            // keys ([`super::json`] writes them, and only them, as `str8` or `str16`).
            Token::Str(text) if self.json.is_some() && matches!(self.marker, 0xd9 | 0xda) => {
                Ok(json_key(text).unwrap_or(Token::Str(text)))
            }
            token => Ok(token),
        }
    }

    /// A `RawValue`'s text: in MessagePack, as `serde_json`'s `RawValue` writes itself (a
    /// map of one entry, [`RAW_VALUE`] to its text); in a transcoded JSON slot, the text
    /// of the value that follows, which is skipped.
    #[inline(never)]
    fn raw_text(&mut self) -> Result<&'a str, Error> {
        let Some(json) = self.json else {
            let not_raw = || error("a saved raw JSON value is not one");
            if !matches!(self.token()?, Token::Map(1)) {
                return Err(not_raw());
            }
            return match (self.token()?, self.token()?) {
                (Token::Str(key), Token::Str(text)) if key == RAW_VALUE.as_bytes() => {
                    std::str::from_utf8(text).map_err(|_| not_raw())
                }
                _ => Err(not_raw()),
            };
        };
        self.json_text(json)
    }

    /// The text of a transcoded JSON slot's next value, which is skipped.
    fn json_text(&mut self, json: JsonSource<'a>) -> Result<&'a str, Error> {
        let at = match self.ahead {
            Some(_) => self.start,
            None => self.len - self.input.len(),
        };
        let span = json
            .spans
            .binary_search_by_key(&at, |span| span.at as usize)
            .ok()
            .and_then(|index| json.spans.get(index))
            .ok_or_else(|| error("a saved JSON value has no text"))?;
        let text = json
            .text
            .get(span.start as usize..span.end as usize)
            .ok_or_else(|| error("a saved JSON value has no text"))?;
        // Skipped as a count of the values still to read: no recursion.
        let mut left: u64 = 1;
        while left > 0 {
            left -= 1;
            match self.token()? {
                Token::Array(len) => left += u64::from(len),
                Token::Map(len) => left += 2 * u64::from(len),
                _ => {}
            }
        }
        Ok(text)
    }

    /// The text of a transcoded JSON slot's next value where a number is asked: a map
    /// key's inside its quotes, as `serde_json` reads a number from a key.
    fn json_number_text(&mut self) -> Result<&'a str, Error> {
        let Some(json) = self.json else {
            return Err(error("a saved JSON number outside a JSON slot"));
        };
        let text = self.json_text(json)?;
        if !matches!(self.marker, 0xd9 | 0xda) {
            return Ok(text);
        }
        text.strip_prefix('"')
            .and_then(|text| text.strip_suffix('"'))
            .ok_or_else(|| error("a saved JSON key is not a string"))
    }

    /// A transcoded JSON slot's next number, from its text as `serde_json` reads it
    /// where an `f32` or an `f64` is asked.
    #[inline(never)]
    fn json_number(
        &mut self,
        precision: super::json_number::Precision,
    ) -> Result<Token<'a>, Error> {
        let text = self.json_number_text()?;
        Ok(
            match super::json_number::number(text, precision).map_err(error)? {
                super::json_number::Number::U64(value) => Token::U64(value),
                super::json_number::Number::I64(value) => Token::I64(value),
                super::json_number::Number::F64(value) => Token::F64(value),
            },
        )
    }

    /// A transcoded JSON slot's next value as a 128-bit integer, from its text as
    /// `serde_json` reads one; `signed`: whether a `-` may lead it (an `i128`).
    #[inline(never)]
    fn json_wide(&mut self, signed: bool) -> Result<i128, Error> {
        let text = self.json_number_text()?;
        super::json_number::wide(text, signed).map_err(error)
    }

    /// An option's value: after a `Some` marker (read), or unmarked, where it is (an old
    /// slot's, or one `rmp-serde` wrote). A level of nesting only where another
    /// `Some` follows (so that `Some(Some(…))` as deep as the bytes go is refused at the
    /// depth limit, not a stack overflow): before a container, the container's level is
    /// enough, and an `Option` in each level of a recursive type (`next: Option<Box<Node>>`)
    /// reads as deep as `rmp-serde`'s bytes of it did.
    // Out of line, with one call of `visit_some` in it: that call inlines the reading of
    // the option's value, which each caller of `some` would otherwise compile again.
    #[inline(never)]
    fn some<V: Visitor<'a>>(&mut self, visitor: V) -> Result<V::Value, Error> {
        let marked = self.enter_some()?;
        let value = visitor.visit_some(&mut *self);
        if marked {
            self.depth -= 1;
        }
        value
    }

    /// Whether another `Some` marker follows (left ahead, for the value's own reading to
    /// pass), entered as a level of nesting.
    fn enter_some(&mut self) -> Result<bool, Error> {
        let marked = matches!(self.peek()?, Token::Some);
        if marked {
            self.enter()?;
        }
        Ok(marked)
    }

    /// An `i128` as `rmp-serde` writes it (16 bytes, big-endian) or any integer.
    fn wide(&mut self) -> Result<i128, Error> {
        Ok(match self.unwrapped()? {
            Token::U8(value) => value.into(),
            Token::U16(value) => value.into(),
            Token::U32(value) => value.into(),
            Token::U64(value) => value.into(),
            Token::I8(value) => value.into(),
            Token::I16(value) => value.into(),
            Token::I32(value) => value.into(),
            Token::I64(value) => value.into(),
            Token::Bin(data) if self.marker == 0xc4 => i128::from_be_bytes(
                data.try_into()
                    .map_err(|_| error("a saved 128-bit integer is not 16 bytes"))?,
            ),
            token => return Err(mismatch(token)),
        })
    }
}

fn mismatch(token: Token<'_>) -> Error {
    let kind = match token {
        Token::Nil => "nil",
        Token::Bool(_) => "a boolean",
        Token::Str(_) => "a string",
        Token::Bin(_) => "bytes",
        Token::Array(_) => "a sequence",
        Token::Map(_) => "a map",
        Token::Ext(..) => "an extension type",
        Token::Some => "a marked option",
        _ => "a number",
    };
    Error(format!("a saved local holds {kind}"))
}

impl<'a> Stream<'a> {
    /// What `deserialize_any` visits; `bytes`: whether a byte string is visited as bytes
    /// (else as a sequence of `u8`, where a sequence or struct is asked for).
    // Out of line: inlined, it is optimized once on its own and again in each caller it
    // lands in, for every saved type's visitor (issue 43); a call costs nothing beside it.
    #[inline(never)]
    fn any<V: Visitor<'a>>(&mut self, visitor: V, bytes: bool) -> Result<V::Value, Error> {
        let token = self.token()?;
        if self.json.is_some() {
            json_any(&token)?;
        }
        // One access for every kind of container, and one way out of them, so that a
        // visitor's `visit_seq` is compiled once for this format and `any` small.
        let mut items = Items {
            stream: self,
            left: 0,
            bytes: None,
        };
        let value = match token {
            Token::Str(text) => {
                return match std::str::from_utf8(text) {
                    Ok(text) => visitor.visit_str(text),
                    // As `rmp-serde`: a string that is not UTF-8 may be read as bytes.
                    Err(_) => visitor.visit_bytes(text).map_err(not_utf8),
                };
            }
            Token::Bin(data) if bytes => return visitor.visit_bytes(data),
            // Not a level of nesting, and not checked to its end, as in `rmp-serde`.
            Token::Bin(data) => {
                items.bytes = Some(data);
                return visitor.visit_seq(&mut items);
            }
            Token::Array(len) => {
                items.stream.enter()?;
                items.left = len;
                visitor.visit_seq(&mut items)?
            }
            Token::Map(len) => {
                items.stream.enter()?;
                items.left = len;
                visitor.visit_map(&mut items)?
            }
            Token::Ext(tag, data) => {
                items.stream.enter()?;
                visitor.visit_newtype_struct(Ext { tag, data })?
            }
            // A level of nesting: `Some(Some(…))` as deep as the bytes go is refused at
            // the depth limit, not a stack overflow.
            Token::Some => return self.some(visitor),
            token => return scalar(token, visitor),
        };
        let left = items.left;
        self.leave(left)?;
        Ok(value)
    }
}

/// A map key of a JSON slot where a number or a boolean is asked: its text as `serde_json`
/// reads a quoted key (`"1"`, `"-2"`, `"0.5"`, `"true"`). `None`: not one.
fn json_key(text: &[u8]) -> Option<Token<'static>> {
    match text {
        b"true" => return Some(Token::Bool(true)),
        b"false" => return Some(Token::Bool(false)),
        _ => {}
    }
    let text = std::str::from_utf8(text).ok()?;
    match super::json_number::number(text, super::json_number::Precision::Double).ok()? {
        super::json_number::Number::U64(value) => Some(Token::U64(value)),
        super::json_number::Number::I64(value) => Some(Token::I64(value)),
        super::json_number::Number::F64(value) => Some(Token::F64(value)),
    }
}

/// What a transcoded JSON slot's value may not be where `any` visits it: bytes (it holds
/// none), a number `serde_json` would not read ([`super::json`] keeps it as an extension
/// type), or any number if this build's `serde_json` reads numbers by their text (its
/// `arbitrary_precision` feature, which a crate of the build may turn on), as
/// `deserialize_any` then hands them out: this reader would hand out the `f64`, not the
/// digits, and so read another value.
fn json_any(token: &Token<'_>) -> Result<(), Error> {
    match token {
        Token::Bin(_) | Token::Ext(..) => Err(error("a saved JSON value holds no such value")),
        Token::U64(_) | Token::I64(_) | Token::F64(_)
            if super::json_number::arbitrary_precision() =>
        {
            Err(error(
                "a saved JSON number is read by its digits (serde_json's arbitrary_precision)",
            ))
        }
        _ => Ok(()),
    }
}

/// A `RawValue` as `serde_json` hands it to its visitor: one entry, [`RAW_VALUE`] to its
/// text.
struct RawValueMap<'a>(Option<&'a str>);

impl<'a> de::MapAccess<'a> for RawValueMap<'a> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        if self.0.is_none() {
            return Ok(None);
        }
        seed.deserialize(de::value::BorrowedStrDeserializer::new(RAW_VALUE))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.0.take() {
            Some(text) => seed.deserialize(de::value::BorrowedStrDeserializer::new(text)),
            None => Err(error("a saved raw JSON value read twice")),
        }
    }
}

/// A string that is not UTF-8 and not read as bytes either.
fn not_utf8(_: Error) -> Error {
    error("a saved string is not UTF-8")
}

/// A number, a boolean or `nil`; anything else is refused.
fn scalar<'a, V: Visitor<'a>>(token: Token<'a>, visitor: V) -> Result<V::Value, Error> {
    match token {
        Token::Nil => visitor.visit_unit(),
        Token::Bool(value) => visitor.visit_bool(value),
        Token::U8(value) => visitor.visit_u8(value),
        Token::U16(value) => visitor.visit_u16(value),
        Token::U32(value) => visitor.visit_u32(value),
        Token::U64(value) => visitor.visit_u64(value),
        Token::I8(value) => visitor.visit_i8(value),
        Token::I16(value) => visitor.visit_i16(value),
        Token::I32(value) => visitor.visit_i32(value),
        Token::I64(value) => visitor.visit_i64(value),
        Token::F32(value) => visitor.visit_f32(value),
        Token::F64(value) => visitor.visit_f64(value),
        token => Err(mismatch(token)),
    }
}

macro_rules! scalars {
    ($($method:ident)*) => {
        $(fn $method<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
            scalar(self.unwrapped()?, visitor)
        })*
    };
}

impl<'a> de::Deserializer<'a> for &mut Stream<'a> {
    type Error = Error;

    fn is_human_readable(&self) -> bool {
        // A JSON slot was written by `serde_json`, which is: a type that writes itself as
        // text there (an `IpAddr`) is read back as text.
        self.json.is_some()
    }

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.any(visitor, true)
    }

    scalars!(
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_f64
    );

    fn deserialize_f32<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.json.is_some() {
            // `serde_json` parses a float asked as an `f32` to the nearest `f32`.
            let token = self.json_number(super::json_number::Precision::Single)?;
            return scalar(token, visitor);
        }
        scalar(self.unwrapped()?, visitor)
    }

    fn deserialize_i128<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.json.is_some() {
            return visitor.visit_i128(self.json_wide(true)?);
        }
        visitor.visit_i128(self.wide()?)
    }

    fn deserialize_u128<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.json.is_some() {
            // Never negative: `json_wide(false)` refuses a sign.
            return visitor.visit_u128(self.json_wide(false)? as u128);
        }
        // As `rmp-serde`: the bits of the `i128`.
        visitor.visit_u128(self.wide()? as u128)
    }

    fn deserialize_option<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.peek()? {
            Token::Nil => {
                self.ahead = None;
                visitor.visit_none()
            }
            // Marked: its value follows. Unmarked: a value saved before a field became an
            // `Option`, or any value of bytes `rmp-serde` wrote, read where it is (`some`
            // finds no marker ahead of it).
            token => {
                if matches!(token, Token::Some) {
                    self.ahead = None;
                }
                self.some(visitor)
            }
        }
    }

    fn deserialize_unit_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        // `rmp-serde` writes a unit struct as `[]`.
        match self.peek()? {
            Token::Nil => {
                self.ahead = None;
                visitor.visit_unit()
            }
            Token::Array(0) if self.marker == 0x90 => {
                self.ahead = None;
                visitor.visit_unit()
            }
            _ => self.any(visitor, true),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        if name == RAW_VALUE {
            let text = self.raw_text()?;
            return visitor.visit_map(RawValueMap(Some(text)));
        }
        if name == EXT_STRUCT {
            return match self.token()? {
                Token::Ext(tag, data) => visitor.visit_newtype_struct(Ext { tag, data }),
                token => Err(mismatch(token)),
            };
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.any(visitor, false)
    }

    fn deserialize_tuple<V: Visitor<'a>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        self.any(visitor, false)
    }

    fn deserialize_tuple_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.any(visitor, false)
    }

    fn deserialize_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.any(visitor, false)
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.peek()? {
            // A variant with content: `{variant: content}`, which follow (not a level of
            // nesting for `rmp-serde`).
            Token::Map(1) => {
                self.ahead = None;
                visitor.visit_enum(Variant(self))
            }
            Token::Map(_) => Err(error(
                "a saved enum is a map of more or less than one entry",
            )),
            // `rmp-serde` never writes an enum as an array.
            Token::Array(_) => Err(error("a saved enum is a sequence")),
            // `serde_json` reads a unit variant by its name only, never by its index.
            Token::Str(_) => visitor.visit_enum(UnitVariant(self)),
            _ if self.json.is_some() => Err(error("a saved JSON enum is not a name")),
            // A unit variant: its name (or index), read next.
            _ => visitor.visit_enum(UnitVariant(self)),
        }
    }

    /// A field's or a variant's name or index: what `deserialize_any` would visit, a
    /// string, bytes or a scalar, each with the visit `deserialize_any` makes (the field
    /// visitor of a struct with a `flatten` field keeps a key of any scalar kind). Only a
    /// sequence, a map or an extension type, which no identifier is, is refused without
    /// a visit: so a derived field visitor is not compiled with `deserialize_any`'s
    /// container visits.
    fn deserialize_identifier<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.token()? {
            Token::Str(text) => match std::str::from_utf8(text) {
                Ok(text) => visitor.visit_str(text),
                Err(_) => visitor.visit_bytes(text).map_err(not_utf8),
            },
            Token::Bin(data) => visitor.visit_bytes(data),
            token => scalar(token, visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        <W: Visitor<'a>>
        char str string bytes byte_buf unit map ignored_any
    }
}

/// The values of a sequence, or the entries of a map, that follow in the stream; or the
/// bytes of a byte string read as a sequence.
struct Items<'s, 'a> {
    stream: &'s mut Stream<'a>,
    left: u32,
    /// The bytes left, where a byte string is read as a sequence of `u8`.
    bytes: Option<&'a [u8]>,
}

impl<'a> de::SeqAccess<'a> for Items<'_, 'a> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        if let Some(bytes) = &mut self.bytes {
            // As `rmp-serde`: each byte as a `u8` of its own.
            let Some((&first, rest)) = bytes.split_first() else {
                return Ok(None);
            };
            *bytes = rest;
            return seed
                .deserialize(de::value::U8Deserializer::new(first))
                .map(Some);
        }
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.stream).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(match self.bytes {
            Some(bytes) => bytes.len(),
            None => self.left as usize,
        })
    }
}

impl<'a> de::MapAccess<'a> for Items<'_, 'a> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.stream).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, Error> {
        seed.deserialize(&mut *self.stream)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left as usize)
    }
}

/// A variant written as `{variant: content}`: the variant, then its content, follow.
struct Variant<'s, 'a>(&'s mut Stream<'a>);

impl<'a, 's> de::EnumAccess<'a> for Variant<'s, 'a> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'a>>(self, seed: S) -> Result<(S::Value, Self), Error> {
        let variant = seed.deserialize(&mut *self.0)?;
        Ok((variant, self))
    }
}

impl<'a> de::VariantAccess<'a> for Variant<'_, 'a> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.0.token()? {
            Token::Nil => Ok(()),
            token => Err(mismatch(token)),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'a>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(self.0)
    }

    fn tuple_variant<V: Visitor<'a>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        self.0.any(visitor, false)
    }

    fn struct_variant<V: Visitor<'a>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.0.any(visitor, false)
    }
}

/// A unit variant, written as its name.
struct UnitVariant<'s, 'a>(&'s mut Stream<'a>);

impl<'a, 's> de::EnumAccess<'a> for UnitVariant<'s, 'a> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'a>>(self, seed: S) -> Result<(S::Value, Self), Error> {
        let variant = seed.deserialize(&mut *self.0)?;
        Ok((variant, self))
    }
}

impl<'a> de::VariantAccess<'a> for UnitVariant<'_, 'a> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'a>>(self, _seed: T) -> Result<T::Value, Error> {
        Err(de::Error::invalid_type(
            Unexpected::UnitVariant,
            &"newtype variant",
        ))
    }

    fn tuple_variant<V: Visitor<'a>>(self, _len: usize, _visitor: V) -> Result<V::Value, Error> {
        Err(de::Error::invalid_type(
            Unexpected::UnitVariant,
            &"tuple variant",
        ))
    }

    fn struct_variant<V: Visitor<'a>>(
        self,
        _fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Error> {
        Err(de::Error::invalid_type(
            Unexpected::UnitVariant,
            &"struct variant",
        ))
    }
}

/// An extension type, as `rmp-serde` hands it to a visitor: a sequence of its tag
/// (`visit_i8`) and its bytes.
struct Ext<'a> {
    tag: i8,
    data: &'a [u8],
}

impl<'a> de::Deserializer<'a> for Ext<'a> {
    type Error = Error;

    fn is_human_readable(&self) -> bool {
        false
    }

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_seq(ExtParts { ext: self, next: 0 })
    }

    serde::forward_to_deserialize_any! {
        <W: Visitor<'a>>
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map struct
        enum identifier ignored_any
    }
}

struct ExtParts<'a> {
    ext: Ext<'a>,
    next: u8,
}

impl<'a> de::SeqAccess<'a> for ExtParts<'a> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.next += 1;
        match self.next {
            1 => seed
                .deserialize(de::value::I8Deserializer::new(self.ext.tag))
                .map(Some),
            2 => seed
                .deserialize(de::value::BytesDeserializer::new(self.ext.data))
                .map(Some),
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use serde::de::DeserializeOwned;
    use serde::{Deserialize, Serialize};

    use super::*;

    /// `rmp-serde`'s own reading, the oracle.
    fn by_rmp<T: DeserializeOwned>(mut bytes: &[u8]) -> Result<T, String> {
        let mut deserializer = rmp_serde::Deserializer::new(&mut bytes);
        let value = T::deserialize(&mut deserializer).map_err(|error| error.to_string())?;
        if bytes.is_empty() {
            Ok(value)
        } else {
            Err("trailing bytes".into())
        }
    }

    fn by_saga<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
        from_slice(bytes).map_err(|error| error.to_string())
    }

    /// How saga writes a MessagePack slot: structs as maps.
    fn written<T: Serialize>(value: &T) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut serializer = rmp_serde::Serializer::new(&mut bytes).with_struct_map();
        value.serialize(&mut serializer).expect("writes");
        bytes
    }

    /// A value's values are counted as a request's JSON values are (scalars, sequences,
    /// maps, keys), and a state's reading stops at its bound: one value short of what the
    /// bytes hold is refused, not read on (the fifth review: a state of small numbers read
    /// back cost some 80 bytes for each byte sealed).
    #[test]
    fn values_are_counted_and_a_read_past_the_bound_is_refused() {
        let value = serde_json::json!({"a": [0, 1, {"b": null}], "c": "x"});
        let bytes = written(&value);
        // {a: [0, 1, {b: null}], c: "x"}: map, "a", array, 0, 1, map, "b", null, "c", "x".
        assert_eq!(values_in(&bytes), 10);
        assert_eq!(values_in(&written(&vec![0u8; 1000])), 1001);
        let read_within = |bound: usize| {
            let round = values::RoundValues::new(bound);
            futures::executor::block_on(round.scope(async {
                values::bounded_read(|| from_slice_marked::<serde_json::Value>(&bytes))
            }))
        };
        assert_eq!(read_within(10).expect("within the bound"), value);
        let refused = read_within(9).expect_err("past the bound");
        assert!(refused.to_string().contains("more values"), "{refused}");
        // Outside a state's reading (a slot read back as it is written), nothing bounds it.
        assert_eq!(
            from_slice_marked::<serde_json::Value>(&bytes).expect("reads"),
            value
        );
    }

    /// Reads `bytes` as `T` both ways: both read it, as the same value (compared by
    /// `Debug`, which tells NaN and `-0.0` apart as `==` would not), or both refuse it.
    fn same<T: DeserializeOwned + std::fmt::Debug>(bytes: &[u8]) {
        let (oracle, saga) = (by_rmp::<T>(bytes), by_saga::<T>(bytes));
        match (&oracle, &saga) {
            (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "{bytes:?}"),
            (Err(_), Err(_)) => {}
            _ => panic!("rmp-serde: {oracle:?}, saga: {saga:?}, for {bytes:?}"),
        }
    }

    fn round_trip<T: Serialize + DeserializeOwned + std::fmt::Debug>(value: T) {
        same::<T>(&written(&value));
        assert!(by_saga::<T>(&written(&value)).is_ok(), "{value:?}");
    }

    #[derive(Debug, Serialize, Deserialize)]
    struct Unit;

    #[derive(Debug, Serialize, Deserialize)]
    struct Newtype(String);

    #[derive(Debug, Serialize, Deserialize)]
    struct Pair(i8, Option<u64>);

    #[derive(Debug, Serialize, Deserialize)]
    enum Shape {
        Empty,
        Circle(f64),
        Rect(u16, u16),
        Named { name: String, sides: Vec<u8> },
    }

    #[derive(Debug, Serialize, Deserialize)]
    #[serde(untagged)]
    enum Loose {
        Number(i64),
        Text(String),
        Many(Vec<Loose>),
    }

    #[derive(Debug, Serialize, Deserialize)]
    #[serde(tag = "kind")]
    enum Tagged {
        Start { at: u32 },
        Stop,
    }

    #[derive(Debug, Serialize, Deserialize)]
    #[serde(tag = "t", content = "c")]
    enum Adjacent {
        Some(String),
        None,
    }

    #[derive(Debug, Serialize, Deserialize)]
    struct Inner {
        a: u8,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        b: Option<String>,
    }

    #[derive(Debug, Serialize, Deserialize)]
    struct Outer {
        #[serde(rename = "id")]
        key: u32,
        #[serde(flatten)]
        inner: Inner,
        extra: BTreeMap<String, serde_json::Value>,
    }

    #[derive(Debug, Serialize, Deserialize)]
    struct Everything {
        unit: Unit,
        newtype: Newtype,
        pair: Pair,
        shapes: Vec<Shape>,
        loose: Vec<Loose>,
        tagged: Vec<Tagged>,
        adjacent: Vec<Adjacent>,
        outer: Outer,
        nested: Option<Option<u8>>,
        by_tuple: HashMap<(u32, u32), String>,
        wide: (i128, u128),
        floats: (f32, f64, f64, f64),
        letters: (char, String),
        small: (i8, i16, i32, i64, u8, u16, u32, u64),
        bytes: Vec<u8>,
    }

    fn everything() -> Everything {
        Everything {
            unit: Unit,
            newtype: Newtype("n".into()),
            pair: Pair(-3, Some(u64::MAX)),
            shapes: vec![
                Shape::Empty,
                Shape::Circle(-0.0),
                Shape::Rect(1, 65535),
                Shape::Named {
                    name: "é".into(),
                    sides: vec![0, 255],
                },
            ],
            loose: vec![
                Loose::Number(-1),
                Loose::Text("x".into()),
                Loose::Many(vec![Loose::Number(i64::MIN)]),
            ],
            tagged: vec![Tagged::Start { at: 7 }, Tagged::Stop],
            adjacent: vec![Adjacent::Some("c".into()), Adjacent::None],
            outer: Outer {
                key: 9,
                inner: Inner { a: 1, b: None },
                extra: [(
                    "k".to_owned(),
                    serde_json::json!({"a": [1, 2.5, null, "s"]}),
                )]
                .into(),
            },
            nested: Some(None),
            by_tuple: [((1, 2), "one-two".to_owned())].into(),
            wide: (i128::MIN, u128::MAX),
            floats: (f32::NAN, f64::INFINITY, -1.5e300, f64::NAN),
            letters: ('ß', "日本".into()),
            small: (
                -128,
                -32768,
                i32::MIN,
                i64::MIN,
                255,
                65535,
                u32::MAX,
                u64::MAX,
            ),
            bytes: vec![1, 2, 3],
        }
    }

    #[test]
    fn the_reader_reads_what_rmp_serde_reads() {
        round_trip(everything());
        round_trip(serde_json::json!({"a": [1, -2, 3.5, null, true, "x", {"b": {}}], "c": []}));
        round_trip(Shape::Empty);
        round_trip(Some(Shape::Rect(2, 3)));
        round_trip(Unit);
        round_trip(());
        round_trip(vec![(); 3]);
    }

    #[derive(Debug, Serialize, Deserialize)]
    struct Before {
        from: String,
        cents: u64,
        memo: Option<String>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct After {
        cents: u64,
        from: String,
        #[serde(default)]
        added: Vec<u8>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Required {
        from: String,
        needed: u8,
    }

    /// A build that changed a MessagePack type reads it as rmp-serde would: by name, a
    /// field gained with a default filled in, a required one refused.
    #[test]
    fn a_changed_type_reads_or_is_refused_as_rmp_serde_would() {
        let bytes = written(&Before {
            from: "a".into(),
            cents: 5,
            memo: Some("m".into()),
        });
        same::<After>(&bytes);
        assert!(by_saga::<After>(&bytes).is_ok());
        same::<Required>(&bytes);
        assert!(by_saga::<Required>(&bytes).is_err());
        same::<Shape>(&bytes);
        same::<Vec<String>>(&bytes);
        same::<serde_json::Value>(&bytes);
        same::<(String, u64)>(&written(&("a", 5u64)));
        same::<(String, u64, u8)>(&written(&("a", 5u64)));
        same::<(String,)>(&written(&("a", 5u64)));
        same::<u8>(&written(&300u16));
        same::<i8>(&written(&-200i16));
        same::<f32>(&written(&1u8));
        same::<String>(&written(&1u8));
        same::<bool>(&written(&"true"));
        same::<Unit>(&written(&Vec::<u8>::new()));
        same::<Unit>(&written(&1u8));
        same::<Shape>(&written(&"Empty"));
        same::<Shape>(&written(&0u8));
        same::<Shape>(&written(&"Circle"));
        same::<Shape>(&written(&BTreeMap::from([("Empty", 1u8)])));
        same::<Shape>(&written(&BTreeMap::from([("Rect", 1u8), ("Empty", 2)])));
        same::<i128>(&written(&-5i8));
        same::<u128>(&written(&-5i8));
        same::<i128>(&written(&[1u8; 15].as_slice()));
    }

    /// An extension type, as rmp-serde writes a newtype named `_ExtStruct` of a tag and
    /// bytes (`rmpv::Value::Ext` does so).
    #[derive(Debug, PartialEq)]
    struct Extension(i8, Vec<u8>);

    struct Bytes<'a>(&'a [u8]);

    impl Serialize for Bytes<'_> {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_bytes(self.0)
        }
    }

    impl Serialize for Extension {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_newtype_struct(EXT_STRUCT, &(self.0, Bytes(&self.1)))
        }
    }

    impl<'de> Deserialize<'de> for Extension {
        fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Whole;
            impl<'de> Visitor<'de> for Whole {
                type Value = Extension;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an extension type")
                }
                fn visit_newtype_struct<D: de::Deserializer<'de>>(
                    self,
                    inner: D,
                ) -> Result<Extension, D::Error> {
                    inner.deserialize_tuple(2, Parts)
                }
            }
            struct Parts;
            impl<'de> Visitor<'de> for Parts {
                type Value = Extension;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a tag and bytes")
                }
                fn visit_seq<A: de::SeqAccess<'de>>(
                    self,
                    mut seq: A,
                ) -> Result<Extension, A::Error> {
                    let tag: i8 = seq
                        .next_element()?
                        .ok_or_else(|| de::Error::custom("no tag"))?;
                    let data: Data = seq
                        .next_element()?
                        .ok_or_else(|| de::Error::custom("no data"))?;
                    Ok(Extension(tag, data.0))
                }
            }
            struct Data(Vec<u8>);
            impl<'de> Deserialize<'de> for Data {
                fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                    struct Raw;
                    impl Visitor<'_> for Raw {
                        type Value = Data;
                        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                            f.write_str("bytes")
                        }
                        fn visit_bytes<E>(self, bytes: &[u8]) -> Result<Data, E> {
                            Ok(Data(bytes.to_vec()))
                        }
                    }
                    d.deserialize_bytes(Raw)
                }
            }
            deserializer.deserialize_newtype_struct(EXT_STRUCT, Whole)
        }
    }

    #[test]
    fn an_extension_type_reads_as_rmp_serde_reads_it() {
        for len in [1, 2, 4, 8, 16, 3, 300, 70_000] {
            let value = Extension(-3, (0..len).map(|i| i as u8).collect());
            let bytes = written(&value);
            same::<Extension>(&bytes);
            assert_eq!(by_saga::<Extension>(&bytes), Ok(value));
            same::<serde_json::Value>(&bytes);
            same::<Vec<Extension>>(&written(&vec![Extension(1, vec![2])]));
        }
        same::<Extension>(&written(&5u8));
    }

    /// Non-canonical bytes rmp-serde never writes are refused as it refuses them.
    #[test]
    fn longer_encodings_are_refused_where_rmp_serde_refuses_them() {
        same::<Unit>(&[0xdc, 0, 0]);
        same::<Unit>(&[0x90]);
        let mut wide = vec![0xc5, 0, 16];
        wide.extend([1; 16]);
        same::<i128>(&wide);
        let mut short = vec![0xc4, 16];
        short.extend([1; 16]);
        same::<i128>(&short);
        same::<u128>(&short);
    }

    /// A string that is not UTF-8 reads as bytes where the type takes bytes, and is
    /// refused elsewhere, both ways.
    #[test]
    fn invalid_utf8_is_read_as_rmp_serde_reads_it() {
        let bytes = [0xa2, 0xff, 0xfe];
        same::<String>(&bytes);
        same::<serde_json::Value>(&bytes);
        same::<Vec<u8>>(&bytes);
    }

    /// A byte string where a sequence, tuple or struct is asked for reads as its bytes,
    /// each a `u8`, as rmp-serde reads it: through the access every sequence goes
    /// through.
    #[test]
    fn a_byte_string_reads_as_a_sequence_as_rmp_serde_reads_it() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Rgb {
            r: u8,
            g: u8,
            b: u8,
        }
        let bin = [0xc4, 3, 1, 2, 3];
        same::<Vec<u8>>(&bin);
        same::<[u8; 3]>(&bin);
        same::<[u8; 2]>(&bin);
        same::<(u8, u8, u8)>(&bin);
        same::<Rgb>(&bin);
        same::<Vec<u16>>(&bin);
        same::<Vec<String>>(&bin);
        same::<Vec<Option<u8>>>(&bin);
        same::<Vec<u8>>(&[0xc4, 0]);
        assert_eq!(by_saga::<Vec<u8>>(&bin), Ok(vec![1, 2, 3]));
        assert_eq!(by_saga::<(u8, u8, u8)>(&bin), Ok((1, 2, 3)));
        // Inside a sequence, where the depth counts and the array is read to its end.
        same::<Vec<Vec<u8>>>(&[0x92, 0xc4, 1, 7, 0xc4, 0]);
        assert_eq!(
            by_saga::<Vec<Vec<u8>>>(&[0x92, 0xc4, 1, 7, 0xc4, 0]),
            Ok(vec![vec![7], vec![]])
        );
    }

    /// A struct's field names and an enum's variants, under every kind of key: read or
    /// refused as rmp-serde reads or refuses them, with the message a visitor's default
    /// method gives.
    #[test]
    fn identifiers_of_every_kind_read_as_rmp_serde_reads_them() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Point {
            x: u8,
            #[serde(default)]
            y: u8,
        }
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        enum Mode {
            Fast,
            Slow(u8),
        }
        // {key: 1, "x": 2}, for each kind of key (an unknown one is skipped, a wrong kind
        // is refused).
        let keys: [&[u8]; 14] = [
            &[0xa1, b'y'],
            &[0xa1, b'z'],
            &[0xa2, 0xff, 0xfe],
            &[0xc4, 1, b'y'],
            &[0x01],
            &[0xcc, 1],
            &[0xcd, 0, 7],
            &[0xff],
            &[0xd0, 1],
            &[0xca, 0, 0, 0, 0],
            &[0xcb, 0, 0, 0, 0, 0, 0, 0, 0],
            &[0xc0],
            &[0xc3],
            &[0x90],
        ];
        for key in keys {
            let mut bytes = vec![0x82];
            bytes.extend_from_slice(key);
            bytes.extend([0x01, 0xa1, b'x', 0x02]);
            same::<Point>(&bytes);
        }
        assert_eq!(
            by_saga::<Point>(&[0x81, 0xc3, 0x01]).unwrap_err(),
            "invalid type: boolean `true`, expected field identifier"
        );
        // A struct with a `flatten` field keeps keys of every scalar kind through its
        // field visitor: negative, unsigned, boolean and float keys read as rmp-serde
        // reads them.
        #[derive(Debug, Serialize, Deserialize, PartialEq)]
        struct Signed {
            name: String,
            #[serde(flatten)]
            extra: BTreeMap<i32, String>,
        }
        #[derive(Debug, Serialize, Deserialize, PartialEq)]
        struct Flags {
            name: String,
            #[serde(flatten)]
            extra: BTreeMap<bool, u8>,
        }
        let signed = Signed {
            name: "a".into(),
            extra: BTreeMap::from([(-70_000, "x".into()), (-1, "y".into()), (7, "z".into())]),
        };
        let bytes = written(&signed);
        same::<Signed>(&bytes);
        assert_eq!(by_saga::<Signed>(&bytes), Ok(signed));
        let flags = Flags {
            name: "b".into(),
            extra: BTreeMap::from([(false, 1), (true, 2)]),
        };
        let bytes = written(&flags);
        same::<Flags>(&bytes);
        assert_eq!(by_saga::<Flags>(&bytes), Ok(flags));
        // {"name": "c", 1.5: 2, nil: 3} into a flattened JSON value.
        same::<Signed>(&[
            0x83, 0xa4, b'n', b'a', b'm', b'e', 0xa1, b'c', 0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0,
            0x02, 0xc0, 0x03,
        ]);
        // Variants by name and by index, and a wrong kind refused.
        for bytes in [
            &[0xa4, b'F', b'a', b's', b't'][..],
            &[0x00],
            &[0x81, 0xa4, b'S', b'l', b'o', b'w', 0x05],
            &[0x81, 0x01, 0x05],
            &[0x81, 0x07, 0x05],
            &[0xc2],
            &[0xff],
        ] {
            same::<Mode>(bytes);
        }
    }

    /// Hostile bytes: the reader never panics, never reads a value rmp-serde would not
    /// read as the same, and refuses an extension type (which saga never writes).
    #[test]
    fn arbitrary_bytes_are_read_the_same_or_refused() {
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut read = 0;
        for _ in 0..20_000 {
            let len = (next() % 24) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            if let Ok(value) = by_saga::<serde_json::Value>(&bytes) {
                read += 1;
                assert_eq!(
                    by_rmp::<serde_json::Value>(&bytes).as_ref().ok(),
                    Some(&value),
                    "{bytes:?}"
                );
            }
            if let Ok(value) = by_saga::<Shape>(&bytes) {
                let oracle = by_rmp::<Shape>(&bytes).expect("rmp-serde reads it too");
                assert_eq!(format!("{oracle:?}"), format!("{value:?}"));
            }
        }
        assert!(read > 300, "only {read} of the samples were values");
        // Valid bytes with one byte changed: most still parse, and reach every path.
        let valid = written(&everything());
        let mut agreed = 0;
        for _ in 0..5_000 {
            let mut bytes = valid.clone();
            let at = (next() as usize) % bytes.len();
            bytes[at] = next() as u8;
            if let Ok(value) = by_saga::<Everything>(&bytes) {
                let oracle = by_rmp::<Everything>(&bytes).expect("rmp-serde reads it too");
                assert_eq!(format!("{oracle:?}"), format!("{value:?}"), "{bytes:?}");
                agreed += 1;
            }
            if let Ok(value) = by_saga::<serde_json::Value>(&bytes) {
                assert_eq!(by_rmp::<serde_json::Value>(&bytes).ok(), Some(value));
            }
        }
        assert!(
            agreed > 500,
            "only {agreed} of the changed values were read"
        );
        assert!(by_saga::<serde_json::Value>(&[0xd4, 1, 2]).is_err());
        // Deep nesting is refused at rmp-serde's depth, not a stack overflow. (A debug
        // build's frames are large: rmp-serde's own reading of 1,000 levels overflows a
        // test thread's 2 MiB, so both run on a larger stack.)
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(|| {
                let mut deep = vec![0x91; 1_000];
                deep.push(0xc0);
                same::<serde_json::Value>(&deep);
                assert!(by_saga::<serde_json::Value>(&deep).is_ok());
                // At the limit: rmp-serde reads 1,023 levels and refuses 1,024.
                for levels in [1_022, 1_023, 1_024] {
                    let mut deep = vec![0x91; levels];
                    deep.push(0xc0);
                    same::<serde_json::Value>(&deep);
                }
                let mut deep = vec![0x91; 1_023];
                deep.push(0xc0);
                assert!(by_saga::<serde_json::Value>(&deep).is_ok());
                deep.insert(0, 0x91);
                assert!(by_saga::<serde_json::Value>(&deep).is_err());
                assert!(by_saga::<serde_json::Value>(&[0x91; 5_000]).is_err());
                same::<serde_json::Value>(&[0x91; 5_000]);
            })
            .expect("a thread")
            .join()
            .expect("no overflow");
        // A length larger than the input allocates no more than the input.
        assert!(by_saga::<serde_json::Value>(&[0xdd, 0xff, 0xff, 0xff, 0xff]).is_err());
    }
}
