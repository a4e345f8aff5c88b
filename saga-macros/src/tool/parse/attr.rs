//! `#[saga_tool(name = "…", title = "…", description = "…", task, version = N,
//! read_only, destructive, idempotent, open_world, icons = ["…"], meta = "{…}",
//! deny_unknown_arguments)]`.

use proc_macro2::TokenStream;
use syn::LitStr;
use syn::meta::ParseNestedMeta;
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
    /// The MCP tool annotations (hints to the client), each `name` or `name = bool`.
    pub hints: Vec<(Hint, bool)>,
    /// `icons = ["https://…", …]`: the icons' sources.
    pub icons: Vec<LitStr>,
    /// `meta = "{…}"`: the tool's `_meta`, a JSON object checked at compile time.
    pub meta: Option<LitStr>,
    /// `deny_unknown_arguments`: an argument the tool does not declare is refused
    /// (`-32602`, naming it) rather than ignored.
    pub deny_unknown_arguments: bool,
}

/// A tool annotation: a hint to the client about what calling the tool does.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    ReadOnly,
    Destructive,
    Idempotent,
    OpenWorld,
}

impl Hint {
    const ALL: [(Hint, &'static str); 4] = [
        (Hint::ReadOnly, "read_only"),
        (Hint::Destructive, "destructive"),
        (Hint::Idempotent, "idempotent"),
        (Hint::OpenWorld, "open_world"),
    ];

    fn named(path: &syn::Path) -> Option<Hint> {
        Self::ALL
            .iter()
            .find(|(_, name)| path.is_ident(name))
            .map(|(hint, _)| *hint)
    }

    /// The `ToolAnnotations` builder method that sets it.
    pub fn setter(self) -> &'static str {
        match self {
            Hint::ReadOnly => "read_only",
            Hint::Destructive => "destructive",
            Hint::Idempotent => "idempotent",
            Hint::OpenWorld => "open_world",
        }
    }
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
            task(&meta, &mut attr)
        } else if meta.path.is_ident("version") {
            version(&meta, &mut attr)
        } else if let Some(named) = Hint::named(&meta.path) {
            hint(&meta, &mut attr, named)
        } else if meta.path.is_ident("icons") {
            icons(&meta, &mut attr)
        } else if meta.path.is_ident("meta") {
            self::meta(&meta, &mut attr)
        } else if meta.path.is_ident("deny_unknown_arguments") {
            if attr.deny_unknown_arguments {
                return Err(meta.error("`deny_unknown_arguments` is given twice; keep one"));
            }
            attr.deny_unknown_arguments = true;
            Ok(())
        } else {
            text(&meta, &mut attr)
        }
    });
    if let Err(error) = parser.parse2(args) {
        errors.push(error);
    }
    if let Some(name) = &attr.name {
        check_name(name, errors);
    }
    attr
}

/// `task`, or `task = "optional" | "required"`.
fn task(meta: &ParseNestedMeta<'_>, attr: &mut ToolAttr) -> syn::Result<()> {
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
    Ok(())
}

/// `version = N`.
fn version(meta: &ParseNestedMeta<'_>, attr: &mut ToolAttr) -> syn::Result<()> {
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
    Ok(())
}

/// An annotation: `read_only`, or `destructive = false`.
fn hint(meta: &ParseNestedMeta<'_>, attr: &mut ToolAttr, hint: Hint) -> syn::Result<()> {
    if attr.hints.iter().any(|(given, _)| *given == hint) {
        return Err(meta.error("this annotation is given twice; keep one"));
    }
    let value = if meta.input.is_empty() || meta.input.peek(syn::Token![,]) {
        true
    } else {
        let lit: syn::LitBool = meta.value()?.parse().map_err(|error| {
            syn::Error::new(
                error.span(),
                "an annotation is a flag (`read_only`) or a boolean (`destructive = false`)",
            )
        })?;
        lit.value
    };
    attr.hints.push((hint, value));
    Ok(())
}

/// `icons = ["…"]`.
fn icons(meta: &ParseNestedMeta<'_>, attr: &mut ToolAttr) -> syn::Result<()> {
    if !attr.icons.is_empty() {
        return Err(meta.error("`icons` is given twice; list them all in one"));
    }
    let list: syn::ExprArray = meta.value()?.parse().map_err(|error| {
        syn::Error::new(
            error.span(),
            "expected a list of icon URLs, e.g. `icons = [\"https://example.com/icon.svg\"]`",
        )
    })?;
    for element in list.elems {
        match element {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(lit),
                ..
            }) if !lit.value().trim().is_empty() => attr.icons.push(lit),
            other => {
                return Err(syn::Error::new_spanned(
                    other,
                    "an icon is its URL as a non-empty string literal, e.g. \"https://example.com/icon.svg\" or a `data:` URI",
                ));
            }
        }
    }
    Ok(())
}

/// `meta = "{…}"`, a JSON object checked here.
fn meta(meta: &ParseNestedMeta<'_>, attr: &mut ToolAttr) -> syn::Result<()> {
    if attr.meta.is_some() {
        return Err(meta.error("`meta` is given twice; keep one"));
    }
    let lit: LitStr = meta.value()?.parse().map_err(|error| {
            syn::Error::new(
                error.span(),
                "expected the tool's `_meta` as a JSON object in a string, e.g. `meta = r#\"{\"team\": \"payments\"}\"#`",
            )
        })?;
    match serde_json::from_str::<serde_json::Value>(&lit.value()) {
        Ok(serde_json::Value::Object(_)) => attr.meta = Some(lit),
        Ok(_) => {
            return Err(syn::Error::new(
                lit.span(),
                "a tool's `_meta` is a JSON object, e.g. `meta = r#\"{\"team\": \"payments\"}\"#`",
            ));
        }
        Err(error) => {
            return Err(syn::Error::new(
                lit.span(),
                format!("`meta` is not valid JSON: {error}"),
            ));
        }
    }
    Ok(())
}

/// `name`, `title` or `description`, each a string; any other argument is unknown.
fn text(meta: &ParseNestedMeta<'_>, attr: &mut ToolAttr) -> syn::Result<()> {
    let slot = if meta.path.is_ident("name") {
        &mut attr.name
    } else if meta.path.is_ident("title") {
        &mut attr.title
    } else if meta.path.is_ident("description") {
        &mut attr.description
    } else {
        return Err(meta.error(
            "unknown #[saga_tool] argument: the tool's metadata is set with \
             `name = \"…\"`, `title = \"…\"`, `description = \"…\"`, \
             `icons = [\"…\"]` or `meta = \"{…}\"`; its annotations with \
             `read_only`, `destructive`, `idempotent` or `open_world` (each also \
             `= false`); `task` lets it run as a task, `version = N` declares \
             a change of meaning that keeps what it saves, and \
             `deny_unknown_arguments` refuses arguments it does not declare",
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
}

/// A tool's name, as MCP requires it.
fn check_name(name: &LitStr, errors: &mut Errors) {
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
