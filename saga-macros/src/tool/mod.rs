//! `#[saga_tool]`: compiles a straight-line async function into a `SagaTool` state
//! machine, in four stages, each a folder: [`parse`] (attr, sig), [`check`] where
//! suspensions stand, [`lower`] (normalise, rewrite the tool's exits, build the machine),
//! [`emit`]; on error, the errors and the function kept as it was, for IDEs.

mod check;
mod emit;
mod ir;
mod lower;
mod parse;

use emit::machine;
use emit::{call, fallback, helper, tool as expand};
use ir::Compiled;
use lower::{desugar, items, rename, rewrite};
use parse::{attr, sig};

use proc_macro2::TokenStream;
use syn::ItemFn;

use crate::errors::Errors;
pub use emit::served_as::ServedAs;

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
    let recursive = check::helper::check_recursion(&item, &mut errors);
    check::helper::check_self(&item, &mut errors);
    let mut compiled = match compile(item, sig::Role::Helper, errors) {
        Ok(compiled) => compiled,
        Err(error) => return helper::fallback(&original, error, recursive),
    };
    // A `&T` parameter used after a suspension: compiled again with an owned copy of it
    // taken first, which is saved, and the parameter borrowed from it.
    let kept = check::helper::kept_shared_params(&compiled);
    if !kept.is_empty() {
        let item = check::helper::owned_params(&original, &kept);
        compiled = match compile(item, sig::Role::Helper, Errors::default()) {
            Ok(compiled) => compiled,
            Err(error) => return helper::fallback(&original, error, recursive),
        };
    }
    let mut errors = Errors::default();
    check::helper::check_borrowed_params(&compiled, &mut errors);
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
    desugar::effects(&mut body);
    let mut items = items::hoist(&mut body);
    let function = item.sig.ident.clone();
    // A tool's argument named like the tool is read by a local of its own.
    let local = |param: &sig::Param| match role {
        sig::Role::Tool => param.local(&function),
        sig::Role::Helper => param.ident.clone(),
    };
    let param_names: Vec<(String, syn::Ident)> = sig
        .params
        .iter()
        .map(|p| (p.ident.to_string(), local(p)))
        .collect();
    // A tool is also a unit struct of its function's name.
    let reserved: Vec<syn::Ident> = match role {
        sig::Role::Tool => vec![item.sig.ident.clone()],
        sig::Role::Helper => Vec::new(),
    };
    rename::alpha(&mut body, &param_names, &reserved);
    desugar::tuple_lets(&mut body);
    let mutable_params: Vec<syn::Ident> = sig
        .params
        .iter()
        .filter(|p| p.mutable)
        .map(&local)
        .collect();
    let param_locals: Vec<syn::Ident> = param_names.iter().map(|(_, l)| l.clone()).collect();
    // Parameters that are shared references (a helper's `owners: &[String]`): a `for`
    // over one walks a new iterator of it after a restore, as over a `let` so typed.
    let reference_params: Vec<syn::Ident> = sig
        .params
        .iter()
        .filter(|p| matches!(&p.ty, syn::Type::Reference(r) if r.mutability.is_none()))
        .map(&local)
        .collect();
    let (mut body, sites) = lower::lower(
        body,
        &param_locals,
        (&mutable_params, &reference_params),
        &mut errors,
    );
    // After the lowering, where a `while let` is a `loop` whose `if let` is a statement:
    // what its borrow reads is taken at each iteration.
    lower::places::hoist(&mut body, &mutable_params);
    // After the hoisting, whose temporaries a recomputed `let` may read: the `let`s that
    // hold a borrow keep their fingerprint, to be recomputed after a restore.
    lower::recompute::lets(&mut body, &mutable_params, &sites);
    if let Some(error) = errors.take() {
        return Err(error);
    }
    let unit = matches!(&sig.output, syn::Type::Tuple(tuple) if tuple.elems.is_empty());
    let carrier = ir::Carrier::of(&sig.output);
    let body = rewrite::exits(body, unit, carrier);
    let mut sites = sites;
    rewrite::exits_in_calls(&mut sites, carrier);
    let params: Vec<ir::Binding> = sig
        .params
        .iter()
        .map(|param| ir::Binding {
            ident: local(param),
            mutable: param.mutable,
        })
        .collect();
    if sites.iter().any(|site| site.suspension.is_call()) {
        items.extend(call::request_kind_items());
    }
    let machine = machine::build(&body, &sites, &params, carrier);
    check::saved::check(&body, &machine, &sites, &mut errors);
    if let Some(error) = errors.into_error() {
        return Err(error);
    }
    Ok(Compiled {
        item,
        sig,
        sites,
        machine,
        items,
    })
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

    /// Two complex tools, through the whole compilation, give a diagram of the walk (not
    /// the fallback of the sites alone) with a node for each suspension point.
    #[test]
    fn complex_tools_get_whole_diagrams() {
        use emit::diagram::{Whose, build, param_names};
        for source in DIAGRAM_SAMPLES {
            let item: ItemFn = syn::parse_str(source).expect("the test source is a fn");
            let compiled = match compile(item, sig::Role::Tool, Errors::default()) {
                Ok(compiled) => compiled,
                Err(error) => panic!("does not compile: {error}"),
            };
            let diagram = build(
                Whose::Tool,
                &compiled.item,
                &param_names(&compiled.sig),
                &compiled.sites,
            );
            assert!(diagram.starts_with("stateDiagram-v2\n"), "{diagram}");
            assert!(!diagram.contains("control flow not shown"), "{diagram}");
            for site in &compiled.sites {
                assert!(
                    diagram.contains(&format!("    {} :", site.variant)),
                    "no node for {}: {diagram}",
                    site.variant
                );
            }
        }
    }

    const DIAGRAM_SAMPLES: &[&str] = &[
        r#"async fn complex_tool(initial_arg: String, replicas: Option<u32>) -> Result<String, SagaError> {
    let target: Target = elicit("Please provide the deployment target:").await?;
    let verdict = sample(format!(
        "Is deploying to '{}' safe right now?",
        target.target
    ))
    .max_tokens(100)
    .await?;
    if !verdict.text().starts_with("Yes") {
        return Ok("Deployment postponed.".into());
    }
    Ok(format!(
        "Deployment to {} initiated successfully based on confirmation.",
        target.target
    ))
}"#,
        r#"async fn looper(n: u32, items: Vec<String>) -> Result<String, SagaError> {
    let mut names = Vec::new();
    let mut i = 0;
    while i < n {
        let name: String = elicit(format!("name #{i}?")).await?;
        if name == "stop" {
            break;
        }
        names.push(name);
        i += 1;
    }
    'outer: for item in items {
        for round in 0..2 {
            let ok: bool = elicit(format!("keep {item} ({round})?")).await?;
            if !ok {
                continue 'outer;
            }
        }
        names.push(item);
    }
    let total = match names.len() {
        0 => {
            checkpoint().await;
            0
        }
        k => {
            let v = sample(format!("{k} names")).await?;
            v.text().len()
        }
    };
    let (a, b) = join!(elicit::<i64>("a?").key("a"), elicit::<i64>("b?"));
    Ok(format!("{names:?} {total} {}", a? + b?))
}"#,
    ];
}
