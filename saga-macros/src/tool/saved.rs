//! Locals that cannot be saved, reported by the macro at the local rather than by rustc
//! in generated code: a borrow (the state enum rejects it too, but as a lifetime error,
//! since `&str` is `Deserialize<'a>`).

use std::collections::HashMap;

use syn::visit::Visit;
use syn::{Block, Expr, Pat, Type};

use super::machine::Machine;
use crate::errors::Errors;

pub fn check(body: &Block, machine: &Machine, errors: &mut Errors) {
    let mut borrows = Borrows::default();
    borrows.visit_block(body);
    let mut reported = Vec::new();
    for (saved, _) in &machine.resumes {
        for local in saved {
            let key = format!("{:?}", local.ident.span());
            if let Some(name) = borrows.0.get(&key)
                && !reported.contains(&key)
            {
                reported.push(key);
                errors.at(
                    &local.ident,
                    format!(
                        "`{name}` is a borrow used after a suspension, but only owned values \
                         can be saved in the saga's state; hold an owned value instead \
                         (`.clone()`, `.to_owned()`, `.to_string()`), or compute it again \
                         after the suspension"
                    ),
                );
            }
        }
    }
}

/// `let` bindings that are visibly borrows: `let x: &T = …` or `let x = &…`.
#[derive(Default)]
struct Borrows(HashMap<String, String>);

impl<'ast> Visit<'ast> for Borrows {
    fn visit_local(&mut self, local: &'ast syn::Local) {
        let (ident, annotated) = match &local.pat {
            Pat::Ident(pat) => (Some(&pat.ident), false),
            Pat::Type(typed) => match &*typed.pat {
                Pat::Ident(pat) => (Some(&pat.ident), matches!(&*typed.ty, Type::Reference(_))),
                _ => (None, false),
            },
            _ => (None, false),
        };
        let initialised_by_borrow = local
            .init
            .as_ref()
            .is_some_and(|init| matches!(&*init.expr, Expr::Reference(_)));
        if let Some(ident) = ident
            && (annotated || initialised_by_borrow)
        {
            self.0
                .insert(format!("{:?}", ident.span()), super::rename::written(ident));
        }
        syn::visit::visit_local(self, local);
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}
