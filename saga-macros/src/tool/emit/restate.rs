//! Suspensions whose requests can be stated again from the saved state.
//!
//! A token need not carry a round's requests when the tool can build them again: the
//! runtime asks the tool (`SagaTool::restate`), whose step resumes in its restating mode
//! (`MacroState::Restate`), evaluates the request expressions a second time and answers
//! `Step::AskAgain`. That is only sound when
//! evaluating them again gives the same requests and does nothing else, so a suspension
//! qualifies only when
//!
//! - every request expression is a request function and its builder calls, whose
//!   arguments are built from literals, locals, field reads, borrows, operators, `format!`
//!   (without `{:?}` or `{:p}`), `vec!` and a few read-only conversions (`clone`,
//!   `to_string`, …): nothing that calls a function of the user's or draws something new
//!   (a random id);
//! - every local it reads is saved at that suspension anyway, so that the saved state is
//!   exactly what it was (no local is saved only for this, so no type is newly required to
//!   be serializable), or is a value the build makes again exactly (the tools a sample
//!   offers, `places::restated_let`).
//!
//! A URL elicitation draws its id when it is sent, so it never qualifies; anything else
//! keeps its requests in the token as before. What this cannot see (a user's `Display`,
//! `From` or operator impl, a field `#[serde(skip)]` leaves out of the state) the runtime
//! catches: the token keeps a digest of the requests, and a round stated differently is
//! an error, never a different question.

use quote::{format_ident, quote_spanned};
use syn::{Expr, Stmt};

use crate::shared::private_path;
use crate::tool::ir::{Rebound, RequestKind, Saved, Site, Suspension};
use crate::tool::parse::suspend::request_kind;

/// The requests' own builder calls, allowed along a request's chain only
/// (`sample(..).max_tokens(..)`), never on another receiver.
const BUILDER_METHODS: &[&str] = &[
    "key",
    "system",
    "max_tokens",
    "temperature",
    "model_hint",
    "intelligence_priority",
    "speed_priority",
    "cost_priority",
    "messages",
    "tools",
    "tool_choice",
    "outcome",
];

/// Conversions allowed inside a request's arguments: they only read their receiver (for
/// the standard types they are named after).
const CONVERSIONS: &[&str] = &[
    "clone",
    "to_string",
    "to_owned",
    "as_str",
    "into",
    "trim",
    "to_uppercase",
    "to_lowercase",
];

/// Macros whose expansion only formats or builds its arguments.
const PURE_MACROS: &[&str] = &["format", "vec"];

/// Whether the requests of `site` can be stated again from what it saves (and the values
/// it makes again, `rebound`'s restated ones).
pub fn restatable(site: &Site, saved: &[Saved], rebound: &[Rebound]) -> bool {
    let requests: Vec<&Expr> = match &site.suspension {
        Suspension::Await { request, kind } if kind.restatable() => vec![request],
        Suspension::Join { requests } if requests.iter().all(|(_, kind)| kind.restatable()) => {
            requests.iter().map(|(request, _)| request).collect()
        }
        _ => return false,
    };
    requests.into_iter().all(|request| {
        pure(request)
            && crate::tool::lower::scope::free_in_expr(request)
                .iter()
                .all(|name| {
                    is_request_fn(name)
                        || saved.iter().any(|s| s.ident == name)
                        || rebound.iter().any(|r| r.restated && r.ident == name)
                })
    })
}

fn is_request_fn(name: &str) -> bool {
    RequestKind::from_fn(name).is_some_and(RequestKind::restatable)
}

/// Whether `expr` is a request built purely: a request function called with pure
/// arguments, then builder calls with pure arguments.
fn pure(expr: &Expr) -> bool {
    match expr {
        Expr::MethodCall(call) => {
            BUILDER_METHODS.contains(&call.method.to_string().as_str())
                && pure(&call.receiver)
                && call.args.iter().all(pure_value)
        }
        Expr::Paren(paren) => pure(&paren.expr),
        Expr::Group(group) => pure(&group.expr),
        Expr::Call(call) => request_kind(expr).is_some() && call.args.iter().all(pure_value),
        _ => false,
    }
}

/// Whether evaluating `expr` again gives the same value and does nothing else: literals,
/// locals (single names; a path such as `config::REGION` may read what changes between
/// processes), field reads, borrows, operators, casts, tuples, arrays, `format!` and
/// `vec!`, and the read-only conversions.
fn pure_value(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(_) => true,
        Expr::Path(path) => path.qself.is_none() && path.path.get_ident().is_some(),
        Expr::Field(field) => pure_value(&field.base),
        Expr::Reference(reference) => reference.mutability.is_none() && pure_value(&reference.expr),
        Expr::Paren(paren) => pure_value(&paren.expr),
        Expr::Group(group) => pure_value(&group.expr),
        Expr::Unary(unary) => !matches!(unary.op, syn::UnOp::Deref(_)) && pure_value(&unary.expr),
        Expr::Cast(cast) => pure_value(&cast.expr),
        Expr::Binary(binary) => {
            !crate::tool::lower::changes::compound_assign(&binary.op)
                && pure_value(&binary.left)
                && pure_value(&binary.right)
        }
        Expr::Tuple(tuple) => tuple.elems.iter().all(pure_value),
        Expr::Array(array) => array.elems.iter().all(pure_value),
        Expr::MethodCall(call) => {
            CONVERSIONS.contains(&call.method.to_string().as_str())
                && call.turbofish.is_none()
                && pure_value(&call.receiver)
                && call.args.is_empty()
        }
        Expr::Macro(mac) => {
            let name = mac.mac.path.get_ident().map(ToString::to_string);
            let Some(name) = name.filter(|name| PURE_MACROS.contains(&name.as_str())) else {
                return false;
            };
            let Some(args) = crate::tool::parse::macro_args::std_args(&mac.mac) else {
                return false;
            };
            let values = args.values();
            if name == "format" {
                // The format string must be a literal whose text can be read here.
                match values.first() {
                    Some(Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(text),
                        ..
                    })) if same_text_each_time(&text.value()) => {}
                    _ => return false,
                }
            }
            values.into_iter().all(|value| match value {
                Expr::Assign(named) => pure_value(&named.right),
                value => pure_value(value),
            })
        }
        _ => false,
    }
}

/// Whether a format string gives the same text for the same values: no `{:?}` (a
/// `HashMap` or `HashSet` read back from the state lists its items in another order) and
/// no `{:p}` (an address).
fn same_text_each_time(format: &str) -> bool {
    let mut rest = format;
    while let Some(open) = rest.find('{') {
        rest = &rest[open + 1..];
        if let Some(escaped) = rest.strip_prefix('{') {
            rest = escaped;
            continue;
        }
        let Some(close) = rest.find('}') else {
            return false;
        };
        let spec = rest[..close].split_once(':').map_or("", |(_, spec)| spec);
        if spec.contains('?') || spec.ends_with('p') {
            return false;
        }
        rest = &rest[close + 1..];
    }
    true
}

/// At the head of a restatable site's continuation: in the restating mode, or when an
/// answer does not fit its form, the same requests again, from the saved locals.
pub fn guard(site: &Site) -> Stmt {
    let private = private_path();
    let span = site.resolved_span();
    let requests = site.suspension.requests();
    let fits = (0..requests.len()).map(|i| {
        let mark = format_ident!("__mark{}", i);
        quote_spanned!(span=> #private::fits(&#mark, &__answers, #i))
    });
    let names: Vec<_> = (0..requests.len())
        .map(|i| format_ident!("__request{}", i))
        .collect();
    // The marker gives each request its type: `elicit(..)` alone does not say what
    // answer it expects; the code after the suspension did.
    let marks: Vec<_> = (0..requests.len())
        .map(|i| format_ident!("__mark{}", i))
        .collect();
    syn::parse_quote_spanned! {span=>
        if #private::asking_again(&__answers) #(|| !#fits)* {
            #(let #names = #private::as_marked(&#marks, #requests);)*
            return #private::ask_again({
                let mut __round = ::std::vec::Vec::new();
                #(#private::requests(&mut __round, #names);)*
                #private::restatable(&mut __round, true);
                #private::note_misfits(&mut __round, &__answers);
                __round
            });
        }
    }
}

/// At the head of any other site's continuation (one that keeps its requests in its
/// token), but a helper call's, which hands the mode on to the helper: in the restating
/// mode, the end of the step, before any of the tool's code runs. The runtime asks no such
/// round to be stated again, but a token of an earlier build, where the site was
/// restatable, may reach it.
pub fn refusal(site: &Site) -> Stmt {
    let private = private_path();
    let span = site.resolved_span();
    syn::parse_quote_spanned! {span=>
        if #private::asking_again(&__answers) {
            return #private::cannot_restate();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::same_text_each_time;

    #[test]
    fn debug_and_pointer_formats_are_not_the_same_text_each_time() {
        assert!(same_text_each_time("Deploy {name} to {} ({:>8}) {{:?}}"));
        assert!(same_text_each_time("{step}"));
        for format in ["{:?}", "{x:#?}", "{:x?}", "{:p}", "{0:p}", "unclosed {"] {
            assert!(!same_text_each_time(format), "{format}");
        }
    }
}
