//! The locals a continuation reads, rebound at each level from the saved state, in the
//! scope they had: declared before the path and read by the continuation, they are saved
//! fields; overwritten before they are read, they are only declared; a `for` loop's item
//! borrowed from its collection is bound again by running its `let`. What a level reads
//! decides what its site saves, so this is where the saved sets come from.

use std::collections::BTreeSet;

use proc_macro2::Span;
use quote::{format_ident, quote};
use syn::{Block, Expr, Ident, Stmt};

use crate::tool::emit::machine::path::Level;
use crate::tool::ir::{Binding, Chosen, Rebound, Saved, Site};
use crate::tool::lower::places::Refs;
use crate::tool::lower::scope::{
    free_in_stmts, free_outside_again, pattern_bindings, read_before_written,
};

/// Prepends, to the code of `level`, the rebinding of the locals it reads that were
/// declared at this level before the path.
pub(super) fn restore(
    level: &Level<'_>,
    code: Vec<Stmt>,
    site_saved: &mut Vec<Saved>,
    call: bool,
    refs: &Refs,
    rebound: &mut Vec<Rebound>,
) -> Block {
    let (mut free, written) = read_before_written(&code);
    let visible = visible(level, refs);
    let (again, mut read_again) = bound_again(level, &visible, &free, refs);
    let checks = constant_checks(level, &again);
    read_again.extend(free_in_stmts(&checks));
    let again_code = again_stmts(level, &again, refs);
    record_rebound(level, (&again, &again_code), &visible, &code, refs, rebound);
    let again = again_code;
    // `again` runs first: what it reads is read before anything `code` overwrites.
    let written: BTreeSet<String> = written
        .into_iter()
        .filter(|name| !read_again.contains(name))
        .collect();
    free.extend(read_again);
    keep_roots(level, &visible, &mut free, refs);
    let mut prefix: Vec<Stmt> = Vec::new();
    // A local the continuation overwrites before reading is declared, not saved: `let x;`
    // (with the type it was declared with), assigned by the continuation.
    for (binding, _) in visible.iter().filter(|(b, _)| {
        let name = b.ident.to_string();
        written.contains(&name) && !free.contains(&name)
    }) {
        let local = &binding.ident;
        let mutability = binding
            .mutable
            .then(|| quote::quote_spanned!(binding.ident.span()=> mut));
        let ty = declared_type(level, local).map(|ty| quote!(: #ty));
        // At the local: rustc names in its borrow errors only a binding whose `let` is
        // the user's ("cannot borrow `names` …"); one at the attribute's span is "value".
        prefix.push(syn::parse_quote_spanned!(local.span()=> let #mutability #local #ty;));
    }
    prefix.extend(saved(level, visible, &free, call, site_saved, refs));
    prefix.extend(checks);
    prefix.extend(again);
    prefix.extend(code);
    Block {
        brace_token: level.block.brace_token,
        stmts: prefix,
    }
}

/// The bindings visible at the path's statement, the latest of each name, with how they
/// are bound again when they borrow a place of the locals (see `places`): by running
/// again the `let` that binds them (a `for` loop's item included, see `reborrow` in
/// `lower/for_loop.rs`), or the entry's pattern. Those are not saved.
fn visible(level: &Level<'_>, refs: &Refs) -> Vec<(Binding, Option<Again>)> {
    let mut visible: Vec<(Binding, Option<Again>)> = level
        .entry
        .iter()
        .cloned()
        .map(|b| {
            let name = b.ident.to_string();
            let again = level
                .entry_again
                .iter()
                .position(|(names, _)| names.contains(&name))
                .map(Again::Entry);
            (b, again)
        })
        .collect();
    for (index, stmt) in level.block.stmts[..level.index].iter().enumerate() {
        if let Stmt::Local(local) = stmt {
            let again = rebinds(local, refs).then_some(Again::Stmt(index));
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
    visible
}

/// What is bound again (what the code reads, and what that reads, to a fixed point), in
/// order, and the names the statements binding it again read.
fn bound_again(
    level: &Level<'_>,
    visible: &[(Binding, Option<Again>)],
    free: &BTreeSet<String>,
    refs: &Refs,
) -> (Vec<Again>, BTreeSet<String>) {
    // What is bound again may read what is bound again before it: to a fixed point.
    // The item of a recomputed loop the path is in, always: its new iterator must be
    // advanced to the saved position, and the item there checked, even when the
    // continuation does not read the item.
    let mut again: Vec<Again> = level.block.stmts[..level.index]
        .iter()
        .enumerate()
        .filter(|(_, stmt)| matches!(stmt, Stmt::Local(local) if is_live_item(local)))
        .map(|(index, _)| Again::Stmt(index))
        .collect();
    let mut read_again = BTreeSet::new();
    if !again.is_empty() {
        read_again = free_in_stmts(&again_stmts(level, &again, refs));
    }
    loop {
        let before = again.len();
        for (binding, how) in visible {
            let name = binding.ident.to_string();
            if let Some(how) = how
                && (free.contains(&name) || read_again.contains(&name))
                && !again.contains(how)
            {
                again.push(*how);
            }
        }
        if again.len() == before {
            break;
        }
        again.sort_unstable();
        read_again = free_in_stmts(&again_stmts(level, &again, refs));
    }
    (again, read_again)
}

/// Records each binding bound again, with whether the code reads it itself (its borrow
/// is then used at the suspension, see `Rebound::alive`).
fn record_rebound(
    level: &Level<'_>,
    (again, again_code): (&[Again], &[Stmt]),
    visible: &[(Binding, Option<Again>)],
    code: &[Stmt],
    refs: &Refs,
    rebound: &mut Vec<Rebound>,
) {
    // What the code reads itself, not only to find another borrow: those borrows are used
    // at the suspension (see `Rebound::alive`).
    let (direct, arguments) = if again.is_empty() {
        (BTreeSet::new(), Default::default())
    } else {
        (
            free_outside_again(code),
            crate::tool::lower::places::argument_reads(again_code),
        )
    };
    for (binding, how) in visible {
        let name = binding.ident.to_string();
        // Everything bound again is recorded (what a later one of them reads is bound, not
        // free, in their sequence).
        if let Some(how) = how
            && again.contains(how)
        {
            let stmt = again_stmts(level, &[*how], refs);
            let own_loop = name.starts_with("__walk")
                || matches!(*how, Again::Stmt(index)
                    if matches!(&level.block.stmts[index], Stmt::Local(local)
                        if is_item_at(local) || is_live_item(local)));
            // A value made again from the build (the tools a sample offers) is no place
            // found again: its identity is that it is restated, so that a build with other
            // descriptions still opens the token, and offers its own.
            let restated = matches!(*how, Again::Stmt(index)
                if matches!(&level.block.stmts[index], Stmt::Local(local)
                    if crate::tool::lower::places::restated_let(local)));
            let path = if restated {
                Some(format!("{name} restated"))
            } else {
                (!own_loop).then(|| quote!(#(#stmt)*).to_string())
            };
            rebound.push(Rebound {
                ident: binding.ident.clone(),
                path,
                restated,
                // A loop's collection always: its item may be a copy (`.copied()`, an
                // `enumerate` index), which holds no borrow of it.
                alive: direct.contains(&name)
                    || arguments.contains(&name)
                    || name.starts_with("__walk"),
            });
        }
    }
}

/// The `let`s that restore the saved locals the code reads (those not bound again); each
/// is recorded in `site_saved`.
fn saved(
    level: &Level<'_>,
    visible: Vec<(Binding, Option<Again>)>,
    free: &BTreeSet<String>,
    call: bool,
    site_saved: &mut Vec<Saved>,
    refs: &Refs,
) -> Vec<Stmt> {
    let mut prefix = Vec::new();
    let names: Vec<Ident> = visible
        .iter()
        .map(|(binding, _)| binding.ident.clone())
        .collect();
    let names: Vec<&Ident> = names.iter().collect();
    for (binding, _) in visible
        .into_iter()
        .filter(|(b, again)| again.is_none() && free.contains(&b.ident.to_string()))
    {
        let field = unique_field(&binding.ident, site_saved);
        let local = &binding.ident;
        let source = format_ident!("__saved_{}", field);
        let mutability = binding
            .mutable
            .then(|| quote::quote_spanned!(binding.ident.span()=> mut));
        let private = crate::shared::private_path();
        let chosen_here = declared_choice(level, local);
        // Read among its roots, which are known once the site's saved set is: the
        // placeholder is replaced then ([`among`]), at a call through the call's kind. It
        // names the locals kept for its borrows' sake, so that the levels around this one
        // keep theirs.
        let value = {
            let among = Ident::new(AMONG, source.span());
            let kept_names = match &chosen_here {
                Some(_) => Vec::new(),
                None => refs.kept_with(&local.to_string(), &names),
            };
            let kept = kept_names
                .into_iter()
                .map(|name| Ident::new(&name, local.span()));
            quote!(#among(#source #(, #kept)*))
        };
        // Not at a call: an ordinary future saves nothing, and a local kept across a
        // `#[saga_fn]` call is saved as it is (a reference chosen among constants is
        // refused there, as it was before such choices were kept).
        let chosen = declared_choice(level, local)
            .filter(|chosen| !call || matches!(chosen, Chosen::Literals(_)));
        let value = match &chosen {
            Some(Chosen::Literals(choices)) => {
                quote!(#private::Literal::pick(#value, &[#(#choices),*]))
            }
            // Each constant named again and bound to the local's written type (so that
            // it is fingerprinted as the kept value was, an array as the slice it
            // coerces to); the first whose value has the saved fingerprint.
            Some(Chosen::Constants(ty, choices)) => quote!('__saga_choice: {
                // One of the two is used, by autoref: the other is not.
                #[allow(unused_imports)]
                use #private::{ChoiceKindOf as _, NoChoiceKind as _};
                let __chosen: #private::ConstantChoice = #value;
                #({
                    let __candidate: #ty = #choices;
                    if __chosen.is((&&#private::ChoiceProbe(&__candidate)).choice_kind().fingerprint()) {
                        break '__saga_choice __candidate;
                    }
                })*
                __chosen.gone()
            }),
            None => value,
        };
        prefix.push(syn::parse_quote_spanned!(local.span()=> let #mutability #local = #value;));
        site_saved.push(Saved {
            ident: binding.ident.clone(),
            mutable: binding.mutable,
            field,
            chosen,
            sources: refs.sources(&binding.ident.to_string()),
            unseen: refs.unseen(&binding.ident.to_string()),
            text: refs.holds_text(&binding.ident.to_string()),
        });
    }
    prefix
}

/// The values a local of this level may hold, when it is a `&'static str` chosen among
/// literals (see `places::literal_choices`) or a reference chosen among constants
/// (`places::constant_choices`); entry bindings are never such.
fn declared_choice(level: &Level<'_>, ident: &Ident) -> Option<Chosen> {
    level.block.stmts[..level.index]
        .iter()
        .rev()
        .find_map(|stmt| match stmt {
            Stmt::Local(local) => {
                let mut binds = false;
                pattern_bindings(&local.pat, &mut |bound, _| binds |= bound == ident);
                binds.then(|| {
                    use crate::tool::lower::places::{constant_choices, literal_choices};
                    literal_choices(local).map(Chosen::Literals).or_else(|| {
                        constant_choices(local)
                            .map(|(ty, choices)| Chosen::Constants(Box::new(ty), choices))
                    })
                })
            }
            _ => None,
        })
        .flatten()
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

/// How a binding is bound again instead of saved: by the `let` at this index of its
/// level, or by the entry's pattern at this index. The entries come first, as they bind
/// first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Again {
    Entry(usize),
    Stmt(usize),
}

/// The checks of the `for` loops over constants at this level whose item is not bound
/// again (which checks it itself): every one the path is inside, so that a resumed loop
/// goes on only through the items it suspended among.
fn constant_checks(level: &Level<'_>, again: &[Again]) -> Vec<Stmt> {
    level.block.stmts[..level.index]
        .iter()
        .enumerate()
        .filter_map(|(index, stmt)| match stmt {
            Stmt::Local(local)
                if is_constant_item(local) && !again.contains(&Again::Stmt(index)) =>
            {
                crate::tool::lower::places::check_constant(local)
            }
            _ => None,
        })
        .collect()
}

/// The statements that bind `again` again, in order.
fn again_stmts(level: &Level<'_>, again: &[Again], refs: &Refs) -> Vec<Stmt> {
    again
        .iter()
        .filter_map(|how| match *how {
            Again::Entry(index) => level.entry_again.get(index).map(|(_, stmt)| stmt.clone()),
            Again::Stmt(index) => match &level.block.stmts[index] {
                Stmt::Local(local) if is_item_at(local) => {
                    Some(crate::tool::lower::places::again(local))
                }
                Stmt::Local(local) if is_constant_item(local) => {
                    Some(crate::tool::lower::places::again_constant(local))
                }
                Stmt::Local(local) if is_live(local) || is_pushed(local) => {
                    Some(crate::tool::lower::places::again_live(local))
                }
                Stmt::Local(local) if is_live_item(local) => {
                    Some(crate::tool::lower::places::again_live_item(local))
                }
                Stmt::Local(local) => refs.rebind_let(local),
                _ => None,
            },
        })
        .collect()
}

/// Whether `local` is bound again after a suspension rather than saved: a `for` loop's
/// item, or a borrow of a place of the locals.
fn rebinds(local: &syn::Local, refs: &Refs) -> bool {
    use crate::tool::lower::places::{binds_by_reference, binds_immutably};
    (is_item_at(local) && binds_by_reference(&local.pat))
        || (is_constant_item(local) && binds_immutably(&local.pat))
        || is_live(local)
        || is_pushed(local)
        || (is_live_item(local) && binds_immutably(&local.pat))
        || refs.rebinds_let(local)
}

/// Whether `local` is a `for` loop's `let Some(pat) = item_at(items, position) else …`.
fn is_item_at(local: &syn::Local) -> bool {
    initialised_by(local, "item_at")
}

/// Whether `local` is the item of a `for` loop over a constant by value, `let Some(pat) =
/// constant_item_at(position, CONSTANT) else …` (see `lower/for_loop.rs`).
fn is_constant_item(local: &syn::Local) -> bool {
    initialised_by(local, "constant_item_at")
}

/// Whether `local` is a recomputed `for` loop's iterator, `let mut __walkN =
/// live(EXPR);` (see `lower_live` in `lower/for_loop.rs`).
fn is_live(local: &syn::Local) -> bool {
    initialised_by(local, "live")
}

/// Whether `local` is a `Vec` of borrows pushed in a recomputed loop, made again from
/// the positions they were pushed at: `let mut v = pushed_again(…);` (or
/// `pushed_found`, see `lower/pushed.rs`).
fn is_pushed(local: &syn::Local) -> bool {
    initialised_by(local, "pushed_again") || initialised_by(local, "pushed_found")
}

/// Whether `local` is a recomputed `for` loop's item, `let Some(pat) =
/// live_item_at(position, …) else …`.
fn is_live_item(local: &syn::Local) -> bool {
    initialised_by(local, "live_item_at")
}

/// Whether `local`'s initialiser is a call of the runtime's function `name`.
fn initialised_by(local: &syn::Local, name: &str) -> bool {
    matches!(
        local.init.as_ref().map(|init| &*init.expr),
        Some(Expr::Call(call)) if matches!(&*call.func, Expr::Path(path)
            if crate::tool::lower::places::machine_call(&path.path) == Some(name))
    )
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

/// The placeholder a restored local is read with until the site's saved set is known:
/// `__saga_among(__saved_FIELD, ROOT, …)`.
const AMONG: &str = "__saga_among";

/// `cont`, the continuation of `site`, with each local read back among its roots (see
/// `Saved::roots`) in `site_saved`, the site's final saved set: `restore_among` when it
/// has some, `restore` otherwise, as the local is kept (`keep::fields`).
pub(super) fn among(cont: &mut Block, site: &Site, site_saved: &[Saved]) {
    struct Among<'a> {
        site: &'a Site,
        saved: &'a [Saved],
    }
    impl syn::visit_mut::VisitMut for Among<'_> {
        fn visit_expr_mut(&mut self, expr: &mut Expr) {
            if let Expr::Call(call) = expr
                && matches!(&*call.func, Expr::Path(path) if path.path.is_ident(AMONG))
                && let Some(Expr::Path(source)) = call.args.first()
                && let Some(source) = source.path.get_ident().cloned()
            {
                let private = crate::shared::private_path();
                let field = source.to_string();
                let field = field.strip_prefix("__saved_").unwrap_or(&field);
                let local = self.saved.iter().find(|s| s.field == field);
                let among = local.and_then(|s| {
                    crate::tool::emit::keep::roots_among(self.site, s, self.saved)
                        .map(|roots| (s, roots))
                });
                // At a call, through the call's kind: nothing is saved where an ordinary
                // future is awaited.
                let call = matches!(
                    self.site.suspension,
                    crate::tool::ir::Suspension::Call { .. }
                );
                *expr = match among {
                    Some((local, roots)) => {
                        let name = crate::tool::ir::written(&local.ident);
                        let kind = call.then(|| quote!(&#private::kind_of(__mark0)));
                        let roots = crate::tool::emit::keep::root_exprs(
                            local,
                            &roots,
                            proc_macro2::Span::call_site(),
                            kind,
                        );
                        let roots = quote!(&[#(#roots),*]);
                        if call {
                            syn::parse_quote!(#private::kind_of(__mark0).restore_among(
                                #source,
                                #roots,
                                #name,
                            ))
                        } else {
                            syn::parse_quote!(#private::restore_among(#source, #roots, #name))
                        }
                    }
                    _ if call => crate::tool::emit::call::restore(&source),
                    _ => syn::parse_quote!(#private::restore(#source)),
                };
                return;
            }
            syn::visit_mut::visit_expr_mut(self, expr);
        }
    }
    syn::visit_mut::VisitMut::visit_block_mut(
        &mut Among {
            site,
            saved: site_saved,
        },
        cont,
    );
}

/// Adds to `free`, the locals a level's code reads, those kept with them for their
/// borrows' sake (`Refs::kept_with`) that are visible here, not `mut`, and declared before
/// the local that may borrow them: such a local is saved as where its borrows point in
/// them, so they are saved too, though the continuation does not read them.
fn keep_roots(
    level: &Level<'_>,
    visible: &[(Binding, Option<Again>)],
    free: &mut BTreeSet<String>,
    refs: &Refs,
) {
    let position = |ident: &Ident| {
        let start = ident.span().start();
        (start.line, start.column)
    };
    let names: Vec<&Ident> = visible.iter().map(|(binding, _)| &binding.ident).collect();
    loop {
        let mut more = Vec::new();
        for (binding, again) in visible {
            let name = binding.ident.to_string();
            // A local chosen among literals or constants is taken back among them.
            if again.is_some()
                || !free.contains(&name)
                || declared_choice(level, &binding.ident).is_some()
            {
                continue;
            }
            for root in refs.kept_with(&name, &names) {
                let declared = visible
                    .iter()
                    .find(|(b, again)| again.is_none() && !b.mutable && b.ident == root);
                if let Some((root_binding, _)) = declared
                    && position(&root_binding.ident) < position(&binding.ident)
                    && !free.contains(&root)
                {
                    more.push(root);
                }
            }
        }
        if more.is_empty() {
            return;
        }
        free.extend(more);
    }
}
