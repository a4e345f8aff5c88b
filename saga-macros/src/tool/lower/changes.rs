//! What an expression changes, and whether it suspends: what decides that running it
//! again after a restore gives what it gave (`recompute`, `gather`).

use std::collections::HashSet;

use syn::visit::Visit;
use syn::{Expr, Stmt};

use crate::tool::lower::suspends::SITE_MACRO;

/// Whether `expr` writes anything or borrows mutably: `&mut`, `=`, `+=`, a `_mut` method,
/// a write through a shared reference (`fetch_add`, `set`, `lock`: [`INTERIOR_WRITES`]);
/// but for what it writes of a local it binds itself (a `{ let mut picked = …; …;
/// picked }` that [`lets`] gathers), which is its own computation, made again with it.
pub fn changes_something(expr: &Expr) -> bool {
    let inner = bound_in_expr(expr);
    let own = |target: &Expr| place_root_name(target).is_some_and(|name| inner.contains(&name));
    struct Changes<'a>(bool, &'a dyn Fn(&Expr) -> bool);
    impl<'ast> Visit<'ast> for Changes<'_> {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            match expr {
                Expr::Reference(reference) if reference.mutability.is_some() => {
                    self.0 |= !(self.1)(&reference.expr);
                    syn::visit::visit_expr(self, expr);
                }
                Expr::Assign(assign) => {
                    self.0 |= !(self.1)(&assign.left);
                    syn::visit::visit_expr(self, expr);
                }
                Expr::Binary(binary) if compound_assign(&binary.op) => {
                    self.0 |= !(self.1)(&binary.left);
                    syn::visit::visit_expr(self, expr);
                }
                Expr::MethodCall(call)
                    if call.method.to_string().ends_with("_mut")
                        || writes_through_shared(&call.method.to_string()) =>
                {
                    self.0 |= !(self.1)(&call.receiver);
                    syn::visit::visit_expr(self, expr);
                }
                _ => syn::visit::visit_expr(self, expr),
            }
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut changes = Changes(false, &own);
    changes.visit_expr(expr);
    changes.0
}

/// The standard library's methods that write through a shared reference (interior
/// mutability: a `Cell`, an atomic, a lock): `hits.fetch_add(1, ..)` in an `inspect` of a
/// recomputed `let`, run again after a restore, would count again. Only names no reading
/// method of the standard library shares.
const INTERIOR_WRITES: &[&str] = &[
    "set",
    "borrow_mut",
    "try_borrow_mut",
    "store",
    "swap",
    "update",
    "lock",
    "try_lock",
    "write",
    "try_write",
    "get_or_init",
    "compare_exchange",
    "compare_exchange_weak",
];

/// Whether a method named `method` may write through a shared reference.
fn writes_through_shared(method: &str) -> bool {
    INTERIOR_WRITES.contains(&method) || method.starts_with("fetch_")
}

/// The names the patterns inside `expr` bind (its `let`s, loops, closures, arms).
pub fn bound_in_expr(expr: &Expr) -> HashSet<String> {
    let mut bound = Bound(HashSet::new());
    bound.visit_expr(expr);
    bound.0
}

/// [`bound_in_expr`] of statements.
pub fn bound_in_stmts(stmts: &[Stmt]) -> HashSet<String> {
    let mut bound = Bound(HashSet::new());
    stmts.iter().for_each(|stmt| bound.visit_stmt(stmt));
    bound.0
}

/// Collects the names patterns bind.
struct Bound(HashSet<String>);

impl<'ast> Visit<'ast> for Bound {
    fn visit_pat_ident(&mut self, pat_ident: &'ast syn::PatIdent) {
        self.0.insert(pat_ident.ident.to_string());
        syn::visit::visit_pat_ident(self, pat_ident);
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// The local a place is rooted in (`picked` in `picked[0].x`, `*picked`), if any.
pub fn place_root_name(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Path(path) => Some(path.path.get_ident()?.to_string()),
        Expr::Field(field) => place_root_name(&field.base),
        Expr::Index(index) => place_root_name(&index.expr),
        Expr::Unary(unary) => place_root_name(&unary.expr),
        Expr::Paren(paren) => place_root_name(&paren.expr),
        Expr::Group(group) => place_root_name(&group.expr),
        _ => None,
    }
}

/// Whether `expr` holds a suspension the lowering has marked (`__saga_site!(N)`), or an
/// `.await` of anything.
pub fn has_site(expr: &Expr) -> bool {
    let mut site = Site(false);
    site.visit_expr(expr);
    site.0
}

/// Finds a suspension: a `__saga_site!(N)` or an `.await`.
struct Site(bool);

impl<'ast> Visit<'ast> for Site {
    fn visit_expr_await(&mut self, _: &'ast syn::ExprAwait) {
        self.0 = true;
    }
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.0 |= mac.path.is_ident(SITE_MACRO);
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Whether `stmt` holds a suspension the lowering has marked, or an `.await`.
pub fn stmt_has_site(stmt: &Stmt) -> bool {
    let mut site = Site(false);
    site.visit_stmt(stmt);
    site.0
}

/// `+=` and the other operators that assign.
pub fn compound_assign(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_)
            | SubAssign(_)
            | MulAssign(_)
            | DivAssign(_)
            | RemAssign(_)
            | BitXorAssign(_)
            | BitAndAssign(_)
            | BitOrAssign(_)
            | ShlAssign(_)
            | ShrAssign(_)
    )
}
