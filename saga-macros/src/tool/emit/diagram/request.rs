//! What a suspension's node says: what it asks (`elicit Target`, `sample`, a `join!`'s
//! requests), its message as written and its pinned key, read from the request's builder
//! chain. Apart from the walk because it reads one request, not the flow around it.

use syn::Expr;

use crate::tool::emit::diagram::text::{code, code_type, short};
use crate::tool::ir::{Args, RequestKind, Suspension};

/// What a sample's node adds: who answers is the server's choice at run time (its own
/// model, or the client's LLM; the runtime's `model` module).
const WHO_SAMPLES: &str = " (client or server model)";

/// The lines of a suspension's node: what it asks, its message as written, its key.
pub(super) fn site_lines(suspension: &Suspension, let_type: Option<String>) -> Vec<String> {
    match suspension {
        Suspension::Await { request, kind } => {
            let mut title = request_title(request, *kind, let_type);
            if kind.is_sample() {
                title.push_str(WHO_SAMPLES);
            }
            let mut lines = vec![title];
            lines.extend(request_details(request, *kind));
            lines.into_iter().map(|line| short(&line)).collect()
        }
        Suspension::Join { requests } => {
            let mut lines = vec![format!("join!: {} requests in one round", requests.len())];
            for (request, kind) in requests {
                let mut line = request_title(request, *kind, None);
                for detail in request_details(request, *kind) {
                    line.push(' ');
                    line.push_str(&detail);
                }
                lines.push(short(&line));
                if kind.is_sample() {
                    // Its own line: the request's line is cut at the node's width.
                    lines.push(format!("sample{WHO_SAMPLES}"));
                }
            }
            lines
        }
        Suspension::Call { call, name } => vec![
            short(&format!("{}.await", code(call))),
            short(&format!("helper {name}: see its own diagram")),
        ],
    }
}

/// A request's builder chain: the call that makes it, then its builder calls in order.
fn builder_chain(request: &Expr) -> Option<(&syn::ExprCall, Vec<&syn::ExprMethodCall>)> {
    let mut calls = Vec::new();
    let mut expr = request;
    loop {
        match expr {
            Expr::MethodCall(call) => {
                calls.push(call);
                expr = &call.receiver;
            }
            Expr::Paren(paren) => expr = &paren.expr,
            Expr::Call(call) => {
                calls.reverse();
                return Some((call, calls));
            }
            _ => return None,
        }
    }
}

/// `elicit Target`, `sample`, `checkpoint`, …
fn request_title(request: &Expr, kind: RequestKind, let_type: Option<String>) -> String {
    let function = kind.function();
    match kind.args() {
        _ if kind == RequestKind::JoinAll => format!("{function}, in one round"),
        Args::Message { typed: true } => {
            let turbofish = builder_chain(request).and_then(|(call, _)| match &*call.func {
                Expr::Path(path) => {
                    path.path
                        .segments
                        .last()
                        .and_then(|segment| match &segment.arguments {
                            syn::PathArguments::AngleBracketed(args) => {
                                args.args.iter().find_map(|arg| match arg {
                                    syn::GenericArgument::Type(ty) => Some(code_type(ty)),
                                    _ => None,
                                })
                            }
                            _ => None,
                        })
                }
                _ => None,
            });
            match turbofish.or(let_type) {
                Some(ty) => format!("{function} {ty}"),
                None => function.to_owned(),
            }
        }
        _ => function.to_owned(),
    }
}

/// The message (and a URL elicitation's URL), then `key …` when pinned and `.outcome()`
/// when declines are answers.
fn request_details(request: &Expr, kind: RequestKind) -> Vec<String> {
    let Some((call, builders)) = builder_chain(request) else {
        return Vec::new();
    };
    let args: Vec<&Expr> = call.args.iter().collect();
    let mut lines = Vec::new();
    match kind.args() {
        Args::UrlThenMessage => {
            if let Some(message) = args.get(1) {
                lines.push(code(message));
            }
            if let Some(url) = args.first() {
                lines.push(format!("url {}", code(url)));
            }
        }
        Args::None => {}
        Args::Message { .. } => {
            if let Some(message) = args.first() {
                lines.push(code(message));
            }
        }
    }
    for builder in builders {
        match builder.method.to_string().as_str() {
            "key" => {
                if let Some(key) = builder.args.first() {
                    lines.push(format!("key {}", code(key)));
                }
            }
            "outcome" => lines.push(".outcome()".to_owned()),
            _ => {}
        }
    }
    lines
}
