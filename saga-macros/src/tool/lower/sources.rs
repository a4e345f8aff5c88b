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
    /// type holds a reference: what they are made from may be a root of theirs.
    borrowing: HashSet<String>,
    /// Locals that visibly hold borrows built up over statements: their written type
    /// holds a reference, or a borrow is assigned or pushed to them (`best = Some(f)`,
    /// `picked.push(m)`), or they are bound from one (`let Some(best) = best`). Only for
    /// their sake are roots the code does not read kept: a guess wrong the other way
    /// would change what tools that hold no borrow save.
    building: HashSet<String>,
    /// Bindings made from a local as it is (`let Some(x) = y`), by the local.
    bound_from: HashMap<String, String>,
    /// Locals used by value somewhere (see `Moves`): perhaps moved, so never kept alive
    /// for another's sake.
    moved: HashSet<String>,
    /// Locals whose written type holds a `&str` that is not `'static` (`let mut picked:
    /// Vec<&str>`): saved as where their texts point when they hold borrows of the roots
    /// (the runtime's `Texts`). The type is what tells: a `&str` is also `Deserialize`,
    /// so rustc cannot choose for the local. Or, for a local whose type is not written,
    /// one given a text plainly (see [`gives_text`]).
    texts: HashSet<String>,
    /// Locals bound with their type written: the type, not what is given to them, says
    /// whether they hold a `&str`.
    typed: HashSet<String>,
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
        if !self.builds(name, 0) {
            return Vec::new();
        }
        let mut kept = self.borrowed_from(name);
        kept.retain(|source| !self.moved.contains(source));
        kept
    }

    /// Whether `name` visibly holds borrows (see `building`) but nothing it is made from
    /// is in sight (a macro of the user's pushes to it, `keep!(picked, t.title.as_str())`):
    /// any local kept with it may then be a root. Only a superset matters (see the module),
    /// and such a local had no roots before, so no layout that compiled changes.
    pub fn unseen(&self, name: &str) -> bool {
        self.borrowing.contains(name) && self.builds(name, 0) && self.of_local(name).is_empty()
    }

    /// Whether `name` may have been moved (see `moved`).
    pub fn moved(&self, name: &str) -> bool {
        self.moved.contains(name)
    }

    /// Whether `name`'s written type holds a `&str` that is not `'static` (see `texts`).
    pub fn holds_text(&self, name: &str) -> bool {
        self.texts_at(name, 0)
    }

    /// [`Sources::holds_text`], through the bindings made from a local as it is (`let
    /// Some(who) = best else …` holds a text when `best` does).
    fn texts_at(&self, name: &str, depth: usize) -> bool {
        self.texts.contains(name)
            || (depth < 8
                && !self.typed.contains(name)
                && self
                    .bound_from
                    .get(name)
                    .is_some_and(|from| self.texts_at(from, depth + 1)))
    }

    /// Whether `name` visibly holds borrows built up over statements (see `building`).
    fn builds(&self, name: &str, depth: usize) -> bool {
        self.building.contains(name)
            || (depth < 8
                && self
                    .bound_from
                    .get(name)
                    .is_some_and(|from| self.builds(from, depth + 1)))
    }

    /// The locals `name` is made from when it may hold a borrow (see [`borrow_like`]);
    /// none when it holds none.
    pub fn borrowed_from(&self, name: &str) -> Vec<String> {
        if !self.borrowing.contains(name) {
            return Vec::new();
        }
        self.of_local(name).into_iter().collect()
    }

    /// The locals `name` is made from, directly or through others that may hold
    /// borrows: a local that holds none (a `String` made by `format!`) is where a borrow
    /// could point, not a way to another.
    pub fn of_local(&self, name: &str) -> BTreeSet<String> {
        let mut found: BTreeSet<String> = BTreeSet::new();
        let mut stack = vec![name.to_owned()];
        while let Some(next) = stack.pop() {
            for source in self.made_from.get(&next).into_iter().flatten() {
                if source != name && found.insert(source.clone()) && self.borrowing.contains(source)
                {
                    stack.push(source.clone());
                }
            }
        }
        found
    }

    fn bind(&mut self, pat: &Pat, from: &Expr) {
        let free = free_in_expr(from);
        // A binding through `&` (`match &pair { (Some(x), _) => … }`) holds a borrow of
        // it as plainly as a written `&T` does.
        let written = written_reference(pat) || matches!(from, Expr::Reference(_));
        // Bound from a local that may hold a borrow, the expansion's own too (a
        // scrutinee kept in a recomputed `__keptN`, see `recompute`).
        let of_borrowing = match from {
            Expr::Path(path) => path
                .path
                .get_ident()
                .is_some_and(|ident| self.borrowing.contains(&ident.to_string())),
            _ => false,
        };
        let borrowing = borrow_like(from) || written || of_borrowing;
        let from_local = local_name(from);
        let text = written_text(pat);
        let typed = matches!(pat, Pat::Type(_));
        pattern_bindings(pat, &mut |ident, _| {
            let name = ident.to_string();
            if text {
                self.texts.insert(name.clone());
            }
            if typed {
                self.typed.insert(name.clone());
            }
            if borrowing {
                self.borrowing.insert(name.clone());
            }
            if written {
                self.building.insert(name.clone());
            }
            if let Some(from) = &from_local {
                self.bound_from.insert(name.clone(), from.clone());
            }
            self.made_from
                .entry(name)
                .or_default()
                .extend(free.iter().cloned());
        });
    }

    /// `target` given `from`: one value (`one_value`: an assignment, a `push`, an
    /// `insert`), or a collection of them (`extend`, `append`).
    fn assign(&mut self, target: &Expr, from: &Expr, one_value: bool) {
        if let Some(name) = root_local(target) {
            let free = free_in_expr(from);
            if borrow_like(from) {
                self.borrowing.insert(name.clone());
            }
            if plainly_borrow(from, &self.borrowing) {
                self.building.insert(name.clone());
            }
            // A text given to a local whose type is not written (`best =
            // Some(f.street.as_str())`, `labels.push("none")`): it holds a `&str`, which
            // only the macro can tell rustc to keep where it points (see `texts`). Not
            // through `extend`/`append`, whose argument is a collection.
            if one_value && !self.typed.contains(&name) && gives_text(from) {
                self.borrowing.insert(name.clone());
                self.building.insert(name.clone());
                self.texts.insert(name.clone());
            }
            self.made_from.entry(name).or_default().extend(free);
        }
    }
}

/// Whether a `for` loop over `expr` walks borrowed items: `&v`, or a chain of methods on a
/// place none of which copies or takes what it walks (`clone`, `cloned`, `into_iter`,
/// `collect`, …): `v.iter().enumerate()`, `map.values()`.
fn walks_borrowed(expr: &Expr) -> bool {
    match expr {
        Expr::Reference(_) => true,
        Expr::Paren(paren) => walks_borrowed(&paren.expr),
        Expr::MethodCall(call) => {
            let method = call.method.to_string();
            !OWNING.contains(&method.as_str())
                && !method.starts_with("into")
                && !matches!(method.as_str(), "drain" | "collect")
                && match &*call.receiver {
                    Expr::MethodCall(_) | Expr::Reference(_) | Expr::Paren(_) => {
                        walks_borrowed(&call.receiver)
                    }
                    receiver => root_local(receiver).is_some(),
                }
        }
        _ => false,
    }
}

/// The local `expr` is, if it is a bare local (`y` in `let Some(x) = y`).
fn local_name(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Path(path) if path.qself.is_none() => path
            .path
            .get_ident()
            .map(ToString::to_string)
            .filter(|name| !name.starts_with(char::is_uppercase)),
        Expr::Paren(paren) => local_name(&paren.expr),
        Expr::Reference(reference) => local_name(&reference.expr),
        _ => None,
    }
}

/// Whether a value assigned or pushed plainly is a borrow, or holds one: a local that
/// may hold one (`f`, the item of a loop over borrowed data), a reference, or such a value
/// wrapped (`Some(f)`, `(team, i)`); not a method's result, nor a field or an element read
/// by value, nor a local that owns what it holds (`rest.extend(listed)`).
fn plainly_borrow(expr: &Expr, borrowing: &HashSet<String>) -> bool {
    match expr {
        Expr::Path(_) => local_name(expr).is_some_and(|name| {
            borrowing.contains(&name)
                && !crate::tool::ir::written(&proc_macro2::Ident::new(
                    &name,
                    proc_macro2::Span::call_site(),
                ))
                .starts_with("__")
        }),
        Expr::Reference(_) => true,
        Expr::Paren(paren) => plainly_borrow(&paren.expr, borrowing),
        Expr::Call(call) => {
            matches!(&*call.func, Expr::Path(path)
            if path.path.segments.last().is_some_and(|segment| {
                segment.ident.to_string().starts_with(char::is_uppercase)
            })) && call.args.iter().any(|arg| plainly_borrow(arg, borrowing))
        }
        Expr::Tuple(tuple) => tuple
            .elems
            .iter()
            .any(|elem| plainly_borrow(elem, borrowing)),
        _ => false,
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

/// Whether `expr` plainly gives a `&str` (or holds one): a string literal, a method of
/// `str` that returns a part of it (`.as_str()`, `.trim()`), or such a value in `Some`, a
/// tuple, or a branch of an `if` or a `match` (whose branches are all of its type). Not a
/// range of a place (`&name[1..]` may be a slice of bytes as well).
fn gives_text(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(_),
            ..
        }) => true,
        Expr::MethodCall(call) => TEXT_METHODS.contains(&call.method.to_string().as_str()),
        Expr::Paren(paren) => gives_text(&paren.expr),
        Expr::Group(group) => gives_text(&group.expr),
        Expr::Call(call) => {
            matches!(&*call.func, Expr::Path(path) if path.path.is_ident("Some"))
                && call.args.iter().any(gives_text)
        }
        Expr::Tuple(tuple) => tuple.elems.iter().any(gives_text),
        Expr::If(each) => {
            block_gives_text(&each.then_branch)
                || each
                    .else_branch
                    .as_ref()
                    .is_some_and(|(_, other)| gives_text(other))
        }
        Expr::Block(block) => block_gives_text(&block.block),
        Expr::Match(each) => each.arms.iter().any(|arm| gives_text(&arm.body)),
        _ => false,
    }
}

fn block_gives_text(block: &Block) -> bool {
    matches!(block.stmts.last(), Some(syn::Stmt::Expr(last, None)) if gives_text(last))
}

/// The methods of `str` that return a part of it.
const TEXT_METHODS: &[&str] = &[
    "as_str",
    "trim",
    "trim_start",
    "trim_end",
    "trim_matches",
    "trim_start_matches",
    "trim_end_matches",
];

/// Whether a pattern's written type holds a `&str` that is not `'static` (`let mut
/// picked: Vec<&str>`, `Option<(&str, u32)>`).
fn written_text(pat: &Pat) -> bool {
    struct Text(bool);
    impl<'ast> Visit<'ast> for Text {
        fn visit_type_reference(&mut self, reference: &'ast syn::TypeReference) {
            let is_str = matches!(&*reference.elem, syn::Type::Path(path)
                if path.qself.is_none() && path.path.is_ident("str"));
            let is_static = reference
                .lifetime
                .as_ref()
                .is_some_and(|lifetime| lifetime.ident == "static");
            if is_str && reference.mutability.is_none() && !is_static {
                self.0 = true;
            }
            syn::visit::visit_type_reference(self, reference);
        }
    }
    match pat {
        Pat::Type(typed) => {
            let mut found = Text(false);
            found.visit_type(&typed.ty);
            found.0
        }
        _ => false,
    }
}

/// The methods whose result owns what it holds: a value made by one is no borrow. Any
/// other method's result may be one (`v.first()`, `x.trim()`, `o.map(|(d, _)| *d)`).
const OWNING: &[&str] = &[
    "clone",
    "cloned",
    "copied",
    "to_owned",
    "to_string",
    "to_vec",
    "into",
    "len",
    "count",
    "sum",
    "product",
    "parse",
    "is_empty",
    "is_some",
    "is_none",
    "contains",
    "starts_with",
    "ends_with",
    "to_lowercase",
    "to_uppercase",
    "join",
    "concat",
    "format",
    "collect_vec",
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
/// reference), a reference, a method's result but one that owns what it makes (`v.first()`,
/// not `v.len()`), or such a value wrapped (`Some(f)`, `(f, 1)`, an `if` or `match` giving
/// one). A field or an element read by value is a copy or a move, not a borrow; numbers,
/// strings made by `format!`, a function's result are not either. A guess both ways: it
/// only decides which locals a value's roots are looked for among.
fn borrow_like(expr: &Expr) -> bool {
    match expr {
        // A local (a single lowercase name), not a variant or a constant (`Action::Noop`,
        // `None`, `LIMIT`), which owns what it holds.
        // The expansion's own locals (`__item1`) are followed through the calls that make
        // them instead.
        Expr::Path(path) => {
            path.qself.is_none()
                && path.path.get_ident().is_some_and(|ident| {
                    !ident.to_string().starts_with(char::is_uppercase)
                        && !crate::tool::ir::written(ident).starts_with("__")
                })
        }
        Expr::Reference(_) => true,
        Expr::Paren(paren) => borrow_like(&paren.expr),
        Expr::Group(group) => borrow_like(&group.expr),
        // Not a method of the expansion's own locals: a loop over owned items takes each
        // from its saved rest (`__rest1`), which holds no borrow.
        Expr::MethodCall(call) => {
            !OWNING.contains(&call.method.to_string().as_str())
                && !root_local(&call.receiver).is_some_and(|name| {
                    crate::tool::ir::written(&proc_macro2::Ident::new(
                        &name,
                        proc_macro2::Span::call_site(),
                    ))
                    .starts_with("__")
                })
        }
        Expr::Call(call) => {
            // A variant or tuple struct made of one (`Some(f)`), by its capitalised name;
            // or the lowering's own step of a loop over borrowed items (`item_at(..)`
            // through saga's `__private`), which hands on what the loop borrows.
            let wraps = matches!(&*call.func, Expr::Path(path)
            if path.path.segments.last().is_some_and(|segment| {
                segment.ident.to_string().starts_with(char::is_uppercase)
            }));
            // The lowering's own steps of a loop over borrowed items hand on what the loop
            // borrows (`ordered(&flats)`, `item_at(&__item1, __walk1)`); a loop over owned
            // items takes them from its saved rest instead.
            let lowered = match &*call.func {
                Expr::Path(path) => {
                    let mut names = path.path.segments.iter().rev().map(|s| s.ident.to_string());
                    let (last, parent) = (names.next(), names.next());
                    parent.as_deref() == Some("__private")
                        && matches!(
                            last.as_deref(),
                            Some(
                                "ordered"
                                    | "ordered_mut"
                                    | "zipped"
                                    | "zipped_mut"
                                    | "item_at"
                                    | "constant_item_at"
                                    | "live"
                                    | "live_item_at"
                                    // A `let` recomputed after a restore hands on
                                    // what its expression borrows.
                                    | "recomputed"
                                    | "recomputed_again"
                            )
                        )
                }
                _ => false,
            };
            lowered || (wraps && call.args.iter().any(borrow_like))
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
    /// `expr`, used by value: the local it is, or whose field or element it is (a part
    /// moved out leaves the local partly moved).
    fn value(&mut self, expr: &Expr) {
        if let Some(name) = root_local(expr) {
            self.0.insert(name);
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
        // A method may take its receiver by value (`opt.map(..)`, `v.into_iter()`): only
        // those known to borrow it leave it where it is.
        if !BORROWS_RECEIVER.contains(&call.method.to_string().as_str()) {
            self.value(&call.receiver);
        }
        syn::visit::visit_expr_method_call(self, call);
    }

    fn visit_expr_binary(&mut self, each: &'ast syn::ExprBinary) {
        // Arithmetic takes its operands by value (`a + "x"` moves a `String`).
        if !matches!(
            each.op,
            syn::BinOp::Eq(_)
                | syn::BinOp::Ne(_)
                | syn::BinOp::Lt(_)
                | syn::BinOp::Le(_)
                | syn::BinOp::Gt(_)
                | syn::BinOp::Ge(_)
                | syn::BinOp::And(_)
                | syn::BinOp::Or(_)
        ) {
            self.value(&each.left);
            self.value(&each.right);
        }
        syn::visit::visit_expr_binary(self, each);
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

/// The standard methods that borrow their receiver: a local they are called on is not
/// moved by them.
const BORROWS_RECEIVER: &[&str] = &[
    "iter",
    "len",
    "is_empty",
    "get",
    "first",
    "last",
    "contains",
    "contains_key",
    "keys",
    "values",
    "as_ref",
    "as_deref",
    "as_str",
    "as_slice",
    "as_bytes",
    "clone",
    "to_owned",
    "to_string",
    "to_vec",
    "trim",
    "trim_start",
    "trim_end",
    "lines",
    "split",
    "split_whitespace",
    "split_once",
    "chars",
    "bytes",
    "char_indices",
    "starts_with",
    "ends_with",
    "find",
    "rfind",
    "windows",
    "chunks",
    "binary_search",
    "get_key_value",
    "range",
    "eq",
    "ne",
    "cmp",
    "partial_cmp",
    "join",
    "concat",
    "repeat",
    "to_lowercase",
    "to_uppercase",
    "parse",
    "is_some",
    "is_none",
    "is_ok",
    "is_err",
    "strip_prefix",
    "strip_suffix",
    "split_first",
    "split_last",
    "borrow",
    "deref",
];

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
        // A loop's item is a borrow of what it walks through `&` or a chain of adapters
        // with no copy in it (`tables.iter().filter(..)`), whatever the chain.
        if walks_borrowed(&each.expr) {
            pattern_bindings(&each.pat, &mut |ident, _| {
                self.0.borrowing.insert(ident.to_string());
            });
        }
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
        self.0.assign(&each.left, &each.right, true);
        syn::visit::visit_expr_assign(self, each);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let method = call.method.to_string();
        if ADDS.contains(&method.as_str()) {
            let one_value = !matches!(method.as_str(), "extend" | "append");
            for arg in &call.args {
                self.0.assign(&call.receiver, arg, one_value);
            }
        }
        syn::visit::visit_expr_method_call(self, call);
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}
