//! The input, read into what the expansion needs: fields with their wire names and
//! kinds, or variants with their wire names and titles.

use syn::{Data, DeriveInput, Fields, GenericArgument, Ident, PathArguments, Type};

use super::Errors;
use super::attr::{self, FieldAttrs};

pub enum Input<'a> {
    Struct(Struct<'a>),
    Enum(Enum<'a>),
}

pub struct Struct<'a> {
    pub ident: &'a Ident,
    pub fields: Vec<Field<'a>>,
}

pub struct Field<'a> {
    pub ident: &'a Ident,
    /// The field's declared type.
    pub ty: &'a Type,
    pub kind: FieldKind,
    pub name: String,
    pub attrs: FieldAttrs,
}

pub struct Enum<'a> {
    pub ident: &'a Ident,
    pub variants: Vec<Variant<'a>>,
}

pub struct Variant<'a> {
    pub ident: &'a Ident,
    pub wire: String,
    pub title: Option<String>,
}

/// What a field's type looks like, as far as tokens tell. Whether a type named here
/// really is a form field is left to the `ElicitField` bound, checked by rustc.
#[derive(Clone, Copy)]
pub enum FieldKind {
    String,
    Bool,
    Int(&'static str),
    Float,
    /// Any other type: it must be a unit-only enum deriving `Elicit`.
    Select,
    /// `Vec<E>`: `E` must be a unit-only enum deriving `Elicit`.
    Multi,
}

impl FieldKind {
    pub fn describe(self) -> &'static str {
        match self {
            FieldKind::String => "a string",
            FieldKind::Bool => "a boolean",
            FieldKind::Int(_) => "an integer",
            FieldKind::Float => "a number",
            FieldKind::Select => "a single select (a unit-only enum)",
            FieldKind::Multi => "a multi select (a Vec of a unit-only enum)",
        }
    }
}

const INTEGERS: &[&str] = &[
    "i8", "i16", "i32", "i64", "isize", "u8", "u16", "u32", "u64", "usize",
];

fn generic_arg<'a>(ty: &'a Type, wrapper: &str) -> Option<&'a Type> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let last = path.path.segments.last()?;
    if last.ident != wrapper {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.iter().collect::<Vec<_>>().as_slice() {
        [GenericArgument::Type(inner)] => Some(inner),
        _ => None,
    }
}

fn classify(ty: &Type) -> FieldKind {
    if generic_arg(ty, "Vec").is_some() {
        return FieldKind::Multi;
    }
    if let Type::Path(path) = ty
        && path.qself.is_none()
        && let Some(last) = path.path.segments.last()
        && last.arguments.is_none()
    {
        let name = last.ident.to_string();
        if name == "String" {
            return FieldKind::String;
        }
        if name == "bool" {
            return FieldKind::Bool;
        }
        if name == "f32" || name == "f64" {
            return FieldKind::Float;
        }
        if let Some(int) = INTEGERS.iter().find(|int| **int == name) {
            return FieldKind::Int(int);
        }
    }
    FieldKind::Select
}

fn unraw(ident: &Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_owned).unwrap_or(text)
}

impl<'a> Input<'a> {
    pub fn from_syn(input: &'a DeriveInput, errors: &mut Errors) -> Option<Self> {
        let container = attr::container(&input.attrs, errors);
        let ident = &input.ident;
        if !input.generics.params.is_empty() || input.generics.where_clause.is_some() {
            errors.at(
                &input.generics,
                format!(
                    "`#[derive(Elicit)]` does not support generic types: `{ident}` has generic parameters\n\
                     why: the elicitation form is one fixed schema, so every field needs a concrete type\n\
                     help: remove the parameters and use concrete field types"
                ),
            );
        }
        match &input.data {
            Data::Struct(data) => {
                let named = match &data.fields {
                    Fields::Named(named) => named,
                    Fields::Unnamed(unnamed) => {
                        errors.at(
                            unnamed,
                            format!(
                                "`#[derive(Elicit)]` does not support tuple structs: `{ident}` has unnamed fields\n\
                                 why: each field becomes a property of the form, and a property needs a name\n\
                                 help: use named fields: `struct {ident} {{ name: String, ... }}`"
                            ),
                        );
                        return None;
                    }
                    Fields::Unit => {
                        errors.at(
                            ident,
                            format!(
                                "`#[derive(Elicit)]` does not support unit structs: `{ident}` has no fields\n\
                                 why: an elicitation form asks the user for its fields, and there are none\n\
                                 help: add named fields: `struct {ident} {{ name: String, ... }}`"
                            ),
                        );
                        return None;
                    }
                };
                let fields = named
                    .named
                    .iter()
                    .map(|field| {
                        let ident = field.ident.as_ref().expect("named field");
                        let attrs = attr::field(&field.attrs, errors);
                        let value_ty = generic_arg(&field.ty, "Option").unwrap_or(&field.ty);
                        let name = match (&attrs.rename, container.rename_all) {
                            (Some(rename), _) => rename.clone(),
                            (None, Some(rule)) => rule.apply_to_field(&unraw(ident)),
                            (None, None) => unraw(ident),
                        };
                        Field {
                            ident,
                            ty: &field.ty,
                            kind: classify(value_ty),
                            name,
                            attrs,
                        }
                    })
                    .collect();
                Some(Input::Struct(Struct { ident, fields }))
            }
            Data::Enum(data) => {
                if data.variants.is_empty() {
                    errors.at(
                        ident,
                        format!(
                            "`#[derive(Elicit)]` needs at least one variant: `{ident}` has none\n\
                             why: the variants are the options of a select, and a select with no options cannot be answered\n\
                             help: add unit variants: `enum {ident} {{ A, B }}`"
                        ),
                    );
                }
                let mut variants = Vec::new();
                for variant in &data.variants {
                    let attrs = attr::variant(&variant.attrs, errors);
                    if !matches!(variant.fields, Fields::Unit) {
                        let name = &variant.ident;
                        errors.at(
                            &variant.fields,
                            format!(
                                "`#[derive(Elicit)]` supports only unit variants: `{ident}::{name}` carries data\n\
                                 why: an enum is elicited as a select, and each option is a plain string\n\
                                 help: remove the data from `{name}`, or elicit it with a separate form"
                            ),
                        );
                        continue;
                    }
                    let wire = match (&attrs.rename, container.rename_all) {
                        (Some(rename), _) => rename.clone(),
                        (None, Some(rule)) => rule.apply_to_variant(&unraw(&variant.ident)),
                        (None, None) => unraw(&variant.ident),
                    };
                    let title = attrs.title.map(|title| title.value.value()).or_else(|| {
                        attrs
                            .doc
                            .map(|doc| doc.split("\n\n").next().unwrap_or_default().to_owned())
                    });
                    variants.push(Variant {
                        ident: &variant.ident,
                        wire,
                        title,
                    });
                }
                Some(Input::Enum(Enum { ident, variants }))
            }
            Data::Union(data) => {
                errors.at(
                    data.union_token,
                    format!(
                        "`#[derive(Elicit)]` does not support unions: `{ident}` is a union\n\
                         why: a form is a struct of named fields (or an enum, as a select)\n\
                         help: use a struct with named fields"
                    ),
                );
                None
            }
        }
    }
}
