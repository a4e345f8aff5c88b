//! The examples' diagrams (`SagaTool::diagram`, issue 26) against their snapshots in
//! `tests/diagrams/examples/`, each suspension point exactly once; the diagram in
//! `tools/list`'s `_meta` next to a declared `meta`; and a hand-written tool's default.

#![allow(deprecated)] // sampling: deprecated in 2026-07-28, still served

use saga_examples::harness::snapshots;

use saga_examples::deploy;
use saga_examples::migrate;
use saga_examples::weather;
use saga_runtime::engine::{DIAGRAM_META_KEY, SagaTool, diagram_of};
use saga_runtime::prelude::*;

fn check(tool: &impl SagaTool) {
    let name = tool.tool().name.to_string();
    snapshots::check("examples", &name, &tool.diagram(), tool.state_names());
}

#[test]
fn the_examples_diagrams_match_their_snapshots() {
    check(&deploy::complex_tool);
    check(&deploy::release);
    check(&weather::get_weather);
    check(&migrate::migrate);
    check(&migrate::approve_migration);
    check(&migrate::charge);
    check(&saga_examples::meeting::book_meeting);
}

#[test]
fn a_tools_description_carries_the_diagram() {
    let tool = deploy::complex_tool.tool();
    assert_eq!(
        diagram_of(&tool),
        Some(deploy::complex_tool.diagram().as_str())
    );
    let listed = serde_json::to_value(&tool).expect("serializes");
    assert_eq!(
        listed["_meta"][DIAGRAM_META_KEY],
        deploy::complex_tool.diagram()
    );
}

/// `meta = "…"` and the diagram share the tool's `_meta`.
#[saga_tool(meta = r#"{"team": "payments"}"#)]
async fn with_meta() -> Result<String, SagaError> {
    let name: String = elicit("Name?").key("name").await?;
    Ok(name)
}

#[test]
fn a_declared_meta_keeps_its_keys() {
    let tool = with_meta.tool();
    let meta = &tool.meta.as_ref().expect("a _meta").0;
    assert_eq!(meta["team"], "payments");
    assert_eq!(meta[DIAGRAM_META_KEY], with_meta.diagram());
    assert!(
        with_meta
            .diagram()
            .contains("AfterElicitName : key \"name\"")
    );
}

/// A helper's diagram is its own, reachable from a call of it; its callers name it.
#[saga_fn]
async fn confirm(what: &str) -> Result<bool, SagaError> {
    elicit::<bool>(format!("Delete {what}?")).await
}

#[saga_tool]
async fn cleanup(paths: Vec<String>) -> Result<String, SagaError> {
    let mut removed = Vec::new();
    for p in &paths {
        if confirm(p).await? {
            removed.push(p.clone());
        }
    }
    Ok(removed.join(", "))
}

#[test]
fn a_helper_has_its_own_diagram() {
    let helper = confirm("").diagram();
    assert!(helper.starts_with("stateDiagram-v2\n"), "{helper}");
    assert!(helper.contains("#[saga_fn] confirm(what)"), "{helper}");
    assert!(helper.contains("elicit bool"), "{helper}");
    let caller = cleanup.diagram();
    assert!(
        caller.contains("helper confirm: see its own diagram"),
        "{caller}"
    );
    snapshots::check("examples", "cleanup", &caller, cleanup.state_names());
    snapshots::check("examples", "confirm", helper, &["AfterElicit"]);
}

/// The deploy example written by hand: the default diagram, its start alone.
#[test]
fn a_hand_written_tool_has_a_minimal_diagram() {
    let diagram = saga_examples::deploy_by_hand::ComplexToolByHand.diagram();
    assert!(diagram.starts_with("stateDiagram-v2\n"), "{diagram}");
    assert!(diagram.contains("written by hand"), "{diagram}");
    assert_eq!(
        diagram_of(&saga_examples::deploy_by_hand::ComplexToolByHand.tool()),
        None
    );
}

/// An ordinary async fn: awaited in place, it never suspends.
async fn import_batch(batch: u32) -> u32 {
    batch * 10
}

/// A helper that asks: a suspension with a diagram of its own.
#[saga_fn]
async fn confirm_batch(batch: u32) -> Result<bool, SagaError> {
    elicit::<bool>(format!("Keep batch {batch}?")).await
}

/// Imports two batches, confirming each with a helper.
#[saga_tool]
async fn import_two() -> Result<String, SagaError> {
    let first = import_batch(1).await;
    let kept = confirm_batch(first).await?;
    let second = import_batch(2).await;
    Ok(format!("{first} {second} {kept}"))
}

/// Point 4 of "a newcomer's second hour": `saga graph` drew a plain `async fn`'s call as
/// a helper's suspension ("helper import_batch: see its own diagram"), although no such
/// point or diagram exists. The diagram a client reads draws only the `#[saga_fn]`'s.
#[test]
fn a_plain_async_fns_call_is_no_suspension_in_the_listed_diagram() {
    let tools = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .tool(import_two)
        .diagrams_in_tool_list(true)
        .build()
        .expect("the tools build");
    let tool = tools.get("import_two").expect("listed");
    let listed = diagram_of(tool).expect("a diagram");
    assert!(!listed.contains("helper import_batch"), "{listed}");
    assert!(!listed.contains("import_batch(1).await"), "{listed}");
    assert!(
        listed.contains("helper confirm_batch: see its own diagram"),
        "{listed}"
    );
    // Every state left is a point the tool has (or the diagram's start and ends), and
    // the flow still reaches the end.
    assert!(listed.contains("[*] -->"), "{listed}");
    assert!(listed.contains("--> [*]"), "{listed}");
    let points: Vec<String> = saga_runtime::deploy::LayoutFile::of(&tools)
        .entries
        .into_iter()
        .filter(|entry| entry.tool == "import_two")
        .map(|entry| entry.point)
        .collect();
    for line in listed.lines().skip(1) {
        let id = line.trim().split([' ', ':']).next().unwrap_or_default();
        let own = ["Start", "Done", "Failed"].contains(&id);
        if !own && !line.contains("-->") && !line.contains("<<choice>>") {
            assert!(
                points.iter().any(|point| point == id),
                "{id} is no point: {listed}"
            );
        }
    }
}

/// An example's `--graph TOOL` (what `saga graph --example NAME TOOL` runs) prints the
/// diagram whether its server lists diagrams in `tools/list` or not: the weather example
/// does not list them, the deploy example does.
#[test]
fn an_examples_graph_needs_no_listed_diagram() {
    let weather = saga_examples::weather::server(KeyRing::ephemeral()).expect("builds");
    let listed =
        serde_json::to_value(weather.tools().get("get_weather").expect("listed")).expect("json");
    assert!(listed["_meta"].get(DIAGRAM_META_KEY).is_none(), "{listed}");
    let printed = saga_examples::cli::diagram(&weather, "get_weather").expect("a diagram");
    assert_eq!(printed, weather::get_weather.diagram());
    let deploy = saga_examples::deploy::server(KeyRing::ephemeral()).expect("builds");
    assert_eq!(
        saga_examples::cli::diagram(&deploy, "complex_tool").expect("a diagram"),
        diagram_of(deploy.tools().get("complex_tool").expect("listed")).expect("listed")
    );
}
