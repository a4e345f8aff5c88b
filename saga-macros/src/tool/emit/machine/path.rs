//! The path from the function body down to a suspension, one block per level, with the
//! bindings each level brings in and whether it is entered through a loop: what the
//! continuation is built along, and what decides which locals are in scope at each
//! level.

use syn::{Block, Expr, Label, Stmt};

use crate::tool::ir::Binding;
use crate::tool::lower::places::Refs;
use crate::tool::lower::scope::pattern_bindings;
use crate::tool::lower::site_id;

/// One block on the path from the body to a suspension.
#[derive(Clone)]
pub(super) struct Level<'a> {
    pub(super) block: &'a Block,
    /// The statement on the path.
    pub(super) index: usize,
    /// Bindings made on entering the block (fn parameters, an arm's or `if let`'s pattern).
    pub(super) entry: Vec<Binding>,
    /// The entry bindings that borrow a place of the locals, by the statement that binds
    /// them again after a suspension (`let PAT = SCRUTINEE else { unreachable!() }`).
    pub(super) entry_again: Vec<(Vec<String>, Stmt)>,
    /// How that statement leads into the next level.
    pub(super) into: Option<Into<'a>>,
}

#[derive(Clone)]
pub(super) enum Into<'a> {
    Block(Option<Label>),
    Loop(&'a syn::ExprLoop),
}

/// The construct at the head of a statement.
pub(super) fn construct_of(stmt: &Stmt) -> Option<&Expr> {
    match stmt {
        Stmt::Local(local) => local.init.as_ref().map(|init| &*init.expr),
        Stmt::Expr(expr, _) => Some(expr),
        _ => None,
    }
}

pub(super) fn find<'a>(
    block: &'a Block,
    id: usize,
    entry: Entry,
    refs: &Refs,
) -> Option<Vec<Level<'a>>> {
    let (entry, entry_again) = entry;
    for (index, stmt) in block.stmts.iter().enumerate() {
        let Some(expr) = construct_of(stmt) else {
            continue;
        };
        if site_id(expr) == Some(id) {
            return Some(vec![Level {
                block,
                index,
                entry,
                entry_again,
                into: None,
            }]);
        }
        let here = |into: Into<'a>, mut rest: Vec<Level<'a>>| {
            rest.insert(
                0,
                Level {
                    block,
                    index,
                    entry: entry.clone(),
                    entry_again: entry_again.clone(),
                    into: Some(into),
                },
            );
            rest
        };
        match expr {
            Expr::If(expr_if) => {
                let mut bound = (Vec::new(), Vec::new());
                condition_bindings(&expr_if.cond, &mut bound, refs);
                if let Some(rest) = find(&expr_if.then_branch, id, bound, refs) {
                    return Some(here(Into::Block(None), rest));
                }
                if let Some(rest) = find_in_else(expr_if, id, refs) {
                    return Some(here(Into::Block(None), rest));
                }
            }
            Expr::Match(expr_match) => {
                for arm in &expr_match.arms {
                    if let Expr::Block(arm_block) = &*arm.body {
                        let mut bound = (Vec::new(), Vec::new());
                        // Alternatives under a guard: the guard may have chosen a later
                        // one, which matching the pattern again would not.
                        let guarded_or = arm.guard.is_some() && has_or(&arm.pat);
                        bind_pattern(&arm.pat, &expr_match.expr, &mut bound, refs, !guarded_or);
                        if let Some(rest) = find(&arm_block.block, id, bound, refs) {
                            return Some(here(Into::Block(None), rest));
                        }
                    }
                }
            }
            Expr::Loop(expr_loop) => {
                if let Some(rest) = find(&expr_loop.body, id, Entry::default(), refs) {
                    return Some(here(Into::Loop(expr_loop), rest));
                }
            }
            Expr::Block(expr_block) => {
                if let Some(rest) = find(&expr_block.block, id, Entry::default(), refs) {
                    return Some(here(Into::Block(expr_block.label.clone()), rest));
                }
            }
            Expr::Unsafe(expr_unsafe) => {
                if let Some(rest) = find(&expr_unsafe.block, id, Entry::default(), refs) {
                    return Some(here(Into::Block(None), rest));
                }
            }
            _ => {}
        }
    }
    None
}

/// The path into an `else` block, or through an `else if` chain: in the continuation the
/// whole `if` is replaced, whichever branch the suspension is in.
fn find_in_else<'a>(expr_if: &'a syn::ExprIf, id: usize, refs: &Refs) -> Option<Vec<Level<'a>>> {
    let (_, else_branch) = expr_if.else_branch.as_ref()?;
    match &**else_branch {
        Expr::Block(else_block) => find(&else_block.block, id, Entry::default(), refs),
        Expr::If(inner) => {
            let mut bound = (Vec::new(), Vec::new());
            condition_bindings(&inner.cond, &mut bound, refs);
            find(&inner.then_branch, id, bound, refs).or_else(|| find_in_else(inner, id, refs))
        }
        _ => None,
    }
}

/// The bindings made on entering a block, and those of them bound again by a statement.
pub(super) type Entry = (Vec<Binding>, Vec<(Vec<String>, Stmt)>);

/// The bindings of `pat` matched against `scrutinee`: bound again by matching again when
/// they borrow a place of the locals (see `places`), saved otherwise.
fn bind_pattern(pat: &syn::Pat, scrutinee: &Expr, out: &mut Entry, refs: &Refs, again: bool) {
    let mut names = Vec::new();
    pattern_bindings(pat, &mut |ident, mutable| {
        names.push(ident.to_string());
        out.0.push(Binding {
            ident: ident.clone(),
            mutable,
        })
    });
    if again && let Some(again) = refs.rebind_pattern(pat, scrutinee) {
        out.1.push((names, again));
    }
}

fn condition_bindings(cond: &Expr, out: &mut Entry, refs: &Refs) {
    match cond {
        Expr::Let(expr_let) => bind_pattern(&expr_let.pat, &expr_let.expr, out, refs, true),
        Expr::Binary(binary) => {
            condition_bindings(&binary.left, out, refs);
            condition_bindings(&binary.right, out, refs);
        }
        Expr::Paren(paren) => condition_bindings(&paren.expr, out, refs),
        _ => {}
    }
}

/// Whether a pattern has alternatives (`A(x) | B(x)`) anywhere.
fn has_or(pat: &syn::Pat) -> bool {
    struct Or(bool);
    impl<'ast> syn::visit::Visit<'ast> for Or {
        fn visit_pat_or(&mut self, _: &'ast syn::PatOr) {
            self.0 = true;
        }
    }
    let mut or = Or(false);
    syn::visit::Visit::visit_pat(&mut or, pat);
    or.0
}
