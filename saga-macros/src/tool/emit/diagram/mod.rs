//! The diagram of a saga: Mermaid `stateDiagram-v2` text with the start, every suspension
//! point (what it asks, its message as written, its pinned key), every `checkpoint()`,
//! every helper call, and the exits (the result, `?` errors, each `return`), joined by the
//! control flow between them with its conditions as written.
//!
//! The walk reads the function as written, so that conditions and messages read as the
//! author wrote them, and meets its suspensions in the order lowering numbered them
//! (`ir::Site`): Rust's evaluation order, an assigned value before its place, a
//! helper's arguments before the helper. Each suspension is then the node of its site,
//! named by the site's state variant (`AfterElicitTarget`, the name `state_names()` and
//! the log use). Should the two orders ever disagree, the diagram falls back to the
//! sites alone, in order, rather than name a point wrongly.
//!
//! Here, the diagram's start and that fallback. The walk over the code is `walk`, which
//! draws into `graph`; a suspension's node is worded by `request`; code is put on one line
//! by `text` and made safe for Mermaid by `escape`; `generated` is what the expansion
//! gains from the diagram.

mod escape;
pub mod generated;
mod graph;
mod request;
mod text;
mod walk;

use syn::{Block, Expr, ItemFn, Stmt};

use self::request::site_lines;
use self::text::{code, short};
use self::walk::Walker;
use crate::tool::ir::Site;
use crate::tool::lower::contains_suspension;
use crate::tool::parse::sig::Signature;

/// Whose diagram it is: the wording of its start.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    /// A `#[saga_tool]` (or prompt, or resource).
    Tool,
    /// A `#[saga_fn]`.
    Helper,
}

/// The Mermaid `stateDiagram-v2` text of the saga `item`, whose suspension points are
/// `sites` (as lowering found them) and whose arguments are `params`.
pub fn build(whose: Whose, item: &ItemFn, params: &[String], sites: &[Site]) -> String {
    let name = item.sig.ident.to_string();
    let name = name.trim_start_matches("r#");
    let start = match whose {
        Whose::Tool => format!("{name}({})", params.join(", ")),
        Whose::Helper => format!("#[saga_fn] {name}({})", params.join(", ")),
    };
    // The body as lowering saw it: an `effect(..).await` passes a checkpoint.
    let mut block = (*item.block).clone();
    crate::tool::lower::desugar::effects(&mut block);
    let mut walker = Walker::new(sites, &start);
    walker.block(&block);
    let tail = tail_text(&block);
    if walker.consistent && walker.next_site == sites.len() {
        walker.graph.finish(tail);
        walker.graph.render()
    } else {
        linear(sites, &start)
    }
}

/// The sites alone, in order: the diagram when the walk and lowering disagree.
fn linear(sites: &[Site], start: &str) -> String {
    let mut walker = Walker::new(sites, start);
    for site in sites {
        let node = walker.site_node(site, site_lines(&site.suspension, None));
        walker.graph.goto(node);
    }
    walker.graph.finish(None);
    let mut text = walker.graph.render();
    text.push_str("    %% control flow not shown: the sites in the order they were found\n");
    text
}

/// The text of the tail expression of the body, when it is a plain value.
fn tail_text(block: &Block) -> Option<String> {
    match block.stmts.last() {
        Some(Stmt::Expr(expr, None)) => match expr {
            Expr::If(_)
            | Expr::Match(_)
            | Expr::Loop(_)
            | Expr::While(_)
            | Expr::ForLoop(_)
            | Expr::Block(_)
            | Expr::Unsafe(_) => None,
            // The answer of a suspension is the result: its node says what it asks.
            other if contains_suspension(other) => None,
            other => Some(short(&code(other))),
        },
        _ => None,
    }
}

/// The arguments as the start node names them.
pub fn param_names(sig: &Signature) -> Vec<String> {
    sig.params
        .iter()
        .map(|param| param.ident.to_string().trim_start_matches("r#").to_owned())
        .collect()
}
