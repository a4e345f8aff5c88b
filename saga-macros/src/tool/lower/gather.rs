//! Borrows built up over statements: a `let mut` local whose value holds borrows made by
//! the statements after it (`picked.push(s)` in a loop over `shards.iter()`, `best =
//! Some(item)`), up to the next suspension, and only read after them. The `let` and those
//! statements are gathered into one `let` that is not `mut`, `let picked = { let mut
//! picked = …; …; picked };`, which `recompute` then treats as any `let` that holds a
//! borrow: run again after a restore, checked by its fingerprint. Nothing is saved of it
//! but that fingerprint, and what it reads is saved as before.
//!
//! Whether it holds borrows: its written type holds a reference, or what is put in it is a
//! borrow (a place borrowed, a local that holds one, the item of a loop over borrowed
//! data). Otherwise it is left as it is, saved by value: no tool that compiled before
//! changes its state's layout.

use std::collections::HashSet;

use syn::visit::Visit;
use syn::{Expr, Ident, Pat, Stmt, Type};

use crate::tool::lower::changes::{
    changes_something, compound_assign, has_site, place_root_name, stmt_has_site,
};
use crate::tool::lower::places::Refs;
use crate::tool::lower::scope::{free_in_expr, free_in_stmts};
use crate::tool::lower::suspends::contains_suspension;

/// What a gathering reads: the body's borrows and its locals declared `mut`.
pub struct Gather<'a> {
    pub refs: &'a Refs,
    pub mutable: &'a HashSet<String>,
}

impl Gather<'_> {
    /// A `let mut NAME = INIT;` (of `stmts`' head) whose value holds borrows built by the
    /// statements after it, up to the next suspension (`picked.push(s)` in a loop over
    /// `shards.iter()`, `best = Some(item)`), and only read after them: the `let` and those
    /// statements gathered into one `let NAME = { let mut NAME = INIT; …; NAME };`, with
    /// how many statements of `rest` it took. Then recomputed as any `let` that holds a
    /// borrow: what made it runs again after a restore, checked by its fingerprint. A
    /// change after the gathered statements would be a change to a `let` not `mut`, so
    /// none is gathered whose later statements may change it (a method not known to read
    /// only, `&mut`, an assignment): it keeps its rule.
    pub fn gather(&self, local: &syn::Local, rest: &[Stmt]) -> Option<(syn::Local, usize)> {
        let (ident, ty) = mutable_binding(&local.pat)?;
        let name = ident.to_string();
        let init = local.init.as_ref().filter(|init| init.diverge.is_none())?;
        if has_site(&init.expr) {
            return None;
        }
        let next_site = rest.iter().position(stmt_has_site)?;
        let mentions = |stmt: &Stmt| free_in_stmts(std::slice::from_ref(stmt)).contains(&name);
        let a_reference = ty.is_some_and(|ty| matches!(ty, Type::Reference(_)));
        // Up to the last statement that may change it: those after only read it (`if
        // picked.is_empty() { continue; }`), and stay where they are.
        let taken = rest[..next_site]
            .iter()
            .rposition(|stmt| !only_read(std::slice::from_ref(stmt), &name, a_reference))
            .map_or(0, |at| at + 1);
        let (run, after) = rest.split_at(taken);
        // A `break` or `continue` of a loop around them would leave the block they are
        // gathered in, which the continuation runs again where no such loop is; a
        // `return` or `?` would leave it before its value is checked.
        if run.iter().any(jumps_out) || run.iter().any(exits) {
            return None;
        }
        // Read at or after the suspension (else nothing need be kept), and only read.
        if !rest[next_site..].iter().any(mentions) || !only_read(after, &name, a_reference) {
            return None;
        }
        // Every statement gathered builds it (one that does not would run again after a
        // restore for nothing, or for its effects), but a `let` only they read.
        let read_after = free_in_stmts(after);
        let mut bound_in_run = HashSet::new();
        for stmt in run {
            if let Stmt::Local(local) = stmt {
                crate::tool::lower::scope::pattern_bindings(&local.pat, &mut |bound, _| {
                    bound_in_run.insert(bound.to_string());
                });
            } else if !mentions(stmt) {
                return None;
            }
        }
        if bound_in_run.iter().any(|bound| read_after.contains(bound)) {
            return None;
        }
        // A borrow of a temporary (`&Shard::default()`) lives only in its own `let`.
        if let Expr::Reference(reference) = &*init.expr
            && !self.refs.is_place(&reference.expr)
        {
            return None;
        }
        let holds_borrows = ty.is_some_and(holds_shared_reference)
            || self.built_with_borrows(&init.expr, run, &name);
        if !holds_borrows {
            return None;
        }
        let span = ident.span();
        let body: Expr = syn::parse_quote_spanned! {span=> { #local #(#run)* #ident } };
        let mut mutable = self.mutable.clone();
        mutable.remove(&name);
        if !recomputable_gathered(&body, &mutable) {
            return None;
        }
        let gathered: Stmt = match ty {
            Some(ty) => syn::parse_quote_spanned!(span=> let #ident: #ty = #body;),
            None => syn::parse_quote_spanned!(span=> let #ident = #body;),
        };
        let Stmt::Local(gathered) = gathered else {
            return None;
        };
        Some((gathered, taken))
    }

    /// Whether what `init` and `run` put in `name` is a borrow: a place borrowed, a local
    /// that holds one, an item of a loop of `run` over borrowed data, or an `Option` or
    /// tuple of those (`best = Some(item)`).
    fn built_with_borrows(&self, init: &Expr, run: &[Stmt], name: &str) -> bool {
        struct Written<'a> {
            name: &'a str,
            values: Vec<Expr>,
            items: HashSet<String>,
        }
        impl<'ast> Visit<'ast> for Written<'_> {
            fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
                if matches!(&*call.receiver, Expr::Path(path) if path.path.is_ident(self.name))
                    && matches!(
                        call.method.to_string().as_str(),
                        "push" | "push_back" | "push_front" | "insert" | "replace"
                    )
                    && let Some(value) = call.args.last()
                {
                    self.values.push(value.clone());
                }
                syn::visit::visit_expr_method_call(self, call);
            }
            fn visit_expr_assign(&mut self, assign: &'ast syn::ExprAssign) {
                if matches!(&*assign.left, Expr::Path(path) if path.path.is_ident(self.name)) {
                    self.values.push((*assign.right).clone());
                }
                syn::visit::visit_expr_assign(self, assign);
            }
            fn visit_expr_for_loop(&mut self, each: &'ast syn::ExprForLoop) {
                if let Some(enumerated) = walks_borrowed_items(&each.expr) {
                    let item = match (&*each.pat, enumerated) {
                        (Pat::Ident(item), false) => Some(&item.ident),
                        (Pat::Tuple(tuple), true) if tuple.elems.len() == 2 => {
                            match &tuple.elems[1] {
                                Pat::Ident(item) => Some(&item.ident),
                                _ => None,
                            }
                        }
                        _ => None,
                    };
                    self.items.extend(item.map(ToString::to_string));
                }
                syn::visit::visit_expr_for_loop(self, each);
            }
            fn visit_item(&mut self, _: &'ast syn::Item) {}
        }
        let mut written = Written {
            name,
            values: vec![init.clone()],
            items: HashSet::new(),
        };
        for stmt in run {
            written.visit_stmt(stmt);
        }
        written
            .values
            .iter()
            .any(|value| self.borrowish(value, &written.items))
    }

    fn borrowish(&self, value: &Expr, items: &HashSet<String>) -> bool {
        match value {
            Expr::Path(path) => path.path.get_ident().is_some_and(|ident| {
                let name = ident.to_string();
                items.contains(&name) || self.refs.borrow(&name) == Some(false)
            }),
            Expr::Reference(reference) => {
                reference.mutability.is_none() && self.refs.is_place(&reference.expr)
            }
            Expr::Call(call) => {
                matches!(&*call.func, Expr::Path(path) if path.path.is_ident("Some"))
                    && call.args.iter().any(|arg| self.borrowish(arg, items))
            }
            Expr::Tuple(tuple) => tuple.elems.iter().any(|elem| self.borrowish(elem, items)),
            Expr::Paren(paren) => self.borrowish(&paren.expr, items),
            _ => false,
        }
    }
}

/// Whether `ty` holds a reference or a lifetime, and no `&mut`.
pub fn holds_shared_reference(ty: &Type) -> bool {
    // Found, and found mutable: a `&mut` is never recomputed (a second one would alias).
    struct Reference(bool, bool);
    impl<'ast> Visit<'ast> for Reference {
        fn visit_type(&mut self, ty: &'ast Type) {
            if let Type::Reference(reference) = ty {
                self.0 = true;
                self.1 |= reference.mutability.is_some();
            }
            syn::visit::visit_type(self, ty);
        }
        fn visit_lifetime(&mut self, _: &'ast syn::Lifetime) {
            self.0 = true;
        }
    }
    let mut found = Reference(false, false);
    found.visit_type(ty);
    found.0 && !found.1
}

/// The name and written type of a `let mut NAME` or `let mut NAME: T` (no `ref`, no
/// subpattern).
pub fn mutable_binding(pat: &Pat) -> Option<(&Ident, Option<&Type>)> {
    let (pat, ty) = match pat {
        Pat::Type(typed) => (&*typed.pat, Some(&*typed.ty)),
        other => (other, None),
    };
    match pat {
        Pat::Ident(binding)
            if binding.mutability.is_some()
                && binding.by_ref.is_none()
                && binding.subpat.is_none() =>
        {
            Some((&binding.ident, ty))
        }
        _ => None,
    }
}

/// Iterator adapters that give the items they are given (some of them): a loop through
/// them gives the borrows its collection's iterator gives.
pub const KEEP_ITEMS: &[&str] = &[
    "filter",
    "skip",
    "take",
    "rev",
    "step_by",
    "skip_while",
    "take_while",
    "peekable",
    "fuse",
    "inspect",
];

/// Whether a `for` loop over `expr` gives borrows of the data it walks, as its items
/// (`Some(false)`) or beside an index (`Some(true)`, an `enumerate` last): `&v`,
/// `v.iter()`, `map.values()`, through adapters that keep the items.
pub fn walks_borrowed_items(expr: &Expr) -> Option<bool> {
    let mut at = expr;
    let mut enumerated = None;
    while let Expr::MethodCall(call) = at {
        let method = call.method.to_string();
        if method == "enumerate" && enumerated.is_none() {
            enumerated = Some(true);
        } else if !KEEP_ITEMS.contains(&method.as_str()) {
            let borrows = !method.ends_with("_mut")
                && crate::tool::lower::places::listed(
                    crate::tool::lower::places::LOOP_METHODS,
                    &method,
                    Some(true),
                );
            return borrows.then_some(enumerated.unwrap_or(false));
        }
        enumerated.get_or_insert(false);
        at = &call.receiver;
    }
    match at {
        Expr::Reference(reference) if reference.mutability.is_none() => {
            Some(enumerated.unwrap_or(false))
        }
        _ => None,
    }
}

/// Methods that only read their receiver (or consume it, as a `let` not `mut` may): what
/// a gathered local may still be called with after the statements that built it.
const READS: &[&str] = &[
    "len",
    "is_empty",
    "iter",
    "into_iter",
    "first",
    "last",
    "get",
    "contains",
    "join",
    "concat",
    "to_vec",
    "to_owned",
    "clone",
    "as_slice",
    "starts_with",
    "ends_with",
    "binary_search",
    "binary_search_by",
    "binary_search_by_key",
    "windows",
    "chunks",
    "split_first",
    "split_last",
    "is_some",
    "is_none",
    "is_some_and",
    "is_none_or",
    "unwrap",
    "unwrap_or",
    "unwrap_or_default",
    "unwrap_or_else",
    "expect",
    "copied",
    "cloned",
    "as_ref",
    "as_deref",
    "map",
    "map_or",
    "map_or_else",
    "and_then",
    "ok_or",
    "ok_or_else",
    "filter",
    "to_string",
    "as_str",
    "keys",
    "values",
    "contains_key",
    "eq",
    "ne",
    "cmp",
    "partial_cmp",
    "into",
    "max",
    "min",
    "abs",
    "to_lowercase",
    "to_uppercase",
    "chars",
    "bytes",
    "split",
    "trim",
    "trim_start",
    "trim_end",
    "lines",
    "split_whitespace",
    "saturating_sub",
    "saturating_add",
    "checked_sub",
    "checked_add",
    "pow",
    "round",
    "floor",
    "ceil",
    "range",
];

/// Whether `stmts` only read `name`: no `&mut` of it, no assignment to it, and no method
/// called on it but one of [`READS`] (any, on a plain reference, `a_reference`, which
/// cannot change what it points to).
pub fn only_read(stmts: &[Stmt], name: &str, a_reference: bool) -> bool {
    struct Reads<'a> {
        name: &'a str,
        a_reference: bool,
        changed: bool,
    }
    impl Reads<'_> {
        fn roots_here(&self, expr: &Expr) -> bool {
            place_root_name(expr).as_deref() == Some(self.name)
        }
    }
    impl<'ast> Visit<'ast> for Reads<'_> {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            match expr {
                // On it or a part of it (`picked[..].sort()`, `(picked).pop()`).
                Expr::MethodCall(call)
                    if !self.a_reference
                        && self.roots_here(&call.receiver)
                        && !READS.contains(&call.method.to_string().as_str()) =>
                {
                    self.changed = true
                }
                Expr::Reference(reference)
                    if reference.mutability.is_some() && self.roots_here(&reference.expr) =>
                {
                    self.changed = true
                }
                Expr::Assign(assign) if self.roots_here(&assign.left) => self.changed = true,
                Expr::Binary(binary)
                    if compound_assign(&binary.op) && self.roots_here(&binary.left) =>
                {
                    self.changed = true
                }
                _ => {}
            }
            syn::visit::visit_expr(self, expr);
        }
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            // A standard macro's arguments are expressions (`format!`, `println!`,
            // `vec!`): read as such. Any other macro that mentions it may expand to a
            // write (`keep!(picked, x)` to `picked.push(x)`): a change for all we know.
            if !mentions_in(mac.tokens.clone(), self.name) {
                return;
            }
            match crate::tool::parse::macro_args::std_args(mac) {
                Some(args) => args
                    .values()
                    .into_iter()
                    .for_each(|arg| self.visit_expr(arg)),
                None => self.changed = true,
            }
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut reads = Reads {
        name,
        a_reference,
        changed: false,
    };
    for stmt in stmts {
        reads.visit_stmt(stmt);
    }
    !reads.changed
}

/// [`recomputable`] for a gathered `let`'s block: a local declared `mut` may be read only
/// lent in place (`shards.iter()`, `&plan[0]`), as the collection its borrows point into,
/// which rustc keeps unchanged while they live (otherwise the fingerprint tells).
fn recomputable_gathered(body: &Expr, mutable: &HashSet<String>) -> bool {
    if contains_suspension(body) || has_site(body) || changes_something(body) || calls_outside(body)
    {
        return false;
    }
    let lent = only_lent(body);
    free_in_expr(body)
        .iter()
        .all(|name| !mutable.contains(name) || lent.contains(name))
}

/// Whether `body` calls a method on a local it does not bind that is not known to only
/// read (`log.push(..)`, `seen.insert(..)`, `counts.entry(k)`, `cell.set(..)`): run again
/// after a restore, it would do that again to the restored local.
fn calls_outside(body: &Expr) -> bool {
    let inner = crate::tool::lower::changes::bound_in_expr(body);
    struct Calls<'a> {
        inner: &'a HashSet<String>,
        found: bool,
    }
    impl<'ast> Visit<'ast> for Calls<'_> {
        fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
            let method = call.method.to_string();
            let reads = READS.contains(&method.as_str())
                || crate::tool::lower::places::listed(
                    crate::tool::lower::places::LOOP_METHODS,
                    &method,
                    Some(true),
                ) && !method.ends_with("_mut");
            if !reads
                && place_root_name(&call.receiver).is_some_and(|root| !self.inner.contains(&root))
            {
                self.found = true;
            }
            syn::visit::visit_expr_method_call(self, call);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut calls = Calls {
        inner: &inner,
        found: false,
    };
    calls.visit_expr(body);
    calls.found
}

/// Whether `stmt` holds a `return` or a `?` outside closures and `async` blocks.
fn exits(stmt: &Stmt) -> bool {
    struct Exits(bool);
    impl<'ast> Visit<'ast> for Exits {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            match expr {
                Expr::Return(_) | Expr::Try(_) => self.0 = true,
                Expr::Closure(_) | Expr::Async(_) => {}
                _ => syn::visit::visit_expr(self, expr),
            }
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut exits = Exits(false);
    exits.visit_stmt(stmt);
    exits.0
}

/// The locals every mention of which in `expr` is lent in place: a method's receiver
/// (not one that takes it, `into_…`, `drain`, nor `…_mut`), or borrowed with `&`.
fn only_lent(expr: &Expr) -> HashSet<String> {
    #[derive(Default)]
    struct Lent {
        lent: HashSet<String>,
        other: HashSet<String>,
    }
    impl<'ast> Visit<'ast> for Lent {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            let receiver = match expr {
                Expr::MethodCall(call) => {
                    let method = call.method.to_string();
                    (!method.starts_with("into_") && method != "drain" && !method.ends_with("_mut"))
                        .then_some(&*call.receiver)
                }
                Expr::Reference(reference) if reference.mutability.is_none() => {
                    Some(&*reference.expr)
                }
                _ => None,
            };
            if let Some(root) = receiver.and_then(place_root_name) {
                self.lent.insert(root);
                // The rest of the expression, without the lent path itself.
                if let Expr::MethodCall(call) = expr {
                    call.args.iter().for_each(|arg| self.visit_expr(arg));
                }
                return;
            }
            if let Expr::Path(path) = expr
                && let Some(ident) = path.path.get_ident()
            {
                self.other.insert(ident.to_string());
            }
            syn::visit::visit_expr(self, expr);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut lent = Lent::default();
    lent.visit_expr(expr);
    lent.lent.retain(|name| !lent.other.contains(name));
    lent.lent
}

/// Whether `stmt` holds a `break` or `continue` of a loop it is not in (or any labelled
/// one), outside closures and `async` blocks.
fn jumps_out(stmt: &Stmt) -> bool {
    struct Jumps {
        loops: usize,
        out: bool,
    }
    impl<'ast> Visit<'ast> for Jumps {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            match expr {
                Expr::Break(syn::ExprBreak { label, .. })
                | Expr::Continue(syn::ExprContinue { label, .. }) => {
                    self.out |= self.loops == 0 || label.is_some();
                    syn::visit::visit_expr(self, expr);
                }
                Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => {
                    self.loops += 1;
                    syn::visit::visit_expr(self, expr);
                    self.loops -= 1;
                }
                Expr::Closure(_) | Expr::Async(_) => {}
                _ => syn::visit::visit_expr(self, expr),
            }
        }
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            // A macro's tokens may hide a jump: assume the worst.
            fn jumps(tokens: proc_macro2::TokenStream) -> bool {
                tokens.into_iter().any(|token| match token {
                    proc_macro2::TokenTree::Ident(ident) => ident == "break" || ident == "continue",
                    proc_macro2::TokenTree::Group(group) => jumps(group.stream()),
                    _ => false,
                })
            }
            self.out |= jumps(mac.tokens.clone());
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut jumps = Jumps {
        loops: 0,
        out: false,
    };
    jumps.visit_stmt(stmt);
    jumps.out
}

/// Whether `tokens` name `name` anywhere.
fn mentions_in(tokens: proc_macro2::TokenStream, name: &str) -> bool {
    tokens.into_iter().any(|token| match token {
        proc_macro2::TokenTree::Ident(ident) => ident == name,
        proc_macro2::TokenTree::Group(group) => mentions_in(group.stream(), name),
        _ => false,
    })
}
