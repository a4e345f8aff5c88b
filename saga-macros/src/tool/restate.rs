//! Suspensions whose requests can be stated again from the saved state.
//!
//! A token need not carry a round's requests when the tool can build them again: the
//! runtime asks the resumed step (`Answers::asking_again`), which evaluates the request
//! expressions a second time and answers `Step::AskAgain`. That is only sound when
//! evaluating them again gives the same requests and does nothing else, so a suspension
//! qualifies only when
//!
//! - every request expression is built from literals, paths, field reads, borrows,
//!   operators, `format!`-like macros, the request functions and their builder calls, and a
//!   few read-only conversions (`clone`, `to_string`, …): nothing that could have a side
//!   effect or draw something new (a user's function, a random id);
//! - every local it reads is saved at that suspension anyway, so that the saved state is
//!   exactly what it was (no local is saved only for this, so no type is newly required to
//!   be serializable).
//!
//! A URL elicitation draws its id when it is sent, so it never qualifies; anything else
//! keeps its requests in the token as before.

use quote::{format_ident, quote_spanned};
use syn::{Expr, Stmt};

use super::lower::Site;
use super::machine::Saved;
use super::suspend::{RequestKind, Suspension, request_kind};
use crate::shared::private_path;

/// Methods that may appear in a request expression: the requests' builder calls, and
/// conversions that only read their receiver.
const READ_ONLY_METHODS: &[&str] = &[
    // builders of `elicit`, `sample`, `list_roots`
    "key",
    "system",
    "max_tokens",
    "temperature",
    "model_hint",
    "intelligence_priority",
    "speed_priority",
    "cost_priority",
    "messages",
    // conversions
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
const PURE_MACROS: &[&str] = &["format", "concat", "stringify", "vec"];

/// Whether the requests of `site` can be stated again from what it saves.
pub fn restatable(site: &Site, saved: &[Saved]) -> bool {
    let requests: Vec<&Expr> = match &site.suspension {
        Suspension::Await { request, kind } if restatable_kind(*kind) => vec![request],
        Suspension::Join { requests }
            if requests.iter().all(|(_, kind)| restatable_kind(*kind)) =>
        {
            requests.iter().map(|(request, _)| request).collect()
        }
        _ => return false,
    };
    requests.into_iter().all(|request| {
        pure(request)
            && super::scope::free_in_expr(request)
                .iter()
                .all(|name| is_request_fn(name) || saved.iter().any(|s| s.ident == name))
    })
}

fn restatable_kind(kind: RequestKind) -> bool {
    matches!(
        kind,
        RequestKind::Elicit | RequestKind::Sample | RequestKind::ListRoots
    )
}

fn is_request_fn(name: &str) -> bool {
    RequestKind::from_fn(name).is_some_and(restatable_kind)
}

/// Whether evaluating `expr` again gives the same value and does nothing else.
fn pure(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(_) | Expr::Path(_) => true,
        Expr::Field(field) => pure(&field.base),
        Expr::Reference(reference) => reference.mutability.is_none() && pure(&reference.expr),
        Expr::Paren(paren) => pure(&paren.expr),
        Expr::Group(group) => pure(&group.expr),
        Expr::Unary(unary) => pure(&unary.expr),
        Expr::Cast(cast) => pure(&cast.expr),
        Expr::Binary(binary) => !assigns(&binary.op) && pure(&binary.left) && pure(&binary.right),
        Expr::Tuple(tuple) => tuple.elems.iter().all(pure),
        Expr::Array(array) => array.elems.iter().all(pure),
        Expr::MethodCall(call) => {
            READ_ONLY_METHODS.contains(&call.method.to_string().as_str())
                && pure(&call.receiver)
                && call.args.iter().all(pure)
        }
        Expr::Call(call) => request_kind(expr).is_some() && call.args.iter().all(pure),
        Expr::Macro(mac) => {
            let is_pure = mac
                .mac
                .path
                .get_ident()
                .is_some_and(|name| PURE_MACROS.contains(&name.to_string().as_str()));
            is_pure
                && super::macro_args::std_args(&mac.mac).is_some_and(|args| {
                    args.values().into_iter().all(|value| match value {
                        Expr::Assign(named) => pure(&named.right),
                        // `{:?}` of a `HashMap` or `HashSet` read back from the state
                        // lists it in another order: not the same text twice.
                        Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(text),
                            ..
                        }) => !text.value().contains("?}"),
                        value => pure(value),
                    })
                })
        }
        _ => false,
    }
}

fn assigns(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_)
            | SubAssign(_)
            | MulAssign(_)
            | DivAssign(_)
            | RemAssign(_)
            | BitXorAssign(_)
            | BitAndAssign(_)
            | BitOrAssign(_)
            | ShlAssign(_)
            | ShrAssign(_)
    )
}

/// At the head of a restatable site's continuation: when the runtime asks for the round
/// again, or an answer does not fit its form, the same requests again, from the saved
/// locals.
pub fn guard(site: &Site) -> Stmt {
    let private = private_path();
    let span = site.span;
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
                #private::rebuilt(&mut __round, true);
                __round
            });
        }
    }
}
