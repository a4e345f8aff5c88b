//! The body as one ordinary async function: each suspension asks a script and goes on.
//! Used by the differential tests, which compare it with the state machine.

use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, Stmt};

use super::machine::private_path;
use super::suspend::{Suspension, classify};

pub fn body(mut block: Block) -> Block {
    Plain.visit_block_mut(&mut block);
    block
}

struct Plain;

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
        let Some(Ok(suspension)) = classify(expr) else {
            if !matches!(expr, Expr::Closure(_) | Expr::Async(_)) {
                visit_mut::visit_expr_mut(self, expr);
            }
            return;
        };
        let private = private_path();
        let span = expr.span();
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
            Suspension::Await { .. } => answers,
        };
        *expr = syn::parse_quote_spanned! {span=> {
            #(
                let #names = #requests;
                let #marks = #private::marker(&#names);
            )*
            let mut __answers = __run.ask(__script, ::std::vec![#(#private::Request::from(#names)),*]);
            #value
        }};
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
