//! The operands evaluated before a suspension: Rust evaluates them first, so they are
//! kept in temporaries ahead of the suspension's own statement, except places (a
//! method's receiver, the left of `+=`, the indexed collection), which must stay places
//! for the borrow or the assignment to mean what it did.

use proc_macro2::TokenStream;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Stmt};

use crate::tool::lower::Lower;
use crate::tool::lower::suspends::contains_suspension;

/// How an operand is evaluated: for its value, or as a place (a method's receiver, the
/// left of `+=`, the indexed collection), which must not be moved to a temporary.
#[derive(Clone, Copy)]
pub(super) enum Role {
    Value,
    Place,
    /// An operand a formatting macro formats (not its format string, nor `write!`'s
    /// destination): a `&str` is kept as its `String` (see the runtime's `Formatted`).
    Formatted,
}

/// Whether [`Lower::value`] keeps `expr` in a temporary: it is neither a literal, a local
/// nor a place (a field, an index, a reference, a dereference, parentheses).
fn needs_temporary(expr: &Expr) -> bool {
    !matches!(
        expr,
        Expr::Lit(_)
            | Expr::Path(_)
            | Expr::Field(_)
            | Expr::Index(_)
            | Expr::Reference(_)
            | Expr::Paren(_)
            | Expr::Group(_)
            | Expr::Unary(syn::ExprUnary {
                op: syn::UnOp::Deref(_),
                ..
            })
    )
}

impl Lower<'_> {
    /// Lowers operands evaluated left to right. Those evaluated before the last one that
    /// suspends are kept in temporaries (a place stays a place, with only the values it
    /// reads kept), so that they are evaluated before the suspension, as in Rust.
    pub(super) fn sequence(
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
                    Role::Formatted => self.formatted(lowered, out),
                }
            } else {
                lowered
            };
        }
    }

    /// `expr`, evaluated now for its value: a literal or a local stays (nothing to
    /// evaluate), a place stays a place, anything else goes to a temporary.
    pub(super) fn value(&mut self, expr: Expr, out: &mut Vec<Stmt>) -> Expr {
        match expr {
            Expr::Lit(_) | Expr::Path(_) => expr,
            expr if needs_temporary(&expr) => self.temporary(expr, out),
            place => self.place(place, out),
        }
    }

    /// A formatted operand evaluated now: as [`Lower::value`], but a temporary holds a
    /// `&str` as the `String` it points to, which formats the same and can be saved
    /// across the suspension (`name_of(c)` giving a `&'static str`, `name.trim()`).
    fn formatted(&mut self, expr: Expr, out: &mut Vec<Stmt>) -> Expr {
        match expr {
            // What `value` keeps as it is, or as a place, stays so.
            expr if !needs_temporary(&expr) => self.value(expr, out),
            other => {
                let span = other.span();
                let private = crate::shared::private_path();
                let kept: Expr = syn::parse_quote_spanned! {span=> {
                    #[allow(unused_imports)]
                    use #private::KeepFormatted as _;
                    #private::Formatted(#other).keep()
                }};
                self.temporary(kept, out)
            }
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

    pub(super) fn temporary(&mut self, expr: Expr, out: &mut Vec<Stmt>) -> Expr {
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
}
