//! The generated code: the tool's unit struct, its argument struct, its state enum, and
//! the `SagaTool` impl whose `step` is the state machine.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Ident, ItemFn};

use crate::shared::private_path;
use crate::tool::emit::state_codec::{FieldKind, StateField, StateVariant, impl_state_enum};
use crate::tool::ir::{Compiled, Machine, Site};
use crate::tool::parse::attr::ToolAttr;

/// The lints silenced in a generated `step`: its code is the user's, rearranged, so what
/// the rearrangement leaves unused or unreachable is not the user's to fix.
pub fn step_lints() -> TokenStream {
    quote! {
        #[allow(
            unreachable_code,
            unused_variables,
            unused_mut,
            unused_labels,
            unused_assignments,
            non_shorthand_field_patterns,
            clippy::all
        )]
    }
}

/// The tool (`kind`) compiled from its function, with its attribute's arguments.
pub fn tool(kind: crate::tool::ServedAs, attr: &ToolAttr, compiled: Compiled) -> TokenStream {
    let Compiled {
        item,
        sig,
        sites,
        machine,
        items,
    } = compiled;
    let (item, sig, sites) = (&item, &sig, &sites[..]);
    let diagram = crate::tool::emit::diagram::generated::tool(item, sig, sites);
    let (diagram_doc, diagram_meta, diagram_method) = (diagram.doc, diagram.meta, diagram.method);
    let step_lints = step_lints();
    let lint_levels = lint_levels(item);
    let private = private_path();
    let vis = &item.vis;
    let name = &item.sig.ident;
    let args = format_ident!("__saga_args_{}", name);
    let output = &sig.output;
    let attrs = &item.attrs;

    let args_struct = args_struct(sig, vis, &args, attr.deny_unknown_arguments, &private);
    let context = match &sig.context {
        Some(ident) => quote!(let #ident: &#private::SagaContext = __cx;),
        None => quote!(let _ = __cx;),
    };

    let StateEnum {
        definition,
        slot_type,
        resume,
        trace,
    } = state_enum(sites, &machine);
    let keep_shim =
        crate::tool::emit::keep::keep_shim(sites, machine.locates, machine.literals.as_deref());
    let marker = kind.marker_impl(name, &private);
    let output_check = kind.output_check(output, &private);
    let described = described_methods(
        attr,
        Describing {
            item,
            sig,
            sites,
            machine: &machine,
            diagram_meta,
            diagram_method,
        },
        &private,
    );
    let step_body = step_body(
        sig,
        name,
        &args,
        &machine,
        StepArms {
            slot_type,
            resume,
            trace,
        },
        &private,
    );

    quote! {
        #marker
        #output_check

        #(#attrs)*
        #diagram_doc
        #[allow(non_camel_case_types)]
        #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug, ::core::default::Default)]
        #vis struct #name;

        #args_struct

        const _: () = {
            #keep_shim
            #definition

            impl #name {
                #[doc(hidden)]
                fn __finish(output: #output) -> #private::Step<#private::MacroState<#args>> {
                    #private::done(output)
                }

            }

            impl #private::SagaTool for #name {
                type State = #private::MacroState<#args>;

                #described

                #(#lint_levels)*
                #step_lints
                async fn step(
                    &self,
                    __state: Self::State,
                    mut __answers: #private::Answers,
                    __cx: &#private::SagaContext,
                ) -> #private::Step<Self::State> {
                    #(#items)*
                    #context
                    #step_body
                }
            }
        };
    }
}

/// What [`described_methods`] reads besides the attribute.
struct Describing<'a> {
    item: &'a ItemFn,
    sig: &'a crate::tool::parse::sig::Signature,
    sites: &'a [Site],
    machine: &'a Machine,
    diagram_meta: TokenStream,
    diagram_method: TokenStream,
}

/// The `SagaTool` methods that describe the tool and its states: every one but `step`.
fn described_methods(attr: &ToolAttr, of: Describing<'_>, private: &TokenStream) -> TokenStream {
    let Describing {
        item,
        sig,
        sites,
        machine,
        diagram_meta,
        diagram_method,
    } = of;
    let name = &item.sig.ident;
    let args = format_ident!("__saga_args_{}", name);
    let output = &sig.output;
    let tool_name = attr.name.as_ref().map_or_else(
        || name.to_string().trim_start_matches("r#").to_owned(),
        |lit| lit.value(),
    );
    let settings = tool_settings(attr, sig, private);
    let variant_names: Vec<String> = sites.iter().map(|site| site.variant.to_string()).collect();
    let build_tag = build_tag(item);
    let version = attr.version.as_ref().map(|version| {
        quote! {
            fn version(&self) -> u16 {
                #version
            }
        }
    });
    let task_support = task_support(attr, private);
    let restate = restate(sites, machine, private);
    quote! {
        fn tool(&self) -> #private::Tool {
            let mut tool =
                #private::described(#tool_name, #private::args_schema::<#args>());
            #settings
            #diagram_meta
            tool.output_schema = <#output as #private::ToolOutput>::output_schema();
            tool
        }

        #version

        fn build_tag(&self) -> u16 {
            #build_tag
        }

        fn layout(
            &self,
        ) -> ::core::result::Result<#private::StateLayout, #private::LayoutError> {
            #private::macro_layout(self)
        }

        #task_support

        fn state_names(&self) -> &'static [&'static str] {
            &[#(#variant_names),*]
        }

        #diagram_method

        #restate

        fn state_json(
            &self,
            __state: Self::State,
        ) -> ::core::result::Result<#private::serde_json::Value, ::std::string::String> {
            #private::macro_state_json(self, __state)
        }

        fn start(
            &self,
            __arguments: #private::JsonObject,
        ) -> ::core::result::Result<Self::State, #private::ErrorData> {
            #private::start(__arguments)
        }
    }
}

/// The function's own lint levels (`#[allow(non_snake_case)]`, `#[deny(..)]`): they govern
/// its body, which is the step's now, not only the unit struct's; the step's own
/// allowances follow them, so the generated code's lints stay quiet. `#[expect(..)]` stays
/// on the struct alone (copied, it would be unfulfilled where the lint does not fire), and
/// so does `#[forbid(..)]`, which no later allowance could lift for the generated code.
fn lint_levels(item: &ItemFn) -> Vec<&syn::Attribute> {
    item.attrs
        .iter()
        .filter(|attr| {
            ["allow", "warn", "deny"]
                .iter()
                .any(|level| attr.path().is_ident(level))
        })
        .collect()
}

/// What `SagaTool::tool` sets on the tool it describes: the statements that set its
/// description, title, annotations, icons and `_meta`, as the attribute gives them.
fn tool_settings(
    attr: &ToolAttr,
    sig: &crate::tool::parse::sig::Signature,
    private: &TokenStream,
) -> TokenStream {
    let description = attr
        .description
        .as_ref()
        .map(|lit| lit.value())
        .or_else(|| sig.docs.clone());
    let description = match description {
        Some(text) => quote!(tool.description = ::core::option::Option::Some(#text.into());),
        None => quote!(),
    };
    let title = match &attr.title {
        Some(lit) => quote!(tool.title = ::core::option::Option::Some(#lit.to_owned());),
        None => quote!(),
    };
    let annotations = (!attr.hints.is_empty()).then(|| {
        let setters = attr.hints.iter().map(|(hint, value)| {
            let setter = quote::format_ident!("{}", hint.setter());
            quote!(.#setter(#value))
        });
        quote! {
            tool.annotations = ::core::option::Option::Some(
                #private::ToolAnnotations::new() #(#setters)*
            );
        }
    });
    let icons = (!attr.icons.is_empty()).then(|| {
        let icons = &attr.icons;
        quote!(tool.icons = #private::tool_icons(&[#(#icons),*]);)
    });
    let meta = attr
        .meta
        .as_ref()
        .map(|json| quote!(tool.meta = #private::tool_meta(#json);));
    quote! {
        #description
        #title
        #annotations
        #icons
        #meta
    }
}

/// The struct the tool's arguments are read into, and its schema made from.
fn args_struct(
    sig: &crate::tool::parse::sig::Signature,
    vis: &syn::Visibility,
    args: &Ident,
    deny_unknown: bool,
    private: &TokenStream,
) -> TokenStream {
    // Refused by serde, and said in the schema (`additionalProperties: false`).
    let deny = deny_unknown.then(|| quote!(#[serde(deny_unknown_fields)]));
    let arg_fields = sig.params.iter().map(|param| {
        let ident = &param.ident;
        let ty = &param.ty;
        let description = param
            .description
            .as_ref()
            .map(|lit| quote!(#[schemars(description = #lit)]));
        let rename = param
            .rename
            .as_ref()
            .map(|lit| quote!(#[serde(rename = #lit)]));
        quote!(#description #rename pub #ident: #ty)
    });
    let serde_crate = format!("{private}::serde").replace(' ', "");
    let schemars_crate = format!("{private}::schemars").replace(' ', "");
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #[derive(#private::serde::Deserialize, #private::schemars::JsonSchema)]
        #[serde(crate = #serde_crate)]
        #[schemars(crate = #schemars_crate)]
        #deny
        #vis struct #args {
            #(#arg_fields,)*
        }
    }
}

/// `SagaTool::task_support`, when the attribute says `task`.
fn task_support(attr: &ToolAttr, private: &TokenStream) -> TokenStream {
    match attr.task {
        None => quote!(),
        Some(crate::tool::parse::attr::TaskAttr::Optional) => quote! {
            fn task_support(&self) -> #private::TaskSupport {
                #private::TaskSupport::Optional
            }
        },
        Some(crate::tool::parse::attr::TaskAttr::Required) => quote! {
            fn task_support(&self) -> #private::TaskSupport {
                #private::TaskSupport::Required
            }
        },
    }
}

/// `SagaTool::restate`, for a tool that may suspend at requests it states again.
///
/// Only a tool that may suspend at requests it states again (its own, or a helper's; any
/// call may be of a helper) is asked to: the others keep the trait's default, and compile
/// nothing for it. The parameters are named `__state` and `__cx` here and below, as in
/// `step`: a tool may be named `state` (its unit struct would make a bare `state` a
/// pattern).
fn restate(sites: &[Site], machine: &Machine, private: &TokenStream) -> Option<TokenStream> {
    let restates = machine.restated.iter().any(|restated| *restated)
        || sites.iter().any(|site| site.suspension.is_call());
    restates.then(|| {
        quote! {
            fn restate(
                &self,
                __state: Self::State,
                __cx: &#private::SagaContext,
            ) -> ::core::option::Option<::std::vec::Vec<#private::Request>> {
                #private::macro_restate(self, __state, __cx)
            }
        }
    })
}

/// What the state enum gives the step's arms.
struct StepArms {
    slot_type: TokenStream,
    resume: TokenStream,
    trace: TokenStream,
}

/// The body of `step`: one arm per mode of the runtime's `MacroState`.
///
/// Enclosed, so that a `return` the macro cannot see ends the saga (see `rewrite`). The
/// trace, inspection and restating modes are arms of their own (see the runtime's
/// `MacroState`).
fn step_body(
    sig: &crate::tool::parse::sig::Signature,
    name: &Ident,
    args: &Ident,
    machine: &Machine,
    arms: StepArms,
    private: &TokenStream,
) -> TokenStream {
    let StepArms {
        slot_type,
        resume,
        trace,
    } = arms;
    // `{ x }`, or `{ x: __x_arg }` for an argument named like the tool (`Param::local`).
    let arg_bindings = sig.params.iter().map(|param| {
        let (ident, local) = (&param.ident, param.local(name));
        if local == *ident {
            quote!(#ident)
        } else {
            quote!(#ident: #local)
        }
    });
    let rebind_mut = sig
        .params
        .iter()
        .filter(|param| param.mutable)
        .map(|param| {
            let local = param.local(name);
            // At the parameter: rustc names in its borrow errors only a binding whose
            // `let` is the user's ("cannot borrow `names` as mutable"); one at the
            // attribute's span is "value".
            quote::quote_spanned!(param.ident.span()=> let mut #local = #local;)
        });
    let start = &machine.start;
    let inspected = machine
        .carrier
        .wrap(quote!(#private::inspected(&__slot, &__bytes)));
    let not_a_mode = machine.carrier.wrap(quote!(#private::failed(
        "an inspection's answer is not a mode of the step"
    )));
    crate::tool::lower::rewrite::enclose(
        quote! {
            let __slot: #private::StateSlot<#slot_type> = ::core::marker::PhantomData;
            match __state {
                #private::MacroState::Start(#args { #(#arg_bindings),* }) => {
                    #(#rebind_mut)*
                    #start
                }
                #private::MacroState::Trace => {
                    #trace
                }
                #private::MacroState::Inspect(__bytes) => {
                    return #inspected;
                }
                #private::MacroState::Inspected(_) => {
                    return #not_a_mode;
                }
                // A later round, or the restating mode (see the runtime's `SagaTool::restate`),
                // which hands itself down to the suspension through the answers.
                __resuming @ (#private::MacroState::Resume(_) | #private::MacroState::Restate(_)) => {
                    let __bytes = #private::resumed(__resuming, &mut __answers);
                    #resume
                }
            }
        },
        machine.carrier,
    )
}

/// FNV-1a of the function as written, folded to 16 bits: a round asked by a build of
/// other code is asked again as this build states it (see `SagaTool::build_tag`). It
/// decides nothing about resuming: the points' layouts do.
pub fn build_tag(item: &ItemFn) -> TokenStream {
    let text = format!("saga-tool/v1\0{}", quote!(#item));
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let folded = (hash ^ (hash >> 16) ^ (hash >> 32) ^ (hash >> 48)) as u16;
    quote!(#folded)
}

/// The state enum of a saga, the type of its `__slot`, and the resume arm's body: the
/// state decoded, and the `match` that resumes at each variant.
pub struct StateEnum {
    pub definition: TokenStream,
    pub slot_type: TokenStream,
    pub resume: TokenStream,
    /// The trace mode's arm: records the state enum and each called helper's, then ends
    /// the step.
    pub trace: TokenStream,
}

/// The state enum's variants, one per site, over the generic parameters of their fields.
struct Variants {
    /// `T0, T1, …` for saved locals, `R…` for a helper's state and the request markers.
    params: Vec<Ident>,
    variants: Vec<StateVariant>,
    /// The resume `match`'s arms, each binding its variant's fields.
    arms: Vec<TokenStream>,
    /// Per site that calls a helper: its variant's name, and its helper's parameter.
    callees: Vec<(String, usize)>,
}

/// Each site's variant: its saved locals, its helper's state, its requests' markers.
fn variants(sites: &[Site], machine: &Machine) -> Variants {
    let mut params: Vec<Ident> = Vec::new();
    let mut variants = Vec::new();
    let mut arms = Vec::new();
    let mut callees: Vec<(String, usize)> = Vec::new();
    for (site, (saved, cont)) in sites.iter().zip(&machine.resumes) {
        let variant = &site.variant;
        let mut fields = Vec::new();
        let mut pattern = Vec::new();
        for local in saved {
            let param = format_ident!("T{}", params.len());
            let field = &local.field;
            fields.push(StateField {
                name: field.clone(),
                kind: FieldKind::Saved,
                param: param.clone(),
            });
            let binding = format_ident!("__saved_{}", field);
            pattern.push(quote!(#field: #binding));
            params.push(param);
        }
        if site.suspension.is_call() {
            callees.push((variant.to_string(), params.len()));
            let param = format_ident!("R{}", params.len());
            let (call_fields, call_pattern) = crate::tool::emit::call::fields(&param);
            fields.extend(call_fields);
            pattern.extend(call_pattern);
            params.push(param);
        }
        for i in 0..site.suspension.requests().len() {
            let param = format_ident!("R{}", params.len());
            let field = format_ident!("__m{}", i);
            fields.push(StateField {
                name: field.clone(),
                kind: FieldKind::Marker,
                param: param.clone(),
            });
            let mark = format_ident!("__mark{}", i);
            pattern.push(quote!(#field: #mark));
            params.push(param);
        }
        arms.push(quote! {
            __State::#variant { #(#pattern),* } => #cont
        });
        variants.push(StateVariant {
            name: variant.clone(),
            fields,
        });
    }
    Variants {
        params,
        variants,
        arms,
        callees,
    }
}

/// Per site, what tells it apart from the sites that share its name: a point is named by
/// what it asks and binds (`AfterElicitTarget`), and sites that would share a name are
/// numbered in source order (`AfterCheckpoint`, `AfterCheckpoint2`). A number says
/// nothing of where a site is: inserting a checkpoint in front would move the numbers onto
/// other code. So each such site's identity also holds a hash of the code of every site
/// sharing its name, in order; any change to them refuses the tokens at those points.
/// Uniquely named sites get nothing, and keep their tokens through edits of their code.
///
/// A site whose continuation binds borrows of places again (see `lower::places`), or
/// takes a `&'static str` back among literals, also holds a hash of that code and those
/// literals: the state saves only the owners and the text, so a build that would borrow
/// elsewhere, or choose among other literals, refuses the token. Sites without such borrows,
/// every tool's before them included, keep their identities.
fn site_tags(sites: &[Site], machine: &Machine) -> Vec<String> {
    sites
        .iter()
        .zip(&machine.borrows)
        .map(|(site, borrows)| {
            let shared: Vec<&str> = sites
                .iter()
                .filter(|other| other.base == site.base)
                .map(|other| other.source.as_str())
                .collect();
            let mut tags = Vec::new();
            if shared.len() >= 2 {
                tags.push(format!(
                    "one of {} sites named {}, code {:08x}",
                    shared.len(),
                    site.base,
                    fnv32(&shared.join("\n"))
                ));
            }
            if !borrows.is_empty() {
                tags.push(format!("borrows {:08x}", fnv32(borrows)));
            }
            tags.join("; ")
        })
        .collect()
}

fn fnv32(text: &str) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in text.bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// One variant per suspension, one type parameter per saved local and per request
/// marker, all inferred by rustc inside `step`.
pub fn state_enum(sites: &[Site], machine: &Machine) -> StateEnum {
    let private = private_path();
    let Variants {
        params,
        variants,
        arms,
        callees,
    } = variants(sites, machine);
    let generics = if params.is_empty() {
        quote!()
    } else {
        quote!(<#(#params),*>)
    };
    let holes = params.iter().map(|_| quote!(_));
    let slot_type = if params.is_empty() {
        quote!(__State)
    } else {
        quote!(__State<#(#holes),*>)
    };
    let slot_bounds: Vec<TokenStream> = params
        .iter()
        .filter(|param| param.to_string().starts_with('T'))
        .map(|param| quote!(#param: #private::SlotField))
        .collect();
    let definitions = sites.iter().zip(&variants).map(|(site, variant)| {
        let doc = format!(" Suspended at `{}`", site.source.replace('`', "'"));
        let name = &variant.name;
        let fields = variant.fields.iter().map(|field| {
            let (name, ty) = (&field.name, field.ty());
            quote!(#name: #ty)
        });
        quote! {
            #[doc = #doc]
            #name { #(#fields),* }
        }
    });
    let codec = impl_state_enum(&variants, &generics, &slot_bounds);
    let restated = &machine.restated;
    let definition = quote! {
        /// Per suspension: whether the step states its requests again when asked, so
        /// that the token keeps none of them.
        #[allow(dead_code)]
        const __SAGA_RESTATED: &[bool] = &[#(#restated),*];
        #[allow(non_camel_case_types, clippy::enum_variant_names)]
        enum __State #generics {
            #(#definitions,)*
        }
        #codec
    };
    let callee_traces = callees.iter().map(|(variant, index)| {
        let kind = &params[*index];
        quote! {
            {
                #[allow(non_snake_case, clippy::type_complexity)]
                fn __callee_kind #generics (
                    _: &#private::StateSlot<__State #generics>,
                ) -> #private::KindMarker<#kind> {
                    ::core::marker::PhantomData
                }
                #private::kind_of(__callee_kind(&__slot)).trace_callee(#variant);
            }
        }
    });
    let site_tags = site_tags(sites, machine);
    let traced = machine.carrier.wrap(quote!(#private::traced()));
    let trace = quote! {
        #private::record_state(&__slot, &[#(#site_tags),*]);
        #(#callee_traces)*
        return #traced;
    };
    // Generated names only: a tool named `state` or `error` is a unit struct in scope.
    let undecodable = machine
        .carrier
        .wrap(quote!(#private::undecodable(&__error)));
    let resume = quote! {
        let __resumed = match #private::decode(&__slot, &__bytes) {
            ::core::result::Result::Ok(__state) => __state,
            ::core::result::Result::Err(__error) => return #undecodable,
        };
        match __resumed {
            #(#arms)*
        }
    };
    StateEnum {
        definition,
        slot_type,
        resume,
        trace,
    }
}
