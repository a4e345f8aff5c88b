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
use syn::{Block, Expr, Ident, Pat, Stmt};

use super::suspend::{Suspension, classify};
use crate::errors::Errors;

/// One suspension point.
pub struct Site {
    pub id: usize,
    /// The local holding the answer in the continuation: `__aN`.
    pub answer: Ident,
    pub suspension: Suspension,
    /// The state variant's name, e.g. `AfterElicitTarget`.
    pub variant: Ident,
    /// The statement as written, for the variant's doc comment.
    pub source: String,
    pub span: Span,
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
    };
    let block = lower.block(body);
    (block, lower.sites)
}

struct Lower<'a> {
    sites: Vec<Site>,
    errors: &'a mut Errors,
    hoisted: usize,
    variants: Vec<String>,
    /// The statement being lowered, as written.
    source: String,
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
            Stmt::Local(mut local) => {
                let hint = pattern_names(&local.pat);
                if let Some(init) = &mut local.init {
                    if let Some((_, diverge)) = &init.diverge
                        && contains_suspension(diverge)
                    {
                        self.errors.at(
                            diverge,
                            "a suspension cannot be in the `else` of a `let … else`; \
                             await it before the `let`",
                        );
                    }
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

    /// A suspension left after hoisting is not evaluated first in its statement.
    fn reject_rest(&mut self, expr: &Expr) {
        let mut finder = Finder::default();
        finder.visit_expr(expr);
        for span in finder.found {
            self.errors.push(syn::Error::new(
                span,
                "this suspension is not the first thing its statement evaluates, so the saga \
                 could not resume in the middle of the statement; bind it first with \
                 `let answer = ….await;` and use `answer` in the statement",
            ));
        }
    }

    /// Lowers the parts of `expr` evaluated first, hoisting a suspension (or a construct
    /// holding one, when it is not the whole statement) into `out`.
    fn head(&mut self, expr: Expr, hint: &str, out: &mut Vec<Stmt>, depth: usize) -> Expr {
        if let Some(suspension) = classify(&expr) {
            return match suspension {
                Ok(suspension) => self.site(suspension, hint, expr.span(), out),
                // Reported by the checker.
                Err(_) => expr,
            };
        }
        let next = depth + 1;
        match expr {
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
            Expr::While(expr_while)
                if contains_suspension(&expr_while.cond)
                    || contains_suspension_block(&expr_while.body) =>
            {
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
                let syn::ExprForLoop {
                    attrs,
                    label,
                    pat,
                    expr,
                    body,
                    ..
                } = expr_for;
                self.hoisted += 1;
                let rest = format_ident!("__rest{}", self.hoisted);
                let span = expr.span();
                // The items still to visit, last first: a Vec survives a suspension where
                // an iterator could not.
                out.push(syn::parse_quote_spanned! {span=>
                    let mut #rest: ::std::vec::Vec<_> = ::core::iter::IntoIterator::into_iter(#expr).collect();
                });
                out.push(syn::parse_quote_spanned! {span=> #rest.reverse(); });
                let desugared: syn::ExprLoop = syn::parse_quote_spanned! {span=>
                    #(#attrs)* #label loop {
                        let ::core::option::Option::Some(#pat) = #rest.pop() else { break; };
                        #body
                    }
                };
                self.head(Expr::Loop(desugared), hint, out, depth)
            }
            Expr::Block(mut expr_block) if contains_suspension_block(&expr_block.block) => {
                expr_block.block = self.block(expr_block.block);
                self.construct(Expr::Block(expr_block), depth, out)
            }
            Expr::Unsafe(mut expr_unsafe) if contains_suspension_block(&expr_unsafe.block) => {
                expr_unsafe.block = self.block(expr_unsafe.block);
                self.construct(Expr::Unsafe(expr_unsafe), depth, out)
            }
            // The parts evaluated first.
            Expr::MethodCall(mut e) => {
                *e.receiver = self.head(*e.receiver, hint, out, next);
                Expr::MethodCall(e)
            }
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
            Expr::Binary(mut e) => {
                *e.left = self.head(*e.left, hint, out, next);
                Expr::Binary(e)
            }
            Expr::Cast(mut e) => {
                *e.expr = self.head(*e.expr, hint, out, next);
                Expr::Cast(e)
            }
            Expr::Paren(mut e) => {
                *e.expr = self.head(*e.expr, hint, out, next);
                Expr::Paren(e)
            }
            Expr::Index(mut e) => {
                *e.expr = self.head(*e.expr, hint, out, next);
                Expr::Index(e)
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
            Expr::Assign(mut e) if matches!(*e.left, Expr::Path(_)) => {
                *e.right = self.head(*e.right, hint, out, next);
                Expr::Assign(e)
            }
            // A call of a path evaluates its arguments in order: the first one first.
            Expr::Call(mut e) if matches!(*e.func, Expr::Path(_)) && !e.args.is_empty() => {
                if let Some(first) = e.args.first_mut() {
                    let value = std::mem::replace(first, Expr::Verbatim(TokenStream::new()));
                    *first = self.head(value, hint, out, next);
                }
                Expr::Call(e)
            }
            other => other,
        }
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
        let answer = format_ident!("__a{}", id);
        let variant = self.variant_name(&suspension, hint);
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
            source: self.source.clone(),
            span,
        });
        syn::parse2(quote_spanned!(span=> #answer)).unwrap_or_else(|_| syn::parse_quote!(#answer))
    }

    fn variant_name(&mut self, suspension: &Suspension, hint: &str) -> String {
        let kinds = suspension.kinds();
        let kind = if kinds.len() == 1 {
            pascal(kinds[0])
        } else {
            "Join".to_owned()
        };
        let base = format!("After{kind}{}", pascal(hint));
        let mut name = base.clone();
        let mut n = 1;
        while self.variants.contains(&name) {
            n += 1;
            name = format!("{base}{n}");
        }
        self.variants.push(name.clone());
        name
    }
}

fn without_cond(expr_if: &syn::ExprIf) -> syn::ExprIf {
    let mut copy = expr_if.clone();
    *copy.cond = syn::parse_quote!(true);
    copy
}

/// `snake_case` → `PascalCase`.
pub fn pascal(text: &str) -> String {
    text.split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|first| first.to_uppercase().chain(chars).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
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
        && stmt_macro
            .mac
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident == "join")
    {
        return true;
    }
    let mut finder = Finder::default();
    finder.visit_stmt(stmt);
    !finder.found.is_empty()
}
