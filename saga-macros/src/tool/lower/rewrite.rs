//! The tool's own exits: `return e` and `e?` leave the step with the tool's output,
//! and so does the body's final expression.
//!
//! When the output is written `Result<…>` or `Option<…>`, the step's code runs inside an
//! `async` block ([`enclose`]) whose own return type is `Result<Step, E>` (or
//! `Option<Step>`): a `return Err(e)` or a `?` that the macro cannot see, inside another
//! crate's macro (`anyhow::bail!`, `ensure!`), leaves that block with the error, which
//! ends the saga with it, exactly as it would leave the function. The exits the macro
//! sees, and its own (a suspension, a request asked again), leave the block with
//! `Ok(step)`; a `?` is left as written.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, Stmt};

use crate::tool::ir::Carrier;
use crate::tool::lower::site_id;
use crate::tool::parse::macro_args;

impl Carrier {
    /// By the last segment of the output's path: `Result` or `Option`.
    pub fn of(output: &syn::Type) -> Carrier {
        let syn::Type::Path(path) = output else {
            return Carrier::Other;
        };
        match path.path.segments.last() {
            Some(segment) if segment.ident == "Result" => Carrier::Result,
            Some(segment) if segment.ident == "Option" => Carrier::Option,
            _ => Carrier::Other,
        }
    }

    /// `step` as the value the enclosing block returns: `Ok(step)`, `Some(step)`, or
    /// `step` itself when the code is not enclosed.
    pub fn wrap(self, step: TokenStream) -> TokenStream {
        match self {
            Carrier::Result => quote!(::core::result::Result::Ok(#step)),
            Carrier::Option => quote!(::core::option::Option::Some(#step)),
            Carrier::Other => step,
        }
    }
}

/// The step's code, from its state slot on, run inside an `async` block whose returns
/// are the function's errors; see the module documentation. The slot is declared inside
/// it: the state's type may hold the lifetime of a borrow the code makes (a helper's
/// call), which a variable captured from outside could not. The block is polled behind
/// the runtime's `opaque`, so that it is compiled in one function.
pub fn enclose(code: TokenStream, carrier: Carrier) -> TokenStream {
    let exit = match carrier {
        Carrier::Result => quote! {
            match __exit {
                ::core::result::Result::Ok(__step) => __step,
                ::core::result::Result::Err(__error) => {
                    Self::__finish(::core::result::Result::Err(__error))
                }
            }
        },
        Carrier::Option => quote! {
            match __exit {
                ::core::option::Option::Some(__step) => __step,
                ::core::option::Option::None => Self::__finish(::core::option::Option::None),
            }
        },
        Carrier::Other => return code,
    };
    // Behind `opaque`, so that the block, which is nearly all of the step, is not inlined
    // into the step's own future and optimized there again (see `opaque` in the runtime).
    let private = crate::shared::private_path();
    quote! {
        let __exit = #private::opaque(async move { #code }).await;
        #exit
    }
}

/// Wraps the value of each `return` in `stmt` (code the macro generated, such as the
/// guard that asks a round again) as [`Carrier::wrap`] says.
pub fn wrap_returns(stmt: &mut Stmt, carrier: Carrier) {
    struct Wrap(Carrier);
    impl VisitMut for Wrap {
        fn visit_expr_mut(&mut self, expr: &mut Expr) {
            match expr {
                Expr::Closure(_) | Expr::Async(_) => {}
                Expr::Return(ret) => {
                    if let Some(value) = &mut ret.expr {
                        let wrapped = self.0.wrap(quote!(#value));
                        **value = syn::parse2(wrapped).expect("a wrapped expression");
                    }
                }
                _ => visit_mut::visit_expr_mut(self, expr),
            }
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    if carrier != Carrier::Other {
        Wrap(carrier).visit_stmt_mut(stmt);
    }
}

/// `unit`: the function returns `()`, so a body without a final expression returns it.
pub fn exits(mut body: Block, unit: bool, carrier: Carrier) -> Block {
    Exits { carrier }.visit_block_mut(&mut body);
    if unit && !matches!(body.stmts.last(), Some(Stmt::Expr(_, None))) {
        let finish = carrier.wrap(quote!(Self::__finish(())));
        body.stmts
            .push(Stmt::Expr(syn::parse_quote!(#finish), None));
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
            let finish = carrier.wrap(quote_spanned!(span=> Self::__finish(__output)));
            body.stmts
                .push(Stmt::Expr(syn::parse_quote_spanned!(span=> #finish), None));
        } else {
            let finish = carrier.wrap(quote_spanned!(span=> Self::__finish(#value)));
            *tail = syn::parse_quote_spanned!(span=> #finish);
        }
    }
    body
}

/// The exits inside a call that may suspend (`f(parse(s)?).await`): the call is kept
/// with its site, outside the body that [`exits`] rewrites.
pub fn exits_in_calls(sites: &mut [crate::tool::ir::Site], carrier: Carrier) {
    for site in sites {
        if let crate::tool::ir::Suspension::Call { call, .. } = &mut site.suspension {
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
                let value = ret
                    .expr
                    .take()
                    .map_or_else(|| quote!(()), |value| quote!(#value));
                let finish = self
                    .carrier
                    .wrap(quote_spanned!(span=> Self::__finish(#value)));
                *expr = syn::parse_quote_spanned!(span=> return #finish);
            }
            Expr::Try(try_expr) if self.carrier != Carrier::Other => {
                // Enclosed, `?` leaves the block with the error, as it leaves the function.
                self.visit_expr_mut(&mut try_expr.expr);
            }
            Expr::Try(try_expr) => {
                self.visit_expr_mut(&mut try_expr.expr);
                let span = try_expr.question_token.span;
                let inner = &try_expr.expr;
                // Not enclosed (an output written as an alias, `-> MyResult<T>`): the error
                // converted and returned, as `?` does.
                let tokens = quote_spanned! {span=>
                    match #inner {
                        ::core::result::Result::Ok(__value) => __value,
                        ::core::result::Result::Err(__error) => {
                            return Self::__finish(::core::result::Result::Err(
                                ::core::convert::From::from(__error),
                            ))
                        }
                    }
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
