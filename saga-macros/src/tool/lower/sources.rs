//! What each local is made from: the locals read by the expressions that bind it (its
//! `let`, a `for` loop's collection, a `match` or `if let`'s scrutinee), that assign it
//! (`best = Some(f)`), or that a method called on it takes (`picked.push(m)`). Followed to
//! a fixed point, they are the locals a value that holds borrows may point into: the
//! roots it is saved among when it is kept as where its borrows point (the runtime's
//! `located`). Only a superset matters: a local that is not a root of what it borrows is
//! refused when saved, never misread.

use std::collections::{BTreeSet, HashMap, HashSet};

use syn::visit::Visit;
use syn::{Block, Expr, Pat};

use crate::tool::lower::scope::{free_in_expr, pattern_bindings};

/// The locals each local of a body is made from, directly; which may hold a borrow of
/// them; and which may have been moved.
#[derive(Default, Clone, PartialEq, Eq)]
pub struct Sources {
    made_from: HashMap<String, BTreeSet<String>>,
    /// Locals given a value that may be a borrow (see [`borrow_like`]), or whose written
    /// type holds a reference.
    borrowing: HashSet<String>,
    /// Locals used by value somewhere (see `Moves`): perhaps moved, so never kept alive
    /// for another's sake.
    moved: HashSet<String>,
}

impl Sources {
    /// The sources of the locals of `block`.
    pub fn of(block: &Block) -> Sources {
        let mut collect = Collect(Sources::default());
        collect.visit_block(block);
        let mut moves = Moves(HashSet::new());
        moves.visit_block(block);
        collect.0.moved = moves.0;
        collect.0
    }

    /// The locals a value of `name` may borrow from, to be kept with it at a suspension
    /// though the continuation does not read them: when `name` may hold a borrow, the
    /// locals it is made from that are never used by value (so never moved). Which of
    /// them are in scope, not `mut` and declared before it, the caller decides.
    pub fn kept_with(&self, name: &str) -> Vec<String> {
        let mut kept = self.borrowed_from(name);
        kept.retain(|source| !self.moved.contains(source));
        kept
    }

    /// The locals `name` is made from when it may hold a borrow (see [`borrow_like`]);
    /// none when it holds none.
    pub fn borrowed_from(&self, name: &str) -> Vec<String> {
        if !self.borrowing.contains(name) {
            return Vec::new();
        }
        self.of_local(name).into_iter().collect()
    }

    /// The locals `name` is made from, directly or through others.
    pub fn of_local(&self, name: &str) -> BTreeSet<String> {
        let mut found: BTreeSet<String> = BTreeSet::new();
        let mut stack = vec![name.to_owned()];
        while let Some(next) = stack.pop() {
            for source in self.made_from.get(&next).into_iter().flatten() {
                if source != name && found.insert(source.clone()) {
                    stack.push(source.clone());
                }
            }
        }
        found
    }

    fn bind(&mut self, pat: &Pat, from: &Expr) {
        let free = free_in_expr(from);
        let borrowing = borrow_like(from) || written_reference(pat);
        pattern_bindings(pat, &mut |ident, _| {
            let name = ident.to_string();
            if borrowing {
                self.borrowing.insert(name.clone());
            }
            self.made_from
                .entry(name)
                .or_default()
                .extend(free.iter().cloned());
        });
    }

    fn assign(&mut self, target: &Expr, from: &Expr) {
        if let Some(name) = root_local(target) {
            let free = free_in_expr(from);
            if borrow_like(from) {
                self.borrowing.insert(name.clone());
            }
            self.made_from.entry(name).or_default().extend(free);
        }
    }
}

/// Whether a pattern's written type holds a reference (`let picked: Vec<&Member>`).
fn written_reference(pat: &Pat) -> bool {
    struct Reference(bool);
    impl<'ast> Visit<'ast> for Reference {
        fn visit_type_reference(&mut self, _: &'ast syn::TypeReference) {
            self.0 = true;
        }
    }
    match pat {
        Pat::Type(typed) => {
            let mut found = Reference(false);
            found.visit_type(&typed.ty);
            found.0
        }
        _ => false,
    }
}

/// The standard methods that give a borrow of what they are called on (`v.first()`,
/// `it.max_by_key(..)`, `o.unwrap_or(..)`): a `let` made by one may hold a borrow. Any
/// other method's result (`len`, `clone`, a user's method) is taken as owned, so that what
/// it reads is not kept for its sake.
const ACCESSORS: &[&str] = &[
    "first",
    "last",
    "get",
    "find",
    "max_by_key",
    "min_by_key",
    "max_by",
    "min_by",
    "max",
    "min",
    "as_ref",
    "as_deref",
    "as_str",
    "as_slice",
    "split_first",
    "split_last",
    "unwrap",
    "unwrap_or",
    "expect",
    "or",
    "nth",
    "next",
    "next_back",
    "last_mut",
    "first_mut",
];

/// The methods that add to what they are called on (`picked.push(m)`): what they take is
/// given to it, as an assignment gives.
const ADDS: &[&str] = &[
    "push",
    "push_back",
    "push_front",
    "insert",
    "extend",
    "append",
];

/// Whether a value given to a local may be a borrow of another: a local (which may be a
/// reference), a reference, a standard accessor's result (`v.first()`), or such a value
/// wrapped (`Some(f)`, `(f, 1)`, an `if` or `match` giving one). A field or an element
/// read by value is a copy or a move, not a borrow; numbers, strings made by `format!`,
/// a function's result are not either.
fn borrow_like(expr: &Expr) -> bool {
    match expr {
        Expr::Path(_) | Expr::Reference(_) => true,
        Expr::Paren(paren) => borrow_like(&paren.expr),
        Expr::Group(group) => borrow_like(&group.expr),
        Expr::MethodCall(call) => ACCESSORS.contains(&call.method.to_string().as_str()),
        Expr::Call(call) => {
            // A variant or tuple struct made of one (`Some(f)`), by its capitalised name.
            let wraps = matches!(&*call.func, Expr::Path(path)
            if path.path.segments.last().is_some_and(|segment| {
                segment.ident.to_string().starts_with(char::is_uppercase)
            }));
            wraps && call.args.iter().any(borrow_like)
        }
        Expr::Tuple(tuple) => tuple.elems.iter().any(borrow_like),
        Expr::Array(array) => array.elems.iter().any(borrow_like),
        Expr::If(each) => {
            each.then_branch.stmts.last().is_some_and(stmt_borrow_like)
                || each
                    .else_branch
                    .as_ref()
                    .is_some_and(|(_, other)| borrow_like(other))
        }
        Expr::Block(block) => block.block.stmts.last().is_some_and(stmt_borrow_like),
        Expr::Match(each) => each.arms.iter().any(|arm| borrow_like(&arm.body)),
        _ => false,
    }
}

fn stmt_borrow_like(stmt: &syn::Stmt) -> bool {
    matches!(stmt, syn::Stmt::Expr(expr, None) if borrow_like(expr))
}

/// The locals used by value: moved, perhaps (a bare local given to a function, a
/// method, a `let`, a `for` loop, returned, or the receiver of an `into_…` method).
struct Moves(HashSet<String>);

impl Moves {
    fn value(&mut self, expr: &Expr) {
        if let Expr::Path(path) = expr
            && path.qself.is_none()
            && let Some(ident) = path.path.get_ident()
        {
            self.0.insert(ident.to_string());
        }
    }
}

impl<'ast> Visit<'ast> for Moves {
    fn visit_local(&mut self, local: &'ast syn::Local) {
        if let Some(init) = &local.init {
            self.value(&init.expr);
        }
        syn::visit::visit_local(self, local);
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        call.args.iter().for_each(|arg| self.value(arg));
        syn::visit::visit_expr_call(self, call);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        call.args.iter().for_each(|arg| self.value(arg));
        let method = call.method.to_string();
        if method.starts_with("into") || method.starts_with("unwrap") || method == "expect" {
            self.value(&call.receiver);
        }
        syn::visit::visit_expr_method_call(self, call);
    }

    fn visit_expr_for_loop(&mut self, each: &'ast syn::ExprForLoop) {
        self.value(&each.expr);
        syn::visit::visit_expr_for_loop(self, each);
    }

    fn visit_expr_let(&mut self, each: &'ast syn::ExprLet) {
        self.value(&each.expr);
        syn::visit::visit_expr_let(self, each);
    }

    fn visit_expr_try(&mut self, each: &'ast syn::ExprTry) {
        self.value(&each.expr);
        syn::visit::visit_expr_try(self, each);
    }

    fn visit_expr_match(&mut self, each: &'ast syn::ExprMatch) {
        self.value(&each.expr);
        syn::visit::visit_expr_match(self, each);
    }

    fn visit_expr_return(&mut self, each: &'ast syn::ExprReturn) {
        if let Some(expr) = &each.expr {
            self.value(expr);
        }
        syn::visit::visit_expr_return(self, each);
    }

    fn visit_expr_assign(&mut self, each: &'ast syn::ExprAssign) {
        self.value(&each.right);
        syn::visit::visit_expr_assign(self, each);
    }

    fn visit_expr_struct(&mut self, each: &'ast syn::ExprStruct) {
        each.fields.iter().for_each(|field| self.value(&field.expr));
        syn::visit::visit_expr_struct(self, each);
    }

    fn visit_expr_tuple(&mut self, each: &'ast syn::ExprTuple) {
        each.elems.iter().for_each(|elem| self.value(elem));
        syn::visit::visit_expr_tuple(self, each);
    }

    fn visit_expr_closure(&mut self, each: &'ast syn::ExprClosure) {
        if each.capture.is_some() {
            crate::tool::lower::scope::free_in_expr(&each.body)
                .into_iter()
                .for_each(|name| {
                    self.0.insert(name);
                });
        }
        syn::visit::visit_expr_closure(self, each);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // Formatting macros take their arguments by reference; any other macro's
        // arguments may be moved (`vec![SamplingMessage::user(question)]`): what its tokens
        // name is taken as used by value.
        let name = mac
            .path
            .segments
            .last()
            .map(|segment| segment.ident.to_string())
            .unwrap_or_default();
        if !BY_REFERENCE.contains(&name.as_str()) {
            names_in(mac.tokens.clone(), &mut self.0);
        }
        syn::visit::visit_macro(self, mac);
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// The macros whose arguments are read by reference.
const BY_REFERENCE: &[&str] = &[
    "format",
    "format_args",
    "print",
    "println",
    "eprint",
    "eprintln",
    "write",
    "writeln",
    "panic",
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "matches",
    "trace",
    "debug",
    "info",
    "warn",
    "error",
    "todo",
    "unimplemented",
    "unreachable",
];

/// Every identifier in `tokens`, into `names`.
fn names_in(tokens: proc_macro2::TokenStream, names: &mut HashSet<String>) {
    for token in tokens {
        match token {
            proc_macro2::TokenTree::Ident(ident) => {
                names.insert(ident.to_string());
            }
            proc_macro2::TokenTree::Group(group) => names_in(group.stream(), names),
            _ => {}
        }
    }
}

/// The local at the root of a place (`picked`, `a.b[0]`), if it is one.
fn root_local(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Path(path) if path.qself.is_none() => path.path.get_ident().map(ToString::to_string),
        Expr::Field(field) => root_local(&field.base),
        Expr::Index(index) => root_local(&index.expr),
        Expr::Paren(paren) => root_local(&paren.expr),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Deref(_),
            expr,
            ..
        }) => root_local(expr),
        _ => None,
    }
}

struct Collect(Sources);

impl<'ast> Visit<'ast> for Collect {
    fn visit_local(&mut self, local: &'ast syn::Local) {
        if let Some(init) = &local.init {
            self.0.bind(&local.pat, &init.expr);
        }
        syn::visit::visit_local(self, local);
    }

    fn visit_expr_for_loop(&mut self, each: &'ast syn::ExprForLoop) {
        self.0.bind(&each.pat, &each.expr);
        syn::visit::visit_expr_for_loop(self, each);
    }

    fn visit_expr_let(&mut self, each: &'ast syn::ExprLet) {
        self.0.bind(&each.pat, &each.expr);
        syn::visit::visit_expr_let(self, each);
    }

    fn visit_expr_match(&mut self, each: &'ast syn::ExprMatch) {
        for arm in &each.arms {
            self.0.bind(&arm.pat, &each.expr);
        }
        syn::visit::visit_expr_match(self, each);
    }

    fn visit_expr_assign(&mut self, each: &'ast syn::ExprAssign) {
        self.0.assign(&each.left, &each.right);
        syn::visit::visit_expr_assign(self, each);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        if ADDS.contains(&call.method.to_string().as_str()) {
            for arg in &call.args {
                self.0.assign(&call.receiver, arg);
            }
        }
        syn::visit::visit_expr_method_call(self, call);
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}
