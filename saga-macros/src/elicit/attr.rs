//! `#[elicit(...)]`, doc comments, and the serde renames that change wire names.

use proc_macro2::{Span, TokenTree};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, ExprUnary, Ident, Lit, LitStr, Token, UnOp};

use super::Errors;
use super::case::RenameRule;

/// One `key = value` of `#[elicit(...)]`, with the key for error spans.
pub struct Attr<T> {
    pub key: Ident,
    pub value: T,
    pub span: Span,
}

#[derive(Clone, Copy)]
pub enum Num {
    Int(i128),
    Float(f64),
}

#[derive(Default)]
pub struct FieldAttrs {
    pub doc: Option<String>,
    pub title: Option<Attr<LitStr>>,
    pub description: Option<Attr<LitStr>>,
    pub format: Option<Attr<LitStr>>,
    pub min: Option<Attr<Num>>,
    pub max: Option<Attr<Num>>,
    pub min_length: Option<Attr<u64>>,
    pub max_length: Option<Attr<u64>>,
    pub min_items: Option<Attr<u64>>,
    pub max_items: Option<Attr<u64>>,
    pub default: Option<Attr<Expr>>,
    pub rename: Option<String>,
}

#[derive(Default)]
pub struct VariantAttrs {
    pub doc: Option<String>,
    pub title: Option<Attr<LitStr>>,
    pub rename: Option<String>,
}

#[derive(Default)]
pub struct ContainerAttrs {
    pub rename_all: Option<RenameRule>,
}

pub const FIELD_KEYS: &str =
    "title, description, format, min, max, min_length, max_length, min_items, max_items, default";

pub fn container(attrs: &[Attribute], errors: &mut Errors) -> ContainerAttrs {
    let mut out = ContainerAttrs::default();
    for attr in attrs {
        if attr.path().is_ident("elicit") {
            errors.at(
                attr,
                "`#[elicit(...)]` does nothing on a struct or enum: it refines one form field\n\
                 help: put it on a field (or `#[elicit(title = \"...\")]` on an enum variant); \
                 the type's doc comment is not sent (a form schema has no title)",
            );
        } else if attr.path().is_ident("serde") {
            serde(attr, errors, |key, value| {
                // An unknown rule is reported by serde_derive; saying it twice helps nobody.
                if key == "rename_all"
                    && let Some(rule) = RenameRule::from_str(&value.value())
                {
                    out.rename_all = Some(rule);
                }
            });
        }
    }
    out
}

pub fn field(attrs: &[Attribute], errors: &mut Errors) -> FieldAttrs {
    let mut out = FieldAttrs {
        doc: doc(attrs),
        ..FieldAttrs::default()
    };
    for attr in attrs {
        if attr.path().is_ident("serde") {
            serde(attr, errors, |key, value| {
                if key == "rename" {
                    out.rename = Some(value.value());
                }
            });
        }
        if !attr.path().is_ident("elicit") {
            continue;
        }
        elicit_list(attr, errors, FIELD_KEYS, |key, value, errors| {
            let span = value.span();
            let name = key.to_string();
            macro_rules! set {
                ($slot:ident, $parse:expr) => {{
                    if out.$slot.is_some() {
                        errors.at(&key, format!("duplicate `{name}`: each key may appear once per field\nhelp: remove one of them"));
                    } else if let Some(value) = $parse {
                        out.$slot = Some(Attr { key, value, span });
                    }
                }};
            }
            match name.as_str() {
                "title" => set!(title, lit_str(&name, &value, errors)),
                "description" => set!(description, lit_str(&name, &value, errors)),
                "format" => set!(format, lit_str(&name, &value, errors)),
                "min" => set!(min, number(&name, &value, errors)),
                "max" => set!(max, number(&name, &value, errors)),
                "min_length" => set!(min_length, count(&name, &value, errors)),
                "max_length" => set!(max_length, count(&name, &value, errors)),
                "min_items" => set!(min_items, count(&name, &value, errors)),
                "max_items" => set!(max_items, count(&name, &value, errors)),
                "default" => set!(default, Some(value)),
                _ => return false,
            }
            true
        });
    }
    out
}

pub fn variant(attrs: &[Attribute], errors: &mut Errors) -> VariantAttrs {
    let mut out = VariantAttrs {
        doc: doc(attrs),
        ..VariantAttrs::default()
    };
    for attr in attrs {
        if attr.path().is_ident("serde") {
            serde(attr, errors, |key, value| {
                if key == "rename" {
                    out.rename = Some(value.value());
                }
            });
        }
        if !attr.path().is_ident("elicit") {
            continue;
        }
        elicit_list(attr, errors, "title", |key, value, errors| {
            if key != "title" {
                return false;
            }
            if out.title.is_some() {
                errors.at(&key, "duplicate `title`\nhelp: remove one of them");
            } else if let Some(lit) = lit_str("title", &value, errors) {
                let span = value.span();
                out.title = Some(Attr {
                    key,
                    value: lit,
                    span,
                });
            }
            true
        });
    }
    out
}

/// Walks `#[elicit(key = value, ...)]`, reporting every malformed or unknown entry and
/// going on to the next. `handle` returns false for a key it does not know.
fn elicit_list(
    attr: &Attribute,
    errors: &mut Errors,
    keys: &str,
    mut handle: impl FnMut(Ident, Expr, &mut Errors) -> bool,
) {
    let mut found = Vec::new();
    let result = attr.parse_nested_meta(|meta| {
        let Some(key) = meta.path.get_ident().cloned() else {
            found.push(meta.error(format!(
                "expected a key of `#[elicit(...)]`, one of: {keys}"
            )));
            return skip_value(&meta);
        };
        if !meta.input.peek(Token![=]) {
            found.push(syn::Error::new_spanned(
                &key,
                format!("`{key}` needs a value: write `{key} = ...`"),
            ));
            return skip_value(&meta);
        }
        let value: Expr = meta.value()?.parse()?;
        let mut local = Errors::default();
        if !handle(key.clone(), value, &mut local) {
            found.push(syn::Error::new_spanned(
                &key,
                format!(
                    "unknown `#[elicit]` key `{key}`\n\
                     why: `#[elicit(...)]` here takes only {keys} (what MCP form mode can send)\n\
                     help: remove `{key}`, or use one of those keys"
                ),
            ));
        }
        if let Some(error) = local.into_error() {
            found.push(error);
        }
        Ok(())
    });
    for error in found {
        errors.push(error);
    }
    if let Err(error) = result {
        errors.push(error);
    }
}

fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if !meta.input.is_empty() && !meta.input.peek(Token![,]) {
        meta.input.parse::<TokenTree>()?;
    }
    Ok(())
}

/// Reads the `key = "string"` entries of `#[serde(...)]` that change wire names; the rest
/// of serde's attributes are serde's business (it reports its own errors).
fn serde(attr: &Attribute, _errors: &mut Errors, mut handle: impl FnMut(&str, &LitStr)) {
    let _ = attr.parse_nested_meta(|meta| {
        let key = meta
            .path
            .get_ident()
            .map(Ident::to_string)
            .unwrap_or_default();
        if meta.input.peek(Token![=]) {
            let value: Expr = meta.value()?.parse()?;
            if let Expr::Lit(ExprLit {
                lit: Lit::Str(lit), ..
            }) = &value
            {
                handle(&key, lit);
            }
        } else if meta.input.peek(syn::token::Paren) && (key == "rename" || key == "rename_all") {
            // `rename(deserialize = "...")`: the answer is deserialized, so that name wins.
            meta.parse_nested_meta(|inner| {
                let value: Expr = inner.value()?.parse()?;
                if inner.path.is_ident("deserialize")
                    && let Expr::Lit(ExprLit {
                        lit: Lit::Str(lit), ..
                    }) = &value
                {
                    handle(&key, lit);
                }
                Ok(())
            })?;
        } else {
            skip_value(&meta)?;
        }
        Ok(())
    });
}

fn lit_str(key: &str, value: &Expr, errors: &mut Errors) -> Option<LitStr> {
    if let Expr::Lit(ExprLit {
        lit: Lit::Str(lit), ..
    }) = value
    {
        return Some(lit.clone());
    }
    errors.at(
        value,
        format!(
            "`{key}` expects a string literal\n\
             why: it is sent as the JSON string `{key}` of the form field\n\
             help: write `{key} = \"...\"`"
        ),
    );
    None
}

/// A number literal, possibly negative.
pub fn parse_number(value: &Expr) -> Option<Num> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Int(int), ..
        }) => int.base10_parse().ok().map(Num::Int),
        Expr::Lit(ExprLit {
            lit: Lit::Float(float),
            ..
        }) => float.base10_parse().ok().map(Num::Float),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => match parse_number(expr)? {
            Num::Int(int) => Some(Num::Int(-int)),
            Num::Float(float) => Some(Num::Float(-float)),
        },
        Expr::Group(group) => parse_number(&group.expr),
        _ => None,
    }
}

fn number(key: &str, value: &Expr, errors: &mut Errors) -> Option<Num> {
    let number = parse_number(value);
    if number.is_none() {
        errors.at(
            value,
            format!(
                "`{key}` expects a number literal\n\
                 why: it becomes the field's JSON Schema `{}`, a number\n\
                 help: write e.g. `{key} = 1` or `{key} = 0.5`",
                if key == "min" { "minimum" } else { "maximum" }
            ),
        );
    }
    number
}

fn count(key: &str, value: &Expr, errors: &mut Errors) -> Option<u64> {
    match parse_number(value) {
        Some(Num::Int(int)) if (0..=i128::from(u64::MAX)).contains(&int) => Some(int as u64),
        _ => {
            errors.at(
                value,
                format!(
                    "`{key}` expects a non-negative integer literal\n\
                     why: it is a count (of characters or of selected items)\n\
                     help: write e.g. `{key} = 1`"
                ),
            );
            None
        }
    }
}

/// The doc comment: lines of a paragraph joined with spaces, paragraphs with a blank line.
pub fn doc(attrs: &[Attribute]) -> Option<String> {
    let lines = crate::shared::doc_lines(attrs);
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in lines.iter().map(|line| line.trim()) {
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(line);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    (!paragraphs.is_empty()).then(|| paragraphs.join("\n\n"))
}
