//! The locals a continuation reads, rebound at each level from the saved state, in the
//! scope they had: declared before the path and read by the continuation, they are saved
//! fields; overwritten before they are read, they are only declared; a `for` loop's item
//! borrowed from its collection is bound again by running its `let`. What a level reads
//! decides what its site saves, so this is where the saved sets come from.

use std::collections::BTreeSet;

use proc_macro2::Span;
use quote::{format_ident, quote};
use syn::{Block, Expr, Ident, Stmt};

use crate::tool::ir::{Binding, Saved};
use crate::tool::lower::machine::path::Level;
use crate::tool::lower::scope::{free_in_stmts, pattern_bindings, read_before_written};

/// Prepends, to the code of `level`, the rebinding of the locals it reads that were
/// declared at this level before the path.
pub(super) fn restore(
    level: &Level<'_>,
    code: Vec<Stmt>,
    site_saved: &mut Vec<Saved>,
    call: bool,
) -> Block {
    let (mut free, written) = read_before_written(&code);
    // The bindings visible at the path's statement, the latest of each name, with the
    // index of the `let` that binds them when it borrows the item of a `for` loop: those
    // are bound again by running that `let` (see `reborrow` in `lower/for_loop.rs`),
    // not saved.
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
            crate::tool::emit::call::restore(&source)
        } else {
            let private = crate::shared::private_path();
            quote!(#private::restore(#source))
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
