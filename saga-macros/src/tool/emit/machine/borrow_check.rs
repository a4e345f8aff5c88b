//! The check that no saved local is a borrow, appended to the start. Apart from the
//! machine's construction because it only adds a compile-time probe: nothing of it runs,
//! and removing it would change the errors a user sees, not what the machine does.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::Block;

use crate::shared::private_path;
use crate::tool::ir::{BindingKey, Saved, Site};

/// The start, followed by a check that no saved local is a borrow (`let first =
/// name.as_str();`, `let mode = "fast";`), which the macro cannot always see: the state
/// enum would refuse it too, but as a lifetime error ("implementation of `Deserialize` is
/// not general enough") at the attribute. The check never runs (the slot stays empty); it
/// is placed after the start's code, where rustc knows every local's type, and picks by
/// type (autoref: `&Probe<&T>` before `&&Probe<T>`) a marker that fails a trait bound with
/// the error at the local. A type error stops rustc before its lifetime checks, so the
/// other errors are not reported.
pub(super) fn with_borrow_check(
    start: Block,
    sites: &[Site],
    saved: &[Vec<Saved>],
    locates: bool,
) -> Block {
    let mut seen: Vec<BindingKey> = Vec::new();
    let mut arms = Vec::new();
    for (site, saved) in sites.iter().zip(saved) {
        let variant = &site.variant;
        let checked: Vec<&Saved> = saved
            .iter()
            .filter(|s| {
                let name = s.ident.to_string();
                !name.starts_with("__rest") && !site.is_for_item(&name)
            })
            .filter(|s| {
                // The same local saved at several sites: checked once.
                let key = BindingKey::of(&s.ident);
                let first = !seen.contains(&key);
                seen.push(key);
                first
            })
            .collect();
        let checks: Vec<TokenStream> = checked
            .iter()
            .map(|s| {
                let field = &s.field;
                let span = s.ident.span();
                // The kind is found before the probe is passed on: a local that cannot be
                // saved leaves the field's type unknown (see the runtime's `keep`), and the
                // method call on it then says nothing more.
                quote_spanned! {span=> {
                    let __probe = __SagaProbeOf::__saga_probe(#field);
                    let __kind = (&__probe).__saga_kind();
                    saga_saves_only_owned_values(&__probe, __kind);
                }}
            })
            .collect();
        if checks.is_empty() {
            continue;
        }
        let fields = checked.iter().map(|s| {
            let field = &s.field;
            quote!(#field: #field)
        });
        arms.push(quote! {
            __State::#variant { #(#fields,)* .. } => { #(#checks)* }
        });
    }
    if arms.is_empty() {
        return start;
    }
    let private = private_path();
    // A local kept as where its borrows point holds no borrow in the state: its field's
    // probe, only where there is such a field.
    let located = locates.then(|| {
        quote! {
            impl<E> __SagaProbeOf for #private::Located<E> {
                type Probe = __SagaProbe<()>;
                fn __saga_probe(&self) -> __SagaProbe<()> {
                    __SagaProbe(::core::marker::PhantomData)
                }
            }
        }
    });
    syn::parse_quote! {{
        let __step = #start;
        if let ::core::option::Option::Some(__state) = #private::slot_state(&__slot) {
            struct __SagaProbe<T: ?::core::marker::Sized>(::core::marker::PhantomData<T>);
            trait __SagaProbeOf {
                type Probe;
                fn __saga_probe(&self) -> Self::Probe;
            }
            impl<T> __SagaProbeOf for #private::Slot<T> {
                type Probe = __SagaProbe<T>;
                fn __saga_probe(&self) -> __SagaProbe<T> {
                    __SagaProbe(::core::marker::PhantomData)
                }
            }
            #located
            struct ABorrow;
            struct __SagaOwned;
            trait __SagaViaBorrow {
                fn __saga_kind(&self) -> ABorrow {
                    ABorrow
                }
            }
            // Only borrows that deserialize for one lifetime (`&str`, `&[u8]`, `&Path`,
            // and options and vectors of them): what fails to deserialize at all
            // (`&String`) is reported at the local by `keep` already.
            impl<'a, T: ?::core::marker::Sized> __SagaViaBorrow for __SagaProbe<&'a T>
            where
                &'a T: #private::serde::Deserialize<'a>,
            {}
            impl<'a, T: ?::core::marker::Sized> __SagaViaBorrow for __SagaProbe<::core::option::Option<&'a T>>
            where
                &'a T: #private::serde::Deserialize<'a>,
            {}
            impl<'a, T: ?::core::marker::Sized> __SagaViaBorrow for __SagaProbe<::std::vec::Vec<&'a T>>
            where
                &'a T: #private::serde::Deserialize<'a>,
            {}
            trait __SagaViaOwned {
                fn __saga_kind(&self) -> __SagaOwned {
                    __SagaOwned
                }
            }
            impl<T: ?::core::marker::Sized> __SagaViaOwned for &__SagaProbe<T> {}
            #[diagnostic::on_unimplemented(
                message = "`{L}` is a borrow kept across a suspension point, but only owned values can be saved in the saga's state",
                label = "this borrow is used after a suspension",
                note = "the locals used after `elicit`, `sample`, `list_roots`, `checkpoint`, `join!` or a `#[saga_fn]` are saved in the requestState token and read back by a later request, where what they borrow is gone (and a `&'static str` cannot be read back either)",
                note = "saga makes a borrow again after the suspension only when it borrows a place of the function's locals (a local, a field, an element, a standard accessor such as `.first()` or `.as_str()` of one) or is a `&'static str` chosen among literals, or a reference chosen among constants with its type written (`let bank: &[&str] = if hard { HARD } else { EASY };`); hold an owned value instead (`.to_owned()`, `.to_string()`, `.clone()`; for a `&'static str` a function returned, `String::from(..)`, with `.as_str()` where a `&str` is needed; for an operand evaluated before a suspension in the same expression, `let trimmed = name.trim().to_owned();` before it), or, when a `let` that is not `mut` binds it, write the `let`'s type (`let best: &Item = pick_best(&items);`): saga then computes it again after the suspension, from what it reads, and checks it is the same; a `&str` into a `String` kept with it (a field of an argument, an element of a kept `Vec`), assigned or pushed in code that suspends, is kept as where it points when the local's type is written (`let mut best: Option<&str> = None;`, `let mut picked: Vec<&str> = Vec::new();`): write it"
            )]
            trait SavedOwned<L: ?::core::marker::Sized> {}
            #[diagnostic::do_not_recommend]
            impl<L: ?::core::marker::Sized> SavedOwned<L> for __SagaOwned {}
            fn saga_saves_only_owned_values<L: ?::core::marker::Sized, K: SavedOwned<L>>(_: &__SagaProbe<L>, _: K) {}
            match __state {
                #(#arms)*
                #[allow(unreachable_patterns)]
                _ => {}
            }
        }
        __step
    }}
}
