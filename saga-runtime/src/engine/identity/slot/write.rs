//! A MessagePack slot's bytes, with `Some` marked.
//!
//! MessagePack has no option: `rmp-serde` writes `Some(x)` as `x` and `None` as `nil`, so
//! `Some(())`, `Some(None)` and `Some(Value::Null)` were all written as `nil` and read back
//! as `None`, silently (issue 72: a PATCH-style "clear this field", `Some(None)`, became
//! "leave it alone" after a suspension). This writer writes what `rmp-serde` writes, structs
//! as maps of field names, but for `Some(x)`: the byte 0xc1, which MessagePack never uses,
//! then `x`. [`super::msgpack::from_slice_marked`] reads it back; slots written this way
//! carry their own marker byte, so the slots sealed before read as they were written.
//!
//! Every other value is encoded as `rmp-serde` 1.3 encodes it with `with_struct_map`
//! (integers in their shortest form, 128-bit integers as 16 big-endian bytes, a unit struct
//! as `[]`, an enum's variant by name, as `{variant: content}` where it has content), so the
//! one reader reads both.

use serde::ser::{self, Serialize};

use super::msgpack::Error;

/// The marker of `Some`: MessagePack's one unused byte.
pub(crate) const SOME: u8 = 0xc1;

/// The newtype name `rmp-serde` writes an extension type as.
const EXT_STRUCT: &str = "_ExtStruct";

/// `value`'s MessagePack, `Some` marked, appended to `out`.
pub(crate) fn append<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), Error> {
    value.serialize(&mut Writer { out })
}

impl ser::Error for Error {
    #[cold]
    #[inline(never)]
    fn custom<T: std::fmt::Display>(message: T) -> Self {
        <Self as serde::de::Error>::custom(message)
    }
}

struct Writer<'o> {
    out: &'o mut Vec<u8>,
}

fn too_long() -> Error {
    <Error as serde::de::Error>::custom("a saved string, sequence or map is longer than 4 GiB")
}

// Not generic: compiled once, whatever the saved types.
impl Writer<'_> {
    fn uint(&mut self, value: u64) {
        match value {
            0..=0x7f => self.out.push(value as u8),
            0x80..=0xff => self.out.extend_from_slice(&[0xcc, value as u8]),
            0x100..=0xffff => {
                self.out.push(0xcd);
                self.out.extend_from_slice(&(value as u16).to_be_bytes());
            }
            0x1_0000..=0xffff_ffff => {
                self.out.push(0xce);
                self.out.extend_from_slice(&(value as u32).to_be_bytes());
            }
            _ => {
                self.out.push(0xcf);
                self.out.extend_from_slice(&value.to_be_bytes());
            }
        }
    }

    fn sint(&mut self, value: i64) {
        if let Ok(value) = u64::try_from(value) {
            return self.uint(value);
        }
        if value >= -32 {
            self.out.push(value as u8);
        } else if let Ok(value) = i8::try_from(value) {
            self.out.extend_from_slice(&[0xd0, value as u8]);
        } else if let Ok(value) = i16::try_from(value) {
            self.out.push(0xd1);
            self.out.extend_from_slice(&value.to_be_bytes());
        } else if let Ok(value) = i32::try_from(value) {
            self.out.push(0xd2);
            self.out.extend_from_slice(&value.to_be_bytes());
        } else {
            self.out.push(0xd3);
            self.out.extend_from_slice(&value.to_be_bytes());
        }
    }

    /// A length after its marker: the fixed form `(marker, max)` ORed with it where it
    /// fits, else the 8-bit (where there is one), 16-bit or 32-bit form.
    fn header(
        &mut self,
        len: usize,
        fixed: Option<(u8, usize)>,
        [m8, m16, m32]: [Option<u8>; 3],
    ) -> Result<(), Error> {
        let len = u32::try_from(len).map_err(|_| too_long())?;
        match (fixed, m8) {
            (Some((marker, max)), _) if len as usize <= max => self.out.push(marker | len as u8),
            (_, Some(m8)) if len <= 0xff => self.out.extend_from_slice(&[m8, len as u8]),
            _ => match (u16::try_from(len), m16, m32) {
                (Ok(len), Some(m16), _) => {
                    self.out.push(m16);
                    self.out.extend_from_slice(&len.to_be_bytes());
                }
                (_, _, Some(m32)) => {
                    self.out.push(m32);
                    self.out.extend_from_slice(&len.to_be_bytes());
                }
                _ => return Err(too_long()),
            },
        }
        Ok(())
    }

    /// A variant with content, as `rmp-serde` writes it: `{variant: content}`, the content
    /// written next.
    fn variant(&mut self, name: &str) -> Result<(), Error> {
        self.out.push(0x81);
        self.str(name)
    }

    fn str(&mut self, text: &str) -> Result<(), Error> {
        self.header(
            text.len(),
            Some((0xa0, 31)),
            [Some(0xd9), Some(0xda), Some(0xdb)],
        )?;
        self.out.extend_from_slice(text.as_bytes());
        Ok(())
    }

    fn bin(&mut self, data: &[u8]) -> Result<(), Error> {
        self.header(data.len(), None, [Some(0xc4), Some(0xc5), Some(0xc6)])?;
        self.out.extend_from_slice(data);
        Ok(())
    }

    fn array(&mut self, len: usize) -> Result<(), Error> {
        self.header(len, Some((0x90, 15)), [None, Some(0xdc), Some(0xdd)])
    }

    fn map(&mut self, len: usize) -> Result<(), Error> {
        self.header(len, Some((0x80, 15)), [None, Some(0xde), Some(0xdf)])
    }

    /// A container whose length is told by its `Serialize` (checked when it ends), or
    /// counted where it is not: its header is then written when it ends, before its items.
    fn open(&mut self, len: Option<usize>, map: bool) -> Result<Container, Error> {
        let start = self.out.len();
        if let Some(len) = len {
            if map { self.map(len) } else { self.array(len) }?;
        }
        Ok(Container {
            start,
            body: self.out.len(),
            told: len,
            count: 0,
            map,
        })
    }

    fn close(&mut self, container: &Container) -> Result<(), Error> {
        if container.told == Some(container.count) {
            return Ok(());
        }
        // Not told, or told wrong (a hand-written `Serialize`): the header says the count.
        let body = self.out.split_off(container.body);
        self.out.truncate(container.start);
        if container.map {
            self.map(container.count)?;
        } else {
            self.array(container.count)?;
        }
        self.out.extend_from_slice(&body);
        Ok(())
    }
}

/// Where a sequence or map began, and what its `Serialize` said of its length.
struct Container {
    start: usize,
    body: usize,
    told: Option<usize>,
    count: usize,
    map: bool,
}

/// A sequence or map being written.
pub(crate) struct Compound<'w, 'o> {
    writer: &'w mut Writer<'o>,
    container: Container,
}

impl Compound<'_, '_> {
    fn item<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.container.count += 1;
        value.serialize(&mut *self.writer)
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        self.container.count += 1;
        self.writer.str(key)?;
        value.serialize(&mut *self.writer)
    }

    fn end(self) -> Result<(), Error> {
        self.writer.close(&self.container)
    }
}

/// The integer kinds' methods: each widened to 64 bits and written in its shortest form.
macro_rules! integers {
    ($($method:ident($kind:ty) => $write:ident),* $(,)?) => {$(
        fn $method(self, value: $kind) -> Result<(), Error> {
            self.$write(value.into());
            Ok(())
        }
    )*};
}

impl<'w, 'o> ser::Serializer for &'w mut Writer<'o> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'w, 'o>;
    type SerializeTuple = Compound<'w, 'o>;
    type SerializeTupleStruct = Compound<'w, 'o>;
    type SerializeTupleVariant = Compound<'w, 'o>;
    type SerializeMap = Compound<'w, 'o>;
    type SerializeStruct = Compound<'w, 'o>;
    type SerializeStructVariant = Compound<'w, 'o>;

    fn is_human_readable(&self) -> bool {
        false
    }

    fn serialize_bool(self, value: bool) -> Result<(), Error> {
        self.out.push(if value { 0xc3 } else { 0xc2 });
        Ok(())
    }

    integers! {
        serialize_i8(i8) => sint, serialize_i16(i16) => sint, serialize_i32(i32) => sint,
        serialize_i64(i64) => sint, serialize_u8(u8) => uint, serialize_u16(u16) => uint,
        serialize_u32(u32) => uint, serialize_u64(u64) => uint,
    }

    fn serialize_i128(self, value: i128) -> Result<(), Error> {
        self.bin(&value.to_be_bytes())
    }

    fn serialize_u128(self, value: u128) -> Result<(), Error> {
        self.bin(&value.to_be_bytes())
    }

    fn serialize_f32(self, value: f32) -> Result<(), Error> {
        self.out.push(0xca);
        self.out.extend_from_slice(&value.to_be_bytes());
        Ok(())
    }

    fn serialize_f64(self, value: f64) -> Result<(), Error> {
        self.out.push(0xcb);
        self.out.extend_from_slice(&value.to_be_bytes());
        Ok(())
    }

    fn serialize_char(self, value: char) -> Result<(), Error> {
        self.str(value.encode_utf8(&mut [0; 4]))
    }

    fn serialize_str(self, value: &str) -> Result<(), Error> {
        self.str(value)
    }

    fn serialize_bytes(self, value: &[u8]) -> Result<(), Error> {
        self.bin(value)
    }

    fn serialize_none(self) -> Result<(), Error> {
        self.out.push(0xc0);
        Ok(())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        self.out.push(SOME);
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Error> {
        self.out.push(0xc0);
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.out.push(0x90);
        Ok(())
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        if name == EXT_STRUCT {
            // An extension type holds no option: written by `rmp-serde` itself.
            let mut serializer = rmp_serde::Serializer::new(&mut *self.out);
            return ser::Serializer::serialize_newtype_struct(&mut serializer, name, value)
                .map_err(<Error as ser::Error>::custom);
        }
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.variant(variant)?;
        value.serialize(self)
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'w, 'o>, Error> {
        let container = self.open(len, false)?;
        Ok(Compound {
            writer: self,
            container,
        })
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'w, 'o>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'w, 'o>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'w, 'o>, Error> {
        self.variant(variant)?;
        self.serialize_seq(Some(len))
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'w, 'o>, Error> {
        let container = self.open(len, true)?;
        Ok(Compound {
            writer: self,
            container,
        })
    }

    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Compound<'w, 'o>, Error> {
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'w, 'o>, Error> {
        self.variant(variant)?;
        self.serialize_map(Some(len))
    }
}

/// The sequence kinds' one method: an item of the sequence.
macro_rules! sequences {
    ($($kind:ident :: $method:ident),*) => {$(
        impl ser::$kind for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.item(value)
            }

            fn end(self) -> Result<(), Error> {
                Compound::end(self)
            }
        }
    )*};
}

sequences!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// Refuses a map key that names one of `serde_json`'s private types
/// (`$serde_json::private::RawValue`): a `serde_json::Value`'s visitor reads a map whose
/// first key is that name as the type itself (the string value parsed as JSON), so such a
/// map would be read back as another value. Only a value built in code holds one (a
/// parser turns the name into the type); the seal refuses it.
fn reserved_key(written: &[u8]) -> Result<(), Error> {
    let text = match written {
        [0xa0..=0xbf, text @ ..] | [0xd9, _, text @ ..] | [0xda, _, _, text @ ..] => text,
        [0xdb, _, _, _, _, text @ ..] => text,
        _ => return Ok(()),
    };
    if text.starts_with(super::msgpack::SERDE_JSON_PRIVATE.as_bytes()) {
        return Err(Error::new(
            "a map key names a type private to serde_json ($serde_json::private::)",
        ));
    }
    Ok(())
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        let start = self.writer.out.len();
        // An entry is counted at its key.
        self.item(key)?;
        reserved_key(&self.writer.out[start..])
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.writer)
    }

    fn end(self) -> Result<(), Error> {
        Compound::end(self)
    }
}

/// The struct kinds' one method: a field, by its name.
macro_rules! structs {
    ($($kind:ident),*) => {$(
        impl ser::$kind for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;

            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Error> {
                self.field(key, value)
            }

            fn end(self) -> Result<(), Error> {
                Compound::end(self)
            }
        }
    )*};
}

structs!(SerializeStruct, SerializeStructVariant);

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Serialize};
    use serde_json::{Value, json};

    use super::super::msgpack::{from_slice, from_slice_marked};
    use super::*;

    fn marked<T: Serialize>(value: &T) -> Vec<u8> {
        let mut out = Vec::new();
        append(&mut out, value).expect("writes");
        out
    }

    fn by_rmp<T: Serialize>(value: &T) -> Vec<u8> {
        let mut out = Vec::new();
        let mut serializer = rmp_serde::Serializer::new(&mut out).with_struct_map();
        value.serialize(&mut serializer).expect("writes");
        out
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    enum Shape {
        Empty,
        Circle(f64),
        Rect(u16, u16),
        Named { name: String, sides: Vec<i64> },
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Unit;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Fields {
        a: u8,
        #[serde(skip_serializing_if = "String::is_empty", default)]
        b: String,
        c: (i128, u128, char, bool, f32),
        unit: Unit,
        bytes: serde_bytes_like::Bytes,
    }

    /// `serde_bytes` without the crate: a byte string.
    mod serde_bytes_like {
        #[derive(Debug, PartialEq)]
        pub(super) struct Bytes(pub(super) Vec<u8>);
        impl serde::Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&self.0)
            }
        }
        impl<'de> serde::Deserialize<'de> for Bytes {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = Bytes;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("bytes")
                    }
                    fn visit_bytes<E>(self, v: &[u8]) -> Result<Bytes, E> {
                        Ok(Bytes(v.to_vec()))
                    }
                }
                d.deserialize_bytes(V)
            }
        }
    }

    /// Without options, the bytes are `rmp-serde`'s, byte for byte: the one reader reads
    /// both, and nothing but `Some` changed.
    #[test]
    fn what_holds_no_option_is_written_as_rmp_serde_writes_it() {
        let long = "x".repeat(70_000);
        let values = [
            json!(null),
            json!([
                0,
                127,
                128,
                255,
                256,
                65_535,
                65_536,
                4_294_967_296u64,
                u64::MAX
            ]),
            json!([
                -1,
                -32,
                -33,
                -128,
                -129,
                -32_768,
                -32_769,
                -2_147_483_649i64,
                i64::MIN
            ]),
            json!([
                1.5,
                -0.0,
                "",
                "a",
                "x".repeat(31),
                "x".repeat(32),
                "x".repeat(300)
            ]),
            json!({"k": {"deep": [true, false, {}]}, "many": (0..20).collect::<Vec<_>>()}),
            json!(long),
        ];
        for value in &values {
            assert_eq!(marked(value), by_rmp(value), "{value}");
        }
        let shapes = vec![
            Shape::Empty,
            Shape::Circle(2.5),
            Shape::Rect(1, 2),
            Shape::Named {
                name: "n".into(),
                sides: vec![-1, 300],
            },
        ];
        assert_eq!(marked(&shapes), by_rmp(&shapes));
        let fields = Fields {
            a: 1,
            b: String::new(),
            c: (-5, u128::MAX, 'é', true, 0.5),
            unit: Unit,
            bytes: serde_bytes_like::Bytes(vec![0, 1, 2]),
        };
        assert_eq!(marked(&fields), by_rmp(&fields));
        assert_eq!(
            from_slice_marked::<Fields>(&marked(&fields)).expect("reads"),
            fields
        );
        let map: BTreeMap<u8, Vec<u8>> = [(1, vec![2]), (3, vec![])].into();
        assert_eq!(marked(&map), by_rmp(&map));
    }

    /// The finding: `Some(())`, `Some(None)` and `Some(Value::Null)` come back as written,
    /// where `rmp-serde`'s bytes read back as `None`.
    #[test]
    fn some_of_nothing_reads_back_as_some() {
        fn check<T: Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(
            value: T,
        ) {
            let bytes = marked(&value);
            assert_eq!(from_slice_marked::<T>(&bytes).expect("reads"), value);
        }
        check(Some(Value::Null));
        check(None::<Value>);
        check(Some(Some(Value::Null)));
        check(Some(None::<u8>));
        check(Some(Some(3u8)));
        check(None::<Option<u8>>);
        check(Some(()));
        check(vec![Some(()), None, Some(())]);
        check(Shape::Named {
            name: String::new(),
            sides: vec![],
        });
        // rmp-serde's bytes of the same value: read back as `None`, which is the bug.
        assert_eq!(
            from_slice::<Option<Value>>(&by_rmp(&Some(Value::Null))).expect("reads"),
            None
        );
    }

    /// A MessagePack type whose field was an `Option` and is now the bare type (a deploy
    /// that changed it) reads an old `Some(x)` as `x`, as `rmp-serde`'s bytes were read;
    /// an old `None` is refused, never read as a value.
    #[test]
    fn an_option_field_made_bare_reads_its_old_some() {
        #[derive(Serialize)]
        struct Before {
            count: Option<u32>,
            wide: Option<i128>,
            ok: Option<bool>,
        }
        #[derive(Debug, PartialEq, Deserialize)]
        struct After {
            count: u32,
            wide: i128,
            ok: bool,
        }
        let old = marked(&Before {
            count: Some(5),
            wide: Some(-7),
            ok: Some(true),
        });
        assert_eq!(
            from_slice_marked::<After>(&old).expect("reads"),
            After {
                count: 5,
                wide: -7,
                ok: true
            }
        );
        let none = marked(&Before {
            count: None,
            wide: Some(1),
            ok: Some(false),
        });
        assert!(from_slice_marked::<After>(&none).is_err());
    }

    /// A container whose `Serialize` does not tell its length, or tells it wrong, gets the
    /// count it wrote.
    #[test]
    fn a_length_not_told_or_told_wrong_is_counted() {
        struct Untold(Vec<Option<u32>>, Option<usize>, bool);
        impl Serialize for Untold {
            fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use ser::{SerializeMap, SerializeSeq};
                if self.2 {
                    let mut map = s.serialize_map(self.1)?;
                    for (i, item) in self.0.iter().enumerate() {
                        map.serialize_entry(&i, item)?;
                    }
                    map.end()
                } else {
                    let mut seq = s.serialize_seq(self.1)?;
                    for item in &self.0 {
                        seq.serialize_element(item)?;
                    }
                    seq.end()
                }
            }
        }
        let items: Vec<Option<u32>> = (0..20).map(|i| (i % 3 != 0).then_some(i)).collect();
        for told in [None, Some(3), Some(20), Some(100_000)] {
            let seq = marked(&Untold(items.clone(), told, false));
            assert_eq!(
                from_slice_marked::<Vec<Option<u32>>>(&seq).expect("reads"),
                items
            );
            let map = marked(&Untold(items.clone(), told, true));
            let read: BTreeMap<usize, Option<u32>> = from_slice_marked(&map).expect("reads");
            assert_eq!(read.values().cloned().collect::<Vec<_>>(), items);
        }
    }

    /// `Some` nested deeper than the reader goes is refused, not a stack overflow. (On a
    /// larger stack, as `msgpack`'s depth test: a debug build's frames are large.)
    #[test]
    fn marked_options_nest_no_deeper_than_containers() {
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(|| {
                let mut bytes = vec![SOME; 100_000];
                bytes.push(0xc0);
                assert!(from_slice_marked::<Value>(&bytes).is_err());
                assert!(from_slice_marked::<Option<Value>>(&bytes).is_err());
                let mut within = vec![SOME; 1_000];
                within.push(0xc0);
                assert_eq!(from_slice_marked::<Value>(&within).ok(), Some(Value::Null));
            })
            .expect("a thread")
            .join()
            .expect("no overflow");
        // A recursive type with an `Option` at each level reads as deep as its containers
        // allow, the options not counted on top of them (1,000 levels of `Some([…])`).
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(|| {
                #[derive(Debug, PartialEq, Serialize, Deserialize)]
                struct Node {
                    next: Option<Box<Node>>,
                }
                let mut list = Node { next: None };
                for _ in 0..1_000 {
                    list = Node {
                        next: Some(Box::new(list)),
                    };
                }
                let read: Node = from_slice_marked(&marked(&list)).expect("reads");
                assert_eq!(read, list);
                std::mem::forget(read);
                std::mem::forget(list);
            })
            .expect("a thread")
            .join()
            .expect("no overflow");
        // And unmarked bytes still refuse the marker.
        assert!(from_slice::<Option<Value>>(&[SOME, 0xc0]).is_err());
    }
}
