use std::collections::HashMap;

use saga_runtime::prelude::*;
use serde_json::json;

use crate::harness::{Script, accept, differential, prompt_of};

// Borrows recomputed after a restore (issue 95): the shapes a held-out set of tools
// wrote, each against the plain function, sealed and opened at every suspension.

const HARD: &[&str] = &["Capital of Mongolia?", "Boiling point of ethanol?"];
const EASY: &[&str] = &["Two plus two?"];

/// A loop over a constant chosen at run time, and over a constant named directly,
/// through `.iter()`.
#[saga_tool]
pub async fn quiz(hard: bool) -> Result<String, SagaError> {
    let bank: &[&str] = if hard { HARD } else { EASY };
    let mut answers = Vec::new();
    for q in bank.iter() {
        answers.push(elicit::<String>(*q).await?);
    }
    for q in HARD.iter() {
        answers.push(elicit::<String>(format!("again: {q}")).await?);
    }
    // The chosen reference itself, walked as it is.
    for (i, q) in bank.iter().enumerate() {
        answers.push(elicit::<String>(format!("{i}: {q}")).await?);
    }
    for q in bank {
        answers.push(elicit::<String>(format!("last: {q}")).await?);
    }
    Ok(answers.join("|"))
}

pub fn echo_script() -> Script {
    Script::new(|_key, request| accept(json!({"value": format!("<{}>", prompt_of(request))})))
}

#[tokio::test]
async fn a_loop_over_a_chosen_constants_iterator_resumes() {
    for hard in [true, false] {
        let outcome = differential(
            &quiz,
            plain!(plain::quiz),
            json!({"hard": hard}),
            echo_script,
        )
        .await;
        assert!(outcome.text().contains("<again: Boiling point of ethanol?>"));
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Table {
    pub name: String,
    pub dirty: bool,
    pub rows: u32,
}

/// A loop over a filtered iterator of borrowed items, its item kept across the
/// suspension.
#[saga_tool]
pub async fn vacuum(tables: Vec<Table>) -> Result<String, SagaError> {
    let mut done = Vec::new();
    for t in tables.iter().filter(|t| t.dirty) {
        if elicit::<bool>(format!("vacuum {}?", t.name)).await? {
            done.push(format!("{} ({} rows)", t.name, t.rows));
        }
    }
    Ok(done.join(", "))
}

pub fn yes_script() -> Script {
    Script::new(|_key, request| accept(json!({"value": !prompt_of(request).contains("skip")})))
}

fn tables() -> serde_json::Value {
    json!({"tables": [
        {"name": "a", "dirty": true, "rows": 1},
        {"name": "b", "dirty": false, "rows": 2},
        {"name": "skip_c", "dirty": true, "rows": 3},
        {"name": "d", "dirty": true, "rows": 4},
    ]})
}

#[tokio::test]
async fn a_loop_over_a_filtered_iterator_resumes_with_its_borrowed_item() {
    let outcome = differential(&vacuum, plain!(plain::vacuum), tables(), yes_script).await;
    assert_eq!(outcome.text(), "a (1 rows), d (4 rows)");
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Shard {
    pub id: u32,
    pub stale: bool,
}

const STEPS: &[(&str, u32)] = &[("plan", 1), ("apply", 2), ("verify", 3)];

/// `Vec<&T>` and `Vec<&str>` collected from iterator chains, kept across two
/// suspensions and passed to a `#[saga_fn]`.
#[saga_tool]
pub async fn reshard(shards: Vec<Shard>) -> Result<String, SagaError> {
    let picked: Vec<&Shard> = shards.iter().filter(|s| s.stale).collect();
    let labels: Vec<&str> = STEPS.iter().map(|(label, _)| *label).collect();
    let go = elicit::<bool>(format!("reshard {} of {}?", picked.len(), shards.len())).await?;
    if !go {
        return Ok("no".into());
    }
    let how = elicit::<String>(format!("steps {}?", labels.join("+"))).await?;
    let summary = describe(picked.len()).await?;
    let ids: Vec<String> = picked.iter().map(|s| s.id.to_string()).collect();
    Ok(format!("{how}: {} [{}] {summary}", labels.len(), ids.join(",")))
}

#[saga_fn]
async fn describe(n: usize) -> Result<String, SagaError> {
    let note = elicit::<String>(format!("note for {n}?")).await?;
    Ok(note)
}

#[tokio::test]
async fn vecs_of_borrows_are_recomputed_across_two_suspensions_and_a_helper() {
    let outcome = differential(
        &reshard,
        plain!(plain::reshard),
        json!({"shards": [
            {"id": 1, "stale": true}, {"id": 2, "stale": false}, {"id": 3, "stale": true},
        ]}),
        || Script::new(|_key, request| {
            let prompt = prompt_of(request);
            if prompt.starts_with("reshard") {
                accept(json!({"value": true}))
            } else {
                accept(json!({"value": format!("<{prompt}>")}))
            }
        }),
    )
    .await;
    assert_eq!(
        outcome.text(),
        "<steps plan+apply+verify?>: 3 [1,3] <note for 2?>"
    );
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Disruption {
    Cancelled { flight: String },
    Delayed { flight: String, minutes: u32 },
}

fn use_again(flight: &str) -> usize {
    flight.len()
}

/// Bindings through a tuple that a `match` on a borrow makes: a borrow and a literal.
#[saga_tool]
pub async fn rebook(disruption: Disruption) -> Result<String, SagaError> {
    let (hit, why) = match &disruption {
        Disruption::Cancelled { flight } => (flight, "cancelled"),
        Disruption::Delayed { flight, .. } => (flight, "delayed"),
    };
    let yes = elicit::<bool>(format!("rebook {hit}?")).await?;
    Ok(format!("{hit} {why} {yes} {}", use_again(hit)))
}

#[tokio::test]
async fn a_tuple_of_a_borrow_and_a_literal_from_a_match_is_recomputed() {
    for disruption in [
        json!({"Cancelled": {"flight": "LH400"}}),
        json!({"Delayed": {"flight": "BA1", "minutes": 40}}),
    ] {
        differential(
            &rebook,
            plain!(plain::rebook),
            json!({"disruption": disruption}),
            yes_script,
        )
        .await;
    }
}

/// Nested: a filtered loop inside a loop over a chosen constant, with a `Vec<&T>` kept
/// across both.
#[saga_tool]
pub async fn audit(hard: bool, tables: Vec<Table>) -> Result<String, SagaError> {
    let bank: &[&str] = if hard { HARD } else { EASY };
    let big: Vec<&Table> = tables.iter().filter(|t| t.rows > 1).collect();
    let mut log = Vec::new();
    for (i, q) in bank.iter().enumerate() {
        for t in tables.iter().filter(|t| t.dirty).skip(i) {
            let a = elicit::<String>(format!("{q} on {}", t.name)).await?;
            log.push(format!("{i}:{}:{a}:{}", t.name, big.len()));
        }
    }
    Ok(log.join(" "))
}

#[tokio::test]
async fn a_filtered_loop_inside_a_loop_over_a_chosen_constant_resumes() {
    let mut arguments = tables();
    arguments["hard"] = json!(true);
    let outcome = differential(&audit, plain!(plain::audit), arguments, echo_script).await;
    assert!(outcome.text().starts_with("0:a:"), "{}", outcome.text());
}

/// The items of a `HashMap` come in another order once it is read back: a loop over
/// its iterator is refused at the resume, naming the loop, never read as another item.
#[saga_tool]
pub async fn hashed(scores: HashMap<String, u32>) -> Result<String, SagaError> {
    let mut seen = Vec::new();
    for (name, score) in scores.iter().filter(|(_, s)| **s > 0) {
        let ok = elicit::<bool>(format!("{name}: {score}?")).await?;
        seen.push(format!("{name}{ok}"));
    }
    Ok(seen.join(","))
}

/// Runs `tool` as the state machine until a round is refused: the client's error, and the
/// reason logged.
async fn refusal<T: SagaTool + Clone>(
    tool: &T,
    arguments: serde_json::Value,
) -> (saga_runtime::rmcp::ErrorData, String) {
    use saga_runtime::engine::Call;
    use saga_runtime::rmcp::model::CallToolResponse;
    // The reason of a refusal is the operator's: the client is told only that its
    // requestState is refused, as for every token this build cannot read.
    let log = saga_examples::harness::log::Captured::default();
    let _guard = log.install("saga_runtime=warn");
    let tools = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .tool(tool.clone())
        .build()
        .expect("the saga's points trace");
    let cx = crate::harness::context();
    let mut script = yes_script();
    let arguments = arguments.as_object().cloned().expect("an object");
    let mut call = Call::tool(tool.tool().name.to_string(), Some(arguments));
    for _ in 0..100 {
        match tools.run(call.clone(), &cx).await {
            Err(error) => return (error, log.text()),
            Ok(CallToolResponse::InputRequired(required)) => {
                call.input_responses = required
                    .input_requests
                    .as_ref()
                    .map(|requests| script.respond(requests));
                call.request_state = required.request_state;
            }
            Ok(other) => panic!("the saga was not refused: {other:?}"),
        }
    }
    panic!("the saga never ended")
}

// Current-thread runtimes: the log's subscriber is the test thread's.
#[tokio::test(flavor = "current_thread")]
async fn a_hash_maps_iterator_in_another_order_after_a_restore_is_refused() {
    let scores: serde_json::Map<String, serde_json::Value> =
        (0..40).map(|i| (format!("n{i}"), json!(i + 1))).collect();
    let (error, log) = refusal(&hashed, json!({"scores": scores})).await;
    assert_eq!(error.code.0, -32602, "{error:?}");
    assert!(
        log.contains("`for (name, score) in scores.iter().filter(|(_, s)| **s > 0)` gives another item"),
        "the reason names the loop: {log}"
    );
}

/// Borrows pushed in a `HashMap`'s order, kept across a suspension: recomputed after a
/// restore in the order of the map read back.
#[saga_tool]
pub async fn hashed_pushed(scores: HashMap<String, u32>) -> Result<String, SagaError> {
    let mut names: Vec<&String> = Vec::new();
    for name in scores.keys() {
        names.push(name);
    }
    let ok = elicit::<bool>(format!("{} names?", names.len())).await?;
    Ok(format!("{ok} {}", names.first().map_or("", |name| name.as_str())))
}

#[tokio::test(flavor = "current_thread")]
async fn borrows_pushed_in_a_hash_maps_order_are_refused_after_a_restore() {
    let scores: serde_json::Map<String, serde_json::Value> =
        (0..40).map(|i| (format!("n{i}"), json!(i + 1))).collect();
    let (error, log) = refusal(&hashed_pushed, json!({"scores": scores})).await;
    assert_eq!(error.code.0, -32602, "{error:?}");
    assert!(
        log.contains("`names` holds a borrow"),
        "the reason names the local: {log}"
    );
}

/// A `&str` a method of `str` gives (`trim`), its type written: recomputed from the
/// restored `String` (plain Rust keeps it across the `.await` as it is).
#[saga_tool]
pub async fn greet_trimmed(owned: String) -> Result<String, SagaError> {
    let name: &str = owned.trim();
    let greeting: String = elicit("How should they be greeted?").await?;
    Ok(format!("{greeting}, {name}!"))
}

#[tokio::test]
async fn a_str_a_method_gives_is_recomputed() {
    let outcome = differential(
        &greet_trimmed,
        plain!(plain::greet_trimmed),
        json!({"owned": "  Ada  "}),
        echo_script,
    )
    .await;
    assert_eq!(outcome.text(), "<How should they be greeted?>, Ada!");
}

#[saga_fn]
async fn accept_name(name: String) -> Result<bool, SagaError> {
    elicit::<bool>(format!("accept {name}?")).await
}

/// A recomputed loop whose body awaits a `#[saga_fn]`, its item taken apart.
#[saga_tool]
pub async fn review_names(names: Vec<String>) -> Result<String, SagaError> {
    let mut accepted = Vec::new();
    for (i, name) in names.iter().filter(|name| !name.is_empty()).enumerate() {
        if accept_name(name.clone()).await? {
            accepted.push(format!("{i}: {name}"));
        }
    }
    Ok(accepted.join(", "))
}

/// Two loops bind `name`: the first walks owned items, the second is recomputed.
#[saga_tool]
pub async fn two_loops(first: Vec<String>, second: Vec<String>) -> Result<String, SagaError> {
    let mut out = String::new();
    for name in first {
        let _: bool = elicit(format!("{name}?")).await?;
    }
    for name in second.iter().filter(|name| !name.is_empty()) {
        let ok: bool = elicit("ok?").await?;
        out.push_str(&format!("{name}{ok}"));
    }
    Ok(out)
}

#[tokio::test]
async fn a_recomputed_loop_resumes_around_a_helper_and_beside_another_loop() {
    let names = json!(["ann", "", "skip_bo", "cy"]);
    let outcome = differential(
        &review_names,
        plain!(plain::review_names),
        json!({"names": names}),
        yes_script,
    )
    .await;
    assert_eq!(outcome.text(), "0: ann, 2: cy");
    let outcome = differential(
        &two_loops,
        plain!(plain::two_loops),
        json!({"first": ["a", "b"], "second": ["x", "", "y"]}),
        yes_script,
    )
    .await;
    assert_eq!(outcome.text(), "xtrueytrue");
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Commit {
    pub title: String,
}

/// A helper's borrowed parameters used after its suspensions: kept as owned copies
/// (the caller lends them for the whole call, so they read the same).
#[saga_fn]
async fn notes(version: &str, commits: &[Commit]) -> Result<String, SagaError> {
    let ok = elicit::<bool>(format!("publish {version}?")).await?;
    let by = elicit::<String>("signed by?").await?;
    Ok(format!(
        "{version}: {} commits ({}) {ok} by {by}",
        commits.len(),
        commits.iter().map(|c| c.title.as_str()).collect::<Vec<_>>().join("; ")
    ))
}

#[saga_tool]
pub async fn release(version: String, commits: Vec<Commit>) -> Result<String, SagaError> {
    let picked: Vec<&Commit> = commits.iter().filter(|c| !c.title.is_empty()).collect();
    let text = notes(&version, &commits).await?;
    let again = notes(version.trim(), &commits[..1]).await?;
    Ok(format!("{text} | {again} | {}", picked.len()))
}

#[tokio::test]
async fn a_helpers_borrowed_parameters_are_kept_across_its_suspensions() {
    let outcome = differential(
        &release,
        plain!(plain::release),
        json!({"version": " 1.2 ", "commits": [{"title": "fix"}, {"title": ""}, {"title": "feat"}]}),
        || Script::new(|_key, request| {
            let prompt = prompt_of(request);
            if prompt.starts_with("publish") {
                accept(json!({"value": true}))
            } else {
                accept(json!({"value": "ann"}))
            }
        }),
    )
    .await;
    assert_eq!(
        outcome.text(),
        " 1.2 : 3 commits (fix; ; feat) true by ann | 1.2: 1 commits (fix) true by ann | 2"
    );
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Item {
    pub name: String,
    pub score: u32,
}

fn pick_best(items: &[Item]) -> &Item {
    items.iter().max_by_key(|item| item.score).expect("items")
}

/// A borrow a function returns, and an `Option<&str>` a chain gives: each `let` written
/// with its type, as the refusal's advice says, is recomputed.
#[saga_tool]
pub async fn best_of(items: Vec<Item>) -> Result<String, SagaError> {
    let best: &Item = pick_best(&items);
    let longest: Option<&str> = items.iter().map(|i| i.name.as_str()).max_by_key(|n| n.len());
    let ok = elicit::<bool>(format!("keep {}?", best.name)).await?;
    Ok(format!("{} {} {ok} {longest:?}", best.name, best.score))
}

#[tokio::test]
async fn a_borrow_a_function_returns_is_recomputed_with_its_type_written() {
    let outcome = differential(
        &best_of,
        plain!(plain::best_of),
        json!({"items": [{"name": "ab", "score": 1}, {"name": "c", "score": 9}, {"name": "defg", "score": 3}]}),
        yes_script,
    )
    .await;
    assert_eq!(outcome.text(), r#"c 9 true Some("defg")"#);
}

/// The refusals' advice written out: a borrow by a method saga does not know, and a
/// `&str` a method of `str` gives, each `let` with its type (the cases of
/// `saga_tool_borrow_from_method` and `saga_tool_borrow_str_from_method`).
#[saga_tool]
pub async fn greet_first(names: Vec<String>, name: String) -> Result<String, SagaError> {
    let first: &String = names.iter().max().unwrap();
    let trimmed: &str = name.trim_start();
    let greeting: String = elicit("Greeting?").await?;
    Ok(format!("{greeting}, {first} and {trimmed}"))
}

#[tokio::test]
async fn the_refusals_advice_to_write_the_type_compiles_and_runs() {
    let outcome = differential(
        &greet_first,
        plain!(plain::greet_first),
        json!({"names": ["ann", "zed", "bo"], "name": "  cy"}),
        echo_script,
    )
    .await;
    assert_eq!(outcome.text(), "<Greeting?>, zed and cy");
}

/// Borrows built up over statements: a `Vec` of borrows pushed in a loop (its type not
/// written), then sorted, kept across a suspension and walked by another loop that
/// suspends; the best item found by assignment, with and without its type written.
#[saga_tool]
pub async fn pushed(shards: Vec<Shard>, items: Vec<Item>) -> Result<String, SagaError> {
    let mut picked = Vec::new();
    for s in shards.iter() {
        if s.stale {
            picked.push(s);
        }
    }
    picked.sort_by_key(|s| std::cmp::Reverse(s.id));
    let mut best: Option<&Item> = None;
    for (i, item) in items.iter().enumerate() {
        if i > 0 && best.is_none_or(|b| item.score > b.score) {
            best = Some(item);
        }
    }
    let mut longest = &items[0];
    for item in &items {
        if item.name.len() > longest.name.len() {
            longest = item;
        }
    }
    let go = elicit::<bool>(format!("move {} shards?", picked.len())).await?;
    let mut moved = Vec::new();
    for s in &picked {
        if elicit::<bool>(format!("shard {}?", s.id)).await? {
            moved.push(s.id.to_string());
        }
    }
    let best = best.map(|b| b.name.as_str()).unwrap_or("none");
    Ok(format!("{go} [{}] {best} {}", moved.join(","), longest.name))
}

/// Borrows pushed in a loop inside a loop that suspends, skipped by a `continue` of that
/// loop when there are none.
#[saga_tool]
pub async fn pushed_per_group(groups: Vec<Vec<Shard>>) -> Result<String, SagaError> {
    let mut out = Vec::new();
    for group in &groups {
        let mut stale = Vec::new();
        for shard in group.iter().filter(|shard| shard.stale) {
            stale.push(shard);
        }
        if stale.is_empty() {
            continue;
        }
        let ok = elicit::<bool>(format!("group of {}?", stale.len())).await?;
        out.push(format!("{ok}:{}", stale.iter().map(|s| s.id.to_string()).collect::<Vec<_>>().join("+")));
    }
    Ok(out.join(" "))
}

#[tokio::test]
async fn borrows_pushed_per_iteration_of_a_suspending_loop_are_recomputed() {
    let outcome = differential(
        &pushed_per_group,
        plain!(plain::pushed_per_group),
        json!({"groups": [
            [{"id": 1, "stale": true}, {"id": 2, "stale": false}, {"id": 3, "stale": true}],
            [{"id": 4, "stale": false}],
            [{"id": 5, "stale": true}],
        ]}),
        yes_script,
    )
    .await;
    assert_eq!(outcome.text(), "true:1+3 true:5");
}

#[tokio::test]
async fn borrows_pushed_and_assigned_over_statements_are_recomputed() {
    let outcome = differential(
        &pushed,
        plain!(plain::pushed),
        json!({
            "shards": [{"id": 1, "stale": true}, {"id": 2, "stale": false}, {"id": 3, "stale": true}],
            "items": [{"name": "ab", "score": 1}, {"name": "c", "score": 9}, {"name": "defg", "score": 3}],
        }),
        || Script::new(|_key, request| accept(json!({"value": !prompt_of(request).contains("shard 1")}))),
    )
    .await;
    assert_eq!(outcome.text(), "true [3] c defg");
}

/// A `Vec<&str>` with its type written, pushed from an enumerated loop over borrowed
/// tables and read after two suspensions.
#[saga_tool]
pub async fn pushed_names(tables: Vec<Table>) -> Result<String, SagaError> {
    let mut names: Vec<&str> = Vec::new();
    for (i, table) in tables.iter().enumerate() {
        if i % 2 == 0 {
            names.push(&table.name);
        }
    }
    let first: String = elicit(format!("first of {}?", names.join("+"))).await?;
    let second: String = elicit(format!("then {}?", names.len())).await?;
    Ok(format!("{first} {second} {}", names.join("|")))
}

#[tokio::test]
async fn a_typed_vec_of_strs_pushed_over_statements_is_recomputed() {
    let outcome = differential(
        &pushed_names,
        plain!(plain::pushed_names),
        tables(),
        echo_script,
    )
    .await;
    assert!(outcome.text().ends_with(" a|skip_c"), "{}", outcome.text());
}

/// Borrows whose types are not written, given by the standard library's methods: an
/// item an iterator finds, a line, a `str` trimmed, a map's value through `Option`'s
/// methods, a pattern bound with `let … else`; and closures used after a suspension.
#[saga_tool]
pub async fn untyped(
    items: Vec<Item>,
    text: String,
    raw: String,
    settings: std::collections::BTreeMap<String, String>,
) -> Result<String, SagaError> {
    let best = items.iter().max_by_key(|item| item.score);
    let hit = items.iter().find(|item| item.name.len() > 2);
    let header = text.lines().next().unwrap_or("");
    let name = raw.trim();
    let tier = settings.get("tier").map(String::as_str).unwrap_or("free");
    let Some((last_key, last_value)) = settings.iter().next_back() else {
        return Ok("no settings".into());
    };
    let prefix = format!("[{tier}]");
    let double = |x: u32| x * 2;
    let label = |s: &str| format!("{prefix} {s}");
    let go = elicit::<bool>(format!("go {name}?")).await?;
    let mut out = Vec::new();
    if let Some(best) = best {
        out.push(format!("best {} {}", best.name, double(best.score)));
    }
    if let Some(hit) = hit {
        let ok = elicit::<bool>(format!("hit {}?", hit.name)).await?;
        out.push(format!("hit {} {ok}", hit.name));
    }
    out.push(label(header));
    Ok(format!("{go} {name} {tier} {last_key}={last_value} {}", out.join("; ")))
}

#[tokio::test]
async fn borrows_the_standard_methods_give_and_closures_are_recomputed() {
    let outcome = differential(
        &untyped,
        plain!(plain::untyped),
        json!({
            "items": [{"name": "ab", "score": 1}, {"name": "c", "score": 9}, {"name": "defg", "score": 3}],
            "text": "title line\nsecond",
            "raw": "  Ada ",
            "settings": {"tier": "pro", "zone": "eu"},
        }),
        yes_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        "true Ada pro zone=eu best c 18; hit defg true; [pro] title line"
    );
}

/// A helper's slice parameter walked as it is, around a suspension.
#[saga_tool]
pub async fn ask_owners(owners: Vec<String>) -> Result<String, SagaError> {
    let answers = ask_each(&owners).await?;
    Ok(format!("{answers:?}"))
}

#[saga_fn]
async fn ask_each(owners: &[String]) -> Result<Vec<bool>, SagaError> {
    let mut out = Vec::new();
    for owner in owners {
        out.push(elicit::<bool>(format!("{owner}?")).await?);
    }
    Ok(out)
}

#[tokio::test]
async fn a_loop_over_a_helpers_slice_parameter_resumes() {
    let outcome = differential(
        &ask_owners,
        plain!(plain::ask_owners),
        json!({"owners": ["ann", "skip_bo", "cy"]}),
        yes_script,
    )
    .await;
    assert_eq!(outcome.text(), "[true, false, true]");
}

/// Borrows pushed in loops that suspend (the pushes between questions): kept as the
/// positions they were pushed at, made again from the loop's items after a restore.
#[saga_tool]
pub async fn plan_day(tasks: Vec<Item>, pinned: Vec<String>) -> Result<String, SagaError> {
    let mut open: Vec<&Item> = Vec::new();
    for t in &tasks {
        if t.score > 0 {
            open.push(t);
        }
    }
    open.sort_by_key(|t| std::cmp::Reverse(t.score));
    let budget = elicit::<u32>(format!("{} open, how many?", open.len())).await?;
    let mut picked = Vec::new();
    for t in open.iter().take(budget as usize) {
        if elicit::<bool>(format!("do {}?", t.name)).await? {
            picked.push(t.name.as_str());
        }
    }
    let mut kept: Vec<&str> = Vec::new();
    for entry in tasks.iter().rev().map(|t| &t.name).chain(pinned.iter()) {
        if elicit::<bool>(format!("keep {entry}?")).await? {
            kept.push(entry.as_str());
        }
    }
    let heading = elicit::<String>(format!("heading for {}?", kept.len())).await?;
    Ok(format!("{heading}: [{}] [{}]", picked.join(","), kept.join(",")))
}

#[tokio::test]
async fn borrows_pushed_between_suspensions_are_made_again_from_their_positions() {
    let outcome = differential(
        &plan_day,
        plain!(plain::plan_day),
        json!({
            "tasks": [{"name": "a", "score": 1}, {"name": "skip_b", "score": 9}, {"name": "c", "score": 0}, {"name": "d", "score": 5}],
            "pinned": ["p1", "skip_p2"],
        }),
        || Script::new(|_key, request| {
            let prompt = prompt_of(request);
            if prompt.contains("how many") {
                accept(json!({"value": 2}))
            } else if prompt.starts_with("heading") {
                accept(json!({"value": "H"}))
            } else {
                accept(json!({"value": !prompt.contains("skip")}))
            }
        }),
    )
    .await;
    assert_eq!(outcome.text(), "H: [d] [d,c,a,p1]");
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Roster {
    pub names: Vec<String>,
}

impl Roster {
    fn captain(&self) -> &String {
        &self.names[0]
    }
}

fn greeting(name: &str, word: String) -> String {
    format!("{word}, {name}")
}

fn short(name: &str) -> &str {
    name.get(..3).unwrap_or(name)
}

/// The forms the fail set used to refuse, now recomputed (the standard library's
/// borrows, their type not written), and the refusals' advice written out as it says
/// (`saga_tool_borrow_from_method`, `saga_tool_borrow_str_from_method`,
/// `saga_tool_borrowing_operand`): the `let`'s type written, an owned operand.
#[saga_tool]
pub async fn advice_written(roster: Roster, name: String) -> Result<String, SagaError> {
    let most = roster.names.iter().max().unwrap();
    let trimmed = name.trim_start();
    let first: &String = roster.captain();
    let rest: &str = name.split_at(1).1;
    let greeting_word: String = elicit("Greeting?").await?;
    let with_trim = greeting(name.trim(), elicit::<String>("Again?").await?);
    let kept = short(&name).to_owned();
    let with_short = greeting(&kept, elicit::<String>("Short?").await?);
    Ok(format!("{greeting_word} {most} {trimmed} {first} {rest} | {with_trim} | {with_short}"))
}

#[tokio::test]
async fn the_advice_of_the_borrow_refusals_and_the_forms_they_no_longer_refuse_run() {
    let outcome = differential(
        &advice_written,
        plain!(plain::advice_written),
        json!({"roster": {"names": ["ann", "zed", "bo"]}, "name": "  cyrus"}),
        echo_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        "<Greeting?> zed cyrus ann  cyrus | <Again?>, cyrus | <Short?>,   c"
    );
}

/// Accessors with a computed key and `Option::or`, their types not written.
#[saga_tool]
pub async fn configure(
    settings: HashMap<String, String>,
    zones: Vec<String>,
) -> Result<String, SagaError> {
    let region = settings.get("region");
    let default_zone = zones.first();
    let at: u32 = elicit(format!("zone of {}?", zones.len())).await?;
    let zone = zones.get(at as usize).or(default_zone);
    let replicas: u32 = elicit("replicas?").await?;
    let region = region.map_or("eu-west-1", String::as_str);
    let shown = zone.map(String::as_str).unwrap_or("-");
    let confirm: bool = elicit(format!("zone {shown}?")).await?;
    Ok(format!("{region}/{shown} x{replicas} {confirm}"))
}

#[tokio::test]
async fn accessors_with_computed_keys_are_recomputed() {
    let outcome = differential(
        &configure,
        plain!(plain::configure),
        json!({"settings": {"region": "us-east-2"}, "zones": ["a", "b"]}),
        || Script::new(|_key, request| {
            let prompt = prompt_of(request);
            if prompt.starts_with("zone of") {
                accept(json!({"value": 7}))
            } else if prompt.starts_with("zone") {
                accept(json!({"value": true}))
            } else {
                accept(json!({"value": 3}))
            }
        }),
    )
    .await;
    assert_eq!(outcome.text(), "us-east-2/a x3 true");
}

/// Borrows pushed after a question each turn: the item itself with no type written (a
/// loop over `&servers`, which saves its position), pushes at two places of one loop,
/// and a loop whose `skip` reads a local the body changes (taken when the loop begins).
#[saga_tool]
pub async fn pick_servers(servers: Vec<Item>, mut k: u32) -> Result<String, SagaError> {
    let mut chosen = Vec::new();
    for s in &servers {
        if elicit::<bool>(format!("use {}?", s.name)).await? {
            chosen.push(s);
        }
    }
    let mut names = Vec::new();
    for s in servers.iter().skip(k as usize) {
        k = elicit::<u32>(format!("next after {}?", s.name)).await?;
        if k % 2 == 0 {
            names.push(s.name.as_str());
        } else {
            names.push("odd");
        }
    }
    let last: String = elicit(format!("done {}?", chosen.len())).await?;
    let chosen: Vec<&str> = chosen.iter().map(|s| s.name.as_str()).collect();
    Ok(format!("{last} [{}] [{}] {k}", chosen.join(","), names.join(",")))
}

#[tokio::test]
async fn borrows_pushed_after_each_question_at_two_places_are_made_again() {
    let outcome = differential(
        &pick_servers,
        plain!(plain::pick_servers),
        json!({
            "servers": [{"name": "a", "score": 1}, {"name": "skip_b", "score": 2}, {"name": "c", "score": 3}],
            "k": 1,
        }),
        || Script::new(|_key, request| {
            let prompt = prompt_of(request);
            if prompt.starts_with("next after skip_b") {
                accept(json!({"value": 4}))
            } else if prompt.starts_with("next") {
                accept(json!({"value": 3}))
            } else if prompt.starts_with("done") {
                accept(json!({"value": "end"}))
            } else {
                accept(json!({"value": !prompt.contains("skip")}))
            }
        }),
    )
    .await;
    assert_eq!(outcome.text(), "end [a,c] [skip_b,odd] 3");
}

/// A type the tool only reads (no `Serialize`), as its arguments' types often are.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
pub struct Candidate {
    pub name: String,
    pub score: u32,
}

/// Borrows the rule would recompute, not kept across a suspension: left as written, so
/// their types need not be `Serialize` (review of issue 95: they were fingerprinted, and
/// refused for it); and a closure whose body unwraps, kept across one.
#[saga_tool]
pub async fn shortlist(candidates: Vec<Candidate>, raw: String) -> Result<String, SagaError> {
    let best = candidates.iter().max_by_key(|c| c.score);
    let name = best.map(|b| b.name.clone()).unwrap_or_default();
    let parse = |s: &str| s.trim().parse::<u32>().unwrap_or(0);
    let ok: bool = elicit(format!("keep {name}?")).await?;
    Ok(format!("{ok} {name} {}", parse(&raw) + 1))
}

#[tokio::test]
async fn borrows_not_kept_need_no_serialize_and_a_closure_that_unwraps_is_made_again() {
    let outcome = differential(
        &shortlist,
        plain!(plain::shortlist),
        json!({"candidates": [{"name": "ann", "score": 3}, {"name": "bo", "score": 7}], "raw": " 41 "}),
        yes_script,
    )
    .await;
    assert_eq!(outcome.text(), "true bo 42");
}

/// A loop that also writes another local, keeping owned copies (`.clone()`): saved across
/// the suspension as they are (the same loop keeping borrows is `located::reshard`).
#[saga_tool]
pub async fn reshard_logged(shards: Vec<Shard>) -> Result<String, SagaError> {
    let mut log: Vec<String> = Vec::new();
    let mut picked = Vec::new();
    for s in shards.iter() {
        if s.stale {
            picked.push(s.clone());
            log.push(format!("pick {}", s.id));
        }
    }
    let go: bool = elicit(format!("move {}?", picked.len())).await?;
    Ok(format!("{go} {} {}", log.join(";"), picked.len()))
}

#[tokio::test]
async fn the_advice_for_a_gathering_with_effects_keeps_the_behaviour() {
    let outcome = differential(
        &reshard_logged,
        plain!(plain::reshard_logged),
        json!({"shards": [{"id": 1, "stale": true}, {"id": 2, "stale": false}, {"id": 3, "stale": true}]}),
        yes_script,
    )
    .await;
    assert_eq!(outcome.text(), "true pick 1;pick 3 2");
}

/// A borrow read only by a later round's request (`elicit(format!("{v}"))` after another
/// question), then given to a `#[saga_fn]` that asks and read after it.
#[saga_tool]
pub async fn read_by_a_later_request(
    version: String,
    commits: Vec<String>,
) -> Result<String, SagaError> {
    let v = version.trim();
    let first = elicit::<bool>("first?").await?;
    let second = elicit::<bool>(format!("second {v}?")).await?;
    let n = release_notes(v, &commits).await?;
    let again = elicit::<bool>(format!("{n} {v}?")).await?;
    Ok(format!("{first} {second} {again}"))
}

#[saga_fn]
async fn release_notes(version: &str, commits: &[String]) -> Result<String, SagaError> {
    let ok = elicit::<bool>(format!("publish {version}?")).await?;
    Ok(format!("{ok} {version}: {}", commits.len()))
}

#[tokio::test]
async fn a_borrow_read_by_a_later_request_or_a_helpers_argument_is_computed_again() {
    let outcome = differential(
        &read_by_a_later_request,
        plain!(plain::read_by_a_later_request),
        json!({"version": " 1.2 ", "commits": ["a", "b"]}),
        || {
            Script::new(|_key, request| {
                let prompt = prompt_of(request);
                accept(json!({"value": prompt.contains("1.2")}))
            })
        },
    )
    .await;
    assert_eq!(outcome.text(), "false true true");
}
