//! Code as the diagram shows it: an expression, pattern or type printed as its author
//! would write it, on one line and cut to a length a node can hold; a condition's
//! negation as close to the code as it reads. Apart from the walk because the nodes, the
//! labels and the requests all read code the same way.

use quote::{format_ident, quote};
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, Pat};

use crate::tool::ir::Suspension;
use crate::tool::parse::macro_args;
use crate::tool::parse::suspend::classify;

/// The most characters of one line of text in the diagram.
const MAX_LINE: usize = 80;

/// `expr` as a user would write it, on one line.
pub(super) fn code(expr: &Expr) -> String {
    // prettyplease prints a macro's tokens as tokens (`a ? + b ?`): the standard macros'
    // arguments, which are expressions, are printed as such instead.
    let mut expr = expr.clone();
    let mut macros = Macros(Vec::new());
    macros.visit_expr_mut(&mut expr);
    let text = one_line(quote!(fn __saga_diagram() { #expr; }), |text| {
        text.strip_suffix(';').unwrap_or(text).to_owned()
    })
    .unwrap_or_else(|| quote!(#expr).to_string());
    macros
        .0
        .iter()
        .enumerate()
        .rev()
        .fold(text, |text, (index, rendered)| {
            text.replace(&format!("{MACRO_PLACEHOLDER}{index}"), rendered)
        })
}

/// `expr` in a condition: a request it awaits (`elicit(..).await?`), which its node
/// shows, as `answer`.
pub(super) fn label_code(expr: &Expr) -> String {
    struct Answers;
    impl VisitMut for Answers {
        fn visit_expr_mut(&mut self, expr: &mut Expr) {
            let request = match &*expr {
                Expr::Try(expr_try) => is_request(&expr_try.expr),
                other => is_request(other),
            };
            if request {
                *expr = syn::parse_quote!(answer);
                return;
            }
            visit_mut::visit_expr_mut(self, expr);
        }
    }
    let mut expr = expr.clone();
    Answers.visit_expr_mut(&mut expr);
    code(&expr)
}

/// Whether `expr` awaits a request or a `join!` (not a helper, whose call reads well).
fn is_request(expr: &Expr) -> bool {
    match expr {
        Expr::Paren(paren) => is_request(&paren.expr),
        other => matches!(
            classify(other),
            Some(Ok(Suspension::Await { .. } | Suspension::Join { .. }))
        ),
    }
}

const MACRO_PLACEHOLDER: &str = "__saga_diagram_macro_";

/// Replaces each standard macro by a placeholder, keeping its text.
struct Macros(Vec<String>);

impl VisitMut for Macros {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if let Expr::Macro(mac) = expr
            && let Some(text) = macro_text(&mac.mac)
        {
            let placeholder = format_ident!("{MACRO_PLACEHOLDER}{}", self.0.len());
            self.0.push(text);
            *expr = syn::parse_quote!(#placeholder);
            return;
        }
        visit_mut::visit_expr_mut(self, expr);
    }
}

/// A standard macro with its arguments printed as expressions: `format!("{}", a? + b)`.
fn macro_text(mac: &syn::Macro) -> Option<String> {
    let args = macro_args::std_args(mac)?;
    let path = &mac.path;
    let path = quote!(#path).to_string().replace(' ', "");
    let inner = match &args {
        macro_args::Args::List(list) => list.iter().map(code).collect::<Vec<_>>().join(", "),
        macro_args::Args::Repeat(value, _, count) => format!("{}; {}", code(value), code(count)),
        macro_args::Args::Matches {
            scrutinee,
            pattern,
            guard,
            ..
        } => {
            let mut text = format!("{}, {}", code(scrutinee), code_pat(pattern));
            if let Some((_, guard)) = guard {
                text.push_str(&format!(" if {}", code(guard)));
            }
            text
        }
    };
    let (open, close) = match mac.delimiter {
        syn::MacroDelimiter::Paren(_) => ("(", ")"),
        syn::MacroDelimiter::Brace(_) => ("{ ", " }"),
        syn::MacroDelimiter::Bracket(_) => ("[", "]"),
    };
    Some(format!("{path}!{open}{inner}{close}"))
}

pub(super) fn code_pat(pat: &Pat) -> String {
    one_line(
        quote!(fn __saga_diagram() { match __x { #pat => {} } }),
        |text| {
            text.strip_prefix("match __x { ")
                .and_then(|text| text.strip_suffix(" => {} }"))
                .unwrap_or(text)
                .to_owned()
        },
    )
    .unwrap_or_else(|| quote!(#pat).to_string())
}

pub(super) fn code_type(ty: &syn::Type) -> String {
    one_line(quote!(fn __saga_diagram() { let _: #ty; }), |text| {
        text.strip_prefix("let _: ")
            .and_then(|text| text.strip_suffix(';'))
            .unwrap_or(text)
            .to_owned()
    })
    .unwrap_or_else(|| quote!(#ty).to_string())
}

/// The body of a one-statement function, formatted and put on one line.
fn one_line(function: proc_macro2::TokenStream, body: impl Fn(&str) -> String) -> Option<String> {
    let file: syn::File = syn::parse2(function).ok()?;
    let text = prettyplease::unparse(&file);
    let mut lines: Vec<&str> = text.lines().map(str::trim).collect();
    // `fn __saga_diagram() {` … `}`
    if lines.len() < 3 {
        return None;
    }
    lines.remove(0);
    lines.pop();
    let mut joined = String::new();
    for line in lines {
        if line.is_empty() {
            continue;
        }
        let closes = line.starts_with(')') || line.starts_with(']');
        if closes && joined.ends_with(',') {
            joined.pop();
        }
        let opened = joined.ends_with('(') || joined.ends_with('[');
        if !joined.is_empty() && !opened && !closes {
            joined.push(' ');
        }
        joined.push_str(line);
    }
    Some(body(&joined))
}

/// `text` cut to [`MAX_LINE`] characters.
pub(super) fn short(text: &str) -> String {
    if text.chars().count() > MAX_LINE {
        let cut: String = text.chars().take(MAX_LINE - 1).collect();
        format!("{}…", cut.trim_end())
    } else {
        text.to_owned()
    }
}

/// The condition under which `cond` is false, as close to the code as it reads.
pub(super) fn negate(cond: &Expr) -> String {
    match cond {
        Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Not(_)) => label_code(&unary.expr),
        Expr::Paren(paren) => negate(&paren.expr),
        Expr::Binary(binary) if matches!(binary.op, syn::BinOp::Eq(_) | syn::BinOp::Ne(_)) => {
            let mut flipped = binary.clone();
            flipped.op = match binary.op {
                syn::BinOp::Eq(_) => syn::BinOp::Ne(Default::default()),
                _ => syn::BinOp::Eq(Default::default()),
            };
            label_code(&Expr::Binary(flipped))
        }
        Expr::Path(_)
        | Expr::MethodCall(_)
        | Expr::Call(_)
        | Expr::Field(_)
        | Expr::Lit(_)
        | Expr::Index(_)
        | Expr::Macro(_)
        | Expr::Await(_)
        | Expr::Try(_) => format!("!{}", label_code(cond)),
        other => format!("!({})", label_code(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse::Parser;

    #[test]
    fn code_reads_as_written() {
        let expr: Expr = syn::parse_quote!(format!(
            "Is deploying to '{}' safe right now?",
            target.target
        ));
        assert_eq!(
            code(&expr),
            "format!(\"Is deploying to '{}' safe right now?\", target.target)"
        );
        let expr: Expr = syn::parse_quote!(!verdict.text().starts_with("Yes"));
        assert_eq!(negate(&expr), "verdict.text().starts_with(\"Yes\")");
        let expr: Expr = syn::parse_quote!(i < n);
        assert_eq!(negate(&expr), "!(i < n)");
        let pat: Pat = syn::Pat::parse_multi
            .parse2(quote!(Some(x) | None))
            .unwrap();
        assert_eq!(code_pat(&pat), "Some(x) | None");
    }
}
