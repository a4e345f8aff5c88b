//! `#[saga_tool]`: compiles a straight-line async function into a `SagaTool` state
//! machine. Parse (attr, sig), check where suspensions stand, lower (normalise), rewrite
//! the tool's exits, build the machine, expand; on error, the errors and a stub.

mod attr;
mod check;
mod expand;
mod fallback;
mod lower;
mod machine;
mod plain;
mod rewrite;
mod scope;
mod sig;
mod suspend;

use proc_macro2::TokenStream;
use syn::ItemFn;

use crate::errors::Errors;

pub fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut item: ItemFn = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(error) => {
            let error = syn::Error::new(
                error.span(),
                "#[saga_tool] goes on an `async fn`: the tool is written as one function",
            );
            let mut tokens = error.to_compile_error();
            tokens.extend(input);
            return tokens;
        }
    };
    let original = item.clone();
    let mut errors = Errors::default();
    let attr = attr::parse(args, &mut errors);
    let sig = sig::parse(&mut item, &mut errors);
    check::check(&item.block, &mut errors);
    let (body, sites) = lower::lower((*item.block).clone(), &mut errors);
    if let Some(error) = errors.into_error() {
        return fallback::expand(&original, error);
    }
    let body = rewrite::exits(body);
    let params: Vec<machine::Binding> = sig
        .params
        .iter()
        .map(|param| machine::Binding {
            ident: param.ident.clone(),
            mutable: param.mutable,
        })
        .collect();
    let machine = machine::build(&body, &sites, &params);
    let plain = plain::body((*item.block).clone());
    let tokens = expand::tool(expand::Parts {
        attr: &attr,
        item: &item,
        sig: &sig,
        sites: &sites,
        machine,
        plain,
    });
    if std::env::var_os("SAGA_MACROS_DEBUG").is_some_and(|v| v != "0") {
        eprintln!("{}", pretty(&tokens));
    }
    tokens
}

/// The expansion as formatted Rust, for `SAGA_MACROS_DEBUG=1` and the snapshot tests.
pub fn pretty(tokens: &TokenStream) -> String {
    match syn::parse2::<syn::File>(tokens.clone()) {
        Ok(file) => prettyplease::unparse(&file),
        Err(_) => tokens.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn expand_str(source: &str) -> String {
        let item: TokenStream = source.parse().expect("the test source is Rust");
        pretty(&expand(TokenStream::new(), item))
    }

    #[test]
    fn scratch() {
        let source = std::fs::read_to_string("/tmp/scratch/in.rs").unwrap_or_default();
        if !source.is_empty() {
            println!("{}", expand_str(&source));
        }
    }
}
