//! The body as one ordinary async function: each suspension asks a script and goes on.
//! Used by the differential tests, which compare it with the state machine.

use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, Stmt};

use crate::shared::private_path;
use crate::tool::ir::Suspension;
use crate::tool::parse::macro_args;
use crate::tool::parse::suspend::{classify, request_call};

pub fn body(mut block: Block) -> Block {
    Plain { unexpanded: false }.visit_block_mut(&mut block);
    block
}

/// The body for the function kept beside a failed expansion, so that IDEs still see it:
/// every suspension, wherever it stands, becomes a typed placeholder, so the only
/// errors are the macro's.
pub fn unexpanded(mut block: Block) -> Block {
    Plain { unexpanded: true }.visit_block_mut(&mut block);
    block
}

struct Plain {
    unexpanded: bool,
}

impl VisitMut for Plain {
    fn visit_stmt_mut(&mut self, stmt: &mut Stmt) {
        if let Stmt::Macro(stmt_macro) = stmt {
            let expr = Expr::Macro(syn::ExprMacro {
                attrs: stmt_macro.attrs.clone(),
                mac: stmt_macro.mac.clone(),
            });
            if classify(&expr).is_some() {
                *stmt = Stmt::Expr(expr, stmt_macro.semi_token);
            }
        }
        visit_mut::visit_stmt_mut(self, stmt);
    }

    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if self.unexpanded
            && let Expr::Try(try_expr) = &*expr
            && crate::tool::check::question_mark_on_a_round(&try_expr.expr).is_some()
            && let Some(Ok(suspension)) = classify(&try_expr.expr)
        {
            // `?` on a round's answers, already reported: the fix the error suggests, so
            // that the code after it is typed as it will be.
            let private = private_path();
            let span = try_expr.question_token.span;
            let requests = suspension.requests();
            *expr = match suspension {
                Suspension::Join { .. } => syn::parse_quote_spanned!(span=>
                    (#(#private::unexpanded(#requests)?,)*)
                ),
                _ => syn::parse_quote_spanned!(span=>
                    ::core::iter::Iterator::collect::<::core::result::Result<::std::vec::Vec<_>, _>>(
                        ::core::iter::IntoIterator::into_iter(#private::unexpanded(#(#requests)*))
                    )?
                ),
            };
            return;
        }
        if self.unexpanded
            && matches!(classify(expr), Some(Err(_)))
            && let Expr::Macro(mac) = &*expr
        {
            // A malformed `join!`, already reported: a tuple of what it holds.
            use syn::punctuated::Punctuated;
            let private = private_path();
            if let Ok(items) = mac
                .mac
                .parse_body_with(Punctuated::<Expr, syn::Token![,]>::parse_terminated)
            {
                let items = items.into_iter().map(|item| match request_call(&item) {
                    Some(_) => quote::quote!(#private::unexpanded(#item)),
                    None => quote::quote!(#item),
                });
                *expr = syn::parse_quote_spanned!(expr.span()=> (#(#items,)*));
            }
            return;
        }
        let Some(Ok(suspension)) = classify(expr) else {
            if self.unexpanded || !matches!(expr, Expr::Closure(_) | Expr::Async(_)) {
                visit_mut::visit_expr_mut(self, expr);
            }
            return;
        };
        let private = private_path();
        // Resolved where the attribute is: the plain run's locals (`__run`, `__script`)
        // are the expansion's, whatever context the suspension's tokens come from.
        let span = crate::shared::at_call_site(expr.span());
        if let Suspension::Call { call, .. } = &suspension {
            // Its arguments may suspend too: `f(x.await?).await`.
            let mut call = call.clone();
            visit_mut::visit_expr_mut(self, &mut call);
            *expr = if self.unexpanded {
                crate::tool::emit::call::placeholder(span, &call)
            } else {
                crate::tool::emit::call::plain(span, &call)
            };
            return;
        }
        if self.unexpanded {
            let requests = suspension.requests();
            *expr = match suspension {
                _ if requests.is_empty() => syn::parse_quote_spanned!(span=> ()),
                Suspension::Join { .. } => {
                    syn::parse_quote_spanned!(span=> (#(#private::unexpanded(#requests)),*))
                }
                Suspension::Await { .. } | Suspension::Call { .. } => {
                    let request = requests[0];
                    syn::parse_quote_spanned!(span=> #private::unexpanded(#request))
                }
            };
            return;
        }
        if suspension.is_checkpoint() {
            *expr = syn::parse_quote_spanned!(span=> { __run.checkpoint(); });
            return;
        }
        let requests: Vec<&Expr> = suspension.requests();
        let names: Vec<syn::Ident> = (0..requests.len())
            .map(|i| quote::format_ident!("__request{}", i))
            .collect();
        let marks: Vec<syn::Ident> = (0..requests.len())
            .map(|i| quote::format_ident!("__mark{}", i))
            .collect();
        let indices = 0..requests.len();
        let answers =
            quote_spanned!(span=> #(#private::answer(#marks, &mut __answers, #indices)),*);
        let value = match suspension {
            Suspension::Join { .. } => quote_spanned!(span=> (#answers)),
            Suspension::Await { .. } | Suspension::Call { .. } => answers,
        };
        // Emitted as tokens, not parsed back (nothing reads the plain body afterwards, and
        // parsing was a measurable part of the macro's time); parenthesised, so that it
        // stays one expression wherever it stands.
        *expr = Expr::Verbatim(quote_spanned! {span=> ({
            #(
                let #names = #requests;
                let #marks = #private::marker(&#names);
            )*
            let mut __round = ::std::vec::Vec::new();
            #(#private::requests(&mut __round, #names);)*
            let mut __answers = __run.ask(__script, __round);
            #value
        })});
    }

    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        // The standard macros' arguments may suspend; in the kept copy of a failed
        // expansion, any macro's may.
        let args = if self.unexpanded {
            // A standard macro as saga reads it (`matches!`'s pattern is no expression),
            // any other as expressions if they read so.
            macro_args::std_args(mac).or_else(|| macro_args::any_args(mac))
        } else {
            macro_args::std_args(mac)
        };
        if let Some(mut args) = args {
            args.values_mut()
                .into_iter()
                .for_each(|value| self.visit_expr_mut(value));
            mac.tokens = args.tokens();
        }
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
