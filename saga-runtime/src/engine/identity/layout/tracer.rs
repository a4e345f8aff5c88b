//! The tracer: a `Deserializer` that answers every request with a sample and records what
//! it was asked, as postcard would be asked.

use std::collections::BTreeMap;

use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, Visitor};

use super::profile::{EMPTY_ROOT, MACRO_STATE, MAX_DEPTH, PROFILES, Profile};
#[cfg(test)]
use super::profile::{SELF_DESCRIBED, SLOT_PROFILES};
use super::shape::{Container, Format, LayoutError, VariantFormat, short_type_name};

pub(super) struct TraceSession {
    pub(super) profile: Profile,
    pub(super) registry: BTreeMap<String, Container>,
    pub(super) names: BTreeMap<String, String>,
    /// Per enum, the variant its first occurrence of this pass takes.
    pub(super) first_pick: BTreeMap<String, u32>,
    /// Containers being traced, outermost first.
    pub(super) active: Vec<String>,
    /// Enum variants being traced.
    pub(super) active_variants: Vec<(String, u32)>,
    /// Above zero inside a container that re-entered itself: take the shortest way out.
    pub(super) terminating: usize,
    /// Every option that is a field `None`, for a sample of what `skip_serializing_if`
    /// most often skips.
    pub(super) no_options: bool,
}

impl TraceSession {
    pub(super) fn new(profile: Profile) -> Self {
        TraceSession {
            profile,
            registry: BTreeMap::new(),
            names: BTreeMap::new(),
            first_pick: BTreeMap::new(),
            active: Vec::new(),
            active_variants: Vec::new(),
            terminating: 0,
            no_options: false,
        }
    }

    /// Per enum with a variant not yet explored, the first such variant.
    pub(super) fn plan(&self) -> BTreeMap<String, u32> {
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

pub(crate) struct Tracer<'a> {
    pub(super) session: &'a mut TraceSession,
    pub(super) out: &'a mut Format,
    pub(super) depth: usize,
    /// The Rust type read at this position (its seed's), "" where unknown.
    pub(super) ty: &'static str,
    /// Whether this position is a field of a struct or tuple, which `skip_serializing_if`
    /// may skip: in a minimal sample, an option there is `None`.
    pub(super) field: bool,
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
            field: false,
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

    // Out of line: the tracer runs once per type, at start-up, and inlined, each of its
    // generic functions would be optimized again in every caller, for every saved type.
    #[inline(never)]
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

    // Out of line, as `fields` is.
    #[inline(never)]
    fn named<'de, V: Visitor<'de>>(
        mut self,
        name: &'static str,
        visitor: V,
        body: impl FnOnce(&mut Self, &str, V) -> Result<(V::Value, Container), LayoutError>,
    ) -> Result<V::Value, LayoutError> {
        // A type only serde_json reads back (`RawValue`): no layout, and a MessagePack
        // slot, whose reader knows the name.
        if let Some(error) = LayoutError::json_only(name) {
            return Err(error);
        }
        // Only the visit has the visitor's type; the rest is compiled once.
        let (key, recursive) = self.enter_named(name);
        let result = body(&mut self, &key, visitor);
        self.leave(recursive);
        let (value, container) = result?;
        self.session.record(&key, container)?;
        Ok(value)
    }

    /// Runs `run` on this position with the sample profile `profile`, and takes the
    /// session's own back after, whatever `run` gives.
    fn with_profile<R>(&mut self, profile: Profile, run: impl FnOnce(Tracer<'_>) -> R) -> R {
        let saved = std::mem::replace(&mut self.session.profile, profile);
        let result = run(Tracer {
            session: &mut *self.session,
            out: &mut *self.out,
            depth: self.depth,
            ty: self.ty,
            field: self.field,
        });
        self.session.profile = saved;
        result
    }

    /// Enters the named container `name` at this position: its key (the name and the
    /// position's type), and whether it re-enters itself.
    fn enter_named(&mut self, name: &'static str) -> (String, bool) {
        let key = format!("{name}\u{0}{}", self.ty);
        self.session
            .names
            .entry(key.clone())
            .or_insert_with(|| name.to_owned());
        *self.out = Format::Named(key.clone());
        let recursive = self.enter(&key);
        (key, recursive)
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
        if self.session.terminating > 0 || (self.session.no_options && self.field) {
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
        // A saved local, as the derived state enums' `SlotTrace` was read. The macros'
        // state enums trace their slots through `FieldTracer::slot` now, which must record
        // the same; this path stays only as the tests' reference for it.
        #[cfg(test)]
        if let Some(profile) = SLOT_PROFILES.iter().position(|slot| *slot == name) {
            // A saved local: transparent, traced with the samples its type takes.
            let mut slot = self;
            return slot.with_profile(PROFILES[profile], |inner| {
                visitor.visit_newtype_struct(inner)
            });
        }
        #[cfg(test)]
        if name == SELF_DESCRIBED {
            // A saved local kept as MessagePack (see `engine::slot`): its type's name follows.
            return visitor.visit_newtype_struct(TypeName { out: self.out });
        }
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
            Ok((value, Container::Struct(named_fields(fields, formats))))
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
            let index = pick_variant(tracer.session, key, name, variants.len() as u32)?;
            tracer.session.active_variants.push((key.to_owned(), index));
            let mut format = None;
            let result = visitor.visit_enum(Variant {
                tracer: Tracer {
                    session: &mut *tracer.session,
                    out: &mut Format::Unknown,
                    depth: tracer.depth + 1,
                    ty: "",
                    field: false,
                },
                index,
                format: &mut format,
            });
            tracer.session.active_variants.pop();
            let value = result?;
            Ok((value, described(variants, index, format)))
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

/// Reads the type name a MessagePack slot's marker gives, as a unit struct's name (the
/// tests' reference path, above).
#[cfg(test)]
struct TypeName<'a> {
    out: &'a mut Format,
}

#[cfg(test)]
impl<'de> Deserializer<'de> for TypeName<'_> {
    type Error = LayoutError;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, LayoutError> {
        Err(LayoutError(
            "a MessagePack slot's marker without its type".into(),
        ))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, LayoutError> {
        *self.out = Format::MessagePack(short_type_name(name));
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
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
            field: false,
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
        let mut tracer = self.tracer.child(out, std::any::type_name::<T>())?;
        tracer.field = true;
        seed.deserialize(tracer).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.formats.len() - self.next)
    }
}

struct Entries<'a> {
    session: &'a mut TraceSession,
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
            field: false,
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
            field: false,
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
        *self.format = Some(VariantFormat::Struct(named_fields(fields, formats)));
        Ok(value)
    }
}

/// A state enum's names: what the layout trace records for it.
#[derive(Debug, Clone, Copy)]
pub struct StateShape {
    /// The enum's name.
    pub name: &'static str,
    /// Its variants, by index.
    pub variants: &'static [&'static str],
    /// Per variant, its fields' names, in order.
    pub fields: &'static [&'static [&'static str]],
}

/// A field of a generated state enum, traced where serde's derive would trace it: the
/// position a `Fields` element gets, typed by the seed the derive passes
/// (`PhantomData<F>`), so that every key is the derived enum's.
pub struct FieldTracer<'a, 'b> {
    parent: &'a mut Tracer<'b>,
    out: &'a mut Format,
}

impl FieldTracer<'_, '_> {
    /// Traces the field as a value of `F`.
    pub fn field<F: de::DeserializeOwned>(self) -> Result<(), LayoutError> {
        let mut tracer = self.parent.child(
            self.out,
            std::any::type_name::<std::marker::PhantomData<F>>(),
        )?;
        tracer.field = true;
        F::deserialize(tracer).map(drop)
    }

    /// Traces a request marker (`PhantomData<fn() -> R>`, whose seed's type name is
    /// `ty`) as serde's `PhantomData` reads: a unit struct of that name. Not generic: a
    /// marker's type is a request type of the tool's own.
    pub fn marker(self, ty: &'static str) -> Result<(), LayoutError> {
        let mut tracer = self.parent.child(self.out, ty)?;
        tracer.field = true;
        let (key, recursive) = tracer.enter_named("PhantomData");
        tracer.leave(recursive);
        tracer.session.record(&key, Container::UnitStruct)
    }

    /// Traces a saved local as `SlotTrace<T>`'s `Deserialize` did, without its visitors:
    /// `ty` is its seed's type name (`PhantomData<SlotTrace<T>>`); `profile`, the sample
    /// profile a postcard slot's type traces with, or `None` for a MessagePack slot of the
    /// type named `type_name`; `trace_value` reads a value of `T`.
    pub(crate) fn slot(
        self,
        ty: &'static str,
        profile: Option<usize>,
        type_name: &'static str,
        trace_value: &mut dyn FnMut(Tracer<'_>) -> Result<(), LayoutError>,
    ) -> Result<(), LayoutError> {
        let mut tracer = self.parent.child(self.out, ty)?;
        tracer.field = true;
        let Some(profile) = profile else {
            // `deserialize_newtype_struct(SELF_DESCRIBED, ..)`: the type's short name.
            *tracer.out = Format::MessagePack(short_type_name(type_name));
            return Ok(());
        };
        // `deserialize_newtype_struct(SLOT_PROFILES[profile], ..)`: transparent, with the
        // samples the type takes.
        let profile = PROFILES.get(profile).copied().unwrap_or(PROFILES[0]);
        tracer.with_profile(profile, trace_value)
    }

    /// A field the enum does not have (the generated `match`'s last arm).
    pub fn missing(self) -> Result<(), LayoutError> {
        Err(LayoutError("a state field the enum does not have".into()))
    }
}

/// A generated state enum at the root of a trace: what `deserialize_enum` and
/// `struct_variant` record for a derived enum of the same shape, each field traced by
/// `field`. Not generic, so that it is compiled once for every tool.
pub(super) fn trace_state_enum(
    mut tracer: Tracer<'_>,
    shape: &StateShape,
    field: StateFieldTrace,
) -> Result<(), LayoutError> {
    if shape.variants.is_empty() {
        if tracer.depth == 0 {
            return Err(LayoutError(EMPTY_ROOT.into()));
        }
        return Err(LayoutError(format!(
            "the enum `{}` has no variant",
            shape.name
        )));
    }
    let (key, recursive) = tracer.enter_named(shape.name);
    let result = trace_state_variant(&mut tracer, &key, shape, field);
    tracer.leave(recursive);
    let container = result?;
    tracer.session.record(&key, container)
}

/// How a generated state enum traces the field of a variant: its `trace_field`.
pub(crate) type StateFieldTrace = fn(u32, usize, FieldTracer<'_, '_>) -> Result<(), LayoutError>;

fn trace_state_variant(
    tracer: &mut Tracer<'_>,
    key: &str,
    shape: &StateShape,
    field: StateFieldTrace,
) -> Result<Container, LayoutError> {
    let index = pick_variant(tracer.session, key, shape.name, shape.variants.len() as u32)?;
    tracer.session.active_variants.push((key.to_owned(), index));
    let names = shape.fields.get(index as usize).copied().unwrap_or(&[]);
    let mut formats = vec![Format::Unknown; names.len()];
    let result = {
        let mut variant = Tracer {
            session: &mut *tracer.session,
            out: &mut Format::Unknown,
            depth: tracer.depth + 1,
            ty: "",
            field: false,
        };
        formats.iter_mut().enumerate().try_for_each(|(at, out)| {
            field(
                index,
                at,
                FieldTracer {
                    parent: &mut variant,
                    out,
                },
            )
        })
    };
    tracer.session.active_variants.pop();
    result?;
    Ok(described(
        shape.variants,
        index,
        Some(VariantFormat::Struct(named_fields(names, formats))),
    ))
}

// ---- rendering ----

/// The variant of the enum `key` (`name` as written, of `count` variants) a pass takes:
/// the plan's, or one that reaches what is still unexplored, or an explored one, or any
/// that does not re-enter itself. Apart from `deserialize_enum` so that it is compiled
/// once, not once per enum traced.
fn pick_variant(
    session: &mut TraceSession,
    key: &str,
    name: &str,
    count: u32,
) -> Result<u32, LayoutError> {
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
    // A fully explored enum goes where something is still unexplored, if it can.
    let onward = (0..count).filter(free).find(|&i| {
        explored(i)
            && session.variant_reaches_unexplored(
                known.get(i as usize).and_then(Option::as_ref),
                &mut vec![key.to_owned()],
            )
    });
    planned
        .filter(|_| session.terminating == 0)
        .or(onward.filter(|_| session.terminating == 0))
        .or_else(|| (0..count).filter(free).find(|&i| explored(i)))
        .or_else(|| (0..count).find(free))
        .ok_or_else(|| LayoutError(format!("every variant of `{name}` contains itself")))
}

/// An enum as a pass found it: its variants, the one it took described.
fn described(
    variants: &'static [&'static str],
    index: u32,
    format: Option<VariantFormat>,
) -> Container {
    let mut described: Vec<(String, Option<VariantFormat>)> = variants
        .iter()
        .map(|variant| ((*variant).to_owned(), None))
        .collect();
    described[index as usize].1 = format;
    Container::Enum(described)
}

/// A struct's fields by name, each with the format traced for it. Apart from the
/// visitors' code so that it is compiled once.
fn named_fields(fields: &'static [&'static str], formats: Vec<Format>) -> Vec<(String, Format)> {
    fields
        .iter()
        .map(|field| (*field).to_owned())
        .zip(formats)
        .collect()
}
