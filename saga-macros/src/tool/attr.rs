//! `#[saga_tool(name = "…", title = "…", description = "…", task, version = N)]`.

use proc_macro2::TokenStream;
use syn::LitStr;
use syn::parse::Parser;

use crate::errors::Errors;

/// The tool attribute's arguments.
#[derive(Default)]
pub struct ToolAttr {
    pub name: Option<LitStr>,
    pub title: Option<LitStr>,
    pub description: Option<LitStr>,
    /// `task` (optional) or `task = "optional" | "required"`.
    pub task: Option<TaskAttr>,
    /// `version = N`: a change of meaning that keeps the saved layout.
    pub version: Option<syn::LitInt>,
}

/// How the tool may run as a task.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TaskAttr {
    Optional,
    Required,
}

pub fn parse(args: TokenStream, errors: &mut Errors) -> ToolAttr {
    let mut attr = ToolAttr::default();
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("task") {
            if attr.task.is_some() {
                return Err(meta.error("`task` is given twice; keep one"));
            }
            if meta.input.is_empty() || meta.input.peek(syn::Token![,]) {
                attr.task = Some(TaskAttr::Optional);
                return Ok(());
            }
            let lit: LitStr = meta.value()?.parse()?;
            attr.task = Some(match lit.value().as_str() {
                "optional" => TaskAttr::Optional,
                "required" => TaskAttr::Required,
                _ => {
                    return Err(syn::Error::new(
                        lit.span(),
                        "a tool runs as a task when the client supports it (`task`, or `task = \"optional\"`) or only as a task (`task = \"required\"`)",
                    ));
                }
            });
            return Ok(());
        }
        if meta.path.is_ident("version") {
            if attr.version.is_some() {
                return Err(meta.error("`version` is given twice; keep one"));
            }
            let lit: syn::LitInt = meta.value()?.parse().map_err(|error| {
                syn::Error::new(error.span(), "expected a whole number, e.g. `version = 2`")
            })?;
            if lit.base10_parse::<u16>().is_err() {
                return Err(syn::Error::new(
                    lit.span(),
                    "a tool's version is a whole number from 0 to 65535, e.g. `version = 2`",
                ));
            }
            attr.version = Some(lit);
            return Ok(());
        }
        let slot = if meta.path.is_ident("name") {
            &mut attr.name
        } else if meta.path.is_ident("title") {
            &mut attr.title
        } else if meta.path.is_ident("description") {
            &mut attr.description
        } else {
            return Err(meta.error(
                "unknown #[saga_tool] argument: the tool's metadata is set with \
                 `name = \"…\"`, `title = \"…\"` or `description = \"…\"`, \
                 `task` lets it run as a task, and `version = N` declares a change of \
                 meaning that keeps what it saves",
            ));
        };
        if slot.is_some() {
            return Err(meta.error("this argument is given twice; keep one"));
        }
        let value = meta.value()?;
        let lit: LitStr = value.parse().map_err(|error| {
            syn::Error::new(
                error.span(),
                "expected a string literal, e.g. `name = \"deploy\"`",
            )
        })?;
        *slot = Some(lit);
        Ok(())
    });
    if let Err(error) = parser.parse2(args) {
        errors.push(error);
    }
    if let Some(name) = &attr.name {
        let value = name.value();
        let valid = !value.is_empty()
            && value.len() <= 128
            && value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
        if !valid {
            errors.at(
                name,
                "a tool name is 1 to 128 characters of ASCII letters, digits, `_`, `-` or `.`, \
                 as MCP requires",
            );
        }
    }
    attr
}
