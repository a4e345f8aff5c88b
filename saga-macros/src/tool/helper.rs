//! `#[saga_fn]`: a helper that suspends. It compiles like a tool, to a state machine, but
//! its `step` is the runtime's `SagaFn::step`, run by the saga that awaits it. The
//! function keeps its name and parameters and returns a `SagaCall` holding its
//! arguments; everything else is declared inside it, so that the helper may be a free
//! function or an associated one.

use proc_macro2::TokenStream;
use quote::quote;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Expr, FnArg, Ident, ItemFn, Lifetime, Type};

use super::Compiled;
use crate::errors::Errors;
use crate::shared::private_path;

/// The lifetime every borrowed parameter of a helper is given.
const LIFETIME: &str = "'__saga";

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

/// A borrowed parameter used after a suspension cannot be saved: an error at the
/// parameter, as for a borrowed `let`.
pub fn check_borrowed_params(compiled: &Compiled, errors: &mut Errors) {
    let borrowed: Vec<&super::sig::Param> = compiled
        .sig
        .params
        .iter()
        .filter(|param| {
            let mut ty = param.ty.clone();
            with_lifetime(&mut ty) || matches!(param.ty, Type::Reference(_))
        })
        .collect();
    let saved_at_suspensions = compiled
        .machine
        .resumes
        .iter()
        .zip(&compiled.sites)
        .filter(|(_, site)| site.suspension.always_suspends())
        .flat_map(|((saved, _), _)| saved);
    let mut reported: Vec<String> = Vec::new();
    for local in saved_at_suspensions {
        // Bindings that shadow a parameter were renamed (`rename::alpha`): a saved local
        // with a parameter's name is that parameter.
        let Some(param) = borrowed.iter().find(|param| param.ident == local.ident) else {
            continue;
        };
        let name = param.ident.to_string();
        if reported.contains(&name) {
            continue;
        }
        reported.push(name.clone());
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
fn with_lifetime(ty: &mut Type) -> bool {
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

pub fn expand(compiled: Compiled) -> TokenStream {
    let Compiled {
        item,
        sig,
        sites,
        machine,
        plain,
        items,
    } = compiled;
    let private = private_path();
    let (step_lints, plain_lints) = (super::expand::step_lints(), super::expand::plain_lints());
    let vis = &item.vis;
    let name = &item.sig.ident;
    let output = &sig.output;
    let attrs = &item.attrs;
    let lifetime = Lifetime::new(LIFETIME, proc_macro2::Span::call_site());

    let mut borrows = false;
    let mut inputs = Vec::new();
    for input in &item.sig.inputs {
        let FnArg::Typed(typed) = input else { continue };
        let mut ty = (*typed.ty).clone();
        borrows |= with_lifetime(&mut ty);
        let pat = match &*typed.pat {
            syn::Pat::Ident(pat) => {
                let ident = &pat.ident;
                quote!(#ident)
            }
            other => quote!(#other),
        };
        inputs.push(quote!(#pat: #ty));
    }
    let fields = sig.params.iter().map(|param| {
        let ident = &param.ident;
        let mut ty = param.ty.clone();
        with_lifetime(&mut ty);
        quote!(#ident: #ty)
    });
    let names: Vec<&Ident> = sig.params.iter().map(|param| &param.ident).collect();
    let rebind_mut: Vec<TokenStream> = sig
        .params
        .iter()
        .filter(|param| param.mutable)
        .map(|param| {
            let ident = &param.ident;
            quote!(let mut #ident = #ident;)
        })
        .collect();
    let context = match &sig.context {
        Some(ident) => quote!(let #ident: &#private::SagaContext = __cx;),
        None => quote!(let _ = __cx;),
    };
    // The plain run, for saga's differential tests only (see `plain_run`).
    let plain_fn = plain.map(|plain| {
        quote! {
            #plain_lints
            async fn plain<'__step>(
                self,
                __cx: &'__step #private::SagaContext,
                __run: &'__step mut #private::PlainRun,
                __script: &'__step mut dyn #private::Script,
            ) -> #output
            where
                Self: '__step,
            {
                let __SagaFn { #(#names,)* .. } = self;
                #(#rebind_mut)*
                #context
                let __output: #output = async move #plain.await;
                __output
            }
        }
    });
    let ignored_context = match &sig.context {
        Some(ident) => quote!(let _ = #ident;),
        None => quote!(),
    };
    let (generics, captures) = if borrows {
        (quote!(<#lifetime>), quote!(use<#lifetime>))
    } else {
        (quote!(), quote!(use<>))
    };

    let state = super::expand::state_enum(&sites, &machine);
    let super::expand::StateEnum {
        definition,
        slot_type,
        arms,
        trace,
    } = state;
    let start = &machine.start;
    let build_tag = super::expand::build_tag(&item);
    let diagram = super::diagram::helper(&item, &sig, &sites);
    let (diagram_doc, diagram_method) = (diagram.doc, diagram.method);
    let undecodable = machine.carrier.wrap(quote!(#private::undecodable(&error)));
    // Enclosed, so that a `return` the macro cannot see ends the saga (see `rewrite`).
    let step_body = super::rewrite::enclose(
        quote! {
            let mut __slot: ::core::option::Option<#slot_type> = ::core::option::Option::None;
            match __state {
                #private::FnState::Start(__SagaFn { #(#names,)* .. }) => {
                    #(#rebind_mut)*
                    #start
                }
                #private::FnState::Resume(__bytes) => {
                    #trace
                    let __resumed = match #private::decode(&__slot, &__bytes) {
                        ::core::result::Result::Ok(state) => state,
                        ::core::result::Result::Err(error) => return #undecodable,
                    };
                    match __resumed {
                        #(#arms)*
                    }
                }
            }
        },
        machine.carrier,
    );

    quote! {
        #(#attrs)*
        #diagram_doc
        #[allow(clippy::needless_lifetimes)]
        #vis fn #name #generics (#(#inputs),*)
            -> #private::SagaCall<impl #private::SagaFn<Output = #output> + #captures>
        {
            #ignored_context

            #[allow(non_camel_case_types)]
            struct __SagaFn<#lifetime> {
                #(#fields,)*
                __lifetime: ::core::marker::PhantomData<&#lifetime ()>,
            }

            impl<#lifetime> __SagaFn<#lifetime> {
                fn __finish(output: #output) -> #private::FnStep<#output> {
                    #private::FnStep::Done(output)
                }
            }

            impl<#lifetime> #private::SagaFn for __SagaFn<#lifetime> {
                type Output = #output;
                type Resumed = __SagaFn<'static>;

                fn build_tag() -> u16 {
                    #build_tag
                }

                #diagram_method

                #step_lints
                async fn step<'__step>(
                    __state: #private::FnState<Self>,
                    mut __answers: &'__step mut #private::Answers,
                    __cx: &'__step #private::SagaContext,
                ) -> #private::FnStep<#output>
                where
                    Self: '__step,
                {
                    #(#items)*
                    #context
                    #definition
                    #step_body
                }

                #plain_fn
            }

            #private::SagaCall::new(__SagaFn {
                #(#names,)*
                __lifetime: ::core::marker::PhantomData,
            })
        }
    }
}

/// When the helper cannot be compiled: the errors, and the function as written (with its
/// suspensions replaced by typed placeholders) under its own name, so that IDEs keep
/// analysing it and its callers add no errors of their own.
///
/// A helper that calls itself keeps an empty body, so that rustc does not report the
/// recursion a second time.
pub fn fallback(original: &ItemFn, error: syn::Error, recursive: bool) -> TokenStream {
    let errors = error.to_compile_error();
    let mut kept = original.clone();
    kept.sig.asyncness = Some(Default::default());
    *kept.block = if recursive {
        syn::parse_quote!({ ::core::unreachable!() })
    } else {
        super::plain::unexpanded((*kept.block).clone())
    };
    quote! {
        #errors
        #[allow(unused, unreachable_code, clippy::all)]
        #kept
    }
}
