//! One loop drives every call (`engine/runner/drive.rs`): read from the sources, no other
//! file runs a saga's transition, and no loop in the serving layer or the tasks goes on
//! from one round's state to the next. A rule that holds for every call (a bound, who is
//! blamed for a state that outgrew the token, a retry) is then written once, in the
//! drive or a policy it calls, and cannot be forgotten by a second loop.
//!
//! The sources are read as tokens, macro bodies included (a `tokio::select!` arm is code
//! like any other).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use proc_macro2::{Delimiter, TokenStream, TokenTree};

mod support;
use support::{crate_dir, rust_files};

/// The files allowed to run a transition: the drive, and the tool family that hands a
/// token to the build that has its point.
const RUNS_A_TRANSITION: &[&str] = &["engine/runner/drive.rs", "engine/runner/family.rs"];

/// The arguments of a saga's transition, `DynTool::run(codec, call, cx, per_call)`: what
/// the checks below recognize a transition by. `the_transition_takes_what_the_checks_count`
/// reads it off the trait, so that a new parameter cannot make the checks blind.
const TRANSITION_ARGUMENTS: usize = 4;

#[test]
fn the_transition_takes_what_the_checks_count() {
    let family = source_dir().join("engine/runner/family.rs");
    let tokens = tokens_of(&family);
    let mut signatures = Vec::new();
    walk(&tokens, &mut |trees| {
        for at in 0..trees.len() {
            if let Some(parameters) = function_group(trees, at, "run", Delimiter::Parenthesis) {
                // Less the receiver, `&'a self`.
                signatures.push(top_level_arguments(parameters.stream()) - 1);
            }
        }
    });
    assert!(
        !signatures.is_empty(),
        "`DynTool::run` not found in family.rs"
    );
    assert!(
        signatures
            .iter()
            .all(|&count| count == TRANSITION_ARGUMENTS),
        "`DynTool::run` takes {signatures:?} arguments: set TRANSITION_ARGUMENTS to match"
    );
}

#[test]
fn only_the_drive_runs_a_transition() {
    let src = source_dir();
    let mut found = Vec::new();
    for file in rust_files(&src) {
        let name = relative(&src, &file);
        if RUNS_A_TRANSITION.contains(&name.as_str()) {
            continue;
        }
        let tokens = tokens_of(&file);
        walk(&tokens, &mut |trees| {
            // `.run(codec, call, cx, per_call)`: a saga's transition (`DynTool::run`), whatever the
            // receiver is called.
            for window in trees.windows(3) {
                if let [
                    TokenTree::Punct(dot),
                    TokenTree::Ident(run),
                    TokenTree::Group(arguments),
                ] = window
                    && dot.as_char() == '.'
                    && run == "run"
                    && arguments.delimiter() == Delimiter::Parenthesis
                    && top_level_arguments(arguments.stream()) == TRANSITION_ARGUMENTS
                {
                    found.push(format!("{name}:{}", run.span().start().line));
                }
            }
        });
    }
    assert!(
        found.is_empty(),
        "a saga's transition run outside the drive (drive the call with \
         `engine::runner::drive::drive` and a policy instead):\n{}",
        found.join("\n")
    );
}

#[test]
fn no_loop_in_serve_or_tasks_goes_on_from_a_rounds_state() {
    let src = source_dir();
    let mut found = Vec::new();
    for folder in ["serve", "tasks"] {
        for file in rust_files(&src.join(folder)) {
            let name = relative(&src, &file);
            let tokens = tokens_of(&file);
            walk(&tokens, &mut |trees| {
                for (at, tree) in trees.iter().enumerate() {
                    let TokenTree::Ident(keyword) = tree else {
                        continue;
                    };
                    if !["loop", "while", "for"].iter().any(|k| keyword == k) {
                        continue;
                    }
                    let Some(brace) = trees[at + 1..].iter().position(|tree| {
                        matches!(tree, TokenTree::Group(group) if group.delimiter() == Delimiter::Brace)
                    }) else {
                        continue;
                    };
                    let head = &trees[at + 1..at + 1 + brace];
                    // `impl Trait for Type {`, not a loop: a `for` loop has its `in`.
                    if keyword == "for"
                        && !head
                            .iter()
                            .any(|tree| matches!(tree, TokenTree::Ident(ident) if ident == "in"))
                    {
                        continue;
                    }
                    let TokenTree::Group(body) = &trees[at + 1 + brace] else {
                        continue;
                    };
                    let body = body.stream();
                    if goes_on_from_a_round(&body) {
                        found.push(format!("{name}:{}", keyword.span().start().line));
                    }
                }
            });
        }
    }
    assert!(
        found.is_empty(),
        "a loop that goes on from a round's state outside the drive (give the drive a \
         policy instead):\n{}",
        found.join("\n")
    );
}

/// The check above, tried on code that has such a loop: it must be seen.
#[test]
fn the_checks_see_a_second_loop() {
    let second = TokenStream::from_str(
        "loop { let response = saga.run(codec, call.clone(), cx, &per_call).await?; \
         let CallToolResponse::InputRequired(next) = response else { return }; \
         call.request_state = next.request_state; }",
    )
    .expect("tokens");
    let mut loops = 0;
    let mut runs = 0;
    walk(&second, &mut |trees| {
        for (at, tree) in trees.iter().enumerate() {
            if let TokenTree::Ident(keyword) = tree
                && keyword == "loop"
                && let Some(TokenTree::Group(body)) = trees.get(at + 1)
                && goes_on_from_a_round(&body.stream())
            {
                loops += 1;
            }
            if let TokenTree::Group(arguments) = tree
                && top_level_arguments(arguments.stream()) == TRANSITION_ARGUMENTS
            {
                runs += 1;
            }
        }
    });
    assert_eq!((loops, runs), (1, 1));
    // A comparison is not an assignment; a copy of a state that is no round's is not a
    // round gone on from.
    let compared = TokenStream::from_str(
        "loop { if let InputRequired(r) = x { if call.request_state == None {} } }",
    )
    .unwrap();
    assert!(!goes_on_from_a_round(&compared));
    let copied =
        TokenStream::from_str("{ params.request_state = context.request_state; }").unwrap();
    assert!(!goes_on_from_a_round(&copied));
}

/// What a POST is (its wire format, the direct path's claim of it, read in one pass, the
/// JSON check, the direct path's resumption) is decided in one function of the guard,
/// `Guard::posted`: no other code of the HTTP path reads the format or tries the direct
/// path again.
const DECIDES_A_POST: &[&str] = &["from_headers", "claim", "read_resumption", "check_json"];

#[test]
fn an_http_post_is_decided_in_one_function() {
    let src = source_dir();
    let mut outside = Vec::new();
    let mut inside = Vec::new();
    for file in rust_files(&src.join("serve/http")) {
        let name = relative(&src, &file);
        let tokens = tokens_of(&file);
        walk(&tokens, &mut |trees| {
            for at in 0..trees.len() {
                // A function's body is read apart: the one named `posted` is the decision.
                if let Some(body) = function_group(trees, at, "posted", Delimiter::Brace) {
                    inside.extend(decisions(&body.stream(), &name));
                }
            }
        });
        outside.extend(decisions(&tokens, &name));
    }
    // Every decision the file makes, less those inside `posted` (walked twice: once in
    // the file, once in the function).
    for made in &inside {
        if let Some(at) = outside.iter().position(|other| other == made) {
            outside.remove(at);
        }
    }
    assert_eq!(
        inside.len(),
        DECIDES_A_POST.len(),
        "`Guard::posted` makes each decision once: {inside:?}"
    );
    assert!(
        outside.is_empty(),
        "a POST decided outside `Guard::posted` (decide it there, once):\n{}",
        outside.join("\n")
    );
}

/// The calls of [`DECIDES_A_POST`] in `stream` (any depth), as `file:line name`; a
/// function's own definition (`fn claim`) is not a call.
fn decisions(stream: &TokenStream, file: &str) -> Vec<String> {
    let mut found = Vec::new();
    walk(stream, &mut |trees| {
        for (at, tree) in trees.iter().enumerate() {
            if let TokenTree::Ident(name) = tree
                && DECIDES_A_POST.iter().any(|decision| name == decision)
                && matches!(trees.get(at + 1), Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Parenthesis)
                && !matches!(at.checked_sub(1).map(|before| &trees[before]), Some(TokenTree::Ident(keyword)) if keyword == "fn")
            {
                found.push(format!("{file}:{} {name}", name.span().start().line));
            }
        }
    });
    found
}

/// Whether `body` (any depth) reads a round's `InputRequired` response and assigns
/// `… .request_state = …`: it goes on from the round's state.
fn goes_on_from_a_round(body: &TokenStream) -> bool {
    let mut assigns = false;
    let mut reads_a_round = false;
    walk(body, &mut |trees| {
        for window in trees.windows(4) {
            if let [
                TokenTree::Punct(dot),
                TokenTree::Ident(field),
                TokenTree::Punct(equals),
                next,
            ] = window
                && dot.as_char() == '.'
                && field == "request_state"
                && equals.as_char() == '='
                && !matches!(next, TokenTree::Punct(p) if p.as_char() == '=')
            {
                assigns = true;
            }
        }
        reads_a_round |= trees
            .iter()
            .any(|tree| matches!(tree, TokenTree::Ident(ident) if ident == "InputRequired"));
    });
    assigns && reads_a_round
}

/// When `trees[at]` begins `fn name`, the function's first group delimited by
/// `delimiter`: its parameters (`Parenthesis`) or its body (`Brace`).
fn function_group<'t>(
    trees: &'t [TokenTree],
    at: usize,
    name: &str,
    delimiter: Delimiter,
) -> Option<&'t proc_macro2::Group> {
    let (TokenTree::Ident(keyword), Some(TokenTree::Ident(function))) =
        (trees.get(at)?, trees.get(at + 1))
    else {
        return None;
    };
    if keyword != "fn" || function != name {
        return None;
    }
    trees[at + 2..].iter().find_map(|tree| match tree {
        TokenTree::Group(group) if group.delimiter() == delimiter => Some(group),
        _ => None,
    })
}

/// How many comma-separated arguments a parenthesised group holds at its top level.
fn top_level_arguments(stream: TokenStream) -> usize {
    let trees: Vec<TokenTree> = stream.into_iter().collect();
    if trees.is_empty() {
        return 0;
    }
    let commas = trees
        .iter()
        .filter(|tree| matches!(tree, TokenTree::Punct(p) if p.as_char() == ','))
        .count();
    let trailing = matches!(trees.last(), Some(TokenTree::Punct(p)) if p.as_char() == ',');
    commas + 1 - usize::from(trailing)
}

/// Calls `visit` with the trees of `stream` and of every group in it, at every depth.
fn walk(stream: &TokenStream, visit: &mut dyn FnMut(&[TokenTree])) {
    let trees: Vec<TokenTree> = stream.clone().into_iter().collect();
    visit(&trees);
    for tree in &trees {
        if let TokenTree::Group(group) = tree {
            walk(&group.stream(), visit);
        }
    }
}

fn tokens_of(file: &Path) -> TokenStream {
    let text = std::fs::read_to_string(file).expect("a source file");
    // Unit tests are clients of their file: left out, as the layers' check does.
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => &text,
    };
    TokenStream::from_str(text).unwrap_or_else(|error| panic!("{}: {error}", file.display()))
}

fn source_dir() -> PathBuf {
    crate_dir("saga-runtime").join("src")
}

fn relative(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .expect("under the root")
        .to_string_lossy()
        .replace('\\', "/")
}
