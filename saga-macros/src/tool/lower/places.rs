//! Borrows of saved places. A binding that holds a borrow of a place rooted in the
//! function's locals (`let first = &v[0];`, a `match` arm's binding over `&old`, the item
//! of a `for` over `&items`, a binding of a pattern over such an item) cannot be saved,
//! but it need not be: the state saves the place's owner, and the continuation runs the
//! binding's `let` (or the arm's pattern, as a `let … else`) again, which borrows the same
//! place of the owner read back. What makes that exact:
//!
//! - the path is found again from values that cannot have changed: literals, locals not
//!   declared `mut` (the body is α-renamed, so a name is one binding), and temporaries
//!   holding what a `mut` local or an expression was when the borrow was made ([`hoist`]);
//! - the owner cannot have changed between the borrow and the suspension: each exit
//!   uses the borrows its continuation binds again (`keep_alive`), so rustc refuses a
//!   mutation of the owner there exactly as it refuses it in the function as written;
//! - the binding itself cannot have changed: a `mut` binding, or one bound by value under
//!   a `&` pattern, is saved as before.
//!
//! Apart from the machine because the lowering reads it too: a `for` over a local that
//! borrows a collection saves its position as a `for` over `&collection` does.

use std::collections::{HashMap, HashSet};

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, Ident, Pat, Stmt, Type};

use crate::tool::lower::scope::pattern_bindings;

/// Methods that return a borrow of (a part of) their receiver, found again from the same
/// receiver and arguments: accessors of the standard collections, `Option` and `str`.
const ACCESSORS: &[&str] = &[
    "as_ref",
    "as_mut",
    "as_deref",
    "as_deref_mut",
    "as_slice",
    "as_mut_slice",
    "as_str",
    "as_bytes",
    "as_path",
    "get",
    "get_mut",
    "get_key_value",
    "first",
    "first_mut",
    "last",
    "last_mut",
    "split_first",
    "split_last",
    "unwrap",
    "expect",
    // saga's `Turn::tool_uses` (a getter of a slice), or a getter of the user's so named.
    "tool_uses",
];

/// Methods a `for` loop borrows its collection through (`v.iter()`, `s.chars()`), each
/// with whether the items it gives are borrows of the collection (`iter` gives `&T`,
/// `chars` gives `char`). The loop saves its position in what it borrows (`lower::
/// for_loop`), and a binding of an item that is a borrow is one too (here).
pub const LOOP_METHODS: &[(&str, bool)] = &[
    ("iter", true),
    ("iter_mut", true),
    ("keys", true),
    ("values", true),
    ("values_mut", true),
    ("chars", false),
    ("char_indices", false),
    ("bytes", false),
    ("lines", true),
    ("split_whitespace", true),
    ("windows", true),
    ("chunks", true),
    ("chunks_exact", true),
    // saga's `Turn::tool_uses`: a getter of the model's tool uses, in order.
    ("tool_uses", true),
];

/// Adapters a `for` loop's borrowed items may go through, each with whether the items
/// stay borrows (`enumerate` adds an index beside them; `copied` makes values).
pub const LOOP_ADAPTERS: &[(&str, bool)] = &[
    ("enumerate", true),
    ("rev", true),
    ("skip", true),
    ("take", true),
    ("step_by", true),
    ("copied", false),
    ("cloned", false),
];

/// Whether `name` is in `list` with the flag `flag` (or with either, when `None`).
pub fn listed(list: &[(&str, bool)], name: &str, flag: Option<bool>) -> bool {
    list.iter()
        .any(|(each, borrows)| *each == name && flag.is_none_or(|flag| flag == *borrows))
}

/// The runtime's functions the expansion calls through a function of its own, so that
/// rustc's note on an unmet bound shows the user's `#[saga_tool]` rather than
/// saga-runtime's sources (`emit::keep::keep_shim` defines them): each with its shim.
pub const SHIMS: &[(&str, &str)] = &[
    ("borrowed", "saga_calls_this_again"),
    ("borrowed_items", "saga_calls_this_getter_again"),
];

/// The shim that stands for the runtime's `function` ([`SHIMS`]).
pub fn shim(function: &str) -> Option<&'static str> {
    SHIMS
        .iter()
        .find(|(runtime, _)| *runtime == function)
        .map(|(_, shim)| *shim)
}

/// Which of the machine's own functions `path` calls: the runtime's (`__private::…`), or
/// its shim in the expansion ([`SHIMS`]), named as the runtime's; never a function of the
/// user's with such a name.
pub fn machine_call(path: &syn::Path) -> Option<&'static str> {
    let mut segments = path.segments.iter().rev();
    let name = segments.next()?.ident.to_string();
    match segments.next() {
        Some(parent) if parent.ident == "__private" => {
            KNOWN.iter().find(|known| **known == name).copied()
        }
        Some(_) => None,
        None => SHIMS
            .iter()
            .find(|(_, shim)| *shim == name)
            .map(|(runtime, _)| *runtime),
    }
}

/// The runtime's functions [`machine_call`] knows by their `__private` path.
const KNOWN: &[&str] = &[
    "ordered",
    "ordered_mut",
    "zipped",
    "zipped_mut",
    "item_at",
    "constant_item_at",
    "constant_item_again",
    "borrowed",
    "borrowed_items",
    "recomputed",
    "recomputed_again",
    "live",
    "live_item_at",
    "live_item_again",
    "pushed",
    "pushed_again",
    "pushed_found",
];

/// The prefix of the temporaries [`hoist`] makes.
const HOISTED: &str = "__ix";

/// The bindings of a body that hold a borrow of a place of its locals, with whether the
/// borrow is mutable; and the locals declared `mut`, whose value may change after a
/// borrow that read it.
#[derive(Default, Clone)]
pub struct Refs {
    borrows: HashMap<String, bool>,
    /// What each local is made from (see `sources`): what a kept borrow may point into.
    sources: std::rc::Rc<crate::tool::lower::sources::Sources>,
    mutable: HashSet<String>,
    /// Takes any index or argument as stable: what a borrow would be once [`hoist`] has
    /// made them so.
    lenient: bool,
}

impl Refs {
    /// The borrows of `block`, whose parameters declared `mut` are `mutable_params`.
    pub fn of(block: &Block, mutable_params: impl IntoIterator<Item = String>) -> Refs {
        let mut collect = Collect(Refs {
            borrows: HashMap::new(),
            sources: std::rc::Rc::new(crate::tool::lower::sources::Sources::of(block)),
            mutable: mutable_params.into_iter().collect(),
            lenient: false,
        });
        collect.visit_block(block);
        collect.0
    }

    /// [`Refs::of`] as it will be once [`hoist`] has taken the indexes and keys that could
    /// change: what the lowering, which runs before it, reads.
    pub fn of_lenient(block: &Block) -> Refs {
        let mut collect = Collect(Refs {
            borrows: HashMap::new(),
            sources: std::rc::Rc::default(),
            mutable: HashSet::new(),
            lenient: true,
        });
        collect.visit_block(block);
        collect.0
    }

    /// The locals `name` is made from, directly or through others, when it may hold a
    /// borrow of them (see `sources`); none otherwise.
    pub fn sources(&self, name: &str) -> Vec<String> {
        self.sources.borrowed_from(name)
    }

    /// The locals kept with `name` at a suspension for its borrows' sake (see
    /// `Sources::kept_with`).
    /// When nothing `name` is made from is in sight (`Sources::unseen`), every local of
    /// `visible` not moved may be one.
    pub fn kept_with(&self, name: &str, visible: &[&Ident]) -> Vec<String> {
        let mut kept = if self.sources.unseen(name) {
            visible
                .iter()
                .map(ToString::to_string)
                .filter(|local| local != name && !self.sources.moved(local))
                .collect()
        } else {
            self.sources.kept_with(name)
        };
        // Not the expansion's own locals (an answer, a loop's position): only the user's
        // own hold what a borrow points into.
        kept.retain(|root| {
            !self.mutable.contains(root)
                && crate::tool::ir::may_be_root(&proc_macro2::Ident::new(
                    root,
                    proc_macro2::Span::call_site(),
                ))
        });
        kept
    }

    /// Whether what `name` is made from is out of sight (see `Sources::unseen`).
    pub fn unseen(&self, name: &str) -> bool {
        self.sources.unseen(name)
    }

    /// Whether `name`'s written type holds a `&str` (see `Sources::holds_text`).
    pub fn holds_text(&self, name: &str) -> bool {
        self.sources.holds_text(name)
    }

    /// Whether `name` holds a borrow: `Some(mutable)`.
    pub fn borrow(&self, name: &str) -> Option<bool> {
        self.borrows.get(name).copied()
    }

    /// Whether `expr` evaluates to a borrow of a place of the locals (or a tuple or array
    /// of such, or an accessor's result on one) that is found again by evaluating it
    /// again: `Some(mutable)`.
    pub fn borrow_of(&self, expr: &Expr) -> Option<bool> {
        match expr {
            Expr::Reference(reference) => self
                .is_place(&reference.expr)
                .then_some(reference.mutability.is_some()),
            Expr::Path(path) => path
                .path
                .get_ident()
                .and_then(|ident| self.borrow(&ident.to_string())),
            Expr::Tuple(tuple) if !tuple.elems.is_empty() => tuple
                .elems
                .iter()
                .map(|elem| self.borrow_of(elem))
                .try_fold(false, |any, each| Some(any || each?)),
            Expr::Array(array) if !array.elems.is_empty() => array
                .elems
                .iter()
                .map(|elem| self.borrow_of(elem))
                .try_fold(false, |any, each| Some(any || each?)),
            Expr::Paren(paren) => self.borrow_of(&paren.expr),
            Expr::Group(group) => self.borrow_of(&group.expr),
            Expr::Call(call) => {
                // The machine's own `ordered(&v)` and a `for` loop's `item_at(..)`.
                let Expr::Path(path) = &*call.func else {
                    return None;
                };
                match machine_call(&path.path)? {
                    // An accessor's call checked to give a borrow (`checked_accessors`).
                    "borrowed" | "borrowed_items" => self.borrow_of(call.args.first()?),
                    // Of a borrow found again as any other (`&plan[day]` with `mut day`
                    // is taken when the loop begins, by `hoist`).
                    name @ ("ordered" | "ordered_mut" | "zipped" | "zipped_mut") => {
                        self.borrow_of(call.args.first()?)?;
                        Some(name.ends_with("_mut"))
                    }
                    // A `let` recomputed after a restore (`lower::recompute`): bound again
                    // by running it, checked by its fingerprint.
                    "recomputed" | "recomputed_again" => Some(false),
                    "item_at" => {
                        let mut root = call.args.iter().nth(1)?;
                        while let Expr::MethodCall(inner) = root {
                            root = &inner.receiver;
                        }
                        self.borrow_of(root)
                    }
                    _ => None,
                }
            }
            Expr::MethodCall(call) => {
                let method = call.method.to_string();
                // `get()` without a key is a value's getter (`Cell::get`, `NonZeroU32::get`).
                if (method == "get" && call.args.is_empty())
                    || !ACCESSORS.contains(&method.as_str())
                    || !call.args.iter().all(|arg| self.is_stable(arg))
                {
                    return None;
                }
                // `unwrap`/`expect` give a borrow only of an `Option` of one: of an owned
                // `Option` they move its value out.
                let receiver = match method.as_str() {
                    "unwrap" | "expect" => self.borrow_of(&call.receiver)?,
                    _ => self
                        .borrow_of(&call.receiver)
                        .or_else(|| self.is_place(&call.receiver).then_some(false))?,
                };
                Some(receiver || method.ends_with("_mut") || method == "as_mut")
            }
            _ => None,
        }
    }

    /// A place of the locals, found again from values that cannot have changed.
    pub fn is_place(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Path(path) => path.qself.is_none() && path.path.get_ident().is_some(),
            Expr::Field(field) => {
                self.is_place(&field.base) || self.borrow_of(&field.base).is_some()
            }
            Expr::Index(index) => {
                (self.is_place(&index.expr) || self.borrow_of(&index.expr).is_some())
                    && self.is_stable(&index.index)
            }
            Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => {
                self.is_place(&unary.expr) || self.borrow_of(&unary.expr).is_some()
            }
            Expr::Paren(paren) => self.is_place(&paren.expr),
            Expr::Group(group) => self.is_place(&group.expr),
            _ => false,
        }
    }

    /// A value that is the same when evaluated again later: a literal, a local not
    /// declared `mut`, a temporary of [`hoist`], a borrow of a literal or of such a
    /// temporary, a range of those.
    fn is_stable(&self, expr: &Expr) -> bool {
        if self.lenient {
            return true;
        }
        match expr {
            Expr::Lit(_) => true,
            Expr::Path(path) => path
                .path
                .get_ident()
                .is_some_and(|ident| !self.mutable.contains(&ident.to_string())),
            // A borrowed key: of a literal, of a temporary of [`hoist`], or of a local that
            // is itself a borrow (used at the suspension, see `argument_reads`). A key
            // owned by a local is copied when borrowed: it may be moved after the borrow
            // (`bought.push(sku)` after `prices.get(&sku)`), which does not end a borrow
            // of `prices`. A part of a local (`&*name`, `&name[..]`) is read again from it
            // when that local is not `mut`.
            Expr::Reference(reference) => {
                reference.mutability.is_none()
                    && match &*reference.expr {
                        Expr::Lit(_) => true,
                        Expr::Path(path) => path.path.get_ident().is_some_and(|ident| {
                            let name = ident.to_string();
                            name.starts_with(HOISTED)
                                || (self.borrows.contains_key(&name)
                                    && !self.mutable.contains(&name))
                        }),
                        inner => {
                            self.is_place(inner)
                                && place_root(inner)
                                    .is_some_and(|root| !self.mutable.contains(&root.to_string()))
                        }
                    }
            }
            Expr::Range(range) => {
                range
                    .start
                    .as_deref()
                    .is_none_or(|start| self.is_stable(start))
                    && range.end.as_deref().is_none_or(|end| self.is_stable(end))
            }
            Expr::Paren(paren) => self.is_stable(&paren.expr),
            Expr::Group(group) => self.is_stable(&group.expr),
            _ => false,
        }
    }

    /// `local` again, to run after a suspension, when it binds only borrows of a place
    /// (its `else`, never taken then, is `unreachable!`).
    pub fn rebind_let(&self, local: &syn::Local) -> Option<Stmt> {
        if let Some((pat, scrutinee)) = let_else_match(local) {
            return self.rebind_pattern(pat, scrutinee);
        }
        self.rebinds_let(local).then(|| again(local))
    }

    /// Whether [`Refs::rebind_let`] binds `local` again (without making the statement):
    /// a borrow of a place, or a value the build restates ([`restated_let`]).
    pub fn rebinds_let(&self, local: &syn::Local) -> bool {
        self.let_borrow(local).is_some() || restated_let(local) || self.closure_let(local)
    }

    /// Whether `local` binds a closure, not `mut` nor `move` (`let double = |x: u32| x *
    /// 2;`): it cannot be saved, and need not be: the continuation runs its `let` again,
    /// which captures the restored locals. Exact because what it borrows cannot have
    /// changed since: rustc refuses the change while the closure lives, as in the
    /// function as written.
    pub fn closure_let(&self, local: &syn::Local) -> bool {
        let Pat::Ident(binding) = &local.pat else {
            return false;
        };
        let Some(init) = &local.init else {
            return false;
        };
        let Expr::Closure(closure) = &*init.expr else {
            return false;
        };
        // Not a `move` closure: what it moves in would be gone from the local saved for
        // it, and a `mut` local's value taken then would be another after.
        binding.mutability.is_none()
            && binding.by_ref.is_none()
            && binding.subpat.is_none()
            && init.diverge.is_none()
            && closure.capture.is_none()
    }

    /// Whether `local` binds only borrows of a place: `Some(mutable)`.
    fn let_borrow(&self, local: &syn::Local) -> Option<bool> {
        let (pat, init) = match let_else_match(local) {
            Some((pat, scrutinee)) => (pat, scrutinee),
            None => (&local.pat, &*local.init.as_ref()?.expr),
        };
        self.borrow_of(init)
            .filter(|&mutable| matches_again(pat, mutable))
    }

    /// `let PAT = SCRUTINEE else { unreachable!() };`, to bind a `match` arm's or an `if
    /// let`'s pattern again after a suspension, when it binds only borrows of a place.
    pub fn rebind_pattern(&self, pat: &Pat, scrutinee: &Expr) -> Option<Stmt> {
        let mutable = self.borrow_of(scrutinee)?;
        if !matches_again(pat, mutable) {
            return None;
        }
        let diverge = unreachable_else(pat.span());
        let private = crate::shared::private_path();
        let mut scrutinee = scrutinee.clone();
        checked_accessors(&mut scrutinee);
        // Alternatives are parenthesised: a `let` takes them so only.
        let pat = match pat {
            Pat::Or(_) => quote::quote!((#pat)),
            other => quote::quote!(#other),
        };
        Some(syn::parse_quote_spanned! {pat.span()=>
            #[allow(irrefutable_let_patterns)]
            let #pat = #private::again(#scrutinee) else #diverge;
        })
    }
}

/// `local` run again after a suspension, to bind a borrow again: its initialiser marked
/// `__private::again(…)` (so that what only it reads is told apart, see
/// `scope::free_outside_again`), its `else`, never taken then, `unreachable!`.
pub fn again(local: &syn::Local) -> Stmt {
    let mut local = local.clone();
    if recheck(&mut local) {
        return Stmt::Local(local);
    }
    if let Some(init) = &mut local.init {
        let mut expr = (*init.expr).clone();
        checked_accessors(&mut expr);
        let private = crate::shared::private_path();
        *init.expr = syn::parse_quote_spanned!(expr.span()=> #private::again(#expr));
        if let Some((_, diverge)) = &mut init.diverge {
            **diverge = unreachable_else(diverge.span());
        }
    }
    Stmt::Local(local)
}

/// A `let` recomputed after a restore (`lower::recompute`) run again as its check:
/// `recomputed(&mut seen, INIT, fp)` becomes `recomputed_again(&mut seen, INIT, fp,
/// "names")`, which refuses a value that fingerprints otherwise, naming the locals.
/// False for any other `let`.
fn recheck(local: &mut syn::Local) -> bool {
    let names = {
        let mut names = Vec::new();
        pattern_bindings(&local.pat, &mut |ident, _| {
            names.push(crate::tool::ir::written(ident));
        });
        names.join(", ")
    };
    let Some(init) = &mut local.init else {
        return false;
    };
    let Expr::Call(call) = &mut *init.expr else {
        return false;
    };
    let Expr::Path(path) = &mut *call.func else {
        return false;
    };
    if machine_call(&path.path) != Some("recomputed") {
        return false;
    }
    if let Some(last) = path.path.segments.last_mut() {
        last.ident = Ident::new("recomputed_again", last.ident.span());
    }
    call.args.push(syn::parse_quote!(#names));
    true
}

/// Each accessor call of a borrow made again checked to give a borrow
/// (`__private::borrowed(v.get(i))`): a method of another type with such a name may
/// compute a value, which its owner changed since could make differ, and which must be
/// saved instead (the error says how). The standard accessors pass unchanged.
fn checked_accessors(expr: &mut Expr) {
    struct Check;
    impl VisitMut for Check {
        fn visit_expr_mut(&mut self, expr: &mut Expr) {
            // Checked already (a `for` over `x.tool_uses()` checks its getter).
            if let Expr::Call(call) = expr
                && let Expr::Path(path) = &*call.func
                && matches!(
                    machine_call(&path.path),
                    Some("borrowed" | "borrowed_items")
                )
            {
                return;
            }
            syn::visit_mut::visit_expr_mut(self, expr);
            if let Expr::MethodCall(call) = expr
                && ACCESSORS.contains(&call.method.to_string().as_str())
            {
                let span = call.method.span();
                let check = syn::Ident::new(
                    shim("borrowed").unwrap_or("borrowed"),
                    crate::shared::at_call_site(span),
                );
                let call = call.clone();
                *expr = syn::parse_quote_spanned!(span=> #check(#call));
            }
        }

        // A closure's body is its own code, not the borrow made again (a closure's `let`
        // runs again as it is: `|s| s.parse::<u32>().unwrap()`).
        fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}

        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    Check.visit_expr_mut(expr);
}

/// A `let … else` whose `else` suspends, as the lowering writes it (`let (a, b) = match
/// e { P => (a, b), _ => { … } };`, see `lower::let_else_as_match`): its pattern and
/// scrutinee.
pub fn let_else_match(local: &syn::Local) -> Option<(&Pat, &Expr)> {
    let Expr::Match(expr_match) = &*local.init.as_ref()?.expr else {
        return None;
    };
    let [bind, rest] = expr_match.arms.as_slice() else {
        return None;
    };
    if !matches!(rest.pat, Pat::Wild(_)) || bind.guard.is_some() {
        return None;
    }
    let mut outer = Vec::new();
    pattern_bindings(&local.pat, &mut |ident, _| outer.push(ident.to_string()));
    let mut inner = Vec::new();
    pattern_bindings(&bind.pat, &mut |ident, _| inner.push(ident.to_string()));
    // The arm gives back exactly what its pattern binds, as the outer pattern binds it.
    let gives: Vec<String> = match &*bind.body {
        Expr::Path(path) => path
            .path
            .get_ident()
            .map(ToString::to_string)
            .into_iter()
            .collect(),
        Expr::Tuple(tuple) => tuple
            .elems
            .iter()
            .filter_map(|elem| match elem {
                Expr::Path(path) => path.path.get_ident().map(ToString::to_string),
                _ => None,
            })
            .collect(),
        _ => return None,
    };
    (!outer.is_empty() && outer == inner && gives == inner)
        .then_some((&bind.pat, &*expr_match.expr))
}

/// The `else` of a pattern bound again: the owner is the one the pattern matched, so it
/// matches again.
fn unreachable_else(span: Span) -> Expr {
    syn::parse_quote_spanned!(span=> {
        ::core::unreachable!("a place borrowed across a suspension changed")
    })
}

/// Whether no binding of `pat` is `mut` (nor `ref mut`): what it binds is then what
/// matching it again gives, for a value made again exactly (a constant's item).
pub fn binds_immutably(pat: &Pat) -> bool {
    let mut immutable = true;
    struct Find<'a>(&'a mut bool);
    impl<'ast> Visit<'ast> for Find<'_> {
        fn visit_pat_ident(&mut self, pat_ident: &'ast syn::PatIdent) {
            if pat_ident.mutability.is_some() {
                *self.0 = false;
            }
            syn::visit::visit_pat_ident(self, pat_ident);
        }
    }
    Find(&mut immutable).visit_pat(pat);
    immutable
}

/// A `for` loop's item over a constant bound again after a suspension: its `let` run
/// again through `constant_item_again`, which asks for a `Copy` item and checks that it
/// is the one the saga suspended with (the fingerprint the loop's head kept; the head's
/// own fingerprinting argument is dropped). Past the constant's end only if a build with
/// a shorter constant read the token.
pub fn again_constant(local: &syn::Local) -> Stmt {
    let mut local = local.clone();
    if let Some(init) = &mut local.init
        && let Expr::Call(call) = &mut *init.expr
        && let Expr::Path(path) = &mut *call.func
        && let Some(last) = path.path.segments.last_mut()
    {
        last.ident = Ident::new("constant_item_again", last.ident.span());
        call.args.pop();
    }
    if let Some(init) = &mut local.init
        && let Some((_, diverge)) = &mut init.diverge
    {
        let span = diverge.span();
        **diverge = syn::parse_quote_spanned!(span=> {
            ::core::panic!("the constant a `for` loop walks has fewer items than when this saga suspended in it: the build changed it")
        });
    }
    Stmt::Local(local)
}

/// A recomputed `for` loop's iterator made again after a restore (`lower_live` in
/// `lower/for_loop.rs`): its `let` as written, marked `again(…)`. Its expression is not
/// checked as a place's accessors are: what it gives is checked item by item instead.
pub fn again_live(local: &syn::Local) -> Stmt {
    let mut local = local.clone();
    if let Some(init) = &mut local.init {
        let expr = (*init.expr).clone();
        let private = crate::shared::private_path();
        *init.expr = syn::parse_quote_spanned!(expr.span()=> #private::again(#expr));
    }
    Stmt::Local(local)
}

/// A recomputed `for` loop's item bound again after a restore: `live_item_at` becomes
/// `live_item_again`, which advances the new iterator to the saved position and refuses
/// an item that fingerprints otherwise (or none); its `else` is never taken then.
pub fn again_live_item(local: &syn::Local) -> Stmt {
    let mut local = local.clone();
    if let Some(init) = &mut local.init {
        if let Expr::Call(call) = &mut *init.expr
            && let Expr::Path(path) = &mut *call.func
            && let Some(last) = path.path.segments.last_mut()
        {
            last.ident = Ident::new("live_item_again", last.ident.span());
        }
        if let Some((_, diverge)) = &mut init.diverge {
            **diverge = unreachable_else(diverge.span());
        }
    }
    Stmt::Local(local)
}

/// The check, after a suspension, of a `for` loop's item over a constant that is not bound
/// again (see [`again_constant`]): its `let`'s call made a statement of its own through
/// `constant_item_check`, which refuses a build whose constant differs at the loop's
/// position, so that the loop never goes on through another sequence of items.
pub fn check_constant(local: &syn::Local) -> Option<Stmt> {
    let init = local.init.as_ref()?;
    let Expr::Call(call) = &*init.expr else {
        return None;
    };
    let mut call = call.clone();
    let Expr::Path(path) = &mut *call.func else {
        return None;
    };
    let last = path.path.segments.last_mut()?;
    last.ident = Ident::new("constant_item_check", last.ident.span());
    Some(Stmt::Expr(Expr::Call(call), Some(Default::default())))
}

/// Whether every binding of `pat`, matched against a borrow, is a borrow too (or a copy
/// found again exactly): none is `mut`, and no `&` pattern moves a value out.
pub fn binds_by_reference(pat: &Pat) -> bool {
    match pat {
        Pat::Ident(pat_ident) => {
            pat_ident.mutability.is_none()
                && pat_ident
                    .subpat
                    .as_ref()
                    .is_none_or(|(_, sub)| binds_by_reference(sub))
        }
        Pat::Reference(_) | Pat::Macro(_) | Pat::Verbatim(_) => false,
        Pat::Type(typed) => binds_by_reference(&typed.pat),
        Pat::Tuple(tuple) => tuple.elems.iter().all(binds_by_reference),
        Pat::TupleStruct(ts) => ts.elems.iter().all(binds_by_reference),
        Pat::Struct(st) => st.fields.iter().all(|field| binds_by_reference(&field.pat)),
        Pat::Slice(slice) => slice.elems.iter().all(binds_by_reference),
        Pat::Or(or) => or.cases.iter().all(binds_by_reference),
        Pat::Paren(paren) => binds_by_reference(&paren.pat),
        _ => true,
    }
}

/// Whether `pat`, matched against a borrow (mutable or not), binds only borrows and
/// matches again after the suspension: through a mutable borrow, what a binding changes
/// may be what the pattern tested (`n @ Node { leaf: true, .. }` then `n.leaf = false`),
/// so a pattern that tests values (a literal, a range, a constant or unit variant) or
/// binds a whole tested part (`n @ …`) is not matched again; its bindings are saved.
fn matches_again(pat: &Pat, mutable: bool) -> bool {
    struct Tests(bool);
    impl<'ast> Visit<'ast> for Tests {
        fn visit_pat(&mut self, pat: &'ast Pat) {
            match pat {
                Pat::Lit(_) | Pat::Range(_) | Pat::Path(_) => self.0 = true,
                Pat::Ident(ident) if ident.subpat.is_some() => self.0 = true,
                _ => syn::visit::visit_pat(self, pat),
            }
        }
    }
    if !binds_by_reference(pat) {
        return false;
    }
    if !mutable {
        return true;
    }
    let mut tests = Tests(false);
    tests.visit_pat(pat);
    !tests.0
}

/// Whether a `for` loop's collection borrows a place: `&v`, `&mut v`, `v.iter()`, … or a
/// local holding a borrow. `Some(mutable)`.
fn loop_borrow(refs: &Refs, expr: &Expr) -> Option<bool> {
    if let Some(chain) = zip_call(expr) {
        return loop_borrow(refs, &chain);
    }
    let mut expr = expr;
    // A `.zip(..)` of a borrowed collection (or of a range, whose items are values found
    // again as an `enumerate`'s index is): its items borrow mutably if either side does.
    let mut zipped_mut = false;
    let mut zipped_borrow = false;
    while let Expr::MethodCall(call) = expr {
        let method = call.method.to_string();
        if method == "zip" && call.args.len() == 1 {
            let partner = &call.args[0];
            if !is_range(partner) {
                zipped_mut |= loop_borrow(refs, partner)?;
                zipped_borrow = true;
            }
        } else if !listed(LOOP_ADAPTERS, &method, Some(true)) {
            break;
        }
        expr = &call.receiver;
    }
    // `(1..).zip(&items)`: a range zipped with a borrow, counted by position.
    if zipped_borrow && is_range(expr) {
        return Some(zipped_mut);
    }
    let mutable = loop_borrow_root(refs, expr)?;
    Some(mutable || zipped_mut)
}

/// `std::iter::zip(&a, b)` (or `iter::zip`, `core::iter::zip`) over a borrow of a place,
/// as the method chain it is: `a.iter().zip(b)` (`iter_mut` for `&mut a`), as
/// `IntoIterator` of a borrowed standard collection is its `iter`. A first argument that
/// is already a chain of calls stays as it is. Not a bare `zip(..)`: the macro cannot
/// tell `std::iter::zip` imported from a function of the user's so named, whose loop
/// is then lowered as any other call's (its items collected).
pub fn zip_call(expr: &Expr) -> Option<Expr> {
    let Expr::Call(call) = expr else {
        return None;
    };
    let Expr::Path(path) = &*call.func else {
        return None;
    };
    let names: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect();
    let standard = matches!(
        names.iter().map(String::as_str).collect::<Vec<_>>()[..],
        ["iter", "zip"] | ["std" | "core", "iter", "zip"]
    );
    if !standard || call.args.len() != 2 || path.qself.is_some() {
        return None;
    }
    let (first, second) = (&call.args[0], &call.args[1]);
    let span = first.span();
    let first: Expr = match first {
        Expr::Reference(reference) if place_root(&reference.expr).is_some() => {
            let place = &reference.expr;
            match reference.mutability {
                Some(_) => syn::parse_quote_spanned!(span=> #place.iter_mut()),
                None => syn::parse_quote_spanned!(span=> #place.iter()),
            }
        }
        Expr::MethodCall(_) => first.clone(),
        _ => return None,
    };
    Some(syn::parse_quote_spanned!(span=> #first.zip(#second)))
}

/// An integer range `a..b`, `a..=b` or `a..`, parenthesised or not.
fn is_range(expr: &Expr) -> bool {
    match expr {
        Expr::Paren(paren) => is_range(&paren.expr),
        Expr::Range(range) => range.start.is_some(),
        _ => false,
    }
}

/// [`loop_borrow`] of what its adapters are called on.
fn loop_borrow_root(refs: &Refs, expr: &Expr) -> Option<bool> {
    match expr {
        // `x.tool_uses().iter()`, as `x.tool_uses()` (see `lower::for_loop`).
        Expr::MethodCall(call)
            if call.method == "iter"
                && call.args.is_empty()
                && matches!(&*call.receiver, Expr::MethodCall(inner) if inner.method == "tool_uses") =>
        {
            loop_borrow_root(refs, &call.receiver)
        }
        Expr::MethodCall(call) if listed(LOOP_METHODS, &call.method.to_string(), Some(true)) => {
            (refs.is_place(&call.receiver) || refs.borrow_of(&call.receiver).is_some())
                .then(|| call.method.to_string().ends_with("_mut"))
        }
        _ => refs.borrow_of(expr),
    }
}

struct Collect(Refs);

impl Collect {
    fn bind(&mut self, pat: &Pat, mutable: bool) {
        let by_reference = matches_again(pat, mutable);
        pattern_bindings(pat, &mut |ident, declared_mut| {
            let name = ident.to_string();
            if declared_mut {
                self.0.mutable.insert(name.clone());
            }
            if by_reference {
                self.0.borrows.insert(name, mutable);
            }
        });
    }

    fn declare(&mut self, pat: &Pat) {
        pattern_bindings(pat, &mut |ident, declared_mut| {
            if declared_mut {
                self.0.mutable.insert(ident.to_string());
            }
        });
    }
}

impl<'ast> Visit<'ast> for Collect {
    fn visit_local(&mut self, local: &'ast syn::Local) {
        if let Some(init) = &local.init {
            self.visit_expr(&init.expr);
            if let Some((_, diverge)) = &init.diverge {
                self.visit_expr(diverge);
            }
        }
        match self.0.let_borrow(local) {
            Some(mutable) => self.bind(&local.pat, mutable),
            None => self.declare(&local.pat),
        }
    }

    fn visit_expr_match(&mut self, expr_match: &'ast syn::ExprMatch) {
        self.visit_expr(&expr_match.expr);
        let borrow = self.0.borrow_of(&expr_match.expr);
        for arm in &expr_match.arms {
            match borrow {
                Some(mutable) => self.bind(&arm.pat, mutable),
                None => self.declare(&arm.pat),
            }
            if let Some((_, guard)) = &arm.guard {
                self.visit_expr(guard);
            }
            self.visit_expr(&arm.body);
        }
    }

    fn visit_expr_let(&mut self, expr_let: &'ast syn::ExprLet) {
        self.visit_expr(&expr_let.expr);
        match self.0.borrow_of(&expr_let.expr) {
            Some(mutable) => self.bind(&expr_let.pat, mutable),
            None => self.declare(&expr_let.pat),
        }
    }

    fn visit_expr_for_loop(&mut self, expr_for: &'ast syn::ExprForLoop) {
        self.visit_expr(&expr_for.expr);
        match loop_borrow(&self.0, &expr_for.expr) {
            Some(mutable) => self.bind(&expr_for.pat, mutable),
            None => self.declare(&expr_for.pat),
        }
        self.visit_block(&expr_for.body);
    }

    fn visit_expr_closure(&mut self, closure: &'ast syn::ExprClosure) {
        for input in &closure.inputs {
            self.declare(input);
        }
        self.visit_expr(&closure.body);
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Makes the borrows of places found again exactly: in each `let` that borrows a place,
/// and in each `match` or `if let` over one, the indexes and arguments that could change
/// after the borrow (a `mut` local, an expression) are evaluated first into temporaries,
/// `let __ixN = i;`, which the borrow reads instead. Nothing else changes: the borrow
/// reads what it would have read, in the same order (a place's own evaluation has no
/// effects).
pub fn hoist(body: &mut Block, mutable_params: &[Ident]) {
    let refs = Refs::of(body, mutable_params.iter().map(ToString::to_string));
    let mut hoister = Hoister { refs, count: 0 };
    hoister.visit_block_mut(body);
}

struct Hoister {
    refs: Refs,
    count: usize,
}

impl Hoister {
    /// The borrow-making expression a statement begins with, if any.
    fn head(stmt: &mut Stmt) -> Option<&mut Expr> {
        let expr = match stmt {
            Stmt::Local(local) => &mut *local.init.as_mut()?.expr,
            Stmt::Expr(expr, _) => expr,
            _ => return None,
        };
        Some(match expr {
            Expr::Match(expr_match) => &mut expr_match.expr,
            Expr::If(expr_if) => match &mut *expr_if.cond {
                Expr::Let(expr_let) => &mut expr_let.expr,
                _ => return None,
            },
            other => other,
        })
    }

    /// Hoists the unstable parts of `expr`'s path into `out`, when `expr` is a borrow of
    /// a place once they are.
    fn borrow(&mut self, expr: &mut Expr, out: &mut Vec<Stmt>) {
        if self.refs.borrow_of(expr).is_some() {
            return;
        }
        self.refs.lenient = true;
        let shaped = self.refs.borrow_of(expr).is_some();
        self.refs.lenient = false;
        if !shaped {
            return;
        }
        self.parts(expr, out);
    }

    fn parts(&mut self, expr: &mut Expr, out: &mut Vec<Stmt>) {
        match expr {
            Expr::Reference(reference) => self.parts(&mut reference.expr, out),
            Expr::Tuple(tuple) => tuple.elems.iter_mut().for_each(|e| self.parts(e, out)),
            Expr::Array(array) => array.elems.iter_mut().for_each(|e| self.parts(e, out)),
            Expr::Paren(paren) => self.parts(&mut paren.expr, out),
            Expr::Field(field) => self.parts(&mut field.base, out),
            Expr::Unary(unary) => self.parts(&mut unary.expr, out),
            Expr::Index(index) => {
                self.parts(&mut index.expr, out);
                self.value(&mut index.index, out);
            }
            Expr::MethodCall(call) => {
                self.parts(&mut call.receiver, out);
                for arg in call.args.iter_mut() {
                    self.value(arg, out);
                }
            }
            // The machine's `ordered(&v[i])`, a `for` loop's collection.
            Expr::Call(call) => call.args.iter_mut().for_each(|arg| self.parts(arg, out)),
            _ => {}
        }
    }

    /// An index or argument: kept if stable, else evaluated into a temporary.
    fn value(&mut self, expr: &mut Expr, out: &mut Vec<Stmt>) {
        if self.refs.is_stable(expr) {
            return;
        }
        match expr {
            Expr::Range(range) => {
                if let Some(start) = &mut range.start {
                    self.value(start, out);
                }
                if let Some(end) = &mut range.end {
                    self.value(end, out);
                }
            }
            // `&key` of a local: the key's owned copy, borrowed (its type as written).
            Expr::Reference(reference)
                if reference.mutability.is_none()
                    && matches!(&*reference.expr, Expr::Path(path) if path.path.get_ident().is_some()) =>
            {
                let inner = &reference.expr;
                let temp = self.temporary(
                    syn::parse_quote_spanned!(inner.span()=>
                        ::std::borrow::ToOwned::to_owned(&#inner)),
                    out,
                );
                *reference.expr = temp;
            }
            _ => {
                let value = expr.clone();
                *expr = self.temporary(value, out);
            }
        }
    }

    fn temporary(&mut self, value: Expr, out: &mut Vec<Stmt>) -> Expr {
        self.count += 1;
        let span = value.span();
        let name = Ident::new(&format!("{HOISTED}{}", self.count), span);
        out.push(syn::parse_quote_spanned!(span=> let #name = #value;));
        syn::parse_quote_spanned!(span=> #name)
    }
}

impl VisitMut for Hoister {
    fn visit_block_mut(&mut self, block: &mut Block) {
        let mut stmts = Vec::with_capacity(block.stmts.len());
        for mut stmt in std::mem::take(&mut block.stmts) {
            self.visit_stmt_mut(&mut stmt);
            if let Some(head) = Self::head(&mut stmt) {
                self.borrow(head, &mut stmts);
            }
            stmts.push(stmt);
        }
        block.stmts = stmts;
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}

    // A closure cannot hold a suspension, so nothing in it is borrowed again.
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
}

/// The local a place is rooted in, if `expr` is a place by its shape: a local, or a
/// field, an element (at an index or a range) or a deref of one. (Whether its indexes
/// stay the same is [`Refs::is_place`]'s question.)
pub fn place_root(expr: &Expr) -> Option<&Ident> {
    match expr {
        Expr::Path(path) if path.qself.is_none() => path.path.get_ident(),
        Expr::Field(field) => place_root(&field.base),
        Expr::Index(index) => place_root(&index.expr),
        Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => place_root(&unary.expr),
        Expr::Paren(paren) => place_root(&paren.expr),
        Expr::Group(group) => place_root(&group.expr),
        _ => None,
    }
}

/// The locals the statements that bind borrows again read as a key, an index or an
/// argument (`prices.get(key)`, `&v[__ix1]`): such a local, when it is a borrow made
/// again too, must not change before the suspension either, so it is used there (see
/// `Rebound::alive`). What they read as the owner's path (`first` in `let Some(c) =
/// first`) is kept by the borrow made from it.
pub fn argument_reads(stmts: &[Stmt]) -> HashSet<String> {
    struct Reads {
        found: HashSet<String>,
        depth: usize,
    }
    impl<'ast> Visit<'ast> for Reads {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            match expr {
                Expr::MethodCall(call) => {
                    self.visit_expr(&call.receiver);
                    self.depth += 1;
                    call.args.iter().for_each(|arg| self.visit_expr(arg));
                    self.depth -= 1;
                }
                Expr::Index(index) => {
                    self.visit_expr(&index.expr);
                    self.depth += 1;
                    self.visit_expr(&index.index);
                    self.depth -= 1;
                }
                Expr::Path(path) if self.depth > 0 => {
                    if let Some(ident) = path.path.get_ident() {
                        self.found.insert(ident.to_string());
                    }
                }
                other => syn::visit::visit_expr(self, other),
            }
        }
    }
    let mut reads = Reads {
        found: HashSet::new(),
        depth: 0,
    };
    stmts.iter().for_each(|stmt| reads.visit_stmt(stmt));
    reads.found
}

/// Whether `local` makes a value the build can make again exactly, rather than save:
/// an immutable binding of the tools a sample offers, made from their types
/// (`let tools = [SamplingTool::of::<Search>("search", "Search the notes")];`, an array or
/// a `vec!` of such, with literal names and descriptions), or a `ToolChoice` variant.
/// Nothing in it depends on what ran before: the continuation runs the `let` again, and
/// the state keeps none of it (an offered tool's schema is hundreds of bytes a round). A
/// build whose descriptions or types changed offers its own, as a new call would.
pub fn restated_let(local: &syn::Local) -> bool {
    let plain = |pat: &Pat| matches!(pat, Pat::Ident(ident) if ident.mutability.is_none() && ident.by_ref.is_none() && ident.subpat.is_none());
    let plain_pat = match &local.pat {
        Pat::Type(typed) => plain(&typed.pat),
        pat => plain(pat),
    };
    plain_pat
        && local
            .init
            .as_ref()
            .is_some_and(|init| init.diverge.is_none() && restated(&init.expr))
}

/// Whether `expr` is made again exactly (see [`restated_let`]).
fn restated(expr: &Expr) -> bool {
    match expr {
        Expr::Array(array) => !array.elems.is_empty() && array.elems.iter().all(restated),
        Expr::Macro(mac) if mac.mac.path.is_ident("vec") => mac
            .mac
            .parse_body_with(syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated)
            .is_ok_and(|elems| !elems.is_empty() && elems.iter().all(restated)),
        Expr::Call(call) => {
            let Expr::Path(path) = &*call.func else {
                return false;
            };
            let mut segments = path.path.segments.iter().rev();
            let (Some(of), Some(ty)) = (segments.next(), segments.next()) else {
                return false;
            };
            path.qself.is_none()
                && ty.ident == "SamplingTool"
                && of.ident == "of"
                && matches!(of.arguments, syn::PathArguments::AngleBracketed(_))
                && call.args.len() == 2
                && call.args.iter().all(|arg| {
                    matches!(
                        arg,
                        Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(_),
                            ..
                        })
                    )
                })
        }
        Expr::Path(path) => {
            let mut segments = path.path.segments.iter().rev();
            let (Some(variant), Some(ty)) = (segments.next(), segments.next()) else {
                return false;
            };
            path.qself.is_none()
                && ty.ident == "ToolChoice"
                && matches!(
                    variant.ident.to_string().as_str(),
                    "Auto" | "Required" | "None"
                )
        }
        Expr::Paren(paren) => restated(&paren.expr),
        Expr::Group(group) => restated(&group.expr),
        _ => false,
    }
}

/// The values a `let` of a `&'static str` chosen among literals may hold (`let side = if
/// white { "White" } else { "Black" };`, through `if`, `match` and blocks, with string
/// literals and constants as the values): the state saves which text it holds, and the
/// continuation takes the very `&'static str` of that text back from these. `None` for
/// any other `let`, or a `mut` binding (which could be assigned something else).
pub fn literal_choices(local: &syn::Local) -> Option<Vec<Expr>> {
    plain_binding(local)?;
    let choices = choices_of(local, &|leaf| is_str_literal(leaf) || is_constant(leaf))?;
    // A string literal among them says the type: constants alone could be numbers.
    choices.iter().any(is_str_literal).then_some(choices)
}

/// The values a `let` of a reference chosen among constants may hold (`let bank: &[&str]
/// = match level { Level::Easy => EASY, _ => HARD };`, or `&TABLE` for a constant that is
/// not itself a reference), through `if`, `match` and blocks: the state saves the chosen
/// value's fingerprint, and the continuation takes back the very constant with that
/// value. Only with its type written as a reference: without it the constants could be
/// numbers, which are saved as they are (and a changed constant would then not refuse a
/// token it does today). `None` for any other `let`, or a `mut` binding.
pub fn constant_choices(local: &syn::Local) -> Option<(Type, Vec<Expr>)> {
    let ty = plain_binding(local)??;
    matches!(ty, Type::Reference(reference) if reference.mutability.is_none()).then_some(())?;
    let choices = choices_of(local, &|leaf| {
        is_constant(leaf)
            || matches!(leaf, Expr::Reference(reference)
                if reference.mutability.is_none() && is_constant(&reference.expr))
    })?;
    Some((ty.clone(), choices))
}

/// `Some` with the written type, if any, when `local` binds one name, not `mut` nor
/// `ref`: a binding that keeps the value its initializer chose.
fn plain_binding(local: &syn::Local) -> Option<Option<&Type>> {
    let plain = |pat: &Pat| matches!(pat, Pat::Ident(ident) if ident.mutability.is_none() && ident.by_ref.is_none() && ident.subpat.is_none());
    match &local.pat {
        Pat::Type(typed) if plain(&typed.pat) => Some(Some(&*typed.ty)),
        pat if plain(pat) => Some(None),
        _ => None,
    }
}

/// The values `local`'s initializer may evaluate to, each a `leaf`; `None` if one is not.
fn choices_of(local: &syn::Local, leaf: &dyn Fn(&Expr) -> bool) -> Option<Vec<Expr>> {
    let init = local.init.as_ref()?;
    if init.diverge.is_some() {
        return None;
    }
    let mut choices = Vec::new();
    leaves(&init.expr, leaf, &mut choices).then_some(choices)
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

/// A constant or a static, by Rust's naming (`GREETING`, `Self::NAME`).
fn is_constant(expr: &Expr) -> bool {
    matches!(expr, Expr::Path(path)
    if path.qself.is_none()
        && path.path.segments.last().is_some_and(|segment| {
            let name = segment.ident.to_string();
            segment.arguments.is_none()
                && name.chars().any(char::is_alphabetic)
                && !name.chars().any(char::is_lowercase)
        }))
}

/// The values `expr` may evaluate to through `if`, `match` and blocks, into `out`; false
/// if one is not a `leaf`.
pub fn leaves_of(expr: &Expr, leaf: &dyn Fn(&Expr) -> bool, out: &mut Vec<Expr>) -> bool {
    leaves(expr, leaf, out)
}

/// Collects the values `expr` may evaluate to; false if one is not a `leaf`.
fn leaves(expr: &Expr, leaf: &dyn Fn(&Expr) -> bool, out: &mut Vec<Expr>) -> bool {
    match expr {
        Expr::If(expr_if) => match &expr_if.else_branch {
            Some((_, else_branch)) => {
                block_leaves(&expr_if.then_branch, leaf, out) && leaves(else_branch, leaf, out)
            }
            None => false,
        },
        Expr::Match(expr_match) => expr_match
            .arms
            .iter()
            .all(|arm| leaves(&arm.body, leaf, out)),
        Expr::Block(block) if block.label.is_none() => block_leaves(&block.block, leaf, out),
        Expr::Paren(paren) => leaves(&paren.expr, leaf, out),
        Expr::Group(group) => leaves(&group.expr, leaf, out),
        value if leaf(value) => {
            if !out.contains(value) {
                out.push(value.clone());
            }
            true
        }
        other => diverges(other),
    }
}

fn block_leaves(block: &Block, leaf: &dyn Fn(&Expr) -> bool, out: &mut Vec<Expr>) -> bool {
    // An item declared in the block (`{ const LOCAL: &str = "a"; LOCAL }`) is out of scope
    // where the continuation names the values again.
    if block.stmts.iter().any(|stmt| matches!(stmt, Stmt::Item(_))) {
        return false;
    }
    match block.stmts.last() {
        Some(Stmt::Expr(tail, None)) => leaves(tail, leaf, out),
        Some(Stmt::Expr(tail, Some(_))) => diverges(tail),
        Some(Stmt::Macro(mac)) => diverging_macro(&mac.mac),
        _ => false,
    }
}

/// An expression that never gives a value: it has no value to choose.
fn diverges(expr: &Expr) -> bool {
    match expr {
        Expr::Return(_) | Expr::Break(_) | Expr::Continue(_) => true,
        Expr::Macro(mac) => diverging_macro(&mac.mac),
        _ => false,
    }
}

fn diverging_macro(mac: &syn::Macro) -> bool {
    mac.path.segments.last().is_some_and(|segment| {
        matches!(
            segment.ident.to_string().as_str(),
            "panic" | "unreachable" | "todo" | "unimplemented"
        )
    })
}
