//! `#[saga_tool]`: compiles a straight-line async function into a `SagaTool` state
//! machine. Parse (attr, sig), check where suspensions stand, lower (normalise), rewrite
//! the tool's exits, build the machine, expand; on error, the errors and a stub.

mod attr;
mod call;
mod check;
mod desugar;
mod diagram;
mod expand;
mod fallback;
mod helper;
mod items;
mod keep;
mod local;
mod lower;
mod machine;
mod macro_args;
mod plain;
mod rename;
mod restate;
mod rewrite;
mod saved;
mod scope;
mod served_as;
mod sig;
mod suspend;

use proc_macro2::TokenStream;
use syn::ItemFn;

use crate::errors::Errors;
pub use served_as::ServedAs;

/// `#[saga_tool]`.
pub fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    expand_as(ServedAs::Tool, args, input)
}

/// `#[saga_tool]`, `#[saga_prompt]` or `#[saga_resource]`, by `kind`.
pub fn expand_as(kind: ServedAs, args: TokenStream, input: TokenStream) -> TokenStream {
    let item: ItemFn = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(error) => return not_a_fn(error, input, "#[saga_tool]"),
    };
    let original = item.clone();
    let mut errors = Errors::default();
    let attr = attr::parse(args, &mut errors);
    let compiled = match compile(item, sig::Role::Tool, errors) {
        Ok(compiled) => compiled,
        Err(error) => return fallback::expand(kind, &original, error),
    };
    let tokens = expand::tool(kind, &attr, compiled);
    debug_print(&tokens);
    tokens
}

/// `#[saga_fn]`.
pub fn expand_helper(args: TokenStream, input: TokenStream) -> TokenStream {
    let item: ItemFn = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(error) => return not_a_fn(error, input, "#[saga_fn]"),
    };
    let original = item.clone();
    let mut errors = Errors::default();
    if !args.is_empty() {
        errors.at(
            &args,
            "#[saga_fn] takes no arguments: a helper is not registered, its caller is; \
             remove them",
        );
    }
    let recursive = helper::check_recursion(&item, &mut errors);
    helper::check_self(&item, &mut errors);
    let compiled = match compile(item, sig::Role::Helper, errors) {
        Ok(compiled) => compiled,
        Err(error) => return helper::fallback(&original, error, recursive),
    };
    let mut errors = Errors::default();
    helper::check_borrowed_params(&compiled, &mut errors);
    if let Some(error) = errors.into_error() {
        return helper::fallback(&original, error, recursive);
    }
    let tokens = helper::expand(compiled);
    debug_print(&tokens);
    tokens
}

fn not_a_fn(error: syn::Error, input: TokenStream, name: &str) -> TokenStream {
    let error = syn::Error::new(
        error.span(),
        format!("{name} goes on an `async fn`: the saga is written as one function"),
    );
    let mut tokens = error.to_compile_error();
    tokens.extend(input);
    tokens
}

/// What the state machine of a saga (tool or helper) is made of.
pub struct Compiled {
    pub item: ItemFn,
    pub sig: sig::Signature,
    pub sites: Vec<lower::Site>,
    pub machine: machine::Machine,
    pub plain: Option<syn::Block>,
    /// The items declared in the body, hoisted to the top of `step`.
    pub items: Vec<syn::Item>,
}

/// Parse, check, lower, rewrite the exits, build the machine, check what it saves; every
/// error found, collected.
fn compile(mut item: ItemFn, role: sig::Role, mut errors: Errors) -> Result<Compiled, syn::Error> {
    let sig = sig::parse(&mut item, role, &mut errors);
    check::check(&item.block, &mut errors);
    if let Some(error) = errors.take() {
        return Err(error);
    }
    // Lowering reports its own errors only once the checks passed, so that one mistake
    // is not diagnosed twice.
    let mut body = (*item.block).clone();
    desugar::matches(&mut body);
    let mut items = items::hoist(&mut body);
    let param_names: Vec<syn::Ident> = sig.params.iter().map(|p| p.ident.clone()).collect();
    // A tool is also a unit struct of its function's name.
    let reserved: Vec<syn::Ident> = match role {
        sig::Role::Tool => vec![item.sig.ident.clone()],
        sig::Role::Helper => Vec::new(),
    };
    rename::alpha(&mut body, &param_names, &reserved);
    let (body, sites) = lower::lower(body, &mut errors);
    if let Some(error) = errors.take() {
        return Err(error);
    }
    let unit = matches!(&sig.output, syn::Type::Tuple(tuple) if tuple.elems.is_empty());
    let carrier = rewrite::Carrier::of(&sig.output);
    let body = rewrite::exits(body, unit, carrier);
    let mut sites = sites;
    rewrite::exits_in_calls(&mut sites, carrier);
    let params: Vec<local::Binding> = sig
        .params
        .iter()
        .map(|param| local::Binding {
            ident: param.ident.clone(),
            mutable: param.mutable,
        })
        .collect();
    if sites.iter().any(|site| site.suspension.is_call()) {
        items.extend(call::request_kind_items());
    }
    let machine = machine::build(&body, &sites, &params, carrier);
    saved::check(&body, &machine, &sites, &mut errors);
    if let Some(error) = errors.into_error() {
        return Err(error);
    }
    let plain = plain_run().then(|| {
        let mut plain_block = (*item.block).clone();
        desugar::matches(&mut plain_block);
        rename::alpha(&mut plain_block, &param_names, &reserved);
        plain::body(plain_block)
    });
    Ok(Compiled {
        item,
        sig,
        sites,
        machine,
        plain,
        items,
    })
}

/// Whether to compile the plain run of each saga (`__plain`, and a helper's `plain`): the
/// body as one ordinary async function, which the differential tests compare with the
/// state machine. It is a second copy of the user's code for rustc to check, so an error
/// in the body would be reported once per copy, sometimes differently (the copy infers its
/// return type from its first `return`); a crate gets it only when built with
/// `SAGA_PLAIN_RUN=1` in the environment, as this repository's root package is (its
/// `build.rs`), which also enables the runtime's `plain-run` feature that the plain run
/// needs. A variable rather than a Cargo feature of this crate: features are unified
/// across a workspace, and the compile-fail tests must see what a user sees. Without it,
/// nothing of the plain run is emitted.
pub(super) fn plain_run() -> bool {
    std::env::var_os("SAGA_PLAIN_RUN").is_some_and(|v| !v.is_empty() && v != "0")
}

fn debug_print(tokens: &TokenStream) {
    if std::env::var_os("SAGA_MACROS_DEBUG").is_some_and(|v| v != "0") {
        eprintln!("{}", pretty(tokens));
    }
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

    fn expand_str(source: &str) -> String {
        let item: TokenStream = source.parse().expect("the test source is Rust");
        pretty(&expand(TokenStream::new(), item))
    }

    /// Each `tests/expand/NAME.rs` expands to `tests/expand/NAME.expanded.rs`. Run with
    /// `SAGA_SNAPSHOTS=overwrite` to accept a changed expansion after reading the diff.
    #[test]
    fn expansions_match_their_snapshots() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expand");
        let mut checked = 0;
        let mut inputs: Vec<_> = std::fs::read_dir(&dir)
            .expect("tests/expand exists")
            .map(|entry| entry.expect("readable entry").path())
            .filter(|path| !path.to_string_lossy().ends_with(".expanded.rs"))
            .collect();
        inputs.sort();
        for input in inputs {
            let source = std::fs::read_to_string(&input).expect("readable input");
            let expanded = expand_str(&source);
            let snapshot = input.with_extension("expanded.rs");
            saga_snapshot::assert_snapshot(&snapshot, &input.display().to_string(), &expanded);
            checked += 1;
        }
        assert!(
            checked >= 5,
            "expected the representative sagas in tests/expand, found {checked}"
        );
    }

    #[test]
    fn build_tag_follows_the_code() {
        let a = "async fn t() -> Result<String, SagaError> { let x: String = elicit(\"a\").await?; Ok(x) }";
        let b = "async fn t() -> Result<String, SagaError> { let x: String = elicit(\"b\").await?; Ok(x) }";
        let tag = |source: &str| {
            let expanded = expand_str(source);
            let start = expanded.find("fn build_tag").expect("a build_tag fn");
            expanded[start..start + 60].to_owned()
        };
        assert_eq!(tag(a), tag(a), "the same code, the same tag");
        assert_ne!(tag(a), tag(b), "a changed literal changes the tag");
    }

    /// The macro's own cost for a saga with 20 suspensions, printed (never asserted).
    #[test]
    fn expansion_time_of_twenty_suspensions() {
        let mut body = String::new();
        for i in 0..20u32 {
            body.push_str(&format!(
                "let a{i}: String = elicit(format!(\"q{i} {{}}\", a{})).await?;\n",
                i.saturating_sub(1)
            ));
        }
        let source = format!(
            "async fn twenty(seed: String) -> Result<String, SagaError> {{ let a0 = seed; {body} Ok(a19) }}"
        );
        let item: TokenStream = source.parse().expect("valid source");
        let mut times = Vec::new();
        for _ in 0..15 {
            let started = std::time::Instant::now();
            let tokens = expand(TokenStream::new(), item.clone());
            times.push(started.elapsed());
            assert!(
                !tokens.to_string().contains("compile_error"),
                "the saga expands"
            );
        }
        times.sort();
        let lines = pretty(&expand(TokenStream::new(), item)).lines().count();
        eprintln!(
            "expanding a 20-suspension saga: median {:?}, min {:?}; {lines} lines of expansion",
            times[times.len() / 2],
            times[0]
        );
    }
}
