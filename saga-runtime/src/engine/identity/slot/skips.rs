//! Whether a value's serialization skips a field: a `Serializer` that writes nothing and
//! notes what postcard, which reads by position, could not read back.
//!
//! serde_derive reports every field `skip_serializing_if` leaves out through
//! `SerializeStruct::skip_field` (and `SerializeStructVariant::skip_field`); a sequence
//! or map of unknown length is one postcard cannot write at all. Walking the value costs
//! no allocation and nothing per byte of a string, where writing it, reading it back and
//! writing it again (the samples' check, `layout::reads_back_as`) copies it four times.

use serde::ser::{self, Serialize, Serializer};

/// Whether writing `value` skips a field or has a length it cannot tell.
pub(crate) fn skips<T: Serialize + ?Sized>(value: &T) -> bool {
    let mut walk = Walk { skipped: false };
    // An error is the value's own (a `Serialize` that refuses): postcard meets it too.
    let _ = value.serialize(&mut walk);
    walk.skipped
}

struct Walk {
    skipped: bool,
}

/// The walk's error: only a value's own `Serialize` makes one.
#[derive(Debug)]
struct Refused;

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a value's serialization failed")
    }
}

impl std::error::Error for Refused {}

impl ser::Error for Refused {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Refused
    }
}

macro_rules! leaves {
    ($($method:ident($ty:ty)),* $(,)?) => {
        $(fn $method(self, _: $ty) -> Result<(), Refused> {
            Ok(())
        })*
    };
}

impl Serializer for &mut Walk {
    type Ok = ();
    type Error = Refused;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    leaves!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_i128(i128),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_u128(u128),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_unit_struct(&'static str),
    );

    fn serialize_none(self) -> Result<(), Refused> {
        Ok(())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Refused> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Refused> {
        Ok(())
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
    ) -> Result<(), Refused> {
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Refused> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        value: &T,
    ) -> Result<(), Refused> {
        value.serialize(self)
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self, Refused> {
        self.skipped |= len.is_none();
        Ok(self)
    }

    fn serialize_tuple(self, _: usize) -> Result<Self, Refused> {
        Ok(self)
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, Refused> {
        Ok(self)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, Refused> {
        Ok(self)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self, Refused> {
        self.skipped |= len.is_none();
        Ok(self)
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Refused> {
        Ok(self)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, Refused> {
        Ok(self)
    }

    fn is_human_readable(&self) -> bool {
        // As postcard: a type that writes itself otherwise for people is walked as
        // postcard sees it.
        false
    }
}

/// The compound parts that only hold values: each one walked.
macro_rules! elements {
    ($($trait:ident :: $method:ident),* $(,)?) => {
        $(impl ser::$trait for &mut Walk {
            type Ok = ();
            type Error = Refused;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Refused> {
                value.serialize(&mut **self)
            }

            fn end(self) -> Result<(), Refused> {
                Ok(())
            }
        })*
    };
}

elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
);

/// The compound parts with named fields: each one walked, each skipped one noted.
macro_rules! fields {
    ($($trait:ident),* $(,)?) => {
        $(impl ser::$trait for &mut Walk {
            type Ok = ();
            type Error = Refused;

            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                _: &'static str,
                value: &T,
            ) -> Result<(), Refused> {
                value.serialize(&mut **self)
            }

            fn skip_field(&mut self, _: &'static str) -> Result<(), Refused> {
                self.skipped = true;
                Ok(())
            }

            fn end(self) -> Result<(), Refused> {
                Ok(())
            }
        })*
    };
}

fields!(SerializeStruct, SerializeStructVariant);

impl ser::SerializeMap for &mut Walk {
    type Ok = ();
    type Error = Refused;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Refused> {
        key.serialize(&mut **self)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Refused> {
        value.serialize(&mut **self)
    }

    fn end(self) -> Result<(), Refused> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[derive(serde::Serialize)]
    struct Draft {
        id: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    }

    #[derive(serde::Serialize)]
    enum Change {
        Rename {
            #[serde(skip_serializing_if = "String::is_empty")]
            to: String,
        },
    }

    #[test]
    fn finds_a_skipped_field_where_it_is_skipped() {
        assert!(!skips(&Draft {
            id: 1,
            note: Some("x".into())
        }));
        assert!(skips(&Draft { id: 1, note: None }));
        assert!(skips(&vec![Some(Draft { id: 1, note: None })]));
        assert!(skips(&Change::Rename { to: String::new() }));
        assert!(!skips(&Change::Rename { to: "b".into() }));
        assert!(!skips(&"text".to_owned()));
        assert!(!skips(&HashMap::from([(1u8, vec![2u8])])));
    }
}
