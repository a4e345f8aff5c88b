//! The state enum's `StateEnum` impl: how it is written, read, rendered and traced, a
//! `match` per operation with one runtime call per field.
//!
//! Written out rather than derived with serde: a derived enum's visitors were compiled
//! once per format for every tool, and each field here goes through a generic function
//! of its type, compiled once per build (see the runtime's `identity::state_enum`). The
//! names are serde's (`r#type` is `type`), and so are the bytes and the layout.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;
use syn::ext::IdentExt;

use crate::shared::private_path;

/// A field of a state variant: its name, what it holds and the type parameter it has.
pub struct StateField {
    pub name: Ident,
    pub kind: FieldKind,
    /// The enum's type parameter for it (`T0`, `R1`).
    pub param: Ident,
}

/// What a field of a state variant holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A saved local (`Slot<T>`): rendered as the value it holds, through
    /// `SlotField::shown`, so that a slot's own `Serialize` is not compiled for JSON, and
    /// traced by `trace_slot`.
    Saved,
    /// A request marker (`Marker<R>`, a `PhantomData`): no bytes, not rendered, and
    /// traced without code of its type.
    Marker,
    /// A helper's state, as its bytes (`Vec<u8>`).
    Callee,
}

impl StateField {
    /// The field's type in the enum.
    pub fn ty(&self) -> TokenStream {
        let (private, param) = (private_path(), &self.param);
        match self.kind {
            FieldKind::Saved => quote!(#param),
            FieldKind::Marker => quote!(#private::Marker<#param>),
            FieldKind::Callee => quote!(::std::vec::Vec<u8>),
        }
    }
}

/// A variant of the state enum and its fields.
pub struct StateVariant {
    pub name: Ident,
    pub fields: Vec<StateField>,
}

/// `impl StateEnum for __State<..>`, with `generics` and `bounds` as the enum's.
pub fn impl_state_enum(
    variants: &[StateVariant],
    generics: &TokenStream,
    bounds: &[TokenStream],
) -> TokenStream {
    let private = private_path();
    let variant_names = variants
        .iter()
        .map(|variant| variant.name.unraw().to_string());
    let field_names = variants.iter().map(|variant| {
        let names = variant
            .fields
            .iter()
            .map(|field| field.name.unraw().to_string());
        quote!(&[#(#names),*])
    });
    let mut write = Vec::new();
    let mut read = Vec::new();
    let mut render = Vec::new();
    let mut trace = Vec::new();
    for (index, variant) in variants.iter().enumerate() {
        let arms = variant_arms(index as u32, variant, &private);
        write.push(arms.write);
        read.push(arms.read);
        render.push(arms.render);
        trace.extend(arms.trace);
    }
    quote! {
        #[allow(unreachable_code, unused_variables, clippy::match_single_binding)]
        impl #generics #private::StateEnum for __State #generics
        where
            #(#bounds,)*
        {
            const SHAPE: #private::StateShape = #private::StateShape {
                name: "__State",
                variants: &[#(#variant_names),*],
                fields: &[#(#field_names),*],
            };

            fn tagged() -> &'static ::core::sync::atomic::AtomicBool {
                static TAGGED: ::core::sync::atomic::AtomicBool =
                    ::core::sync::atomic::AtomicBool::new(false);
                &TAGGED
            }

            fn write(&self, __writer: &mut #private::StateWriter) {
                match *self {
                    #(#write)*
                }
            }

            fn read(
                __reader: &mut #private::StateReader<'_>,
            ) -> ::core::result::Result<Self, #private::StateError> {
                ::core::result::Result::Ok(match __reader.variant()? {
                    #(#read)*
                    _ => return ::core::result::Result::Err(__reader.unknown_variant()),
                })
            }

            fn render(&self, __render: &mut #private::StateRender) {
                match *self {
                    #(#render)*
                }
            }

            fn trace_field(
                __variant: u32,
                __field: usize,
                __tracer: #private::FieldTracer<'_, '_>,
            ) -> ::core::result::Result<(), #private::LayoutError> {
                match (__variant, __field) {
                    #(#trace)*
                    _ => __tracer.missing(),
                }
            }
        }
    }
}

/// One variant's arms in each method of `StateEnum`.
struct VariantArms {
    write: TokenStream,
    read: TokenStream,
    render: TokenStream,
    trace: Vec<TokenStream>,
}

/// The arms of variant `index` (`variant`) in `write`, `read`, `render` and `trace_field`.
fn variant_arms(index: u32, variant: &StateVariant, private: &TokenStream) -> VariantArms {
    let name = &variant.name;
    let label = name.unraw().to_string();
    // A marker holds nothing: postcard writes a `PhantomData` as no bytes, and the
    // inspection hides it.
    let kept: Vec<&StateField> = variant
        .fields
        .iter()
        .filter(|field| field.kind != FieldKind::Marker)
        .collect();
    let values: Vec<&Ident> = kept.iter().map(|field| &field.name).collect();
    let labels = values.iter().map(|name| name.unraw().to_string());
    // Bound to generated names: a saved local may share its name with a unit struct
    // in scope (the tool's own), which a binding pattern could not shadow.
    let bound: Vec<Ident> = (0..values.len())
        .map(|at| quote::format_ident!("__v{}", at))
        .collect();
    let shown = kept.iter().zip(&bound).map(|(field, bound)| {
        if field.kind == FieldKind::Saved {
            quote!(#private::SlotField::shown(#bound))
        } else {
            quote!(#bound)
        }
    });
    // Each field into its binding, then the variant: a `let .. else` per field, not a
    // `?` inside the variant's expression, which moved each value twice more.
    let reads = bound.iter().map(|bound| {
        quote! {
            let ::core::option::Option::Some(#bound) = __reader.field() else {
                return ::core::result::Result::Err(__reader.failed());
            };
        }
    });
    let mut kept_at = 0;
    let built = variant.fields.iter().map(|field| {
        let name = &field.name;
        if field.kind == FieldKind::Marker {
            quote!(#name: ::core::marker::PhantomData)
        } else {
            let bound = &bound[kept_at];
            kept_at += 1;
            quote!(#name: #bound)
        }
    });
    let write = quote! {
        __State::#name { #(#values: ref #bound,)* .. } => {
            __writer.variant(#index);
            #(__writer.field(#bound);)*
        }
    };
    let read = quote! {
        #index => {
            #(#reads)*
            __State::#name { #(#built),* }
        }
    };
    let render = quote! {
        __State::#name { #(#values: ref #bound,)* .. } => {
            __render.variant(#label);
            #(__render.field(#labels, #shown);)*
        }
    };
    let mut trace = Vec::new();
    for (at, field) in variant.fields.iter().enumerate() {
        let (ty, param) = (field.ty(), &field.param);
        trace.push(match field.kind {
            FieldKind::Marker => quote! {
                (#index, #at) => __tracer.marker(
                    ::core::any::type_name::<::core::marker::PhantomData<#ty>>(),
                ),
            },
            FieldKind::Saved => quote! {
                (#index, #at) => #private::trace_slot::<
                    <#param as #private::SlotField>::Shown,
                >(__tracer),
            },
            FieldKind::Callee => quote!((#index, #at) => __tracer.field::<#ty>(),),
        });
    }
    VariantArms {
        write,
        read,
        render,
        trace,
    }
}
