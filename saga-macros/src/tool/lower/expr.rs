//! Expressions to A-normal form: each suspension hoisted to a statement of its own, in
//! Rust's evaluation order, and each construct holding one (`if`, `match`, `loop`, a
//! block) made a whole statement or a whole `let` initialiser. The bulk of the lowering,
//! one arm per kind of expression; what keeps the operands evaluated before a suspension
//! is in `operands`, and `for` loops are in `for_loop`.

use proc_macro2::TokenStream;
use quote::format_ident;
use syn::spanned::Spanned;
use syn::{BinOp, Block, Expr, Stmt};

use crate::tool::ir::Suspension;
use crate::tool::lower::Lower;
use crate::tool::lower::operands::Role;
use crate::tool::lower::suspends::{contains_suspension, contains_suspension_block};
use crate::tool::parse::macro_args;
use crate::tool::parse::suspend::classify;

impl Lower<'_> {
    /// Lowers `expr` to A-normal form for its suspensions: each suspension becomes a
    /// statement of its own in `out`, in Rust's evaluation order; what is evaluated
    /// before a suspension is kept in a temporary (places stay places); a construct
    /// holding a suspension (`if`, `match`, `loop`, a block) becomes the initialiser of a
    /// `let` of its own unless it is the whole statement (`depth == 0`).
    pub(super) fn head(
        &mut self,
        expr: Expr,
        hint: &str,
        out: &mut Vec<Stmt>,
        depth: usize,
    ) -> Expr {
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
        match expr {
            Expr::If(_)
            | Expr::Match(_)
            | Expr::Loop(_)
            | Expr::While(_)
            | Expr::ForLoop(_)
            | Expr::Block(_)
            | Expr::Unsafe(_) => self.head_construct(expr, hint, out, depth),
            Expr::Binary(_) | Expr::Assign(_) => self.head_operator(expr, hint, out, depth),
            Expr::MethodCall(_)
            | Expr::Call(_)
            | Expr::Tuple(_)
            | Expr::Array(_)
            | Expr::Struct(_)
            | Expr::Index(_)
            | Expr::Range(_)
            | Expr::Repeat(_)
            | Expr::Macro(_) => self.head_operands(expr, hint, out, depth),
            other => self.head_inner(other, hint, out, depth),
        }
    }

    /// [`Lower::head`] of a construct that holds a suspension: an `if`, a `match`, a loop, a block.
    fn head_construct(
        &mut self,
        expr: Expr,
        hint: &str,
        out: &mut Vec<Stmt>,
        depth: usize,
    ) -> Expr {
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
            other => other,
        }
    }

    /// [`Lower::head`] of a binary operator or an assignment: its operands in the order Rust evaluates them (the right side of `&&`/`||` only when it would be).
    fn head_operator(&mut self, expr: Expr, hint: &str, out: &mut Vec<Stmt>, depth: usize) -> Expr {
        let next = depth + 1;
        match expr {
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
            other => other,
        }
    }

    /// [`Lower::head`] of an expression of several operands (a call, a tuple, a struct literal, …): each evaluated, and kept, before the next suspends.
    fn head_operands(&mut self, expr: Expr, hint: &str, out: &mut Vec<Stmt>, depth: usize) -> Expr {
        let next = depth + 1;
        match expr {
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
            Expr::Struct(e) => self.head_struct(e, hint, out, next),
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
            Expr::Macro(e) => self.head_macro(e, hint, out, next),
            other => other,
        }
    }

    /// [`Lower::head`] of an expression with one operand evaluated first (a field, a `?`, a reference, a `return`, …).
    fn head_inner(&mut self, expr: Expr, hint: &str, out: &mut Vec<Stmt>, depth: usize) -> Expr {
        let next = depth + 1;
        match expr {
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

    /// A struct literal's field values, then its base (`..rest`), each before the next.
    fn head_struct(
        &mut self,
        mut e: syn::ExprStruct,
        hint: &str,
        out: &mut Vec<Stmt>,
        next: usize,
    ) -> Expr {
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

    /// A standard macro's arguments (`format!`, `vec!`, …), each before the next; those
    /// after its format string are [`Role::Formatted`].
    fn head_macro(
        &mut self,
        mut e: syn::ExprMacro,
        hint: &str,
        out: &mut Vec<Stmt>,
        next: usize,
    ) -> Expr {
        if let Some(mut args) = macro_args::std_args(&e.mac) {
            let formatted_from = macro_args::formatted_from(&e.mac);
            let mut values: Vec<(Expr, Role)> = args
                .values()
                .into_iter()
                .enumerate()
                .map(|(index, value)| {
                    let role = if formatted_from.is_some_and(|from| index >= from) {
                        Role::Formatted
                    } else {
                        Role::Value
                    };
                    (value.clone(), role)
                })
                .collect();
            self.sequence(&mut values, hint, out, next);
            for (slot, (value, _)) in args.values_mut().into_iter().zip(values) {
                *slot = value;
            }
            e.mac.tokens = args.tokens();
        }
        Expr::Macro(e)
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

/// The tests of a condition `a && b && c`, in order.
pub(crate) fn chain(cond: &Expr) -> Vec<&Expr> {
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
pub(crate) fn has_let(expr: &Expr) -> bool {
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
