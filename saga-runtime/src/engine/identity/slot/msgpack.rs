//! A MessagePack slot's value, read as `rmp-serde` reads it, through a tree parsed once.
//!
//! Why not `rmp_serde::Deserializer`: it parses as it visits, so its parsing code is
//! compiled again for each visitor type that reads it: each struct a tool saves as
//! MessagePack, and each of that struct's field enums (about 2,000 lines of LLVM IR
//! apiece, issue 43). Here the bytes are parsed into a [`Content`] tree by code compiled
//! once, and only the walk of the tree, small, is compiled per visitor.
//!
//! What a visitor is told is what `rmp-serde` 1.3 (the writer of these bytes) tells it
//! for the same bytes: numbers by their encoded width (`visit_u8` for a positive fixint),
//! strings borrowed (and as bytes where they are not UTF-8), `nil` as a unit or `None`,
//! a unit struct from `nil` or `[]`, an enum from a one-entry map or a string, a
//! sequence or map that its visitor leaves unread refused. The module's tests read the
//! same bytes both ways and compare. Extension types, which saga never writes, are
//! refused.

use std::fmt;

use serde::de::{self, DeserializeSeed, Unexpected, Visitor};

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
    fn custom<T: fmt::Display>(message: T) -> Self {
        Error(message.to_string())
    }
}

fn error(message: &str) -> Error {
    Error(message.to_owned())
}

/// One MessagePack value, borrowing its strings and byte strings from the input.
#[derive(Debug)]
pub(crate) enum Content<'a> {
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
    Array(Vec<Content<'a>>),
    Map(Vec<(Content<'a>, Content<'a>)>),
}

/// The one value `bytes` holds, to its last byte.
pub(crate) fn parse(bytes: &[u8]) -> Result<Content<'_>, Error> {
    let mut input = bytes;
    let content = Parser { input: &mut input }.value(0)?;
    if input.is_empty() {
        Ok(content)
    } else {
        Err(error("trailing bytes in a saved local"))
    }
}

struct Parser<'a, 'i> {
    input: &'i mut &'a [u8],
}

impl<'a> Parser<'a, '_> {
    fn take(&mut self, len: usize) -> Result<&'a [u8], Error> {
        if self.input.len() < len {
            return Err(error("a saved local ends early"));
        }
        let (taken, rest) = self.input.split_at(len);
        *self.input = rest;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// A length of `width` bytes, big-endian.
    fn len(&mut self, width: usize) -> Result<usize, Error> {
        Ok(match width {
            1 => usize::from(self.array::<1>()?[0]),
            2 => usize::from(u16::from_be_bytes(self.array()?)),
            _ => u32::from_be_bytes(self.array()?) as usize,
        })
    }

    fn value(&mut self, depth: u16) -> Result<Content<'a>, Error> {
        let [marker] = self.array::<1>()?;
        Ok(match marker {
            0x00..=0x7f => Content::U8(marker),
            0x80..=0x8f => self.map(usize::from(marker & 0x0f), depth)?,
            0x90..=0x9f => self.seq(usize::from(marker & 0x0f), depth)?,
            0xa0..=0xbf => Content::Str(self.take(usize::from(marker & 0x1f))?),
            0xc0 => Content::Nil,
            0xc2 => Content::Bool(false),
            0xc3 => Content::Bool(true),
            0xc4..=0xc6 => {
                let len = self.len(1 << (marker - 0xc4))?;
                Content::Bin(self.take(len)?)
            }
            0xca => Content::F32(f32::from_be_bytes(self.array()?)),
            0xcb => Content::F64(f64::from_be_bytes(self.array()?)),
            0xcc => Content::U8(self.array::<1>()?[0]),
            0xcd => Content::U16(u16::from_be_bytes(self.array()?)),
            0xce => Content::U32(u32::from_be_bytes(self.array()?)),
            0xcf => Content::U64(u64::from_be_bytes(self.array()?)),
            0xd0 => Content::I8(i8::from_be_bytes(self.array()?)),
            0xd1 => Content::I16(i16::from_be_bytes(self.array()?)),
            0xd2 => Content::I32(i32::from_be_bytes(self.array()?)),
            0xd3 => Content::I64(i64::from_be_bytes(self.array()?)),
            0xd9..=0xdb => {
                let len = self.len(1 << (marker - 0xd9))?;
                Content::Str(self.take(len)?)
            }
            0xdc | 0xdd => {
                let len = self.len(2 << (marker - 0xdc))?;
                self.seq(len, depth)?
            }
            0xde | 0xdf => {
                let len = self.len(2 << (marker - 0xde))?;
                self.map(len, depth)?
            }
            0xe0..=0xff => Content::I8(marker as i8),
            // 0xc1 is never used; 0xc7..=0xc9 and 0xd4..=0xd8 are extension types.
            _ => return Err(error("a saved local holds a MessagePack extension type")),
        })
    }

    fn nested(depth: u16) -> Result<u16, Error> {
        if depth >= MAX_DEPTH {
            Err(error("depth limit exceeded"))
        } else {
            Ok(depth + 1)
        }
    }

    fn seq(&mut self, len: usize, depth: u16) -> Result<Content<'a>, Error> {
        let depth = Self::nested(depth)?;
        // Each element takes a byte at least: a length the input cannot hold allocates
        // no more than the input's size.
        let mut items = Vec::with_capacity(len.min(self.input.len()));
        for _ in 0..len {
            items.push(self.value(depth)?);
        }
        Ok(Content::Array(items))
    }

    fn map(&mut self, len: usize, depth: u16) -> Result<Content<'a>, Error> {
        let depth = Self::nested(depth)?;
        let mut entries = Vec::with_capacity(len.min(self.input.len() / 2));
        for _ in 0..len {
            let key = self.value(depth)?;
            entries.push((key, self.value(depth)?));
        }
        Ok(Content::Map(entries))
    }
}

/// Reads a value from a parsed tree, as `rmp-serde`'s deserializer reads its bytes.
pub(crate) struct Reader<'a, 'c> {
    content: &'c Content<'a>,
}

impl<'a, 'c> Reader<'a, 'c> {
    pub(crate) fn new(content: &'c Content<'a>) -> Self {
        Reader { content }
    }

    /// What `deserialize_any` visits; `bytes`: whether a byte string is visited as bytes
    /// (else as a sequence of `u8`, where a sequence or struct is asked for).
    fn any<V: Visitor<'a>>(self, visitor: V, bytes: bool) -> Result<V::Value, Error> {
        match self.content {
            Content::Str(text) => match std::str::from_utf8(text) {
                Ok(text) => visitor.visit_borrowed_str(text),
                // As `rmp-serde`: a string that is not UTF-8 may be read as bytes.
                Err(_) => visitor
                    .visit_borrowed_bytes(text)
                    .map_err(|_: Error| error("a saved string is not UTF-8")),
            },
            Content::Bin(data) if bytes => visitor.visit_borrowed_bytes(data),
            Content::Bin(data) => {
                visitor.visit_seq(de::value::SeqDeserializer::new(data.iter().copied()))
            }
            Content::Array(items) => {
                let mut access = Items(items.iter());
                let value = visitor.visit_seq(&mut access)?;
                match access.0.len() {
                    0 => Ok(value),
                    _ => Err(error("a saved sequence was not read to its end")),
                }
            }
            Content::Map(entries) => {
                let mut access = Entries {
                    entries: entries.iter(),
                    value: None,
                };
                let value = visitor.visit_map(&mut access)?;
                match access.entries.len() {
                    0 => Ok(value),
                    _ => Err(error("a saved map was not read to its end")),
                }
            }
            _ => self.number(visitor),
        }
    }

    /// A number, a boolean or `nil`; anything else is refused.
    fn number<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        match *self.content {
            Content::Nil => visitor.visit_unit(),
            Content::Bool(value) => visitor.visit_bool(value),
            Content::U8(value) => visitor.visit_u8(value),
            Content::U16(value) => visitor.visit_u16(value),
            Content::U32(value) => visitor.visit_u32(value),
            Content::U64(value) => visitor.visit_u64(value),
            Content::I8(value) => visitor.visit_i8(value),
            Content::I16(value) => visitor.visit_i16(value),
            Content::I32(value) => visitor.visit_i32(value),
            Content::I64(value) => visitor.visit_i64(value),
            Content::F32(value) => visitor.visit_f32(value),
            Content::F64(value) => visitor.visit_f64(value),
            _ => Err(self.mismatch()),
        }
    }

    fn mismatch(&self) -> Error {
        Error(format!("a saved local holds {}", kind(self.content)))
    }

    /// An `i128` as `rmp-serde` writes it (16 bytes, big-endian) or any integer.
    fn wide(&self) -> Result<i128, Error> {
        Ok(match *self.content {
            Content::U8(value) => value.into(),
            Content::U16(value) => value.into(),
            Content::U32(value) => value.into(),
            Content::U64(value) => value.into(),
            Content::I8(value) => value.into(),
            Content::I16(value) => value.into(),
            Content::I32(value) => value.into(),
            Content::I64(value) => value.into(),
            Content::Bin(data) => i128::from_be_bytes(
                data.try_into()
                    .map_err(|_| error("a saved 128-bit integer is not 16 bytes"))?,
            ),
            _ => return Err(self.mismatch()),
        })
    }
}

fn kind(content: &Content<'_>) -> &'static str {
    match content {
        Content::Nil => "nil",
        Content::Bool(_) => "a boolean",
        Content::Str(_) => "a string",
        Content::Bin(_) => "bytes",
        Content::Array(_) => "a sequence",
        Content::Map(_) => "a map",
        _ => "a number",
    }
}

macro_rules! number {
    ($($method:ident)*) => {
        $(fn $method<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
            self.number(visitor)
        })*
    };
}

impl<'a> de::Deserializer<'a> for Reader<'a, '_> {
    type Error = Error;

    fn is_human_readable(&self) -> bool {
        false
    }

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.any(visitor, true)
    }

    number!(
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_f32
        deserialize_f64
    );

    fn deserialize_i128<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i128(self.wide()?)
    }

    fn deserialize_u128<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        // As `rmp-serde`: the bits of the `i128`.
        visitor.visit_u128(self.wide()? as u128)
    }

    fn deserialize_option<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.content {
            Content::Nil => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        // `rmp-serde` writes a unit struct as `[]`.
        match self.content {
            Content::Nil => visitor.visit_unit(),
            Content::Array(items) if items.is_empty() => visitor.visit_unit(),
            _ => self.any(visitor, true),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
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
        match self.content {
            // A variant with content: `{variant: content}`.
            Content::Map(entries) => match entries.as_slice() {
                [(variant, content)] => visitor.visit_enum(Variant { variant, content }),
                _ => Err(error(
                    "a saved enum is a map of more or less than one entry",
                )),
            },
            // `rmp-serde` never writes an enum as an array.
            Content::Array(_) => Err(error("a saved enum is a sequence")),
            // A unit variant: its name.
            _ => visitor.visit_enum(UnitVariant(self)),
        }
    }

    serde::forward_to_deserialize_any! {
        <W: Visitor<'a>>
        char str string bytes byte_buf unit map identifier ignored_any
    }
}

struct Items<'a, 'c>(std::slice::Iter<'c, Content<'a>>);

impl<'a> de::SeqAccess<'a> for Items<'a, '_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0
            .next()
            .map(|content| seed.deserialize(Reader::new(content)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Entries<'a, 'c> {
    entries: std::slice::Iter<'c, (Content<'a>, Content<'a>)>,
    value: Option<&'c Content<'a>>,
}

impl<'a> de::MapAccess<'a> for Entries<'a, '_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.entries.next() {
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(Reader::new(key)).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(Reader::new(value)),
            None => Err(error("a saved map's value asked before its key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// A variant written as `{variant: content}`.
struct Variant<'a, 'c> {
    variant: &'c Content<'a>,
    content: &'c Content<'a>,
}

impl<'a, 'c> de::EnumAccess<'a> for Variant<'a, 'c> {
    type Error = Error;
    type Variant = Reader<'a, 'c>;

    fn variant_seed<S: DeserializeSeed<'a>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), Error> {
        let variant = seed.deserialize(Reader::new(self.variant))?;
        Ok((variant, Reader::new(self.content)))
    }
}

impl<'a> de::VariantAccess<'a> for Reader<'a, '_> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.content {
            Content::Nil => Ok(()),
            _ => Err(self.mismatch()),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'a>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'a>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        self.any(visitor, false)
    }

    fn struct_variant<V: Visitor<'a>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.any(visitor, false)
    }
}

/// A unit variant, written as its name.
struct UnitVariant<'a, 'c>(Reader<'a, 'c>);

impl<'a, 'c> de::EnumAccess<'a> for UnitVariant<'a, 'c> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'a>>(self, seed: S) -> Result<(S::Value, Self), Error> {
        let variant = seed.deserialize(Reader::new(self.0.content))?;
        Ok((variant, self))
    }
}

impl<'a> de::VariantAccess<'a> for UnitVariant<'a, '_> {
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

    fn by_tree<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
        let content = parse(bytes).map_err(|error| error.to_string())?;
        T::deserialize(Reader::new(&content)).map_err(|error| error.to_string())
    }

    /// How saga writes a MessagePack slot: structs as maps.
    fn written<T: Serialize>(value: &T) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut serializer = rmp_serde::Serializer::new(&mut bytes).with_struct_map();
        value.serialize(&mut serializer).expect("writes");
        bytes
    }

    /// Reads `bytes` as `T` both ways: both read it, as the same value (compared by
    /// `Debug`, which tells NaN and `-0.0` apart as `==` would not), or both refuse it.
    fn same<T: DeserializeOwned + std::fmt::Debug>(bytes: &[u8]) {
        let (oracle, tree) = (by_rmp::<T>(bytes), by_tree::<T>(bytes));
        match (&oracle, &tree) {
            (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "{bytes:?}"),
            (Err(_), Err(_)) => {}
            _ => panic!("rmp-serde: {oracle:?}, the tree: {tree:?}, for {bytes:?}"),
        }
    }

    fn round_trip<T: Serialize + DeserializeOwned + std::fmt::Debug>(value: T) {
        same::<T>(&written(&value));
        assert!(by_tree::<T>(&written(&value)).is_ok(), "{value:?}");
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
    fn the_tree_reads_what_rmp_serde_reads() {
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
        assert!(by_tree::<After>(&bytes).is_ok());
        same::<Required>(&bytes);
        assert!(by_tree::<Required>(&bytes).is_err());
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

    /// A string that is not UTF-8 reads as bytes where the type takes bytes, and is
    /// refused elsewhere, both ways.
    #[test]
    fn invalid_utf8_is_read_as_rmp_serde_reads_it() {
        let bytes = [0xa2, 0xff, 0xfe];
        same::<String>(&bytes);
        same::<serde_json::Value>(&bytes);
        same::<Vec<u8>>(&bytes);
    }

    /// Hostile bytes: the tree never panics, never reads a value rmp-serde would not
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
            if let Ok(value) = by_tree::<serde_json::Value>(&bytes) {
                read += 1;
                assert_eq!(
                    by_rmp::<serde_json::Value>(&bytes).as_ref().ok(),
                    Some(&value),
                    "{bytes:?}"
                );
            }
            if let Ok(value) = by_tree::<Shape>(&bytes) {
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
            if let Ok(value) = by_tree::<Everything>(&bytes) {
                let oracle = by_rmp::<Everything>(&bytes).expect("rmp-serde reads it too");
                assert_eq!(format!("{oracle:?}"), format!("{value:?}"), "{bytes:?}");
                agreed += 1;
            }
            if let Ok(value) = by_tree::<serde_json::Value>(&bytes) {
                assert_eq!(by_rmp::<serde_json::Value>(&bytes).ok(), Some(value));
            }
        }
        assert!(
            agreed > 500,
            "only {agreed} of the changed values were read"
        );
        assert!(by_tree::<serde_json::Value>(&[0xd4, 1, 2]).is_err());
        // Deep nesting is refused at rmp-serde's depth, not a stack overflow. (A debug
        // build's frames are large: rmp-serde's own reading of 1,000 levels overflows a
        // test thread's 2 MiB, so both run on a larger stack.)
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(|| {
                let mut deep = vec![0x91; 1_000];
                deep.push(0xc0);
                same::<serde_json::Value>(&deep);
                assert!(by_tree::<serde_json::Value>(&deep).is_ok());
                assert!(parse(&[0x91; 5_000]).is_err());
                same::<serde_json::Value>(&[0x91; 5_000]);
            })
            .expect("a thread")
            .join()
            .expect("no overflow");
        // A length larger than the input allocates no more than the input.
        assert!(parse(&[0xdd, 0xff, 0xff, 0xff, 0xff]).is_err());
    }
}
