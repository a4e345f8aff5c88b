//! A small, stable hash for digests that must agree across builds and platforms.

/// 64-bit FNV-1a: small, stable across builds and platforms, and fast on the short
/// inputs it sees here.
#[derive(Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Fnv {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;

    pub(crate) fn new() -> Self {
        Self(Self::OFFSET)
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(Self::PRIME);
        }
    }

    /// A string, length first, so that no two sequences of strings hash alike by moving
    /// bytes from one to the next.
    pub(crate) fn write_str(&mut self, text: &str) {
        self.write(&(text.len() as u64).to_le_bytes());
        self.write(text.as_bytes());
    }

    pub(crate) fn finish(self) -> u64 {
        self.0
    }

    /// The hash of `value`'s JSON text.
    pub(crate) fn of_json(value: &impl serde::Serialize) -> u64 {
        let mut hash = Self::new();
        // Writing into a hasher cannot fail; a value that does not serialize hashes as the
        // bytes it wrote before it failed, and is refused where it is sent.
        let _ = serde_json::to_writer(&mut hash, value);
        hash.finish()
    }

    /// [`Fnv::of_postcard`], or `None` for a value that does not serialize whole (its own
    /// `Serialize` failed): its hash would be that of the bytes written before the
    /// failure, which another value may share.
    pub(crate) fn of_value(value: &(impl serde::Serialize + ?Sized)) -> Option<u64> {
        let (hash, whole) = Self::of_encoded(value);
        whole.then_some(hash)
    }

    /// The hash of `value`'s postcard bytes, which keep every bit of a float (JSON writes
    /// NaN and both infinities alike, as `null`). A value postcard does not encode (a
    /// sequence of unknown length) hashes as serde's calls tagged ([`Tagged`]) instead,
    /// after a tag that keeps the two encodings apart.
    pub(crate) fn of_postcard(value: &(impl serde::Serialize + ?Sized)) -> u64 {
        Self::of_encoded(value).0
    }

    /// [`Fnv::of_postcard`]'s hash, and whether the encoding it hashed is whole.
    /// The bytes are hashed as postcard writes them (no buffer): FNV reads a stream, so
    /// the hash is the one of the tag and the whole encoding.
    fn of_encoded(value: &(impl serde::Serialize + ?Sized)) -> (u64, bool) {
        let mut tagged = Self::new();
        tagged.write(&[0]);
        if let Ok(hash) = postcard::serialize_with_flavor(value, tagged) {
            return (hash, true);
        }
        // Not JSON: it writes `None`, `Some(())`, `()`, NaN and both infinities alike
        // (`null`), so a recomputed value that changed between them would pass its check.
        let mut hash = Self::new();
        hash.write(&[2]);
        let whole = value.serialize(Tagged(&mut hash)).is_ok();
        (hash.finish(), whole)
    }
}

/// serde's data model written into a hash, every call tagged with what it is and every
/// number with all its bits: two values hash alike only as two equal values do. What
/// postcard cannot encode (a sequence or map of unknown length) is hashed this way.
struct Tagged<'a>(&'a mut Fnv);

/// What each of serde's calls writes first.
#[derive(Clone, Copy)]
#[repr(u8)]
enum Tag {
    Bool = 1,
    I8,
    I16,
    I32,
    I64,
    I128,
    U8,
    U16,
    U32,
    U64,
    U128,
    F32,
    F64,
    Char,
    Str,
    Bytes,
    None,
    Some,
    Unit,
    UnitStruct,
    UnitVariant,
    NewtypeStruct,
    NewtypeVariant,
    Seq,
    Tuple,
    TupleStruct,
    TupleVariant,
    Map,
    Struct,
    StructVariant,
    /// The end of a sequence, map or struct whose length was not written.
    End,
    /// A struct's field skipped.
    Skipped,
}

impl Tagged<'_> {
    fn tag(&mut self, tag: Tag, bytes: &[u8]) {
        self.0.write(&[tag as u8]);
        self.0.write(bytes);
    }

    fn named(&mut self, tag: Tag, name: &str) {
        self.0.write(&[tag as u8]);
        self.0.write_str(name);
    }

    fn again(&mut self) -> Tagged<'_> {
        Tagged(self.0)
    }
}

/// An integer's serialize method: its tag and little-endian bytes.
macro_rules! numbers {
    ($($method:ident($ty:ty) => $tag:ident),* $(,)?) => {
        $(fn $method(mut self, v: $ty) -> Result<(), Self::Error> {
            self.tag(Tag::$tag, &v.to_le_bytes());
            Ok(())
        })*
    };
}

/// A compound whose elements are values: each hashed in turn, an end tag after them
/// where `$ends` says (its length was not written).
macro_rules! compound {
    ($($trait:ident { $method:ident } $ends:literal),* $(,)?) => {
        $(impl serde::ser::$trait for Tagged<'_> {
            type Ok = ();
            type Error = postcard::Error;
            fn $method<T: ?Sized + serde::Serialize>(&mut self, v: &T) -> Result<(), Self::Error> {
                v.serialize(self.again())
            }
            fn end(mut self) -> Result<(), Self::Error> {
                if $ends {
                    self.tag(Tag::End, &[]);
                }
                Ok(())
            }
        })*
    };
}

/// A struct's (or struct variant's) fields: each name, then its value; a skipped one's
/// name tagged; the end tagged.
macro_rules! fields {
    ($($trait:ident),*) => {
        $(impl serde::ser::$trait for Tagged<'_> {
            type Ok = ();
            type Error = postcard::Error;
            fn serialize_field<T: ?Sized + serde::Serialize>(
                &mut self,
                key: &'static str,
                v: &T,
            ) -> Result<(), Self::Error> {
                self.0.write_str(key);
                v.serialize(self.again())
            }
            fn skip_field(&mut self, key: &'static str) -> Result<(), Self::Error> {
                self.named(Tag::Skipped, key);
                Ok(())
            }
            fn end(mut self) -> Result<(), Self::Error> {
                self.tag(Tag::End, &[]);
                Ok(())
            }
        })*
    };
}

impl<'a> serde::Serializer for Tagged<'a> {
    type Ok = ();
    type Error = postcard::Error;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    numbers! {
        serialize_i8(i8) => I8,
        serialize_i16(i16) => I16,
        serialize_i32(i32) => I32,
        serialize_i64(i64) => I64,
        serialize_i128(i128) => I128,
        serialize_u8(u8) => U8,
        serialize_u16(u16) => U16,
        serialize_u32(u32) => U32,
        serialize_u64(u64) => U64,
        serialize_u128(u128) => U128,
    }
    fn serialize_bool(mut self, v: bool) -> Result<(), Self::Error> {
        self.tag(Tag::Bool, &[u8::from(v)]);
        Ok(())
    }
    fn serialize_f32(mut self, v: f32) -> Result<(), Self::Error> {
        self.tag(Tag::F32, &v.to_bits().to_le_bytes());
        Ok(())
    }
    fn serialize_f64(mut self, v: f64) -> Result<(), Self::Error> {
        self.tag(Tag::F64, &v.to_bits().to_le_bytes());
        Ok(())
    }
    fn serialize_char(mut self, v: char) -> Result<(), Self::Error> {
        self.tag(Tag::Char, &u32::from(v).to_le_bytes());
        Ok(())
    }
    fn serialize_str(mut self, v: &str) -> Result<(), Self::Error> {
        self.named(Tag::Str, v);
        Ok(())
    }
    fn serialize_bytes(mut self, v: &[u8]) -> Result<(), Self::Error> {
        self.tag(Tag::Bytes, &(v.len() as u64).to_le_bytes());
        self.0.write(v);
        Ok(())
    }
    fn serialize_none(mut self) -> Result<(), Self::Error> {
        self.tag(Tag::None, &[]);
        Ok(())
    }
    fn serialize_some<T: ?Sized + serde::Serialize>(mut self, v: &T) -> Result<(), Self::Error> {
        self.tag(Tag::Some, &[]);
        v.serialize(self)
    }
    fn serialize_unit(mut self) -> Result<(), Self::Error> {
        self.tag(Tag::Unit, &[]);
        Ok(())
    }
    fn serialize_unit_struct(mut self, name: &'static str) -> Result<(), Self::Error> {
        self.named(Tag::UnitStruct, name);
        Ok(())
    }
    fn serialize_unit_variant(
        mut self,
        _: &'static str,
        index: u32,
        variant: &'static str,
    ) -> Result<(), Self::Error> {
        self.named(Tag::UnitVariant, variant);
        self.0.write(&index.to_le_bytes());
        Ok(())
    }
    fn serialize_newtype_struct<T: ?Sized + serde::Serialize>(
        mut self,
        name: &'static str,
        v: &T,
    ) -> Result<(), Self::Error> {
        self.named(Tag::NewtypeStruct, name);
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + serde::Serialize>(
        mut self,
        _: &'static str,
        index: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Self::Error> {
        self.named(Tag::NewtypeVariant, variant);
        self.0.write(&index.to_le_bytes());
        v.serialize(self)
    }
    fn serialize_seq(mut self, _: Option<usize>) -> Result<Self, Self::Error> {
        // The length is not written (it may be unknown): the end is, once the elements are.
        self.tag(Tag::Seq, &[]);
        Ok(self)
    }
    fn serialize_tuple(mut self, len: usize) -> Result<Self, Self::Error> {
        self.tag(Tag::Tuple, &(len as u64).to_le_bytes());
        Ok(self)
    }
    fn serialize_tuple_struct(
        mut self,
        name: &'static str,
        len: usize,
    ) -> Result<Self, Self::Error> {
        self.named(Tag::TupleStruct, name);
        self.0.write(&(len as u64).to_le_bytes());
        Ok(self)
    }
    fn serialize_tuple_variant(
        mut self,
        _: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self, Self::Error> {
        self.named(Tag::TupleVariant, variant);
        self.0.write(&index.to_le_bytes());
        self.0.write(&(len as u64).to_le_bytes());
        Ok(self)
    }
    fn serialize_map(mut self, _: Option<usize>) -> Result<Self, Self::Error> {
        self.tag(Tag::Map, &[]);
        Ok(self)
    }
    fn serialize_struct(mut self, name: &'static str, _: usize) -> Result<Self, Self::Error> {
        self.named(Tag::Struct, name);
        Ok(self)
    }
    fn serialize_struct_variant(
        mut self,
        _: &'static str,
        index: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self, Self::Error> {
        self.named(Tag::StructVariant, variant);
        self.0.write(&index.to_le_bytes());
        Ok(self)
    }
}

// A sequence's, a map's and a struct's elements each hashed as a value; those whose
// length was not written end with `Tag::End`.
compound! {
    SerializeSeq { serialize_element } true,
    SerializeTuple { serialize_element } false,
    SerializeTupleStruct { serialize_field } false,
    SerializeTupleVariant { serialize_field } false,
}

impl serde::ser::SerializeMap for Tagged<'_> {
    type Ok = ();
    type Error = postcard::Error;
    fn serialize_key<T: ?Sized + serde::Serialize>(&mut self, k: &T) -> Result<(), Self::Error> {
        k.serialize(self.again())
    }
    fn serialize_value<T: ?Sized + serde::Serialize>(&mut self, v: &T) -> Result<(), Self::Error> {
        v.serialize(self.again())
    }
    fn end(mut self) -> Result<(), Self::Error> {
        self.tag(Tag::End, &[]);
        Ok(())
    }
}

fields! { SerializeStruct, SerializeStructVariant }

/// Postcard's output, hashed as it is written.
impl postcard::ser_flavors::Flavor for Fnv {
    type Output = u64;

    fn try_push(&mut self, byte: u8) -> postcard::Result<()> {
        Fnv::write(self, &[byte]);
        Ok(())
    }

    fn try_extend(&mut self, bytes: &[u8]) -> postcard::Result<()> {
        Fnv::write(self, bytes);
        Ok(())
    }

    fn finalize(self) -> postcard::Result<u64> {
        Ok(self.finish())
    }
}

impl std::io::Write for Fnv {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        Fnv::write(self, bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The hasher of a map keyed by what the server itself chose (tool names, type names):
/// FNV costs a fraction of SipHash on such short keys, and a client can only look these
/// keys up, never insert one, so it has no way to make them collide. Maps a client adds
/// keys to (pools, principals, tokens) keep std's randomly keyed SipHash.
pub(crate) type FnvBuild = std::hash::BuildHasherDefault<Fnv>;

impl Default for Fnv {
    fn default() -> Self {
        Self::new()
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        Fnv::write(self, bytes);
    }
}

#[cfg(test)]
mod streamed {
    use super::Fnv;

    /// A sequence of unknown length: what postcard cannot encode, hashed as serde's calls.
    struct Unsized<T>(Vec<T>);

    impl<T: serde::Serialize> serde::Serialize for Unsized<T> {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeSeq as _;
            let mut seq = serializer.serialize_seq(None)?;
            for item in &self.0 {
                seq.serialize_element(item)?;
            }
            seq.end()
        }
    }

    /// Values JSON writes alike (`null`; `[]` and `{}` of no length told apart only by
    /// their brackets) hash apart when postcard cannot encode them: a recomputed value that
    /// changed between them does not pass its check.
    #[test]
    fn what_postcard_cannot_encode_is_told_apart_as_json_could_not() {
        fn hash(value: &impl serde::Serialize) -> u64 {
            Fnv::of_value(value).expect("whole")
        }
        let options = [
            hash(&Unsized(vec![None::<Option<()>>])),
            hash(&Unsized(vec![Some(None::<()>)])),
            hash(&Unsized(vec![Some(Some(()))])),
        ];
        assert_eq!(
            options
                .iter()
                .collect::<std::collections::HashSet<_>>()
                .len(),
            3
        );
        let floats = [
            hash(&Unsized(vec![f64::NAN])),
            hash(&Unsized(vec![f64::INFINITY])),
            hash(&Unsized(vec![f64::NEG_INFINITY])),
            hash(&Unsized(vec![0.0_f64])),
            hash(&Unsized(vec![-0.0_f64])),
        ];
        assert_eq!(
            floats
                .iter()
                .collect::<std::collections::HashSet<_>>()
                .len(),
            5
        );
        assert_ne!(hash(&Unsized(vec![1_u8, 2])), hash(&Unsized(vec![12_u8])));
        assert_ne!(
            hash(&Unsized(vec!["ab", "c"])),
            hash(&Unsized(vec!["a", "bc"]))
        );
        assert_ne!(hash(&Unsized(vec![1_i64])), hash(&Unsized(vec![1_u64])));
        // Equal values hash alike, and every one of them whole.
        assert_eq!(
            hash(&Unsized(vec![f64::NAN])),
            hash(&Unsized(vec![f64::NAN]))
        );
        assert!(Fnv::of_value(&Unsized(vec![(1, "x")])).is_some());
    }

    /// Hashing postcard's bytes as they are written gives the hash of the buffer it wrote
    /// before: the fingerprints already sealed in tokens read the same.
    #[test]
    fn the_streamed_hash_is_the_buffered_one() {
        let values = (
            vec!["a".to_owned(), "bé".to_owned()],
            7u64,
            -3i32,
            f64::NAN,
            Some(()),
        );
        let mut buffered = Fnv::new();
        buffered.write(&[0]);
        buffered.write(&postcard::to_allocvec(&values).expect("postcard encodes it"));
        assert_eq!(Fnv::of_postcard(&values), buffered.finish());
        assert_eq!(Fnv::of_value(&values), Some(buffered.finish()));
    }
}
