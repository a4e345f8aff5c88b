//! Where a suspension may not stand. A saga suspends by ending the current request, so a
//! suspension must be reachable from the function body itself: not from a closure or an
//! async block (which run later, or elsewhere), not from a match guard (which runs while
//! an arm is chosen), not from the arguments of a macro saga does not know. And a request
//! must be awaited where it is made: the request value is not a future that could be
//! stored and awaited later.
//!
//! Check: these rules here, on the body as written; what a helper may not be
//! ([`helper`]); and the locals the machine would save that cannot be saved ([`saved`]),
//! once the machine is built.

pub mod helper;
pub mod saved;

use syn::Expr;
use syn::visit::{self, Visit};

use crate::errors::Errors;
use crate::tool::ir::{RequestKind, Suspension};
use crate::tool::parse::macro_args;
use crate::tool::parse::suspend::{classify, is_effect, request_call, request_kind};

pub fn check(body: &syn::Block, errors: &mut Errors) {
    let mut checker = Checker {
        errors,
        context: None,
        in_join_all: false,
        in_guard: false,
    };
    checker.visit_block(body);
}

struct Checker<'a> {
    errors: &'a mut Errors,
    /// Why a suspension cannot be here, when it cannot.
    context: Option<String>,
    /// Inside the arguments of `join_all(..)`, which are requests made to be sent.
    in_join_all: bool,
    /// Inside a match guard, where even a call that may suspend (a helper) cannot be:
    /// the machine cannot resume there.
    in_guard: bool,
}

impl Checker<'_> {
    fn within(&mut self, context: impl Into<String>, f: impl FnOnce(&mut Self)) {
        // The first reason found stands.
        let outer = self.context.clone();
        if outer.is_none() {
            self.context = Some(context.into());
        }
        f(self);
        self.context = outer;
    }

    /// Visits an `effect(..)`'s arguments: its name, and its closure (where nothing may
    /// suspend, as in any closure).
    fn visit_effect_args(&mut self, expr: &Expr) {
        match expr {
            Expr::Paren(paren) => self.visit_effect_args(&paren.expr),
            Expr::Group(group) => self.visit_effect_args(&group.expr),
            Expr::Call(call) => {
                for arg in &call.args {
                    self.visit_expr(arg);
                }
            }
            other => self.visit_expr(other),
        }
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
            Expr::Group(group) => self.visit_request_chain(&group.expr),
            Expr::Call(call) => {
                let join_all = matches!(request_kind(expr), Some((RequestKind::JoinAll, _)));
                let outer = std::mem::replace(&mut self.in_join_all, join_all);
                for arg in &call.args {
                    self.visit_expr(arg);
                }
                self.in_join_all = outer;
            }
            other => self.visit_expr(other),
        }
    }
}

impl<'ast> Visit<'ast> for Checker<'_> {
    fn visit_expr(&mut self, expr: &'ast Expr) {
        // `effect(..).await` passes a checkpoint: where a suspension cannot be, neither can
        // it; and it is awaited where it is made, or no checkpoint saves its result.
        match crate::tool::parse::suspend::ungrouped(expr) {
            Expr::Await(awaited) if is_effect(&awaited.base) => {
                // (A match guard sets the context too.)
                if let Some(context) = &self.context {
                    self.errors.at(expr, context);
                }
                self.visit_effect_args(&awaited.base);
                return;
            }
            Expr::Call(_) if is_effect(expr) => {
                self.errors.at(
                    expr,
                    "`effect(..)` is not awaited where it is made: its result is saved in the \
                     saga's state at a checkpoint written where it is awaited, and an effect \
                     kept to be awaited later would run unrecorded; write \
                     `let result = effect(..).await;`",
                );
                self.visit_effect_args(expr);
                return;
            }
            _ => {}
        }
        // `f(..).await` may be an ordinary future, fine anywhere; a helper awaited where
        // it cannot suspend is refused by its type.
        let suspension =
            classify(expr).filter(|s| self.in_guard || !s.as_ref().is_ok_and(|s| s.is_call()));
        if let Some(suspension) = suspension {
            match suspension {
                Err(error) => self.errors.push(error),
                Ok(_) => {
                    if let Some(context) = &self.context {
                        self.errors.at(expr, context);
                    }
                }
            }
            // join!'s requests were parsed by `classify`; their arguments are rare enough
            // that they are left to rustc.
            if let Expr::Await(awaited) = crate::tool::parse::suspend::ungrouped(expr) {
                self.visit_request_chain(&awaited.base);
            }
            return;
        }
        match expr {
            Expr::Call(call) => {
                let kind = request_kind(expr).map(|(kind, _)| kind);
                if let Some((name, span)) = request_call(expr)
                    && !self.in_join_all
                {
                    let fix = if kind == Some(RequestKind::JoinAll) {
                        String::new()
                    } else {
                        " (or put it in `join!(..)` to send several at once)".to_owned()
                    };
                    self.errors.push(syn::Error::new(
                        span,
                        format!(
                            "`{name}(..)` is not awaited where it is made: a request is not a \
                             future that can be kept and awaited later; write \
                             `{name}(..).await`{fix}"
                        ),
                    ));
                }
                // The requests `join_all(..)` is given are made to be sent by it.
                let outer = self.in_join_all;
                self.in_join_all |= kind == Some(RequestKind::JoinAll);
                visit::visit_expr_call(self, call);
                self.in_join_all = outer;
            }
            Expr::Closure(_) | Expr::Async(_) if self.in_guard => {
                // Not run in the guard itself: an ordinary future in there is fine.
                self.in_guard = false;
                self.visit_expr(expr);
                self.in_guard = true;
            }
            Expr::Try(try_expr) => {
                if let Some(message) = question_mark_on_a_round(&try_expr.expr) {
                    self.errors.at(try_expr.question_token, message);
                }
                visit::visit_expr_try(self, try_expr);
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
            _ => visit::visit_expr(self, expr),
        }
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        self.visit_pat(&arm.pat);
        if let Some((_, guard)) = &arm.guard {
            self.within(
                "a suspension cannot be in a match guard: guards run while the arm is being \
                 chosen, before the saga could save where it is; test in the arm instead, \
                 `pattern => if ….await? { … } else { … }`, with the `else` doing what the \
                 arms below would do for this value (asking before the `match` would ask \
                 even when an earlier arm matches)",
                |this| {
                    this.in_guard = true;
                    this.visit_expr(guard);
                    this.in_guard = false;
                },
            );
        }
        self.visit_expr(&arm.body);
    }

    fn visit_item(&mut self, _item: &'ast syn::Item) {
        // A nested fn or impl is not part of the saga.
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // The standard macros evaluate their arguments once each, in order, and saga
        // takes them apart; other macros decide when (and how often) their arguments run.
        if let Some(args) = macro_args::std_args(mac) {
            let name = macro_name(mac);
            let values = args.values();
            let always = macro_args::always_evaluated(&name).unwrap_or(values.len());
            let (first, rest) = values.split_at(always.min(values.len()));
            first.iter().for_each(|value| self.visit_expr(value));
            if !rest.is_empty() {
                let message = if name == "matches" {
                    "a suspension cannot be in the guard of `matches!`: the guard runs only \
                     when the pattern matches, before the saga could save where it is; write \
                     the `match` out, `match … { pattern => ….await?, _ => false }`, which \
                     asks only when the pattern matches, as the guard would"
                        .to_owned()
                } else if name.starts_with("debug_") {
                    format!(
                        "a suspension cannot be inside `{name}!`: its arguments are evaluated \
                         only in debug builds, so a release build would not ask; write \
                         `if cfg!(debug_assertions) {{ let answer = ….await?; {}!(…); }}`, \
                         asserting on `answer`",
                        name.trim_start_matches("debug_")
                    )
                } else {
                    format!(
                        "a suspension cannot be in the message of `{name}!`: the message is \
                         evaluated only when the assertion fails, and asking before it would \
                         ask every time; write the check out: `if !(…) {{ panic!(\"…\", \
                         ….await?) }}`"
                    )
                };
                self.within(message, |this| {
                    rest.iter().for_each(|value| this.visit_expr(value))
                });
            }
        } else if let Some(args) = macro_args::any_args(mac) {
            let name = macro_name(mac);
            let message = format!(
                "a suspension cannot be inside the arguments of `{name}!`: saga only takes \
                 apart the standard macros (`format!`, `println!`, `assert!`, `vec!`, …), \
                 since another macro decides when and how often its arguments run; if \
                 `{name}!` evaluates this argument exactly once, before anything else, bind \
                 it first with `let answer = ….await?;` and pass `answer`, otherwise write \
                 out what the macro does"
            );
            self.within(message, |this| {
                args.values()
                    .into_iter()
                    .for_each(|value| this.visit_expr(value))
            });
        }
    }
}

/// Why `?` cannot apply to what `expr` gives, when it is a whole round's answers:
/// `join_all(..).await` gives a `Vec` of them, `join!(..)` a tuple.
pub fn question_mark_on_a_round(expr: &Expr) -> Option<&'static str> {
    match classify(expr)? {
        Ok(Suspension::Await {
            kind: RequestKind::JoinAll,
            ..
        }) => Some(
            "`?` cannot apply here: `join_all(..).await` gives a `Vec` with each request's \
             answer (`Vec<Result<T, SagaError>>`), not one `Result`; to stop at the first \
             error, as `?` would, collect the answers into one `Result` first: \
             `join_all(..).await.into_iter().collect::<Result<Vec<_>, _>>()?`",
        ),
        Ok(Suspension::Join { .. }) => Some(
            "`?` cannot apply here: `join!(..)` gives a tuple with each request's answer, \
             not one `Result`; take the tuple apart and use `?` on each answer: \
             `let (a, b) = join!(..); let (a, b) = (a?, b?);`",
        ),
        _ => None,
    }
}

fn macro_name(mac: &syn::Macro) -> String {
    mac.path
        .segments
        .last()
        .map(|segment| segment.ident.to_string())
        .unwrap_or_default()
}
