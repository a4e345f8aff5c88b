//! The tool function's signature: its arguments, its context parameter, its output.

use syn::{Attribute, FnArg, Ident, ItemFn, LitStr, Pat, ReturnType, Type};

use crate::errors::Errors;

pub struct Signature {
    pub params: Vec<Param>,
    /// The `&SagaContext` parameter's name, if the tool takes one.
    pub context: Option<Ident>,
    pub output: Type,
    pub docs: Option<String>,
}

pub struct Param {
    pub ident: Ident,
    pub mutable: bool,
    pub ty: Type,
    pub description: Option<LitStr>,
    /// The argument's name on the wire, when it differs from the Rust name.
    pub rename: Option<LitStr>,
}

impl Param {
    /// The name the body reads it by: its own, or, for an argument named like the tool
    /// (whose unit struct shares the function's name, so that a binding of that name
    /// would be read as a pattern matching it), a name of its own.
    pub fn local(&self, function: &Ident) -> Ident {
        if self.ident != *function {
            return self.ident.clone();
        }
        let name = self.ident.to_string();
        Ident::new(
            &format!("__{}_arg", name.trim_start_matches("r#")),
            self.ident.span(),
        )
    }
}

/// What the function is compiled as.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `#[saga_tool]` (and prompts, resources): its arguments come from the call's JSON.
    Tool,
    /// `#[saga_fn]`: its arguments come from its caller, and may borrow.
    Helper,
}

impl Role {
    fn attribute(self) -> &'static str {
        match self {
            Role::Tool => "#[saga_tool]",
            Role::Helper => "#[saga_fn]",
        }
    }
}

pub fn parse(item: &mut ItemFn, role: Role, errors: &mut Errors) -> Signature {
    let sig = &item.sig;
    let attribute = role.attribute();
    if sig.asyncness.is_none() {
        errors.at(
            sig.fn_token,
            format!(
                "{attribute} needs an `async fn`: a saga awaits the client's answers; \
                 write `async fn`"
            ),
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        let why = match role {
            Role::Tool => {
                "the tool's schema and its saved state are fixed when the tool is registered"
            }
            Role::Helper => {
                "its saved state nests in its caller's, whose layout is fixed when the caller is compiled"
            }
        };
        let hint = match role {
            Role::Tool => "",
            Role::Helper => " (a borrowed parameter needs no lifetime parameter: `&str` works)",
        };
        errors.at(
            &sig.generics,
            format!("{attribute} functions cannot be generic: {why}; use concrete types{hint}"),
        );
    }
    if let Some(constness) = &sig.constness {
        errors.at(constness, "a saga tool cannot be `const`; remove `const`");
    }
    if let Some(variadic) = &sig.variadic {
        errors.at(
            variadic,
            "a saga tool cannot be variadic: its arguments are the named properties of its input \
             schema; remove `...`",
        );
    }
    let output = match &sig.output {
        ReturnType::Type(_, ty) => (**ty).clone(),
        ReturnType::Default if role == Role::Helper => syn::parse_quote!(()),
        ReturnType::Default => {
            errors.at(
                &sig.ident,
                "a saga tool returns its result: add `-> Result<String, SagaError>` \
                 (or another ToolOutput)",
            );
            syn::parse_quote!(())
        }
    };

    let mut params = Vec::new();
    let mut context = None;
    for input in item.sig.inputs.iter_mut() {
        let typed = match input {
            FnArg::Receiver(receiver) => {
                errors.at(
                    &*receiver,
                    format!(
                        "{attribute} goes on a function without `self`: a saga's state lives \
                         in the client's token, not in `self`; remove the receiver (pass what \
                         it needs as arguments)"
                    ),
                );
                continue;
            }
            FnArg::Typed(typed) => typed,
        };
        let arg = take_arg_attr(&mut typed.attrs, errors);
        let (ident, mutable) = match &*typed.pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                (pat.ident.clone(), pat.mutability.is_some())
            }
            other => {
                errors.at(
                    other,
                    "a tool argument is a plain name: it becomes a property of the input \
                     schema; destructure it in the body instead",
                );
                continue;
            }
        };
        if is_context(&typed.ty) {
            if context.is_some() {
                errors.at(&typed.ty, "a saga tool takes at most one `&SagaContext`");
            }
            if let Some(attribute) = arg.description.as_ref().or(arg.rename.as_ref()) {
                errors.at(
                    attribute,
                    "`&SagaContext` is not an argument: it has no description or wire name; \
                     remove the #[arg(..)]",
                );
            }
            context = Some(ident);
            continue;
        }
        if let Type::Reference(reference) = &*typed.ty
            && role == Role::Tool
        {
            errors.at(
                reference,
                "tool arguments are owned: they are read from the call's JSON and may be saved \
                 in the saga's state; use an owned type such as `String`",
            );
        }
        params.push(Param {
            ident,
            mutable,
            ty: (*typed.ty).clone(),
            description: arg.description,
            rename: arg.rename,
        });
    }
    Signature {
        params,
        context,
        output,
        docs: docs(&item.attrs),
    }
}

/// Reads and removes `#[arg(description = "…")]` from a parameter.
/// An argument's `#[arg(..)]`.
#[derive(Default)]
struct ArgAttr {
    description: Option<LitStr>,
    rename: Option<LitStr>,
}

fn take_arg_attr(attrs: &mut Vec<Attribute>, errors: &mut Errors) -> ArgAttr {
    let mut arg = ArgAttr::default();
    attrs.retain(|attr| {
        if !attr.path().is_ident("arg") {
            return true;
        }
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("description") {
                arg.description = Some(meta.value()?.parse::<LitStr>()?);
                Ok(())
            } else if meta.path.is_ident("rename") {
                arg.rename = Some(meta.value()?.parse::<LitStr>()?);
                Ok(())
            } else {
                Err(meta.error(
                    "unknown #[arg] key: an argument takes `description = \"…\"` (its \
                     schema description) and `rename = \"…\"` (its name on the wire)",
                ))
            }
        });
        if let Err(error) = result {
            errors.push(error);
        }
        false
    });
    arg
}

/// `&SagaContext`, with or without a path or lifetime.
fn is_context(ty: &Type) -> bool {
    match ty {
        Type::Reference(reference) => match &*reference.elem {
            Type::Path(path) => path
                .path
                .segments
                .last()
                .is_some_and(|segment| segment.ident == "SagaContext"),
            _ => false,
        },
        _ => false,
    }
}

/// The doc comment, lines joined, trimmed; `None` when empty.
pub fn docs(attrs: &[Attribute]) -> Option<String> {
    let lines = crate::shared::doc_lines(attrs);
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}
