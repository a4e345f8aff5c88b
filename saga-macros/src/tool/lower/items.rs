//! Items declared in the body (`fn`, `const`, `static`, `use`, `struct`, `enum`, `impl`,
//! …). In Rust an item is visible in its whole block, before and after its declaration.
//! The state machine copies parts of the body into many arms, so the items are taken out
//! of the body and declared once, at the top of the generated `step`, where every arm
//! sees them.

use std::collections::BTreeSet;

use syn::visit_mut::{self, VisitMut};
use syn::{Block, Item, Stmt};

/// Takes the items out of `body` (from nested blocks too, not from closures or async
/// blocks); an item whose name is declared twice stays where it is.
pub fn hoist(body: &mut Block) -> Vec<Item> {
    let mut names = Names::default();
    names.visit_block_mut(&mut body.clone());
    let mut hoist = Hoist {
        twice: names.twice,
        items: Vec::new(),
    };
    hoist.visit_block_mut(body);
    hoist.items
}

fn name_of(item: &Item) -> Option<String> {
    let ident = match item {
        Item::Fn(item) => &item.sig.ident,
        Item::Const(item) => &item.ident,
        Item::Static(item) => &item.ident,
        Item::Struct(item) => &item.ident,
        Item::Enum(item) => &item.ident,
        Item::Union(item) => &item.ident,
        Item::Trait(item) => &item.ident,
        Item::Type(item) => &item.ident,
        Item::Mod(item) => &item.ident,
        // `use` and `impl` name nothing that could clash in a way hoisting changes.
        _ => return None,
    };
    Some(ident.to_string())
}

#[derive(Default)]
struct Names {
    seen: BTreeSet<String>,
    twice: BTreeSet<String>,
}

impl VisitMut for Names {
    fn visit_stmt_mut(&mut self, stmt: &mut Stmt) {
        if let Stmt::Item(item) = stmt {
            if let Some(name) = name_of(item)
                && !self.seen.insert(name.clone())
            {
                self.twice.insert(name);
            }
            return;
        }
        visit_mut::visit_stmt_mut(self, stmt);
    }
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    fn visit_expr_async_mut(&mut self, _: &mut syn::ExprAsync) {}
}

struct Hoist {
    twice: BTreeSet<String>,
    items: Vec<Item>,
}

impl VisitMut for Hoist {
    fn visit_block_mut(&mut self, block: &mut Block) {
        let stmts = std::mem::take(&mut block.stmts);
        for mut stmt in stmts {
            match stmt {
                Stmt::Item(item)
                    if !name_of(&item).is_some_and(|name| self.twice.contains(&name)) =>
                {
                    self.items.push(item);
                }
                _ => {
                    self.visit_stmt_mut(&mut stmt);
                    block.stmts.push(stmt);
                }
            }
        }
    }
    fn visit_item_mut(&mut self, _: &mut Item) {}
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    fn visit_expr_async_mut(&mut self, _: &mut syn::ExprAsync) {}
}
