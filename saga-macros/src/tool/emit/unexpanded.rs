//! The body kept beside a failed expansion, so that IDEs still see it: every suspension,
//! wherever it stands, becomes a typed placeholder, so the only errors are the macro's.

use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, Stmt};

use crate::shared::private_path;
use crate::tool::ir::Suspension;
use crate::tool::parse::macro_args;
use crate::tool::parse::suspend::{classify, request_call};

/// The body with each suspension a typed placeholder.
pub fn unexpanded(mut block: Block) -> Block {
    Unexpanded.visit_block_mut(&mut block);
    block
}

struct Unexpanded;

impl VisitMut for Unexpanded {
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
        if let Expr::Try(try_expr) = &*expr
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
        if matches!(classify(expr), Some(Err(_)))
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
            visit_mut::visit_expr_mut(self, expr);
            return;
        };
        let private = private_path();
        // Resolved where the attribute is, as the expansion's code at a suspension is.
        let span = crate::shared::at_call_site(expr.span());
        if let Suspension::Call { call, .. } = &suspension {
            // Its arguments may suspend too: `f(x.await?).await`.
            let mut call = call.clone();
            visit_mut::visit_expr_mut(self, &mut call);
            *expr = crate::tool::emit::call::placeholder(span, &call);
            return;
        }
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
    }

    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        // Any macro's arguments may suspend in the kept copy: a standard macro's as saga
        // reads them (`matches!`'s pattern is no expression), any other's as expressions
        // if they read so.
        let args = macro_args::std_args(mac).or_else(|| macro_args::any_args(mac));
        if let Some(mut args) = args {
            args.values_mut()
                .into_iter()
                .for_each(|value| self.visit_expr_mut(value));
            mac.tokens = args.tokens();
        }
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
