//! The plain run of saga's differential tests (`tests/corpus`): a saga's body compiled as
//! one ordinary async function, which the tests compare with the state machine
//! `#[saga_tool]` makes of the same source.
//!
//! The corpus compiles each saga twice: once under saga's own attributes, and once in a
//! child module that imports these instead (`saga_examples::plain`). Here nothing is
//! lowered: a body stays as written, except that each `e.await` becomes a call that asks
//! the plain run's script when `e` is one of saga's requests (and awaits `e` otherwise),
//! and `join!` asks its requests in one round. A helper is an ordinary `async fn`, so a
//! tool's plain body calls its helpers' plain bodies by their own names.
//!
//! None of this is in the published crates: saga's macros know nothing of it.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, FnArg, ItemFn, Pat, Token, Type};

/// A tool's plain run: a function named as the tool, `(arguments, cx)` to the body's
/// result, run as one async function (under `saga_examples::plain::Scope`).
#[proc_macro_attribute]
pub fn saga_tool(_attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut item = syn::parse_macro_input!(item as ItemFn);
    plain_body(&mut item.block);
    tool(item).into()
}

/// A helper's plain run: the same `async fn`, its `.await`s asking the plain run's script.
#[proc_macro_attribute]
pub fn saga_fn(_attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut item = syn::parse_macro_input!(item as ItemFn);
    plain_body(&mut item.block);
    quote!(#item).into()
}

/// `join!(a, b, ..)` in a plain run: the requests asked in one round, their answers as a
/// tuple (as saga's `join!` gives them).
#[proc_macro]
pub fn join(input: TokenStream) -> TokenStream {
    let parser = Punctuated::<Expr, Token![,]>::parse_terminated;
    let requests = match syn::parse::Parser::parse(parser, input) {
        Ok(requests) => requests,
        Err(error) => return error.to_compile_error().into(),
    };
    // `join!(a.await, b)`: saga accepts an element's own `.await` and ignores it.
    let requests: Vec<Expr> = requests
        .into_iter()
        .map(|request| match request {
            Expr::Await(awaited) => *awaited.base,
            other => other,
        })
        .collect();
    let names: Vec<_> = (0..requests.len())
        .map(|i| format_ident!("__request{i}"))
        .collect();
    let marks: Vec<_> = (0..requests.len())
        .map(|i| format_ident!("__mark{i}"))
        .collect();
    let indices = 0..requests.len();
    let requests = requests.iter();
    quote!({
        #(
            let #names = #requests;
            let #marks = ::saga_runtime::__private::marker(&#names);
        )*
        let mut __round = ::std::vec::Vec::new();
        #(::saga_runtime::__private::requests(&mut __round, #names);)*
        let mut __answers = ::saga_examples::plain::ask(__round);
        (#(::saga_runtime::__private::answer(#marks, &mut __answers, #indices),)*)
    })
    .into()
}

fn tool(item: ItemFn) -> TokenStream2 {
    // A function, not the unit struct saga makes: a local named like the tool
    // (`let summary = ..` in `fn summary`) binds as it does in ordinary Rust. Public
    // whatever the tool's visibility: the plain copy is a child module of the tests that
    // run it.
    let ItemFn {
        attrs, sig, block, ..
    } = item;
    let name = &sig.ident;
    // The tool's own lint levels govern its body, as they do the generated step
    // (`#[expect]` stays behind there too: copied, it could go unfulfilled).
    let lint_levels = attrs.iter().filter(|attr| {
        ["allow", "warn", "deny"]
            .iter()
            .any(|level| attr.path().is_ident(level))
    });
    let output = match &sig.output {
        syn::ReturnType::Default => quote!(()),
        syn::ReturnType::Type(_, ty) => quote!(#ty),
    };
    let mut fields = Vec::new();
    let mut bindings = Vec::new();
    let mut rebind_mut = Vec::new();
    let mut context = quote!(let _ = __cx;);
    for input in &sig.inputs {
        let FnArg::Typed(typed) = input else { continue };
        let Pat::Ident(pat) = &*typed.pat else {
            continue;
        };
        let ident = &pat.ident;
        if is_context(&typed.ty) {
            context = quote!(let #ident = __cx;);
            continue;
        }
        let ty = &typed.ty;
        // As saga reads arguments: `#[arg(rename = "..")]` is the name on the wire.
        let rename = arg_rename(&typed.attrs).map(|name| quote!(#[serde(rename = #name)]));
        fields.push(quote!(#rename #ident: #ty));
        bindings.push(ident.clone());
        if pat.mutability.is_some() {
            rebind_mut.push(quote!(let mut #ident = #ident;));
        }
    }
    quote! {
        /// The tool's body as one ordinary async function.
        #(#lint_levels)*
        #[allow(unused_mut, clippy::all)]
        pub fn #name<'__plain>(
            __arguments: ::saga_runtime::rmcp::model::JsonObject,
            __cx: &'__plain ::saga_runtime::engine::SagaContext,
        ) -> ::std::pin::Pin<::std::boxed::Box<
            dyn ::core::future::Future<
                Output = ::core::result::Result<#output, ::saga_runtime::rmcp::ErrorData>,
            > + ::core::marker::Send + '__plain,
        >> {
            ::std::boxed::Box::pin(async move {
                #[derive(::serde::Deserialize)]
                struct __Args {
                    #(#fields,)*
                }
                let __Args { #(#bindings),* } =
                    ::saga_runtime::__private::parse_arguments(__arguments)?;
                #(#rebind_mut)*
                #context
                let __output: #output = async move #block.await;
                ::core::result::Result::Ok(__output)
            })
        }
    }
}

/// The wire name an argument's `#[arg(rename = "..")]` gives it.
fn arg_rename(attrs: &[syn::Attribute]) -> Option<syn::LitStr> {
    let mut rename = None;
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("arg")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                rename = Some(meta.value()?.parse::<syn::LitStr>()?);
            } else if meta.input.peek(Token![=]) {
                let _: Expr = meta.value()?.parse()?;
            }
            Ok(())
        });
    }
    rename
}

/// Whether a parameter is the tool's context (`&SagaContext`): saga-macros' own rule
/// (`parse/sig.rs`), written again because one proc-macro crate cannot call another's
/// code; the corpus's context-taking sagas fail their differential tests if the two differ.
fn is_context(ty: &Type) -> bool {
    match ty {
        Type::Reference(reference) => match &*reference.elem {
            Type::Path(path) => path
                .path
                .segments
                .last()
                .is_some_and(|segment| segment.ident == "SagaContext"),
            _ => false,
        },
        _ => false,
    }
}

impl Plain {
    /// `part` rewritten if it reads as an expression that awaits; as it was otherwise.
    fn rewritten(&mut self, part: TokenStream2) -> TokenStream2 {
        let awaits = part.to_string().contains("await");
        match syn::parse2::<Expr>(part.clone()) {
            Ok(mut expr) if awaits => {
                self.visit_expr_mut(&mut expr);
                quote!(#expr)
            }
            _ => part,
        }
    }
}

fn plain_body(block: &mut syn::Block) {
    Plain.visit_block_mut(block);
}

/// Each `e.await` asks the plain run's script if `e` is a request, awaits it otherwise.
struct Plain;

impl VisitMut for Plain {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        visit_mut::visit_expr_mut(self, expr);
        if let Expr::Await(awaited) = expr {
            let base = &awaited.base;
            let span = awaited.await_token.span();
            *expr = syn::parse_quote_spanned! {span=>
                match #base {
                    __awaited => {
                        #[allow(unused_imports)]
                        use ::saga_examples::plain::{ViaCheckpoint as _, ViaFuture as _, ViaRequest as _};
                        let __kind = (&&&::saga_examples::plain::probe(&__awaited)).kind();
                        __kind.plain(__awaited).await
                    }
                }
            };
        }
    }

    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        // A macro's arguments may await (`format!("{}", x.await?)`, `vec![x.await?; 2]`,
        // `matches!(x.await?, pattern)`): each part between top-level `,` and `;` that
        // reads as an expression is rewritten; the rest (a pattern, say) stays as written.
        if mac.path.is_ident("join") {
            return;
        }
        let mut out = TokenStream2::new();
        let mut part = TokenStream2::new();
        for token in mac.tokens.clone() {
            match &token {
                proc_macro2::TokenTree::Punct(punct)
                    if matches!(punct.as_char(), ',' | ';')
                        && punct.spacing() == proc_macro2::Spacing::Alone =>
                {
                    out.extend(self.rewritten(std::mem::take(&mut part)));
                    out.extend([token]);
                }
                _ => part.extend([token]),
            }
        }
        out.extend(self.rewritten(part));
        mac.tokens = out;
    }

    fn visit_item_mut(&mut self, _item: &mut syn::Item) {}
}

/// Leaves its item out: a test of the corpus, in the plain copy of its file (the test
/// runs once, in the file's own module, where it compares the two).
#[proc_macro_attribute]
pub fn skip(_attr: TokenStream, _item: TokenStream) -> TokenStream {
    TokenStream::new()
}

/// Keeps its item as it is: what a corpus file marks `#[machine_only]` (a function that
/// compares the two runs) in the file's own module, where [`skip`] leaves it out of the
/// plain copy.
#[proc_macro_attribute]
pub fn keep(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}
