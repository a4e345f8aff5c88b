use std::sync::atomic::{AtomicU32, Ordering};

use saga_runtime::prelude::*;
use serde_json::json;

use crate::harness::{Script, accept, differential, prompt_of};

// Borrows built up over statements (issue 95): a value holding borrows of the saga's
// other kept locals, kept as where each borrow points and found there again after a
// restore. Each tool against the plain function, sealed and opened at every suspension.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Flat {
    pub street: String,
    pub rent: u32,
    pub rooms: u32,
}

/// The best so far, `best = Some(f)` in a loop that asks about each flat, then the
/// option taken apart by `let … else` and kept across another suspension, though
/// `flats` itself is not read after the loop.
#[saga_tool]
pub async fn find_flat(flats: Vec<Flat>, min_rooms: u32) -> Result<String, SagaError> {
    let mut best = None;
    let mut best_rent = 0;
    for f in flats.iter() {
        if f.rooms < min_rooms {
            continue;
        }
        let visit: bool = elicit(format!("Visit {} at {}?", f.street, f.rent)).await?;
        if visit && (best.is_none() || f.rent < best_rent) {
            best = Some(f);
            best_rent = f.rent;
        }
    }
    let Some(best) = best else {
        return Ok("none visited".to_owned());
    };
    let sign: bool = elicit(format!("Sign for {} ({best_rent})?", best.street)).await?;
    Ok(format!("{sign}: {} with {} rooms", best.street, best.rooms))
}

fn flats() -> serde_json::Value {
    json!({"flats": [
        {"street": "elm", "rent": 900, "rooms": 3},
        {"street": "oak", "rent": 700, "rooms": 2},
        {"street": "ash", "rent": 1200, "rooms": 4},
        {"street": "fir", "rent": 650, "rooms": 1},
    ], "min_rooms": 2})
}

fn visit_all_but(street: &'static str) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            accept(json!({"value": !prompt.contains(street)}))
        })
    }
}

#[tokio::test]
async fn the_best_so_far_is_found_again_in_the_saved_vector() {
    for street in ["oak", "elm", "nowhere"] {
        let outcome = differential(
            &find_flat,
            plain!(plain::find_flat),
            flats(),
            visit_all_but(street),
        )
        .await;
        assert!(outcome.text().starts_with("true: "), "{}", outcome.text());
    }
    let outcome = differential(
        &find_flat,
        plain!(plain::find_flat),
        json!({"flats": [], "min_rooms": 1}),
        visit_all_but("-"),
    )
    .await;
    assert_eq!(outcome.text(), "none visited");
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Member {
    pub name: String,
    pub skill: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Team {
    pub name: String,
    pub members: Vec<Member>,
}

/// `Vec<&Member>` and `Vec<(&Team, u32)>` pushed in nested loops that ask in both, with
/// a labelled `break`, then read after further suspensions: each borrow points into an
/// element of a vector inside an element of `teams`.
#[saga_tool]
pub async fn staff(teams: Vec<Team>, need: usize) -> Result<String, SagaError> {
    let mut picked: Vec<&Member> = Vec::new();
    let mut from = Vec::new();
    'outer: for team in &teams {
        if elicit::<bool>(format!("Skip team {}?", team.name)).await? {
            continue;
        }
        for (i, m) in team.members.iter().enumerate() {
            if m.skill < 3 {
                continue;
            }
            if elicit::<bool>(format!("Take {} from {}?", m.name, team.name)).await? {
                picked.push(m);
                from.push((team, i as u32));
                if picked.len() == need {
                    break 'outer;
                }
            }
        }
    }
    let lead: u32 = elicit(format!("Lead of {}?", picked.len())).await?;
    let lead = picked.get(lead as usize).or(picked.first());
    let skill: u32 = picked.iter().map(|m| m.skill).sum();
    let list: Vec<String> = picked
        .iter()
        .zip(&from)
        .map(|(m, (t, i))| format!("{}@{}#{i}", m.name, t.name))
        .collect();
    Ok(format!(
        "lead {}, skill {skill}: {}",
        lead.map(|m| m.name.as_str()).unwrap_or("nobody"),
        list.join(" ")
    ))
}

fn teams() -> serde_json::Value {
    json!({"teams": [
        {"name": "red", "members": [
            {"name": "ann", "skill": 5}, {"name": "bob", "skill": 1}, {"name": "cy", "skill": 4}]},
        {"name": "blue", "members": [
            {"name": "dee", "skill": 3}, {"name": "eve", "skill": 9}]},
        {"name": "green", "members": [{"name": "fay", "skill": 7}]},
    ], "need": 3})
}

fn staffing_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if prompt.starts_with("Lead") {
            accept(json!({"value": 1}))
        } else if prompt.starts_with("Skip") {
            accept(json!({"value": prompt.contains("red")}))
        } else {
            accept(json!({"value": true}))
        }
    })
}

#[tokio::test]
async fn borrows_pushed_in_nested_loops_are_found_again() {
    let outcome = differential(&staff, plain!(plain::staff), teams(), staffing_script).await;
    assert_eq!(
        outcome.text(),
        "lead eve, skill 19: dee@blue#0 eve@blue#1 fay@green#0"
    );
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Shard {
    pub id: u32,
    pub stale: bool,
}

/// Borrows pushed by a loop that also writes another local, before the suspension: kept
/// where they point, the loop is not run again, and the log has each line once.
#[saga_tool]
pub async fn reshard(shards: Vec<Shard>) -> Result<String, SagaError> {
    let mut log: Vec<String> = Vec::new();
    let mut picked = Vec::new();
    for s in shards.iter() {
        if s.stale {
            picked.push(s);
            log.push(format!("pick {}", s.id));
        }
    }
    let go: bool = elicit(format!("move {}?", picked.len())).await?;
    let ids: Vec<u32> = picked.iter().map(|s| s.id).collect();
    Ok(format!("{go} {} {ids:?}", log.join(";")))
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Noted {
    pub name: String,
    pub ok: bool,
    pub notes: Option<String>,
}

/// The loop that builds `picked` also pushes to the function's `notes`, and a pattern of
/// the loop binds another `notes`: the borrows are kept where they point, the loop is not
/// run again, and `notes` has each line once.
#[saga_tool]
pub async fn pick_noted(shards: Vec<Noted>) -> Result<String, SagaError> {
    let mut notes: Vec<String> = Vec::new();
    let mut picked = Vec::new();
    for s in shards.iter() {
        if let Some(notes) = &s.notes
            && notes.contains("skip")
        {
            continue;
        }
        picked.push(s);
        notes.push(format!("picked {}", s.name));
    }
    let go: bool = elicit(format!("approve {}?", picked.len())).await?;
    Ok(format!(
        "{go} {} {}",
        notes.join(";"),
        picked.iter().filter(|s| s.ok).count()
    ))
}

/// A borrow with its type written, chosen by a `match` on a slice pattern whose arm asks
/// first, then kept across another suspension: it points into `items`, which is not read
/// after it.
#[saga_tool]
pub async fn choose(items: Vec<Flat>, street: String) -> Result<String, SagaError> {
    let matching: Vec<&Flat> = items.iter().filter(|f| f.street.contains(&street)).collect();
    let chosen: &Flat = match matching.as_slice() {
        [] => return Ok(format!("nothing like {street}")),
        [only] => only,
        many => {
            let at: u32 = elicit(format!("Which of {}?", many.len())).await?;
            many.get(at as usize)
                .copied()
                .ok_or_else(|| SagaError::msg("no such flat"))?
        }
    };
    let sure: bool = elicit(format!("Use {}?", chosen.street)).await?;
    Ok(format!("{sure}: {} at {}", chosen.street, chosen.rent))
}

/// A binding of alternatives under a guard (`(Some(x), _) | (_, Some(x)) if *x > 5`):
/// the alternative the guard chose is where the borrow points, found again as it is.
#[saga_tool]
pub async fn pick_pair(pair: (Option<i64>, Option<i64>)) -> Result<String, SagaError> {
    match &pair {
        (Some(x), _) | (_, Some(x)) if *x > 5 => {
            let ok: bool = elicit("Take it?").await?;
            Ok(format!("{x}: {ok}"))
        }
        _ => Ok("none".to_owned()),
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Roster {
    pub names: Vec<String>,
}

/// A borrow found by a chain with a counter in it: it is not computed again, so the
/// counter counts once; `roster` itself is not read after the suspension.
#[saga_tool]
pub async fn greet(roster: Roster) -> Result<String, SagaError> {
    let first = roster.names.first();
    let scans = AtomicU32::new(0);
    let longest = roster
        .names
        .iter()
        .inspect(|_| {
            scans.fetch_add(1, Ordering::Relaxed);
        })
        .max_by_key(|name| name.len());
    let greeting: String = elicit("Greeting?").await?;
    Ok(format!(
        "{greeting}, {first:?}; longest {longest:?} after {} scans",
        scans.load(Ordering::Relaxed)
    ))
}

fn yes() -> Script {
    Script::new(|_key, _request| accept(json!({"value": true})))
}

#[tokio::test]
async fn borrows_the_macro_could_not_make_again_are_kept_where_they_point() {
    let outcome = differential(
        &reshard,
        plain!(plain::reshard),
        json!({"shards": [{"id": 1, "stale": true}, {"id": 2, "stale": false}, {"id": 3, "stale": true}]}),
        yes,
    )
    .await;
    assert_eq!(outcome.text(), "true pick 1;pick 3 [1, 3]");
    let outcome = differential(
        &pick_noted,
        plain!(plain::pick_noted),
        json!({"shards": [
            {"name": "a", "ok": true, "notes": null},
            {"name": "b", "ok": false, "notes": "skip me"},
            {"name": "c", "ok": false, "notes": "fine"},
        ]}),
        yes,
    )
    .await;
    assert_eq!(outcome.text(), "true picked a;picked c 1");
    for (street, text) in [("elm", "true: elm at 900"), ("a", "true: oak at 700"), ("zz", "nothing like zz")] {
        let outcome = differential(
            &choose,
            plain!(plain::choose),
            json!({"items": flats()["flats"].clone(), "street": street}),
            || {
                Script::new(|_key, request| {
                    let prompt = prompt_of(request);
                    accept(json!({"value": if prompt.starts_with("Which") { json!(0) } else { json!(true) }}))
                })
            },
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
    for (pair, text) in [
        (json!([7, 9]), "7: true"),
        (json!([3, 9]), "9: true"),
        (json!([null, 2]), "none"),
    ] {
        let outcome =
            differential(&pick_pair, plain!(plain::pick_pair), json!({"pair": pair}), yes).await;
        assert_eq!(outcome.text(), text);
    }
    let outcome = differential(
        &greet,
        plain!(plain::greet),
        json!({"roster": {"names": ["ann", "bartholomew", "cy"]}}),
        || Script::new(|_key, _request| accept(json!({"value": "hi"}))),
    )
    .await;
    assert_eq!(
        outcome.text(),
        "hi, Some(\"ann\"); longest Some(\"bartholomew\") after 3 scans"
    );
}

// Texts kept as where they point (issue 95): a `&str` into a kept `String` (a field of
// an item of a kept `Vec`, the whole text or a part of it), in a local whose type is
// written, built up over statements that suspend.

/// The cheapest street asked about, an `Option<&str>` assigned in a loop that asks, kept
/// across the confirming question.
#[saga_tool]
pub async fn cheapest_street(flats: Vec<Flat>) -> Result<String, SagaError> {
    let mut best: Option<&str> = None;
    let mut best_rent = u32::MAX;
    for f in flats.iter() {
        let ok: bool = elicit(format!("Pick {} at {}?", f.street, f.rent)).await?;
        if ok && f.rent < best_rent {
            best = Some(f.street.as_str());
            best_rent = f.rent;
        }
    }
    let sure: bool = elicit(format!("Confirm {best:?}?")).await?;
    Ok(format!("{sure}: {best:?} at {best_rent}"))
}

/// A `Vec<&str>` pushed in two loops (a `&String` coerced, a part of one, a whole one),
/// read between them, kept across a `#[saga_fn]` that asks and a last question.
#[saga_tool]
pub async fn shortlist(flats: Vec<Flat>, prefix: usize) -> Result<String, SagaError> {
    let mut picked: Vec<&str> = Vec::new();
    for f in flats.iter() {
        if elicit::<bool>(format!("Pick {}?", f.street)).await? {
            picked.push(&f.street);
        }
    }
    let first_round = picked.len();
    for f in flats.iter().rev().filter(|f| f.rooms > 1) {
        if elicit::<bool>(format!("Again {} ({first_round} so far)?", f.street)).await? {
            picked.push(&f.street[..prefix.min(f.street.len())]);
        }
    }
    let sure = confirm_texts(&picked).await?;
    let again: bool = elicit(format!("Really {}?", picked.len())).await?;
    Ok(format!("{sure} {again}: {}", picked.join(", ")))
}

#[saga_fn]
async fn confirm_texts(names: &[&str]) -> Result<bool, SagaError> {
    elicit(format!("Confirm {}?", names.join(", "))).await
}

/// Pushed in one loop, a `&String` coerced to the `&str` the written type names (made
/// again from the loop's position after a restore), and pairs of a text and a number.
#[saga_tool]
pub async fn streets_and_rents(flats: Vec<Flat>) -> Result<String, SagaError> {
    let mut streets: Vec<&str> = Vec::new();
    let mut pairs: Vec<(&str, u32)> = Vec::new();
    for f in flats.iter() {
        if elicit::<bool>(format!("Pick {}?", f.street)).await? {
            streets.push(&f.street);
        }
        if elicit::<bool>(format!("Pair {}?", f.street)).await? {
            pairs.push((f.street.trim(), f.rent));
        }
    }
    let sure: bool = elicit(format!("Confirm {}?", streets.join(", "))).await?;
    Ok(format!("{sure}: {} {pairs:?}", streets.join(", ")))
}

fn pick_streets(picked: &'static [&'static str]) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            let yes = !(prompt.starts_with("Pick") || prompt.starts_with("Again") || prompt.starts_with("Pair"))
                || picked.iter().any(|street| prompt.contains(street));
            accept(json!({"value": yes}))
        })
    }
}

#[tokio::test]
async fn texts_built_up_over_statements_are_found_again_in_their_strings() {
    for (picked, text) in [
        (&["oak", "ash"][..], "true: Some(\"oak\") at 700"),
        (&[][..], "true: None at 4294967295"),
        (&["elm", "oak", "ash", "fir"][..], "true: Some(\"fir\") at 650"),
    ] {
        let outcome = differential(
            &cheapest_street,
            plain!(plain::cheapest_street),
            flats(),
            pick_streets(picked),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
    for (picked, prefix, text) in [
        (&["oak", "ash"][..], 2, "true true: oak, ash, as, oa"),
        (&["elm"][..], 9, "true true: elm, elm"),
        (&[][..], 1, "true true: "),
    ] {
        let mut arguments = flats();
        arguments["prefix"] = json!(prefix);
        let outcome = differential(
            &shortlist,
            plain!(plain::shortlist),
            arguments,
            pick_streets(picked),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
    let outcome = differential(
        &streets_and_rents,
        plain!(plain::streets_and_rents),
        flats(),
        pick_streets(&["elm", "fir"]),
    )
    .await;
    assert_eq!(
        outcome.text(),
        "true: elm, fir [(\"elm\", 900), (\"fir\", 650)]"
    );
}

/// A `Vec<&T>` pushed in two loops (so kept as where each borrow points), kept across a
/// `#[saga_fn]` that asks and is given it, and across the tool's own last question.
#[saga_tool]
pub async fn tour(flats: Vec<Flat>) -> Result<String, SagaError> {
    let mut picked: Vec<&Flat> = Vec::new();
    for f in flats.iter() {
        if elicit::<bool>(format!("Pick {}?", f.street)).await? {
            picked.push(f);
        }
    }
    for f in flats.iter().rev().filter(|f| f.rent < 1000) {
        if elicit::<bool>(format!("Again {}?", f.street)).await? {
            picked.push(f);
        }
    }
    let sure = confirm_flats(&picked).await?;
    let again: bool = elicit(format!("Really {}?", picked.len())).await?;
    let streets: Vec<&str> = picked.iter().map(|f| f.street.as_str()).collect();
    Ok(format!("{sure} {again}: {}", streets.join(", ")))
}

#[saga_fn]
async fn confirm_flats(flats: &[&Flat]) -> Result<bool, SagaError> {
    let rooms: u32 = flats.iter().map(|f| f.rooms).sum();
    elicit(format!("Confirm {} flats, {rooms} rooms?", flats.len())).await
}

#[tokio::test]
async fn borrows_kept_as_where_they_point_across_a_helper_that_asks() {
    for (picked, text) in [
        (&["oak", "ash"][..], "true true: oak, ash, oak"),
        (&[][..], "true true: "),
        (&["elm", "fir"][..], "true true: elm, fir, fir, elm"),
    ] {
        let outcome = differential(&tour, plain!(plain::tour), flats(), pick_streets(picked)).await;
        assert_eq!(outcome.text(), text);
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Task {
    pub title: String,
    pub urgent: bool,
}

// A macro of the user's own that pushes: what the `Vec` is made from is out of sight, so
// any local kept with it may be where its borrows point (`open`, here).
macro_rules! keep {
    ($v:ident, $x:expr) => {
        $v.push($x)
    };
}

/// A `Vec<&str>` pushed through a macro of the user's, in a loop that asks each turn,
/// kept across the last question.
#[saga_tool]
pub async fn triage(open: Vec<Task>) -> Result<String, SagaError> {
    let mut picked: Vec<&str> = Vec::new();
    for t in open.iter() {
        if t.urgent {
            keep!(picked, t.title.as_str());
        }
        let _seen: bool = elicit(format!("seen {}?", t.title)).await?;
    }
    let go: bool = elicit(format!("close {}?", picked.len())).await?;
    Ok(format!("{go} {}", picked.join(",")))
}

#[tokio::test]
async fn borrows_pushed_by_a_macro_of_the_users_are_found_among_every_kept_local() {
    let outcome = differential(
        &triage,
        plain!(plain::triage),
        json!({"open": [
            {"title": "fire", "urgent": true},
            {"title": "paint", "urgent": false},
            {"title": "flood", "urgent": true},
        ]}),
        yes,
    )
    .await;
    assert_eq!(outcome.text(), "true fire,flood");
}

/// Texts that are literals beside texts of kept `String`s (`if ok { &f.street } else {
/// "skipped" }`): a literal is kept as the literal of the same text.
#[saga_tool]
pub async fn labels(flats: Vec<Flat>) -> Result<String, SagaError> {
    let mut labels: Vec<&str> = Vec::new();
    let mut first: Option<&str> = None;
    for f in flats.iter() {
        let ok: bool = elicit(format!("Pick {}?", f.street)).await?;
        labels.push(if ok { &f.street } else { "skipped" });
        if first.is_none() {
            first = Some(if ok { f.street.as_str() } else { "none yet" });
        }
    }
    let sure: bool = elicit(format!("Confirm {}?", labels.join(","))).await?;
    Ok(format!("{sure}: {} {first:?}", labels.join(",")))
}

#[tokio::test]
async fn literal_texts_beside_borrowed_ones_are_taken_back_as_the_same_literals() {
    for (picked, text) in [
        (&["oak", "ash"][..], "true: skipped,oak,ash,skipped Some(\"none yet\")"),
        (&["elm"][..], "true: elm,skipped,skipped,skipped Some(\"elm\")"),
    ] {
        let outcome =
            differential(&labels, plain!(plain::labels), flats(), pick_streets(picked)).await;
        assert_eq!(outcome.text(), text);
    }
}

/// The same texts, the locals' types not written: what is given to them says they hold
/// a `&str` (`.as_str()`, a literal, `.trim()`).
#[saga_tool]
pub async fn labels_untyped(flats: Vec<Flat>) -> Result<String, SagaError> {
    let mut tags = Vec::new();
    let mut first = None;
    for f in flats.iter() {
        let ok: bool = elicit(format!("Pick {}?", f.street)).await?;
        tags.push(if ok { f.street.trim() } else { "skipped" });
        if first.is_none() {
            first = Some(if ok { f.street.as_str() } else { "none yet" });
        }
    }
    let sure: bool = elicit(format!("Confirm {}?", tags.join(","))).await?;
    Ok(format!("{sure}: {} {first:?}", tags.join(",")))
}

/// An untyped `Option<&str>` assigned in a loop that asks.
#[saga_tool]
pub async fn cheapest_untyped(flats: Vec<Flat>) -> Result<String, SagaError> {
    let mut best = None;
    let mut best_rent = u32::MAX;
    for f in flats.iter() {
        let ok: bool = elicit(format!("Pick {} at {}?", f.street, f.rent)).await?;
        if ok && f.rent < best_rent {
            best = Some(f.street.as_str());
            best_rent = f.rent;
        }
    }
    let sure: bool = elicit(format!("Confirm {best:?}?")).await?;
    Ok(format!("{sure}: {best:?} at {best_rent}"))
}

#[tokio::test]
async fn texts_in_locals_whose_type_is_not_written_are_kept_where_they_point() {
    for (picked, text) in [
        (&["oak", "ash"][..], "true: skipped,oak,ash,skipped Some(\"none yet\")"),
        (&["elm"][..], "true: elm,skipped,skipped,skipped Some(\"elm\")"),
    ] {
        let outcome = differential(
            &labels_untyped,
            plain!(plain::labels_untyped),
            flats(),
            pick_streets(picked),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
    let outcome = differential(
        &cheapest_untyped,
        plain!(plain::cheapest_untyped),
        flats(),
        pick_streets(&["oak", "ash"]),
    )
    .await;
    assert_eq!(outcome.text(), "true: Some(\"oak\") at 700");
}

/// What the error for an untyped `Option<&str>` says to write (tests/ui/
/// saga_tool_text_untyped.rs): its type, here of a text made by a method saga does not
/// know gives one.
#[saga_tool]
pub async fn first_words(flats: Vec<Flat>) -> Result<String, SagaError> {
    let mut best: Option<&str> = None;
    for f in flats.iter() {
        if elicit::<bool>(format!("Pick {}?", f.street)).await? {
            best = Some(f.street.split(' ').next().unwrap_or(""));
        }
    }
    let sure: bool = elicit(format!("Confirm {best:?}?")).await?;
    Ok(format!("{sure}: {best:?}"))
}

#[tokio::test]
async fn the_type_the_error_says_to_write_keeps_the_text() {
    let outcome = differential(
        &first_words,
        plain!(plain::first_words),
        json!({"flats": [
            {"street": "elm row", "rent": 900, "rooms": 3},
            {"street": "oak lane", "rent": 700, "rooms": 2},
            {"street": "", "rent": 1, "rooms": 1},
        ]}),
        pick_streets(&["oak"]),
    )
    .await;
    assert_eq!(outcome.text(), "true: Some(\"oak\")");
}

// What compiled before texts were kept must still compile, and run as the plain function
// (found by review): a root that cannot be saved at an ordinary future, a collection of
// bytes extended by a slice, a text-holding local in a body with no string literal.

/// A page the tool reads but never saves (no `Serialize`).
pub struct Page {
    pub links: Vec<String>,
}

/// An ordinary `async fn`: awaiting it saves nothing.
async fn count_links(links: &[&str]) -> usize {
    links.len()
}

/// A `Vec<&str>` into a value that cannot be saved, held across an ordinary future only.
#[saga_tool]
pub async fn crawl(links: Vec<String>) -> Result<String, SagaError> {
    let page = Page { links };
    let mut absolute: Vec<&str> = Vec::new();
    for link in &page.links {
        if link.starts_with("http") {
            absolute.push(link);
        }
    }
    let n = count_links(&absolute).await;
    Ok(format!("{n}: {}", absolute.join(" ")))
}

/// Bytes extended by a slice (`&chunk[..n]`), kept across a question: a value, saved as is.
#[saga_tool]
pub async fn gather_bytes(chunk: Vec<u8>, n: usize) -> Result<String, SagaError> {
    let mut buf = vec![0u8; 0];
    buf.extend(&chunk[..n.min(chunk.len())]);
    let more: bool = elicit(format!("{} bytes, more?", buf.len())).await?;
    if more {
        buf.extend(&chunk[..1]);
    }
    Ok(format!("{buf:?}"))
}

/// A text-holding local in a body whose code has no string literal.
#[saga_tool]
pub async fn first_picked(flats: Vec<Flat>) -> Result<String, SagaError> {
    let mut best: Option<&str> = None;
    for f in flats.iter() {
        if elicit::<bool>(f.street.clone()).await? && best.is_none() {
            best = Some(&f.street);
        }
    }
    let sure: bool = elicit(flats.len().to_string()).await?;
    Ok(best.filter(|_| sure).unwrap_or_default().to_owned())
}

#[tokio::test]
async fn what_compiled_before_kept_texts_still_does() {
    let outcome = differential(
        &crawl,
        plain!(plain::crawl),
        json!({"links": ["http://a", "b", "https://c"]}),
        yes,
    )
    .await;
    assert_eq!(outcome.text(), "2: http://a https://c");
    let outcome = differential(
        &gather_bytes,
        plain!(plain::gather_bytes),
        json!({"chunk": [1, 2, 3], "n": 2}),
        yes,
    )
    .await;
    assert_eq!(outcome.text(), "[1, 2, 1]");
    let outcome =
        differential(&first_picked, plain!(plain::first_picked), flats(), pick_streets(&["oak"]))
            .await;
    // Every other prompt is the street itself: each is picked, the first kept.
    assert_eq!(outcome.text(), "elm");
}
