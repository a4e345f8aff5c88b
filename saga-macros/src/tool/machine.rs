//! The state machine: for each suspension point, the code that runs when its answer
//! arrives (its continuation), and the locals it must save.
//!
//! The continuation of a suspension is built from the inside out along the path from the
//! function body to it. At its own block: the answer, then the rest of the block. At each
//! enclosing level: the statement that held the inner construct, with that construct
//! replaced by the inner continuation, then the rest of that block. A loop on the path is
//! *peeled*: the rest of the current iteration runs once (its `break`/`continue` rewritten
//! to leave the peeled part), then the loop itself runs as written. Every copy keeps the
//! user's spans, so errors land on the user's code.
//!
//! At each level, the locals declared before the path and read by the continuation are
//! rebound from the saved state, in the same scope they had. Which locals are read depends
//! on what the other suspensions reachable from here save, so the sets are computed to a
//! fixed point.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, Ident, Label, Lifetime, Stmt};

use super::lower::{Site, site_id};
use super::rewrite::{Carrier, wrap_returns};
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

use super::local::{Binding, Saved};
use super::scope::{free_in_stmts, pattern_bindings, read_before_written};
use super::suspend::Suspension;

pub struct Machine {
    /// The body with every suspension ending the transition.
    pub start: Block,
    /// Per site: what it saves, and its continuation.
    pub resumes: Vec<(Vec<Saved>, Block)>,
    /// Per site: whether its continuation can state its requests again (see `restate`),
    /// so that its token keeps none of them.
    pub restated: Vec<bool>,
    /// How the step's code is enclosed (`rewrite::enclose`), and so how its exits return.
    pub carrier: Carrier,
}

/// `carrier`: how the step's code is enclosed (see `rewrite::enclose`), and so how its
/// exits return.
pub fn build(body: &Block, sites: &[Site], params: &[Binding], carrier: Carrier) -> Machine {
    let built = Built::default();
    let mut saved: Vec<Vec<Saved>> = vec![Vec::new(); sites.len()];
    let paths: Vec<Vec<Level<'_>>> = sites
        .iter()
        .map(|site| find(body, site.id, params.to_vec()).unwrap_or_default())
        .collect();
    // Each pass can only add locals; the sets are bounded by what is in scope. A site's
    // set depends mostly on the sites after it, so visiting them last-first and using
    // each new set at once settles straight-line code in one pass.
    let mut conts: Vec<Option<Block>> = vec![None; sites.len()];
    // A continuation reads the saved sets of its own site and of the sites it reaches;
    // it is built again only when one of those changed since it was last built (building
    // is most of the macro's time).
    let reads: Vec<Vec<usize>> = sites
        .iter()
        .zip(&paths)
        .map(|(site, path)| sites_reached(site.id, path))
        .collect();
    let mut versions: Vec<usize> = vec![0; sites.len()];
    let mut built_at: Vec<Option<Vec<usize>>> = vec![None; sites.len()];
    loop {
        let mut changed = false;
        for (index, (site, path)) in sites.iter().zip(&paths).enumerate().rev() {
            let inputs: Vec<usize> = reads[index].iter().map(|&j| versions[j]).collect();
            if built_at[index].as_ref() == Some(&inputs) {
                continue;
            }
            let exits = Exits {
                sites,
                saved: &saved,
                built: &built,
                carrier,
            };
            let (cont, site_saved) = continuation(site, path, &exits, false);
            built_at[index] = Some(inputs);
            if site_saved != saved[index] {
                saved[index] = site_saved;
                versions[index] += 1;
                changed = true;
            }
            conts[index] = Some(cont);
        }
        if !changed {
            let exits = Exits {
                sites,
                saved: &saved,
                built: &built,
                carrier,
            };
            let start = exits.block(body.clone());
            let mut restated = vec![false; sites.len()];
            for (index, (site, path)) in sites.iter().zip(&paths).enumerate() {
                if !super::restate::restatable(site, &saved[index]) {
                    continue;
                }
                // The guard reads only locals saved anyway, so the saved set stays as it
                // is; should it not, the site keeps its requests in the token instead.
                let (cont, site_saved) = continuation(site, path, &exits, true);
                if site_saved == saved[index] {
                    conts[index] = Some(cont);
                    restated[index] = true;
                }
            }
            let conts = conts
                .into_iter()
                .map(|cont| cont.unwrap_or_else(|| syn::parse_quote!({})));
            let start = with_borrow_check(start, sites, &saved);
            return Machine {
                carrier,
                start,
                resumes: saved.into_iter().zip(conts).collect(),
                restated,
            };
        }
    }
}

/// The start, followed by a check that no saved local is a borrow (`let first =
/// name.as_str();`, `let mode = "fast";`), which the macro cannot always see: the state
/// enum would refuse it too, but as a lifetime error ("implementation of `Deserialize` is
/// not general enough") at the attribute. The check never runs (the slot stays empty); it
/// is placed after the start's code, where rustc knows every local's type, and picks by
/// type (autoref: `&Probe<&T>` before `&&Probe<T>`) a marker that fails a trait bound with
/// the error at the local. A type error stops rustc before its lifetime checks, so the
/// other errors are not reported.
fn with_borrow_check(start: Block, sites: &[Site], saved: &[Vec<Saved>]) -> Block {
    let mut seen: Vec<String> = Vec::new();
    let mut arms = Vec::new();
    for (site, saved) in sites.iter().zip(saved) {
        let variant = &site.variant;
        let checked: Vec<&Saved> = saved
            .iter()
            .filter(|s| {
                let name = s.ident.to_string();
                !name.starts_with("__rest") && !site.for_items.contains(&name)
            })
            .filter(|s| {
                // The same local saved at several sites: checked once.
                let key = format!("{} {:?}", s.ident, s.ident.span());
                let first = !seen.contains(&key);
                seen.push(key);
                first
            })
            .collect();
        let checks: Vec<TokenStream> = checked
            .iter()
            .map(|s| {
                let field = &s.field;
                let span = s.ident.span();
                quote_spanned! {span=>
                    __saga_owned(#field, (&__SagaProbe::of(#field)).__saga_kind());
                }
            })
            .collect();
        if checks.is_empty() {
            continue;
        }
        let fields = checked.iter().map(|s| &s.field);
        arms.push(quote! {
            __State::#variant { #(#fields,)* .. } => { #(#checks)* }
        });
    }
    if arms.is_empty() {
        return start;
    }
    let private = private_path();
    syn::parse_quote! {{
        let __step = #start;
        if let ::core::option::Option::Some(__state) = &__slot {
            struct __SagaProbe<T: ?::core::marker::Sized>(::core::marker::PhantomData<T>);
            impl<T: ?::core::marker::Sized> __SagaProbe<T> {
                fn of(_: &T) -> Self {
                    __SagaProbe(::core::marker::PhantomData)
                }
            }
            struct __SagaBorrowed;
            struct __SagaOwned;
            trait __SagaViaBorrow {
                fn __saga_kind(&self) -> __SagaBorrowed {
                    __SagaBorrowed
                }
            }
            // Only borrows that deserialize for one lifetime (`&str`, `&[u8]`, `&Path`,
            // and options and vectors of them): what fails to deserialize at all
            // (`&String`) is reported at the local by `saved` already.
            impl<'a, T: ?::core::marker::Sized> __SagaViaBorrow for __SagaProbe<&'a T>
            where
                &'a T: #private::serde::Deserialize<'a>,
            {}
            impl<'a, T: ?::core::marker::Sized> __SagaViaBorrow for __SagaProbe<::core::option::Option<&'a T>>
            where
                &'a T: #private::serde::Deserialize<'a>,
            {}
            impl<'a, T: ?::core::marker::Sized> __SagaViaBorrow for __SagaProbe<::std::vec::Vec<&'a T>>
            where
                &'a T: #private::serde::Deserialize<'a>,
            {}
            trait __SagaViaOwned {
                fn __saga_kind(&self) -> __SagaOwned {
                    __SagaOwned
                }
            }
            impl<T: ?::core::marker::Sized> __SagaViaOwned for &__SagaProbe<T> {}
            #[diagnostic::on_unimplemented(
                message = "`{L}` is a borrow kept across a suspension point, but only owned values can be saved in the saga's state",
                label = "this borrow is used after a suspension",
                note = "the locals used after `elicit`, `sample`, `list_roots`, `checkpoint`, `join!` or a `#[saga_fn]` are saved in the requestState token and read back by a later request, where what they borrow is gone (and a `&'static str` cannot be read back either)",
                note = "hold an owned value instead (`.to_owned()`, `.to_string()`, `.clone()`; for a `&'static str` chosen among literals, `String::from(..)`, with `.as_str()` where a `&str` is needed; for an operand evaluated before a suspension in the same expression, `let trimmed = name.trim().to_owned();` before it), or compute it again after the suspension"
            )]
            trait __SagaOwnedLocal<L: ?::core::marker::Sized> {}
            #[diagnostic::do_not_recommend]
            impl<L: ?::core::marker::Sized> __SagaOwnedLocal<L> for __SagaOwned {}
            fn __saga_owned<L: ?::core::marker::Sized, K: __SagaOwnedLocal<L>>(_: &L, _: K) {}
            match __state {
                #(#arms)*
                #[allow(unreachable_patterns)]
                _ => {}
            }
        }
        __step
    }}
}

/// The sites whose saved sets the continuation of `site` may read: its own, and every
/// site in the code that follows it on its path (a loop's whole body, for a loop it is
/// in).
fn sites_reached(site: usize, path: &[Level<'_>]) -> Vec<usize> {
    struct Sites(Vec<usize>);
    impl<'ast> syn::visit::Visit<'ast> for Sites {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            match site_id(expr) {
                Some(id) => self.0.push(id),
                None => syn::visit::visit_expr(self, expr),
            }
        }
    }
    let mut found = Sites(vec![site]);
    for level in path {
        for stmt in &level.block.stmts[level.index..] {
            syn::visit::Visit::visit_stmt(&mut found, stmt);
        }
        if let Some(Into::Loop(expr_loop)) = &level.into {
            syn::visit::Visit::visit_expr_loop(&mut found, expr_loop);
        }
    }
    found.0.sort_unstable();
    found.0.dedup();
    found.0
}

/// One block on the path from the body to a suspension.
#[derive(Clone)]
struct Level<'a> {
    block: &'a Block,
    /// The statement on the path.
    index: usize,
    /// Bindings made on entering the block (fn parameters, an arm's or `if let`'s pattern).
    entry: Vec<Binding>,
    /// How that statement leads into the next level.
    into: Option<Into<'a>>,
}

#[derive(Clone)]
enum Into<'a> {
    Block(Option<Label>),
    Loop(&'a syn::ExprLoop),
}

/// The construct at the head of a statement.
fn construct_of(stmt: &Stmt) -> Option<&Expr> {
    match stmt {
        Stmt::Local(local) => local.init.as_ref().map(|init| &*init.expr),
        Stmt::Expr(expr, _) => Some(expr),
        _ => None,
    }
}

fn find<'a>(block: &'a Block, id: usize, entry: Vec<Binding>) -> Option<Vec<Level<'a>>> {
    for (index, stmt) in block.stmts.iter().enumerate() {
        let Some(expr) = construct_of(stmt) else {
            continue;
        };
        if site_id(expr) == Some(id) {
            return Some(vec![Level {
                block,
                index,
                entry,
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
                    into: Some(into),
                },
            );
            rest
        };
        match expr {
            Expr::If(expr_if) => {
                let mut bound = Vec::new();
                condition_bindings(&expr_if.cond, &mut bound);
                if let Some(rest) = find(&expr_if.then_branch, id, bound) {
                    return Some(here(Into::Block(None), rest));
                }
                if let Some(rest) = find_in_else(expr_if, id) {
                    return Some(here(Into::Block(None), rest));
                }
            }
            Expr::Match(expr_match) => {
                for arm in &expr_match.arms {
                    if let Expr::Block(arm_block) = &*arm.body {
                        let mut bound = Vec::new();
                        pattern_bindings(&arm.pat, &mut |ident, mutable| {
                            bound.push(Binding {
                                ident: ident.clone(),
                                mutable,
                            })
                        });
                        if let Some(rest) = find(&arm_block.block, id, bound) {
                            return Some(here(Into::Block(None), rest));
                        }
                    }
                }
            }
            Expr::Loop(expr_loop) => {
                if let Some(rest) = find(&expr_loop.body, id, Vec::new()) {
                    return Some(here(Into::Loop(expr_loop), rest));
                }
            }
            Expr::Block(expr_block) => {
                if let Some(rest) = find(&expr_block.block, id, Vec::new()) {
                    return Some(here(Into::Block(expr_block.label.clone()), rest));
                }
            }
            Expr::Unsafe(expr_unsafe) => {
                if let Some(rest) = find(&expr_unsafe.block, id, Vec::new()) {
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
fn find_in_else<'a>(expr_if: &'a syn::ExprIf, id: usize) -> Option<Vec<Level<'a>>> {
    let (_, else_branch) = expr_if.else_branch.as_ref()?;
    match &**else_branch {
        Expr::Block(else_block) => find(&else_block.block, id, Vec::new()),
        Expr::If(inner) => {
            let mut bound = Vec::new();
            condition_bindings(&inner.cond, &mut bound);
            find(&inner.then_branch, id, bound).or_else(|| find_in_else(inner, id))
        }
        _ => None,
    }
}

fn condition_bindings(cond: &Expr, out: &mut Vec<Binding>) {
    match cond {
        Expr::Let(expr_let) => pattern_bindings(&expr_let.pat, &mut |ident, mutable| {
            out.push(Binding {
                ident: ident.clone(),
                mutable,
            })
        }),
        Expr::Binary(binary) => {
            condition_bindings(&binary.left, out);
            condition_bindings(&binary.right, out);
        }
        Expr::Paren(paren) => condition_bindings(&paren.expr, out),
        _ => {}
    }
}

/// The continuation of `site` and the locals it reads from the saved state.
fn continuation(
    site: &Site,
    path: &[Level<'_>],
    exits: &Exits<'_>,
    restated: bool,
) -> (Block, Vec<Saved>) {
    let (sites, saved) = (exits.sites, exits.saved);
    let mut site_saved: Vec<Saved> = Vec::new();
    let mut inner: Option<(Block, bool)> = None;
    for (depth, level) in path.iter().enumerate().rev() {
        let mut code: Vec<Stmt> = Vec::new();
        // Whether the code so far always ends the transition (at another suspension): the
        // rest of the block is then unreachable from here, and left out. The initial run
        // keeps it, for type inference; here the types are already known.
        let mut diverges = false;
        match inner.take() {
            None => {
                if restated {
                    let mut guard = super::restate::guard(site);
                    wrap_returns(&mut guard, exits.carrier);
                    code.push(guard);
                }
                code.push(answer_stmt(site, &saved[site.id], exits.carrier));
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
                code.push(replace_construct(stmt, replaced));
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
        let block = restore(level, code, &mut site_saved, site.suspension.is_call());
        inner = Some((block, diverges));
    }
    let block = inner.map_or_else(|| syn::parse_quote!({}), |(block, _)| block);
    (block, site_saved)
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

/// Prepends, to the code of `level`, the rebinding of the locals it reads that were
/// declared at this level before the path.
fn restore(level: &Level<'_>, code: Vec<Stmt>, site_saved: &mut Vec<Saved>, call: bool) -> Block {
    let (mut free, written) = read_before_written(&code);
    // The bindings visible at the path's statement, the latest of each name, with the
    // index of the `let` that binds them when it borrows the item of a `for` loop: those
    // are bound again by running that `let` (see `lower::reborrow`), not saved.
    let mut visible: Vec<(Binding, Option<usize>)> =
        level.entry.iter().cloned().map(|b| (b, None)).collect();
    for (index, stmt) in level.block.stmts[..level.index].iter().enumerate() {
        if let Stmt::Local(local) = stmt {
            let again = is_item_at(local).then_some(index);
            pattern_bindings(&local.pat, &mut |ident, mutable| {
                visible.retain(|(b, _)| b.ident != *ident);
                visible.push((
                    Binding {
                        ident: ident.clone(),
                        mutable,
                    },
                    again,
                ));
            });
        }
    }
    let mut again: Vec<usize> = Vec::new();
    for (binding, index) in &visible {
        if let Some(index) = index
            && free.contains(&binding.ident.to_string())
            && !again.contains(index)
        {
            again.push(*index);
        }
    }
    again.sort_unstable();
    let again: Vec<Stmt> = again
        .into_iter()
        .filter_map(|index| match &level.block.stmts[index] {
            Stmt::Local(local) => Some(bind_item_again(local)),
            _ => None,
        })
        .collect();
    // `again` runs first: what it reads is read before anything `code` overwrites.
    let read_again = free_in_stmts(&again);
    let written: BTreeSet<String> = written
        .into_iter()
        .filter(|name| !read_again.contains(name))
        .collect();
    free.extend(read_again);
    let mut prefix: Vec<Stmt> = Vec::new();
    // A local the continuation overwrites before reading is declared, not saved: `let x;`
    // (with the type it was declared with), assigned by the continuation.
    for (binding, _) in visible.iter().filter(|(b, _)| {
        let name = b.ident.to_string();
        written.contains(&name) && !free.contains(&name)
    }) {
        let local = &binding.ident;
        let mutability = binding.mutable.then(|| quote!(mut));
        let ty = declared_type(level, local).map(|ty| quote!(: #ty));
        prefix.push(syn::parse_quote!(let #mutability #local #ty;));
    }
    for (binding, _) in visible
        .into_iter()
        .filter(|(b, again)| again.is_none() && free.contains(&b.ident.to_string()))
    {
        let field = unique_field(&binding.ident, site_saved);
        let local = &binding.ident;
        let source = format_ident!("__saved_{}", field);
        let mutability = binding.mutable.then(|| quote!(mut));
        let value = if call {
            super::call::restore(&source)
        } else {
            quote!(#source)
        };
        prefix.push(syn::parse_quote!(let #mutability #local = #value;));
        site_saved.push(Saved {
            ident: binding.ident.clone(),
            mutable: binding.mutable,
            field,
        });
    }
    prefix.extend(again);
    prefix.extend(code);
    Block {
        brace_token: level.block.brace_token,
        stmts: prefix,
    }
}

/// The type a local of this level was declared with, `let x: T …`, if written.
fn declared_type<'a>(level: &Level<'a>, ident: &Ident) -> Option<&'a syn::Type> {
    level.block.stmts[..level.index]
        .iter()
        .rev()
        .find_map(|stmt| match stmt {
            Stmt::Local(local) => match &local.pat {
                syn::Pat::Type(typed) => match &*typed.pat {
                    syn::Pat::Ident(pat) if pat.ident == *ident => Some(&*typed.ty),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
}

/// Whether `local` is a `for` loop's `let Some(pat) = item_at(items, position) else …`.
fn is_item_at(local: &syn::Local) -> bool {
    matches!(
        local.init.as_ref().map(|init| &*init.expr),
        Some(Expr::Call(call)) if matches!(&*call.func, Expr::Path(path)
            if path.path.segments.last().is_some_and(|segment| segment.ident == "item_at"))
    )
}

/// The item `let` of a `for` loop, run again after a suspension: the collection was
/// borrowed for the whole loop, so the item is there.
fn bind_item_again(local: &syn::Local) -> Stmt {
    let mut local = local.clone();
    if let Some(init) = &mut local.init
        && let Some((_, diverge)) = &mut init.diverge
    {
        **diverge = syn::parse_quote!({
            ::core::unreachable!("a `for` loop's collection changed while it was borrowed")
        });
    }
    Stmt::Local(local)
}

fn unique_field(ident: &Ident, taken: &[Saved]) -> Ident {
    let base = ident.to_string();
    let base = base.trim_start_matches("r#");
    let mut name = base.to_owned();
    let mut n = 1;
    while taken.iter().any(|saved| saved.field == name) {
        n += 1;
        name = format!("{base}_{n}");
    }
    Ident::new(&name, Span::call_site())
}

/// `let __aN = <the answer>;`
fn answer_stmt(site: &Site, saved: &[Saved], carrier: Carrier) -> Stmt {
    let answer = &site.answer;
    let value = match &site.suspension {
        Suspension::Call { .. } => super::call::resume(site, saved, carrier),
        _ => answer_expr(site, |i| format_ident!("__mark{}", i)),
    };
    syn::parse_quote_spanned!(site.span=> let #answer = #value;)
}

/// What the suspension evaluates to, read from `__answers` with the markers `mark(i)`.
pub fn answer_expr(site: &Site, mark: impl Fn(usize) -> Ident) -> TokenStream {
    let private = private_path();
    let span = site.span;
    match &site.suspension {
        s if s.is_checkpoint() => quote_spanned!(span=> ()),
        Suspension::Await { .. } => {
            let m = mark(0);
            quote_spanned!(span=> #private::answer(#m, &mut __answers, 0))
        }
        Suspension::Join { requests } => {
            let items = (0..requests.len()).map(|i| {
                let m = mark(i);
                quote_spanned!(span=> #private::answer(#m, &mut __answers, #i))
            });
            quote_spanned!(span=> ( #(#items),* ))
        }
        // What a call gives is the helper's value, read where it returns.
        Suspension::Call { .. } => quote_spanned!(span=> ()),
    }
}

pub use crate::shared::private_path;

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

/// The rest of a loop's current iteration, then the loop.
fn peel(rest: Block, label: Option<&Label>, full: Expr, site: usize, depth: usize) -> Expr {
    let peel_label = Lifetime::new(&format!("'__peel{site}_{depth}"), Span::call_site());
    let target = label.map(|label| label.name.ident.to_string());
    let mut detect = LoopExits {
        target: target.clone(),
        depth: 0,
        found_break: false,
        rewrite: None,
    };
    let mut probe = rest.clone();
    detect.visit_block_mut(&mut probe);
    let with_break = detect.found_break;
    let mut rewrite = LoopExits {
        target,
        depth: 0,
        found_break: false,
        rewrite: Some((peel_label.clone(), with_break)),
    };
    let mut rest = rest;
    rewrite.visit_block_mut(&mut rest);
    let mut stmts = rest.stmts;
    if let Some(Stmt::Expr(_, semi @ None)) = stmts.last_mut() {
        *semi = Some(Default::default());
    }
    let private = private_path();
    if with_break {
        syn::parse_quote! {{
            let __flow = #peel_label: { #(#stmts)* #private::Flow::Continue };
            match __flow {
                #private::Flow::Break(__value) => __value,
                #private::Flow::Continue => #full,
            }
        }}
    } else {
        syn::parse_quote! {{
            #peel_label: { #(#stmts)* }
            #full
        }}
    }
}

/// Finds, or rewrites to leave the peeled iteration, the `break`s and `continue`s that
/// target the peeled loop.
struct LoopExits {
    target: Option<String>,
    /// Loops entered inside the peeled part: unlabeled exits there are theirs.
    depth: usize,
    found_break: bool,
    rewrite: Option<(Lifetime, bool)>,
}

impl LoopExits {
    fn targets(&self, label: Option<&Lifetime>) -> bool {
        match label {
            None => self.depth == 0,
            Some(label) => self.target.as_deref() == Some(&label.ident.to_string()),
        }
    }
}

impl VisitMut for LoopExits {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        match expr {
            Expr::Closure(_) | Expr::Async(_) => {}
            Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_) => {
                self.depth += 1;
                visit_mut::visit_expr_mut(self, expr);
                self.depth -= 1;
            }
            Expr::Break(expr_break) if self.targets(expr_break.label.as_ref()) => {
                self.found_break = true;
                if let Some(value) = &mut expr_break.expr {
                    self.visit_expr_mut(value);
                }
                if let Some((peel, _)) = &self.rewrite {
                    let private = private_path();
                    let value = expr_break
                        .expr
                        .take()
                        .map_or_else(|| quote!(()), |v| quote!(#v));
                    *expr = syn::parse_quote!(break #peel (#private::Flow::Break(#value)));
                }
            }
            Expr::Continue(expr_continue) if self.targets(expr_continue.label.as_ref()) => {
                if let Some((peel, with_break)) = &self.rewrite {
                    let private = private_path();
                    *expr = if *with_break {
                        syn::parse_quote!(break #peel (#private::Flow::Continue))
                    } else {
                        syn::parse_quote!(break #peel)
                    };
                }
            }
            _ => visit_mut::visit_expr_mut(self, expr),
        }
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// The exits already built, by site, with the saved set each was built for: the same
/// site's exit appears in the start and in the continuation before it, and again at each
/// pass of `build`.
type Built = RefCell<HashMap<usize, (Vec<Saved>, Expr)>>;

/// Replaces every `let __aN = __saga_site!(N);` with the code that ends the transition
/// there, given the saved sets of one pass of `build`.
struct Exits<'a> {
    sites: &'a [Site],
    saved: &'a [Vec<Saved>],
    built: &'a Built,
    carrier: Carrier,
}

impl Exits<'_> {
    fn block(&self, mut block: Block) -> Block {
        Exitify(self).visit_block_mut(&mut block);
        block
    }

    fn stmt(&self, mut stmt: Stmt) -> Stmt {
        Exitify(self).visit_stmt_mut(&mut stmt);
        stmt
    }

    fn expr(&self, mut expr: Expr) -> Expr {
        Exitify(self).visit_expr_mut(&mut expr);
        expr
    }

    fn exit(&self, site: &Site) -> Expr {
        let saved = &self.saved[site.id];
        let mut built = self.built.borrow_mut();
        if let Some((_, exit)) = built
            .get(&site.id)
            .filter(|(built_for, _)| built_for == saved)
        {
            return exit.clone();
        }
        let exit = exit_expr(site, saved, self.carrier);
        built.insert(site.id, (saved.clone(), exit.clone()));
        exit
    }
}

struct Exitify<'a, 'b>(&'a Exits<'b>);

impl VisitMut for Exitify<'_, '_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if let Some(id) = site_id(expr) {
            if let Some(site) = self.0.sites.get(id) {
                *expr = self.0.exit(site);
            }
            return;
        }
        visit_mut::visit_expr_mut(self, expr);
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Ends the transition at `site`: builds its requests, saves the live locals, returns.
/// The answer that follows is never reached; it gives the suspension its type, so that
/// rustc infers the code after it exactly as in the function as written.
fn exit_expr(site: &Site, saved: &[Saved], carrier: Carrier) -> Expr {
    if let Suspension::Call { call, .. } = &site.suspension {
        return super::call::exit(site, call, saved, carrier);
    }
    let private = private_path();
    let span = site.span;
    let variant = &site.variant;
    let site_id = site.id;
    let requests = site.suspension.requests();
    let request_names: Vec<Ident> = (0..requests.len())
        .map(|i| format_ident!("__request{}", i))
        .collect();
    let mark_names: Vec<Ident> = (0..requests.len())
        .map(|i| format_ident!("__mark{}", i))
        .collect();
    let mark_fields: Vec<Ident> = (0..requests.len())
        .map(|i| format_ident!("__m{}", i))
        .collect();
    // A `for` loop's items are checked by `for_items`, with a message of their own.
    let checks = saved
        .iter()
        .filter(|s| {
            let name = s.ident.to_string();
            !name.starts_with("__rest") && !site.for_items.contains(&name)
        })
        .map(|s| {
            let ident = &s.ident;
            let private = crate::shared::private_path_at(ident.span());
            quote_spanned!(ident.span()=> #private::saved(&#ident);)
        });
    let fields = saved.iter().map(|s| {
        let field = &s.field;
        let ident = &s.ident;
        quote!(#field: #ident)
    });
    let answer = answer_expr(site, |i| format_ident!("__mark{}", i));
    let builds =
        requests
            .iter()
            .zip(&request_names)
            .zip(&mark_names)
            .map(|((request, name), mark)| {
                quote_spanned!(span=>
                    let #name = #request;
                    let #mark = #private::marker(&#name);
                )
            });
    // A checkpoint asks nothing, but its expression is still evaluated, as written: the
    // user's `checkpoint` import stays used, and a `checkpoint()` that is not saga's is a
    // type error on it.
    let checkpoint = match &site.suspension {
        Suspension::Await { request, .. } if site.suspension.is_checkpoint() => {
            Some(quote_spanned!(span=> let _: #private::Checkpoint = #request;))
        }
        _ => None,
    };
    let suspend = carrier.wrap(quote_spanned! {span=>
        #private::suspend(
            &mut __slot,
            __State::#variant { #(#fields,)* #(#mark_fields: #mark_names,)* },
            {
                let mut __round = ::std::vec::Vec::new();
                #(#private::requests(&mut __round, #request_names);)*
                #private::rebuilt(&mut __round, __SAGA_RESTATED[#site_id]);
                __round
            },
        )
    });
    let exprs: Expr = syn::parse_quote_spanned! {span=> {
        #checkpoint
        #(#builds)*
        #(#checks)*
        return #suspend;
        #answer
    }};
    exprs
}
