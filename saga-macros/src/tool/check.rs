//! Where a suspension may not stand. A saga suspends by ending the current request, so a
//! suspension must be reachable from the function body itself: not from a closure or an
//! async block (which run later, or elsewhere), not from a match guard or the right of
//! `&&`/`||` (which may not run at all). And a request must be awaited where it is made:
//! the request value is not a future that could be stored and awaited later.

use syn::visit::{self, Visit};
use syn::{BinOp, Expr};

use super::suspend::{classify, request_call};
use crate::errors::Errors;

pub fn check(body: &syn::Block, errors: &mut Errors) {
    let mut checker = Checker {
        errors,
        context: None,
    };
    checker.visit_block(body);
}

struct Checker<'a> {
    errors: &'a mut Errors,
    /// Why a suspension cannot be here, when it cannot.
    context: Option<&'static str>,
}

impl Checker<'_> {
    fn within(&mut self, context: &'static str, f: impl FnOnce(&mut Self)) {
        let outer = self.context.replace(context);
        // The innermost reason is the clearest, but the first one found still stands.
        if let Some(outer) = outer {
            self.context = Some(outer);
        }
        f(self);
        self.context = outer;
    }

    /// Visits what a request's builder chain evaluates (arguments), not the request call.
    fn visit_request_chain(&mut self, expr: &Expr) {
        match expr {
            Expr::MethodCall(call) => {
                self.visit_request_chain(&call.receiver);
                for arg in &call.args {
                    self.visit_expr(arg);
                }
            }
            Expr::Paren(paren) => self.visit_request_chain(&paren.expr),
            Expr::Call(call) => {
                for arg in &call.args {
                    self.visit_expr(arg);
                }
            }
            other => self.visit_expr(other),
        }
    }
}

impl<'ast> Visit<'ast> for Checker<'_> {
    fn visit_expr(&mut self, expr: &'ast Expr) {
        if let Some(suspension) = classify(expr) {
            match suspension {
                Err(error) => self.errors.push(error),
                Ok(_) => {
                    if let Some(context) = self.context {
                        self.errors.at(expr, context);
                    }
                }
            }
            // join!'s requests were parsed by `classify`; their arguments are rare enough
            // that they are left to rustc.
            if let Expr::Await(awaited) = expr {
                self.visit_request_chain(&awaited.base);
            }
            return;
        }
        match expr {
            Expr::Call(call) => {
                if let Some((name, span)) = request_call(expr) {
                    self.errors.push(syn::Error::new(
                        span,
                        format!(
                            "`{name}(..)` is not awaited where it is made: a request is not a \
                             future that can be kept and awaited later; write \
                             `{name}(..).await` (or put it in `join!(..)` to send several at \
                             once)"
                        ),
                    ));
                }
                visit::visit_expr_call(self, call);
            }
            Expr::Closure(closure) => self.within(
                "a suspension cannot be inside a closure: the closure may run later or \
                 never, but a saga suspends by ending the current request; move the request \
                 out of the closure (e.g. into a `for` loop)",
                |this| visit::visit_expr_closure(this, closure),
            ),
            Expr::Async(block) => self.within(
                "a suspension cannot be inside an async block: the block is a separate future \
                 the saga cannot save; await the request in the tool's own body",
                |this| visit::visit_expr_async(this, block),
            ),
            Expr::Binary(binary) if matches!(binary.op, BinOp::And(_) | BinOp::Or(_)) => {
                self.visit_expr(&binary.left);
                self.within(
                    "a suspension cannot be on the right of `&&` or `||`: it would run only \
                     sometimes; bind it first with `let answer = ….await;` and test the answer",
                    |this| this.visit_expr(&binary.right),
                );
            }
            _ => visit::visit_expr(self, expr),
        }
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        self.visit_pat(&arm.pat);
        if let Some((_, guard)) = &arm.guard {
            self.within(
                "a suspension cannot be in a match guard: guards run while choosing an arm; \
                 await before the `match` and match on the answer",
                |this| this.visit_expr(guard),
            );
        }
        self.visit_expr(&arm.body);
    }

    fn visit_item(&mut self, _item: &'ast syn::Item) {
        // A nested fn or impl is not part of the saga.
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // Arguments that read as expressions (`format!`, `println!`, `vec!`, …) are
        // checked; other macro bodies are not Rust syntax saga can read.
        use syn::punctuated::Punctuated;
        if let Ok(args) = mac.parse_body_with(Punctuated::<Expr, syn::Token![,]>::parse_terminated)
        {
            self.within(
                "a suspension cannot be inside a macro's arguments: the macro decides when \
                 its arguments run; bind it first with `let answer = ….await?;` and pass \
                 `answer`",
                |this| args.iter().for_each(|arg| this.visit_expr(arg)),
            );
        }
    }
}
