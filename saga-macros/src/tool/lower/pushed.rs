//! Borrows pushed across suspensions: a `let mut NAME = Vec::new();` onto which a loop
//! whose iterator is recomputed (`lower_live`) pushes a borrow made from its item
//! (`picked.push(t.title.as_str())` in `for t in open.iter()` that asks a question each
//! turn). Such a `Vec` cannot be saved, nor made again by running the statements that
//! built it (they suspend). What is saved instead is where each value came from: the
//! loop's position when it was pushed, with the value's fingerprint (`__private::pushed`).
//! After a restore the `let` runs again as `pushed_again`, which makes each value from a
//! new iterator of the loop, advanced to its position, by the push's own expression, and
//! checks it: the positions in the collection each points into, found again.
//!
//! Where the `let` first runs nothing was pushed, and the same call gives an empty `Vec`
//! of the push's type. What the push's expression reads besides the item must not change
//! between the push and a restore: no local declared `mut`, none bound after the `let`.
//! The `Vec` is only read but by that push (no other write, no `&mut`), so the values
//! recorded are all it holds.

use std::collections::{HashSet, VecDeque};

use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Expr, Ident, Pat, Stmt};

use crate::shared::private_path;
use crate::tool::lower::gather::{
    KEEP_ITEMS, holds_shared_reference, mutable_binding, only_read, walks_borrowed_items,
};
use crate::tool::lower::places::binds_immutably;
use crate::tool::lower::places::machine_call;
use crate::tool::lower::scope::{free_in_expr, free_in_stmts, pattern_bindings};

/// The prefix of the positions this pass keeps (`let mut __pushedN = Vec::new();`).
const PUSHED: &str = "__pushed";

/// `local`, taken from the head of `stmts`, rewritten when it is such a `Vec` (see the
/// module): the `let` moves to just before the loop (where the loop's own temporaries
/// are bound: nothing before reads it, and it is empty until then), made by
/// `pushed_again`/`pushed_found`, with the positions' local before it; each push records
/// its position. `count` numbers the positions' local. False, and nothing changed, for
/// any other `let`.
pub fn positions(
    local: &syn::Local,
    stmts: &mut VecDeque<Stmt>,
    mutable: &HashSet<String>,
    count: usize,
) -> bool {
    let Some(rewritten) = rewrite(local, stmts.make_contiguous(), mutable, count) else {
        return false;
    };
    let (loop_at, made) = rewritten;
    for (offset, stmt) in made.into_iter().enumerate() {
        stmts.insert(loop_at + offset, stmt);
    }
    true
}

fn rewrite(
    local: &syn::Local,
    rest: &mut [Stmt],
    mutable: &HashSet<String>,
    count: usize,
) -> Option<(usize, Vec<Stmt>)> {
    let (ident, ty) = mutable_binding(&local.pat)?;
    let name = ident.to_string();
    let init = local.init.as_ref().filter(|init| init.diverge.is_none())?;
    if !is_empty_vec(&init.expr) {
        return None;
    }
    // The pushes, all in one loop that suspends, the statement that is that loop.
    let mut found = Pushes {
        name: &name,
        pushes: Vec::new(),
        loops: Vec::new(),
    };
    let mut loop_at = None;
    for (index, stmt) in rest.iter().enumerate() {
        let before = found.pushes.len();
        found.visit_stmt(stmt);
        if found.pushes.len() > before {
            if loop_at.is_some_and(|at| at != index) {
                return None;
            }
            loop_at = Some(index);
        }
    }
    let loop_at = loop_at?;
    let (_, head) = found.pushes.first()?;
    let head = head.as_ref()?;
    let same_loop = |each: &Option<Head>| {
        each.as_ref()
            .is_some_and(|other| other.position == head.position)
    };
    if !found.pushes.iter().all(|(_, each)| same_loop(each)) {
        return None;
    }
    // Nothing before the loop reads it: the `let` can be there instead.
    let (before, from_loop) = rest.split_at(loop_at);
    if before
        .iter()
        .any(|stmt| free_in_stmts(std::slice::from_ref(stmt)).contains(&name))
    {
        return None;
    }
    // What finds the item at a position: the loop's iterator made again, or its
    // collection read through the loop's methods.
    let (made, enumerated) = match &head.finds {
        Finds::Live { walk } => {
            let walk_let = before
                .iter()
                .find_map(|stmt| walk_let(stmt, walk, "live"))?;
            let made = live_call(Some(walk_let), "live")?.args.first()?.clone();
            let enumerated = walks_borrowed_items(&made);
            (made, enumerated)
        }
        Finds::At { walk, items } => {
            before
                .iter()
                .find_map(|stmt| walk_let(stmt, walk, "ordered"))?;
            ((**items).clone(), borrowed_positions(items, walk))
        }
    };
    let (position, pat) = (&head.position, &head.pat);
    // A `Vec` of borrows: its type says so, or what is pushed is one: a part of the item
    // borrowed (`item.name.as_str()`), or the item itself where the loop gives borrows
    // (not `.copied()`; nor an item bound `mut`, which may change after it is bound).
    if !binds_immutably(pat) {
        return None;
    }
    let mut item_names = HashSet::new();
    pattern_bindings(pat, &mut |bound, _| {
        item_names.insert(bound.to_string());
    });
    let whole_items: HashSet<String> = match (enumerated, pat) {
        (Some(false), Pat::Ident(item)) => [item.ident.to_string()].into(),
        (Some(true), Pat::Tuple(tuple)) if tuple.elems.len() == 2 => match &tuple.elems[1] {
            Pat::Ident(item) => [item.ident.to_string()].into(),
            _ => HashSet::new(),
        },
        _ => HashSet::new(),
    };
    let values: Vec<&Expr> = found.pushes.iter().map(|(value, _)| value).collect();
    if !ty.is_some_and(holds_shared_reference)
        && !values
            .iter()
            .any(|value| borrows_an_item(value, &item_names, &whole_items))
    {
        return None;
    }
    // Each push's expression is made again in a closure: nothing in it may leave the
    // loop or the function (`continue`, `?`), nor suspend.
    if values.iter().any(|value| leaves(value)) {
        return None;
    }
    // Each push's expression reads the item, and what cannot change meanwhile: no local
    // declared `mut`, none bound in the loop.
    let in_loop = crate::tool::lower::changes::bound_in_stmts(&from_loop[..1]);
    if values.iter().any(|value| {
        let reads = free_in_expr(value);
        reads.contains(&name)
            || reads.iter().any(|read| {
                !item_names.contains(read) && (in_loop.contains(read) || mutable.contains(read))
            })
    }) {
        return None;
    }
    // Only read but by the pushes.
    let mut others = rest.to_vec();
    let mut unpush = Unpush { name: &name };
    others
        .iter_mut()
        .for_each(|stmt| unpush.visit_stmt_mut(stmt));
    if !only_read(&others, &name, false) {
        return None;
    }
    let span = ident.span();
    let private = private_path();
    let at = Ident::new(&format!("{PUSHED}{count}"), span);
    let written = crate::tool::ir::written(ident);
    let element = ty.and_then(element_type);
    let ty = ty.map(|ty| quote::quote!(: #ty));
    // One arm per push, by its number (each pushes a value of the `Vec`'s one type). A
    // written element type is where each value coerces, as it did at the push
    // (`picked.push(&t.title)` onto a `Vec<&str>`).
    let sites = values.iter().enumerate().map(|(site, value)| {
        let site = site as u32;
        match element {
            Some(element) => quote::quote!(#site => {
                let __saga_pushed: #element = #value;
                __saga_pushed
            },),
            None => quote::quote!(#site => #value,),
        }
    });
    // Every binding of the item used, whichever push reads it (no warning at the user's
    // pattern for one a push does not read).
    let bindings: Vec<Ident> = {
        let mut bindings = Vec::new();
        pattern_bindings(pat, &mut |bound, _| bindings.push(bound.clone()));
        bindings
    };
    // A number this loop does not have comes only from a state another build saved:
    // refused, not a panic of the expansion's.
    let make = quote::quote!(|__saga_site: u32, #pat| {
        let _ = (#(&#bindings,)*);
        match __saga_site {
            #(#sites)*
            other => #private::pushed_elsewhere(#written, other),
        }
    });
    let stmts: Vec<Stmt> = match &head.finds {
        Finds::Live { .. } => vec![
            syn::parse_quote_spanned! {span=>
                let mut #at: ::std::vec::Vec<(usize, u64, u32)> = ::std::vec::Vec::new();
            },
            syn::parse_quote_spanned! {span=>
                let mut #ident #ty = #private::pushed_again(
                    &#at,
                    #private::live(#made),
                    #make,
                    #written,
                );
            },
        ],
        Finds::At { walk, .. } => vec![
            syn::parse_quote_spanned! {span=>
                let mut #at = #private::positions_in(&*#walk);
            },
            syn::parse_quote_spanned! {span=>
                let mut #ident #ty = #private::pushed_found(
                    &#at,
                    |__saga_at| #private::item_at(__saga_at, #made),
                    #make,
                    #written,
                );
            },
        ],
    };
    let mut record = Record {
        name: &name,
        at: &at,
        position,
        site: 0,
    };
    record.visit_stmt_mut(&mut rest[loop_at]);
    Some((loop_at, stmts))
}

/// Whether a loop that saves where it is gives borrows of its collection `walk` as its
/// items (`Some(false)`) or beside an index (`Some(true)`): `__walkN` itself, or through
/// `iter`, `keys`, `values` and adapters that keep the items.
fn borrowed_positions(items: &Expr, walk: &Ident) -> Option<bool> {
    let mut at = items;
    let mut enumerated = None;
    while let Expr::MethodCall(call) = at {
        let method = call.method.to_string();
        if method == "enumerate" && enumerated.is_none() {
            enumerated = Some(true);
        } else if !KEEP_ITEMS.contains(&method.as_str())
            && !matches!(method.as_str(), "iter" | "keys" | "values")
        {
            return None;
        }
        enumerated.get_or_insert(false);
        at = &call.receiver;
    }
    matches!(at, Expr::Path(path) if path.path.is_ident(walk)).then(|| enumerated.unwrap_or(false))
}

/// Whether `value` is a borrow of the item (bound as `items`) or of a part of it:
/// `&item.name`, `item.name.as_str()`, the item itself where it is a borrow (bound as
/// `whole`), `Some(item)`, `(item, 3)`.
fn borrows_an_item(value: &Expr, items: &HashSet<String>, whole: &HashSet<String>) -> bool {
    let of_item = |expr: &Expr| {
        crate::tool::lower::changes::place_root_name(expr).is_some_and(|root| items.contains(&root))
    };
    let again = |expr: &Expr| borrows_an_item(expr, items, whole);
    match value {
        Expr::Path(path) => path
            .path
            .get_ident()
            .is_some_and(|ident| whole.contains(&ident.to_string())),
        Expr::Reference(reference) => reference.mutability.is_none() && of_item(&reference.expr),
        Expr::MethodCall(call) => {
            matches!(
                call.method.to_string().as_str(),
                "as_str"
                    | "as_slice"
                    | "as_ref"
                    | "as_deref"
                    | "as_bytes"
                    | "as_path"
                    | "trim"
                    | "trim_start"
                    | "trim_end"
            ) && (of_item(&call.receiver) || again(&call.receiver))
        }
        Expr::Tuple(tuple) => tuple.elems.iter().any(again),
        Expr::Call(call) => {
            matches!(&*call.func, Expr::Path(path) if path.path.is_ident("Some"))
                && call.args.iter().any(again)
        }
        Expr::Paren(paren) => again(&paren.expr),
        _ => false,
    }
}

/// The element type of a written `Vec<T>`, when it names no lifetime (a named one may
/// be the function's, which the closure that makes each value again cannot name alike).
fn element_type(ty: &syn::Type) -> Option<&syn::Type> {
    struct Named(bool);
    impl<'ast> Visit<'ast> for Named {
        fn visit_lifetime(&mut self, lifetime: &'ast syn::Lifetime) {
            self.0 |= lifetime.ident != "_";
        }
    }
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let [syn::GenericArgument::Type(element)] = args.args.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let mut named = Named(false);
    named.visit_type(element);
    (last.ident == "Vec" && path.qself.is_none() && !named.0).then_some(element)
}

/// `Vec::new()`, `std::vec::Vec::new()` or `vec![]`.
fn is_empty_vec(expr: &Expr) -> bool {
    match expr {
        Expr::Call(call) => {
            call.args.is_empty()
                && matches!(&*call.func, Expr::Path(path) if {
                    let segments: Vec<String> =
                        path.path.segments.iter().map(|s| s.ident.to_string()).collect();
                    segments.ends_with(&["Vec".to_owned(), "new".to_owned()])
                })
        }
        Expr::Macro(mac) => mac.mac.path.is_ident("vec") && mac.mac.tokens.is_empty(),
        _ => false,
    }
}

/// The initialiser of `walk`'s `let`, when `stmt` is it and calls the runtime's
/// `function` (`live` for a recomputed loop, `ordered` for one that saves where it is).
fn walk_let<'a>(stmt: &'a Stmt, walk: &Ident, function: &str) -> Option<&'a Expr> {
    let Stmt::Local(local) = stmt else {
        return None;
    };
    let init = &*local.init.as_ref()?.expr;
    (matches!(&local.pat, Pat::Ident(binding) if binding.ident == *walk)
        && live_call(Some(init), function).is_some())
    .then_some(init)
}

/// The call of the runtime's `function` that `expr` is, if it is one.
fn live_call<'a>(expr: Option<&'a Expr>, function: &str) -> Option<&'a syn::ExprCall> {
    match expr? {
        Expr::Call(call) if matches!(&*call.func, Expr::Path(path) if machine_call(&path.path) == Some(function)) => {
            Some(call)
        }
        _ => None,
    }
}

/// A loop the lowering made of a `for` that suspends, as its head reads: its position's
/// local, its item's pattern, and how it finds the item.
#[derive(Clone)]
struct Head {
    position: Ident,
    pat: Pat,
    finds: Finds,
}

#[derive(Clone)]
enum Finds {
    /// A recomputed iterator, `live_item_at(&__itemN, &mut __seenN, &mut __walkN, ..)`.
    Live { walk: Ident },
    /// A collection that saves where it is, `item_at(&__itemN, __walkN.iter()…)`.
    At { walk: Ident, items: Box<Expr> },
}

/// The pushes onto `name` (`name.push(value)`), each with the loop it is directly in.
type Push = (Expr, Option<Head>);

struct Pushes<'a> {
    name: &'a str,
    pushes: Vec<Push>,
    /// The loops around the visit, innermost last (`None`: one of another kind).
    loops: Vec<Option<Head>>,
}

impl<'ast> Visit<'ast> for Pushes<'_> {
    fn visit_expr(&mut self, expr: &'ast Expr) {
        match expr {
            Expr::Loop(expr_loop) => {
                self.loops.push(head(&expr_loop.body));
                syn::visit::visit_expr(self, expr);
                self.loops.pop();
            }
            Expr::ForLoop(_) | Expr::While(_) => {
                self.loops.push(None);
                syn::visit::visit_expr(self, expr);
                self.loops.pop();
            }
            Expr::MethodCall(call)
                if call.method == "push"
                    && call.args.len() == 1
                    && matches!(&*call.receiver, Expr::Path(path) if path.path.is_ident(self.name)) =>
            {
                // Only in the one loop it is in: a value from an inner loop's item is not
                // found by the outer loop's position.
                let head = match self.loops.as_slice() {
                    [Some(head)] => Some(head.clone()),
                    _ => None,
                };
                self.pushes.push((call.args[0].clone(), head));
                syn::visit::visit_expr(self, expr);
            }
            Expr::Closure(_) | Expr::Async(_) => {}
            _ => syn::visit::visit_expr(self, expr),
        }
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// The head of a loop the lowering made of a `for`: `let __itemN = advance(..);` then
/// `let Some(PAT) = live_item_at(..)` or `item_at(..)` `else { break; };`.
fn head(body: &syn::Block) -> Option<Head> {
    let Stmt::Local(local) = body.stmts.get(1)? else {
        return None;
    };
    let init = local.init.as_ref().map(|init| &*init.expr);
    let Pat::TupleStruct(some) = &local.pat else {
        return None;
    };
    let pat = some.elems.first()?.clone();
    if let Some(call) = live_call(init, "live_item_at") {
        return Some(Head {
            position: path_of(call.args.first()?)?,
            pat,
            finds: Finds::Live {
                walk: path_of(call.args.iter().nth(2)?)?,
            },
        });
    }
    let call = live_call(init, "item_at")?;
    let items = call.args.iter().nth(1)?.clone();
    // Over the collection borrowed shared (`__walkN`, or a chain of methods of it).
    let mut root = &items;
    while let Expr::MethodCall(inner) = root {
        root = &inner.receiver;
    }
    let Expr::Path(walk) = root else {
        return None;
    };
    Some(Head {
        position: path_of(call.args.first()?)?,
        pat,
        finds: Finds::At {
            walk: walk.path.get_ident()?.clone(),
            items: Box::new(items),
        },
    })
}

/// The local a `&local`, `&mut local` or `local` argument names.
fn path_of(expr: &Expr) -> Option<Ident> {
    match expr {
        Expr::Reference(reference) => path_of(&reference.expr),
        Expr::Path(path) => path.path.get_ident().cloned(),
        _ => None,
    }
}

/// The push onto `name` taken out (`()`), to check what else is done with it.
struct Unpush<'a> {
    name: &'a str,
}

impl VisitMut for Unpush<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if let Expr::MethodCall(call) = expr
            && call.method == "push"
            && matches!(&*call.receiver, Expr::Path(path) if path.path.is_ident(self.name))
        {
            *expr = syn::parse_quote!(());
            return;
        }
        // A push in a closure is none of the loop's: left to be seen as a change.
        if matches!(expr, Expr::Closure(_) | Expr::Async(_)) {
            return;
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }
}

/// Each push onto `name` recording its position and its number: `name.push(
/// __private::pushed(&mut __pushedN, &__itemM, SITE, value))`.
struct Record<'a> {
    name: &'a str,
    at: &'a Ident,
    position: &'a Ident,
    site: u32,
}

impl VisitMut for Record<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        match expr {
            Expr::MethodCall(call)
                if call.method == "push"
                    && call.args.len() == 1
                    && matches!(&*call.receiver, Expr::Path(path) if path.path.is_ident(self.name)) =>
            {
                let value = &call.args[0];
                let span = value.span();
                let private = private_path();
                let (at, position, site) = (self.at, self.position, self.site);
                call.args[0] = syn::parse_quote_spanned! {span=>
                    #private::pushed(&mut #at, &#position, #site, #value)
                };
                self.site += 1;
            }
            // In the order `Pushes` visits them: not into closures.
            Expr::Closure(_) | Expr::Async(_) => {}
            _ => syn::visit_mut::visit_expr_mut(self, expr),
        }
    }
}

/// Whether `value` holds what leaves where it is written: `return`, `?`, `break`,
/// `continue`, or a suspension (outside closures and `async` blocks).
fn leaves(value: &Expr) -> bool {
    struct Leaves(bool);
    impl<'ast> Visit<'ast> for Leaves {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            match expr {
                Expr::Return(_) | Expr::Try(_) | Expr::Break(_) | Expr::Continue(_) => {
                    self.0 = true
                }
                Expr::Closure(_) | Expr::Async(_) => {}
                _ => syn::visit::visit_expr(self, expr),
            }
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut leaves = Leaves(false);
    leaves.visit_expr(value);
    leaves.0 || crate::tool::lower::changes::has_site(value)
}
