//! Recognising the suspension points: `elicit(..).await`, `elicit_url(..).await`,
//! `sample(..).await`, `list_roots().await`, `checkpoint().await` (each possibly with
//! builder calls before `.await`), and `join!(..)` of requests.

use crate::tool::ir::{Args, RequestKind, Suspension};
use proc_macro2::Span;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Token};

/// What the macros know of a kind.
struct KindRow {
    kind: RequestKind,
    /// The prelude function that makes it.
    function: &'static str,
    /// Whether the runtime lets the tool state it again from its saved state (see
    /// `emit/restate.rs`): not when the runtime draws part of it (a URL elicitation's id).
    restatable: bool,
    /// Where its arguments say what it asks, for the diagram.
    args: Args,
}

impl RequestKind {
    const ALL: &[KindRow] = &[
        KindRow {
            kind: RequestKind::Elicit,
            function: "elicit",
            restatable: true,
            args: Args::Message { typed: true },
        },
        KindRow {
            kind: RequestKind::ElicitUrl,
            function: "elicit_url",
            restatable: false,
            args: Args::UrlThenMessage,
        },
        KindRow {
            kind: RequestKind::Sample,
            function: "sample",
            restatable: true,
            args: Args::Message { typed: false },
        },
        KindRow {
            kind: RequestKind::SampleMessages,
            function: "sample_messages",
            restatable: true,
            args: Args::None,
        },
        KindRow {
            kind: RequestKind::ListRoots,
            function: "list_roots",
            restatable: true,
            args: Args::None,
        },
        KindRow {
            kind: RequestKind::Checkpoint,
            function: "checkpoint",
            restatable: false,
            args: Args::None,
        },
        KindRow {
            kind: RequestKind::JoinAll,
            function: "join_all",
            restatable: false,
            args: Args::Message { typed: false },
        },
    ];

    fn row(self) -> Option<&'static KindRow> {
        Self::ALL.iter().find(|row| row.kind == self)
    }

    /// The kind made by the function `name`.
    pub fn from_fn(name: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .find(|row| row.function == name)
            .map(|row| row.kind)
    }

    /// The function that makes it: `elicit`, `sample`, …
    pub fn function(self) -> &'static str {
        self.row().map_or("", |row| row.function)
    }

    /// Whether it is a sample (the server's model may answer it).
    pub fn is_sample(self) -> bool {
        matches!(self, RequestKind::Sample | RequestKind::SampleMessages)
    }

    /// Whether the tool may state it again from its saved state.
    pub fn restatable(self) -> bool {
        self.row().is_some_and(|row| row.restatable)
    }

    /// How the diagram reads its arguments.
    pub fn args(self) -> Args {
        self.row().map_or(Args::None, |row| row.args)
    }
}

impl Suspension {
    /// Whether reaching it always ends the transition. A call may return at once.
    pub fn always_suspends(&self) -> bool {
        !matches!(self, Suspension::Call { .. })
    }

    pub fn is_call(&self) -> bool {
        matches!(self, Suspension::Call { .. })
    }

    pub fn is_checkpoint(&self) -> bool {
        matches!(
            self,
            Suspension::Await {
                kind: RequestKind::Checkpoint,
                ..
            }
        )
    }

    /// The kinds' functions (or the called function), for naming: `elicit`, `sample`, …
    pub fn kinds(&self) -> Vec<&str> {
        match self {
            Suspension::Await { kind, .. } => vec![kind.function()],
            Suspension::Join { requests } => {
                requests.iter().map(|(_, kind)| kind.function()).collect()
            }
            Suspension::Call { name, .. } => vec![name.as_str()],
        }
    }

    pub fn requests(&self) -> Vec<&Expr> {
        match self {
            Suspension::Await {
                kind: RequestKind::Checkpoint,
                ..
            } => Vec::new(),
            Suspension::Await { request, .. } => vec![request],
            Suspension::Join { requests } => requests.iter().map(|(request, _)| request).collect(),
            Suspension::Call { .. } => Vec::new(),
        }
    }
}

/// The request a builder chain starts with: `elicit::<T>("…").key("k")` → `Elicit`.
pub fn request_kind(expr: &Expr) -> Option<(RequestKind, Span)> {
    match expr {
        Expr::MethodCall(call) => request_kind(&call.receiver),
        Expr::Paren(paren) => request_kind(&paren.expr),
        // A `$request:expr` of a `macro_rules!`: its tokens in an invisible group.
        Expr::Group(group) => request_kind(&group.expr),
        Expr::Call(call) => match &*call.func {
            Expr::Path(path) if path.qself.is_none() && names_saga(&path.path) => {
                let last = path.path.segments.last()?;
                let kind = RequestKind::from_fn(&last.ident.to_string())?;
                Some((kind, last.ident.span()))
            }
            _ => None,
        },
        _ => None,
    }
}

/// The request function a builder chain starts with: `elicit::<T>("…").key("k")` → `elicit`.
pub fn request_call(expr: &Expr) -> Option<(&'static str, Span)> {
    request_kind(expr).map(|(kind, span)| (kind.function(), span))
}

/// Whether `expr` is a call of saga's `effect` (a bare name, or a path through
/// `saga_runtime`).
pub fn is_effect(expr: &Expr) -> bool {
    match expr {
        Expr::Paren(paren) => is_effect(&paren.expr),
        Expr::Group(group) => is_effect(&group.expr),
        Expr::Call(call) => matches!(&*call.func, Expr::Path(path)
            if path.qself.is_none()
                && path.path.segments.last().is_some_and(|last| last.ident == "effect")
                && (path.path.segments.len() == 1
                    || path.path.segments.first().is_some_and(|first| first.ident == "saga_runtime"))),
        _ => false,
    }
}

/// Whether `expr` is saga's `join!(..)` (not `tokio::join!` or `futures::join!`, which
/// join ordinary futures).
pub fn is_join(expr: &Expr) -> bool {
    matches!(expr, Expr::Macro(mac)
        if mac.mac.path.segments.last().is_some_and(|s| s.ident == "join")
            && names_saga(&mac.mac.path))
}

/// Whether `path` can name one of saga's requests or its `join!`: a bare name (as the
/// prelude brings them), or a path through `saga_runtime`. `db::sample(..)` is the
/// user's own function, and `tokio::join!` another crate's macro.
fn names_saga(path: &syn::Path) -> bool {
    path.segments.len() == 1
        || path
            .segments
            .first()
            .is_some_and(|first| first.ident == "saga_runtime")
}

/// Whether `path` names an item of a crate that cannot hold saga's requests or helpers
/// (`futures::future::join_all`, `tokio::join!`, `std::…`).
fn is_foreign(path: &syn::Path) -> bool {
    path.segments.len() > 1
        && path
            .segments
            .first()
            .is_some_and(|first| FOREIGN_CRATES.contains(&first.ident.to_string().as_str()))
}

/// Crates that cannot define a `#[saga_fn]`: a call into them is awaited as written.
const FOREIGN_CRATES: &[&str] = &[
    "std",
    "core",
    "alloc",
    "tokio",
    "futures",
    "reqwest",
    "async_std",
    "smol",
    "hyper",
    "sqlx",
    "rmcp",
    "tower",
    "axum",
];

/// `f(..)` or `path::to::f(..)` that may call a `#[saga_fn]`: its function's name.
pub fn helper_call(expr: &Expr) -> Option<String> {
    if let Expr::Group(group) = expr {
        return helper_call(&group.expr);
    }
    let Expr::Call(call) = expr else {
        return None;
    };
    let Expr::Path(path) = &*call.func else {
        return None;
    };
    if path.qself.is_some() || request_kind(expr).is_some() {
        return None;
    }
    if is_foreign(&path.path) {
        return None;
    }
    Some(path.path.segments.last()?.ident.to_string())
}

/// `expr` without the invisible groups a `macro_rules!` puts around a fragment it was
/// given (`$ask:expr`).
pub fn ungrouped(mut expr: &Expr) -> &Expr {
    while let Expr::Group(group) = expr {
        expr = &group.expr;
    }
    expr
}

/// Classifies `expr` as a suspension point, if it is one.
pub fn classify(expr: &Expr) -> Option<Result<Suspension, syn::Error>> {
    match expr {
        Expr::Await(awaited) => {
            // Saga's `effect` is no helper: awaited, it runs within the round (its
            // checkpoint, written after it, is the suspension).
            if is_effect(&awaited.base) {
                return None;
            }
            if let Some(name) = helper_call(&awaited.base) {
                return Some(Ok(Suspension::Call {
                    call: (*awaited.base).clone(),
                    name,
                }));
            }
            let (kind, _) = request_kind(&awaited.base)?;
            Some(Ok(Suspension::Await {
                request: (*awaited.base).clone(),
                kind,
            }))
        }
        Expr::Macro(mac) if is_join(expr) => Some(parse_join(&mac.mac)),
        // A whole suspension given as a `macro_rules!` fragment (`$ask:expr`).
        Expr::Group(group) => classify(&group.expr),
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
        match request_kind(&request) {
            Some((RequestKind::Checkpoint, span)) => {
                return Err(syn::Error::new(
                    span,
                    "a checkpoint asks nothing, so it cannot be joined; await it on its own",
                ));
            }
            Some((RequestKind::JoinAll, span)) => {
                return Err(syn::Error::new(
                    span,
                    "`join_all(..)` is a round of its own and cannot be in `join!`; await it \
                     before or after the `join!` (two rounds), or put the other requests in \
                     the `join_all` if they are of its kind",
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
