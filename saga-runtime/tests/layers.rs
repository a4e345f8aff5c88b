//! The crates' structure, read from their sources: the runtime's layers only point down
//! (`state` ← `engine` ← `tasks` ← `serve`), and no two files import each other, directly
//! or through others. A newcomer then finds where a change goes by its layer, and a
//! file can be read knowing only the files below it.
//!
//! Inside the runtime, the engine's groups (its folders) are layers of their own, and no
//! file of the engine names an item through a file that does not define it. The CLI's
//! files are checked the same way.
//!
//! Every path a file names (`use` trees, paths in code and in macro calls such as a
//! `kinds!` table; `crate::`, `self::`, `super::` and a child module's name alike) is
//! resolved to the file that defines the item, following `use` re-exports through
//! `mod.rs` facades. A facade's own `pub use` is structure, not a dependency, so it draws
//! no edge. Unit-test modules (`#[cfg(test)] mod …`) are left out: a test is a client of
//! its file, and may build its inputs with what sits above it.
//!
//! `cargo test -p saga-runtime --test layers -- --nocapture` prints the graph's figures.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use syn::visit::Visit;

mod support;
use support::{crate_dir, rust_files};

/// The runtime's layers, lowest first. A file may use its own layer and those below.
/// `log` is a leaf every layer may use; `otel` (trace context and spans) knows nothing of
/// the engine, which calls it; `metrics` is the engine's instrumentation;
/// `deploy` and `testing` sit on the server; the crate root re-exports everything.
const LAYERS: &[(&str, &[&str])] = &[
    ("state", &["state", "log", "net", "otel"]),
    ("engine", &["engine", "metrics"]),
    ("tasks", &["tasks"]),
    ("serve", &["serve"]),
    ("tools around the server", &["deploy", "testing", "guide"]),
];

#[test]
fn runtime_layers_only_point_down() {
    let graph = Graph::read(&crate_dir("saga-runtime"));
    let layer_of = |file: &Module| -> usize {
        let top = file.path.first().map(String::as_str).unwrap_or("");
        if top.is_empty() {
            return LAYERS.len();
        }
        LAYERS
            .iter()
            .position(|(_, tops)| tops.contains(&top))
            .unwrap_or_else(|| panic!("`{top}` has no layer: add it to LAYERS in {}", file!()))
    };
    let mut upward = Vec::new();
    for (from, targets) in &graph.edges {
        for (to, at) in targets {
            let (low, high) = (layer_of(&graph.modules[to]), layer_of(&graph.modules[from]));
            if low > high {
                // The crate root (a re-export in lib.rs) is above every layer: a file that
                // names a path through it is told so, not a panic of this test.
                let name =
                    |layer: usize| LAYERS.get(layer).map_or("the crate root", |(name, _)| name);
                upward.push(format!(
                    "{} (layer `{}`) uses {} (layer `{}`): {at}",
                    graph.modules[from].file,
                    name(high),
                    graph.modules[to].file,
                    name(low),
                ));
            }
        }
    }
    graph.print("saga-runtime");
    assert!(
        upward.is_empty(),
        "uses that point up a layer (move what crosses to the layer that owns it):\n{}",
        upward.join("\n")
    );
}

/// The engine's groups, lowest first: a file may use its own group and those below. Each
/// group's `mod.rs` says what it owns and what it may use.
const ENGINE_GROUPS: &[&str] = &[
    "identity", "forms", "caller", "kinds", "round", "asks", "contract", "expand", "runner",
];

#[test]
fn the_engines_groups_only_point_down() {
    let graph = Graph::read(&crate_dir("saga-runtime"));
    let group_of = |path: &[String]| -> Option<usize> {
        if path.first().map(String::as_str) != Some("engine") || path.len() < 2 {
            return None;
        }
        // A kind is one folder: its `ask` file is its public side, above the round, in
        // the `asks` layer; the rest of the folder (its protocol) is in `kinds`.
        if path[1] == "kinds" && path.get(3).map(String::as_str) == Some("ask") {
            return ENGINE_GROUPS.iter().position(|group| *group == "asks");
        }
        Some(
            ENGINE_GROUPS
                .iter()
                .position(|group| *group == path[1])
                .unwrap_or_else(|| {
                    panic!("`engine/{}` has no group: add it to ENGINE_GROUPS", path[1])
                }),
        )
    };
    let mut upward = Vec::new();
    let mut arrows = 0;
    let mut files: BTreeMap<&str, usize> = BTreeMap::new();
    for module in graph.modules.values() {
        if let Some(group) = group_of(&module.path) {
            *files.entry(ENGINE_GROUPS[group]).or_default() += 1;
        }
    }
    for (from, targets) in &graph.edges {
        let Some(high) = group_of(from) else { continue };
        for (to, at) in targets {
            if to.len() == 1 && to[0] == "engine" {
                // The engine's facade re-exports every group, some of it by glob (the
                // prelude), which the reader cannot follow: a name reached through it
                // could come from any group.
                upward.push(format!(
                    "{} (group `{}`) names an item through the engine's facade: {at}",
                    graph.modules[from].file, ENGINE_GROUPS[high],
                ));
                continue;
            }
            let Some(low) = group_of(to) else { continue };
            arrows += 1;
            if low > high {
                upward.push(format!(
                    "{} (group `{}`) uses {} (group `{}`): {at}",
                    graph.modules[from].file,
                    ENGINE_GROUPS[high],
                    graph.modules[to].file,
                    ENGINE_GROUPS[low],
                ));
            }
        }
    }
    println!("engine: files per group: {files:?}");
    println!(
        "engine: {arrows} import arrows between its files, {} up a group",
        upward.len()
    );
    assert!(
        upward.is_empty(),
        "uses that point up a group of the engine (move what crosses to the group that \
         owns it):\n{}",
        upward.join("\n")
    );
}

/// The serving layer's groups, lowest first, by the name under `serve/` (a file or a
/// folder): a file may use its own group and those below. A request comes in at the top
/// (a transport), becomes a call, is routed once and run; nothing below a transport
/// knows HTTP's types beyond the head it reads (`head.rs`).
const SERVE_GROUPS: &[(&str, &[&str])] = &[
    (
        "ground: who calls, what is in flight, the bounds",
        &[
            "principal",
            "in_flight",
            "json_check",
            "limits",
            "tries",
            "forwarded",
            "error",
            "sse",
            "param_headers",
        ],
    ),
    ("the wire formats' translations", &["wire"]),
    ("authorization", &["auth"]),
    ("a request's head", &["head"]),
    ("the registry", &["tools"]),
    (
        "the route and its runs",
        &[
            "route",
            "replay",
            "stateless",
            "session",
            "streamed",
            "catalog",
            "saga_calls",
            "shutdown",
        ],
    ),
    ("the rmcp handler and its builder", &["server", "builder"]),
    ("the transports", &["http", "stdio"]),
];

#[test]
fn the_serving_layers_groups_only_point_down() {
    let graph = Graph::read(&crate_dir("saga-runtime"));
    let group_of = |path: &[String]| -> Option<usize> {
        if path.first().map(String::as_str) != Some("serve") || path.len() < 2 {
            return None;
        }
        Some(
            SERVE_GROUPS
                .iter()
                .position(|(_, names)| names.contains(&path[1].as_str()))
                .unwrap_or_else(|| {
                    panic!("`serve/{}` has no group: add it to SERVE_GROUPS", path[1])
                }),
        )
    };
    let mut upward = Vec::new();
    let mut arrows = 0;
    for (from, targets) in &graph.edges {
        let Some(high) = group_of(from) else { continue };
        for (to, at) in targets {
            let Some(low) = group_of(to) else { continue };
            arrows += 1;
            if low > high {
                upward.push(format!(
                    "{} ({}) uses {} ({}): {at}",
                    graph.modules[from].file,
                    SERVE_GROUPS[high].0,
                    graph.modules[to].file,
                    SERVE_GROUPS[low].0,
                ));
            }
        }
    }
    println!(
        "serve: {arrows} import arrows between its files, {} up a group",
        upward.len()
    );
    assert!(
        upward.is_empty(),
        "uses that point up a group of the serving layer (move what crosses to the group \
         that owns it):\n{}",
        upward.join("\n")
    );
}

#[test]
fn no_engine_file_imports_a_name_through_a_file_that_does_not_define_it() {
    imports_from_the_defining_file("engine");
}

#[test]
fn no_serving_file_imports_a_name_through_a_file_that_does_not_define_it() {
    imports_from_the_defining_file("serve");
}

/// Inside `layer`, each name a file names (of the same layer) comes from the file that
/// defines it, not through a facade that passes it on.
fn imports_from_the_defining_file(layer: &str) {
    let graph = Graph::read(&crate_dir("saga-runtime"));
    let mut through = Vec::new();
    for module in graph.modules.values() {
        if module.path.first().map(String::as_str) != Some(layer) || module.path.len() < 2 {
            continue;
        }
        // Another layer's facade (`crate::state::…`) is that layer's interface to this
        // one; inside the layer, each name comes from its file.
        for (named, line) in &module.named {
            if named.first().map(String::as_str) != Some(layer) {
                continue;
            }
            if let Some(passer) = passed_through(&graph.modules, named) {
                through.push(format!(
                    "{}:{line} `{}` passes through {}",
                    module.file,
                    named.join("::"),
                    graph.modules[&passer].file
                ));
            }
        }
    }
    assert!(
        through.is_empty(),
        "names imported through a file that only passes them on (import each from the \
         file that defines it):\n{}",
        through.join("\n")
    );
}

/// Where a type's inherent `impl` may live besides the file that defines the type. The
/// layers only point down, so a method that needs a file above the type's own cannot be
/// written beside the type: it lives in the file that has what it needs. Each such place
/// is one of three kinds, and nothing else is allowed:
///
/// - **a member of an open set** adds its own entry to a shared type, so that adding a
///   request kind, a store or a transport is one file: `Answers::form` in the form
///   kind's folder, `TaskStore::sqlite` in the SQLite store, `SagaServer::serve_stdio`
///   in stdio.rs;
/// - **a door**: the public entry points of one way into the registry (rmcp's
///   `tools/call` and a transport of your own in route.rs; prompts and resources in
///   catalog.rs), in the file that serves that way in, which runs sagas through the
///   route and so sits above the registry's file;
/// - **a builder's constructor** (`SagaServer::builder`), in the builder's file: the
///   builder builds the type, so the type's file cannot name the builder.
const IMPLS_AWAY_FROM_THEIR_TYPE: &[(&str, &str)] = &[
    // Members of open sets: request kinds, the elicitation outcome, stores, transports.
    ("Answers", "engine/asks/outcome.rs"),
    ("Answers", "engine/kinds/form/ask.rs"),
    ("Answers", "engine/kinds/roots/ask.rs"),
    ("Answers", "engine/kinds/sample/ask.rs"),
    ("Answers", "engine/kinds/tool_sample/ask.rs"),
    ("Answers", "engine/kinds/url/ask.rs"),
    ("SagaContext", "engine/kinds/form/protocol.rs"),
    ("SagaContext", "engine/kinds/roots/protocol.rs"),
    ("SagaContext", "engine/kinds/sample/protocol.rs"),
    ("SagaContext", "engine/kinds/tool_sample/protocol.rs"),
    ("SagaContext", "engine/kinds/url/protocol.rs"),
    ("Sample", "engine/kinds/tool_sample/ask.rs"),
    ("ElicitForm", "engine/asks/outcome.rs"),
    ("ElicitUrl", "engine/asks/outcome.rs"),
    ("TaskStore", "tasks/memory.rs"),
    ("TaskStore", "tasks/postgres.rs"),
    ("TaskStore", "tasks/redis.rs"),
    ("TaskStore", "tasks/sqlite.rs"),
    ("SagaServer", "serve/stdio.rs"),
    ("SagaServer", "serve/http/transport.rs"),
    // Members of a layer above the type's: a tool's points are traced from the
    // contract, and a task's worker runs on the tasks' host.
    ("Points", "engine/contract/tool.rs"),
    ("Tasks", "tasks/worker.rs"),
    // Doors.
    ("SagaTools", "serve/route.rs"),
    ("SagaTools", "serve/catalog.rs"),
    // Builders' constructors.
    ("SagaTools", "serve/builder.rs"),
    ("SagaServer", "serve/builder.rs"),
];

#[test]
fn a_types_impl_lives_in_its_file_or_where_the_layers_require() {
    let src = crate_dir("saga-runtime").join("src");
    let mut defined: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut impls: BTreeSet<(String, String)> = BTreeSet::new();
    for file in rust_files(&src) {
        let name = file
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(&file).expect("a source file");
        let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut items: Vec<&syn::Item> = parsed.items.iter().collect();
        while let Some(item) = items.pop() {
            match item {
                syn::Item::Struct(item) => {
                    defined
                        .entry(item.ident.to_string())
                        .or_default()
                        .insert(name.clone());
                }
                syn::Item::Enum(item) => {
                    defined
                        .entry(item.ident.to_string())
                        .or_default()
                        .insert(name.clone());
                }
                // A type a macro of the file defines (a registration table's enum).
                syn::Item::Macro(item) => {
                    let mut streams = vec![item.mac.tokens.clone()];
                    while let Some(stream) = streams.pop() {
                        let trees: Vec<_> = stream.into_iter().collect();
                        for pair in trees.windows(2) {
                            if let [
                                proc_macro2::TokenTree::Ident(keyword),
                                proc_macro2::TokenTree::Ident(ty),
                            ] = pair
                                && (keyword == "enum" || keyword == "struct")
                            {
                                defined
                                    .entry(ty.to_string())
                                    .or_default()
                                    .insert(name.clone());
                            }
                        }
                        streams.extend(trees.into_iter().filter_map(|tree| match tree {
                            proc_macro2::TokenTree::Group(group) => Some(group.stream()),
                            _ => None,
                        }));
                    }
                }
                syn::Item::Impl(item) if item.trait_.is_none() => {
                    if let syn::Type::Path(path) = &*item.self_ty
                        && let Some(last) = path.path.segments.last()
                    {
                        impls.insert((last.ident.to_string(), name.clone()));
                    }
                }
                // Inline modules, but not unit tests: a test is a client of its file.
                syn::Item::Mod(module)
                    if !module.attrs.iter().any(|attr| {
                        attr.path().is_ident("cfg")
                            && attr
                                .parse_args::<syn::Ident>()
                                .is_ok_and(|flag| flag == "test")
                    }) =>
                {
                    if let Some((_, inner)) = &module.content {
                        items.extend(inner.iter());
                    }
                }
                _ => {}
            }
        }
    }
    let mut away = Vec::new();
    for (ty, file) in &impls {
        let Some(files) = defined.get(ty) else {
            continue; // a type of another crate's (an extension trait's receiver)
        };
        if !files.contains(file)
            && !IMPLS_AWAY_FROM_THEIR_TYPE.contains(&(ty.as_str(), file.as_str()))
        {
            away.push(format!("impl {ty} in {file} (defined in {files:?})"));
        }
    }
    assert!(
        away.is_empty(),
        "an impl away from its type's file (write it beside the type; if the layers keep it \
         apart, it is a member of an open set, a door or a builder's constructor: add it to \
         IMPLS_AWAY_FROM_THEIR_TYPE with why):\n{}",
        away.join("\n")
    );
    // Each entry of the list is still true: a moved impl takes its entry with it.
    let stale: Vec<_> = IMPLS_AWAY_FROM_THEIR_TYPE
        .iter()
        .filter(|(ty, file)| !impls.contains(&((*ty).to_owned(), (*file).to_owned())))
        .collect();
    assert!(stale.is_empty(), "entries with no such impl: {stale:?}");
}

#[test]
fn no_import_cycle_between_the_clis_files() {
    let graph = Graph::read(&crate_dir("saga-cli"));
    graph.print("saga-cli");
    assert_no_cycle(&graph, "saga-cli");
}

#[test]
fn no_import_cycle_between_the_runtimes_files() {
    assert_no_cycle(&Graph::read(&crate_dir("saga-runtime")), "saga-runtime");
}

#[test]
fn no_import_cycle_between_the_wires_files() {
    let graph = Graph::read(&crate_dir("saga-wire"));
    graph.print("saga-wire");
    assert_no_cycle(&graph, "saga-wire");
}

#[test]
fn no_import_cycle_between_the_macros_files() {
    let graph = Graph::read(&crate_dir("saga-macros"));
    graph.print("saga-macros");
    assert_no_cycle(&graph, "saga-macros");
}

/// No cycle in `krate`'s graph: none is left for any crate, and no list of exceptions.
fn assert_no_cycle(graph: &Graph, krate: &str) {
    let cycles: Vec<String> = graph.cycles().into_iter().map(|(_, text)| text).collect();
    assert!(
        cycles.is_empty(),
        "files of {krate} that import each other:\n{}",
        cycles.join("\n")
    );
}

/// The `#[saga_tool]` compiler's stages, in the order they run: a stage's files use
/// their own stage's and earlier ones', never a later one's. `ir.rs` (the data the stages
/// hand on) and `mod.rs` (which runs them in order) stand outside.
const MACRO_STAGES: &[&str] = &["parse", "check", "lower", "emit"];

#[test]
fn the_macros_stages_only_use_earlier_ones() {
    let graph = Graph::read(&crate_dir("saga-macros"));
    let stage_of = |path: &[String]| -> Option<usize> {
        if path.first().map(String::as_str) != Some("tool") || path.len() < 2 {
            return None;
        }
        MACRO_STAGES.iter().position(|stage| *stage == path[1])
    };
    let mut later = Vec::new();
    for (from, targets) in &graph.edges {
        let Some(user) = stage_of(from) else { continue };
        for (to, at) in targets {
            let Some(used) = stage_of(to) else { continue };
            if used > user {
                later.push(format!(
                    "{} (stage `{}`) uses {} (stage `{}`): {at}",
                    graph.modules[from].file,
                    MACRO_STAGES[user],
                    graph.modules[to].file,
                    MACRO_STAGES[used],
                ));
            }
        }
    }
    assert!(
        later.is_empty(),
        "a stage of the macro that uses a later one (move the code to the stage that \
         makes it):\n{}",
        later.join("\n")
    );
}

#[test]
fn the_macro_crate_never_names_the_runtimes_modules() {
    // The macros expand to `::saga_runtime::__private::…` only: any other path into the
    // runtime would tie the two crates' internals together.
    let mut stray = Vec::new();
    for file in rust_files(&crate_dir("saga-macros").join("src")) {
        let text = std::fs::read_to_string(&file).expect("readable source");
        for (number, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            let mut rest = line;
            while let Some(at) = rest.find("saga_runtime") {
                let after = &rest[at + "saga_runtime".len()..];
                let after = after.trim_start();
                let ok = !after.starts_with("::")
                    || after
                        .trim_start_matches("::")
                        .trim_start()
                        .starts_with("__private")
                    || after
                        .trim_start_matches("::")
                        .trim_start()
                        .starts_with("prelude")
                    || after
                        .trim_start_matches("::")
                        .trim_start()
                        .starts_with("join");
                if !ok {
                    stray.push(format!(
                        "{}:{}: {}",
                        file.display(),
                        number + 1,
                        line.trim()
                    ));
                }
                rest = &rest[at + "saga_runtime".len()..];
            }
        }
    }
    assert!(
        stray.is_empty(),
        "the macros name the runtime's modules:\n{}",
        stray.join("\n")
    );
}

/// One source file, as the module it defines.
struct Module {
    file: String,
    path: Vec<String>,
    lines: usize,
    /// Names this file brings into scope with `use`, to the absolute path they stand for.
    imports: BTreeMap<String, Vec<String>>,
    /// Absolute paths this file names, with the line, except its own facade re-exports.
    named: Vec<(Vec<String>, usize)>,
    /// Paths whose first name is not in scope by `use`: a child module's path
    /// (`form::FormKind` in `kinds/mod.rs`) when such a child exists, else another crate's.
    relative: Vec<(Vec<String>, usize)>,
}

struct Graph {
    modules: BTreeMap<Vec<String>, Module>,
    /// From a file to the files it uses, with where (`file:line`) it first does.
    edges: BTreeMap<Vec<String>, BTreeMap<Vec<String>, String>>,
}

impl Graph {
    fn read(crate_dir: &Path) -> Graph {
        let src = crate_dir.join("src");
        let mut modules = BTreeMap::new();
        for file in rust_files(&src) {
            let relative = file.strip_prefix(&src).expect("under src");
            let mut path: Vec<String> = relative
                .with_extension("")
                .iter()
                .map(|part| part.to_string_lossy().into_owned())
                .collect();
            if matches!(
                path.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                path.pop();
            }
            let text = std::fs::read_to_string(&file).expect("readable source");
            let syntax = syn::parse_file(&text)
                .unwrap_or_else(|error| panic!("{} does not parse: {error}", file.display()));
            let mut reader = Reader {
                here: path.clone(),
                inline: Vec::new(),
                imports: BTreeMap::new(),
                named: Vec::new(),
                relative: Vec::new(),
                in_pub_use: false,
                in_tests: 0,
                is_facade: relative.ends_with("mod.rs") || relative.ends_with("lib.rs"),
            };
            reader.visit_file(&syntax);
            let module = Module {
                file: format!(
                    "{}/src/{}",
                    crate_dir.file_name().expect("named").to_string_lossy(),
                    relative.display()
                ),
                path: path.clone(),
                lines: text.lines().count(),
                imports: reader.imports,
                named: reader.named,
                relative: reader.relative,
            };
            modules.insert(path, module);
        }
        let mut edges: BTreeMap<Vec<String>, BTreeMap<Vec<String>, String>> = BTreeMap::new();
        for module in modules.values() {
            let targets = edges.entry(module.path.clone()).or_default();
            let children = module.relative.iter().filter(|(path, _)| {
                modules.contains_key(&path[..(module.path.len() + 1).min(path.len())])
                    && path.len() > module.path.len()
            });
            for (named, line) in module.named.iter().chain(children) {
                let target = resolve(&modules, named, 0);
                if target != module.path {
                    targets.entry(target).or_insert_with(|| {
                        format!("{}:{line} `{}`", module.file, named.join("::"))
                    });
                }
            }
        }
        Graph { modules, edges }
    }

    /// Every strongly connected set of two or more files (Tarjan's algorithm), with one
    /// edge of each pair that closes it.
    fn cycles(&self) -> Vec<(Vec<String>, String)> {
        let names: Vec<&Vec<String>> = self.modules.keys().collect();
        let index_of: BTreeMap<&Vec<String>, usize> = names
            .iter()
            .enumerate()
            .map(|(i, name)| (*name, i))
            .collect();
        let successors: Vec<Vec<usize>> = names
            .iter()
            .map(|name| {
                self.edges.get(*name).map_or_else(Vec::new, |targets| {
                    targets
                        .keys()
                        .filter_map(|t| index_of.get(t).copied())
                        .collect()
                })
            })
            .collect();
        let components = strongly_connected(&successors);
        components
            .into_iter()
            .filter(|component| component.len() > 1)
            .map(|component| {
                let members: BTreeSet<usize> = component.iter().copied().collect();
                let files: Vec<String> = component
                    .iter()
                    .map(|&i| self.modules[names[i]].file.clone())
                    .collect();
                let mut lines = vec![format!(
                    "cycle: {}",
                    component
                        .iter()
                        .map(|&i| self.modules[names[i]].file.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )];
                for &from in &component {
                    for (to, at) in &self.edges[names[from]] {
                        if index_of.get(to).is_some_and(|i| members.contains(i)) {
                            lines.push(format!("  {at}"));
                        }
                    }
                }
                (files, lines.join("\n"))
            })
            .collect()
    }

    fn print(&self, name: &str) {
        let mut per_top: BTreeMap<String, usize> = BTreeMap::new();
        for module in self.modules.values() {
            let top = module
                .path
                .first()
                .cloned()
                .unwrap_or_else(|| "(root)".into());
            *per_top.entry(top).or_default() += 1;
        }
        println!("{name}: files per top module: {per_top:?}");
        let mut largest: Vec<_> = self.modules.values().map(|m| (m.lines, &m.file)).collect();
        largest.sort_by(|a, b| b.cmp(a));
        for (lines, file) in largest.iter().take(10) {
            println!("{name}: {lines:>5} {file}");
        }
        let cycles = self.cycles();
        println!("{name}: {} cycles", cycles.len());
        for (_, cycle) in cycles {
            println!("{cycle}");
        }
    }
}

/// What a file imports under a name, and the path resolved through it.
type Onward<'m> = Option<(&'m Vec<String>, Vec<String>)>;

/// The file holding the longest prefix of `path` that is a file, and, when that file
/// imports the next name, what it imports (`target`) with the rest of the path after it.
fn hop<'m>(
    modules: &'m BTreeMap<Vec<String>, Module>,
    path: &[String],
) -> (&'m Module, Onward<'m>) {
    let mut length = path.len();
    while length > 0 && !modules.contains_key(&path[..length]) {
        length -= 1;
    }
    let module = &modules[&path[..length].to_vec()];
    let onward = path
        .get(length)
        .and_then(|next| module.imports.get(next))
        .map(|target| {
            let mut onward = target.clone();
            onward.extend_from_slice(&path[length + 1..]);
            (target, onward)
        });
    (module, onward)
}

/// The file that defines what `path` names: the longest prefix that is a file, then
/// through a facade's `use` of the next name, a few hops at most.
fn resolve(modules: &BTreeMap<Vec<String>, Module>, path: &[String], hops: usize) -> Vec<String> {
    let (module, onward) = hop(modules, path);
    match onward {
        Some((_, through)) if hops < 8 && through != path => resolve(modules, &through, hops + 1),
        _ => module.path.clone(),
    }
}

/// The file `path` is resolved through by a `use` of another file's item: a file that
/// passes the name on without defining it.
fn passed_through(modules: &BTreeMap<Vec<String>, Module>, path: &[String]) -> Option<Vec<String>> {
    let (module, onward) = hop(modules, path);
    let (target, onward) = onward?;
    // A path that names a module imported as a whole (`use super::kinds;`, then
    // `kinds`) names that module, not an item passed on; a path through it to an item
    // (`kinds::Asked`) goes on to the file that defines the item.
    let the_module_itself = modules.contains_key(target) && onward.len() == target.len();
    (onward != path && !the_module_itself).then(|| module.path.clone())
}

fn strongly_connected(successors: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        successors: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        components: Vec<Vec<usize>>,
    }
    fn visit(state: &mut State<'_>, node: usize) {
        state.index[node] = Some(state.next);
        state.low[node] = state.next;
        state.next += 1;
        state.stack.push(node);
        state.on_stack[node] = true;
        for &next in &state.successors[node] {
            match state.index[next] {
                None => {
                    visit(state, next);
                    state.low[node] = state.low[node].min(state.low[next]);
                }
                Some(index) if state.on_stack[next] => {
                    state.low[node] = state.low[node].min(index);
                }
                Some(_) => {}
            }
        }
        if Some(state.low[node]) == state.index[node] {
            let mut component = Vec::new();
            while let Some(member) = state.stack.pop() {
                state.on_stack[member] = false;
                component.push(member);
                if member == node {
                    break;
                }
            }
            component.sort();
            state.components.push(component);
        }
    }
    let count = successors.len();
    let mut state = State {
        successors,
        index: vec![None; count],
        low: vec![0; count],
        on_stack: vec![false; count],
        stack: Vec::new(),
        next: 0,
        components: Vec::new(),
    };
    for node in 0..count {
        if state.index[node].is_none() {
            visit(&mut state, node);
        }
    }
    state.components
}

/// Collects the absolute paths one file names.
struct Reader {
    /// The file's module path.
    here: Vec<String>,
    /// Inline modules (`mod tests { … }`) around the current item.
    inline: Vec<String>,
    imports: BTreeMap<String, Vec<String>>,
    named: Vec<(Vec<String>, usize)>,
    relative: Vec<(Vec<String>, usize)>,
    in_pub_use: bool,
    is_facade: bool,
    /// How deep the reader is in `#[cfg(test)]` modules, whose paths are left out.
    in_tests: usize,
}

impl Reader {
    /// `crate::a`, `self::a`, `super::a` as an absolute path; `None` for other crates
    /// and for names in scope (those are found through `imports`).
    fn absolute(&self, segments: &[String]) -> Option<Vec<String>> {
        let mut scope: Vec<String> = self.here.iter().chain(&self.inline).cloned().collect();
        let mut rest = segments;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                scope.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    scope.pop();
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                // A name brought in by `use`, or a child module of this file.
                if let Some(target) = self.imports.get(first) {
                    let mut path = target.clone();
                    path.extend_from_slice(&rest[1..]);
                    return Some(path);
                }
                return None;
            }
            None => return None,
        }
        scope.extend_from_slice(rest);
        Some(scope)
    }

    fn name(&mut self, segments: Vec<String>, line: usize) {
        if self.in_tests > 0 {
            return;
        }
        if let Some(path) = self.absolute(&segments) {
            self.named.push((path, line));
        } else if segments.len() > 1 && self.inline.is_empty() {
            let mut path = self.here.clone();
            path.extend(segments);
            self.relative.push((path, line));
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.use_tree(prefix, &path.tree);
                prefix.pop();
            }
            syn::UseTree::Name(name) => self.use_leaf(prefix, &name.ident, &name.ident),
            syn::UseTree::Rename(rename) => self.use_leaf(prefix, &rename.ident, &rename.rename),
            syn::UseTree::Glob(glob) => {
                let line = glob.star_token.spans[0].start().line;
                if !(self.in_pub_use && self.is_facade) {
                    self.name(prefix.clone(), line);
                }
            }
            syn::UseTree::Group(group) => {
                for tree in &group.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }

    fn use_leaf(&mut self, prefix: &[String], ident: &syn::Ident, alias: &syn::Ident) {
        let mut segments = prefix.to_vec();
        if ident != "self" {
            segments.push(ident.to_string());
        }
        let line = ident.span().start().line;
        // A path that starts at neither `crate`, `self`, `super` nor a name in scope is
        // a child module's (`use form::FormKind;`) or another crate's: kept as a child's,
        // which resolves to this file when no such child exists.
        let child = || {
            let mut path: Vec<String> = self.here.iter().chain(&self.inline).cloned().collect();
            path.extend(segments.iter().cloned());
            path
        };
        if let Some(path) = self.absolute(&segments).or_else(|| Some(child())) {
            if self.inline.is_empty() {
                let alias = if ident == "self" {
                    segments.last().cloned().unwrap_or_default()
                } else {
                    alias.to_string()
                };
                self.imports.insert(alias, path.clone());
            }
            if !(self.in_pub_use && self.is_facade) && self.in_tests == 0 {
                self.named.push((path, line));
            }
        }
    }
}

impl Reader {
    /// Reads every `a::b…` path in a token stream, nested groups included, except the
    /// global ones (`::std::…`).
    fn token_paths(&mut self, tokens: proc_macro2::TokenStream) {
        use proc_macro2::TokenTree;
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let colons = |at: usize| {
            matches!(
                (tokens.get(at), tokens.get(at + 1)),
                (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                    if a.as_char() == ':' && b.as_char() == ':'
            )
        };
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(group) => {
                    self.token_paths(group.stream());
                    i += 1;
                }
                TokenTree::Ident(first) if !(i >= 2 && colons(i - 2)) => {
                    let mut segments = vec![first.to_string()];
                    let mut j = i + 1;
                    while colons(j) {
                        match tokens.get(j + 2) {
                            Some(TokenTree::Ident(next)) => {
                                segments.push(next.to_string());
                                j += 3;
                            }
                            _ => break,
                        }
                    }
                    if segments.len() > 1 {
                        self.name(segments, first.span().start().line);
                    }
                    i = j;
                }
                _ => i += 1,
            }
        }
    }
}

impl<'ast> Visit<'ast> for Reader {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.in_pub_use = !matches!(item.vis, syn::Visibility::Inherited);
        let mut prefix = Vec::new();
        if item.leading_colon.is_none() {
            self.use_tree(&mut prefix, &item.tree);
        }
        self.in_pub_use = false;
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if let Some((_, items)) = &item.content {
            let test = item.attrs.iter().any(|attr| {
                attr.path().is_ident("cfg")
                    && attr
                        .meta
                        .require_list()
                        .is_ok_and(|list| list.tokens.to_string() == "test")
            });
            self.in_tests += usize::from(test);
            self.inline.push(item.ident.to_string());
            for item in items {
                self.visit_item(item);
            }
            self.inline.pop();
            self.in_tests -= usize::from(test);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() && path.segments.len() > 1 {
            let segments: Vec<String> = path
                .segments
                .iter()
                .map(|segment| segment.ident.to_string())
                .collect();
            let line = path.segments[0].ident.span().start().line;
            self.name(segments, line);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // Paths inside macro calls are tokens, not syntax. Code that a `quote!` writes
        // names the user's crate, not this one; in every other macro (`format!`, a
        // `macro_rules!` table) a path is this crate's.
        let quoting = mac.path.segments.last().is_some_and(|last| {
            [
                "quote",
                "quote_spanned",
                "parse_quote",
                "parse_quote_spanned",
            ]
            .contains(&last.ident.to_string().as_str())
        });
        if !quoting {
            self.token_paths(mac.tokens.clone());
        }
        syn::visit::visit_macro(self, mac);
    }
}
