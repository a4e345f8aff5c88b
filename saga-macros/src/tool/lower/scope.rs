//! Which locals a piece of code reads: free-variable analysis that follows Rust's
//! scoping (blocks, `let`, patterns of `match`, `if let`, `for` and closures) and reads
//! macro bodies too, including the inline captures of format strings (`"{name}"`).

use std::collections::BTreeSet;

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::{self, Visit};
use syn::{Block, Expr, Ident, Pat, Stmt};

/// Calls `f(ident, is_mut)` for every name `pat` binds.
pub fn pattern_bindings(pat: &Pat, f: &mut dyn FnMut(&Ident, bool)) {
    match pat {
        Pat::Ident(pat_ident) => {
            f(&pat_ident.ident, pat_ident.mutability.is_some());
            if let Some((_, sub)) = &pat_ident.subpat {
                pattern_bindings(sub, f);
            }
        }
        Pat::Type(typed) => pattern_bindings(&typed.pat, f),
        Pat::Tuple(tuple) => tuple.elems.iter().for_each(|p| pattern_bindings(p, f)),
        Pat::TupleStruct(ts) => ts.elems.iter().for_each(|p| pattern_bindings(p, f)),
        Pat::Struct(st) => st
            .fields
            .iter()
            .for_each(|field| pattern_bindings(&field.pat, f)),
        Pat::Slice(slice) => slice.elems.iter().for_each(|p| pattern_bindings(p, f)),
        Pat::Reference(reference) => pattern_bindings(&reference.pat, f),
        Pat::Or(or) => {
            if let Some(first) = or.cases.first() {
                pattern_bindings(first, f);
            }
        }
        Pat::Paren(paren) => pattern_bindings(&paren.pat, f),
        _ => {}
    }
}

/// The names read by `stmts` that they do not bind themselves.
pub fn free_in_stmts(stmts: &[Stmt]) -> BTreeSet<String> {
    let mut free = Free::default();
    free.scopes.push(Vec::new());
    for stmt in stmts {
        free.visit_stmt(stmt);
    }
    free.found
}

/// What `stmts`, run in order, do with the locals declared before them: the names they
/// may read (`.0`), and those they surely overwrite before any read (`.1`): `x = …;` at
/// the top of the sequence (or of a block in it), with no `break` or `continue` before it
/// that could reach code reading the old value. An overwritten local need not be saved
/// at a suspension before it; saving it could even be wrong (it may have been moved
/// from, or not be initialised yet).
pub fn read_before_written(stmts: &[Stmt]) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut flow = Flow::default();
    flow.stmts(stmts);
    (flow.read, flow.written)
}

#[derive(Default)]
struct Flow {
    read: BTreeSet<String>,
    written: BTreeSet<String>,
    /// A `break` or `continue` was passed: what follows may not run before a read.
    stopped: bool,
}

impl Flow {
    fn stmts(&mut self, stmts: &[Stmt]) {
        for stmt in stmts {
            match stmt {
                Stmt::Expr(expr, _) => self.expr(expr),
                Stmt::Local(local) if local.init.as_ref().is_some_and(|i| i.diverge.is_none()) => {
                    if let Some(init) = &local.init {
                        self.expr(&init.expr);
                    }
                }
                other => self.other(free_in_stmts(std::slice::from_ref(other)), false),
            }
        }
    }

    fn expr(&mut self, expr: &Expr) {
        match expr {
            Expr::Block(block) if block.attrs.is_empty() => self.stmts(&block.block.stmts),
            Expr::Assign(assign) if matches!(&*assign.left, Expr::Path(p) if p.path.get_ident().is_some()) =>
            {
                self.other(free_in_expr(&assign.right), leaves(&assign.right));
                if let Expr::Path(path) = &*assign.left
                    && let Some(ident) = path.path.get_ident()
                {
                    let name = ident.to_string();
                    if !self.stopped && !self.read.contains(&name) {
                        self.written.insert(name);
                    }
                }
            }
            other => self.other(free_in_expr(other), leaves(other)),
        }
    }

    fn other(&mut self, names: BTreeSet<String>, leaves: bool) {
        for name in names {
            if !self.written.contains(&name) {
                self.read.insert(name);
            }
        }
        self.stopped |= leaves;
    }
}

pub fn free_in_expr(expr: &Expr) -> BTreeSet<String> {
    let mut free = Free::default();
    free.scopes.push(Vec::new());
    free.visit_expr(expr);
    free.found
}

/// Whether `expr` holds a `break` or `continue` (outside closures and async blocks).
fn leaves(expr: &Expr) -> bool {
    struct Leaves(bool);
    impl<'ast> syn::visit::Visit<'ast> for Leaves {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            match expr {
                Expr::Break(_) | Expr::Continue(_) => self.0 = true,
                Expr::Closure(_) | Expr::Async(_) => {}
                other => syn::visit::visit_expr(self, other),
            }
        }
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            // A macro's tokens may hide a jump: assume the worst.
            fn jumps(tokens: TokenStream) -> bool {
                tokens.into_iter().any(|token| match token {
                    TokenTree::Ident(ident) => ident == "break" || ident == "continue",
                    TokenTree::Group(group) => jumps(group.stream()),
                    _ => false,
                })
            }
            self.0 |= jumps(mac.tokens.clone());
        }
    }
    let mut leaves = Leaves(false);
    syn::visit::Visit::visit_expr(&mut leaves, expr);
    leaves.0
}

#[derive(Default)]
struct Free {
    scopes: Vec<Vec<String>>,
    found: BTreeSet<String>,
    /// Leaves out what the continuation's own rebinding of borrows reads (`let x =
    /// __private::again(…)`, see `lower::places`).
    skip_again: bool,
}

/// The names read by `stmts` that they do not bind themselves, leaving out what only the
/// rebinding of a borrow reads (`let x = __private::again(…)`, see `lower::places`).
pub fn free_outside_again(stmts: &[Stmt]) -> BTreeSet<String> {
    let mut free = Free {
        skip_again: true,
        ..Free::default()
    };
    free.scopes.push(Vec::new());
    for stmt in stmts {
        free.visit_stmt(stmt);
    }
    free.found
}

/// Whether `local` binds a borrow again, `let P = __private::again(…)`.
pub fn is_again(local: &syn::Local) -> bool {
    matches!(
        local.init.as_ref().map(|init| &*init.expr),
        Some(Expr::Call(call)) if matches!(&*call.func, Expr::Path(path)
            if path.path.segments.len() >= 2
                && path.path.segments.iter().rev().nth(1).is_some_and(|s| s.ident == "__private")
                && path.path.segments.last().is_some_and(|s| s.ident == "again"))
    )
}

impl Free {
    fn bound(&self, name: &str) -> bool {
        self.scopes
            .iter()
            .any(|scope| scope.iter().any(|n| n == name))
    }

    fn use_name(&mut self, name: String) {
        if !self.bound(&name) {
            self.found.insert(name);
        }
    }

    fn bind(&mut self, pat: &Pat) {
        let mut names = Vec::new();
        pattern_bindings(pat, &mut |ident, _| names.push(ident.to_string()));
        if let Some(scope) = self.scopes.last_mut() {
            scope.extend(names);
        }
    }

    fn scoped(&mut self, f: impl FnOnce(&mut Self)) {
        self.scopes.push(Vec::new());
        f(self);
        self.scopes.pop();
    }

    fn tokens(&mut self, tokens: TokenStream) {
        for token in tokens {
            match token {
                TokenTree::Ident(ident) => self.use_name(ident.to_string()),
                TokenTree::Group(group) => self.tokens(group.stream()),
                TokenTree::Literal(literal) => {
                    for name in format_captures(&literal.to_string()) {
                        self.use_name(name);
                    }
                }
                TokenTree::Punct(_) => {}
            }
        }
    }

    /// The `let` patterns of an `if`/`while` condition (let chains included).
    fn bind_condition(&mut self, cond: &Expr) {
        match cond {
            Expr::Let(expr_let) => self.bind(&expr_let.pat),
            Expr::Binary(binary) => {
                self.bind_condition(&binary.left);
                self.bind_condition(&binary.right);
            }
            Expr::Paren(paren) => self.bind_condition(&paren.expr),
            _ => {}
        }
    }
}

impl<'ast> Visit<'ast> for Free {
    fn visit_block(&mut self, block: &'ast Block) {
        self.scoped(|this| {
            for stmt in &block.stmts {
                this.visit_stmt(stmt);
            }
        });
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        if let Some(init) = &local.init
            && !(self.skip_again && is_again(local))
        {
            self.visit_expr(&init.expr);
            if let Some((_, diverge)) = &init.diverge {
                self.visit_expr(diverge);
            }
        }
        self.bind(&local.pat);
    }

    fn visit_item(&mut self, _item: &'ast syn::Item) {
        // Nested items cannot read the function's locals.
    }

    fn visit_expr_path(&mut self, path: &'ast syn::ExprPath) {
        if path.qself.is_none()
            && path.path.leading_colon.is_none()
            && path.path.segments.len() == 1
            && path.path.segments[0].arguments.is_none()
        {
            self.use_name(path.path.segments[0].ident.to_string());
        }
    }

    fn visit_expr_closure(&mut self, closure: &'ast syn::ExprClosure) {
        self.scoped(|this| {
            for input in &closure.inputs {
                this.bind(input);
            }
            this.visit_expr(&closure.body);
        });
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        self.scoped(|this| {
            this.bind(&arm.pat);
            if let Some((_, guard)) = &arm.guard {
                this.visit_expr(guard);
            }
            this.visit_expr(&arm.body);
        });
    }

    fn visit_expr_if(&mut self, expr_if: &'ast syn::ExprIf) {
        self.visit_expr(&expr_if.cond);
        self.scoped(|this| {
            this.bind_condition(&expr_if.cond);
            this.visit_block(&expr_if.then_branch);
        });
        if let Some((_, else_branch)) = &expr_if.else_branch {
            self.visit_expr(else_branch);
        }
    }

    fn visit_expr_while(&mut self, expr_while: &'ast syn::ExprWhile) {
        self.visit_expr(&expr_while.cond);
        self.scoped(|this| {
            this.bind_condition(&expr_while.cond);
            this.visit_block(&expr_while.body);
        });
    }

    fn visit_expr_let(&mut self, expr_let: &'ast syn::ExprLet) {
        // The pattern binds for the branch, handled by the `if`/`while`; here only the
        // scrutinee is read.
        self.visit_expr(&expr_let.expr);
    }

    fn visit_expr_for_loop(&mut self, expr_for: &'ast syn::ExprForLoop) {
        self.visit_expr(&expr_for.expr);
        self.scoped(|this| {
            this.bind(&expr_for.pat);
            this.visit_block(&expr_for.body);
        });
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // The standard macros' arguments are expressions: `f.b` reads `f`, not `b`, and a
        // format string's `{name}` is the `name = …` argument when there is one.
        let Some(args) = crate::tool::parse::macro_args::std_args(mac) else {
            self.tokens(mac.tokens.clone());
            return;
        };
        let named = args.named();
        for value in args.values() {
            if let Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(literal),
                ..
            }) = value
            {
                for name in format_captures(&literal.value()) {
                    if !named.contains(&name) {
                        self.use_name(name);
                    }
                }
            }
            self.visit_expr(value);
        }
    }

    fn visit_expr(&mut self, expr: &'ast Expr) {
        visit::visit_expr(self, expr);
    }
}

/// The names a format string captures inline: `"{name}"`, `"{name:?}"`, `"{name:>8}"`,
/// and the width and precision parameters of every spec, positional arguments' included
/// (`"{:0width$}"`, `"{:.prec$}"`, `"{x:>w$.p$}"`).
pub fn format_captures(literal: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (argument, spec) in placeholders(literal) {
        if is_identifier(argument) {
            names.push(argument.to_owned());
        }
        if let Some(spec) = spec {
            for range in spec_parameters(spec) {
                names.push(spec[range].to_owned());
            }
        }
    }
    names
}

/// The `{argument:spec}` placeholders of a format string, as `(argument, spec)`; `{{`
/// and `}}` are text.
pub fn placeholders(literal: &str) -> Vec<(&str, Option<&str>)> {
    let mut found = Vec::new();
    let mut rest = literal;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        if let Some(escaped) = after.strip_prefix('{') {
            rest = escaped;
            continue;
        }
        let Some(close) = after.find('}') else { break };
        let inside = &after[..close];
        found.push(match inside.split_once(':') {
            Some((argument, spec)) => (argument.trim(), Some(spec)),
            None => (inside.trim(), None),
        });
        rest = &after[close + 1..];
    }
    found
}

/// Whether `text` names an argument (not a position): `name`, `_x`, `été`.
pub fn is_identifier(text: &str) -> bool {
    text.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && text != "_"
        && text.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Where a format spec names arguments as its width or precision (`name$`), as byte
/// ranges of `spec`. The spec's grammar: `[[fill]align][sign]['#']['0'][width]['.'
/// precision][type]`, where width and precision are `count` (`12`, `1$`, `name$`) and
/// precision may be `*`. The `0` flag comes before the width, so `0width$` is the flag
/// and `width$`.
pub fn spec_parameters(spec: &str) -> Vec<std::ops::Range<usize>> {
    let chars: Vec<(usize, char)> = spec.char_indices().collect();
    let at = |i: usize| chars.get(i).map(|&(_, c)| c);
    let offset = |i: usize| chars.get(i).map_or(spec.len(), |&(offset, _)| offset);
    let aligns = |c: Option<char>| matches!(c, Some('<' | '^' | '>'));
    let mut i = 0;
    if aligns(at(1)) {
        i = 2;
    } else if aligns(at(0)) {
        i = 1;
    }
    if matches!(at(i), Some('+' | '-')) {
        i += 1;
    }
    if at(i) == Some('#') {
        i += 1;
    }
    if at(i) == Some('0') && at(i + 1) != Some('$') {
        i += 1;
    }
    let mut found = Vec::new();
    // A count: digits (a width, or a position before `$`) or a name before `$`. A word
    // that is neither is the spec's type (`x`, `e`, `x?`), which ends it.
    let mut count = |i: &mut usize| {
        let start = *i;
        let mut end = start;
        while at(end).is_some_and(|c| c.is_alphanumeric() || c == '_') {
            end += 1;
        }
        let word = &spec[offset(start)..offset(end)];
        if at(end) == Some('$') {
            if is_identifier(word) {
                found.push(offset(start)..offset(end));
            }
            *i = end + 1;
        } else if !word.is_empty() && word.chars().all(|c| c.is_ascii_digit()) {
            *i = end;
        }
    };
    count(&mut i);
    if at(i) == Some('.') {
        i += 1;
        if at(i) != Some('*') {
            count(&mut i);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free(code: &str) -> Vec<String> {
        let block: Block = syn::parse_str(&format!("{{ {code} }}")).unwrap();
        free_in_stmts(&block.stmts).into_iter().collect()
    }

    #[test]
    fn format_specs_name_their_width_and_precision() {
        assert_eq!(format_captures("[{name:>width$}]"), ["name", "width"]);
        assert_eq!(
            format_captures("{:.prec$} {:1$} {x:w$.p$}"),
            ["prec", "x", "w", "p"]
        );
        assert_eq!(format_captures("{{not}} {:>8}"), Vec::<String>::new());
    }

    /// The `0` flag before a width is not part of its name, and every form of spec names
    /// its parameters, for positional arguments too.
    #[test]
    fn width_and_precision_parameters_of_positional_arguments() {
        assert_eq!(format_captures("{:0width$}"), ["width"]);
        assert_eq!(format_captures("{:.prec$}"), ["prec"]);
        assert_eq!(format_captures("{:>width$}"), ["width"]);
        assert_eq!(format_captures("{x:width$}"), ["x", "width"]);
        assert_eq!(format_captures("{:+#0w$.p$e}"), ["w", "p"]);
        assert_eq!(format_captures("{:*^w$?}"), ["w"]);
        assert_eq!(
            format_captures("{:0$} {:1$.2$} {:.*}"),
            Vec::<String>::new()
        );
        assert_eq!(format_captures("{:x} {:e} {:08.3}"), Vec::<String>::new());
        assert_eq!(format_captures("{:_<w$}"), ["w"]);
    }

    #[test]
    fn standard_macros_read_expressions_not_tokens() {
        assert_eq!(free(r#"format!("{}", f.b)"#), ["f"]);
        assert_eq!(
            free(r#"format!("{name} {x}", name = owned)"#),
            ["owned", "x"]
        );
        assert_eq!(free("vec![item; n]"), ["item", "n"]);
        assert_eq!(free("my_macro!(a.b)"), ["a", "b"]);
    }

    #[test]
    fn let_binds_after_its_initialiser() {
        assert_eq!(free("let x = x + 1; x"), ["x"]);
        assert_eq!(free("let y = 1; y + z"), ["z"]);
    }

    #[test]
    fn patterns_bind_in_their_scope() {
        assert_eq!(free("match v { Some(a) => a, None => b }"), ["b", "v"]);
        assert_eq!(free("if let Some(a) = o { a } else { a }"), ["a", "o"]);
        assert_eq!(free("for i in items { total += i; }"), ["items", "total"]);
        assert_eq!(free("let f = |q| q + r;"), ["r"]);
    }

    #[test]
    fn macros_and_format_captures_count() {
        assert_eq!(
            free("format!(\"{name} {age:>3} {{x}}\", extra)"),
            ["age", "extra", "name"]
        );
    }

    #[test]
    fn blocks_end_scopes() {
        assert_eq!(free("{ let t = 1; } t"), ["t"]);
    }
}
