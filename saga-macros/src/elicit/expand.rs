//! Code generation for a valid input.

use proc_macro2::{Literal, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, ExprArray, ExprLit, Lit};

use super::ast::{Enum, Field, FieldKind, Input, Struct};
use super::attr::{Num, parse_number};

fn private() -> TokenStream {
    crate::shared::private_path()
}

pub fn derive(input: &Input) -> TokenStream {
    let body = match input {
        Input::Struct(data) => derive_struct(data),
        Input::Enum(data) => derive_enum(data),
    };
    quote! {
        #[allow(non_local_definitions, clippy::all)]
        const _: () = {
            #body
        };
    }
}

/// An attribute's literal, as the runtime's `SchemaValue`.
fn number(num: Num) -> TokenStream {
    let p = private();
    match num {
        Num::Int(int) => match i64::try_from(int) {
            Ok(int) => {
                let literal = Literal::i64_suffixed(int);
                quote!(#p::SchemaValue::Int(#literal))
            }
            Err(_) => {
                let literal = Literal::u64_suffixed(int as u64);
                quote!(#p::SchemaValue::UInt(#literal))
            }
        },
        Num::Float(float) => {
            let literal = Literal::f64_suffixed(float);
            quote!(#p::SchemaValue::Float(#literal))
        }
    }
}

fn count(value: u64) -> TokenStream {
    let p = private();
    let literal = Literal::u64_suffixed(value);
    quote!(#p::SchemaValue::UInt(#literal))
}

fn string(text: &str) -> TokenStream {
    let p = private();
    quote!(#p::SchemaValue::Str(#text))
}

/// `const` checks that a select's default names one of the enum's wire values.
fn default_checks(ty: &syn::Type, literals: &[&syn::LitStr]) -> TokenStream {
    let p = private();
    // The trait path is spanned like every other use of the field's type, so an
    // unsupported type is reported once, at the field.
    let as_field = quote_spanned!(ty.span()=> <#ty as #p::ElicitField>);
    literals
        .iter()
        .map(|literal| {
            let message = format!(
                "`default = {}` is not a wire value of `{}`: a select's default must be one of its options (the variant names, after serde renames)",
                literal.token(),
                crate::shared::type_name(ty)
            );
            quote_spanned! {literal.span()=>
                const _: () = ::core::assert!(
                    #p::contains(#as_field::OPTIONS, #literal),
                    #message
                );
            }
        })
        .collect()
}

fn str_lit(expr: &Expr) -> Option<&syn::LitStr> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => Some(lit),
        _ => None,
    }
}

/// The inserts that refine one property, and any compile-time checks they need.
fn refinements(field: &Field) -> (Vec<(&'static str, TokenStream)>, TokenStream) {
    let attrs = &field.attrs;
    let mut out = Vec::new();
    let mut checks = TokenStream::new();
    if let Some(title) = &attrs.title {
        out.push(("title", string(&title.value.value())));
    }
    let description = attrs
        .description
        .as_ref()
        .map(|attr| attr.value.value())
        .or_else(|| attrs.doc.clone());
    if let Some(description) = description {
        out.push(("description", string(&description)));
    }
    if let Some(format) = &attrs.format {
        out.push(("format", string(&format.value.value())));
    }
    for (key, attr) in [
        ("minLength", &attrs.min_length),
        ("maxLength", &attrs.max_length),
    ] {
        if let Some(attr) = attr {
            out.push((key, count(attr.value)));
        }
    }
    for (key, attr) in [("minimum", &attrs.min), ("maximum", &attrs.max)] {
        if let Some(attr) = attr {
            out.push((key, number(attr.value)));
        }
    }
    for (key, attr) in [
        ("minItems", &attrs.min_items),
        ("maxItems", &attrs.max_items),
    ] {
        if let Some(attr) = attr {
            out.push((key, count(attr.value)));
        }
    }
    if let Some(default) = &attrs.default {
        let p = private();
        let expr = &default.value;
        let value = match field.kind {
            FieldKind::Multi => {
                let Expr::Array(ExprArray { elems, .. }) = expr else {
                    unreachable!("checked by valid.rs")
                };
                let literals: Vec<_> = elems.iter().filter_map(str_lit).collect();
                checks.extend(default_checks(field.ty, &literals));
                quote!(#p::SchemaValue::Strs(&[#(#literals),*]))
            }
            FieldKind::Select => {
                let literal = str_lit(expr).expect("checked by valid.rs");
                checks.extend(default_checks(field.ty, &[literal]));
                quote!(#p::SchemaValue::Str(#literal))
            }
            FieldKind::Int(_) | FieldKind::Float => {
                number(parse_number(expr).expect("checked by valid.rs"))
            }
            FieldKind::String => quote!(#p::SchemaValue::Str(#expr)),
            FieldKind::Bool => quote!(#p::SchemaValue::Bool(#expr)),
        };
        out.push(("default", value));
    }
    (out, checks)
}

fn derive_struct(data: &Struct) -> TokenStream {
    let p = private();
    let ident = data.ident;
    let mut schema_fields = Vec::new();
    let mut reads = Vec::new();
    let mut checks = TokenStream::new();
    for field in &data.fields {
        let ty = field.ty;
        // Spanned at the user's type, so an unsupported type is reported at the field.
        let as_field = quote_spanned!(ty.span()=> <#ty as #p::ElicitField>);
        let name = &field.name;
        let (inserts, field_checks) = refinements(field);
        checks.extend(field_checks);
        let inserts = inserts.iter().map(|(key, value)| quote!((#key, #value)));
        // Data, not code: the schema is built by one function for every form.
        schema_fields.push(quote! {
            #p::SchemaField {
                name: #name,
                property: #as_field::property,
                required: #as_field::REQUIRED,
                refine: &[#(#inserts),*],
            }
        });
        let field_ident = field.ident;
        reads.push(quote! {
            #field_ident: #as_field::read_named(content, #name)?
        });
    }
    quote! {
        #checks
        impl #p::Elicit for #ident {
            fn requested_schema() -> #p::serde_json::Map<::std::string::String, #p::serde_json::Value> {
                #p::object_schema(&[#(#schema_fields),*])
            }

            fn from_content(
                content: &#p::serde_json::Map<::std::string::String, #p::serde_json::Value>,
            ) -> ::core::result::Result<Self, #p::FormError> {
                ::core::result::Result::Ok(#ident {
                    #(#reads,)*
                })
            }
        }
    }
}

fn derive_enum(data: &Enum) -> TokenStream {
    let p = private();
    let ident = data.ident;
    let variants: Vec<_> = data.variants.iter().map(|variant| variant.ident).collect();
    let wires: Vec<_> = data.variants.iter().map(|variant| &variant.wire).collect();
    let titled = data.variants.iter().any(|variant| variant.title.is_some());
    let titles: Vec<_> = if titled {
        data.variants
            .iter()
            .map(|variant| variant.title.as_ref().unwrap_or(&variant.wire))
            .collect()
    } else {
        Vec::new()
    };
    quote! {
        impl #p::ElicitEnum for #ident {
            const WIRE_NAMES: &'static [&'static str] = &[#(#wires),*];
            const TITLES: &'static [&'static str] = &[#(#titles),*];

            fn from_wire(wire: &str) -> ::core::option::Option<Self> {
                match wire {
                    #(#wires => ::core::option::Option::Some(#ident::#variants),)*
                    _ => ::core::option::Option::None,
                }
            }

            fn to_wire(&self) -> &'static str {
                match self {
                    #(#ident::#variants => #wires,)*
                }
            }
        }

        impl #p::ElicitField for #ident {
            const OPTIONS: &'static [&'static str] = <Self as #p::ElicitEnum>::WIRE_NAMES;

            fn property() -> #p::serde_json::Map<::std::string::String, #p::serde_json::Value> {
                #p::select_property::<Self>()
            }

            fn parse(
                value: ::core::option::Option<&#p::serde_json::Value>,
            ) -> ::core::result::Result<Self, #p::FormError> {
                #p::parse_select::<Self>(value)
            }
        }

        impl #p::Elicit for #ident {
            fn requested_schema() -> #p::serde_json::Map<::std::string::String, #p::serde_json::Value> {
                #p::one_field_schema::<Self>()
            }

            fn from_content(
                content: &#p::serde_json::Map<::std::string::String, #p::serde_json::Value>,
            ) -> ::core::result::Result<Self, #p::FormError> {
                #p::one_field_from_content::<Self>(content)
            }
        }
    }
}
