//! Borrows recomputed after a restore: the one rule for a value that holds a borrow and
//! so cannot be saved. A `let` that is not `mut` and holds a borrow (its written type
//! holds a reference, or every value it can take is a borrow or a literal), or a `for`
//! loop's iterator over borrowed data, or a `let mut` whose borrows the statements after
//! it build before the next suspension (gathered into one `let` first, see `gather`), is
//! not saved: after a restore the expression that
//! made it runs again over the restored places, and what it gives is checked against the
//! fingerprint saved at the suspension (the runtime's `recompute`).
//!
//! What an expression may read to be recomputed: anything but a local declared `mut`,
//! except as the place it borrows (`v.iter()`, `&v`), which rustc keeps unchanged while the
//! borrow lives. No suspension, no `&mut`, no method that takes its receiver (`into_…`,
//! `drain`). Anything else keeps the rules it had: saved, or refused with advice.

use std::collections::{BTreeSet, HashSet};

use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, Ident, Pat, Stmt};

use crate::shared::private_path;
use crate::tool::ir::{Site, Suspension};
use crate::tool::lower::changes::{changes_something, has_site};
use crate::tool::lower::gather::{Gather, KEEP_ITEMS, holds_shared_reference};
use crate::tool::lower::places::{Refs, binds_immutably, constant_choices, literal_choices};
use crate::tool::lower::scope::free_in_expr;
use crate::tool::lower::suspends::contains_suspension;

/// The prefix of the fingerprints this pass keeps (`let mut __fpN: u64 = 0;`).
pub const FINGERPRINT: &str = "__fp";

/// The locals of `block` declared `mut`, with the parameters `mutable_params`.
pub fn mutable_locals(block: &Block, mutable_params: &[Ident]) -> HashSet<String> {
    struct Mutable(HashSet<String>);
    impl<'ast> Visit<'ast> for Mutable {
        fn visit_pat_ident(&mut self, pat_ident: &'ast syn::PatIdent) {
            if pat_ident.mutability.is_some() {
                self.0.insert(pat_ident.ident.to_string());
            }
            syn::visit::visit_pat_ident(self, pat_ident);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut found = Mutable(mutable_params.iter().map(ToString::to_string).collect());
    found.visit_block(block);
    found.0
}

/// Whether `expr` gives the same value when evaluated again over the same restored
/// places, as far as its code can tell (the fingerprint checks the rest): see the module.
pub fn recomputable(expr: &Expr, mutable: &HashSet<String>) -> bool {
    if contains_suspension(expr) || has_site(expr) || changes_something(expr) {
        return false;
    }
    let root = borrowed_root(expr);
    free_in_expr(expr)
        .iter()
        .all(|name| !mutable.contains(name) || root.as_deref() == Some(name.as_str()))
}

/// Whether a `for` loop over `expr` walks a new iterator of it after a restore: what it
/// reads is [`recomputable`], and a local declared `mut` only as the collection the
/// chain's first method borrows for the whole loop (`v.iter()`, `map.keys()`), so that
/// rustc refuses a change to it inside the loop. A method that makes an owned value
/// (`collect`, `clone`, `to_vec`, `to_owned`, `to_string`) is a temporary the loop as
/// written walks, which a `let` of the iterator could not hold: such a loop keeps its
/// items instead, as before.
pub fn walks_again(expr: &Expr, mutable: &HashSet<String>) -> bool {
    let mut methods = Vec::new();
    let mut root = expr;
    while let Expr::MethodCall(call) = root {
        methods.push(call.method.to_string());
        root = &call.receiver;
    }
    let owned = methods.iter().any(|method| {
        matches!(
            method.as_str(),
            "collect" | "clone" | "to_vec" | "to_owned" | "to_string" | "into_iter"
        )
    });
    let borrows_for_the_loop = methods.last().is_some_and(|first| {
        crate::tool::lower::places::listed(
            crate::tool::lower::places::LOOP_METHODS,
            first,
            Some(true),
        )
    });
    !owned
        && !methods.is_empty()
        && !matches!(root, Expr::Call(_) | Expr::MethodCall(_) | Expr::Macro(_))
        && recomputable(expr, mutable)
        && (borrows_for_the_loop
            || free_in_expr(expr)
                .iter()
                .all(|name| !mutable.contains(name)))
}

/// The local a method chain or a borrow starts from (`v` in `v.iter().filter(..)`,
/// `&v.items`), when it is borrowed there rather than moved.
fn borrowed_root(expr: &Expr) -> Option<String> {
    let mut at = expr;
    let mut borrowed = false;
    loop {
        match at {
            Expr::MethodCall(call) => {
                let method = call.method.to_string();
                if matches!(&*call.receiver, Expr::Path(_))
                    && (method.starts_with("into_") || method == "drain")
                {
                    return None;
                }
                borrowed = true;
                at = &call.receiver;
            }
            Expr::Reference(reference) => {
                borrowed = true;
                at = &reference.expr;
            }
            Expr::Field(field) => at = &field.base,
            Expr::Index(index) => at = &index.expr,
            Expr::Paren(paren) => at = &paren.expr,
            Expr::Group(group) => at = &group.expr,
            Expr::Path(path) if borrowed => return Some(path.path.get_ident()?.to_string()),
            _ => return None,
        }
    }
}

/// Rewrites each `let` of `body` that holds a borrow and is recomputed into one that
/// keeps its value's fingerprint: `let mut __fpN: u64 = 0; let PAT =
/// __private::recomputed(&mut __fpN, INIT);`. The machine binds it
/// again after a restore as any borrow of a place (`places::again` turns the call into
/// `recomputed_again`, which checks the fingerprint); a `let` never kept across a
/// suspension only pays for its fingerprint.
pub fn lets(body: &mut Block, mutable_params: &[Ident], sites: &[Site]) {
    let mutable = mutable_locals(body, mutable_params);
    let refs = Refs::of(body, mutable_params.iter().map(ToString::to_string));
    // What each site's requests (or call) read: the body holds only its marker.
    let site_reads = sites
        .iter()
        .map(|site| {
            let mut read = BTreeSet::new();
            for request in site.suspension.requests() {
                read.extend(free_in_expr(request));
            }
            if let Suspension::Call { call, .. } = &site.suspension {
                read.extend(free_in_expr(call));
            }
            read
        })
        .collect();
    let mut rewrite = Lets {
        mutable,
        refs,
        count: 0,
        recomputed: HashSet::new(),
        site_reads,
    };
    rewrite.visit_block_mut(body);
}

struct Lets {
    mutable: HashSet<String>,
    refs: Refs,
    count: usize,
    /// The locals this pass recomputes: a borrow, for a `let` that reads one.
    recomputed: HashSet<String>,
    /// Per site, what its requests read (see [`kept_across`]).
    site_reads: Vec<BTreeSet<String>>,
}

impl Lets {
    /// Pushes `local`, recomputed, to `block`: `let mut __fpN: u64 = 0; let PAT =
    /// __private::recomputed(&mut __fpN, INIT);`.
    fn fingerprint(&mut self, block: &mut Block, mut local: syn::Local) {
        self.count += 1;
        crate::tool::lower::scope::pattern_bindings(&local.pat, &mut |ident, _| {
            self.recomputed.insert(ident.to_string());
        });
        let span = local.pat.span();
        let seen = Ident::new(&format!("{FINGERPRINT}{}", self.count), span);
        let private = private_path();
        block.stmts.push(syn::parse_quote_spanned! {span=>
            let mut #seen: u64 = 0;
        });
        if let Some(init) = &mut local.init {
            let expr = &init.expr;
            *init.expr = syn::parse_quote_spanned! {expr.span()=>
                #private::recomputed(&mut #seen, #expr)
            };
        }
        block.stmts.push(Stmt::Local(local));
    }

    /// `expr` kept in a recomputed `let __keptN = EXPR;` of its own, pushed to `block`, and
    /// replaced by `__keptN`: a borrowing scrutinee (of a `let … else`, an `if let`, a
    /// `match`) whose pattern is then bound again over that local after a restore, as a
    /// pattern over any borrow of the locals is.
    fn keep_apart(&mut self, block: &mut Block, expr: &mut Expr) {
        self.count += 1;
        let span = expr.span();
        let kept = Ident::new(&format!("__kept{}", self.count), span);
        let taken = std::mem::replace(expr, syn::parse_quote_spanned!(span=> #kept));
        let kept_let: Stmt = syn::parse_quote_spanned!(span=> let #kept = #taken;);
        if let Stmt::Local(kept_let) = kept_let {
            self.fingerprint(block, kept_let);
        }
    }

    /// Whether `local` may be made again from what it reads rather than saved: its
    /// value a borrow of it, by a path, a reference, a field or an index of one, or the
    /// standard library's methods that keep a borrow (see [`Lets::yields_borrow`]).
    fn keeps_a_borrow(&self, local: &syn::Local) -> bool {
        fn of(lets: &Lets, expr: &Expr) -> bool {
            match expr {
                Expr::Path(_) | Expr::Reference(_) => true,
                Expr::Field(field) => of(lets, &field.base),
                Expr::Index(index) => of(lets, &index.expr),
                Expr::Paren(paren) => of(lets, &paren.expr),
                Expr::Try(each) => of(lets, &each.expr),
                Expr::MethodCall(call) => {
                    lets.yields_borrow(expr) || {
                        // As `yields_borrow` reads it, with the receiver taken as a borrow.
                        let method = call.method.to_string();
                        matches!(
                            method.as_str(),
                            "unwrap"
                                | "expect"
                                | "ok_or"
                                | "ok_or_else"
                                | "unwrap_or_default"
                                | "as_deref"
                                | "filter"
                                | "trim"
                                | "trim_start"
                                | "trim_end"
                                | "as_str"
                                | "get"
                                | "first"
                                | "last"
                        ) || (matches!(method.as_str(), "unwrap_or" | "or")
                            && call
                                .args
                                .first()
                                .is_some_and(|arg| is_str_literal(arg) || of(lets, arg)))
                            || (method == "map"
                                && call.args.first().is_some_and(borrowing_accessor))
                    } && of(lets, &call.receiver)
                }
                _ => false,
            }
        }
        local.init.as_ref().is_some_and(|init| of(self, &init.expr))
    }

    /// The scrutinee of an `if let` or a `match` (a statement) to keep in a recomputed
    /// `let` of its own: the user's method chain (or a tuple of them) that gives borrows
    /// the places rule cannot bind again, recomputable, whose bindings a suspension in
    /// the body keeps.
    fn kept_scrutinee<'e>(&self, expr: &'e mut Expr) -> Option<&'e mut Expr> {
        let reads = &self.site_reads;
        let rebound = |l: &syn::Local| self.keeps_a_borrow(l);
        let (scrutinee, kept) = match expr {
            Expr::If(each) => {
                let Expr::Let(condition) = &mut *each.cond else {
                    return None;
                };
                let kept = kept_across(&condition.pat, &each.then_branch.stmts, reads, &rebound);
                (&mut condition.expr, kept)
            }
            Expr::Match(each) => {
                let kept = each.arms.iter().any(|arm| {
                    let body = match &*arm.body {
                        Expr::Block(block) => block.block.stmts.clone(),
                        other => vec![Stmt::Expr(other.clone(), None)],
                    };
                    kept_across(&arm.pat, &body, reads, &rebound)
                });
                (&mut each.expr, kept)
            }
            _ => return None,
        };
        let chain = |expr: &Expr| matches!(expr, Expr::MethodCall(_)) && self.yields_borrow(expr);
        let wanted = match &**scrutinee {
            Expr::Tuple(tuple) => {
                tuple.elems.iter().any(&chain)
                    && tuple
                        .elems
                        .iter()
                        .all(|elem| chain(elem) || is_literal(elem) || self.borrow(elem))
            }
            other => chain(other),
        };
        (kept
            && wanted
            && self.refs.borrow_of(scrutinee).is_none()
            && recomputable(scrutinee, &self.mutable))
        .then_some(&mut **scrutinee)
    }

    /// Whether `local` holds a borrow that this pass recomputes (see the module).
    fn recomputes(&self, local: &syn::Local) -> bool {
        let Some(init) = &local.init else {
            return false;
        };
        init.diverge.is_none()
            && binds_immutably(&local.pat)
            && !matches!(pattern_of(&local.pat), Pat::Wild(_))
            // Borrows of places, literals and constants chosen: their own rules, which
            // save nothing or their choice (and keep their tokens' layouts).
            && !self.refs.rebinds_let(local)
            && literal_choices(local).is_none()
            && constant_choices(local).is_none()
            && (written_with_reference(&local.pat) || self.borrows_only(&init.expr))
            && !self.extends_a_temporary(&init.expr)
            && recomputable(&init.expr, &self.mutable)
    }

    /// Whether a value `expr` may take is a borrow of a temporary (`&names.join(", ")`,
    /// `(&v.len(), x)`), which only a `let`'s own initializer keeps alive: passed through
    /// a call it would be dropped at once, so such a `let` keeps its rule (own it).
    fn extends_a_temporary(&self, expr: &Expr) -> bool {
        let mut values = Vec::new();
        let all = crate::tool::lower::places::leaves_of(expr, &|_| true, &mut values);
        let temporary = |value: &Expr| matches!(value, Expr::Reference(reference) if !self.refs.is_place(&reference.expr));
        !all || values.iter().any(|value| match value {
            Expr::Tuple(tuple) => tuple.elems.iter().any(temporary),
            Expr::Array(array) => array.elems.iter().any(temporary),
            Expr::Struct(_) => true,
            other => temporary(other),
        })
    }

    /// Whether every value `expr` can take is a borrow, or a tuple of borrows and literals
    /// with one borrow at least (`(flight, "cancelled")` in a `match` over `&disruption`).
    fn borrows_only(&self, expr: &Expr) -> bool {
        let mut values = Vec::new();
        crate::tool::lower::places::leaves_of(expr, &|leaf| self.borrow_leaf(leaf), &mut values)
            && values.iter().any(|value| !is_literal(value))
    }

    fn borrow_leaf(&self, leaf: &Expr) -> bool {
        match leaf {
            Expr::Tuple(tuple) => {
                tuple
                    .elems
                    .iter()
                    .all(|elem| is_literal(elem) || self.borrow(elem))
                    && tuple.elems.iter().any(|elem| self.borrow(elem))
            }
            other => self.borrow(other),
        }
    }

    fn borrow(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Reference(reference) => {
                reference.mutability.is_none() && self.refs.is_place(&reference.expr)
            }
            Expr::Path(path) => path.path.get_ident().is_some_and(|ident| {
                let name = ident.to_string();
                self.refs.borrow(&name) == Some(false) || self.recomputed.contains(&name)
            }),
            Expr::Paren(paren) => self.borrow(&paren.expr),
            Expr::MethodCall(_) => self.yields_borrow(expr),
            // `items.iter().find(..).ok_or_else(..)?`: the borrow the `Ok` holds; the
            // same again after a restore, where it was found before.
            Expr::Try(each) => self.borrow(&each.expr),
            _ => false,
        }
    }

    /// Whether a method chain gives a borrow by what the standard library's methods give
    /// (the type not written): an item of an iterator over borrowed data
    /// (`items.iter().max_by_key(..)`, `text.lines().next()`), kept a borrow through
    /// `Option`'s methods (`unwrap_or("")`, `map(String::as_str)`), or a `str`'s part
    /// (`name.trim()`, `line.split_once('=')`) of a place or of such a borrow.
    fn yields_borrow(&self, expr: &Expr) -> bool {
        let Expr::MethodCall(call) = expr else {
            return self.borrow(expr) || self.refs.borrow_of(expr) == Some(false);
        };
        let receiver = &*call.receiver;
        let of_borrow = || self.yields_borrow(receiver);
        match call.method.to_string().as_str() {
            "find" | "max_by_key" | "min_by_key" | "max_by" | "min_by" | "max" | "min" | "last"
            | "next" | "next_back" | "nth" => {
                borrowed_items(receiver, &|root| {
                self.refs.is_place(root) || self.yields_borrow(root) || is_constant_path(root)
            })
                    // A slice's `last()`, as `first()` below.
                    || (call.method == "last" && (self.refs.is_place(receiver) || of_borrow()))
            }
            "unwrap" | "expect" | "unwrap_or_default" | "filter" | "ok_or" | "ok_or_else" => {
                of_borrow()
            }
            // Of an `Option<String>` place (`c.phone.as_deref()`), or of a borrow.
            "as_deref" => self.refs.is_place(receiver) || of_borrow(),
            // The default a borrow too, or a literal, or a tuple of those (`("",
            // path.as_str())` beside `rsplit_once`'s pair).
            "unwrap_or" | "or" => {
                let borrowed = |value: &Expr| is_str_literal(value) || self.yields_borrow(value);
                of_borrow()
                    && call.args.first().is_some_and(|default| match default {
                        Expr::Tuple(tuple) => tuple.elems.iter().all(borrowed),
                        other => borrowed(other),
                    })
            }
            "map" => of_borrow() && call.args.first().is_some_and(borrowing_accessor),
            "map_or" => {
                of_borrow()
                    && call.args.first().is_some_and(|default| {
                        is_str_literal(default) || self.yields_borrow(default)
                    })
                    && call.args.iter().nth(1).is_some_and(borrowing_accessor)
            }
            // An accessor whose key is computed (`zones.get(i as usize)`): recomputed
            // from what it reads, which `recomputable` checks.
            "get" | "first" | "get_key_value" | "first_key_value" | "last_key_value" => {
                self.refs.is_place(receiver) || of_borrow()
            }
            "trim" | "trim_start" | "trim_end" | "trim_matches" | "trim_start_matches"
            | "trim_end_matches" | "strip_prefix" | "strip_suffix" | "split_once"
            | "rsplit_once" | "as_str" | "as_bytes" => self.refs.is_place(receiver) || of_borrow(),
            _ => self.refs.borrow_of(expr) == Some(false),
        }
    }
}

/// Whether `expr` is an iterator over borrowed data whose root `root_ok` accepts: a
/// collection's or a `str`'s borrowing iterator (`iter`, `keys`, `values`, `lines`,
/// `split_whitespace`, `split`, …) through adapters that keep the items borrows.
fn borrowed_items(expr: &Expr, root_ok: &dyn Fn(&Expr) -> bool) -> bool {
    const STR_ITEMS: &[&str] = &["split", "rsplit", "split_terminator", "splitn", "rsplitn"];
    let mut at = expr;
    while let Expr::MethodCall(call) = at {
        let method = call.method.to_string();
        if KEEP_ITEMS.contains(&method.as_str()) || matches!(method.as_str(), "enumerate" | "chain")
        {
            at = &call.receiver;
            continue;
        }
        let borrows = !method.ends_with("_mut")
            && (STR_ITEMS.contains(&method.as_str())
                || crate::tool::lower::places::listed(
                    crate::tool::lower::places::LOOP_METHODS,
                    &method,
                    Some(true),
                ));
        return borrows && root_ok(&call.receiver);
    }
    false
}

/// A function that borrows a part of what it is given, by path (`String::as_str`).
fn borrowing_accessor(f: &Expr) -> bool {
    matches!(f, Expr::Path(path) if path.path.segments.last().is_some_and(|last| {
        matches!(last.ident.to_string().as_str(), "as_str" | "as_slice" | "as_path" | "trim")
    }))
}

/// A path that names a constant (`HARD`, `tables::ALL`): its last segment in capitals.
fn is_constant_path(expr: &Expr) -> bool {
    matches!(expr, Expr::Path(path) if path.qself.is_none() && path.path.segments.last().is_some_and(|last| {
        let name = last.ident.to_string();
        name.len() > 1 && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    }))
}

fn is_str_literal(expr: &Expr) -> bool {
    matches!(
        expr,
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(_),
            ..
        })
    )
}

impl VisitMut for Lets {
    fn visit_block_mut(&mut self, block: &mut Block) {
        let mut stmts: std::collections::VecDeque<Stmt> = std::mem::take(&mut block.stmts).into();
        while let Some(mut stmt) = stmts.pop_front() {
            // A `mut` local that holds borrows built over the statements after it: gathered
            // with them into one `let` (see `gather`), recomputed as any other.
            let gather = Gather {
                refs: &self.refs,
                mutable: &self.mutable,
            };
            if let Stmt::Local(local) = &stmt
                && let Some((gathered, taken)) = gather.gather(local, stmts.make_contiguous())
            {
                stmts.drain(..taken);
                // Not `mut` any more: a `let` after it may borrow it to be recomputed.
                if let Some((ident, _)) = crate::tool::lower::gather::mutable_binding(&local.pat) {
                    self.mutable.remove(&ident.to_string());
                }
                self.fingerprint(block, gathered);
                continue;
            }
            // A `Vec` of borrows pushed in a loop that suspends: the positions it was
            // pushed at kept instead (see `pushed`).
            if let Stmt::Local(local) = &stmt
                && crate::tool::lower::pushed::positions(
                    local,
                    &mut stmts,
                    &self.mutable,
                    self.count + 1,
                )
            {
                self.count += 1;
                continue;
            }
            // `let Some((k, v)) = m.iter().next_back() else { … };`: its borrow kept in a
            // `let` of its own, recomputed, and the pattern bound over that local, as a
            // pattern over any borrow of the locals is bound again after a restore.
            if let Stmt::Local(local) = &mut stmt
                && let Some(init) = &mut local.init
                && init.diverge.is_some()
                && !matches!(pattern_of(&local.pat), Pat::Ident(_) | Pat::Wild(_))
                // The user's method chain, not a loop's head the lowering wrote.
                && matches!(&*init.expr, Expr::MethodCall(_))
                && self.yields_borrow(&init.expr)
                && recomputable(&init.expr, &self.mutable)
                && kept_across(&local.pat, stmts.make_contiguous(), &self.site_reads, &|l| {
                    self.keeps_a_borrow(l)
                })
            {
                self.keep_apart(block, &mut init.expr);
            }
            // `let Some((k, v)) = line.split_once('=') else { <asks> };`, which the lowering
            // wrote as `let (k, v) = match SCRUTINEE { Some((k, v)) => (k, v), _ => … };`:
            // the scrutinee kept in a recomputed `let`, the bindings then bound again over it.
            if let Stmt::Local(local) = &stmt
                && let Some((_, scrutinee)) = crate::tool::lower::places::let_else_match(local)
                && matches!(scrutinee, Expr::MethodCall(_))
                && self.yields_borrow(scrutinee)
                && self.refs.borrow_of(scrutinee).is_none()
                && recomputable(scrutinee, &self.mutable)
                && kept_across(
                    &local.pat,
                    stmts.make_contiguous(),
                    &self.site_reads,
                    &|l| self.keeps_a_borrow(l),
                )
                && let Stmt::Local(local) = &mut stmt
                && let Some(init) = &mut local.init
                && let Expr::Match(each) = &mut *init.expr
            {
                self.keep_apart(block, &mut each.expr);
            }
            // `if let Some(d) = drafts.iter().find(..) { … }` and `match (a.iter().find(..),
            // b.as_deref()) { … }` whose bindings are kept across a suspension in the body:
            // the scrutinee kept in a `let` of its own, recomputed, as for `let … else`.
            if let Stmt::Expr(expr, _) = &mut stmt
                && let Some(scrutinee) = self.kept_scrutinee(expr)
            {
                self.keep_apart(block, scrutinee);
            }
            syn::visit_mut::visit_stmt_mut(self, &mut stmt);
            match stmt {
                Stmt::Local(local)
                    if self.recomputes(&local)
                        && kept_across(
                            &local.pat,
                            stmts.make_contiguous(),
                            &self.site_reads,
                            &|l| self.keeps_a_borrow(l),
                        ) =>
                {
                    self.fingerprint(block, local)
                }
                other => block.stmts.push(other),
            }
        }
    }

    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    fn visit_expr_async_mut(&mut self, _: &mut syn::ExprAsync) {}
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Whether a binding of `pat` is read at or after a suspension among `rest`, the
/// statements after its `let`, or by a `let` before it that `rebound` says is made again
/// from what it reads (a borrow of it): only then is it kept across one, and computed
/// again after a restore. Any other `let` stays as written (its type need not be
/// `Serialize`).
fn kept_across(
    pat: &Pat,
    rest: &[Stmt],
    site_reads: &[BTreeSet<String>],
    rebound: &dyn Fn(&syn::Local) -> bool,
) -> bool {
    let mut names = Vec::new();
    crate::tool::lower::scope::pattern_bindings(pat, &mut |ident, _| names.push(ident.to_string()));
    let Some(site) = rest
        .iter()
        .position(crate::tool::lower::changes::stmt_has_site)
    else {
        return false;
    };
    let mut read = crate::tool::lower::scope::free_in_stmts(&rest[site..]);
    // What the requests of the sites after the first read (`elicit(format!("{v}?"))` in a
    // later round): the body holds only their markers. The first's are read before it
    // suspends.
    let mut ids = site_ids(&rest[site..]);
    ids.sort_unstable();
    for id in ids.into_iter().skip(1) {
        read.extend(site_reads.get(id).into_iter().flatten().cloned());
    }
    // A `let` before the suspension whose binding is kept is run again, and reads what
    // it was made from (`let Some(b) = best else { … };`, `let shown = host.map(..)`):
    // to a fixed point.
    loop {
        let before = read.len();
        for stmt in rest[..site].iter().rev() {
            let Stmt::Local(local) = stmt else {
                continue;
            };
            let mut kept = false;
            crate::tool::lower::scope::pattern_bindings(&local.pat, &mut |ident, _| {
                kept |= read.contains(&ident.to_string());
            });
            if kept && rebound(local) {
                read.extend(crate::tool::lower::scope::free_in_stmts(
                    std::slice::from_ref(stmt),
                ));
            }
        }
        if read.len() == before {
            break;
        }
    }
    names.iter().any(|name| read.contains(name))
}

/// The ids of the sites marked in `stmts` (`__saga_site!(N)`).
fn site_ids(stmts: &[Stmt]) -> Vec<usize> {
    struct Ids(Vec<usize>);
    impl<'ast> Visit<'ast> for Ids {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            match crate::tool::lower::suspends::site_id(expr) {
                Some(id) => self.0.push(id),
                None => syn::visit::visit_expr(self, expr),
            }
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut ids = Ids(Vec::new());
    for stmt in stmts {
        ids.visit_stmt(stmt);
    }
    ids.0
}

/// The pattern of a `let`, under its written type.
fn pattern_of(pat: &Pat) -> &Pat {
    match pat {
        Pat::Type(typed) => &typed.pat,
        other => other,
    }
}

/// Whether `pat` is written with a type that holds a reference or a lifetime
/// (`Vec<&Shard>`, `&[&str]`, `Option<Cow<'a, str>>`).
fn written_with_reference(pat: &Pat) -> bool {
    let Pat::Type(typed) = pat else {
        return false;
    };
    holds_shared_reference(&typed.ty)
}

fn is_literal(expr: &Expr) -> bool {
    matches!(expr, Expr::Lit(_))
}
