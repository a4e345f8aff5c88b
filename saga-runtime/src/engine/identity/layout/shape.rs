//! What a trace finds: the formats of a state's types, and their text, which a point's
//! layout identity hashes.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::de;

/// The layout of one value as postcard reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Format {
    /// Not traced (a position only reached in a terminating pass).
    Unknown,
    Unit,
    Bool,
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
    Option(Box<Format>),
    Seq(Box<Format>),
    Map(Box<Format>, Box<Format>),
    Tuple(Vec<Format>),
    /// A named container, described once in the registry.
    Named(String),
    /// A saved local kept as MessagePack, by its type's short name (see `engine::slot`).
    MessagePack(String),
}

impl Format {
    pub(super) fn merge(&mut self, other: Format) -> Result<(), String> {
        match (&mut *self, other) {
            (_, Format::Unknown) => Ok(()),
            (Format::Unknown, other) => {
                *self = other;
                Ok(())
            }
            (Format::Option(a), Format::Option(b)) | (Format::Seq(a), Format::Seq(b)) => {
                a.merge(*b)
            }
            (Format::Map(ka, va), Format::Map(kb, vb)) => {
                ka.merge(*kb)?;
                va.merge(*vb)
            }
            (Format::Tuple(a), Format::Tuple(b)) if a.len() == b.len() => {
                for (a, b) in a.iter_mut().zip(b) {
                    a.merge(b)?;
                }
                Ok(())
            }
            (this, other) if *this == other => Ok(()),
            (this, other) => Err(format!(
                "two layouts for one position: {this:?} and {other:?}"
            )),
        }
    }
}

/// A named container's layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Container {
    UnitStruct,
    Newtype(Format),
    TupleStruct(Vec<Format>),
    Struct(Vec<(String, Format)>),
    Enum(Vec<(String, Option<VariantFormat>)>),
}

/// One enum variant's layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum VariantFormat {
    Unit,
    Newtype(Format),
    Tuple(Vec<Format>),
    Struct(Vec<(String, Format)>),
}

impl VariantFormat {
    pub(super) fn merge(&mut self, other: VariantFormat) -> Result<(), String> {
        match (&mut *self, other) {
            (VariantFormat::Newtype(a), VariantFormat::Newtype(b)) => a.merge(b),
            (VariantFormat::Tuple(a), VariantFormat::Tuple(b)) if a.len() == b.len() => {
                a.iter_mut().zip(b).try_for_each(|(a, b)| a.merge(b))
            }
            (VariantFormat::Struct(a), VariantFormat::Struct(b)) if a.len() == b.len() => {
                a.iter_mut().zip(b).try_for_each(|((na, a), (nb, b))| {
                    if *na == nb {
                        a.merge(b)
                    } else {
                        Err(format!("field {na} and {nb} at one position"))
                    }
                })
            }
            (this, other) if *this == other => Ok(()),
            (this, other) => Err(format!(
                "two layouts for one variant: {this:?} and {other:?}"
            )),
        }
    }
}

/// A traced type: its own format and every container it reaches.
#[derive(Debug, Clone)]
pub(crate) struct Traced {
    pub(crate) root: Format,
    /// By key: the serde name, and the Rust type at the position it was met (two
    /// instances of one generic type share a serde name, not a layout).
    pub(crate) registry: BTreeMap<String, Container>,
    /// Each key's serde name, which is what the layout text shows.
    pub(crate) names: BTreeMap<String, String>,
}

/// Why a type's layout could not be traced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LayoutError(pub(crate) String);

impl de::Error for LayoutError {
    // Out of line and cold, as the MessagePack reader's error is (see `slot::msgpack`).
    #[cold]
    #[inline(never)]
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        LayoutError(msg.to_string())
    }
}

impl Traced {
    /// The whole type as one line of text, every container it reaches written out where
    /// it is first used (a type that contains itself is written `Name` the second time).
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        self.write(&self.root, &mut Vec::new(), &mut out);
        out
    }

    /// The root's variants, each rendered alone, if the root is an enum.
    pub(crate) fn root_variants(&self) -> Option<Vec<(String, String)>> {
        let Format::Named(name) = &self.root else {
            return None;
        };
        let Some(Container::Enum(variants)) = self.registry.get(name) else {
            return None;
        };
        let mut stack = vec![name.clone()];
        Some(
            variants
                .iter()
                .map(|(variant, format)| {
                    let mut out = String::new();
                    self.write_variant(format.as_ref(), &mut stack, &mut out);
                    (variant.clone(), out)
                })
                .collect(),
        )
    }

    fn write(&self, format: &Format, stack: &mut Vec<String>, out: &mut String) {
        let simple = match format {
            Format::Unknown => "?",
            Format::Unit => "()",
            Format::Bool => "bool",
            Format::I8 => "i8",
            Format::I16 => "i16",
            Format::I32 => "i32",
            Format::I64 => "i64",
            Format::I128 => "i128",
            Format::U8 => "u8",
            Format::U16 => "u16",
            Format::U32 => "u32",
            Format::U64 => "u64",
            Format::U128 => "u128",
            Format::F32 => "f32",
            Format::F64 => "f64",
            Format::Char => "char",
            Format::Str => "str",
            Format::Bytes => "bytes",
            Format::Option(inner) => {
                out.push_str("Option<");
                self.write(inner, stack, out);
                out.push('>');
                return;
            }
            Format::Seq(inner) => {
                out.push('[');
                self.write(inner, stack, out);
                out.push(']');
                return;
            }
            Format::Map(key, value) => {
                out.push_str("Map<");
                self.write(key, stack, out);
                out.push_str(", ");
                self.write(value, stack, out);
                out.push('>');
                return;
            }
            Format::Tuple(items) => {
                out.push('(');
                self.write_list(items, stack, out);
                out.push(')');
                return;
            }
            Format::Named(name) => {
                self.write_named(name, stack, out);
                return;
            }
            Format::MessagePack(name) => {
                let _ = write!(out, "msgpack {name:?}");
                return;
            }
        };
        out.push_str(simple);
    }

    fn write_list(&self, items: &[Format], stack: &mut Vec<String>, out: &mut String) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            self.write(item, stack, out);
        }
    }

    fn write_fields(&self, fields: &[(String, Format)], stack: &mut Vec<String>, out: &mut String) {
        out.push_str(" { ");
        for (i, (field, format)) in fields.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let _ = write!(out, "{}: ", quoted_if_needed(field));
            self.write(format, stack, out);
        }
        out.push_str(" }");
    }

    fn write_named(&self, key: &str, stack: &mut Vec<String>, out: &mut String) {
        let name = key;
        if stack.iter().any(|active| active == name) {
            // A back-reference, told apart from a unit struct of the same name.
            let shown = self.names.get(key).map_or(key, String::as_str);
            let _ = write!(out, "^{shown:?}");
            return;
        }
        let shown = self.names.get(key).map_or(key, String::as_str);
        let _ = write!(out, "{shown:?}");
        let Some(container) = self.registry.get(name) else {
            return;
        };
        stack.push(name.to_owned());
        match container {
            Container::UnitStruct => {}
            Container::Newtype(inner) => {
                out.push('(');
                self.write(inner, stack, out);
                out.push(')');
            }
            Container::TupleStruct(items) => {
                out.push('(');
                self.write_list(items, stack, out);
                out.push(')');
            }
            Container::Struct(fields) => self.write_fields(fields, stack, out),
            Container::Enum(variants) => {
                out.push_str(" enum { ");
                for (i, (variant, format)) in variants.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" | ");
                    }
                    out.push_str(&quoted_if_needed(variant));
                    self.write_variant(format.as_ref(), stack, out);
                }
                out.push_str(" }");
            }
        }
        stack.pop();
    }

    fn write_variant(
        &self,
        format: Option<&VariantFormat>,
        stack: &mut Vec<String>,
        out: &mut String,
    ) {
        match format {
            None => out.push_str(" ?"),
            Some(VariantFormat::Unit) => {}
            Some(VariantFormat::Newtype(inner)) => {
                out.push('(');
                self.write(inner, stack, out);
                out.push(')');
            }
            Some(VariantFormat::Tuple(items)) => {
                out.push('(');
                self.write_list(items, stack, out);
                out.push(')');
            }
            Some(VariantFormat::Struct(fields)) => self.write_fields(fields, stack, out),
        }
    }
}

/// A field or variant name as written, quoted when it is not a plain identifier (a serde
/// rename can hold any text), so that no name can read as layout syntax.
fn quoted_if_needed(name: &str) -> std::borrow::Cow<'_, str> {
    let plain = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        std::borrow::Cow::Borrowed(name)
    } else {
        std::borrow::Cow::Owned(format!("{name:?}"))
    }
}

// ---- helpers' states, traced through the generated step ----

/// A type's name as a MessagePack slot's layout shows it: without module paths
/// (`Vec<serde_json::value::Value>` is `Vec<Value>`), so that moving a type between
/// modules, or a compiler that spells `alloc::` otherwise, keeps the identity.
pub(super) fn short_type_name(full: &str) -> String {
    let mut out = String::with_capacity(full.len());
    let mut segment = String::new();
    let mut chars = full.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            segment.clear();
        } else if c.is_alphanumeric() || c == '_' {
            segment.push(c);
        } else {
            out.push_str(&segment);
            segment.clear();
            out.push(c);
        }
    }
    out.push_str(&segment);
    out
}

/// The prefix of the names serde_json gives the types only it reads back (`RawValue`,
/// an arbitrary-precision `Number`): a struct of that name is its private token.
const JSON_PRIVATE: &str = "$serde_json::private::";

/// What a trace that met such a type says: the slot holding it is MessagePack, whose
/// reader knows `RawValue` (see `identity::slot`).
const JSON_ONLY: &str = "a type only serde_json reads back";

impl LayoutError {
    /// The error of a trace that meets the container `name`, when it is one of the types
    /// only serde_json reads back; it passes unchanged through the types around it.
    pub(crate) fn json_only(name: &str) -> Option<LayoutError> {
        name.starts_with(JSON_PRIVATE)
            .then(|| LayoutError(format!("{JSON_ONLY} ({name})")))
    }

    /// Whether the trace met a type only serde_json reads back.
    pub(crate) fn is_json_only(&self) -> bool {
        self.0.contains(JSON_ONLY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_drop_module_paths() {
        assert_eq!(
            short_type_name("alloc::vec::Vec<serde_json::value::Value>"),
            "Vec<Value>"
        );
        assert_eq!(
            short_type_name(
                "std::collections::hash::map::HashMap<alloc::string::String, my::Api<u8>>"
            ),
            "HashMap<String, Api<u8>>"
        );
        assert_eq!(short_type_name("(u8, [a::B; 3])"), "(u8, [B; 3])");
    }
}
