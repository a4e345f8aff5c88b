//! Locals that cannot be saved, reported by the macro at the local rather than by rustc
//! in generated code: a borrow (the state enum rejects it too, but as a lifetime error,
//! since `&str` is `Deserialize<'a>`), and a sharing handle (`Rc`, `Arc`, `Cell`,
//! `RefCell`, `Weak`), whose sharing would not survive serialization. Both are found
//! syntactically: by the local's type annotation or by how it is initialised.

use std::collections::HashMap;

use syn::visit::Visit;
use syn::{Block, Expr, Pat, Type};

use crate::errors::Errors;
use crate::tool::ir::{BindingKey, Machine, Site};

pub fn check(body: &Block, machine: &Machine, sites: &[Site], errors: &mut Errors) {
    let mut borrows = Borrows::default();
    borrows.visit_block(body);
    let mut sharing = Sharing::default();
    sharing.visit_block(body);
    let mut reported = Vec::new();
    // At a call, the types decide what is saved (nothing for an ordinary future), and a
    // helper's saved locals are checked by rustc.
    let resumes = machine
        .resumes
        .iter()
        .zip(sites)
        .filter(|(_, site)| site.suspension.always_suspends());
    for ((saved, _), site) in resumes {
        // A local chosen among literals or constants is taken back among them, not
        // saved as a borrow (`Saved::chosen`), even when its type is written as one.
        for local in saved.iter().filter(|local| local.chosen.is_none()) {
            let key = BindingKey::of(&local.ident);
            // A shared borrow whose type is written, kept with locals it may point into, is
            // saved as where it points (the runtime's `located`): its type decides.
            let located = |borrow: &(String, Borrow, bool)| {
                matches!(
                    borrow.1,
                    Borrow::Shared {
                        declared_mut: false
                    }
                ) && borrow.2
                    && !local.roots(site, saved).is_empty()
            };
            if let Some((name, borrow, _)) = borrows.0.get(&key).filter(|b| !located(b))
                && !reported.contains(&key)
            {
                reported.push(key.clone());
                errors.at(&local.ident, borrow.message(name));
            }
            if let Some((name, handle)) = sharing.0.get(&key)
                && !reported.contains(&key)
            {
                let article = if matches!(handle.as_str(), "Rc" | "Arc") {
                    "an"
                } else {
                    "a"
                };
                reported.push(key);
                errors.at(
                    &local.ident,
                    format!(
                        "`{name}` holds {article} `{handle}`, a handle for sharing a value, and \
                         is used after a suspension: the saga's state saves a copy of the \
                         value, so whatever shares it with `{name}` would silently stop seeing \
                         its changes after the suspension; hold the value itself in a `mut` \
                         local (`let mut {name} = …;`, without `{handle}`), or finish with the \
                         shared value before the suspension"
                    ),
                );
            }
        }
    }
}

/// The handles whose sharing a saved state cannot keep.
const SHARING: &[&str] = &["Rc", "Arc", "Cell", "RefCell", "Weak"];

/// The sharing handle a type names, if any (`Rc<T>`, `Vec<Arc<T>>`, `std::rc::Rc<T>`).
fn sharing_in_type(ty: &Type) -> Option<String> {
    struct Find(Option<String>);
    impl<'ast> Visit<'ast> for Find {
        fn visit_path_segment(&mut self, segment: &'ast syn::PathSegment) {
            let name = segment.ident.to_string();
            if self.0.is_none() && SHARING.contains(&name.as_str()) {
                self.0 = Some(name);
            }
            syn::visit::visit_path_segment(self, segment);
        }
    }
    let mut find = Find(None);
    find.visit_type(ty);
    find.0
}

/// The sharing handle an initialiser makes: `Rc::new(..)`, `Arc::clone(&x)`,
/// `RefCell::default()`, `x.clone()` of a local holding one.
fn sharing_in_init(expr: &Expr, known: &HashMap<BindingKey, (String, String)>) -> Option<String> {
    match expr {
        Expr::Call(call) => match &*call.func {
            Expr::Path(path) => {
                let segments: Vec<String> = path
                    .path
                    .segments
                    .iter()
                    .map(|segment| segment.ident.to_string())
                    .collect();
                let handle = segments.iter().rev().nth(1)?;
                SHARING.contains(&handle.as_str()).then(|| handle.clone())
            }
            _ => None,
        },
        Expr::MethodCall(call) if call.method == "clone" => match &*call.receiver {
            Expr::Path(path) => {
                // The latest binding of that name before this use: the one it reads
                // (the body is α-renamed, so a name is rebound only where the renamer
                // keeps names as written).
                let ident = path.path.get_ident()?.to_string();
                known
                    .iter()
                    .filter(|(key, _)| key.name == ident)
                    .max_by_key(|(key, _)| (key.line, key.column))
                    .map(|(_, (_, handle))| handle.clone())
            }
            _ => None,
        },
        Expr::Paren(paren) => sharing_in_init(&paren.expr, known),
        _ => None,
    }
}

/// `let` bindings that visibly hold a sharing handle, by binding: the local's name and the
/// handle.
#[derive(Default)]
struct Sharing(HashMap<BindingKey, (String, String)>);

impl<'ast> Visit<'ast> for Sharing {
    fn visit_local(&mut self, local: &'ast syn::Local) {
        let (ident, annotated) = match &local.pat {
            Pat::Ident(pat) => (Some(&pat.ident), None),
            Pat::Type(typed) => match &*typed.pat {
                Pat::Ident(pat) => (Some(&pat.ident), sharing_in_type(&typed.ty)),
                _ => (None, None),
            },
            _ => (None, None),
        };
        let handle = annotated.or_else(|| {
            local
                .init
                .as_ref()
                .and_then(|init| sharing_in_init(&init.expr, &self.0))
        });
        if let (Some(ident), Some(handle)) = (ident, handle) {
            self.0.insert(
                BindingKey::of(ident),
                (crate::tool::ir::written(ident), handle),
            );
        }
        syn::visit::visit_local(self, local);
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Why a visible borrow is saved rather than borrowed again after the suspension (see
/// `lower::places`), which decides the fix that keeps the behaviour.
#[derive(Clone, Copy)]
enum Borrow {
    /// A shared borrow of something that is not a place of the locals (a temporary, what
    /// a function returned), or declared `mut`: an owned copy reads the same.
    Shared { declared_mut: bool },
    /// A mutable borrow: an owned copy would not change the original, so the fix is to
    /// borrow again after the suspension.
    Mutable { declared_mut: bool },
}

impl Borrow {
    fn message(self, name: &str) -> String {
        let why = |declared_mut: bool| {
            if declared_mut {
                format!(
                    "`{name}` is declared `mut`, so by then it may point elsewhere than \
                     where it was borrowed, and saga cannot borrow its place again after the \
                     suspension"
                )
            } else {
                "it does not borrow a place of the function's locals (a local, its fields, \
                 an element at an index that does not change), which saga would borrow \
                 again after the suspension"
                    .to_owned()
            }
        };
        match self {
            Borrow::Shared { declared_mut } => format!(
                "`{name}` is a borrow used after a suspension, but only owned values can be \
                 saved in the saga's state, and {}; hold an owned value instead \
                 (`.clone()`, `.to_owned()`, `.to_string()`), or compute it again after the \
                 suspension",
                why(declared_mut)
            ),
            Borrow::Mutable { declared_mut } => format!(
                "`{name}` is a mutable borrow used after a suspension, but only owned values \
                 can be saved in the saga's state, and {}; borrow the place again after the \
                 suspension, where it is changed (`let {name} = &mut …;` there): an owned \
                 copy would not change the original",
                why(declared_mut)
            ),
        }
    }
}

/// `let` bindings that are visibly borrows: `let x: &T = …` or `let x = &…`, by binding;
/// the name as written, the kind of borrow, and whether its type is written.
#[derive(Default)]
struct Borrows(HashMap<BindingKey, (String, Borrow, bool)>);

impl<'ast> Visit<'ast> for Borrows {
    fn visit_local(&mut self, local: &'ast syn::Local) {
        let (ident, annotated) = match &local.pat {
            Pat::Ident(pat) => (Some(pat), None),
            Pat::Type(typed) => match (&*typed.pat, &*typed.ty) {
                (Pat::Ident(pat), Type::Reference(reference)) => {
                    (Some(pat), Some(reference.mutability.is_some()))
                }
                (Pat::Ident(pat), _) => (Some(pat), None),
                _ => (None, None),
            },
            _ => (None, None),
        };
        let initialised_by_borrow = local.init.as_ref().and_then(|init| match &*init.expr {
            Expr::Reference(reference) => Some(reference.mutability.is_some()),
            _ => None,
        });
        if let Some(pat) = ident
            && let Some(mutable) = annotated.or(initialised_by_borrow)
        {
            let declared_mut = pat.mutability.is_some();
            let borrow = match mutable {
                true => Borrow::Mutable { declared_mut },
                false => Borrow::Shared { declared_mut },
            };
            self.0.insert(
                BindingKey::of(&pat.ident),
                (
                    crate::tool::ir::written(&pat.ident),
                    borrow,
                    annotated.is_some(),
                ),
            );
        }
        syn::visit::visit_local(self, local);
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}
