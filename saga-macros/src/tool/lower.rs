//! Normalisation, before the state machine is built. Afterwards:
//!
//! - every suspension is a statement of its own, `let __aN = __saga_site!(N);`, followed
//!   by the user's statement reading `__aN` where the suspension was;
//! - an `if`, `match`, `loop` or block that contains a suspension is a whole statement or
//!   a whole `let` initialiser;
//! - `while` and `for` loops that contain a suspension are `loop`s (a `for` walks a saved
//!   `Vec` of its items, since an iterator cannot be saved).
//!
//! A suspension may be moved ahead of the rest of its statement only if it is what the
//! statement evaluates first; anything else is an error that says how to rewrite it.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{BinOp, Block, Expr, Ident, Pat, Stmt};

use super::macro_args;
use super::suspend::{Suspension, classify};
use crate::errors::Errors;
use crate::shared::pascal;

/// One suspension point.
pub struct Site {
    pub id: usize,
    /// The local holding the answer in the continuation: `__aN`.
    pub answer: Ident,
    pub suspension: Suspension,
    /// The state variant's name, e.g. `AfterElicitTarget`.
    pub variant: Ident,
    /// The name before a number made it unique (`AfterCheckpoint` for `AfterCheckpoint2`):
    /// sites that share it are told apart by their code (see `expand::state_enum`).
    pub base: String,
    /// The statement as written, for the variant's doc comment.
    pub source: String,
    pub span: Span,
    /// The bindings of `for` loops over saved items, checked by `for_items` rather than
    /// one by one.
    pub for_items: Vec<String>,
}

pub const SITE_MACRO: &str = "__saga_site";

/// The site number of a `__saga_site!(N)` marker.
pub fn site_id(expr: &Expr) -> Option<usize> {
    match expr {
        Expr::Macro(mac) if mac.mac.path.is_ident(SITE_MACRO) => {
            mac.mac.tokens.to_string().parse().ok()
        }
        _ => None,
    }
}

pub fn lower(body: Block, errors: &mut Errors) -> (Block, Vec<Site>) {
    let mut lower = Lower {
        sites: Vec::new(),
        errors,
        hoisted: 0,
        variants: Vec::new(),
        source: String::new(),
        for_items: Vec::new(),
    };
    let block = lower.block(body);
    let mut sites = lower.sites;
    for site in &mut sites {
        site.for_items.clone_from(&lower.for_items);
    }
    (block, sites)
}

struct Lower<'a> {
    sites: Vec<Site>,
    errors: &'a mut Errors,
    hoisted: usize,
    variants: Vec<String>,
    /// The statement being lowered, as written.
    source: String,
    for_items: Vec<String>,
}

impl Lower<'_> {
    fn block(&mut self, block: Block) -> Block {
        let mut stmts = Vec::with_capacity(block.stmts.len());
        for stmt in block.stmts {
            self.stmt(stmt, &mut stmts);
        }
        Block {
            brace_token: block.brace_token,
            stmts,
        }
    }

    fn stmt(&mut self, stmt: Stmt, out: &mut Vec<Stmt>) {
        if !contains_suspension_stmt(&stmt) {
            out.push(stmt);
            return;
        }
        self.source = source_of(&stmt);
        match stmt {
            Stmt::Local(local)
                if local
                    .init
                    .as_ref()
                    .and_then(|init| init.diverge.as_ref())
                    .is_some_and(|(_, diverge)| contains_suspension(diverge)) =>
            {
                let local = let_else_as_match(local);
                self.stmt(Stmt::Local(local), out);
            }
            Stmt::Local(mut local) => {
                let hint = pattern_names(&local.pat);
                if let Some(init) = &mut local.init {
                    let expr =
                        std::mem::replace(&mut *init.expr, Expr::Verbatim(TokenStream::new()));
                    let expr = self.head(expr, &hint, out, 0);
                    self.reject_rest(&expr);
                    *init.expr = expr;
                }
                out.push(Stmt::Local(local));
            }
            Stmt::Expr(expr, semi) => {
                let expr = self.head(expr, "", out, 0);
                self.reject_rest(&expr);
                out.push(Stmt::Expr(expr, semi));
            }
            Stmt::Macro(stmt_macro) => {
                let expr = Expr::Macro(syn::ExprMacro {
                    attrs: stmt_macro.attrs,
                    mac: stmt_macro.mac,
                });
                let expr = self.head(expr, "", out, 0);
                out.push(Stmt::Expr(expr, stmt_macro.semi_token));
            }
            item @ Stmt::Item(_) => out.push(item),
        }
    }

    /// A suspension left after lowering: in an expression saga does not take apart.
    fn reject_rest(&mut self, expr: &Expr) {
        let mut finder = Finder::default();
        finder.visit_expr(expr);
        for span in finder.found {
            self.errors.push(syn::Error::new(
                span,
                "saga cannot resume in the middle of this kind of expression; if the \
                 statement always evaluates this suspension, and before anything else it \
                 does, bind the answer first with `let answer = ….await;` just before the \
                 statement and use `answer` where the suspension was; otherwise write out \
                 when it runs with an `if`",
            ));
        }
    }

    /// Lowers `expr` to A-normal form for its suspensions: each suspension becomes a
    /// statement of its own in `out`, in Rust's evaluation order; what is evaluated
    /// before a suspension is kept in a temporary (places stay places); a construct
    /// holding a suspension (`if`, `match`, `loop`, a block) becomes the initialiser of a
    /// `let` of its own unless it is the whole statement (`depth == 0`).
    fn head(&mut self, expr: Expr, hint: &str, out: &mut Vec<Stmt>, depth: usize) -> Expr {
        if let Some(suspension) = classify(&expr) {
            return match suspension {
                // `f(x.await?).await`: the arguments are evaluated, and may suspend,
                // before the call is made.
                Ok(Suspension::Call { call, name }) if contains_suspension(&call) => {
                    let span = expr.span();
                    let call = self.head(call, hint, out, depth + 1);
                    self.site(Suspension::Call { call, name }, hint, span, out)
                }
                Ok(suspension) => self.site(suspension, hint, expr.span(), out),
                // Reported by the checker.
                Err(_) => expr,
            };
        }
        if !contains_suspension(&expr) {
            return expr;
        }
        let next = depth + 1;
        match expr {
            // `if let P = e && c { A } else { B }` whose chain suspends after its first
            // test: `if let P = e { if c { A } else { B } } else { B }`, so that each test
            // runs exactly when the chain would run it and `P`'s bindings stay in scope.
            Expr::If(expr_if)
                if has_let(&expr_if.cond)
                    && chain(&expr_if.cond).len() > 1
                    && contains_suspension(&expr_if.cond) =>
            {
                let terms = chain(&expr_if.cond);
                let first = terms[0];
                let rest = &terms[1..];
                let then_branch = &expr_if.then_branch;
                let span = expr_if.if_token.span;
                let attrs = &expr_if.attrs;
                let nested: Expr = match &expr_if.else_branch {
                    Some((_, else_branch)) => syn::parse_quote_spanned! {span=>
                        #(#attrs)* if #first {
                            if #(#rest)&&* #then_branch else #else_branch
                        } else #else_branch
                    },
                    None => syn::parse_quote_spanned! {span=>
                        #(#attrs)* if #first {
                            if #(#rest)&&* #then_branch
                        }
                    },
                };
                self.head(nested, hint, out, depth)
            }
            Expr::If(mut expr_if) => {
                *expr_if.cond = self.head(*expr_if.cond, "", out, next);
                if !contains_suspension(&Expr::If(without_cond(&expr_if))) {
                    return Expr::If(expr_if);
                }
                let lowered = self.lower_if(expr_if);
                self.construct(Expr::If(lowered), depth, out)
            }
            Expr::Match(mut expr_match) => {
                *expr_match.expr = self.head(*expr_match.expr, "", out, next);
                if !expr_match
                    .arms
                    .iter()
                    .any(|arm| contains_suspension(&arm.body))
                {
                    return Expr::Match(expr_match);
                }
                for arm in &mut expr_match.arms {
                    if contains_suspension(&arm.body) {
                        let body =
                            std::mem::replace(&mut *arm.body, Expr::Verbatim(TokenStream::new()));
                        let block = match body {
                            Expr::Block(block)
                                if block.label.is_none() && block.attrs.is_empty() =>
                            {
                                block.block
                            }
                            other => syn::parse_quote_spanned!(other.span()=> { #other }),
                        };
                        *arm.body = Expr::Block(syn::ExprBlock {
                            attrs: Vec::new(),
                            label: None,
                            block: self.block(block),
                        });
                        if arm.comma.is_none() {
                            arm.comma = Some(Default::default());
                        }
                    }
                }
                self.construct(Expr::Match(expr_match), depth, out)
            }
            Expr::Loop(mut expr_loop) if contains_suspension_block(&expr_loop.body) => {
                expr_loop.body = self.block(expr_loop.body);
                self.construct(Expr::Loop(expr_loop), depth, out)
            }
            Expr::While(expr_while) => {
                let syn::ExprWhile {
                    attrs,
                    label,
                    cond,
                    body,
                    ..
                } = expr_while;
                let span = cond.span();
                let desugared: syn::ExprLoop = syn::parse_quote_spanned! {span=>
                    #(#attrs)* #label loop {
                        if #cond #body else { break; }
                    }
                };
                self.head(Expr::Loop(desugared), hint, out, depth)
            }
            Expr::ForLoop(mut expr_for) => {
                *expr_for.expr = self.head(*expr_for.expr, "", out, next);
                if !contains_suspension_block(&expr_for.body) {
                    return Expr::ForLoop(expr_for);
                }
                self.lower_for(expr_for, hint, out, depth)
            }
            Expr::Block(mut expr_block) if contains_suspension_block(&expr_block.block) => {
                expr_block.block = self.block(expr_block.block);
                self.construct(Expr::Block(expr_block), depth, out)
            }
            Expr::Unsafe(mut expr_unsafe) if contains_suspension_block(&expr_unsafe.block) => {
                expr_unsafe.block = self.block(expr_unsafe.block);
                self.construct(Expr::Unsafe(expr_unsafe), depth, out)
            }
            // `a && b` evaluates `b` only when `a` is true: an `if`, so that the saga
            // suspends exactly when Rust would evaluate the right side.
            Expr::Binary(e)
                if matches!(e.op, BinOp::And(_) | BinOp::Or(_))
                    && contains_suspension(&e.right) =>
            {
                let span = e.op.span();
                let left = self.head(*e.left, "", out, next);
                let right = &e.right;
                let lowered: Expr = match e.op {
                    BinOp::And(_) => {
                        syn::parse_quote_spanned!(span=> if #left { #right } else { false })
                    }
                    _ => syn::parse_quote_spanned!(span=> if #left { true } else { #right }),
                };
                self.head(lowered, hint, out, depth)
            }
            // `place += value` on primitives (numbers, the common case) evaluates the
            // value first, then the place; the place's own parts stay after it.
            Expr::Binary(mut e) if is_compound_assign(&e.op) => {
                let right = self.head(*e.right, hint, out, next);
                if contains_suspension(&e.left) {
                    *e.right = self.value(right, out);
                    *e.left = self.head(*e.left, hint, out, next);
                } else {
                    *e.right = right;
                }
                Expr::Binary(e)
            }
            Expr::Binary(mut e) => {
                let mut parts = [(*e.left, Role::Value), (*e.right, Role::Value)];
                self.sequence(&mut parts, hint, out, next);
                let [(left, _), (right, _)] = parts;
                *e.left = left;
                *e.right = right;
                Expr::Binary(e)
            }
            // The assigned value is evaluated before the place it is assigned to.
            Expr::Assign(mut e) => {
                let right = self.head(*e.right, hint, out, next);
                if contains_suspension(&e.left) {
                    *e.right = self.value(right, out);
                    *e.left = self.head(*e.left, hint, out, next);
                } else {
                    *e.right = right;
                }
                Expr::Assign(e)
            }
            Expr::MethodCall(mut e) => {
                let receiver =
                    std::mem::replace(&mut *e.receiver, Expr::Verbatim(TokenStream::new()));
                let mut parts = vec![(receiver, Role::Place)];
                parts.extend(
                    std::mem::take(&mut e.args)
                        .into_iter()
                        .map(|arg| (arg, Role::Value)),
                );
                self.sequence(&mut parts, hint, out, next);
                let mut parts = parts.into_iter().map(|(expr, _)| expr);
                if let Some(receiver) = parts.next() {
                    *e.receiver = receiver;
                }
                e.args = parts.collect();
                Expr::MethodCall(e)
            }
            Expr::Call(mut e) => {
                let func = std::mem::replace(&mut *e.func, Expr::Verbatim(TokenStream::new()));
                let mut parts = vec![(func, Role::Value)];
                parts.extend(
                    std::mem::take(&mut e.args)
                        .into_iter()
                        .map(|arg| (arg, Role::Value)),
                );
                self.sequence(&mut parts, hint, out, next);
                let mut parts = parts.into_iter().map(|(expr, _)| expr);
                if let Some(func) = parts.next() {
                    *e.func = func;
                }
                e.args = parts.collect();
                Expr::Call(e)
            }
            Expr::Tuple(mut e) => {
                let mut parts: Vec<(Expr, Role)> = std::mem::take(&mut e.elems)
                    .into_iter()
                    .map(|elem| (elem, Role::Value))
                    .collect();
                self.sequence(&mut parts, hint, out, next);
                e.elems = parts.into_iter().map(|(expr, _)| expr).collect();
                Expr::Tuple(e)
            }
            Expr::Array(mut e) => {
                let mut parts: Vec<(Expr, Role)> = std::mem::take(&mut e.elems)
                    .into_iter()
                    .map(|elem| (elem, Role::Value))
                    .collect();
                self.sequence(&mut parts, hint, out, next);
                e.elems = parts.into_iter().map(|(expr, _)| expr).collect();
                Expr::Array(e)
            }
            Expr::Struct(mut e) => {
                let mut parts: Vec<(Expr, Role)> = e
                    .fields
                    .iter()
                    .map(|field| (field.expr.clone(), Role::Value))
                    .collect();
                if let Some(rest) = e.rest.take() {
                    parts.push((*rest, Role::Place));
                }
                self.sequence(&mut parts, hint, out, next);
                let mut parts = parts.into_iter().map(|(expr, _)| expr);
                for field in e.fields.iter_mut() {
                    if let Some(value) = parts.next() {
                        field.expr = value;
                        // `S { x }` must become `S { x: value }` once `x` is rewritten.
                        if field.colon_token.is_none() {
                            field.colon_token = Some(Default::default());
                        }
                    }
                }
                if let Some(rest) = parts.next() {
                    e.rest = Some(Box::new(rest));
                }
                Expr::Struct(e)
            }
            Expr::Index(mut e) => {
                let mut parts = [(*e.expr, Role::Place), (*e.index, Role::Value)];
                self.sequence(&mut parts, hint, out, next);
                let [(base, _), (index, _)] = parts;
                *e.expr = base;
                *e.index = index;
                Expr::Index(e)
            }
            Expr::Range(mut e) => {
                match (e.start.take(), e.end.take()) {
                    (Some(start), Some(end)) => {
                        let mut parts = [(*start, Role::Value), (*end, Role::Value)];
                        self.sequence(&mut parts, hint, out, next);
                        let [(start, _), (end, _)] = parts;
                        e.start = Some(Box::new(start));
                        e.end = Some(Box::new(end));
                    }
                    (start, end) => {
                        e.start = start.map(|v| Box::new(self.head(*v, hint, out, next)));
                        e.end = end.map(|v| Box::new(self.head(*v, hint, out, next)));
                    }
                }
                Expr::Range(e)
            }
            Expr::Repeat(mut e) => {
                *e.expr = self.head(*e.expr, hint, out, next);
                Expr::Repeat(e)
            }
            Expr::Macro(mut e) => {
                if let Some(mut args) = macro_args::std_args(&e.mac) {
                    let mut values: Vec<(Expr, Role)> = args
                        .values()
                        .into_iter()
                        .map(|value| (value.clone(), Role::Value))
                        .collect();
                    self.sequence(&mut values, hint, out, next);
                    for (slot, (value, _)) in args.values_mut().into_iter().zip(values) {
                        *slot = value;
                    }
                    e.mac.tokens = args.tokens();
                }
                Expr::Macro(e)
            }
            // The parts evaluated first.
            Expr::Field(mut e) => {
                *e.base = self.head(*e.base, hint, out, next);
                Expr::Field(e)
            }
            Expr::Try(mut e) => {
                *e.expr = self.head(*e.expr, hint, out, next);
                Expr::Try(e)
            }
            Expr::Await(mut e) => {
                *e.base = self.head(*e.base, hint, out, next);
                Expr::Await(e)
            }
            Expr::Unary(mut e) => {
                *e.expr = self.head(*e.expr, hint, out, next);
                Expr::Unary(e)
            }
            Expr::Cast(mut e) => {
                *e.expr = self.head(*e.expr, hint, out, next);
                Expr::Cast(e)
            }
            Expr::Paren(mut e) => {
                *e.expr = self.head(*e.expr, hint, out, next);
                Expr::Paren(e)
            }
            Expr::Group(mut e) => {
                *e.expr = self.head(*e.expr, hint, out, next);
                Expr::Group(e)
            }
            Expr::Reference(mut e) => {
                *e.expr = self.head(*e.expr, hint, out, next);
                Expr::Reference(e)
            }
            Expr::Let(mut e) => {
                *e.expr = self.head(*e.expr, hint, out, next);
                Expr::Let(e)
            }
            Expr::Return(mut e) => {
                if let Some(value) = e.expr.take() {
                    e.expr = Some(Box::new(self.head(*value, hint, out, next)));
                }
                Expr::Return(e)
            }
            Expr::Break(mut e) => {
                if let Some(value) = e.expr.take() {
                    e.expr = Some(Box::new(self.head(*value, hint, out, next)));
                }
                Expr::Break(e)
            }
            other => other,
        }
    }

    /// Lowers operands evaluated left to right. Those evaluated before the last one that
    /// suspends are kept in temporaries (a place stays a place, with only the values it
    /// reads kept), so that they are evaluated before the suspension, as in Rust.
    fn sequence(
        &mut self,
        parts: &mut [(Expr, Role)],
        hint: &str,
        out: &mut Vec<Stmt>,
        depth: usize,
    ) {
        let last = parts
            .iter()
            .rposition(|(expr, _)| contains_suspension(expr));
        let Some(last) = last else {
            return;
        };
        for (index, (expr, role)) in parts.iter_mut().enumerate().take(last + 1) {
            let role = *role;
            let taken = std::mem::replace(expr, Expr::Verbatim(TokenStream::new()));
            let lowered = self.head(taken, hint, out, depth);
            *expr = if index < last {
                match role {
                    Role::Value => self.value(lowered, out),
                    Role::Place => self.place(lowered, out),
                }
            } else {
                lowered
            };
        }
    }

    /// `expr`, evaluated now for its value: a literal or a local stays (nothing to
    /// evaluate), a place stays a place, anything else goes to a temporary.
    fn value(&mut self, expr: Expr, out: &mut Vec<Stmt>) -> Expr {
        match expr {
            Expr::Lit(_) | Expr::Path(_) => expr,
            Expr::Field(_)
            | Expr::Index(_)
            | Expr::Reference(_)
            | Expr::Paren(_)
            | Expr::Group(_)
            | Expr::Unary(syn::ExprUnary {
                op: syn::UnOp::Deref(_),
                ..
            }) => self.place(expr, out),
            other => self.temporary(other, out),
        }
    }

    /// `expr` as a place evaluated now: what the place reads (an index, a pointer) is
    /// evaluated into temporaries; the place itself is not moved.
    fn place(&mut self, expr: Expr, out: &mut Vec<Stmt>) -> Expr {
        match expr {
            Expr::Lit(_) | Expr::Path(_) => expr,
            Expr::Field(mut e) => {
                *e.base = self.place(*e.base, out);
                Expr::Field(e)
            }
            Expr::Index(mut e) => {
                *e.expr = self.place(*e.expr, out);
                *e.index = self.value(*e.index, out);
                Expr::Index(e)
            }
            Expr::Paren(mut e) => {
                *e.expr = self.place(*e.expr, out);
                Expr::Paren(e)
            }
            Expr::Group(mut e) => {
                *e.expr = self.place(*e.expr, out);
                Expr::Group(e)
            }
            Expr::Reference(mut e) => {
                *e.expr = self.place(*e.expr, out);
                Expr::Reference(e)
            }
            Expr::Unary(mut e) if matches!(e.op, syn::UnOp::Deref(_)) => {
                *e.expr = self.value(*e.expr, out);
                Expr::Unary(e)
            }
            other => self.temporary_place(other, out),
        }
    }

    fn temporary(&mut self, expr: Expr, out: &mut Vec<Stmt>) -> Expr {
        self.hoisted += 1;
        let span = expr.span();
        let name = Ident::new(&format!("__t{}", self.hoisted), span);
        out.push(syn::parse_quote_spanned!(span=> let #name = #expr;));
        syn::parse_quote_spanned!(span=> #name)
    }

    /// A temporary that is a place: a method may borrow it mutably (`make().push(..)`).
    fn temporary_place(&mut self, expr: Expr, out: &mut Vec<Stmt>) -> Expr {
        self.hoisted += 1;
        let span = expr.span();
        let name = Ident::new(&format!("__t{}", self.hoisted), span);
        out.push(syn::parse_quote_spanned!(span=> let mut #name = #expr;));
        syn::parse_quote_spanned!(span=> #name)
    }

    /// A `for` loop's collection that can be borrowed again at each iteration: `&v`,
    /// `&mut v`, `v.iter()`, `v.iter().enumerate()`, `m.keys()`, `s.chars()`, … of a place
    /// (adapters' arguments are evaluated once, into temporaries). `Err` gives back any
    /// other expression.
    fn reborrow(&mut self, expr: Box<Expr>, out: &mut Vec<Stmt>) -> Result<Expr, Box<Expr>> {
        const BORROWING: &[&str] = &[
            "iter",
            "iter_mut",
            "keys",
            "values",
            "values_mut",
            "chars",
            "char_indices",
            "bytes",
            "lines",
            "split_whitespace",
            "windows",
            "chunks",
            "chunks_exact",
        ];
        const ADAPTERS: &[&str] = &[
            "enumerate",
            "rev",
            "skip",
            "take",
            "step_by",
            "copied",
            "cloned",
        ];
        let private = super::machine::private_path();
        if let Expr::Reference(reference) = &*expr
            && is_place(&reference.expr)
        {
            let place = &reference.expr;
            let span = expr.span();
            return Ok(match reference.mutability {
                Some(_) => syn::parse_quote_spanned!(span=> #private::ordered_mut(&mut #place)),
                None => syn::parse_quote_spanned!(span=> #private::ordered(&#place)),
            });
        }
        // The method calls, outermost first, down to the collection.
        let mut calls: Vec<&syn::ExprMethodCall> = Vec::new();
        let mut root = &*expr;
        while let Expr::MethodCall(call) = root {
            calls.push(call);
            root = &call.receiver;
        }
        let Some((first, adapters)) = calls.split_last() else {
            return Err(expr);
        };
        let name = |call: &syn::ExprMethodCall| call.method.to_string();
        if !is_place(root)
            || !BORROWING.contains(&name(first).as_str())
            || !adapters
                .iter()
                .all(|call| ADAPTERS.contains(&name(call).as_str()))
        {
            return Err(expr);
        }
        let span = root.span();
        let mut items: Expr = if name(first).ends_with("_mut") {
            syn::parse_quote_spanned!(span=> #private::ordered_mut(&mut #root))
        } else {
            syn::parse_quote_spanned!(span=> #private::ordered(&#root))
        };
        let calls: Vec<syn::ExprMethodCall> = calls.into_iter().rev().cloned().collect();
        for mut call in calls {
            call.args = std::mem::take(&mut call.args)
                .into_iter()
                .map(|arg| match arg {
                    Expr::Lit(_) => arg,
                    other => self.temporary(other, out),
                })
                .collect();
            *call.receiver = items;
            items = Expr::MethodCall(call);
        }
        Ok(items)
    }

    /// `for` over a suspension: a `loop` over a saved `Vec` of the remaining items.
    fn lower_for(
        &mut self,
        expr_for: syn::ExprForLoop,
        hint: &str,
        out: &mut Vec<Stmt>,
        depth: usize,
    ) -> Expr {
        let syn::ExprForLoop {
            attrs,
            label,
            pat,
            expr,
            body,
            ..
        } = expr_for;
        self.hoisted += 1;
        let span = expr.span();
        let expr = match self.reborrow(expr, out) {
            // A borrowed collection: the loop saves its position, and borrows the
            // collection again at each iteration (see `item_at`).
            Ok(items) => {
                let position = format_ident!("__pos{}", self.hoisted);
                let item = format_ident!("__item{}", self.hoisted);
                let private = super::machine::private_path();
                out.push(syn::parse_quote_spanned! {span=>
                    let mut #position: usize = 0;
                });
                let desugared: syn::ExprLoop = syn::parse_quote_spanned! {span=>
                    #(#attrs)* #label loop {
                        let #item = #position;
                        #position += 1;
                        let ::core::option::Option::Some(#pat) = #private::item_at(#items, #item) else { break; };
                        #body
                    }
                };
                return self.head(Expr::Loop(desugared), hint, out, depth);
            }
            Err(expr) => expr,
        };
        let rest = Ident::new(&format!("__rest{}", self.hoisted), span);
        if let Some(range) = integer_range(&expr) {
            // A range is its own small state (`1..` may not end, `0..n` may be large):
            // saved as the range still to visit, not collected.
            let private = super::machine::private_path();
            out.push(syn::parse_quote_spanned! {span=>
                let mut #rest = #private::RangeRest::from(#range);
            });
            let desugared: syn::ExprLoop = syn::parse_quote_spanned! {span=>
                #(#attrs)* #label loop {
                    let ::core::option::Option::Some(#pat) = #rest.next() else { break; };
                    #body
                }
            };
            return self.head(Expr::Loop(desugared), hint, out, depth);
        }
        // The items still to visit, last first: a Vec survives a suspension where
        // an iterator could not.
        out.push(syn::parse_quote_spanned! {span=>
            let mut #rest: ::std::vec::Vec<_> = ::core::iter::IntoIterator::into_iter(#expr).collect();
        });
        out.push(syn::parse_quote_spanned! {span=> #rest.reverse(); });
        let private = super::machine::private_path();
        out.push(syn::parse_quote_spanned! {span=> #private::for_items(&#rest); });
        super::scope::pattern_bindings(&pat, &mut |ident, _| {
            self.for_items.push(ident.to_string())
        });
        let desugared: syn::ExprLoop = syn::parse_quote_spanned! {span=>
            #(#attrs)* #label loop {
                let ::core::option::Option::Some(#pat) = #rest.pop() else { break; };
                #body
            }
        };
        self.head(Expr::Loop(desugared), hint, out, depth)
    }

    fn lower_if(&mut self, mut expr_if: syn::ExprIf) -> syn::ExprIf {
        expr_if.then_branch = self.block(expr_if.then_branch);
        if let Some((else_token, else_branch)) = expr_if.else_branch.take() {
            let lowered = match *else_branch {
                Expr::Block(mut block) if block.label.is_none() => {
                    block.block = self.block(block.block);
                    Expr::Block(block)
                }
                // An `else if` whose condition suspends: a block around the inner `if`, so
                // that its condition is the first thing of a statement.
                Expr::If(inner) if contains_suspension(&inner.cond) => {
                    let block: Block = syn::parse_quote_spanned!(inner.span()=> { #inner });
                    Expr::Block(syn::ExprBlock {
                        attrs: Vec::new(),
                        label: None,
                        block: self.block(block),
                    })
                }
                Expr::If(inner) => Expr::If(self.lower_if(inner)),
                other => other,
            };
            expr_if.else_branch = Some((else_token, Box::new(lowered)));
        }
        expr_if
    }

    /// A construct holding a suspension stays where it is if it is the whole statement;
    /// otherwise it becomes a `let` of its own before the statement.
    fn construct(&mut self, expr: Expr, depth: usize, out: &mut Vec<Stmt>) -> Expr {
        if depth == 0 {
            return expr;
        }
        self.hoisted += 1;
        let name = format_ident!("__h{}", self.hoisted);
        out.push(syn::parse_quote!(let #name = #expr;));
        syn::parse_quote!(#name)
    }

    fn site(
        &mut self,
        suspension: Suspension,
        hint: &str,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Expr {
        let id = self.sites.len();
        // At the suspension (with the call site's hygiene), so that what rustc reports
        // about the answer (`?` on it) points at the user's code.
        let answer = Ident::new(&format!("__a{id}"), Span::call_site().located_at(span));
        let (variant, base) = self.variant_name(&suspension, hint);
        let marker = Ident::new(SITE_MACRO, span);
        let number = proc_macro2::Literal::usize_unsuffixed(id);
        let marker_stmt: Stmt =
            syn::parse2(quote_spanned!(span=> let #answer = #marker!(#number);))
                .unwrap_or_else(|_| syn::parse_quote!(let #answer = ();));
        out.push(marker_stmt);
        self.sites.push(Site {
            id,
            answer: answer.clone(),
            suspension,
            variant: Ident::new(&variant, span),
            base,
            source: self.source.clone(),
            span,
            for_items: Vec::new(),
        });
        syn::parse2(quote_spanned!(span=> #answer)).unwrap_or_else(|_| syn::parse_quote!(#answer))
    }

    fn variant_name(&mut self, suspension: &Suspension, hint: &str) -> (String, String) {
        let kinds = suspension.kinds();
        let kind = if kinds.len() == 1 {
            pascal(kinds[0])
        } else {
            "Join".to_owned()
        };
        let base = format!("After{kind}{}", pascal(hint));
        // The rename pass numbers a binding that repeats (`__ok_2`): the site is named
        // after the binding as written, so that the sites sharing it are told apart.
        let written = format!("After{kind}{}", pascal(written_binding(hint)));
        let mut name = base.clone();
        let mut n = 1;
        while self.variants.contains(&name) {
            n += 1;
            name = format!("{base}{n}");
        }
        self.variants.push(name.clone());
        (name, written)
    }
}

/// A binding's name as the user wrote it, from the rename pass's `__{name}_{n}`.
fn written_binding(hint: &str) -> &str {
    hint.strip_prefix("__")
        .and_then(|rest| rest.rsplit_once('_'))
        .filter(|(_, number)| !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()))
        .map_or(hint, |(name, _)| name)
}

/// `let P = e else { … };` whose `else` suspends, as
/// `let (a, b) = match e { P => (a, b), _ => { … } };`, which the machine can resume in.
fn let_else_as_match(local: syn::Local) -> syn::Local {
    let original = local.clone();
    let Some(init) = local.init else {
        return original;
    };
    let Some((_, diverge)) = init.diverge else {
        return original;
    };
    let span = local.pat.span();
    let (pat, ty) = match local.pat {
        Pat::Type(typed) => (*typed.pat, Some(typed.ty)),
        other => (other, None),
    };
    let mut names: Vec<(Ident, bool)> = Vec::new();
    super::scope::pattern_bindings(&pat, &mut |ident, mutable| {
        names.push((ident.clone(), mutable))
    });
    let idents = names.iter().map(|(ident, _)| ident);
    let outer = names.iter().map(|(ident, mutable)| {
        let mutability = mutable.then(|| quote!(mut));
        quote!(#mutability #ident)
    });
    let (value, outer): (TokenStream, TokenStream) = if names.len() == 1 {
        (quote!(#(#idents)*), quote!(#(#outer)*))
    } else {
        (quote!((#(#idents,)*)), quote!((#(#outer,)*)))
    };
    let scrutinee = &init.expr;
    let scrutinee = match ty {
        Some(ty) => quote_spanned!(span=> { let __value: #ty = #scrutinee; __value }),
        None => quote!(#scrutinee),
    };
    let tokens = quote_spanned! {span=>
        let #outer = match #scrutinee {
            #pat => #value,
            _ => #diverge,
        };
    };
    match syn::parse2::<Stmt>(tokens) {
        Ok(Stmt::Local(rewritten)) => rewritten,
        _ => original,
    }
}

/// `a..b`, `a..=b` or `a..` (parenthesised or not), iterated by a `for`.
fn integer_range(expr: &Expr) -> Option<&Expr> {
    match expr {
        Expr::Paren(paren) => integer_range(&paren.expr),
        Expr::Range(range) if range.start.is_some() => Some(expr),
        _ => None,
    }
}

/// How an operand is evaluated: for its value, or as a place (a method's receiver, the
/// left of `+=`, the indexed collection), which must not be moved to a temporary.
#[derive(Clone, Copy)]
enum Role {
    Value,
    Place,
}

fn is_compound_assign(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::AddAssign(_)
            | BinOp::SubAssign(_)
            | BinOp::MulAssign(_)
            | BinOp::DivAssign(_)
            | BinOp::RemAssign(_)
            | BinOp::BitXorAssign(_)
            | BinOp::BitAndAssign(_)
            | BinOp::BitOrAssign(_)
            | BinOp::ShlAssign(_)
            | BinOp::ShrAssign(_)
    )
}

/// A local, or a field of one.
fn is_place(expr: &Expr) -> bool {
    match expr {
        Expr::Path(path) => path.qself.is_none() && path.path.get_ident().is_some(),
        Expr::Field(field) => is_place(&field.base),
        Expr::Paren(paren) => is_place(&paren.expr),
        _ => false,
    }
}

/// The tests of a condition `a && b && c`, in order.
pub(super) fn chain(cond: &Expr) -> Vec<&Expr> {
    match cond {
        Expr::Binary(binary) if matches!(binary.op, BinOp::And(_)) => {
            let mut terms = chain(&binary.left);
            terms.extend(chain(&binary.right));
            terms
        }
        other => vec![other],
    }
}

/// Whether a condition holds a `let` (a `let` chain), outside nested blocks.
pub(super) fn has_let(expr: &Expr) -> bool {
    match expr {
        Expr::Let(_) => true,
        Expr::Binary(binary) => has_let(&binary.left) || has_let(&binary.right),
        Expr::Paren(paren) => has_let(&paren.expr),
        _ => false,
    }
}

fn without_cond(expr_if: &syn::ExprIf) -> syn::ExprIf {
    let mut copy = expr_if.clone();
    *copy.cond = syn::parse_quote!(true);
    copy
}

/// The names a pattern binds, joined with `_`, for naming a variant.
fn pattern_names(pat: &Pat) -> String {
    let mut names = Vec::new();
    super::scope::pattern_bindings(pat, &mut |ident, _| names.push(ident.to_string()));
    names.join("_")
}

/// The statement as a user would read it, on one line, for the variant's doc comment.
fn source_of(stmt: &Stmt) -> String {
    let file: Result<syn::File, _> = syn::parse2(quote!(fn __saga_source() { #stmt }));
    let text = match file {
        Ok(file) => prettyplease::unparse(&file),
        Err(_) => quote!(#stmt).to_string(),
    };
    let body = text
        .lines()
        .skip(1)
        .take_while(|line| *line != "}")
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    const MAX: usize = 120;
    if body.chars().count() > MAX {
        let cut: String = body.chars().take(MAX).collect();
        format!("{cut}…")
    } else {
        body
    }
}

/// Finds suspensions, not looking into closures, async blocks or nested items (where they
/// are errors reported elsewhere).
#[derive(Default)]
struct Finder {
    found: Vec<Span>,
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_expr(&mut self, expr: &'ast Expr) {
        if classify(expr).is_some() {
            self.found.push(expr.span());
            return;
        }
        match expr {
            Expr::Closure(_) | Expr::Async(_) => {}
            _ => syn::visit::visit_expr(self, expr),
        }
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        if let Some(args) = macro_args::std_args(mac) {
            args.values()
                .into_iter()
                .for_each(|value| self.visit_expr(value));
        }
    }
}

pub fn contains_suspension(expr: &Expr) -> bool {
    let mut finder = Finder::default();
    finder.visit_expr(expr);
    !finder.found.is_empty()
}

fn contains_suspension_block(block: &Block) -> bool {
    let mut finder = Finder::default();
    finder.visit_block(block);
    !finder.found.is_empty()
}

fn contains_suspension_stmt(stmt: &Stmt) -> bool {
    if let Stmt::Macro(stmt_macro) = stmt
        && super::suspend::is_join(&Expr::Macro(syn::ExprMacro {
            attrs: Vec::new(),
            mac: stmt_macro.mac.clone(),
        }))
    {
        return true;
    }
    let mut finder = Finder::default();
    finder.visit_stmt(stmt);
    !finder.found.is_empty()
}
