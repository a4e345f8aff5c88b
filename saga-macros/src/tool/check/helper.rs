//! What a `#[saga_fn]` may not be: recursive (its state would hold its own state), a
//! method taking `self` by reference, or a helper whose borrowed parameters are kept
//! across a suspension. The helper's expansion is `emit::helper`.

use quote::quote;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Expr, Ident, ItemFn, Lifetime, Type};

use crate::errors::Errors;
use crate::tool::ir::Compiled;

/// The lifetime every borrowed parameter of a helper is given.
pub const LIFETIME: &str = "'__saga";

/// A helper that calls itself is refused (its state would hold its own state); whether
/// it does.
pub fn check_recursion(item: &ItemFn, errors: &mut Errors) -> bool {
    struct Calls<'a> {
        name: &'a Ident,
        errors: &'a mut Errors,
        found: bool,
    }
    impl<'ast> Visit<'ast> for Calls<'_> {
        fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
            if let Expr::Path(path) = &*call.func {
                let segments: Vec<&Ident> = path
                    .path
                    .segments
                    .iter()
                    .map(|segment| &segment.ident)
                    .collect();
                let names_self = match segments.as_slice() {
                    [only] => *only == self.name,
                    [first, last] => *first == "Self" && *last == self.name,
                    _ => false,
                };
                if names_self {
                    self.found = true;
                    self.errors.at(
                        call,
                        format!(
                            "`{name}` calls itself, but a #[saga_fn] cannot be recursive: its \
                             saved state nests inside its caller's, so a recursive helper's \
                             state would contain itself; write the recursion as a loop (with \
                             a `Vec` as the stack of pending work)",
                            name = self.name
                        ),
                    );
                }
            }
            syn::visit::visit_expr_call(self, call);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut calls = Calls {
        name: &item.sig.ident,
        errors,
        found: false,
    };
    calls.visit_block(&item.block);
    calls.found
}

/// `Self` in a helper would name the state machine the helper's body is compiled into,
/// not the type the helper is declared on (which an attribute cannot see): an error at
/// each `Self`, asking for the type's name.
pub fn check_self(item: &ItemFn, errors: &mut Errors) {
    struct Selfs<'a> {
        errors: &'a mut Errors,
    }
    impl<'ast> Visit<'ast> for Selfs<'_> {
        fn visit_path(&mut self, path: &'ast syn::Path) {
            if let Some(first) = path.segments.first()
                && first.ident == "Self"
            {
                self.errors.at(
                    &first.ident,
                    "`Self` cannot be used in a #[saga_fn]: the helper's body is compiled \
                     into a state machine of its own, where `Self` would name that machine, \
                     not your type; write the type's name instead (`Wizard::ask(..)` for \
                     `Self::ask(..)`)",
                );
            }
            syn::visit::visit_path(self, path);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut selfs = Selfs { errors };
    selfs.visit_signature(&item.sig);
    selfs.visit_block(&item.block);
}

/// The shared borrowed parameters (`&T`) used after a suspension: the helper keeps an
/// owned copy of each from its start (`owned_params`), so that what the borrow points at
/// is saved, and the parameter is borrowed again from it after a restore. The caller's
/// value cannot change meanwhile (it lends it for the whole call), so the copy reads the
/// same; a `&mut` must hand its changes back, which a copy would lose (an error, below).
pub fn kept_shared_params(compiled: &Compiled) -> Vec<Ident> {
    saved_params(compiled)
        .into_iter()
        .filter(|param| matches!(&param.ty, Type::Reference(reference) if reference.mutability.is_none()))
        .map(|param| param.ident.clone())
        .collect()
}

/// The parameters of `compiled`'s signature whose type borrows and which a suspension
/// saves, once each. A call may be of a `#[saga_fn]` that suspends, or of an ordinary
/// future, which saves nothing: what a call's site saves counts only for a `&str`, whose
/// owned copy (a `String`) always can be saved, so that no helper that awaits an ordinary
/// future while it holds a borrow of another type is refused for it.
fn saved_params(compiled: &Compiled) -> Vec<&crate::tool::parse::sig::Param> {
    let is_str = |ty: &Type| {
        matches!(ty, Type::Reference(reference)
            if reference.mutability.is_none()
                && matches!(&*reference.elem, Type::Path(path) if path.path.is_ident("str")))
    };
    let saved_at_suspensions = compiled
        .machine
        .resumes
        .iter()
        .zip(&compiled.sites)
        .flat_map(|((saved, _), site)| {
            saved
                .iter()
                .map(move |local| (local, site.suspension.always_suspends()))
        })
        .filter(|(local, always)| {
            *always
                || compiled
                    .sig
                    .params
                    .iter()
                    .any(|param| param.ident == local.ident && is_str(&param.ty))
        })
        .map(|(local, _)| local);
    let mut found: Vec<&crate::tool::parse::sig::Param> = Vec::new();
    for local in saved_at_suspensions {
        if let Some(param) = compiled.sig.params.iter().find(|param| {
            let mut ty = param.ty.clone();
            param.ident == local.ident
                && (with_lifetime(&mut ty) || matches!(param.ty, Type::Reference(_)))
        }) && !found.iter().any(|each| each.ident == param.ident)
        {
            found.push(param);
        }
    }
    found
}

/// `item` with an owned copy of each parameter of `kept` taken first, the parameter then
/// a borrow of it (`let __saga_owned_p = ToOwned::to_owned(p); let p: &T =
/// &__saga_owned_p;`), which the machine saves and borrows again as any local's borrow.
/// At the parameter: an unmet bound (`T: ToOwned`, its owned form `Serialize`) is shown
/// there.
pub fn owned_params(item: &ItemFn, kept: &[Ident]) -> ItemFn {
    let mut item = item.clone();
    let mut prelude: Vec<syn::Stmt> = Vec::new();
    for input in &item.sig.inputs {
        let syn::FnArg::Typed(typed) = input else {
            continue;
        };
        let syn::Pat::Ident(pat) = &*typed.pat else {
            continue;
        };
        let Type::Reference(reference) = &*typed.ty else {
            continue;
        };
        if !kept.contains(&pat.ident) {
            continue;
        }
        let ident = &pat.ident;
        let pointee = &reference.elem;
        let owned = Ident::new(&format!("__saga_owned_{ident}"), ident.span());
        let span = ident.span();
        prelude.push(syn::parse_quote_spanned! {span=>
            let #owned = <#pointee as ::std::borrow::ToOwned>::to_owned(#ident);
        });
        prelude.push(syn::parse_quote_spanned! {span=>
            let #ident: &#pointee = &#owned;
        });
    }
    prelude.append(&mut item.block.stmts);
    item.block.stmts = prelude;
    item
}

/// A borrowed parameter used after a suspension that cannot be kept as an owned copy (a
/// `&mut`, or a type that holds a borrow other than a plain `&T`): an error at the
/// parameter, as for a borrowed `let`.
pub fn check_borrowed_params(compiled: &Compiled, errors: &mut Errors) {
    // Bindings that shadow a parameter were renamed (`rename::alpha`): a saved local with
    // a parameter's name is that parameter.
    for param in saved_params(compiled) {
        let name = param.ident.to_string();
        let ty = &param.ty;
        let written = quote!(#ty)
            .to_string()
            .replace(" & ", "&")
            .replace("& ", "&");
        let mutable =
            matches!(&param.ty, Type::Reference(reference) if reference.mutability.is_some());
        let message = if mutable {
            // A copy would drop the caller's changes: the fix must hand the value back.
            format!(
                "`{name}` is a mutable borrow (`{written}`) used after a suspension, but only \
                 owned values can be saved in the saga's state; take it by value and return \
                 it, so the caller keeps the changes: `async fn …({name}: T, …) -> (T, …)` \
                 and `let ({name}, …) = helper({name}, …).await;`, or finish changing \
                 `{name}` before the first suspension"
            )
        } else {
            format!(
                "`{name}` is borrowed (`{written}`) and used after a suspension, but only owned \
                 values can be saved in the saga's state; take an owned parameter (`String` \
                 for `&str`, `Vec<T>` for `&[T]`) and pass `.to_owned()`, or finish using \
                 `{name}` before the first suspension (e.g. `let {name} = {name}.to_owned();`)"
            )
        };
        errors.at(&param.ident, message);
    }
}

/// Gives every elided lifetime of `ty` (`&T`, `&mut T`, `'_`) the helper's lifetime;
/// whether it had one.
pub fn with_lifetime(ty: &mut Type) -> bool {
    struct Name(bool);
    impl VisitMut for Name {
        fn visit_type_reference_mut(&mut self, reference: &mut syn::TypeReference) {
            if reference.lifetime.is_none() {
                reference.lifetime = Some(Lifetime::new(LIFETIME, proc_macro2::Span::call_site()));
                self.0 = true;
            }
            syn::visit_mut::visit_type_reference_mut(self, reference);
        }
        fn visit_lifetime_mut(&mut self, lifetime: &mut Lifetime) {
            if lifetime.ident == "_" {
                *lifetime = Lifetime::new(LIFETIME, lifetime.apostrophe);
                self.0 = true;
            }
        }
    }
    let mut name = Name(false);
    name.visit_type_mut(ty);
    name.0
}
