//! The continuation of one suspension, assembled from the inside out along its path. At
//! its own block: the answer, then the rest of the block. At each enclosing level: the
//! statement that held the inner construct, with that construct replaced by the inner
//! continuation, then the rest of that block (a loop on the path is peeled, see `peel`).
//! Every copy keeps the user's spans, so errors land on the user's code.

use syn::{Block, Expr, Stmt};

use crate::tool::emit::machine::exit::{Exits, answer_stmt};
use crate::tool::emit::machine::path::{Into, Level, construct_of};
use crate::tool::emit::machine::peel::peel;
use crate::tool::emit::machine::restore::restore;
use crate::tool::ir::{Rebound, Saved, Site};
use crate::tool::lower::rewrite::wrap_returns;
use crate::tool::lower::site_id;

/// The continuation of `site`, the locals it reads from the saved state, and the borrows
/// of places it binds again (see `places`).
pub(super) fn continuation(
    site: &Site,
    path: &[Level<'_>],
    exits: &Exits<'_>,
    restated: bool,
) -> (Block, Vec<Saved>, Vec<Rebound>) {
    let (sites, saved) = (exits.sites, exits.saved);
    let mut site_saved: Vec<Saved> = Vec::new();
    let mut rebound: Vec<Rebound> = Vec::new();
    let mut inner: Option<(Block, bool)> = None;
    for (depth, level) in path.iter().enumerate().rev() {
        let mut code: Vec<Stmt> = Vec::new();
        // Whether the code so far always ends the transition (at another suspension): the
        // rest of the block is then unreachable from here, and left out. The initial run
        // keeps it, for type inference; here the types are already known.
        let mut diverges = false;
        match inner.take() {
            None => {
                let guard = if restated {
                    Some(crate::tool::emit::restate::guard(site))
                } else if !site.suspension.is_call() && !site.suspension.is_checkpoint() {
                    Some(crate::tool::emit::restate::refusal(site))
                } else {
                    None
                };
                if let Some(mut guard) = guard {
                    wrap_returns(&mut guard, exits.carrier);
                    code.push(guard);
                }
                code.push(answer_stmt(
                    site,
                    &saved[site.id],
                    &exits.rebound[site.id],
                    exits.carrier,
                ));
            }
            Some((cont, inner_diverges)) => {
                let stmt = &level.block.stmts[level.index];
                let replaced = match &level.into {
                    Some(Into::Loop(expr_loop)) => {
                        let full = exits.expr(Expr::Loop((*expr_loop).clone()));
                        peel(cont, expr_loop.label.as_ref(), full, site.id, depth)
                    }
                    Some(Into::Block(label)) => {
                        // A labelled block can be left by `break 'label`.
                        diverges = inner_diverges && label.is_none();
                        Expr::Block(syn::ExprBlock {
                            attrs: Vec::new(),
                            label: label.clone(),
                            block: cont,
                        })
                    }
                    None => Expr::Block(syn::ExprBlock {
                        attrs: Vec::new(),
                        label: None,
                        block: cont,
                    }),
                };
                // A `let` whose initialiser always leaves (the `else` of a `let … else`
                // resumed in): its bindings are never read, and what follows is left out,
                // so nothing would give them a type; the initialiser alone is the statement.
                if diverges && matches!(stmt, Stmt::Local(_)) {
                    code.push(Stmt::Expr(replaced, Some(Default::default())));
                } else {
                    code.push(replace_construct(stmt, replaced));
                }
            }
        }
        if !diverges {
            for stmt in &level.block.stmts[level.index + 1..] {
                code.push(exits.stmt(stmt.clone()));
                let suspends_here = construct_of(stmt)
                    .and_then(site_id)
                    .and_then(|id| sites.get(id))
                    .is_some_and(|next| next.suspension.always_suspends());
                if suspends_here || always_exits(stmt) {
                    diverges = true;
                    break;
                }
            }
        }
        let block = restore(
            level,
            code,
            &mut site_saved,
            site.suspension.is_call(),
            exits.refs,
            &mut rebound,
        );
        inner = Some((block, diverges));
    }
    let block = inner.map_or_else(|| syn::parse_quote!({}), |(block, _)| block);
    (block, site_saved, rebound)
}

/// Whether a statement always leaves its block: `return`, `break` or `continue` as the
/// statement itself. What follows it is unreachable, and left out of a continuation: there
/// its locals' types could not be inferred (a `let … else` resumed in its `else`).
fn always_exits(stmt: &Stmt) -> bool {
    matches!(
        stmt,
        Stmt::Expr(Expr::Return(_) | Expr::Break(_) | Expr::Continue(_), _)
    )
}

fn replace_construct(stmt: &Stmt, with: Expr) -> Stmt {
    let mut stmt = stmt.clone();
    match &mut stmt {
        Stmt::Local(local) => {
            if let Some(init) = &mut local.init {
                *init.expr = with;
            }
        }
        Stmt::Expr(expr, _) => *expr = with,
        _ => {}
    }
    stmt
}
