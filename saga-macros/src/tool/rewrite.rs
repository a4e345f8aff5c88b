//! The tool's own exits: `return e` and `e?` leave the step with the tool's output,
//! and so does the body's final expression.

use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, Stmt};

use super::lower::site_id;
use super::macro_args;

/// What `?` unwraps in the function: the type its output is written with.
#[derive(Clone, Copy)]
pub enum Carrier {
    Result,
    Option,
}

impl Carrier {
    /// `Option` when the output is written `Option<…>`; otherwise `Result` (`Result`,
    /// an alias of it, a tool output): as in the function, `?` on the other kind is a
    /// type error.
    pub fn of(output: &syn::Type) -> Carrier {
        match output {
            syn::Type::Path(path)
                if path
                    .path
                    .segments
                    .last()
                    .is_some_and(|segment| segment.ident == "Option") =>
            {
                Carrier::Option
            }
            _ => Carrier::Result,
        }
    }
}

/// `unit`: the function returns `()`, so a body without a final expression returns it.
pub fn exits(mut body: Block, unit: bool, carrier: Carrier) -> Block {
    Exits { carrier }.visit_block_mut(&mut body);
    if unit && !matches!(body.stmts.last(), Some(Stmt::Expr(_, None))) {
        body.stmts
            .push(Stmt::Expr(syn::parse_quote!(Self::__finish(())), None));
        return body;
    }
    if let Some(Stmt::Expr(tail, None)) = body.stmts.last_mut() {
        let span = tail.span();
        let value = std::mem::replace(tail, Expr::Verbatim(Default::default()));
        if holds_site(&value) {
            // A construct holding a suspension stays the whole initialiser of a statement.
            body.stmts.pop();
            body.stmts
                .push(syn::parse_quote_spanned!(span=> let __output = #value;));
            body.stmts.push(Stmt::Expr(
                syn::parse_quote_spanned!(span=> Self::__finish(__output)),
                None,
            ));
        } else {
            *tail = syn::parse_quote_spanned!(span=> Self::__finish(#value));
        }
    }
    body
}

/// The exits inside a call that may suspend (`f(parse(s)?).await`): the call is kept
/// with its site, outside the body that [`exits`] rewrites.
pub fn exits_in_calls(sites: &mut [super::lower::Site], carrier: Carrier) {
    for site in sites {
        if let super::suspend::Suspension::Call { call, .. } = &mut site.suspension {
            Exits { carrier }.visit_expr_mut(call);
        }
    }
}

struct Exits {
    carrier: Carrier,
}

impl VisitMut for Exits {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        match expr {
            Expr::Closure(_) | Expr::Async(_) => {}
            Expr::Return(ret) => {
                if let Some(value) = &mut ret.expr {
                    self.visit_expr_mut(value);
                }
                let span = ret.return_token.span;
                let value = ret.expr.take();
                *expr = match value {
                    Some(value) => syn::parse_quote_spanned!(span=> return Self::__finish(#value)),
                    None => syn::parse_quote_spanned!(span=> return Self::__finish(())),
                };
            }
            Expr::Try(try_expr) => {
                self.visit_expr_mut(&mut try_expr.expr);
                let span = try_expr.question_token.span;
                let inner = &try_expr.expr;
                let tokens = match self.carrier {
                    Carrier::Result => quote_spanned! {span=>
                        match #inner {
                            ::core::result::Result::Ok(__value) => __value,
                            ::core::result::Result::Err(__error) => {
                                return Self::__finish(::core::result::Result::Err(
                                    ::core::convert::From::from(__error),
                                ))
                            }
                        }
                    },
                    Carrier::Option => quote_spanned! {span=>
                        match #inner {
                            ::core::option::Option::Some(__value) => __value,
                            ::core::option::Option::None => {
                                return Self::__finish(::core::option::Option::None)
                            }
                        }
                    },
                };
                *expr = syn::parse2(tokens).unwrap_or_else(|_| Expr::Verbatim(Default::default()));
            }
            _ => visit_mut::visit_expr_mut(self, expr),
        }
    }

    /// Macro arguments that read as expressions (`format!`, `vec!`, `assert!`, …) are
    /// rewritten too, so that `?` inside them leaves the tool as it would the function.
    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        let Some(mut args) = macro_args::any_args(mac) else {
            return;
        };
        args.values_mut()
            .into_iter()
            .for_each(|value| self.visit_expr_mut(value));
        mac.tokens = args.tokens();
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

fn holds_site(expr: &Expr) -> bool {
    struct Find(bool);
    impl<'ast> syn::visit::Visit<'ast> for Find {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            if site_id(expr).is_some() {
                self.0 = true;
            } else {
                syn::visit::visit_expr(self, expr);
            }
        }
    }
    let mut find = Find(false);
    syn::visit::Visit::visit_expr(&mut find, expr);
    find.0
}
