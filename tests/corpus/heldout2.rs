use std::collections::BTreeMap;

use saga_runtime::prelude::*;
use serde_json::json;

use crate::harness::{Script, accept, differential, prompt_of, says};

// A second held-out corpus: 24 more tools written from the guide and the rustdoc of
// `#[saga_tool]` alone, keeping borrows across their suspensions as ordinary async Rust
// allows (texts whose types are not written, map lookups, chains of borrows, parts of
// argument strings, helpers that keep borrows of their own parameters, agent loops), each
// against the plain function, sealed and opened at every suspension.

/// Whether a request is a sampling request (else an elicitation).
fn g_is_sample(request: &serde_json::Value) -> bool {
    request["method"].as_str() == Some("sampling/createMessage")
}

/// How many messages a sampling request carries.
fn g_message_count(request: &serde_json::Value) -> usize {
    request["params"]["messages"]
        .as_array()
        .map_or(0, |messages| messages.len())
}

/// The text between the first pair of single quotes of a prompt.
fn g_quoted(prompt: &str) -> String {
    prompt.split('\'').nth(1).unwrap_or_default().to_owned()
}

// ---------------------------------------------------------------------------------------
// g01: picking a reviewer.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GDev {
    pub name: String,
    pub load: u32,
    pub skills: Vec<String>,
}

/// Reviewer: an untyped `Option<&str>` best so far (`best = Some(d.name.as_str())`) in a
/// loop over `&devs` that asks, a `continue` before the question, taken apart by
/// `let … else` and kept across the note.
#[saga_tool]
pub async fn g01_assign_reviewer(devs: Vec<GDev>, area: String) -> Result<String, SagaError> {
    let mut best = None;
    let mut lowest = u32::MAX;
    for d in &devs {
        if !d.skills.iter().any(|s| *s == area) {
            continue;
        }
        let free: bool = elicit(format!("Is {} free this week (load {})?", d.name, d.load)).await?;
        if free && d.load < lowest {
            best = Some(d.name.as_str());
            lowest = d.load;
        }
    }
    let Some(who) = best else {
        return Ok(format!("nobody for {area}"));
    };
    let note: String = elicit(format!("Note for {who} about {area}?")).await?;
    Ok(format!("{who} ({lowest}): {note}"))
}

fn g01_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if prompt.starts_with("Note") {
            accept(json!({"value": "ok"}))
        } else {
            accept(json!({"value": !prompt.contains("bob")}))
        }
    })
}

#[tokio::test]
async fn g01_an_untyped_best_name_is_kept_across_the_note() {
    let devs = json!([
        {"name": "ann", "load": 3, "skills": ["rust"]},
        {"name": "bob", "load": 1, "skills": ["rust", "go"]},
        {"name": "cy", "load": 0, "skills": ["go"]},
        {"name": "dee", "load": 2, "skills": ["rust", "sql"]},
    ]);
    for (area, text) in [
        ("rust", "dee (2): ok"),
        ("go", "cy (0): ok"),
        ("java", "nobody for java"),
    ] {
        let outcome = differential(
            &g01_assign_reviewer,
            plain!(plain::g01_assign_reviewer),
            json!({"devs": devs.clone(), "area": area}),
            g01_script,
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// g02: tags on a post.

/// Tags: an untyped `Vec` pushed `t.trim()` after each question, then sorted and
/// deduplicated before the last question, and kept across it.
#[saga_tool]
pub async fn g02_normalize_tags(post: String, tags: Vec<String>) -> Result<String, SagaError> {
    let mut kept = Vec::new();
    let mut dropped = 0u32;
    for t in &tags {
        if t.trim().is_empty() {
            continue;
        }
        let keep: bool = elicit(format!("Keep tag '{}' on {post}?", t.trim())).await?;
        if keep {
            kept.push(t.trim());
        } else {
            dropped += 1;
        }
    }
    kept.sort();
    kept.dedup();
    let apply: bool = elicit(format!("Apply {} tags ({dropped} dropped)?", kept.len())).await?;
    Ok(format!("{apply}: {}", kept.join(",")))
}

#[tokio::test]
async fn g02_trimmed_tags_pushed_sorted_and_deduplicated_survive_the_last_question() {
    let outcome = differential(
        &g02_normalize_tags,
        plain!(plain::g02_normalize_tags),
        json!({
            "post": "async in depth",
            "tags": [" rust ", "wip", "", "async ", " rust", "tokio", "   "],
        }),
        || {
            Script::new(|_key, request| {
                accept(json!({"value": !prompt_of(request).contains("wip")}))
            })
        },
    )
    .await;
    assert_eq!(outcome.text(), "true: async,rust,tokio");
}

// ---------------------------------------------------------------------------------------
// g03: a cover image.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GAsset {
    pub name: String,
    pub kb: u32,
    pub public: bool,
}

/// Cover: `let mut label = "";` assigned `if ok { &a.name } else { "none" }` after each
/// question of a filtered loop that `break`s, kept across the alt-text question.
#[saga_tool]
pub async fn g03_choose_cover(assets: Vec<GAsset>, max_kb: u32) -> Result<String, SagaError> {
    let mut label = "";
    let mut considered = 0u32;
    for a in assets.iter().filter(|a| a.public) {
        if a.kb > max_kb {
            continue;
        }
        considered += 1;
        let ok: bool = elicit(format!("Use {} ({} KB) as the cover?", a.name, a.kb)).await?;
        label = if ok { &a.name } else { "none" };
        if ok {
            break;
        }
    }
    if label.is_empty() {
        return Ok("no candidate".to_owned());
    }
    let alt: String = elicit(format!("Alt text for {label} ({considered} considered)?")).await?;
    Ok(format!("cover={label} alt={alt}"))
}

fn g03_script(pick: &'static str) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            if prompt.starts_with("Alt") {
                accept(json!({"value": "a banner"}))
            } else {
                accept(json!({"value": prompt.contains(pick)}))
            }
        })
    }
}

#[tokio::test]
async fn g03_a_label_that_is_a_name_or_a_literal_is_kept_across_the_alt_text() {
    let assets = json!([
        {"name": "logo.png", "kb": 50, "public": true},
        {"name": "hero.jpg", "kb": 900, "public": true},
        {"name": "team.jpg", "kb": 120, "public": false},
        {"name": "banner.png", "kb": 200, "public": true},
        {"name": "icon.svg", "kb": 10, "public": true},
    ]);
    for (max_kb, pick, text) in [
        (300, "banner", "cover=banner.png alt=a banner"),
        (300, "nothing", "cover=none alt=a banner"),
        (5, "logo", "no candidate"),
    ] {
        let outcome = differential(
            &g03_choose_cover,
            plain!(plain::g03_choose_cover),
            json!({"assets": assets.clone(), "max_kb": max_kb}),
            g03_script(pick),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// g04: paging whoever is on call.

/// On call: a `&String` from `schedule.get(&key)` under `let … else` (`key` a local made
/// from the argument), itself the key of an untyped
/// `phones.get(person).map(String::as_str)`, both kept across two questions with an early
/// return between them.
#[saga_tool]
pub async fn g04_page_oncall(
    schedule: BTreeMap<String, String>,
    phones: BTreeMap<String, String>,
    day: String,
) -> Result<String, SagaError> {
    let key = day.trim().to_lowercase();
    let Some(person) = schedule.get(&key) else {
        return Ok(format!("no one on call on {key}"));
    };
    let phone = phones.get(person).map(String::as_str);
    let page: bool = elicit(format!("Page {person} on {}?", phone.unwrap_or("no phone"))).await?;
    if !page {
        return Ok(format!("{person} not paged"));
    }
    let message: String = elicit(format!("Message for {person} ({key})?")).await?;
    Ok(format!(
        "paged {person} at {}: {message}",
        phone.unwrap_or("-")
    ))
}

fn g04_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        let value = if prompt.starts_with("Message") {
            json!("db down")
        } else {
            json!(!prompt.contains("no phone"))
        };
        accept(json!({"value": value}))
    })
}

#[tokio::test]
async fn g04_borrows_from_two_map_lookups_are_kept_across_questions() {
    for (day, text) in [
        (" MON ", "paged ann at 555-1: db down"),
        ("tue", "bob not paged"),
        ("sun", "no one on call on sun"),
    ] {
        let outcome = differential(
            &g04_page_oncall,
            plain!(plain::g04_page_oncall),
            json!({
                "schedule": {"mon": "ann", "tue": "bob"},
                "phones": {"ann": "555-1"},
                "day": day,
            }),
            g04_script,
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// g05: a stock-take.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GShelf {
    pub label: String,
    pub expected: i64,
}

/// Stock-take: `while let Some(shelf) = shelves.get(i)` with `mut i` moved on after the
/// question, by two when the count is negative (the next shelf blocked), the shelf kept
/// across the question.
#[saga_tool]
pub async fn g05_stock_take(shelves: Vec<GShelf>) -> Result<String, SagaError> {
    let mut i = 0;
    let mut counted: i64 = 0;
    let mut notes: Vec<String> = Vec::new();
    while let Some(shelf) = shelves.get(i) {
        let n: i64 = elicit(format!(
            "Count on {} ({} expected)? Negative if the next one is blocked",
            shelf.label, shelf.expected
        ))
        .await?;
        if n < 0 {
            notes.push(format!("skipped after {}", shelf.label));
            i += 2;
            continue;
        }
        counted += n;
        if n != shelf.expected {
            notes.push(format!("{} {:+}", shelf.label, n - shelf.expected));
        }
        i += 1;
    }
    let sign: String = elicit(format!(
        "Sign off {counted} items over {} shelves?",
        shelves.len()
    ))
    .await?;
    Ok(format!("{counted} by {sign}; {}", notes.join(", ")))
}

fn g05_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if prompt.starts_with("Sign") {
            return accept(json!({"value": "kim"}));
        }
        let count = match prompt.split_whitespace().nth(2).unwrap_or_default() {
            "A1" => 10,
            "A2" => -1,
            "A4" => 4,
            "A5" => 0,
            _ => 99,
        };
        accept(json!({"value": count}))
    })
}

#[tokio::test]
async fn g05_a_shelf_got_at_a_moving_index_is_kept_across_its_count() {
    let outcome = differential(
        &g05_stock_take,
        plain!(plain::g05_stock_take),
        json!({"shelves": [
            {"label": "A1", "expected": 10},
            {"label": "A2", "expected": 5},
            {"label": "A3", "expected": 7},
            {"label": "A4", "expected": 3},
            {"label": "A5", "expected": 0},
        ]}),
        g05_script,
    )
    .await;
    assert_eq!(outcome.text(), "14 by kim; skipped after A2, A4 +1");
}

// ---------------------------------------------------------------------------------------
// g06: changing a subscription.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub enum GTier {
    Free,
    Team { seats: u32 },
    Enterprise { contact: String },
}

/// Plan change: a `match` on a tuple of two borrowed enums and an untyped `Option<&str>`
/// from `as_deref()`, whose arms keep their bindings across their questions (one under a
/// guard that returns), and the option kept across the confirmation.
#[saga_tool]
pub async fn g06_change_plan(
    account: String,
    from: GTier,
    to: GTier,
    promo: Option<String>,
) -> Result<String, SagaError> {
    let code = promo.as_deref();
    let summary = match (&from, &to, code) {
        (GTier::Free, GTier::Team { seats }, Some(c)) => {
            let ok: bool =
                elicit(format!("Start {account} on Team ({seats} seats) with {c}?")).await?;
            format!("team x{seats} via {c}: {ok}")
        }
        (GTier::Free, GTier::Team { seats }, None) => {
            let card: String = elicit(format!("Card for {account}'s {seats} seats?")).await?;
            format!("team x{seats} card {card}")
        }
        (GTier::Team { seats: old }, GTier::Team { seats: new }, _) if old == new => {
            return Ok(format!("{account}: already {old} seats"));
        }
        (GTier::Team { seats: old }, GTier::Team { seats: new }, _) => {
            let ok: bool = elicit(format!("Change {account} from {old} to {new} seats?")).await?;
            format!("seats {old}->{new}: {ok}")
        }
        (_, GTier::Enterprise { contact }, _) => {
            let when: String = elicit(format!("When can {contact} call {account}?")).await?;
            format!("enterprise call with {contact} {when}")
        }
        (GTier::Enterprise { contact }, _, _) => {
            let ok: bool = elicit(format!("Downgrade {account}? {contact} loses access")).await?;
            format!("downgrade from {contact}: {ok}")
        }
        (_, GTier::Free, _) => "free".to_owned(),
    };
    let confirm: bool = elicit(format!(
        "Apply to {account}: {summary} (promo {})?",
        code.unwrap_or("none")
    ))
    .await?;
    Ok(format!("{confirm} {summary}"))
}

fn g06_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        let value = if prompt.starts_with("When") {
            json!("monday")
        } else if prompt.starts_with("Card") {
            json!("visa")
        } else if prompt.starts_with("Downgrade") {
            json!(false)
        } else {
            json!(true)
        };
        accept(json!({"value": value}))
    })
}

#[tokio::test]
async fn g06_bindings_of_a_match_on_a_tuple_of_borrows_are_kept_across_their_arms() {
    for (from, to, promo, text) in [
        (
            json!("Free"),
            json!({"Team": {"seats": 5}}),
            json!("LAUNCH"),
            "true team x5 via LAUNCH: true",
        ),
        (
            json!("Free"),
            json!({"Team": {"seats": 2}}),
            json!(null),
            "true team x2 card visa",
        ),
        (
            json!({"Team": {"seats": 3}}),
            json!({"Team": {"seats": 3}}),
            json!(null),
            "acme: already 3 seats",
        ),
        (
            json!({"Team": {"seats": 3}}),
            json!({"Team": {"seats": 8}}),
            json!(null),
            "true seats 3->8: true",
        ),
        (
            json!({"Team": {"seats": 3}}),
            json!({"Enterprise": {"contact": "Rita"}}),
            json!(null),
            "true enterprise call with Rita monday",
        ),
        (
            json!({"Enterprise": {"contact": "Rita"}}),
            json!("Free"),
            json!("BYE"),
            "true downgrade from Rita: false",
        ),
        (
            json!({"Team": {"seats": 3}}),
            json!("Free"),
            json!(null),
            "true free",
        ),
    ] {
        let outcome = differential(
            &g06_change_plan,
            plain!(plain::g06_change_plan),
            json!({"account": "acme", "from": from, "to": to, "promo": promo}),
            g06_script,
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// g07: resuming a draft (small).

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GDraft {
    pub title: String,
    pub author: String,
    pub words: u32,
    pub sent: bool,
}

/// Small: `if let Some(d) = drafts.iter().find(..)`, the closure reading an argument, the
/// draft kept across two questions and a `return` inside the `if let`, a question after.
#[saga_tool]
pub async fn g07_resume_draft(drafts: Vec<GDraft>, author: String) -> Result<String, SagaError> {
    if let Some(d) = drafts.iter().find(|d| d.author == author && !d.sent) {
        let resume: bool = elicit(format!("Resume '{}' ({} words)?", d.title, d.words)).await?;
        if resume {
            let more: u32 = elicit(format!("How many words to add to '{}'?", d.title)).await?;
            return Ok(format!("{}: {} -> {}", d.title, d.words, d.words + more));
        }
    }
    let title: String = elicit(format!("Title for a new draft by {author}?")).await?;
    Ok(format!("new draft '{title}' by {author}"))
}

fn g07_script(resume: bool) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            let value = if prompt.starts_with("Resume") {
                json!(resume)
            } else if prompt.starts_with("How many") {
                json!(250)
            } else {
                json!("Retro")
            };
            accept(json!({"value": value}))
        })
    }
}

#[tokio::test]
async fn g07_an_item_found_by_if_let_is_kept_across_its_questions() {
    let drafts = json!([
        {"title": "Q3 plan", "author": "ann", "words": 800, "sent": true},
        {"title": "Offsite", "author": "bob", "words": 300, "sent": false},
        {"title": "Hiring", "author": "ann", "words": 1200, "sent": false},
    ]);
    for (author, resume, text) in [
        ("ann", true, "Hiring: 1200 -> 1450"),
        ("bob", false, "new draft 'Retro' by bob"),
        ("cy", true, "new draft 'Retro' by cy"),
    ] {
        let outcome = differential(
            &g07_resume_draft,
            plain!(plain::g07_resume_draft),
            json!({"drafts": drafts.clone(), "author": author}),
            g07_script(resume),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// g08: a bug bash.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GBug {
    pub id: u32,
    pub severity: u32,
    pub title: String,
    pub fixed: bool,
}

/// Bug bash: an untyped `Vec<&GBug>` pushed in a loop that does not ask, sorted by
/// `sort_by_key` on a `(Reverse(..), ..)` key, its `first()` bound by `let … else`, then
/// walked by `for b in &open` with a question per bug and a `break`, the first kept
/// across all of them and a sample.
#[saga_tool]
pub async fn g08_bug_bash(bugs: Vec<GBug>, slots: usize) -> Result<String, SagaError> {
    let mut open = Vec::new();
    for b in &bugs {
        if !b.fixed {
            open.push(b);
        }
    }
    open.sort_by_key(|b| (std::cmp::Reverse(b.severity), b.id));
    let Some(top) = open.first() else {
        return Ok("nothing open".to_owned());
    };
    let mut assigned: Vec<String> = Vec::new();
    for b in &open {
        if assigned.len() >= slots {
            break;
        }
        let who: String = elicit(format!(
            "Who takes #{} (sev {}): {}?",
            b.id, b.severity, b.title
        ))
        .await?;
        if who.is_empty() {
            continue;
        }
        assigned.push(format!("#{}->{who}", b.id));
    }
    let note = sample(format!(
        "Summarise a bug bash that assigned {} of {} bugs",
        assigned.len(),
        open.len()
    ))
    .max_tokens(30)
    .await?;
    Ok(format!(
        "top #{} {}; {} | {}",
        top.id,
        top.title,
        assigned.join(" "),
        note.text()
    ))
}

fn g08_script() -> Script {
    Script::new(|_key, request| {
        if g_is_sample(request) {
            return says("good bash");
        }
        let prompt = prompt_of(request);
        let who = if prompt.contains("#2 ") {
            "ann"
        } else if prompt.contains("#5 ") {
            ""
        } else if prompt.contains("#4 ") {
            "bob"
        } else {
            "cy"
        };
        accept(json!({"value": who}))
    })
}

#[tokio::test]
async fn g08_borrows_pushed_then_sorted_are_walked_with_questions() {
    let outcome = differential(
        &g08_bug_bash,
        plain!(plain::g08_bug_bash),
        json!({
            "bugs": [
                {"id": 1, "severity": 2, "title": "typo", "fixed": false},
                {"id": 2, "severity": 5, "title": "crash on save", "fixed": false},
                {"id": 3, "severity": 5, "title": "data loss", "fixed": true},
                {"id": 4, "severity": 3, "title": "slow search", "fixed": false},
                {"id": 5, "severity": 5, "title": "login loop", "fixed": false},
            ],
            "slots": 2,
        }),
        g08_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        "top #2 crash on save; #2->ann #4->bob | good bash"
    );
    let outcome = differential(
        &g08_bug_bash,
        plain!(plain::g08_bug_bash),
        json!({
            "bugs": [{"id": 3, "severity": 5, "title": "data loss", "fixed": true}],
            "slots": 2,
        }),
        g08_script,
    )
    .await;
    assert_eq!(outcome.text(), "nothing open");
}

// ---------------------------------------------------------------------------------------
// g09: booking interviews through a helper.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GSlot {
    pub id: u32,
    pub day: String,
    pub hour: u32,
}

/// A helper keeping `best = Some(s)`, a borrow into its `&[GSlot]` parameter found by a
/// filtered loop (whose closure reads its other slice), across its own second question.
#[saga_fn]
async fn g_pick_slot(
    slots: &[GSlot],
    taken: &[u32],
    person: &str,
) -> Result<Option<u32>, SagaError> {
    let mut best = None;
    for s in slots.iter().filter(|s| !taken.contains(&s.id)) {
        let ok: bool = elicit(format!("{person}: {} at {}?", s.day, s.hour)).await?;
        if ok {
            best = Some(s);
            break;
        }
    }
    let Some(slot) = best else {
        return Ok(None);
    };
    let sure: bool = elicit(format!("{person}, confirm {} at {}?", slot.day, slot.hour)).await?;
    Ok(if sure { Some(slot.id) } else { None })
}

/// Interviews: the helper above awaited in a loop over `&candidates`, lent the argument,
/// the loop's item and a `Vec` the loop pushes to after each call.
#[saga_tool]
pub async fn g09_interviews(
    candidates: Vec<String>,
    slots: Vec<GSlot>,
) -> Result<String, SagaError> {
    let mut taken: Vec<u32> = Vec::new();
    let mut lines = Vec::new();
    for c in &candidates {
        let picked = g_pick_slot(&slots, &taken, c).await?;
        match picked {
            Some(id) => {
                taken.push(id);
                lines.push(format!("{c}@{id}"));
            }
            None => lines.push(format!("{c}@-")),
        }
    }
    Ok(lines.join(" "))
}

fn g09_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        let value = if prompt.contains(", confirm") {
            !prompt.starts_with("bob")
        } else if prompt.starts_with("ann") {
            true
        } else if prompt.starts_with("bob") {
            prompt.contains("mon")
        } else {
            prompt.contains("tue")
        };
        accept(json!({"value": value}))
    })
}

#[tokio::test]
async fn g09_a_helper_keeps_a_borrow_of_its_slice_parameter_across_its_questions() {
    let outcome = differential(
        &g09_interviews,
        plain!(plain::g09_interviews),
        json!({
            "candidates": ["ann", "bob", "cy"],
            "slots": [
                {"id": 1, "day": "mon", "hour": 9},
                {"id": 2, "day": "mon", "hour": 14},
                {"id": 3, "day": "tue", "hour": 10},
            ],
        }),
        g09_script,
    )
    .await;
    assert_eq!(outcome.text(), "ann@1 bob@- cy@3");
}

// ---------------------------------------------------------------------------------------
// g10: proofreading through helpers that call helpers.

#[saga_fn]
async fn g_confirm_line(line: &str, n: usize) -> Result<bool, SagaError> {
    elicit::<bool>(format!("Line {n}: '{line}' reads well?")).await
}

/// A helper awaiting the helper above for each non-blank line of its `&str` parameter
/// (`lines().enumerate().skip(1)`, the line shadowed by `trim()`), reading its other
/// parameter after them.
#[saga_fn]
async fn g_review_section(section: &str, title: &str) -> Result<Vec<usize>, SagaError> {
    let mut flagged = Vec::new();
    for (n, line) in section.lines().enumerate().skip(1) {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if !g_confirm_line(line, n).await? {
            flagged.push(n);
        }
    }
    if flagged.len() > 1 {
        let rewrite: bool = elicit(format!(
            "{title}: {} lines flagged, rewrite it?",
            flagged.len()
        ))
        .await?;
        if rewrite {
            flagged.clear();
            flagged.push(0);
        }
    }
    Ok(flagged)
}

/// Proofreading: a loop over `doc.split("\n\n")` whose untyped title,
/// `section.lines().next().unwrap_or(..).trim()`, is lent to a helper that awaits a
/// helper, and read after it.
#[saga_tool]
pub async fn g10_proofread(doc: String) -> Result<String, SagaError> {
    let mut report = Vec::new();
    for section in doc.split("\n\n") {
        let title = section.lines().next().unwrap_or("untitled").trim();
        let flagged = g_review_section(section, title).await?;
        report.push(match flagged.as_slice() {
            [] => format!("{title}: ok"),
            [0] => format!("{title}: rewrite"),
            lines => format!("{title}: lines {lines:?}"),
        });
    }
    Ok(report.join("; "))
}

fn g10_script(rewrite: bool) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            if prompt.contains("rewrite it?") {
                accept(json!({"value": rewrite}))
            } else {
                accept(json!({"value": !prompt.to_lowercase().contains("bad")}))
            }
        })
    }
}

#[tokio::test]
async fn g10_parts_of_an_argument_are_lent_to_helpers_that_call_helpers() {
    let doc = "Intro\nThis is fine.\nThis are bad.\n\nUsage\n  \nRun it.\n\nNotes\nBad one.\nBad two.\nok line.";
    for (rewrite, text) in [
        (true, "Intro: lines [2]; Usage: ok; Notes: rewrite"),
        (false, "Intro: lines [2]; Usage: ok; Notes: lines [1, 2]"),
    ] {
        let outcome = differential(
            &g10_proofread,
            plain!(plain::g10_proofread),
            json!({"doc": doc}),
            g10_script(rewrite),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// g11: draining a node.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GNode {
    pub host: String,
    pub cpu: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GPool {
    pub name: String,
    pub nodes: Vec<GNode>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GCluster {
    pub name: String,
    pub pools: Vec<GPool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GFleet {
    pub region: String,
    pub cluster: GCluster,
}

/// Drain: a chain of borrows, `let cluster = &fleet.cluster; let pool =
/// &cluster.pools[0]; let node = &pool.nodes[0]; let host = node.host.as_str();`, all
/// kept across a question, a `checkpoint()` and another question.
#[saga_tool]
pub async fn g11_drain_node(fleet: GFleet) -> Result<String, SagaError> {
    let cluster = &fleet.cluster;
    if cluster.pools.is_empty() || cluster.pools[0].nodes.is_empty() {
        return Ok(format!("{}: nothing to drain", cluster.name));
    }
    let pool = &cluster.pools[0];
    let node = &pool.nodes[0];
    let host = node.host.as_str();
    let drain: bool = elicit(format!(
        "Drain {host} in {}/{} ({}% cpu)?",
        cluster.name, pool.name, node.cpu
    ))
    .await?;
    if !drain {
        return Ok(format!("{host} stays in {}", pool.name));
    }
    checkpoint().await;
    let reason: String = elicit(format!("Reason for draining {host}?")).await?;
    Ok(format!(
        "{}: drained {host} from {}/{} ({reason})",
        fleet.region, cluster.name, pool.name
    ))
}

fn g11_script(drain: bool) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            if prompt_of(request).starts_with("Reason") {
                accept(json!({"value": "kernel patch"}))
            } else {
                accept(json!({"value": drain}))
            }
        })
    }
}

#[tokio::test]
async fn g11_a_chain_of_borrows_is_kept_across_a_checkpoint() {
    let fleet = json!({
        "region": "eu-1",
        "cluster": {"name": "k1", "pools": [
            {"name": "web", "nodes": [{"host": "w1", "cpu": 91}, {"host": "w2", "cpu": 10}]},
            {"name": "db", "nodes": []},
        ]},
    });
    for (drain, text) in [
        (true, "eu-1: drained w1 from k1/web (kernel patch)"),
        (false, "w1 stays in web"),
    ] {
        let outcome = differential(
            &g11_drain_node,
            plain!(plain::g11_drain_node),
            json!({"fleet": fleet.clone()}),
            g11_script(drain),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
    let outcome = differential(
        &g11_drain_node,
        plain!(plain::g11_drain_node),
        json!({"fleet": {"region": "us-2", "cluster": {"name": "k2", "pools": []}}}),
        g11_script(true),
    )
    .await;
    assert_eq!(outcome.text(), "k2: nothing to drain");
}

// ---------------------------------------------------------------------------------------
// g12: reviewing a command line.

/// Command: the program, an untyped `split_whitespace().next().unwrap_or("")`, and a
/// typed `Vec<&str>` of the words of `split_whitespace().skip(1)` pushed after a
/// question per flag (a `continue` when refused), all kept across the last question.
#[saga_tool]
pub async fn g12_review_command(command_line: String) -> Result<String, SagaError> {
    let program = command_line.split_whitespace().next().unwrap_or("");
    if program.is_empty() {
        return Ok("empty command".to_owned());
    }
    let mut allowed: Vec<&str> = Vec::new();
    let mut refused = 0u32;
    for word in command_line.split_whitespace().skip(1) {
        if word.starts_with('-') {
            let ok: bool = elicit(format!("Allow {word} for {program}?")).await?;
            if !ok {
                refused += 1;
                continue;
            }
        }
        allowed.push(word);
    }
    let run: bool = elicit(format!(
        "Run {program} with {} words ({refused} refused)?",
        allowed.len()
    ))
    .await?;
    Ok(format!("{run}: {program} {}", allowed.join(" ")))
}

#[tokio::test]
async fn g12_words_of_an_argument_are_kept_across_questions() {
    let script = || {
        Script::new(|_key, request| {
            accept(json!({"value": !prompt_of(request).contains("--force")}))
        })
    };
    for (line, text) in [
        (
            "  rm -r --force build  -v logs",
            "true: rm -r build -v logs",
        ),
        ("   ", "empty command"),
    ] {
        let outcome = differential(
            &g12_review_command,
            plain!(plain::g12_review_command),
            json!({"command_line": line}),
            script,
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// g13: reviewing an env file.

/// Env file: a loop over `env_file.lines()`, the line shadowed by `line.trim()`,
/// `let Some((key, value)) = line.split_once('=') else { .. }` whose `else` asks, a
/// `&str` chosen between a literal and `value`, and a typed `Vec<(&str, &str)>` pushed
/// after each question and kept across the last one.
#[saga_tool]
pub async fn g13_env_review(env_file: String, secret_prefix: String) -> Result<String, SagaError> {
    let mut accepted: Vec<(&str, &str)> = Vec::new();
    for line in env_file.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            let skip: bool = elicit(format!("'{line}' has no '='; skip it?")).await?;
            if skip {
                continue;
            }
            return Err(SagaError::msg(format!("malformed line: {line}")));
        };
        let shown = if key.starts_with(secret_prefix.as_str()) {
            "***"
        } else {
            value
        };
        let ok: bool = elicit(format!("Set {key}={shown}?")).await?;
        if ok {
            accepted.push((key, value));
        }
    }
    let write: bool = elicit(format!("Write {} variables?", accepted.len())).await?;
    let sizes: Vec<String> = accepted
        .iter()
        .map(|(k, v)| format!("{k}:{}", v.len()))
        .collect();
    Ok(format!("{write}: {}", sizes.join(",")))
}

fn g13_script(skip: bool) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            if prompt.contains("has no") {
                accept(json!({"value": skip}))
            } else {
                accept(json!({"value": !prompt.contains("DEBUG")}))
            }
        })
    }
}

#[tokio::test]
async fn g13_parts_of_split_once_are_kept_across_questions() {
    let env_file =
        "# db\nDB_HOST=localhost\nSECRET_TOKEN=abc123\n  \nbroken line\nPORT=8080\nDEBUG=true";
    for (skip, text) in [
        (true, "true: DB_HOST:9,SECRET_TOKEN:6,PORT:4"),
        (false, "malformed line: broken line"),
    ] {
        let outcome = differential(
            &g13_env_review,
            plain!(plain::g13_env_review),
            json!({"env_file": env_file, "secret_prefix": "SECRET_"}),
            g13_script(skip),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// g14: trimming a title (small).

/// Small: a loop over `title.chars().rev()` that asks about each trailing mark and
/// `break`s, then `&title[..title.len() - cut]` kept across the last question.
#[saga_tool]
pub async fn g14_trim_title(title: String) -> Result<String, SagaError> {
    let mut cut = 0;
    for c in title.chars().rev() {
        if c.is_alphanumeric() {
            break;
        }
        let strip: bool = elicit(format!("Drop the trailing '{c}' from '{title}'?")).await?;
        if !strip {
            break;
        }
        cut += c.len_utf8();
    }
    let kept = &title[..title.len() - cut];
    let ok: bool = elicit(format!("Publish '{kept}'?")).await?;
    Ok(if ok {
        kept.to_owned()
    } else {
        format!("draft: {kept}")
    })
}

fn g14_script(publish: bool) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            if prompt.starts_with("Publish") {
                accept(json!({"value": publish}))
            } else {
                let mark = g_quoted(&prompt);
                accept(json!({"value": mark == "…" || mark == "?"}))
            }
        })
    }
}

#[tokio::test]
async fn g14_a_slice_cut_after_a_reversed_chars_loop_is_kept() {
    for (title, publish, text) in [("Ready!?…", true, "Ready!"), ("Done", false, "draft: Done")] {
        let outcome = differential(
            &g14_trim_title,
            plain!(plain::g14_trim_title),
            json!({"title": title}),
            g14_script(publish),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// g15: grading a quiz.

/// Grading: a loop over `questions.iter().zip(&answers)`, the answer shadowed by
/// `a.trim()` and kept across the question, an untyped `Vec` pushed `q.as_str()` before
/// and after it, read by a `sample` and the result.
#[saga_tool]
pub async fn g15_grade(
    student: String,
    questions: Vec<String>,
    answers: Vec<String>,
) -> Result<String, SagaError> {
    let mut missed = Vec::new();
    let mut score = 0u32;
    for (q, a) in questions.iter().zip(&answers) {
        let a = a.trim();
        if a.is_empty() {
            missed.push(q.as_str());
            continue;
        }
        let points: u32 = elicit(format!("Points (0-5) for {student} on '{q}': {a}")).await?;
        score += points.min(5);
        if points == 0 {
            missed.push(q.as_str());
        }
    }
    let feedback = sample(format!(
        "One line of feedback: {score} points, missed {}",
        missed.join(" | ")
    ))
    .max_tokens(40)
    .await?;
    Ok(format!(
        "{student} {score}/{} missed [{}]: {}",
        5 * questions.len(),
        missed.join(" | "),
        feedback.text()
    ))
}

fn g15_script() -> Script {
    Script::new(|_key, request| {
        if g_is_sample(request) {
            return says("Review planets.");
        }
        let prompt = prompt_of(request);
        let points = if prompt.contains("2+2") {
            5
        } else if prompt.contains("Largest") {
            0
        } else {
            4
        };
        accept(json!({"value": points}))
    })
}

#[tokio::test]
async fn g15_items_of_two_zipped_arguments_are_kept_across_questions() {
    let questions = json!(["2+2?", "Capital of France?", "Largest planet?", "H2O is?"]);
    for (answers, text) in [
        (
            json!(["4", "  ", "Saturn", " water "]),
            "ann 9/20 missed [Capital of France? | Largest planet?]: Review planets.",
        ),
        (json!(["4"]), "ann 5/20 missed []: Review planets."),
    ] {
        let outcome = differential(
            &g15_grade,
            plain!(plain::g15_grade),
            json!({"student": "ann", "questions": questions.clone(), "answers": answers}),
            g15_script,
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// g16: spot-checking invoices.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GInvoice {
    pub number: String,
    pub cents: i64,
}

/// Spot check: a loop over `invoices.iter().enumerate().skip(1).step_by(every)` (`every`
/// a shadowed argument), the item kept across the question, an untyped `Vec` pushed
/// `inv.number.as_str()`, and an early `return Ok(..)` from inside the loop after one
/// more question.
#[saga_tool]
pub async fn g16_spot_check(
    invoices: Vec<GInvoice>,
    every: usize,
    max_flags: usize,
) -> Result<String, SagaError> {
    let every = every.max(1);
    let mut flagged = Vec::new();
    for (n, inv) in invoices.iter().enumerate().skip(1).step_by(every) {
        let matches: bool = elicit(format!(
            "Invoice {} (#{n}, {} cents) matches its PO?",
            inv.number, inv.cents
        ))
        .await?;
        if matches {
            continue;
        }
        flagged.push(inv.number.as_str());
        if flagged.len() >= max_flags {
            let escalate: bool = elicit(format!("{} mismatches; escalate?", flagged.len())).await?;
            return Ok(format!(
                "stopped at #{n}, escalate={escalate}: {}",
                flagged.join(",")
            ));
        }
    }
    let found = if flagged.is_empty() {
        "all match".to_owned()
    } else {
        flagged.join(",")
    };
    Ok(format!("checked every {every}: {found}"))
}

#[tokio::test]
async fn g16_a_stepped_enumerated_loop_keeps_its_item_and_returns_early() {
    let invoices: Vec<serde_json::Value> = (0..8)
        .map(|i| json!({"number": format!("INV-{i}"), "cents": 100 * i}))
        .collect();
    let script = || {
        Script::new(|_key, request| {
            let prompt = prompt_of(request);
            accept(json!({"value": !prompt.contains("INV-4") && !prompt.contains("INV-7")}))
        })
    };
    for (every, max_flags, text) in [
        (3, 5, "checked every 3: INV-4,INV-7"),
        (3, 1, "stopped at #4, escalate=true: INV-4"),
        (2, 5, "checked every 2: INV-7"),
        (0, 9, "checked every 1: INV-4,INV-7"),
    ] {
        let outcome = differential(
            &g16_spot_check,
            plain!(plain::g16_spot_check),
            json!({"invoices": invoices.clone(), "every": every, "max_flags": max_flags}),
            script,
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// g17: a chain of approvals.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GApprover {
    pub name: String,
    pub away: bool,
}

/// Approvals: an untyped `Option<&str>` of the last approver (`last =
/// Some(a.name.as_str())`), read by two early `return Ok(..)`s in the middle of the loop,
/// each after a question, then taken apart by `let … else` and kept across the last one.
#[saga_tool]
pub async fn g17_approval_chain(
    request: String,
    chain: Vec<GApprover>,
) -> Result<String, SagaError> {
    let mut last = None;
    for a in &chain {
        if a.away {
            let skip: bool =
                elicit(format!("{} is away; skip to the next approver?", a.name)).await?;
            if !skip {
                return Ok(format!(
                    "'{request}' waits for {} (last: {})",
                    a.name,
                    last.unwrap_or("nobody")
                ));
            }
            continue;
        }
        let yes: bool = elicit(format!("{}, approve '{request}'?", a.name)).await?;
        if !yes {
            return Ok(format!(
                "'{request}' vetoed by {} after {}",
                a.name,
                last.unwrap_or("nobody")
            ));
        }
        last = Some(a.name.as_str());
    }
    let Some(approver) = last else {
        return Ok(format!("'{request}' has no approver"));
    };
    let po: String = elicit(format!(
        "PO number for '{request}', approved by {approver}?"
    ))
    .await?;
    Ok(format!("'{request}' approved by {approver}: {po}"))
}

fn g17_script(veto: &'static str, skip: bool) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            let value = if prompt.contains("is away") {
                json!(skip)
            } else if prompt.starts_with("PO") {
                json!("PO-7")
            } else {
                json!(!prompt.starts_with(veto))
            };
            accept(json!({"value": value}))
        })
    }
}

#[tokio::test]
async fn g17_an_untyped_last_approver_is_read_by_early_returns() {
    let chain = json!([
        {"name": "ann", "away": false},
        {"name": "bob", "away": true},
        {"name": "cy", "away": false},
        {"name": "dee", "away": false},
    ]);
    for (veto, skip, text) in [
        ("nobody", true, "'laptop' approved by dee: PO-7"),
        ("cy", true, "'laptop' vetoed by cy after ann"),
        ("nobody", false, "'laptop' waits for bob (last: ann)"),
        ("ann", true, "'laptop' vetoed by ann after nobody"),
    ] {
        let outcome = differential(
            &g17_approval_chain,
            plain!(plain::g17_approval_chain),
            json!({"request": "laptop", "chain": chain.clone()}),
            g17_script(veto, skip),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
    let outcome = differential(
        &g17_approval_chain,
        plain!(plain::g17_approval_chain),
        json!({"request": "laptop", "chain": [{"name": "bob", "away": true}]}),
        g17_script("nobody", true),
    )
    .await;
    assert_eq!(outcome.text(), "'laptop' has no approver");
}

// ---------------------------------------------------------------------------------------
// g18: a bank transfer.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GAccount {
    pub iban: String,
    pub holder: String,
    pub balance: i64,
}

/// Transfer: two borrows from `find(..).ok_or(SagaError::msg(..))?`, a typed `&str` from
/// `split_whitespace().last().ok_or(..)?`, kept across every question; a question inside
/// an `if` that gives a value, and one more `?` on an `Option` after the first question.
#[saga_tool]
pub async fn g18_transfer(
    accounts: Vec<GAccount>,
    from: String,
    to: String,
    cents: i64,
) -> Result<String, SagaError> {
    let src = accounts
        .iter()
        .find(|a| a.iban == from)
        .ok_or(SagaError::msg("unknown source account"))?;
    let dst = accounts
        .iter()
        .find(|a| a.iban == to)
        .ok_or(SagaError::msg(format!("unknown account {to}")))?;
    let surname: &str = dst
        .holder
        .split_whitespace()
        .last()
        .ok_or(SagaError::msg("the payee has no name"))?;
    let memo: String = elicit(format!("Memo for {surname}?")).await?;
    let amount = if src.balance < cents {
        let partial: bool = elicit(format!(
            "{} has only {}; send that instead?",
            src.holder, src.balance
        ))
        .await?;
        if !partial {
            return Ok(format!("not sent: {} short", cents - src.balance));
        }
        src.balance
    } else {
        cents
    };
    let first_word: &str = memo
        .split_whitespace()
        .next()
        .ok_or(SagaError::msg("empty memo"))?;
    let ok: bool = elicit(format!(
        "Send {amount} from {} to {surname} ({first_word})?",
        src.holder
    ))
    .await?;
    Ok(format!(
        "{ok}: {amount} {} -> {} '{memo}'",
        src.iban, dst.iban
    ))
}

fn g18_script(partial: bool, memo: &'static str) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            let value = if prompt.starts_with("Memo") {
                json!(memo)
            } else if prompt.contains("has only") {
                json!(partial)
            } else {
                json!(true)
            };
            accept(json!({"value": value}))
        })
    }
}

#[tokio::test]
async fn g18_borrows_found_with_question_mark_on_options_are_kept() {
    let accounts = json!([
        {"iban": "DE01", "holder": "Ann Lee", "balance": 500},
        {"iban": "DE02", "holder": "Bob van Dijk", "balance": 20},
    ]);
    for (from, to, cents, partial, memo, text) in [
        (
            "DE01",
            "DE02",
            300,
            true,
            "rent march",
            "true: 300 DE01 -> DE02 'rent march'",
        ),
        (
            "DE02",
            "DE01",
            100,
            false,
            "rent march",
            "not sent: 80 short",
        ),
        (
            "DE02",
            "DE01",
            100,
            true,
            "rent march",
            "true: 20 DE02 -> DE01 'rent march'",
        ),
        ("DE01", "XX", 100, true, "rent", "unknown account XX"),
        ("DE01", "DE02", 10, true, "   ", "empty memo"),
    ] {
        let outcome = differential(
            &g18_transfer,
            plain!(plain::g18_transfer),
            json!({"accounts": accounts.clone(), "from": from, "to": to, "cents": cents}),
            g18_script(partial, memo),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// g19: an agent loop writing SQL.

/// SQL agent: an untyped `settings.get("dialect").map(String::as_str).unwrap_or(..)` and
/// an untyped `schema.lines().next().unwrap_or(..)`, kept across every model turn of a
/// `sample_messages` loop over a growing history, read in the `system` prompt, in the
/// question and in an early `return Ok(..)`.
#[saga_tool]
pub async fn g19_sql_agent(
    question: String,
    schema: String,
    settings: BTreeMap<String, String>,
) -> Result<String, SagaError> {
    let dialect = settings
        .get("dialect")
        .map(String::as_str)
        .unwrap_or("sqlite");
    let first_table = schema.lines().next().unwrap_or("(no tables)");
    let mut history = vec![SamplingMessage::user(format!(
        "Schema:\n{schema}\nQuestion: {question}"
    ))];
    let mut ran: Vec<String> = Vec::new();
    for turn in 1..=4u32 {
        let reply = sample_messages(history.clone())
            .system(format!(
                "Write {dialect} SQL. Reply FINAL: <answer> when done."
            ))
            .max_tokens(200)
            .await?;
        let text = reply.text().to_owned();
        if let Some(answer) = text.strip_prefix("FINAL:") {
            return Ok(format!(
                "{} after {} queries on {first_table}",
                answer.trim(),
                ran.len()
            ));
        }
        let run: bool = elicit(format!("Run on {dialect} (turn {turn}): {text}?")).await?;
        history.push(SamplingMessage::assistant(text.clone()));
        if run {
            history.push(SamplingMessage::user(format!(
                "Query {turn} returned 3 rows"
            )));
            ran.push(text);
        } else {
            history.push(SamplingMessage::user(
                "Refused by the user; try another query.",
            ));
        }
    }
    Err(SagaError::msg(format!(
        "no answer in 4 turns on {dialect} ({} ran)",
        ran.len()
    )))
}

fn g19_script(final_at: usize, refuse: &'static str) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            if g_is_sample(request) {
                let n = g_message_count(request);
                if n >= final_at {
                    says("FINAL: 42 users")
                } else {
                    says(&format!("SELECT {n}"))
                }
            } else {
                accept(json!({"value": !prompt_of(request).contains(refuse)}))
            }
        })
    }
}

#[tokio::test]
async fn g19_map_and_line_borrows_survive_every_model_turn() {
    let outcome = differential(
        &g19_sql_agent,
        plain!(plain::g19_sql_agent),
        json!({
            "question": "how many users?",
            "schema": "users(id, name)\norders(id, user_id)",
            "settings": {"dialect": "postgres"},
        }),
        g19_script(5, "turn 2"),
    )
    .await;
    assert_eq!(
        outcome.text(),
        "42 users after 1 queries on users(id, name)"
    );
    let outcome = differential(
        &g19_sql_agent,
        plain!(plain::g19_sql_agent),
        json!({"question": "how many users?", "schema": "", "settings": {}}),
        g19_script(99, "never"),
    )
    .await;
    assert_eq!(outcome.text(), "no answer in 4 turns on sqlite (4 ran)");
}

// ---------------------------------------------------------------------------------------
// g20: a support agent citing articles.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GArticle {
    pub slug: String,
    pub title: String,
    pub body: String,
}

/// Support agent: a `sample_messages` loop over a growing history, a `Vec<&GArticle>`
/// pushed from `match articles.iter().find(..)` after model turns, kept across every
/// turn and read in the `else` of a `let … else` over `strip_prefix`, which asks.
#[saga_tool]
pub async fn g20_support_agent(
    ticket: String,
    articles: Vec<GArticle>,
) -> Result<String, SagaError> {
    let mut history = vec![SamplingMessage::user(ticket.clone())];
    let mut cited: Vec<&GArticle> = Vec::new();
    for _turn in 0..5 {
        let reply = sample_messages(history.clone())
            .system("Answer the ticket. Reply CITE <slug> to read an article first.")
            .max_tokens(300)
            .await?;
        let text = reply.text().to_owned();
        let Some(slug) = text.strip_prefix("CITE ") else {
            let send: bool = elicit(format!(
                "Send this reply citing {} articles? {text}",
                cited.len()
            ))
            .await?;
            let slugs: Vec<&str> = cited.iter().map(|a| a.slug.as_str()).collect();
            return Ok(format!("sent={send} [{}] {text}", slugs.join(",")));
        };
        let slug = slug.trim();
        history.push(SamplingMessage::assistant(text.clone()));
        match articles.iter().find(|a| a.slug == slug) {
            Some(a) => {
                cited.push(a);
                history.push(SamplingMessage::user(format!("{}: {}", a.title, a.body)));
            }
            None => history.push(SamplingMessage::user(format!("No article {slug}."))),
        }
    }
    Err(SagaError::msg(format!(
        "no reply after 5 turns, {} articles read",
        cited.len()
    )))
}

fn g20_script(cite_forever: bool) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            if !g_is_sample(request) {
                return accept(json!({"value": true}));
            }
            if cite_forever {
                return says("CITE nope");
            }
            match g_message_count(request) {
                1 => says("CITE reset-password"),
                3 => says("CITE nope"),
                5 => says("CITE billing "),
                _ => says("Reset it from Settings."),
            }
        })
    }
}

#[tokio::test]
async fn g20_cited_articles_are_kept_across_every_model_turn() {
    let articles = json!([
        {"slug": "reset-password", "title": "Resetting", "body": "Use the link."},
        {"slug": "billing", "title": "Billing", "body": "Invoices monthly."},
    ]);
    for (cite_forever, text) in [
        (
            false,
            "sent=true [reset-password,billing] Reset it from Settings.",
        ),
        (true, "no reply after 5 turns, 0 articles read"),
    ] {
        let outcome = differential(
            &g20_support_agent,
            plain!(plain::g20_support_agent),
            json!({"ticket": "I cannot log in", "articles": articles.clone()}),
            g20_script(cite_forever),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// g21: two sign-offs in one round.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GDoc {
    pub title: String,
    pub section: String,
}

/// Sign-off: an untyped `&str` from `owners.get(&doc.section).map(String::as_str)
/// .unwrap_or(..)` and a `&String` from `owners.get("legal").ok_or(..)?`, kept across a
/// `join!` of two questions, and a `&str` chosen between them kept across a follow-up in
/// a `match` on the answers.
#[saga_tool]
pub async fn g21_pair_signoff(
    doc: GDoc,
    owners: BTreeMap<String, String>,
) -> Result<String, SagaError> {
    let editor = owners
        .get(&doc.section)
        .map(String::as_str)
        .unwrap_or("the editor");
    let legal = owners
        .get("legal")
        .ok_or(SagaError::msg("no legal owner"))?;
    let (content_ok, legal_ok) = join!(
        elicit::<bool>(format!("{editor}: sign off '{}'?", doc.title)),
        elicit::<bool>(format!("{legal}: legal review of '{}'?", doc.title)),
    );
    let (content_ok, legal_ok) = (content_ok?, legal_ok?);
    match (content_ok, legal_ok) {
        (true, true) => Ok(format!("'{}' signed by {editor} and {legal}", doc.title)),
        (false, false) => Ok(format!("'{}' rejected by both", doc.title)),
        (ok_content, _) => {
            let who = if ok_content { legal.as_str() } else { editor };
            let why: String = elicit(format!("{who}, why not '{}'?", doc.title)).await?;
            Ok(format!("'{}' blocked by {who}: {why}", doc.title))
        }
    }
}

fn g21_script(content: bool, legal: bool) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            let value = if prompt.contains("sign off") {
                json!(content)
            } else if prompt.contains("legal review") {
                json!(legal)
            } else {
                json!("GDPR")
            };
            accept(json!({"value": value}))
        })
    }
}

#[tokio::test]
async fn g21_map_borrows_are_kept_across_a_join_and_a_follow_up() {
    let both = json!({"web": "wendy", "legal": "lars"});
    for (section, owners, content, legal, text) in [
        (
            "web",
            both.clone(),
            true,
            true,
            "'Privacy policy' signed by wendy and lars",
        ),
        (
            "web",
            both.clone(),
            true,
            false,
            "'Privacy policy' blocked by lars: GDPR",
        ),
        (
            "app",
            both.clone(),
            false,
            true,
            "'Privacy policy' blocked by the editor: GDPR",
        ),
        (
            "web",
            both.clone(),
            false,
            false,
            "'Privacy policy' rejected by both",
        ),
        ("web", json!({"web": "wendy"}), true, true, "no legal owner"),
    ] {
        let outcome = differential(
            &g21_pair_signoff,
            plain!(plain::g21_pair_signoff),
            json!({"doc": {"title": "Privacy policy", "section": section}, "owners": owners}),
            g21_script(content, legal),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// g22: choosing an environment.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GEnv {
    pub url: String,
    pub max_replicas: u32,
}

/// Environment: a typed `Vec<&str>` of a map's keys, a borrow from
/// `envs.get(choice.trim())` keyed by an answer, under `let … else`, and its untyped
/// `url.as_str()`, kept across a question that may be asked twice and a last one.
#[saga_tool]
pub async fn g22_pick_environment(
    service: String,
    envs: BTreeMap<String, GEnv>,
) -> Result<String, SagaError> {
    let names: Vec<&str> = envs.keys().map(String::as_str).collect();
    let choice: String =
        elicit(format!("Deploy {service} to which of {}?", names.join("/"))).await?;
    let Some(env) = envs.get(choice.trim()) else {
        return Ok(format!(
            "{} is not one of {}",
            choice.trim(),
            names.join("/")
        ));
    };
    let url = env.url.as_str();
    let mut replicas: u32 = elicit(format!(
        "Replicas in {} (max {})?",
        choice.trim(),
        env.max_replicas
    ))
    .await?;
    if replicas > env.max_replicas {
        replicas = elicit(format!(
            "{replicas} is over {}; how many in {}?",
            env.max_replicas,
            choice.trim()
        ))
        .await?;
        replicas = replicas.min(env.max_replicas);
    }
    let go: bool = elicit(format!("Deploy {service} x{replicas} to {url}?")).await?;
    Ok(format!(
        "{go}: {service} x{replicas} -> {url} (of {})",
        names.join(",")
    ))
}

fn g22_script(choice: &'static str) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            let value = if prompt.contains("to which") {
                json!(choice)
            } else if prompt.starts_with("Replicas") {
                json!(5)
            } else if prompt.contains("is over") {
                json!(3)
            } else {
                json!(true)
            };
            accept(json!({"value": value}))
        })
    }
}

#[tokio::test]
async fn g22_a_map_entry_looked_up_by_an_answer_is_kept() {
    let envs = json!({
        "prod": {"url": "https://prod.x", "max_replicas": 10},
        "staging": {"url": "https://stg.x", "max_replicas": 2},
    });
    for (choice, text) in [
        (
            " staging ",
            "true: api x2 -> https://stg.x (of prod,staging)",
        ),
        ("prod", "true: api x5 -> https://prod.x (of prod,staging)"),
        ("qa", "qa is not one of prod/staging"),
    ] {
        let outcome = differential(
            &g22_pick_environment,
            plain!(plain::g22_pick_environment),
            json!({"service": "api", "envs": envs.clone()}),
            g22_script(choice),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// g23: renaming a file (small).

/// Small: a tuple `let (dir, file)` from `rsplit_once('/').unwrap_or(("", path.as_str()))`
/// and an untyped `new_name.as_deref().unwrap_or(file)`, kept across a `checkpoint()` and
/// a question.
#[saga_tool]
pub async fn g23_rename(path: String, new_name: Option<String>) -> Result<String, SagaError> {
    let (dir, file) = path.rsplit_once('/').unwrap_or(("", path.as_str()));
    let name = new_name.as_deref().unwrap_or(file);
    checkpoint().await;
    let ok: bool = elicit(format!("Rename {file} in '{dir}' to {name}?")).await?;
    Ok(if ok {
        format!("{dir}/{name}")
    } else {
        format!("kept {file}")
    })
}

#[tokio::test]
async fn g23_parts_of_a_path_are_kept_across_a_checkpoint() {
    for (arguments, ok, text) in [
        (
            json!({"path": "src/lib/old.rs", "new_name": "new.rs"}),
            true,
            "src/lib/new.rs",
        ),
        (json!({"path": "src/lib/old.rs"}), true, "src/lib/old.rs"),
        (json!({"path": "README"}), false, "kept README"),
    ] {
        let outcome = differential(
            &g23_rename,
            plain!(plain::g23_rename),
            arguments,
            move || Script::new(move |_key, _request| accept(json!({"value": ok}))),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// g24: merging contact lists.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GContact {
    pub name: String,
    pub email: String,
    pub phone: Option<String>,
}

/// Merge: a `match` on a tuple of `existing.iter().find(..)` and `c.phone.as_deref()`
/// inside a loop over `&incoming`, a question in the `if` condition of one arm and under
/// a guard in another, an untyped `Vec<&str>` and a typed `Vec<(&GContact, &str)>` with
/// borrows into both arguments pushed after the questions, kept across the last one.
#[saga_tool]
pub async fn g24_merge_contacts(
    existing: Vec<GContact>,
    incoming: Vec<GContact>,
) -> Result<String, SagaError> {
    let mut added = Vec::new();
    let mut updated: Vec<(&GContact, &str)> = Vec::new();
    let mut skipped = 0u32;
    for c in &incoming {
        match (
            existing.iter().find(|e| e.email == c.email),
            c.phone.as_deref(),
        ) {
            (None, _) => {
                if elicit::<bool>(format!("Add {} <{}>?", c.name, c.email)).await? {
                    added.push(c.email.as_str());
                } else {
                    skipped += 1;
                }
            }
            (Some(e), Some(p)) if e.phone.as_deref() != Some(p) => {
                let take: bool = elicit(format!(
                    "Update {}'s phone {} -> {p}?",
                    e.name,
                    e.phone.as_deref().unwrap_or("none")
                ))
                .await?;
                if take {
                    updated.push((e, p));
                } else {
                    skipped += 1;
                }
            }
            (Some(_), _) => skipped += 1,
        }
    }
    if added.is_empty() && updated.is_empty() {
        return Ok(format!("nothing to merge ({skipped} skipped)"));
    }
    let ok: bool = elicit(format!(
        "Merge {} new and {} updated?",
        added.len(),
        updated.len()
    ))
    .await?;
    let changes: Vec<String> = updated
        .iter()
        .map(|(e, p)| format!("{}={p}", e.name))
        .collect();
    Ok(format!(
        "{ok}: +[{}] ~[{}] ({skipped} skipped)",
        added.join(","),
        changes.join(",")
    ))
}

fn g24_script() -> Script {
    Script::new(|_key, request| accept(json!({"value": !prompt_of(request).contains("dee")})))
}

#[tokio::test]
async fn g24_borrows_into_two_arguments_from_a_tuple_match_are_kept() {
    let existing = json!([
        {"name": "ann", "email": "a@x", "phone": "111"},
        {"name": "bob", "email": "b@x", "phone": null},
    ]);
    let outcome = differential(
        &g24_merge_contacts,
        plain!(plain::g24_merge_contacts),
        json!({
            "existing": existing.clone(),
            "incoming": [
                {"name": "ann", "email": "a@x", "phone": "111"},
                {"name": "bob", "email": "b@x", "phone": "222"},
                {"name": "cy", "email": "c@x", "phone": null},
                {"name": "dee", "email": "d@x", "phone": "444"},
            ],
        }),
        g24_script,
    )
    .await;
    assert_eq!(outcome.text(), "true: +[c@x] ~[bob=222] (2 skipped)");
    let outcome = differential(
        &g24_merge_contacts,
        plain!(plain::g24_merge_contacts),
        json!({
            "existing": existing,
            "incoming": [{"name": "ann", "email": "a@x", "phone": "111"}],
        }),
        g24_script,
    )
    .await;
    assert_eq!(outcome.text(), "nothing to merge (1 skipped)");
}
