//! Recognising the suspension points: `elicit(..).await`, `elicit_url(..).await`,
//! `sample(..).await`, `list_roots().await`, `checkpoint().await` (each possibly with
//! builder calls before `.await`), and `join!(..)` of requests.

use proc_macro2::Span;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Token};

/// The functions that make a request.
pub const REQUEST_FNS: &[&str] = &["elicit", "elicit_url", "sample", "list_roots", "checkpoint"];

/// A suspension point as written.
#[derive(Clone)]
pub enum Suspension {
    /// `REQUEST.await`: one request (or a checkpoint) in its own round.
    Await { request: Expr, kind: String },
    /// `join!(REQUEST, …)`: several requests in one round.
    Join { requests: Vec<(Expr, String)> },
}

impl Suspension {
    pub fn is_checkpoint(&self) -> bool {
        matches!(self, Suspension::Await { kind, .. } if kind == "checkpoint")
    }

    /// The kinds, for naming: `Elicit`, `Sample`, …
    pub fn kinds(&self) -> Vec<&str> {
        match self {
            Suspension::Await { kind, .. } => vec![kind.as_str()],
            Suspension::Join { requests } => {
                requests.iter().map(|(_, kind)| kind.as_str()).collect()
            }
        }
    }

    pub fn requests(&self) -> Vec<&Expr> {
        match self {
            Suspension::Await { kind, .. } if kind == "checkpoint" => Vec::new(),
            Suspension::Await { request, .. } => vec![request],
            Suspension::Join { requests } => requests.iter().map(|(request, _)| request).collect(),
        }
    }
}

/// The request function a builder chain starts with: `elicit::<T>("…").key("k")` → `elicit`.
pub fn request_call(expr: &Expr) -> Option<(String, Span)> {
    match expr {
        Expr::MethodCall(call) => request_call(&call.receiver),
        Expr::Paren(paren) => request_call(&paren.expr),
        Expr::Call(call) => match &*call.func {
            Expr::Path(path) if path.qself.is_none() => {
                let last = path.path.segments.last()?;
                let name = last.ident.to_string();
                REQUEST_FNS
                    .contains(&name.as_str())
                    .then(|| (name, last.ident.span()))
            }
            _ => None,
        },
        _ => None,
    }
}

/// Whether `expr` is a `join!(..)` invocation.
pub fn is_join(expr: &Expr) -> bool {
    matches!(expr, Expr::Macro(mac) if mac.mac.path.segments.last().is_some_and(|s| s.ident == "join"))
}

/// Classifies `expr` as a suspension point, if it is one.
pub fn classify(expr: &Expr) -> Option<Result<Suspension, syn::Error>> {
    match expr {
        Expr::Await(awaited) => {
            let (kind, _) = request_call(&awaited.base)?;
            Some(Ok(Suspension::Await {
                request: (*awaited.base).clone(),
                kind,
            }))
        }
        Expr::Macro(mac) if is_join(expr) => Some(parse_join(&mac.mac)),
        _ => None,
    }
}

fn parse_join(mac: &syn::Macro) -> Result<Suspension, syn::Error> {
    let items = mac.parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated)?;
    if items.len() < 2 {
        return Err(syn::Error::new_spanned(
            mac,
            "join! sends several requests in one round: give it two or more, e.g. \
             `join!(elicit::<String>(\"…\"), sample(\"…\"))`; a single request is just `.await`ed",
        ));
    }
    let mut requests = Vec::new();
    for item in items {
        // `.await` on a join! element is accepted and ignored: the round awaits them all.
        let request = match item {
            Expr::Await(awaited) => *awaited.base,
            other => other,
        };
        match request_call(&request) {
            Some((kind, span)) if kind == "checkpoint" => {
                return Err(syn::Error::new(
                    span,
                    "a checkpoint asks nothing, so it cannot be joined; await it on its own",
                ));
            }
            Some((kind, _)) => requests.push((request, kind)),
            None => {
                return Err(syn::Error::new(
                    request.span(),
                    "join! takes requests: `elicit(..)`, `elicit_url(..)`, `sample(..)` or \
                     `list_roots()`, each possibly with builder calls such as `.key(\"…\")`",
                ));
            }
        }
    }
    Ok(Suspension::Join { requests })
}
