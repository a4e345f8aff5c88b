use std::collections::{BTreeMap, HashMap, HashSet};

use saga_runtime::prelude::*;
use serde_json::json;

use crate::harness::{Script, accept, differential, prompt_of, says};

/// Where a migration reads from: an enum whose variants' fields are borrowed by a `match`
/// on a borrowed loop item, and kept across a suspension.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind")]
pub enum Source {
    Postgres { dsn: String, tables: Vec<String> },
    S3 { bucket: String },
}

#[saga_tool]
pub async fn migration_plan(sources: Vec<Source>) -> Result<String, SagaError> {
    let mut done = Vec::new();
    for src in &sources {
        match src {
            Source::Postgres { dsn, tables } => {
                let pick: String = elicit(format!("Which tables from {dsn}?")).await?;
                done.push(format!("{dsn}: {pick} of {}", tables.len()));
            }
            Source::S3 { bucket } => {
                let ok: bool = elicit(format!("Copy bucket {bucket}?")).await?;
                if ok {
                    done.push(format!("s3://{bucket}"));
                }
            }
        }
    }
    Ok(done.join("; "))
}

pub fn migration_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if prompt.starts_with("Which tables") {
            accept(json!({"value": format!("all<{}>", prompt.len())}))
        } else {
            accept(json!({"value": prompt.contains("logs")}))
        }
    })
}

#[tokio::test]
async fn a_match_binding_over_a_borrowed_loop_item_is_kept() {
    let outcome = differential(
        &migration_plan,
        plain!(plain::migration_plan),
        json!({"sources": [
            {"kind": "Postgres", "dsn": "pg://a", "tables": ["t1", "t2"]},
            {"kind": "S3", "bucket": "logs"},
            {"kind": "S3", "bucket": "tmp"},
            {"kind": "Postgres", "dsn": "pg://b", "tables": []},
        ]}),
        migration_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        "pg://a: all<25> of 2; s3://logs; pg://b: all<25> of 0"
    );
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Count {
    pub bin: String,
    pub expected: i64,
}

#[saga_tool]
pub async fn recount(by_sku: BTreeMap<String, Vec<Count>>) -> Result<String, SagaError> {
    let mut log = Vec::new();
    'outer: for (sku, counts) in &by_sku {
        for c in counts {
            let n: i64 = elicit(format!("Recount {sku} in {}", c.bin)).await?;
            if n < 0 {
                log.push(format!("stop at {sku}/{}", c.bin));
                break 'outer;
            }
            if n == c.expected {
                continue;
            }
            log.push(format!("{sku}/{}: {} -> {n}", c.bin, c.expected));
        }
        log.push(format!("{sku} done ({} bins)", counts.len()));
    }
    Ok(log.join(", "))
}

pub fn recount_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        let n = if prompt.contains("z9") {
            -1
        } else if prompt.ends_with("b1") {
            3
        } else {
            5
        };
        accept(json!({"value": n}))
    })
}

#[tokio::test]
async fn a_nested_loop_over_a_borrowed_item_resumes_with_labels() {
    let outcome = differential(
        &recount,
        plain!(plain::recount),
        json!({"by_sku": {
            "apple": [{"bin": "b1", "expected": 3}, {"bin": "b2", "expected": 4}],
            "kiwi": [],
            "pear": [{"bin": "b1", "expected": 1}, {"bin": "z9", "expected": 1}, {"bin": "b3", "expected": 1}],
            "plum": [{"bin": "b1", "expected": 3}],
        }}),
        recount_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        "apple/b2: 4 -> 5, apple done (2 bins), kiwi done (0 bins), pear/b1: 1 -> 3, stop at pear/z9"
    );
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Setting {
    List(Vec<String>),
    Flag(bool),
}

#[saga_tool]
pub async fn merge_setting(old: Setting, new: Setting) -> Result<String, SagaError> {
    let merged = match (&old, &new) {
        (Setting::List(a), Setting::List(b)) => {
            let how: String = elicit(format!("[{}] or [{}]?", a.join(","), b.join(","))).await?;
            if how == "both" {
                Setting::List([a.clone(), b.clone()].concat())
            } else {
                Setting::List(b.clone())
            }
        }
        (Setting::Flag(was), Setting::Flag(now)) if was != now => {
            let keep: bool = elicit(format!("flip {was} to {now}?")).await?;
            Setting::Flag(if keep { *now } else { *was })
        }
        _ => new.clone(),
    };
    Ok(format!("{old:?} + {new:?} = {merged:?}"))
}

pub fn merge_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if prompt.starts_with("flip") {
            accept(json!({"value": true}))
        } else {
            accept(json!({"value": "both"}))
        }
    })
}

#[tokio::test]
async fn a_match_on_a_tuple_of_borrows_keeps_its_bindings() {
    for (old, new) in [
        (json!({"List": ["a"]}), json!({"List": ["b", "c"]})),
        (json!({"Flag": false}), json!({"Flag": true})),
        (json!({"Flag": true}), json!({"List": []})),
    ] {
        differential(
            &merge_setting,
            plain!(plain::merge_setting),
            json!({"old": old, "new": new}),
            merge_script,
        )
        .await;
    }
}

fn mover(white: bool) -> &'static str {
    if white { "White" } else { "Black" }
}

#[saga_tool]
pub async fn chess(white: bool, turns: u32) -> Result<String, SagaError> {
    let side = if white { "White" } else { "Black" };
    let mv: String = elicit(format!("{side} to move")).await?;
    let mut line = format!("{side} plays {mv}");
    for turn in 0..turns {
        let who = match turn % 3 {
            0 => "first",
            1 => {
                if white {
                    "second"
                } else {
                    "another"
                }
            }
            _ => "third",
        };
        let ok: bool = elicit(format!("{who} ({turn})?")).await?;
        line.push_str(&format!(", {who}={ok}"));
    }
    let opponent = mover(!white);
    Ok(format!("{line}; {opponent} resigns as {side}"))
}

pub fn chess_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if prompt.ends_with("to move") {
            accept(json!({"value": "e4"}))
        } else {
            accept(json!({"value": prompt.len().is_multiple_of(2)}))
        }
    })
}

#[tokio::test]
async fn a_static_str_chosen_from_literals_is_kept() {
    for white in [true, false] {
        differential(
            &chess,
            plain!(plain::chess),
            json!({"white": white, "turns": 4}),
            chess_script,
        )
        .await;
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Incident {
    pub id: String,
    pub owner: Option<String>,
    pub tags: Vec<String>,
    pub severity: i64,
}

/// `if let` and `let … else` over borrowed places, a `&mut` into saved state, an index by
/// a saved integer that changes after the borrow, and a binding inside a nested loop.
#[saga_tool]
pub async fn triage(mut incidents: Vec<Incident>, pick: usize) -> Result<String, SagaError> {
    let mut notes = Vec::new();
    let mut i = pick;
    let chosen = &incidents[i];
    i += 1;
    let why: String = elicit(format!("Why {} (next {i})?", chosen.id)).await?;
    notes.push(format!("{}: {why}", chosen.id));
    for inc in &incidents {
        if let Some(owner) = &inc.owner {
            let ping: bool = elicit(format!("Ping {owner} about {}?", inc.id)).await?;
            notes.push(format!("{owner}={ping}"));
        }
        let Some(first) = inc.tags.first() else {
            continue;
        };
        for tag in &inc.tags {
            if let [only] = inc.tags.as_slice() {
                let keep: bool = elicit(format!("Only tag {only} on {}?", inc.id)).await?;
                notes.push(format!("{only}:{keep}"));
            } else {
                let keep: bool = elicit(format!("Tag {tag} (first {first})?")).await?;
                notes.push(format!("{tag}<{first}>:{keep}"));
            }
        }
    }
    let worst = &mut incidents[0];
    worst.severity += 1;
    let bump: i64 = elicit(format!("Bump {} from {}?", worst.id, worst.severity)).await?;
    worst.severity += bump;
    notes.push(format!("{}={}", incidents[0].id, incidents[0].severity));
    Ok(notes.join(" | "))
}

pub fn triage_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if prompt.starts_with("Why") {
            accept(json!({"value": format!("len {}", prompt.len())}))
        } else if prompt.starts_with("Bump") {
            accept(json!({"value": 2}))
        } else {
            accept(json!({"value": prompt.len().is_multiple_of(3)}))
        }
    })
}

#[tokio::test]
async fn if_let_let_else_and_mutable_borrows_of_saved_places() {
    let outcome = differential(
        &triage,
        plain!(plain::triage),
        json!({"pick": 1, "incidents": [
            {"id": "i1", "owner": "ana", "tags": ["db", "p1"], "severity": 2},
            {"id": "i2", "owner": null, "tags": ["net"], "severity": 1},
            {"id": "i3", "owner": "bo", "tags": [], "severity": 3},
        ]}),
        triage_script,
    )
    .await;
    assert!(outcome.text().starts_with("i2: len"), "{}", outcome.text());
    assert!(outcome.text().ends_with("i1=5"), "{}", outcome.text());
}

/// A `for` over borrowed hash-ordered collections: resumed by the keys still to visit.
#[saga_tool]
pub async fn hash_walk(
    scores: HashMap<String, i64>,
    seen: HashSet<String>,
) -> Result<String, SagaError> {
    let mut out = Vec::new();
    for (name, score) in &scores {
        let bonus: i64 = elicit(format!("Bonus for {name} ({score})?")).await?;
        out.push(format!("{name}={}", score + bonus));
    }
    for who in &seen {
        checkpoint().await;
        out.push(format!("seen {who}"));
    }
    // The plain run and the machine walk the maps in their own orders: compare sorted.
    out.sort();
    Ok(out.join(","))
}

pub fn hash_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        accept(json!({"value": prompt.len() as i64}))
    })
}

#[tokio::test]
async fn a_for_over_a_borrowed_hash_map_resumes_by_its_keys() {
    let outcome = differential(
        &hash_walk,
        plain!(plain::hash_walk),
        json!({
            "scores": {"a": 1, "bb": 2, "ccc": 3, "dddd": 4, "e": 5, "f": 6, "g": 7},
            "seen": ["x", "y", "z", "w"],
        }),
        hash_script,
    )
    .await;
    assert_eq!(outcome.text().split(',').count(), 11, "{}", outcome.text());
}

/// A name that an earlier closure's parameter shadows, captured inline by a `format!`
/// inside `join!`.
#[saga_tool]
pub async fn shadowed_capture(v: Vec<u8>) -> Result<String, SagaError> {
    let lo = v.iter().fold(u8::MAX, |lo, g| lo.min(*g));
    let (p, s) = join!(
        elicit::<bool>(format!("{lo}?")).key("p"),
        sample("x").key("s")
    );
    Ok(format!("{lo} {} {}", p?, s?.text()))
}

pub fn shadowed_script() -> Script {
    Script::new(|key, _request| {
        if key == "s" {
            says("sampled")
        } else {
            accept(json!({"value": true}))
        }
    })
}

#[tokio::test]
async fn a_closure_parameter_does_not_hide_an_inline_capture_in_join() {
    let outcome = differential(
        &shadowed_capture,
        plain!(plain::shadowed_capture),
        json!({"v": [9, 4, 7]}),
        shadowed_script,
    )
    .await;
    assert_eq!(outcome.text(), "4 true sampled");
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Request {
    Batch { items: Vec<String>, note: Option<String> },
    Single(String),
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Settings {
    pub db: Db,
    pub limits: Vec<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Db {
    pub host: String,
    pub port: u16,
}

#[saga_fn]
async fn confirm(what: &str) -> Result<bool, SagaError> {
    let ok: bool = elicit(format!("Confirm {what}?")).await?;
    Ok(ok)
}

/// More shapes: `while let` over an accessor with an index that changes, an accessor with
/// a key that changes, a `for` over a pattern's binding, `let … else` over `.last()`, a
/// `&mut` from `get_mut`, a `&'static str` chosen from a borrowed item in a loop, a
/// borrow of a parameter's field, a deref of a `Box`, and a borrowed item around a
/// helper's suspension.
#[saga_tool]
pub async fn more_shapes(
    request: Request,
    settings: Settings,
    mut counts: Vec<i64>,
    names: BTreeMap<String, String>,
    boxed: Box<Db>,
) -> Result<String, SagaError> {
    let mut log = Vec::new();
    let mut i = 0;
    while let Some(limit) = settings.limits.get(i) {
        i += 1;
        let ok: bool = elicit(format!("Limit {limit} (next {i})?")).await?;
        log.push(format!("{limit}:{ok}"));
    }
    let mut key = String::from("a");
    if let Some(name) = names.get(&key) {
        key.push('!');
        let ok: bool = elicit(format!("Name {name} ({key})?")).await?;
        log.push(format!("{name}={ok}"));
    }
    match &request {
        Request::Batch { items, note } => {
            for it in items {
                let kind = match it.len() {
                    0 => "empty",
                    1..=3 => "short",
                    _ => "long",
                };
                let ok: bool = elicit(format!("Item {it} ({kind})?")).await?;
                log.push(format!("{it}/{kind}/{ok}/{note:?}"));
            }
        }
        Request::Single(one) => {
            checkpoint().await;
            log.push(one.clone());
        }
    }
    let Some(last) = settings.limits.last() else {
        return Ok(log.join(" "));
    };
    let db = &settings.db;
    let inner = &*boxed;
    let more: i64 = elicit(format!("More after {last} on {}?", db.host)).await?;
    if let Some(first) = counts.get_mut(0) {
        *first += more;
        let again: i64 = elicit(format!("Again from {first}?")).await?;
        *first += again;
    }
    for name in names.values() {
        if confirm(name).await? {
            log.push(format!("confirmed {name} of {}", names.len()));
        }
    }
    log.push(format!(
        "{last} {}:{} {}:{} {counts:?}",
        db.host, db.port, inner.host, inner.port
    ));
    Ok(log.join(" "))
}

pub fn more_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if prompt.starts_with("More") || prompt.starts_with("Again") {
            accept(json!({"value": prompt.len() as i64}))
        } else {
            accept(json!({"value": prompt.len() % 2 == 1}))
        }
    })
}

#[tokio::test]
async fn more_borrow_shapes_behave_as_the_plain_function() {
    for request in [
        json!({"Batch": {"items": ["x", "long one", ""], "note": "n"}}),
        json!({"Single": "solo"}),
    ] {
        for limits in [json!([7, 8, 9]), json!([])] {
            differential(
                &more_shapes,
                plain!(plain::more_shapes),
                json!({
                    "request": request,
                    "settings": {"db": {"host": "h", "port": 5432}, "limits": limits},
                    "counts": [1, 2],
                    "names": {"a": "ann", "b": "bob"},
                    "boxed": {"host": "b", "port": 1},
                }),
                more_script,
            )
            .await;
        }
    }
}

/// A `mut` item of a loop over copies, changed before a suspension: it is saved with its
/// change, not found again in the collection (which read it back unchanged).
#[saga_tool]
pub async fn bumped(levels: Vec<i64>) -> Result<String, SagaError> {
    let mut out = Vec::new();
    for mut level in levels.iter().copied() {
        level += 100;
        let extra: i64 = elicit(format!("Extra for {level}?")).await?;
        level += extra;
        out.push(level);
    }
    Ok(format!("{out:?}"))
}

#[tokio::test]
async fn a_mut_item_of_a_loop_keeps_its_change_across_a_suspension() {
    let outcome = differential(
        &bumped,
        plain!(plain::bumped),
        json!({"levels": [1, 2]}),
        || Script::new(|_key, _request| accept(json!({"value": 5}))),
    )
    .await;
    assert_eq!(outcome.text(), "[106, 107]");
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Team {
    pub name: String,
    pub members: Vec<String>,
}

/// Shapes a held-out corpus found refused: an `Option<&mut>` bound, then matched; a
/// method-call `for` over a local that is a borrow; a key moved after `.get(&key)`; a
/// `for` over a pattern's binding whose index changes; a `for` over an element at an
/// index and over a range of a `Vec`; a `let … else` whose `else` suspends.
#[saga_tool]
pub async fn held_out(
    mut counts: Vec<i64>,
    groups: Vec<Vec<String>>,
    prices: BTreeMap<String, i64>,
    sku: String,
    teams: Vec<Team>,
) -> Result<String, SagaError> {
    let mut log = Vec::new();
    let first = counts.get_mut(0);
    if let Some(c) = first {
        let n: i64 = elicit("How many more?").await?;
        *c += n;
    }
    for items in &groups {
        for (at, item) in items.iter().enumerate() {
            for ch in item.chars() {
                if ch == 'x' {
                    let ok: bool = elicit(format!("{item}@{at} has x?")).await?;
                    log.push(format!("{item}:{at}:{ok}"));
                }
            }
        }
    }
    let price = prices.get(&sku);
    let mut bought = Vec::new();
    bought.push(sku);
    let n: i64 = elicit(format!("How many at {price:?}?")).await?;
    log.push(format!("{bought:?} x{n} at {price:?}"));
    let mut i = 0;
    while let Some(Team { name, members }) = teams.get(i) {
        i += 1;
        for m in members {
            let ok: bool = elicit(format!("{m} of {name} (next {i})?")).await?;
            log.push(format!("{name}/{m}:{ok}"));
        }
    }
    for g in &groups[0] {
        checkpoint().await;
        log.push(format!("first group: {g}"));
    }
    for g in &groups[1..] {
        checkpoint().await;
        log.push(format!("later group of {}", g.len()));
    }
    let Some(last) = groups.last() else {
        let why: String = elicit("Why no groups?").await?;
        return Ok(why);
    };
    let ok: bool = elicit(format!("Ship {last:?}?")).await?;
    log.push(format!("{counts:?} {last:?}:{ok}"));
    Ok(log.join(" | "))
}

pub fn held_out_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if prompt.starts_with("How many") {
            accept(json!({"value": prompt.len() as i64}))
        } else {
            accept(json!({"value": prompt.len().is_multiple_of(2)}))
        }
    })
}

#[tokio::test]
async fn shapes_a_held_out_corpus_found_refused_now_behave_as_the_plain_function() {
    let outcome = differential(
        &held_out,
        plain!(plain::held_out),
        json!({
            "counts": [1, 2],
            "groups": [["ax", "b"], ["xx"], []],
            "prices": {"s1": 5, "s2": 7},
            "sku": "s2",
            "teams": [{"name": "core", "members": ["ana", "bo"]}, {"name": "web", "members": []}],
        }),
        held_out_script,
    )
    .await;
    assert!(outcome.text().contains(r#"["s2"] x"#), "{}", outcome.text());
    assert!(outcome.text().contains("at Some(7)"), "{}", outcome.text());
}

/// An argument named like the tool, kept across a suspension and borrowed from (the
/// tool's unit struct shares its name).
#[saga_tool]
pub async fn roster(roster: Vec<String>, mut count: i64) -> Result<String, SagaError> {
    let first = &roster[0];
    let more: i64 = elicit(format!("More than {} after {first}?", roster.len())).await?;
    count += more;
    Ok(format!("{first} of {roster:?}: {count}"))
}

#[tokio::test]
async fn an_argument_named_like_its_tool_is_kept() {
    let outcome = differential(
        &roster,
        plain!(plain::roster),
        json!({"roster": ["ana", "bo"], "count": 1}),
        || Script::new(|_key, _request| accept(json!({"value": 2}))),
    )
    .await;
    assert_eq!(outcome.text(), r#"ana of ["ana", "bo"]: 3"#);
}

/// Shapes a review found: a `for` over an element at an index that changes inside the
/// loop (the element the loop began with is walked), a lookup by a part of a local
/// (`&*name`, a `&str`) in a map keyed by `Box<str>`, a value's `get()` kept across a
/// suspension (saved, not called again), and alternatives under a guard taken apart
/// after the suspension.
#[saga_tool]
pub async fn reviewed(
    plan: Vec<Vec<String>>,
    count: std::num::NonZeroU32,
    pair: (Option<i64>, Option<i64>),
) -> Result<String, SagaError> {
    let mut log = Vec::new();
    let mut day = 0;
    for task in &plan[day] {
        let ok: bool = elicit(format!("{task} on day {day}?")).await?;
        if !ok {
            day += 1;
        }
        log.push(format!("{task}:{ok}"));
    }
    let weights: HashMap<Box<str>, i64> = [("a".into(), 1), ("b".into(), 2)].into_iter().collect();
    let name = String::from("b");
    if let Some(weight) = weights.get(&*name) {
        let ok: bool = elicit(format!("Weight {weight}?")).await?;
        log.push(format!("{name}={weight}:{ok}"));
    }
    let n = count.get();
    let more: i64 = elicit(format!("More than {n}?")).await?;
    log.push(format!("{n}+{more}"));
    let picked = match pair {
        (Some(x), _) | (_, Some(x)) if x > 5 => {
            checkpoint().await;
            x
        }
        _ => 0,
    };
    log.push(format!("picked {picked}"));
    match &plan[1..] {
        [first] | [_, first] => {
            checkpoint().await;
            log.push(format!("then {first:?}"));
        }
        _ => {}
    }
    Ok(log.join(" "))
}

#[tokio::test]
async fn shapes_a_review_found_behave_as_the_plain_function() {
    let outcome = differential(
        &reviewed,
        plain!(plain::reviewed),
        json!({"plan": [["a", "b"], ["c"]], "count": 3, "pair": [1, 10]}),
        || {
            Script::new(|_key, request| {
                let prompt = prompt_of(request);
                if prompt.starts_with("More") {
                    accept(json!({"value": 4}))
                } else {
                    accept(json!({"value": prompt.starts_with("b")}))
                }
            })
        },
    )
    .await;
    assert_eq!(
        outcome.text(),
        "a:false b:true b=2:false 3+4 picked 10 then [\"c\"]",
        "{}",
        outcome.text()
    );
}

/// Issue 76's held-out shape: a tuple `let` that mixes a value with a borrow of a saved
/// place, both kept across a suspension.
#[saga_tool]
pub async fn best_entry(entries: Vec<(String, u32)>) -> Result<String, SagaError> {
    let mut order: Vec<(u32, usize)> = entries
        .iter()
        .enumerate()
        .map(|(i, entry)| (entry.1, i))
        .collect();
    order.sort();
    let last = order.len() - 1;
    let best = order[last].1;
    let (score, top) = (order[last].0, &entries[best]);
    let ok: bool = elicit(format!("Pick {} ({score})?", top.0)).await?;
    let (again, runner_up) = (&entries[order[0].1], score + 1);
    let sure: bool = elicit(format!("Not {}?", again.0)).await?;
    Ok(format!("{} {score} {ok} {} {runner_up} {sure}", top.0, again.0))
}

pub fn best_entry_script() -> Script {
    Script::new(|_key, request| accept(json!({"value": prompt_of(request).contains("b")})))
}

#[tokio::test]
async fn a_tuple_let_of_a_value_and_a_borrow_is_kept() {
    let outcome = differential(
        &best_entry,
        plain!(plain::best_entry),
        json!({"entries": [["a", 3], ["b", 9], ["c", 1]]}),
        best_entry_script,
    )
    .await;
    assert_eq!(outcome.text(), "b 9 true c 10 false");
}

/// Issue 76's held-out shapes: a `for` over two borrowed collections zipped, whose items
/// are a tuple of borrows, kept across a suspension; zipped with `&v`, with `v.iter()`,
/// then enumerated, with a range, and through `std::iter::zip`.
#[saga_tool]
pub async fn pair_up(names: Vec<String>, prices: Vec<u32>) -> Result<String, SagaError> {
    let mut out = Vec::new();
    for (name, price) in names.iter().zip(&prices) {
        let ok: bool = elicit(format!("Buy {name} at {price}?")).await?;
        out.push(format!("{name}={price}:{ok}"));
    }
    for (i, (name, price)) in names.iter().zip(prices.iter()).enumerate() {
        let ok: bool = elicit(format!("Again {name} at {price}?")).await?;
        out.push(format!("{i}.{name}={price}:{ok}"));
    }
    for (name, n) in names.iter().rev().zip(1..) {
        let ok: bool = elicit(format!("Rank {name} as {n}?")).await?;
        out.push(format!("{n}:{name}:{ok}"));
    }
    for (name, price) in std::iter::zip(&names, prices.iter().skip(1)) {
        let ok: bool = elicit(format!("Last {name} at {price}?")).await?;
        out.push(format!("{name}+{price}:{ok}"));
    }
    Ok(out.join(" "))
}

pub fn pair_up_script() -> Script {
    Script::new(|_key, request| accept(json!({"value": prompt_of(request).contains("b")})))
}

#[tokio::test]
async fn a_for_over_zipped_borrows_is_kept() {
    let outcome = differential(
        &pair_up,
        plain!(plain::pair_up),
        json!({"names": ["a", "b", "c"], "prices": [3, 9]}),
        pair_up_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        "a=3:false b=9:true 0.a=3:false 1.b=9:true 1:c:false 2:b:true 3:a:false a+9:false"
    );
}

/// A zip whose second collection is borrowed mutably: what the body writes through it
/// after a suspension lands in the collection the state keeps.
#[saga_tool]
pub async fn mark_paid(names: Vec<String>, mut paid: Vec<u32>) -> Result<String, SagaError> {
    for (name, owed) in names.iter().zip(paid.iter_mut()) {
        let ok: bool = elicit(format!("Pay {name} {owed}?")).await?;
        if ok {
            *owed += 100;
        }
    }
    Ok(format!("{paid:?}"))
}

#[tokio::test]
async fn a_for_over_a_zip_with_a_mutable_borrow_writes_the_saved_collection() {
    let outcome = differential(
        &mark_paid,
        plain!(plain::mark_paid),
        json!({"names": ["a", "b", "c"], "paid": [1, 2, 3]}),
        pair_up_script,
    )
    .await;
    assert_eq!(outcome.text(), "[1, 102, 3]");
}

/// The advice of the error for a `for` zipped with a borrowed `HashMap` (trybuild
/// `saga_tool_for_zip_with_hash_map`), written out as it says: zip with a saved list.
#[saga_tool]
pub async fn zip_with_saved_pairs(
    names: Vec<String>,
    scores: HashMap<String, i64>,
) -> Result<String, SagaError> {
    let mut accepted = Vec::new();
    let pairs: Vec<_> = scores.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    for (name, (_, score)) in names.iter().zip(&pairs) {
        if elicit::<bool>(format!("accept {name} at {score}?")).await? {
            accepted.push(*score);
        }
    }
    Ok(format!("{} of {}", accepted.len(), pairs.len()))
}

#[tokio::test]
async fn the_advice_for_a_zip_with_a_hash_map_keeps_the_behaviour() {
    let outcome = differential(
        &zip_with_saved_pairs,
        plain!(plain::zip_with_saved_pairs),
        json!({"names": ["a", "b"], "scores": {"x": 1, "y": 2, "z": 3}}),
        || Script::new(|_key, _request| accept(json!({"value": true}))),
    )
    .await;
    assert_eq!(outcome.text(), "2 of 3");
}

/// Types of the user's own with a `tool_uses()` method (issue 76: the macro knew the name
/// as saga's `Turn::tool_uses`, and refused these loops): a getter of a slice resumes as
/// `Turn`'s does; a method that computes its items is owned where it is called, as the
/// error for it (trybuild `saga_tool_for_over_computed_tool_uses`) says.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Toolbox {
    names: Vec<String>,
}

impl Toolbox {
    pub fn tool_uses(&self) -> Vec<String> {
        self.names.iter().map(|name| format!("use {name}")).collect()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Shelf {
    names: Vec<String>,
}

impl Shelf {
    pub fn tool_uses(&self) -> &[String] {
        &self.names
    }
}

#[saga_tool]
pub async fn own_tool_uses(toolbox: Toolbox, shelf: Shelf) -> Result<String, SagaError> {
    let mut out = Vec::new();
    for used in toolbox.tool_uses().to_owned() {
        let ok: bool = elicit(format!("{used}?")).await?;
        out.push(format!("{used}:{ok}"));
    }
    for (i, name) in shelf.tool_uses().iter().enumerate() {
        let ok: bool = elicit(format!("take {name}?")).await?;
        out.push(format!("{i}.{name}:{ok}"));
    }
    for name in shelf.tool_uses() {
        let ok: bool = elicit(format!("keep {name}?")).await?;
        out.push(format!("{name}:{ok}"));
    }
    Ok(out.join(" "))
}

#[tokio::test]
async fn a_loop_over_a_users_own_tool_uses_is_kept() {
    let outcome = differential(
        &own_tool_uses,
        plain!(plain::own_tool_uses),
        json!({"toolbox": {"names": ["a", "b"]}, "shelf": {"names": ["x", "b"]}}),
        pair_up_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        "use a:false use b:true 0.x:false 1.b:true x:false b:true"
    );
}

/// Zips nested in a loop over a borrowed collection: the partner a field of the outer
/// loop's item, and a range then an enumerate after the zip.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Order {
    items: Vec<String>,
    counts: Vec<u32>,
}

#[saga_tool]
pub async fn nested_zips(orders: Vec<Order>) -> Result<String, SagaError> {
    let mut out = Vec::new();
    for order in &orders {
        for (i, (item, count)) in order.items.iter().zip(&order.counts).enumerate() {
            let ok: bool = elicit(format!("{i}: {count} of {item}?")).await?;
            out.push(format!("{item}x{count}:{ok}"));
        }
        for (line, item) in (1..).zip(order.items.iter().rev()) {
            let ok: bool = elicit(format!("line {line} is {item}?")).await?;
            out.push(format!("{line}={item}:{ok}"));
        }
    }
    Ok(out.join(" "))
}

#[tokio::test]
async fn zips_nested_in_a_borrowed_loop_are_kept() {
    let outcome = differential(
        &nested_zips,
        plain!(plain::nested_zips),
        json!({"orders": [
            {"items": ["a", "b"], "counts": [1, 2, 3]},
            {"items": ["c"], "counts": [4]}
        ]}),
        pair_up_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        "ax1:false bx2:true 1=b:true 2=a:false cx4:false 1=c:false"
    );
}

/// A function of the user's named `zip` is not taken for `std::iter::zip` (the review of
/// issue 76's zips): its loop runs what it gives, in its order.
fn zip<'a>(a: &'a [String], b: &'a [u32]) -> Vec<(String, u32)> {
    a.iter().rev().cloned().zip(b.iter().rev().copied()).collect()
}

#[saga_tool]
pub async fn own_zip(names: Vec<String>, prices: Vec<u32>) -> Result<String, SagaError> {
    let mut out = Vec::new();
    for (name, price) in zip(&names, &prices) {
        let ok: bool = elicit(format!("Buy {name} at {price}?")).await?;
        out.push(format!("{name}={price}:{ok}"));
    }
    Ok(out.join(" "))
}

#[tokio::test]
async fn a_function_of_the_users_named_zip_is_called() {
    let outcome = differential(
        &own_zip,
        plain!(plain::own_zip),
        json!({"names": ["a", "b", "c"], "prices": [3, 9, 7]}),
        pair_up_script,
    )
    .await;
    assert_eq!(outcome.text(), "c=7:false b=9:true a=3:false");
}

/// A zip's partner whose place takes an index with an effect, beside the loop's own
/// collection's: each evaluated once, the collection's first (the review of issue 76's
/// zips: the partner's place was evaluated twice, and before the collection's).
#[saga_tool]
pub async fn zip_effects(rows: Vec<Vec<u32>>) -> Result<String, SagaError> {
    let mut picks = vec![1usize, 0, 2];
    let mut out = Vec::new();
    for (a, b) in rows[picks.pop().unwrap_or(0)]
        .iter()
        .zip(&rows[picks.pop().unwrap_or(0)])
    {
        let ok: bool = elicit(format!("{a} and {b}?")).await?;
        out.push(format!("{a}{b}:{ok}"));
    }
    Ok(format!("{} left {picks:?}", out.join(" ")))
}

#[tokio::test]
async fn a_zip_evaluates_its_places_once_in_order() {
    let outcome = differential(
        &zip_effects,
        plain!(plain::zip_effects),
        json!({"rows": [[1, 2], [3, 4], [5, 6]]}),
        || Script::new(|_key, request| accept(json!({"value": prompt_of(request).contains('6')}))),
    )
    .await;
    assert_eq!(outcome.text(), "51:false 62:true left [1]");
}

/// Two unbounded ranges zipped, left with `break`: counted by position, never collected.
#[saga_tool]
pub async fn zip_ranges() -> Result<String, SagaError> {
    let mut out = Vec::new();
    for (a, b) in (1..).zip(10..) {
        let more: bool = elicit(format!("{a} with {b}?")).await?;
        out.push(a + b);
        if !more {
            break;
        }
    }
    Ok(format!("{out:?}"))
}

#[tokio::test]
async fn two_unbounded_ranges_zipped_are_counted() {
    let outcome = differential(
        &zip_ranges,
        plain!(plain::zip_ranges),
        json!({}),
        || Script::new(|_key, request| accept(json!({"value": !prompt_of(request).starts_with('3')}))),
    )
    .await;
    assert_eq!(outcome.text(), "[11, 13, 15]");
}

/// The loop's own collection borrowed mutably, zipped with a shared one read in reverse,
/// and a `BTreeMap`'s entries zipped with a slice of a `Vec`.
#[saga_tool]
pub async fn zip_mut_main(
    mut totals: Vec<u32>,
    extras: Vec<u32>,
    labels: BTreeMap<String, u32>,
) -> Result<String, SagaError> {
    for (total, extra) in totals.iter_mut().zip(extras.iter().rev()) {
        let add: bool = elicit(format!("add {extra} to {total}?")).await?;
        if add {
            *total += *extra;
        }
    }
    let mut seen = Vec::new();
    for ((label, weight), total) in labels.iter().zip(&totals[1..]) {
        let ok: bool = elicit(format!("{label} ({weight}) at {total}?")).await?;
        seen.push(format!("{label}:{ok}"));
    }
    Ok(format!("{totals:?} {}", seen.join(" ")))
}

#[tokio::test]
async fn a_mutable_collection_zipped_with_others_is_kept() {
    let outcome = differential(
        &zip_mut_main,
        plain!(plain::zip_mut_main),
        json!({"totals": [1, 2, 3], "extras": [10, 20, 30], "labels": {"b": 2, "a": 1}}),
        || Script::new(|_key, request| accept(json!({"value": prompt_of(request).contains('2')}))),
    )
    .await;
    assert_eq!(outcome.text(), "[1, 22, 3] a:true b:true");
}
