//! Checks that each `#[elicit(...)]` key fits its field's type, collecting every error.

use std::collections::HashMap;

use syn::{Expr, ExprLit, Lit};

use super::Errors;
use super::ast::{Enum, Field, FieldKind, Input, Struct};
use super::attr::{Attr, Num, parse_number};
use crate::shared::type_name;

pub const FORMATS: &[&str] = &["email", "uri", "date", "date-time"];

pub fn check(input: &Input, errors: &mut Errors) {
    match input {
        Input::Struct(data) => check_struct(data, errors),
        Input::Enum(data) => check_enum(data, errors),
    }
}

fn check_struct(data: &Struct, errors: &mut Errors) {
    let mut names = HashMap::new();
    for field in &data.fields {
        if let Some(previous) = names.insert(field.name.as_str(), field.ident) {
            errors.at(
                field.ident,
                format!(
                    "two fields of the form are both named `{}`: `{previous}` and `{}`\n\
                     help: rename one of them with `#[serde(rename = \"...\")]`",
                    field.name, field.ident
                ),
            );
        }
        check_field(field, errors);
    }
}

fn check_enum(data: &Enum, errors: &mut Errors) {
    let mut wires = HashMap::new();
    for variant in &data.variants {
        if let Some(previous) = wires.insert(variant.wire.as_str(), variant.ident) {
            errors.at(
                variant.ident,
                format!(
                    "two options of the select both have the wire value `{}`: `{previous}` and `{}`\n\
                     help: rename one of them with `#[serde(rename = \"...\")]`",
                    variant.wire, variant.ident
                ),
            );
        }
    }
}

/// The error for a key that does not apply to the field's type.
fn misplaced<T>(attr: &Attr<T>, field: &Field, applies_to: &str, errors: &mut Errors) {
    let key = &attr.key;
    errors.at(
        key,
        format!(
            "`{key}` cannot be used on `{}`, which is {}\n\
             why: `{key}` applies only to {applies_to}\n\
             help: remove `{key}`, or change the field's type",
            type_name(field.ty),
            field.kind.describe(),
        ),
    );
}

fn int_range(name: &str) -> (i128, i128) {
    match name {
        "i8" => (i8::MIN.into(), i8::MAX.into()),
        "i16" => (i16::MIN.into(), i16::MAX.into()),
        "i32" => (i32::MIN.into(), i32::MAX.into()),
        "u8" => (0, u8::MAX.into()),
        "u16" => (0, u16::MAX.into()),
        "u32" => (0, u32::MAX.into()),
        "u64" | "usize" => (0, u64::MAX.into()),
        _ => (i64::MIN.into(), i64::MAX.into()),
    }
}

fn check_field(field: &Field, errors: &mut Errors) {
    let attrs = &field.attrs;
    let kind = field.kind;
    let is_string = matches!(kind, FieldKind::String);
    let is_number = matches!(kind, FieldKind::Int(_) | FieldKind::Float);
    let is_multi = matches!(kind, FieldKind::Multi);

    if let Some(format) = &attrs.format {
        if !is_string {
            misplaced(format, field, "`String` fields (MCP `format`)", errors);
        } else if !FORMATS.contains(&format.value.value().as_str()) {
            errors.at(
                &format.value,
                format!(
                    "unknown format `{}`: MCP form mode allows only {}\n\
                     help: use one of those, or drop `format` and check the value in the tool",
                    format.value.value(),
                    FORMATS
                        .iter()
                        .map(|f| format!("\"{f}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
    }
    for (attr, what) in [
        (&attrs.min_length, "`String` fields (MCP `minLength`)"),
        (&attrs.max_length, "`String` fields (MCP `maxLength`)"),
    ] {
        if let Some(attr) = attr
            && !is_string
        {
            misplaced(attr, field, what, errors);
        }
    }
    for (attr, what) in [
        (
            &attrs.min_items,
            "multi selects, `Vec<E>` fields (MCP `minItems`)",
        ),
        (
            &attrs.max_items,
            "multi selects, `Vec<E>` fields (MCP `maxItems`)",
        ),
    ] {
        if let Some(attr) = attr
            && !is_multi
        {
            misplaced(attr, field, what, errors);
        }
    }
    for attr in [&attrs.min, &attrs.max].into_iter().flatten() {
        if !is_number {
            misplaced(
                attr,
                field,
                "integer and float fields (MCP `minimum`/`maximum`)",
                errors,
            );
            continue;
        }
        if let FieldKind::Int(int) = kind {
            let key = &attr.key;
            match attr.value {
                Num::Float(_) => errors.push(syn::Error::new(
                    attr.span,
                    format!(
                        "`{key}` on the `{int}` field `{}` must be an integer literal\n\
                         help: write e.g. `{key} = 1`",
                        field.ident
                    ),
                )),
                Num::Int(value) => {
                    let (low, high) = int_range(int);
                    if value < low || value > high {
                        errors.push(syn::Error::new(
                            attr.span,
                            format!(
                                "`{key} = {value}` is out of range for `{int}` ({low}..={high})\n\
                                 why: the field could never hold it\n\
                                 help: use a value `{int}` can hold"
                            ),
                        ));
                    }
                }
            }
        }
    }
    ordered(&attrs.min, &attrs.max, errors, |num| match num {
        Num::Int(int) => *int as f64,
        Num::Float(float) => *float,
    });
    ordered(&attrs.min_length, &attrs.max_length, errors, |n| *n as f64);
    ordered(&attrs.min_items, &attrs.max_items, errors, |n| *n as f64);

    if let Some(default) = &attrs.default {
        check_default(field, default, errors);
    }
}

fn ordered<T>(
    min: &Option<Attr<T>>,
    max: &Option<Attr<T>>,
    errors: &mut Errors,
    value: impl Fn(&T) -> f64,
) {
    if let (Some(min), Some(max)) = (min, max)
        && value(&min.value) > value(&max.value)
    {
        errors.push(syn::Error::new(
            min.span,
            format!(
                "`{}` is greater than `{}`\n\
                 why: no answer could satisfy both\n\
                 help: swap them, or fix one",
                min.key, max.key
            ),
        ));
    }
}

fn check_default(field: &Field, default: &Attr<Expr>, errors: &mut Errors) {
    let expr = &default.value;
    let is_str = |expr: &Expr| {
        matches!(
            expr,
            Expr::Lit(ExprLit {
                lit: Lit::Str(_),
                ..
            })
        )
    };
    let (expected, example) = match field.kind {
        FieldKind::String | FieldKind::Select if is_str(expr) => return,
        FieldKind::Bool
            if matches!(
                expr,
                Expr::Lit(ExprLit {
                    lit: Lit::Bool(_),
                    ..
                })
            ) =>
        {
            return;
        }
        FieldKind::Float if parse_number(expr).is_some() => return,
        FieldKind::Int(int) => match parse_number(expr) {
            Some(Num::Int(value)) => {
                let (low, high) = int_range(int);
                if value < low || value > high {
                    errors.at(
                        expr,
                        format!(
                            "`default = {value}` is out of range for `{int}` ({low}..={high})\n\
                                 why: the field could never hold it\n\
                             help: use a value `{int}` can hold"
                        ),
                    );
                }
                return;
            }
            _ => ("an integer literal", "`default = 1`"),
        },
        FieldKind::Multi => match expr {
            Expr::Array(array) if array.elems.iter().all(is_str) => return,
            _ => (
                "an array of string literals (wire values of the enum)",
                "`default = [\"a\", \"b\"]`",
            ),
        },
        FieldKind::String => ("a string literal", "`default = \"...\"`"),
        FieldKind::Select => (
            "a string literal (a wire value of the enum)",
            "`default = \"...\"`",
        ),
        FieldKind::Bool => ("`true` or `false`", "`default = false`"),
        FieldKind::Float => ("a number literal", "`default = 0.5`"),
    };
    errors.at(
        expr,
        format!(
            "wrong literal type for `default`: the field `{}` is `{}`, so its default must be {expected}\n\
             why: the default is sent as the form field's initial value, so it must have the field's JSON type\n\
             help: write e.g. {example}",
            field.ident,
            type_name(field.ty),
        ),
    );
}
