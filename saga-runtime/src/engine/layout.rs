//! The serde layout of a saved state, traced at run time from its `Deserialize` impl.
//!
//! postcard is not self-describing: the bytes of a state say nothing of the types that
//! wrote them. So a token names the suspension point it stopped at and an identity of that
//! point's layout, and a build resumes it only where both match (see [`super::points`]).
//! This module computes the layout: field names and order, the type of each field, the
//! variants of every enum, helpers' nested states, as text.
//!
//! Why a tracer of our own rather than serde-reflection or postcard's `Schema` derive:
//! `Schema` needs a derive on every user type (a saved `struct Transfer` would need it),
//! and serde-reflection needs sample values for types whose `Deserialize` validates, and
//! has no hook for the helpers' states, which are nested as bytes. This tracer is a
//! `Deserializer` that answers every request with a sample and records what was asked,
//! as postcard would be asked (`is_human_readable` is false). It runs once per tool when
//! the server is built (measured in BENCHMARKS.md), never per request.
//!
//! Enums are explored variant by variant over repeated passes. Recursive types end where
//! a type re-enters itself: from there on options are `None`, sequences empty, and an
//! enum takes a variant not already being traced. Types whose `Deserialize` refuses the
//! plain samples (`NonZeroU32`, a URL, a date) are retried with other sample profiles;
//! a type no profile satisfies is an error, so that no state is ever resumed on a guess.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, Visitor};

/// The unit struct name that [`Unreachable`](super::saga_fn::Unreachable) asks for: a
/// variant holding it is a call site of an ordinary future, which never suspends.
pub(crate) const UNREACHABLE: &str = "saga::Unreachable";

/// The newtype name a `#[saga_tool]`'s runtime state reads as: its layout is traced
/// through its step, never from this type.
pub(crate) const MACRO_STATE: &str = "saga::MacroState";

/// The error of a state enum without variants: a saga that never suspends.
pub(crate) const EMPTY_ROOT: &str = "the state has no suspension point";

/// How deep containers may nest before the trace gives up.
const MAX_DEPTH: usize = 96;
/// Passes of one profile (each explores at least one more enum variant).
const MAX_PASSES: usize = 4096;

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
}

impl Format {
    fn merge(&mut self, other: Format) -> Result<(), String> {
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
    fn merge(&mut self, other: VariantFormat) -> Result<(), String> {
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
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        LayoutError(msg.to_string())
    }
}

/// The sample values of one pass. Profiles after the first satisfy types whose
/// `Deserialize` validates what it reads.
#[derive(Clone, Copy)]
struct Profile {
    int: u8,
    text: &'static str,
    bytes: usize,
}

const PROFILES: &[Profile] = &[
    Profile {
        int: 0,
        text: "",
        bytes: 0,
    },
    Profile {
        int: 1,
        text: "a",
        bytes: 16,
    },
    Profile {
        int: 1,
        text: "1970-01-01T00:00:00Z",
        bytes: 32,
    },
    Profile {
        int: 1,
        text: "http://localhost/",
        bytes: 8,
    },
    Profile {
        int: 1,
        text: "00000000-0000-0000-0000-000000000000",
        bytes: 4,
    },
    Profile {
        int: 1,
        text: "0",
        bytes: 1,
    },
    Profile {
        int: 1,
        text: "user@example.com",
        bytes: 2,
    },
    Profile {
        int: 1,
        text: "https://example.com/a?b=c#d",
        bytes: 20,
    },
];

/// Traces `T` as postcard would read it.
pub(crate) fn trace<T: de::DeserializeOwned>() -> Result<Traced, LayoutError> {
    let mut last = LayoutError("no profile".into());
    for profile in PROFILES {
        match trace_with::<T>(*profile) {
            Ok(traced) => return Ok(traced),
            Err(error) if error.0 == EMPTY_ROOT => return Err(error),
            Err(error) => last = error,
        }
    }
    Err(LayoutError(format!(
        "the saved state `{}` cannot be traced: {}. saga reads the layout of what a saga \
         saves by deserializing sample values (empty and short strings, 0 and 1, a date, a \
         URL, an email address) when the server is built, so that no token is ever read into \
         another layout; a saved type must be postcard-compatible (no serde_json::Value, \
         untagged or internally tagged enums, flatten) and accept one of those samples: \
         save the plain data (a String) and check it after the suspension instead",
        std::any::type_name::<T>(),
        last.0
    )))
}

fn trace_with<T: de::DeserializeOwned>(profile: Profile) -> Result<Traced, LayoutError> {
    let mut session = Session {
        profile,
        registry: BTreeMap::new(),
        names: BTreeMap::new(),
        first_pick: BTreeMap::new(),
        active: Vec::new(),
        active_variants: Vec::new(),
        terminating: 0,
    };
    let mut root = Format::Unknown;
    for _ in 0..MAX_PASSES {
        session.first_pick = session.plan();
        let mut format = Format::Unknown;
        T::deserialize(Tracer {
            session: &mut session,
            out: &mut format,
            depth: 0,
            ty: std::any::type_name::<T>(),
        })?;
        root.merge(format).map_err(LayoutError)?;
        if session.plan().is_empty() {
            return Ok(Traced {
                root,
                registry: session.registry,
                names: session.names,
            });
        }
    }
    Err(LayoutError("too many enum variants to explore".into()))
}

struct Session {
    profile: Profile,
    registry: BTreeMap<String, Container>,
    names: BTreeMap<String, String>,
    /// Per enum, the variant its first occurrence of this pass takes.
    first_pick: BTreeMap<String, u32>,
    /// Containers being traced, outermost first.
    active: Vec<String>,
    /// Enum variants being traced.
    active_variants: Vec<(String, u32)>,
    /// Above zero inside a container that re-entered itself: take the shortest way out.
    terminating: usize,
}

impl Session {
    /// Per enum with a variant not yet explored, the first such variant.
    fn plan(&self) -> BTreeMap<String, u32> {
        self.registry
            .iter()
            .filter_map(|(name, container)| match container {
                Container::Enum(variants) => variants
                    .iter()
                    .position(|(_, format)| format.is_none())
                    .map(|index| (name.clone(), index as u32)),
                _ => None,
            })
            .collect()
    }

    /// Whether `format` leads, through the containers known so far, to an enum variant
    /// not yet explored: where a fully explored enum should go next.
    fn reaches_unexplored(&self, format: &Format, seen: &mut Vec<String>) -> bool {
        match format {
            Format::Option(inner) | Format::Seq(inner) => self.reaches_unexplored(inner, seen),
            Format::Map(key, value) => {
                self.reaches_unexplored(key, seen) || self.reaches_unexplored(value, seen)
            }
            Format::Tuple(items) => items.iter().any(|item| self.reaches_unexplored(item, seen)),
            Format::Named(key) => {
                if seen.contains(key) {
                    return false;
                }
                seen.push(key.clone());
                match self.registry.get(key) {
                    None => false,
                    Some(Container::UnitStruct) => false,
                    Some(Container::Newtype(inner)) => self.reaches_unexplored(inner, seen),
                    Some(Container::TupleStruct(items)) => {
                        items.iter().any(|item| self.reaches_unexplored(item, seen))
                    }
                    Some(Container::Struct(fields)) => fields
                        .iter()
                        .any(|(_, format)| self.reaches_unexplored(format, seen)),
                    Some(Container::Enum(variants)) => variants.iter().any(|(_, variant)| {
                        self.variant_reaches_unexplored(variant.as_ref(), seen)
                    }),
                }
            }
            _ => false,
        }
    }

    fn variant_reaches_unexplored(
        &self,
        variant: Option<&VariantFormat>,
        seen: &mut Vec<String>,
    ) -> bool {
        match variant {
            None => true,
            Some(VariantFormat::Unit) => false,
            Some(VariantFormat::Newtype(inner)) => self.reaches_unexplored(inner, seen),
            Some(VariantFormat::Tuple(items)) => {
                items.iter().any(|item| self.reaches_unexplored(item, seen))
            }
            Some(VariantFormat::Struct(fields)) => fields
                .iter()
                .any(|(_, format)| self.reaches_unexplored(format, seen)),
        }
    }

    fn record(&mut self, name: &str, container: Container) -> Result<(), LayoutError> {
        if self.terminating > 0 {
            // Only what a full pass saw is recorded; a terminating pass sees less.
            self.registry.entry(name.to_owned()).or_insert(container);
            return Ok(());
        }
        match self.registry.get_mut(name) {
            None => {
                self.registry.insert(name.to_owned(), container);
                Ok(())
            }
            Some(existing) => merge_container(existing, container)
                .map_err(|reason| LayoutError(format!("type `{name}`: {reason}"))),
        }
    }
}

fn merge_container(existing: &mut Container, new: Container) -> Result<(), String> {
    match (existing, new) {
        (Container::UnitStruct, Container::UnitStruct) => Ok(()),
        (Container::Newtype(a), Container::Newtype(b)) => a.merge(b),
        (Container::TupleStruct(a), Container::TupleStruct(b)) if a.len() == b.len() => {
            a.iter_mut().zip(b).try_for_each(|(a, b)| a.merge(b))
        }
        (Container::Struct(a), Container::Struct(b)) if a.len() == b.len() => {
            a.iter_mut().zip(b).try_for_each(|((na, a), (nb, b))| {
                if *na == nb {
                    a.merge(b)
                } else {
                    Err("two types of one name".to_owned())
                }
            })
        }
        (Container::Enum(a), Container::Enum(b)) if a.len() == b.len() => {
            for ((na, a), (nb, b)) in a.iter_mut().zip(b) {
                if *na != nb {
                    return Err("two enums of one name".to_owned());
                }
                match (a.as_mut(), b) {
                    (_, None) => {}
                    (None, Some(b)) => *a = Some(b),
                    (Some(a), Some(b)) => a.merge(b)?,
                }
            }
            Ok(())
        }
        _ => Err("two types of one name".to_owned()),
    }
}

struct Tracer<'a> {
    session: &'a mut Session,
    out: &'a mut Format,
    depth: usize,
    /// The Rust type read at this position (its seed's), "" where unknown.
    ty: &'static str,
}

impl<'a> Tracer<'a> {
    /// The tracer of a position inside this one, reading `ty`.
    fn child<'b>(
        &'b mut self,
        out: &'b mut Format,
        ty: &'static str,
    ) -> Result<Tracer<'b>, LayoutError> {
        if self.depth >= MAX_DEPTH {
            return Err(LayoutError("the type nests too deeply to trace".into()));
        }
        Ok(Tracer {
            session: self.session,
            out,
            depth: self.depth + 1,
            ty,
        })
    }

    fn int(&self) -> u8 {
        self.session.profile.int
    }

    /// Enters the container `name`: whether it re-enters itself (then the rest of this
    /// value takes the shortest way out).
    fn enter(&mut self, name: &str) -> bool {
        let recursive = self.session.active.iter().any(|active| active == name);
        self.session.active.push(name.to_owned());
        if recursive {
            self.session.terminating += 1;
        }
        recursive
    }

    fn leave(&mut self, recursive: bool) {
        self.session.active.pop();
        if recursive {
            self.session.terminating -= 1;
        }
    }

    fn fields<'de, V: Visitor<'de>>(
        &mut self,
        len: usize,
        visitor: V,
    ) -> Result<(V::Value, Vec<Format>), LayoutError> {
        let mut formats = vec![Format::Unknown; len];
        let value = visitor.visit_seq(Fields {
            tracer: self,
            formats: &mut formats,
            next: 0,
        })?;
        Ok((value, formats))
    }

    fn named<'de, V: Visitor<'de>>(
        mut self,
        name: &'static str,
        visitor: V,
        body: impl FnOnce(&mut Self, &str, V) -> Result<(V::Value, Container), LayoutError>,
    ) -> Result<V::Value, LayoutError> {
        let key = format!("{name}\u{0}{}", self.ty);
        self.session
            .names
            .entry(key.clone())
            .or_insert_with(|| name.to_owned());
        *self.out = Format::Named(key.clone());
        let recursive = self.enter(&key);
        let result = body(&mut self, &key, visitor);
        self.leave(recursive);
        let (value, container) = result?;
        self.session.record(&key, container)?;
        Ok(value)
    }
}

macro_rules! primitive {
    ($method:ident, $format:ident, $visit:ident, $value:expr) => {
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, LayoutError> {
            *self.out = Format::$format;
            #[allow(clippy::redundant_closure_call)]
            let value = ($value)(&self);
            visitor.$visit(value)
        }
    };
}

impl<'de> Deserializer<'de> for Tracer<'_> {
    type Error = LayoutError;

    fn is_human_readable(&self) -> bool {
        false
    }

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, LayoutError> {
        Err(LayoutError(
            "a saved type asks for a self-describing format (serde_json::Value, an untagged \
             enum or a flattened struct), which postcard cannot read"
                .into(),
        ))
    }

    primitive!(deserialize_bool, Bool, visit_bool, |t: &Self| t.int() != 0);
    primitive!(deserialize_i8, I8, visit_i8, |t: &Self| t.int() as i8);
    primitive!(deserialize_i16, I16, visit_i16, |t: &Self| i16::from(
        t.int()
    ));
    primitive!(deserialize_i32, I32, visit_i32, |t: &Self| i32::from(
        t.int()
    ));
    primitive!(deserialize_i64, I64, visit_i64, |t: &Self| i64::from(
        t.int()
    ));
    primitive!(deserialize_i128, I128, visit_i128, |t: &Self| i128::from(
        t.int()
    ));
    primitive!(deserialize_u8, U8, visit_u8, |t: &Self| t.int());
    primitive!(deserialize_u16, U16, visit_u16, |t: &Self| u16::from(
        t.int()
    ));
    primitive!(deserialize_u32, U32, visit_u32, |t: &Self| u32::from(
        t.int()
    ));
    primitive!(deserialize_u64, U64, visit_u64, |t: &Self| u64::from(
        t.int()
    ));
    primitive!(deserialize_u128, U128, visit_u128, |t: &Self| u128::from(
        t.int()
    ));
    primitive!(deserialize_f32, F32, visit_f32, |t: &Self| f32::from(
        t.int()
    ));
    primitive!(deserialize_f64, F64, visit_f64, |t: &Self| f64::from(
        t.int()
    ));
    primitive!(deserialize_char, Char, visit_char, |_: &Self| 'a');

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, LayoutError> {
        *self.out = Format::Str;
        visitor.visit_str(self.session.profile.text)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, LayoutError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, LayoutError> {
        *self.out = Format::Bytes;
        visitor.visit_bytes(&[0u8; 64][..self.session.profile.bytes])
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, LayoutError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, LayoutError> {
        if self.session.terminating > 0 {
            *self.out = Format::Option(Box::new(Format::Unknown));
            return visitor.visit_none();
        }
        let mut inner = Format::Unknown;
        let ty = self.ty;
        let value = visitor.visit_some(self.child(&mut inner, ty)?)?;
        *self.out = Format::Option(Box::new(inner));
        Ok(value)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, LayoutError> {
        *self.out = Format::Unit;
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, LayoutError> {
        self.named(name, visitor, |_, _, visitor| {
            Ok((visitor.visit_unit()?, Container::UnitStruct))
        })
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, LayoutError> {
        if name == MACRO_STATE {
            return Err(LayoutError(
                "a #[saga_tool]'s state is traced through its own step: a tool that wraps \
                 one must forward `SagaTool::layout` (and `version`) to it"
                    .into(),
            ));
        }
        self.named(name, visitor, |tracer, _, visitor| {
            let mut inner = Format::Unknown;
            let ty = tracer.ty;
            let value = visitor.visit_newtype_struct(tracer.child(&mut inner, ty)?)?;
            Ok((value, Container::Newtype(inner)))
        })
    }

    fn deserialize_seq<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, LayoutError> {
        let mut element = Format::Unknown;
        let one = self.session.terminating == 0;
        let value = visitor.visit_seq(Elements {
            tracer: self.child(&mut element, "")?,
            remaining: usize::from(one),
        })?;
        *self.out = Format::Seq(Box::new(element));
        Ok(value)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        mut self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, LayoutError> {
        let (value, formats) = self.fields(len, visitor)?;
        *self.out = Format::Tuple(formats);
        Ok(value)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, LayoutError> {
        self.named(name, visitor, |tracer, _, visitor| {
            let (value, formats) = tracer.fields(len, visitor)?;
            Ok((value, Container::TupleStruct(formats)))
        })
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, LayoutError> {
        let mut key = Format::Unknown;
        let mut val = Format::Unknown;
        let one = self.session.terminating == 0;
        let depth = self.depth + 1;
        if depth >= MAX_DEPTH {
            return Err(LayoutError("the type nests too deeply to trace".into()));
        }
        let value = visitor.visit_map(Entries {
            session: self.session,
            key: &mut key,
            value: &mut val,
            depth,
            remaining: usize::from(one),
        })?;
        *self.out = Format::Map(Box::new(key), Box::new(val));
        Ok(value)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, LayoutError> {
        self.named(name, visitor, |tracer, _, visitor| {
            let (value, formats) = tracer.fields(fields.len(), visitor)?;
            let named = fields
                .iter()
                .map(|field| (*field).to_owned())
                .zip(formats)
                .collect();
            Ok((value, Container::Struct(named)))
        })
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, LayoutError> {
        if variants.is_empty() {
            if self.depth == 0 {
                return Err(LayoutError(EMPTY_ROOT.into()));
            }
            return Err(LayoutError(format!("the enum `{name}` has no variant")));
        }
        self.named(name, visitor, |tracer, key, visitor| {
            let session = &mut *tracer.session;
            let active: Vec<u32> = session
                .active_variants
                .iter()
                .filter(|(active, _)| active == key)
                .map(|(_, index)| *index)
                .collect();
            // A cut-off copy (inside a recursion) neither takes nor spends the plan.
            let planned = if active.is_empty() && session.terminating == 0 {
                session.first_pick.remove(key)
            } else {
                None
            };
            let known: Vec<Option<VariantFormat>> = match session.registry.get(key) {
                Some(Container::Enum(known)) => known.iter().map(|(_, f)| f.clone()).collect(),
                _ => Vec::new(),
            };
            let explored = |index: u32| known.get(index as usize).is_some_and(Option::is_some);
            let free = |index: &u32| !active.contains(index);
            let count = variants.len() as u32;
            // A fully explored enum goes where something is still unexplored, if it can.
            let onward = (0..count).filter(free).find(|&i| {
                explored(i)
                    && session.variant_reaches_unexplored(
                        known.get(i as usize).and_then(Option::as_ref),
                        &mut vec![key.to_owned()],
                    )
            });
            let index = planned
                .filter(|_| session.terminating == 0)
                .or(onward.filter(|_| session.terminating == 0))
                .or_else(|| (0..count).filter(free).find(|&i| explored(i)))
                .or_else(|| (0..count).find(free))
                .ok_or_else(|| LayoutError(format!("every variant of `{name}` contains itself")))?;
            let name = key;
            session.active_variants.push((name.to_owned(), index));
            let mut format = None;
            let result = visitor.visit_enum(Variant {
                tracer: Tracer {
                    session: &mut *tracer.session,
                    out: &mut Format::Unknown,
                    depth: tracer.depth + 1,
                    ty: "",
                },
                index,
                format: &mut format,
            });
            tracer.session.active_variants.pop();
            let value = result?;
            let mut described: Vec<(String, Option<VariantFormat>)> = variants
                .iter()
                .map(|variant| ((*variant).to_owned(), None))
                .collect();
            described[index as usize].1 = format;
            Ok((value, Container::Enum(described)))
        })
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, LayoutError> {
        // postcard reads identifiers as variant indices.
        *self.out = Format::U32;
        visitor.visit_u32(0)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(
        self,
        _visitor: V,
    ) -> Result<V::Value, LayoutError> {
        Err(LayoutError("a saved type ignores part of its input".into()))
    }
}

struct Elements<'a> {
    tracer: Tracer<'a>,
    remaining: usize,
}

impl<'de> de::SeqAccess<'de> for Elements<'_> {
    type Error = LayoutError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, LayoutError> {
        if self.remaining == 0 {
            return Ok(None);
        }
        self.remaining -= 1;
        seed.deserialize(Tracer {
            session: &mut *self.tracer.session,
            out: &mut *self.tracer.out,
            depth: self.tracer.depth,
            ty: std::any::type_name::<T>(),
        })
        .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.remaining)
    }
}

struct Fields<'a, 'b> {
    tracer: &'a mut Tracer<'b>,
    formats: &'a mut [Format],
    next: usize,
}

impl<'de> de::SeqAccess<'de> for Fields<'_, '_> {
    type Error = LayoutError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, LayoutError> {
        let Some(out) = self.formats.get_mut(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        seed.deserialize(self.tracer.child(out, std::any::type_name::<T>())?)
            .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.formats.len() - self.next)
    }
}

struct Entries<'a> {
    session: &'a mut Session,
    key: &'a mut Format,
    value: &'a mut Format,
    depth: usize,
    remaining: usize,
}

impl<'de> de::MapAccess<'de> for Entries<'_> {
    type Error = LayoutError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, LayoutError> {
        if self.remaining == 0 {
            return Ok(None);
        }
        self.remaining -= 1;
        seed.deserialize(Tracer {
            session: self.session,
            out: self.key,
            depth: self.depth,
            ty: std::any::type_name::<K>(),
        })
        .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, LayoutError> {
        seed.deserialize(Tracer {
            session: self.session,
            out: self.value,
            depth: self.depth,
            ty: std::any::type_name::<V>(),
        })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.remaining)
    }
}

struct Variant<'a, 'f> {
    tracer: Tracer<'a>,
    index: u32,
    format: &'f mut Option<VariantFormat>,
}

impl<'de, 'a, 'f> de::EnumAccess<'de> for Variant<'a, 'f> {
    type Error = LayoutError;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self), LayoutError> {
        let index: de::value::U32Deserializer<LayoutError> = self.index.into_deserializer();
        Ok((seed.deserialize(index)?, self))
    }
}

impl<'de> de::VariantAccess<'de> for Variant<'_, '_> {
    type Error = LayoutError;

    fn unit_variant(self) -> Result<(), LayoutError> {
        *self.format = Some(VariantFormat::Unit);
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        mut self,
        seed: T,
    ) -> Result<T::Value, LayoutError> {
        let mut inner = Format::Unknown;
        let value = seed.deserialize(self.tracer.child(&mut inner, std::any::type_name::<T>())?)?;
        *self.format = Some(VariantFormat::Newtype(inner));
        Ok(value)
    }

    fn tuple_variant<V: Visitor<'de>>(
        mut self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, LayoutError> {
        let (value, formats) = self.tracer.fields(len, visitor)?;
        *self.format = Some(VariantFormat::Tuple(formats));
        Ok(value)
    }

    fn struct_variant<V: Visitor<'de>>(
        mut self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, LayoutError> {
        let (value, formats) = self.tracer.fields(fields.len(), visitor)?;
        let named = fields
            .iter()
            .map(|field| (*field).to_owned())
            .zip(formats)
            .collect();
        *self.format = Some(VariantFormat::Struct(named));
        Ok(value)
    }
}

// ---- rendering ----

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

/// What a trace of a `#[saga_tool]` or `#[saga_fn]` state collects: the state enum, and
/// per call site of a helper, the helper's own traced state.
#[derive(Debug, Default)]
pub(crate) struct Frame {
    pub(crate) state: Option<Result<Traced, LayoutError>>,
    /// Per variant of the state: what tells it apart from variants sharing its name.
    pub(crate) site_tags: Vec<&'static str>,
    /// The helper's code tag (for a helper's frame).
    pub(crate) build_tag: u16,
    pub(crate) callees: Vec<(String, Frame)>,
    /// Call sites of ordinary futures: their variants are never sealed.
    pub(crate) unreachable: Vec<String>,
}

impl Frame {
    /// The whole state as text: its enum, and each helper's state after it.
    pub(crate) fn render(&self) -> Result<String, LayoutError> {
        let traced = match &self.state {
            Some(Ok(traced)) => traced,
            // A helper that never suspends saves nothing of its own.
            Some(Err(error)) if error.0 == EMPTY_ROOT => return Ok("no suspension".to_owned()),
            Some(Err(error)) => return Err(error.clone()),
            None => return Err(LayoutError("the state was not traced".into())),
        };
        let mut out = traced.render();
        let names = traced.root_variants().unwrap_or_default();
        for ((variant, _), tag) in names.iter().zip(&self.site_tags) {
            if !tag.is_empty() {
                let _ = write!(out, " where {variant} is {tag}");
            }
        }
        for (variant, callee) in &self.callees {
            let _ = write!(out, " where {variant}.__callee = [{}]", callee.render()?);
        }
        for variant in &self.unreachable {
            let _ = write!(out, " where {variant} is never sealed");
        }
        Ok(out)
    }
}

thread_local! {
    /// The frames being filled, innermost last; empty when no trace runs.
    static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

/// Whether a layout trace runs on this thread.
pub(crate) fn tracing() -> bool {
    FRAMES.with(|frames| !frames.borrow().is_empty())
}

/// Runs `run` with a new frame on this thread's stack, and gives that frame back.
pub(crate) fn in_frame(run: impl FnOnce()) -> Frame {
    FRAMES.with(|frames| frames.borrow_mut().push(Frame::default()));
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            // A panicking `run` leaves its frame; it is dropped with the stack's top.
            let _ = FRAMES.try_with(|frames| frames.borrow_mut().pop());
        }
    }
    let pop = Pop;
    run();
    std::mem::forget(pop);
    FRAMES
        .with(|frames| frames.borrow_mut().pop())
        .unwrap_or_default()
}

/// Records `S`, the state enum of the step being traced, in the innermost frame, with
/// its variants' site tags.
pub(crate) fn record_state<S: de::DeserializeOwned>(site_tags: &[&'static str]) {
    let traced = trace::<S>();
    FRAMES.with(|frames| {
        if let Some(frame) = frames.borrow_mut().last_mut() {
            frame.state = Some(traced);
            frame.site_tags = site_tags.to_vec();
        }
    });
}

impl Frame {
    /// The code tags of every helper this frame calls, nested ones included.
    pub(crate) fn callee_tags(&self, tags: &mut Vec<u16>) {
        for (_, callee) in &self.callees {
            tags.push(callee.build_tag);
            callee.callee_tags(tags);
        }
    }
}

/// Marks the variant `variant` of the innermost frame as never sealed.
pub(crate) fn record_unreachable(variant: &'static str) {
    FRAMES.with(|frames| {
        if let Some(frame) = frames.borrow_mut().last_mut() {
            frame.unreachable.push(variant.to_owned());
        }
    });
}

/// Records a helper's frame under the call-site variant `variant` of the innermost frame.
pub(crate) fn record_callee(variant: &'static str, callee: Frame) {
    FRAMES.with(|frames| {
        if let Some(frame) = frames.borrow_mut().last_mut() {
            frame.callees.push((variant.to_owned(), callee));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    fn text<T: de::DeserializeOwned>() -> String {
        trace::<T>().expect("traces").render()
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Transfer {
        from: String,
        to: String,
        cents: u64,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct TransferSwapped {
        to: String,
        from: String,
        cents: u64,
    }

    #[test]
    fn field_names_order_and_types_are_in_the_layout() {
        assert_eq!(
            text::<Transfer>(),
            "\"Transfer\" { from: str, to: str, cents: u64 }"
        );
        assert_ne!(text::<Transfer>(), text::<TransferSwapped>());
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    enum Color {
        Red,
        Custom { rgb: (u8, u8, u8) },
        Named(String),
    }

    #[test]
    fn every_enum_variant_is_explored() {
        assert_eq!(
            text::<Vec<Option<Color>>>(),
            "[Option<\"Color\" enum { Red | Custom { rgb: (u8, u8, u8) } | Named(str) }>]"
        );
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    enum List {
        Cons(u8, Box<List>),
        Nil,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Tree {
        label: String,
        children: Vec<Tree>,
        parent: Option<Box<Tree>>,
        index: std::collections::BTreeMap<String, Tree>,
    }

    #[test]
    fn recursive_types_end() {
        // A type met again through another Rust type (`Box<List>`) is written out once
        // more before its recursion ends: deterministic, only longer.
        let list = text::<List>();
        assert!(
            list.starts_with("\"List\" enum { Cons(u8, \"List\" enum { Cons(u8, ^\"List\""),
            "{list}"
        );
        let tree = text::<Tree>();
        assert!(
            tree.starts_with("\"Tree\" { label: str, children: [\"Tree\""),
            "{tree}"
        );
        assert!(tree.contains("index: Map<str, \"Tree\""), "{tree}");
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    enum Outer {
        Plain,
        Other(u8),
        Holds { inner: Vec<Color> },
    }

    #[test]
    fn two_instances_of_one_generic_type_keep_their_own_layouts() {
        let text = text::<(Result<String, u8>, Result<Vec<u64>, u8>)>();
        assert_eq!(
            text,
            "(\"Result\" enum { Ok(str) | Err(u8) }, \"Result\" enum { Ok([u64]) | Err(u8) })"
        );
    }

    #[test]
    fn an_enum_reached_only_through_one_variant_is_explored_too() {
        let text = text::<Vec<Outer>>();
        assert!(
            text.contains("Red | Custom { rgb: (u8, u8, u8) } | Named(str)"),
            "{text}"
        );
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    enum Kind {
        Leaf,
        Branch(u8),
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Forest {
        children: Vec<Forest>,
        kind: Kind,
    }

    #[test]
    fn an_enum_first_met_inside_a_recursion_is_still_explored() {
        let text = text::<Forest>();
        assert!(text.contains("Leaf | Branch(u8)"), "{text}");
    }

    mod unit {
        #[derive(serde::Deserialize)]
        pub(super) struct Node;
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Node {
        next: Option<Box<Node>>,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    #[serde(rename = "Node")]
    struct NodeToUnit {
        next: Option<Box<NodeToUnit2>>,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    #[serde(rename = "Node")]
    struct NodeToUnit2 {
        next: Option<Box<unit::Node>>,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Renamed {
        #[serde(rename = "a: u8, b")]
        x: u8,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    #[serde(rename = "Renamed")]
    struct TwoFields {
        a: u8,
        b: u8,
    }

    #[test]
    fn a_back_reference_and_a_unit_struct_of_one_name_read_differently() {
        assert_ne!(text::<Node>(), text::<NodeToUnit>());
        assert_ne!(text::<Renamed>(), text::<TwoFields>());
    }

    #[test]
    fn validating_types_are_traced_with_other_samples() {
        assert_eq!(text::<std::num::NonZeroU32>(), "u32");
        assert_eq!(text::<std::net::IpAddr>(), text::<std::net::IpAddr>());
        assert!(text::<std::time::Duration>().contains("secs: u64"));
    }

    #[test]
    fn self_describing_types_are_refused() {
        assert!(trace::<serde_json::Value>().is_err());
    }

    #[test]
    fn each_root_variant_renders_alone() {
        let traced = trace::<Color>().expect("traces");
        let variants = traced.root_variants().expect("an enum");
        assert_eq!(
            variants,
            vec![
                ("Red".to_owned(), String::new()),
                ("Custom".to_owned(), " { rgb: (u8, u8, u8) }".to_owned()),
                ("Named".to_owned(), "(str)".to_owned()),
            ]
        );
    }
}
