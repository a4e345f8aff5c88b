use std::collections::BTreeMap;

use saga_runtime::prelude::*;
use serde_json::json;

use crate::harness::{Script, accept, differential, prompt_of, says};

// A held-out corpus: 24 tools written from the guide and the rustdoc of `#[saga_tool]`
// alone, each keeping borrows across its suspensions as ordinary async Rust allows, each
// against the plain function, sealed and opened at every suspension.

/// Whether a request is a sampling request (else an elicitation).
fn h_is_sample(request: &serde_json::Value) -> bool {
    request["method"].as_str() == Some("sampling/createMessage")
}

/// How many messages a sampling request carries.
fn h_message_count(request: &serde_json::Value) -> usize {
    request["params"]["messages"]
        .as_array()
        .map_or(0, |messages| messages.len())
}

// ---------------------------------------------------------------------------------------
// h01: deploys in stages.

const H_STAGES: &[(&str, u32)] = &[("canary", 5), ("half", 50), ("full", 100)];

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HService {
    pub name: String,
    pub region: String,
    pub healthy: bool,
}

/// Rolls a version out stage by stage: a loop over a constant of `(&str, u32)` pairs, a
/// filtered loop over the services inside it, a `&str` into an argument kept throughout.
#[saga_tool]
pub async fn h01_staged_deploy(
    services: Vec<HService>,
    version: String,
) -> Result<String, SagaError> {
    let ver: &str = version.trim();
    let mut log: Vec<String> = Vec::new();
    for (stage, pct) in H_STAGES {
        for svc in services.iter().filter(|s| s.healthy) {
            let go: bool = elicit(format!(
                "Roll {ver} of {} in {} to {stage} ({pct}%)?",
                svc.name, svc.region
            ))
            .await?;
            if !go {
                log.push(format!("halted {} at {stage}", svc.name));
                return Ok(log.join("; "));
            }
            log.push(format!("{}@{stage}", svc.name));
        }
        checkpoint().await;
    }
    Ok(format!("{ver}: {}", log.join("; ")))
}

fn h01_script(stop: &'static str) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            let halt = prompt.contains(&format!("of {stop} ")) && prompt.contains(" to full ");
            accept(json!({"value": !halt}))
        })
    }
}

#[tokio::test]
async fn h01_stages_roll_out_until_a_service_is_halted() {
    let arguments = json!({
        "services": [
            {"name": "api", "region": "eu", "healthy": true},
            {"name": "db", "region": "us", "healthy": true},
            {"name": "cache", "region": "eu", "healthy": false},
        ],
        "version": " 2.1 ",
    });
    let outcome = differential(
        &h01_staged_deploy,
        plain!(plain::h01_staged_deploy),
        arguments.clone(),
        h01_script("db"),
    )
    .await;
    assert_eq!(
        outcome.text(),
        "api@canary; db@canary; api@half; db@half; api@full; halted db at full"
    );
    let outcome = differential(
        &h01_staged_deploy,
        plain!(plain::h01_staged_deploy),
        arguments,
        h01_script("nobody"),
    )
    .await;
    assert_eq!(
        outcome.text(),
        "2.1: api@canary; db@canary; api@half; db@half; api@full; db@full"
    );
}

// ---------------------------------------------------------------------------------------
// h02: incident triage.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub enum HKind {
    Outage { service: String, minutes: u32 },
    Bug { component: String },
    Question(String),
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HIncident {
    pub id: u32,
    pub kind: HKind,
    pub owner: Option<String>,
}

/// Triage: a `match` on a borrowed enum inside a loop over `&incidents`, its bindings
/// kept across the question of their arm (one arm under a guard), beside a `&str` typed
/// local that is either a borrow of the item's `Option<String>` or a literal.
#[saga_tool]
pub async fn h02_triage(incidents: Vec<HIncident>) -> Result<String, SagaError> {
    let mut lines = Vec::new();
    for inc in &incidents {
        let owner: &str = inc.owner.as_deref().unwrap_or("unowned");
        match &inc.kind {
            HKind::Outage { service, minutes } if *minutes > 30 => {
                let page: bool =
                    elicit(format!("Page on-call for {service} (#{})?", inc.id)).await?;
                lines.push(format!(
                    "#{} outage {service} {minutes}m page={page} {owner}",
                    inc.id
                ));
            }
            HKind::Outage { service, .. } => lines.push(format!("#{} blip {service}", inc.id)),
            HKind::Bug { component } => {
                let prio: u32 = elicit(format!("Priority for the bug in {component}?")).await?;
                if prio == 0 {
                    continue;
                }
                lines.push(format!("#{} bug {component} p{prio} {owner}", inc.id));
            }
            HKind::Question(text) => {
                let answer: String = elicit(format!("Answer for {owner}: {text}")).await?;
                lines.push(format!("#{} q({}) {answer}", inc.id, text.len()));
            }
        }
    }
    Ok(lines.join("\n"))
}

fn h02_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        let value = if prompt.starts_with("Page") {
            json!(true)
        } else if prompt.starts_with("Priority") {
            json!(if prompt.contains("auth") { 2 } else { 0 })
        } else {
            json!("cache")
        };
        accept(json!({"value": value}))
    })
}

#[tokio::test]
async fn h02_match_bindings_on_a_borrowed_enum_are_kept_across_their_arms_question() {
    let outcome = differential(
        &h02_triage,
        plain!(plain::h02_triage),
        json!({"incidents": [
            {"id": 1, "kind": {"Outage": {"service": "api", "minutes": 45}}, "owner": "ann"},
            {"id": 2, "kind": {"Outage": {"service": "web", "minutes": 5}}, "owner": null},
            {"id": 3, "kind": {"Bug": {"component": "auth"}}, "owner": "bob"},
            {"id": 4, "kind": {"Bug": {"component": "ui"}}, "owner": null},
            {"id": 5, "kind": {"Question": "why slow?"}, "owner": null},
        ]}),
        h02_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        "#1 outage api 45m page=true ann\n#2 blip web\n#3 bug auth p2 bob\n#5 q(9) cache"
    );
}

// ---------------------------------------------------------------------------------------
// h03: an agent loop replaying a chat history.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HTurn {
    pub role: String,
    pub text: String,
}

/// An agent loop: an `Option<&str>` into the history, assigned by a filtered loop that
/// also pushes to another local, then kept across every model turn and question.
#[saga_tool]
pub async fn h03_agent_replay(history: Vec<HTurn>, goal: String) -> Result<String, SagaError> {
    let mut messages: Vec<SamplingMessage> = Vec::new();
    let mut last_user: Option<&str> = None;
    for turn in history.iter().filter(|t| !t.text.is_empty()) {
        if turn.role == "user" {
            messages.push(SamplingMessage::user(turn.text.clone()));
            last_user = Some(turn.text.as_str());
        } else {
            messages.push(SamplingMessage::assistant(turn.text.clone()));
        }
    }
    messages.push(SamplingMessage::user(format!("Goal: {goal}")));
    let mut notes: Vec<String> = Vec::new();
    for step in 0..4u32 {
        let reply = sample_messages(messages.clone()).max_tokens(200).await?;
        let text = reply.text().to_owned();
        if text.starts_with("DONE") {
            notes.push(text);
            break;
        }
        let ok: bool = elicit(format!(
            "Step {step}: {text}. Continue (last: {})?",
            last_user.unwrap_or("-")
        ))
        .await?;
        if !ok {
            return Ok(format!("stopped at {step}: {}", notes.join(" | ")));
        }
        messages.push(SamplingMessage::assistant(text.clone()));
        messages.push(SamplingMessage::user("go on"));
        notes.push(text);
    }
    Ok(format!(
        "{} (last user: {})",
        notes.join(" | "),
        last_user.unwrap_or("none")
    ))
}

fn h03_script(stop_at: &'static str) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            if h_is_sample(request) {
                let n = h_message_count(request);
                if n < 8 {
                    says(&format!("step{n}"))
                } else {
                    says(&format!("DONE at {n}"))
                }
            } else {
                accept(json!({"value": !prompt_of(request).starts_with(stop_at)}))
            }
        })
    }
}

#[tokio::test]
async fn h03_an_option_str_into_the_history_survives_every_turn() {
    let arguments = json!({
        "history": [
            {"role": "user", "text": "deploy api"},
            {"role": "assistant", "text": "which env?"},
            {"role": "user", "text": "staging"},
            {"role": "assistant", "text": ""},
        ],
        "goal": "ship it",
    });
    let outcome = differential(
        &h03_agent_replay,
        plain!(plain::h03_agent_replay),
        arguments.clone(),
        h03_script("never"),
    )
    .await;
    assert_eq!(
        outcome.text(),
        "step4 | step6 | DONE at 8 (last user: staging)"
    );
    let outcome = differential(
        &h03_agent_replay,
        plain!(plain::h03_agent_replay),
        arguments,
        h03_script("Step 1"),
    )
    .await;
    assert_eq!(outcome.text(), "stopped at 1: step4");
}

// ---------------------------------------------------------------------------------------
// h04: a shopping cart.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HItem {
    pub sku: String,
    pub title: String,
    pub cents: u32,
    pub stock: u32,
}

#[saga_fn]
async fn h_confirm_payment(lines: &[&str], total: u32) -> Result<bool, SagaError> {
    let summary = lines.join(", ");
    elicit::<bool>(format!("Pay {total} for {summary}?")).await
}

/// Checkout: a `Vec<&str>` of titles pushed (a `&String` coerced) in a filtered loop that
/// asks, an `Option<&str>` of the coupon, an `if let` over it that asks, then both given
/// to a `#[saga_fn]` taking `&[&str]` and read after it.
#[saga_tool]
pub async fn h04_checkout(cart: Vec<HItem>, coupon: Option<String>) -> Result<String, SagaError> {
    let mut chosen: Vec<&str> = Vec::new();
    let mut qtys: Vec<u32> = Vec::new();
    let mut total: u32 = 0;
    for item in cart.iter().filter(|i| i.stock > 0) {
        let qty: u32 = elicit(format!("How many {} ({} left)?", item.title, item.stock)).await?;
        if qty == 0 {
            continue;
        }
        let qty = qty.min(item.stock);
        chosen.push(&item.title);
        qtys.push(qty);
        total += qty * item.cents;
    }
    if chosen.is_empty() {
        return Ok("empty cart".to_owned());
    }
    let code: Option<&str> = coupon.as_deref();
    if let Some(code) = code {
        if elicit::<bool>(format!("Apply coupon {code} to {total}?")).await? {
            total -= total / 10;
        }
    }
    if !h_confirm_payment(&chosen, total).await? {
        return Ok(format!("abandoned {}", chosen.join("+")));
    }
    let lines: Vec<String> = chosen
        .iter()
        .zip(&qtys)
        .map(|(t, q)| format!("{q}x{t}"))
        .collect();
    Ok(format!(
        "paid {total} for {} with {}",
        lines.join(","),
        code.unwrap_or("no coupon")
    ))
}

fn h04_script(pay: bool) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            let value = if prompt.starts_with("How many lamp") {
                json!(2)
            } else if prompt.starts_with("How many mug") {
                json!(0)
            } else if prompt.starts_with("How many vase") {
                json!(4)
            } else if prompt.starts_with("Pay") {
                json!(pay)
            } else {
                json!(true)
            };
            accept(json!({"value": value}))
        })
    }
}

fn h04_cart() -> serde_json::Value {
    json!([
        {"sku": "a", "title": "lamp", "cents": 250, "stock": 3},
        {"sku": "b", "title": "rug", "cents": 1000, "stock": 0},
        {"sku": "c", "title": "mug", "cents": 400, "stock": 10},
        {"sku": "d", "title": "vase", "cents": 900, "stock": 1},
    ])
}

#[tokio::test]
async fn h04_titles_pushed_while_asking_reach_a_helper_and_the_result() {
    let outcome = differential(
        &h04_checkout,
        plain!(plain::h04_checkout),
        json!({"cart": h04_cart(), "coupon": "SAVE10"}),
        h04_script(true),
    )
    .await;
    assert_eq!(outcome.text(), "paid 1260 for 2xlamp,1xvase with SAVE10");
    let outcome = differential(
        &h04_checkout,
        plain!(plain::h04_checkout),
        json!({"cart": h04_cart()}),
        h04_script(false),
    )
    .await;
    assert_eq!(outcome.text(), "abandoned lamp+vase");
}

// ---------------------------------------------------------------------------------------
// h05: travel rebooking.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HFlight {
    pub code: String,
    pub from: String,
    pub to: String,
    pub seats: u32,
    pub depart: u32,
}

/// Rebooking: `let … else` over `find`, a typed tuple of two `&str` into it, a filtered
/// loop whose closure reads that borrow, and `Option<&HFlight>` set in the loop that asks,
/// then taken apart by another `let … else` whose `else` asks too.
#[saga_tool]
pub async fn h05_rebook(cancelled: String, flights: Vec<HFlight>) -> Result<String, SagaError> {
    let Some(origin) = flights.iter().find(|f| f.code == cancelled) else {
        return Ok(format!("{cancelled} not found"));
    };
    let route: (&str, &str) = (origin.from.as_str(), origin.to.as_str());
    let mut pick: Option<&HFlight> = None;
    for alt in flights
        .iter()
        .filter(|f| f.code != cancelled && f.from == origin.from)
    {
        if alt.seats == 0 {
            continue;
        }
        let take: bool = elicit(format!(
            "Rebook {}-{} on {} at {}?",
            route.0, route.1, alt.code, alt.depart
        ))
        .await?;
        if take {
            pick = Some(alt);
            break;
        }
    }
    let Some(pick) = pick else {
        let refund: bool =
            elicit(format!("No seat {}-{}: refund {cancelled}?", route.0, route.1)).await?;
        return Ok(format!("refund={refund}"));
    };
    let seat: String = elicit(format!("Seat on {} to {}?", pick.code, pick.to)).await?;
    Ok(format!(
        "{cancelled} -> {} ({} to {}) seat {seat}",
        pick.code, route.0, pick.to
    ))
}

fn h05_script(accept_code: &'static str) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            let value = if prompt.starts_with("Rebook") {
                json!(prompt.contains(&format!("on {accept_code} at")))
            } else if prompt.starts_with("Seat") {
                json!("12A")
            } else {
                json!(true)
            };
            accept(json!({"value": value}))
        })
    }
}

#[tokio::test]
async fn h05_a_flight_found_and_a_flight_picked_are_kept_across_questions() {
    let flights = json!([
        {"code": "LH1", "from": "FRA", "to": "JFK", "seats": 0, "depart": 900},
        {"code": "LH2", "from": "FRA", "to": "EWR", "seats": 0, "depart": 1000},
        {"code": "UA3", "from": "FRA", "to": "JFK", "seats": 4, "depart": 1400},
        {"code": "BA4", "from": "LHR", "to": "JFK", "seats": 9, "depart": 1500},
        {"code": "DL5", "from": "FRA", "to": "BOS", "seats": 2, "depart": 1600},
    ]);
    for (cancelled, code, text) in [
        ("LH1", "DL5", "LH1 -> DL5 (FRA to BOS) seat 12A"),
        ("LH1", "UA3", "LH1 -> UA3 (FRA to JFK) seat 12A"),
        ("LH1", "none", "refund=true"),
        ("XX9", "DL5", "XX9 not found"),
    ] {
        let outcome = differential(
            &h05_rebook,
            plain!(plain::h05_rebook),
            json!({"cancelled": cancelled, "flights": flights.clone()}),
            h05_script(code),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// h06: database migrations.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HMigration {
    pub id: u32,
    pub name: String,
    pub sql: Vec<String>,
}

/// Migrations: a typed `&[HMigration]` slice of the argument from a computed start, an
/// enumerated loop over it, an inner enumerated loop over each item's statements that
/// asks, a `checkpoint()` per migration, and an error returned from inside both loops.
#[saga_tool]
pub async fn h06_migrate(migrations: Vec<HMigration>, applied: u32) -> Result<String, SagaError> {
    let start = migrations
        .iter()
        .position(|m| m.id > applied)
        .unwrap_or(migrations.len());
    let pending: &[HMigration] = &migrations[start..];
    if pending.is_empty() {
        return Ok("up to date".to_owned());
    }
    let mut done: Vec<u32> = Vec::new();
    for (i, m) in pending.iter().enumerate() {
        for (n, stmt) in m.sql.iter().enumerate() {
            if stmt.starts_with("--") {
                continue;
            }
            if stmt.contains("DROP") {
                let ok: bool = elicit(format!(
                    "{} [{}/{}] #{n}: {stmt}?",
                    m.name,
                    i + 1,
                    pending.len()
                ))
                .await?;
                if !ok {
                    return Err(SagaError::msg(format!(
                        "refused {}#{n} after {done:?}",
                        m.name
                    )));
                }
            }
        }
        checkpoint().await;
        done.push(m.id);
    }
    let verify: String = elicit(format!(
        "Verify {} migrations ending {}?",
        done.len(),
        pending[pending.len() - 1].name
    ))
    .await?;
    Ok(format!("applied {done:?}: {verify}"))
}

fn h06_script(refuse: &'static str) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            if prompt.starts_with("Verify") {
                accept(json!({"value": "ok"}))
            } else {
                accept(json!({"value": !prompt.contains(refuse)}))
            }
        })
    }
}

#[tokio::test]
async fn h06_a_slice_of_pending_migrations_is_walked_across_checkpoints() {
    let migrations = json!([
        {"id": 1, "name": "init", "sql": ["CREATE TABLE a"]},
        {"id": 2, "name": "users", "sql": ["-- DROP old comment", "ALTER TABLE a"]},
        {"id": 3, "name": "cleanup", "sql": ["DROP TABLE tmp", "DROP INDEX i"]},
        {"id": 4, "name": "seed", "sql": ["INSERT INTO a"]},
    ]);
    for (applied, refuse, text) in [
        (1, "nothing", "applied [2, 3, 4]: ok"),
        (1, "INDEX", "refused cleanup#1 after [2]"),
        (9, "nothing", "up to date"),
    ] {
        let outcome = differential(
            &h06_migrate,
            plain!(plain::h06_migrate),
            json!({"migrations": migrations.clone(), "applied": applied}),
            h06_script(refuse),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// h07: code review with the client's model.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HHunk {
    pub line: u32,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HFile {
    pub path: String,
    pub hunks: Vec<HHunk>,
}

/// Review: a `Vec<(&str, u32)>` pushed in nested loops (the inner one `.rev()` over the
/// outer item's field) that sample each hunk, with a labelled `break` and a `continue`.
#[saga_tool]
pub async fn h07_review(files: Vec<HFile>, max_comments: usize) -> Result<String, SagaError> {
    let mut flagged: Vec<(&str, u32)> = Vec::new();
    'files: for file in &files {
        if file.path.ends_with(".lock") {
            continue;
        }
        for hunk in file.hunks.iter().rev() {
            let verdict = sample(format!("Review {}:{} {}", file.path, hunk.line, hunk.text))
                .max_tokens(50)
                .await?;
            if verdict.text().starts_with("FLAG") {
                flagged.push((file.path.as_str(), hunk.line));
                if flagged.len() >= max_comments {
                    break 'files;
                }
            }
        }
    }
    if flagged.is_empty() {
        return Ok("LGTM".to_owned());
    }
    let post: bool = elicit(format!("Post {} comments?", flagged.len())).await?;
    let spots: Vec<String> = flagged.iter().map(|(p, l)| format!("{p}:{l}")).collect();
    Ok(format!("post={post} {}", spots.join(" ")))
}

fn h07_script() -> Script {
    Script::new(|_key, request| {
        if h_is_sample(request) {
            if prompt_of(request).contains("unwrap()") {
                says("FLAG: panics")
            } else {
                says("fine")
            }
        } else {
            accept(json!({"value": true}))
        }
    })
}

#[tokio::test]
async fn h07_flagged_spots_pushed_while_sampling_are_found_again() {
    let files = json!([
        {"path": "Cargo.lock", "hunks": [{"line": 1, "text": "a.unwrap()"}]},
        {"path": "src/a.rs", "hunks": [
            {"line": 10, "text": "x.unwrap()"},
            {"line": 20, "text": "ok"},
            {"line": 30, "text": "y.unwrap()"},
        ]},
        {"path": "src/b.rs", "hunks": [{"line": 5, "text": "z.unwrap()"}]},
    ]);
    for (max, text) in [
        (5, "post=true src/a.rs:30 src/a.rs:10 src/b.rs:5"),
        (2, "post=true src/a.rs:30 src/a.rs:10"),
    ] {
        let outcome = differential(
            &h07_review,
            plain!(plain::h07_review),
            json!({"files": files.clone(), "max_comments": max}),
            h07_script,
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// h08: two approvals in one round.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HPerson {
    pub name: String,
    pub seniority: u32,
    pub email: String,
}

/// Approval: `let … else` over `max_by_key`, an untyped `Option<&HPerson>` from
/// `filter(..).min_by_key(..)` whose closure reads the first borrow, a title from
/// `lines().next().unwrap_or(..)`, all kept across a `join!` and one more question.
#[saga_tool]
pub async fn h08_dual_approval(
    change: String,
    reviewers: Vec<HPerson>,
) -> Result<String, SagaError> {
    let Some(lead) = reviewers.iter().max_by_key(|p| p.seniority) else {
        return Ok("no reviewers".to_owned());
    };
    let backup = reviewers
        .iter()
        .filter(|p| p.name != lead.name)
        .min_by_key(|p| p.seniority);
    let title = change.lines().next().unwrap_or("untitled");
    let (approved, note) = join!(
        elicit::<bool>(format!("{}: approve '{title}'?", lead.name)),
        elicit::<String>(format!("Note for {}?", lead.email)),
    );
    let note = note?;
    if approved? {
        return Ok(format!("{} approved '{title}': {note}", lead.name));
    }
    let Some(backup) = backup else {
        return Ok(format!("'{title}' rejected by {}, no backup", lead.name));
    };
    let second: bool = elicit(format!(
        "{} said no; {}, approve '{title}'?",
        lead.name, backup.name
    ))
    .await?;
    Ok(format!("'{title}' by {}: {second} ({note})", backup.name))
}

fn h08_script(lead_ok: bool) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            let value = if prompt.starts_with("Note") {
                json!("lgtm")
            } else if prompt.contains("said no") {
                json!(true)
            } else {
                json!(lead_ok)
            };
            accept(json!({"value": value}))
        })
    }
}

#[tokio::test]
async fn h08_borrows_found_by_iterator_methods_survive_a_join() {
    let arguments = json!({
        "change": "Bump tokio\n\nDetails follow.",
        "reviewers": [
            {"name": "ann", "seniority": 3, "email": "ann@x"},
            {"name": "bob", "seniority": 7, "email": "bob@x"},
            {"name": "cy", "seniority": 1, "email": "cy@x"},
        ],
    });
    for (lead_ok, text) in [
        (true, "bob approved 'Bump tokio': lgtm"),
        (false, "'Bump tokio' by cy: true (lgtm)"),
    ] {
        let outcome = differential(
            &h08_dual_approval,
            plain!(plain::h08_dual_approval),
            arguments.clone(),
            h08_script(lead_ok),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// h09: an itinerary by city.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HLeg {
    pub mode: String,
    pub hours: u32,
}

/// Itinerary: a loop over `&BTreeMap`, an inner `.zip(1u32..)` over the entry's `Vec`, a
/// `Vec<(&str, &HLeg)>` of the city key and the leg pushed while asking, then a second
/// loop over that vector of borrows that asks again.
#[saga_tool]
pub async fn h09_itinerary(
    trip: BTreeMap<String, Vec<HLeg>>,
    budget_hours: u32,
) -> Result<String, SagaError> {
    let mut slow: Vec<(&str, &HLeg)> = Vec::new();
    let mut spent: u32 = 0;
    for (city, legs) in &trip {
        for (leg, n) in legs.iter().zip(1u32..) {
            spent += leg.hours;
            if leg.hours > 5 {
                let keep: bool = elicit(format!(
                    "Leg {n} to {city} by {} takes {}h. Keep?",
                    leg.mode, leg.hours
                ))
                .await?;
                if !keep {
                    slow.push((city.as_str(), leg));
                }
            }
        }
    }
    let mut swaps = Vec::new();
    for (city, leg) in slow.iter() {
        let alt: String = elicit(format!("Instead of {} to {city}?", leg.mode)).await?;
        swaps.push(format!("{city}: {} -> {alt}", leg.mode));
    }
    let over = spent > budget_hours;
    Ok(format!("{spent}h (over: {over}); {}", swaps.join("; ")))
}

fn h09_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if prompt.starts_with("Instead") {
            accept(json!({"value": "car"}))
        } else {
            accept(json!({"value": prompt.contains("by train")}))
        }
    })
}

#[tokio::test]
async fn h09_map_keys_and_legs_kept_in_a_vector_are_walked_again() {
    let outcome = differential(
        &h09_itinerary,
        plain!(plain::h09_itinerary),
        json!({
            "trip": {
                "oslo": [
                    {"mode": "plane", "hours": 2},
                    {"mode": "ferry", "hours": 9},
                    {"mode": "train", "hours": 6},
                ],
                "berlin": [{"mode": "train", "hours": 4}, {"mode": "bus", "hours": 7}],
            },
            "budget_hours": 25,
        }),
        h09_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        "28h (over: true); berlin: bus -> car; oslo: ferry -> car"
    );
}

// ---------------------------------------------------------------------------------------
// h10: a changelog.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HCommit {
    pub sha: String,
    pub message: String,
    pub author: String,
}

/// Changelog: a loop over `.skip(1).take_while(..)`, two `Vec<&str>` pushed while asking
/// (a `.trim()` part and a coerced `&String`, the second checked with `contains`).
#[saga_tool]
pub async fn h10_changelog(commits: Vec<HCommit>) -> Result<String, SagaError> {
    let mut entries: Vec<&str> = Vec::new();
    let mut authors: Vec<&str> = Vec::new();
    for c in commits
        .iter()
        .skip(1)
        .take_while(|c| !c.message.starts_with("release"))
    {
        let short = &c.sha[..c.sha.len().min(7)];
        let include: bool = elicit(format!("Include {short} {}?", c.message.trim())).await?;
        if include {
            entries.push(c.message.trim());
            if !authors.contains(&c.author.as_str()) {
                authors.push(&c.author);
            }
        }
    }
    if entries.is_empty() {
        return Ok("nothing to release".to_owned());
    }
    let heading: String = elicit(format!(
        "Heading for {} entries by {}?",
        entries.len(),
        authors.len()
    ))
    .await?;
    let body: Vec<String> = entries.iter().map(|e| format!("- {e}")).collect();
    Ok(format!("{heading}\n{}\nby {}", body.join("\n"), authors.join(", ")))
}

fn h10_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if prompt.starts_with("Heading") {
            accept(json!({"value": "v1.3"}))
        } else {
            accept(json!({"value": !prompt.contains("chore")}))
        }
    })
}

#[tokio::test]
async fn h10_trimmed_messages_and_authors_pushed_while_asking_are_found_again() {
    let outcome = differential(
        &h10_changelog,
        plain!(plain::h10_changelog),
        json!({"commits": [
            {"sha": "aaaaaaaaaa", "message": "WIP", "author": "ann"},
            {"sha": "bbbbbbbbbb", "message": "fix: crash ", "author": "bob"},
            {"sha": "cccccccccc", "message": "feat: dark mode", "author": "ann"},
            {"sha": "dddddddddd", "message": "chore: deps", "author": "bob"},
            {"sha": "eeeeeeeeee", "message": "release 1.2", "author": "cy"},
            {"sha": "ffffffffff", "message": "after", "author": "cy"},
        ]}),
        h10_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        "v1.3\n- fix: crash\n- feat: dark mode\nby bob, ann"
    );
}

// ---------------------------------------------------------------------------------------
// h11: an on-call rota.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HRota {
    pub team: String,
    pub primary: Vec<String>,
    pub backup: Vec<String>,
}

/// On-call: a typed `Vec<&str>` collected through `flat_map` and `chain`, a filtered outer
/// loop, an inner loop over `.chain(..).map(|p| p.as_str())` of the outer item's fields
/// with a `break`, and a `Vec<(&str, &str)>` pushed there.
#[saga_tool]
pub async fn h11_oncall(rotas: Vec<HRota>, week: u32) -> Result<String, SagaError> {
    let everyone: Vec<&str> = rotas
        .iter()
        .flat_map(|r| r.primary.iter().chain(&r.backup))
        .map(|p| p.as_str())
        .collect();
    let mut assigned: Vec<(&str, &str)> = Vec::new();
    for rota in rotas.iter().filter(|r| !r.primary.is_empty()) {
        for person in rota
            .primary
            .iter()
            .chain(rota.backup.iter())
            .map(|p| p.as_str())
        {
            let free: bool =
                elicit(format!("Is {person} free for {} in week {week}?", rota.team)).await?;
            if free {
                assigned.push((rota.team.as_str(), person));
                break;
            }
        }
    }
    let publish: bool = elicit(format!(
        "Publish {} of {} people?",
        assigned.len(),
        everyone.len()
    ))
    .await?;
    if !publish {
        return Ok("draft".to_owned());
    }
    let lines: Vec<String> = assigned.iter().map(|(t, p)| format!("{t}={p}")).collect();
    Ok(lines.join(", "))
}

fn h11_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        let busy = ["Is ann ", "Is eve ", "Is fay "]
            .iter()
            .any(|b| prompt.starts_with(b));
        accept(json!({"value": !busy}))
    })
}

#[tokio::test]
async fn h11_chained_and_mapped_loops_over_an_items_fields_resume() {
    let outcome = differential(
        &h11_oncall,
        plain!(plain::h11_oncall),
        json!({
            "rotas": [
                {"team": "core", "primary": ["ann", "bob"], "backup": ["cy"]},
                {"team": "web", "primary": [], "backup": ["dee"]},
                {"team": "data", "primary": ["eve"], "backup": ["fay", "gus"]},
            ],
            "week": 7,
        }),
        h11_script,
    )
    .await;
    assert_eq!(outcome.text(), "core=bob, data=gus");
}

// ---------------------------------------------------------------------------------------
// h12: packing bags.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HThing {
    pub name: String,
    pub grams: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HBag {
    pub label: String,
    pub things: Vec<HThing>,
}

fn h_with_things(bag: &HBag) -> impl Iterator<Item = (&HBag, &HThing)> {
    bag.things.iter().map(move |thing| (bag, thing))
}

/// Packing: one `for` over `flat_map` of each bag's things paired with their bag (a tuple
/// of two borrows as the item), a `continue` before the question, and a
/// `Vec<(&str, &str)>` of fields of both pushed after it.
#[saga_tool]
pub async fn h12_pack(bags: Vec<HBag>, limit: u32) -> Result<String, SagaError> {
    let mut left_behind: Vec<(&str, &str)> = Vec::new();
    let mut weight: u32 = 0;
    // A fn item, not a closure: a closure here trips rustc's `Send` check of the plain
    // async fn ("FnOnce is not general enough", rust-lang/rust#64552), as written alone.
    for (bag, thing) in bags.iter().flat_map(h_with_things) {
        if weight + thing.grams <= limit {
            weight += thing.grams;
            continue;
        }
        let squeeze: bool = elicit(format!(
            "{} is over by {}g; squeeze {} in?",
            bag.label,
            weight + thing.grams - limit,
            thing.name
        ))
        .await?;
        if squeeze {
            weight += thing.grams;
        } else {
            left_behind.push((bag.label.as_str(), thing.name.as_str()));
        }
    }
    let note: String = elicit(format!(
        "Note for {} items left ({weight}g packed)?",
        left_behind.len()
    ))
    .await?;
    let list: Vec<String> = left_behind
        .iter()
        .map(|(b, t)| format!("{t} from {b}"))
        .collect();
    Ok(format!("{weight}g; left: {}; {note}", list.join(", ")))
}

fn h12_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if prompt.starts_with("Note") {
            accept(json!({"value": "ok"}))
        } else {
            accept(json!({"value": prompt.contains("jacket")}))
        }
    })
}

#[tokio::test]
async fn h12_a_flat_mapped_loop_of_pairs_of_borrows_resumes() {
    let outcome = differential(
        &h12_pack,
        plain!(plain::h12_pack),
        json!({
            "bags": [
                {"label": "day", "things": [
                    {"name": "water", "grams": 600}, {"name": "jacket", "grams": 500}]},
                {"label": "tech", "things": [
                    {"name": "laptop", "grams": 1200}, {"name": "cable", "grams": 100}]},
            ],
            "limit": 1000,
        }),
        h12_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        "1100g; left: laptop from tech, cable from tech; ok"
    );
}

// ---------------------------------------------------------------------------------------
// h13: refunds by payment method.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub enum HPay {
    Card { brand: String, last4: String },
    Invoice { email: String, days: u32 },
    Voucher(String),
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HOrder {
    pub id: String,
    pub cents: i64,
    pub payment: HPay,
}

/// Refund: a typed `&str` from `as_deref().map(str::trim).unwrap_or(..)`, an `if let` on a
/// borrowed enum whose bindings are kept across two questions and an early `return`,
/// then a typed `&str` chosen by a `match` (a `&String` coerced and an `.as_str()`).
#[saga_tool]
pub async fn h13_refund(order: HOrder, reason: Option<String>) -> Result<String, SagaError> {
    let why: &str = reason.as_deref().map(str::trim).unwrap_or("no reason");
    if let HPay::Card { brand, last4 } = &order.payment {
        let amount: i64 = elicit(format!(
            "Refund how much of {} to {brand} *{last4} ({why})?",
            order.cents
        ))
        .await?;
        if amount <= 0 || amount > order.cents {
            return Err(SagaError::msg(format!("bad amount {amount} for {}", order.id)));
        }
        let sure: bool = elicit(format!("Send {amount} to {brand} *{last4}?")).await?;
        return Ok(format!(
            "{}: {amount} to {brand} *{last4} {sure} ({why})",
            order.id
        ));
    }
    let target: &str = match &order.payment {
        HPay::Invoice { email, .. } => email,
        HPay::Voucher(code) => code.as_str(),
        HPay::Card { .. } => unreachable!(),
    };
    let ok: bool = elicit(format!("Credit {} to {target}?", order.cents)).await?;
    Ok(format!("{}: credit {ok} to {target} ({why})", order.id))
}

fn h13_script(amount: i64) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            if prompt.starts_with("Refund how much") {
                accept(json!({"value": amount}))
            } else {
                accept(json!({"value": true}))
            }
        })
    }
}

#[tokio::test]
async fn h13_if_let_and_match_bindings_on_a_borrowed_enum_are_kept() {
    for (order, reason, amount, text) in [
        (
            json!({"id": "o1", "cents": 5000, "payment": {"Card": {"brand": "visa", "last4": "4242"}}}),
            json!(" damaged "),
            1500,
            "o1: 1500 to visa *4242 true (damaged)",
        ),
        (
            json!({"id": "o1", "cents": 5000, "payment": {"Card": {"brand": "visa", "last4": "4242"}}}),
            json!(null),
            9999,
            "bad amount 9999 for o1",
        ),
        (
            json!({"id": "o2", "cents": 5000, "payment": {"Invoice": {"email": "a@b.c", "days": 30}}}),
            json!(null),
            0,
            "o2: credit true to a@b.c (no reason)",
        ),
        (
            json!({"id": "o3", "cents": 700, "payment": {"Voucher": "XMAS"}}),
            json!("gift"),
            0,
            "o3: credit true to XMAS (gift)",
        ),
    ] {
        let outcome = differential(
            &h13_refund,
            plain!(plain::h13_refund),
            json!({"order": order, "reason": reason}),
            h13_script(amount),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// h14: a welcome message (small).

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HUser {
    pub display_name: String,
    pub locale: String,
}

/// Small: a typed `&str` of an argument's field (a `&String` coerced), and an untyped
/// `&str` from `split('-').next().unwrap_or(..)`, both read after the question.
#[saga_tool]
pub async fn h14_welcome(user: HUser) -> Result<String, SagaError> {
    let name: &str = &user.display_name;
    let lang = user.locale.split('-').next().unwrap_or("en");
    let ok: bool = elicit(format!("Send a welcome to {name} in {lang}?")).await?;
    Ok(format!("{name}/{lang}: {ok}"))
}

#[tokio::test]
async fn h14_texts_of_an_arguments_fields_are_kept() {
    let outcome = differential(
        &h14_welcome,
        plain!(plain::h14_welcome),
        json!({"user": {"display_name": "Zoë", "locale": "de-AT"}}),
        || Script::new(|_key, _request| accept(json!({"value": true}))),
    )
    .await;
    assert_eq!(outcome.text(), "Zoë/de: true");
}

// ---------------------------------------------------------------------------------------
// h15: a stand-up order (small).

/// Small: `let … else` over a tuple of `first()` and `last()`, kept across a
/// `checkpoint()` and a `join!` of two questions.
#[saga_tool]
pub async fn h15_standup(names: Vec<String>) -> Result<String, SagaError> {
    let (Some(first), Some(last)) = (names.first(), names.last()) else {
        return Ok("nobody".to_owned());
    };
    checkpoint().await;
    let (topic, minutes) = join!(
        elicit::<String>(format!("{first} starts, {last} ends; topic?")),
        elicit::<u32>(format!("Minutes for {} people?", names.len()))
    );
    Ok(format!("{first}..{last}: {} for {}m", topic?, minutes?))
}

#[tokio::test]
async fn h15_accessor_borrows_bound_by_let_else_survive_a_join() {
    let script = || {
        Script::new(|_key, request| {
            if prompt_of(request).starts_with("Minutes") {
                accept(json!({"value": 15}))
            } else {
                accept(json!({"value": "infra"}))
            }
        })
    };
    let outcome = differential(
        &h15_standup,
        plain!(plain::h15_standup),
        json!({"names": ["ann", "bob", "cy"]}),
        script,
    )
    .await;
    assert_eq!(outcome.text(), "ann..cy: infra for 15m");
    let outcome = differential(
        &h15_standup,
        plain!(plain::h15_standup),
        json!({"names": []}),
        script,
    )
    .await;
    assert_eq!(outcome.text(), "nobody");
}

// ---------------------------------------------------------------------------------------
// h16: sprint planning.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HTicket {
    pub key: String,
    pub summary: String,
    pub points: u32,
}

/// Sprint: `while let Some(t) = backlog.get(i)` with `i += 1` before the question, the
/// ticket kept across it and pushed into a `Vec<&HTicket>` read after the last question.
#[saga_tool]
pub async fn h16_sprint(backlog: Vec<HTicket>, capacity: u32) -> Result<String, SagaError> {
    let mut i = 0;
    let mut used = 0;
    let mut taken: Vec<&HTicket> = Vec::new();
    while let Some(t) = backlog.get(i) {
        i += 1;
        if used + t.points > capacity {
            continue;
        }
        let take: bool =
            elicit(format!("Take {} ({} pts): {}?", t.key, t.points, t.summary)).await?;
        if take {
            used += t.points;
            taken.push(t);
        }
    }
    let goal: String = elicit(format!("Sprint goal for {used}/{capacity} points?")).await?;
    let keys: Vec<&str> = taken.iter().map(|t| t.key.as_str()).collect();
    Ok(format!("{goal}: {}", keys.join(" ")))
}

fn h16_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if prompt.starts_with("Sprint goal") {
            accept(json!({"value": "ship"}))
        } else {
            accept(json!({"value": !prompt.contains("docs")}))
        }
    })
}

#[tokio::test]
async fn h16_a_borrow_from_get_with_a_moving_index_is_kept() {
    let outcome = differential(
        &h16_sprint,
        plain!(plain::h16_sprint),
        json!({
            "backlog": [
                {"key": "A-1", "summary": "login", "points": 5},
                {"key": "A-2", "summary": "logout", "points": 5},
                {"key": "A-3", "summary": "typo", "points": 2},
                {"key": "A-4", "summary": "docs", "points": 1},
            ],
            "capacity": 8,
        }),
        h16_script,
    )
    .await;
    assert_eq!(outcome.text(), "ship: A-1 A-3");
}

// ---------------------------------------------------------------------------------------
// h17: product variants through a helper.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HProduct {
    pub name: String,
    pub variants: Vec<String>,
}

#[saga_fn]
async fn h_choose(options: &[String], what: &str) -> Result<Option<usize>, SagaError> {
    if options.len() < 2 {
        return Ok(if options.is_empty() { None } else { Some(0) });
    }
    let at: u32 = elicit(format!("Which {what}: {}?", options.join("/"))).await?;
    let at = at as usize;
    if at >= options.len() {
        let retry: u32 = elicit(format!("No {what} #{at}; pick 0..{}", options.len())).await?;
        return Ok(options.get(retry as usize).map(|_| retry as usize));
    }
    Ok(Some(at))
}

/// Variants: a `#[saga_fn]` given `&[String]` and `&str` of the loop's item, which reads
/// both after its own questions; `let … else` on its answer with `continue`; a
/// `&String` at that index kept across a question; a `Vec<(&str, &str)>` pushed.
#[saga_tool]
pub async fn h17_variants(products: Vec<HProduct>) -> Result<String, SagaError> {
    let mut picks: Vec<(&str, &str)> = Vec::new();
    for p in &products {
        let Some(idx) = h_choose(&p.variants, &p.name).await? else {
            continue;
        };
        let variant: &String = &p.variants[idx];
        let ok: bool = elicit(format!("Add {} in {variant}?", p.name)).await?;
        if ok {
            picks.push((p.name.as_str(), variant.as_str()));
        }
    }
    let done: bool = elicit(format!("Order {} items?", picks.len())).await?;
    let list: Vec<String> = picks.iter().map(|(n, v)| format!("{n}:{v}")).collect();
    Ok(format!("{done} {}", list.join(",")))
}

fn h17_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        let value = if prompt.starts_with("Which shirt") {
            json!(1)
        } else if prompt.starts_with("Which sock") {
            json!(5)
        } else if prompt.starts_with("No sock") {
            json!(1)
        } else if prompt.starts_with("Add") {
            json!(!prompt.contains("sock"))
        } else {
            json!(true)
        };
        accept(json!({"value": value}))
    })
}

#[tokio::test]
async fn h17_a_helper_reading_borrowed_parameters_after_asking() {
    let outcome = differential(
        &h17_variants,
        plain!(plain::h17_variants),
        json!({"products": [
            {"name": "shirt", "variants": ["S", "M", "L"]},
            {"name": "mug", "variants": []},
            {"name": "cap", "variants": ["one"]},
            {"name": "sock", "variants": ["red", "blue"]},
        ]}),
        h17_script,
    )
    .await;
    assert_eq!(outcome.text(), "true shirt:M,cap:one");
}

// ---------------------------------------------------------------------------------------
// h18: bisecting builds.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HBuild {
    pub id: u32,
    pub commit: String,
}

/// Bisect: `&builds[mid]` in a `while` whose bounds change, kept across the question, then
/// `let … else` over `builds.get(lo)` with the `mut` index, kept across the last one.
#[saga_tool]
pub async fn h18_bisect(builds: Vec<HBuild>) -> Result<String, SagaError> {
    let mut lo = 0;
    let mut hi = builds.len();
    let mut log: Vec<String> = Vec::new();
    while lo < hi {
        let mid = (lo + hi) / 2;
        let b = &builds[mid];
        let bad: bool = elicit(format!("Is build {} ({}) broken?", b.id, b.commit)).await?;
        log.push(format!("{}={}", b.id, if bad { "bad" } else { "good" }));
        if bad {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let Some(culprit) = builds.get(lo) else {
        return Ok(format!("all good: {}", log.join(" ")));
    };
    let revert: bool = elicit(format!("Revert {}?", culprit.commit)).await?;
    Ok(format!(
        "first bad {} revert={revert} [{}]",
        culprit.id,
        log.join(" ")
    ))
}

fn h18_script(first_bad: u32) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            if prompt.starts_with("Revert") {
                return accept(json!({"value": true}));
            }
            let id: u32 = prompt
                .split_whitespace()
                .nth(2)
                .and_then(|id| id.parse().ok())
                .expect("a build id");
            accept(json!({"value": id >= first_bad}))
        })
    }
}

#[tokio::test]
async fn h18_an_element_at_a_computed_index_is_kept_while_bisecting() {
    let builds = json!([
        {"id": 1, "commit": "c1"}, {"id": 2, "commit": "c2"}, {"id": 3, "commit": "c3"},
        {"id": 4, "commit": "c4"}, {"id": 5, "commit": "c5"}, {"id": 6, "commit": "c6"},
    ]);
    for (first_bad, text) in [
        (4, "first bad 4 revert=true [4=bad 2=good 3=good]"),
        (99, "all good: 4=good 6=good"),
    ] {
        let outcome = differential(
            &h18_bisect,
            plain!(plain::h18_bisect),
            json!({"builds": builds.clone()}),
            h18_script(first_bad),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// h19: grocery substitutions.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HGrocery {
    pub item: String,
    pub in_stock: bool,
    pub substitutes: Vec<String>,
}

/// Substitutions: a typed `&str` from `split_whitespace().next().unwrap_or(..)`, a
/// filtered outer loop labelled for `continue 'items` from an enumerated inner loop that
/// asks, and a `Vec<(&str, Option<&str>)>` pushed in both loops.
#[saga_tool]
pub async fn h19_substitutions(
    order: Vec<HGrocery>,
    customer: String,
) -> Result<String, SagaError> {
    let who: &str = customer.split_whitespace().next().unwrap_or("customer");
    let mut swaps: Vec<(&str, Option<&str>)> = Vec::new();
    'items: for g in order.iter().filter(|g| !g.in_stock) {
        for (rank, sub) in g.substitutes.iter().enumerate() {
            if rank >= 2 {
                break;
            }
            let ok: bool = elicit(format!("{who}, swap {} for {sub}?", g.item)).await?;
            if ok {
                swaps.push((g.item.as_str(), Some(sub.as_str())));
                continue 'items;
            }
        }
        swaps.push((g.item.as_str(), None));
    }
    if swaps.is_empty() {
        return Ok(format!("{who}: all in stock"));
    }
    let tip: u32 = elicit(format!("Tip for {} swaps, {who}?", swaps.len())).await?;
    let text: Vec<String> = swaps
        .iter()
        .map(|(item, sub)| format!("{item}->{}", sub.unwrap_or("refund")))
        .collect();
    Ok(format!("{who} tip {tip}: {}", text.join(", ")))
}

fn h19_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if prompt.starts_with("Tip") {
            accept(json!({"value": 5}))
        } else {
            accept(json!({"value": prompt.contains("soy")}))
        }
    })
}

#[tokio::test]
async fn h19_pairs_of_a_text_and_an_optional_text_pushed_in_nested_loops() {
    let outcome = differential(
        &h19_substitutions,
        plain!(plain::h19_substitutions),
        json!({
            "order": [
                {"item": "milk", "in_stock": false,
                 "substitutes": ["oat milk", "soy milk", "rice milk"]},
                {"item": "bread", "in_stock": true, "substitutes": []},
                {"item": "eggs", "in_stock": false, "substitutes": ["tofu"]},
                {"item": "basil", "in_stock": false, "substitutes": []},
            ],
            "customer": "Dana Scully",
        }),
        h19_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        "Dana tip 5: milk->soy milk, eggs->refund, basil->refund"
    );
    let outcome = differential(
        &h19_substitutions,
        plain!(plain::h19_substitutions),
        json!({"order": [{"item": "tea", "in_stock": true, "substitutes": []}], "customer": ""}),
        h19_script,
    )
    .await;
    assert_eq!(outcome.text(), "customer: all in stock");
}

// ---------------------------------------------------------------------------------------
// h20: a configuration diff.

/// Config diff: a loop over `old.keys().chain(new.keys().filter(..))` of two borrowed
/// `BTreeMap`s, a `match` on a tuple of two `get`s whose arms ask (one under a guard,
/// two `continue`), and a `Vec<&str>` of the keys pushed after the question.
#[saga_tool]
pub async fn h20_config_diff(
    old: BTreeMap<String, String>,
    new: BTreeMap<String, String>,
) -> Result<String, SagaError> {
    let mut accepted: Vec<&str> = Vec::new();
    let mut rejected = 0u32;
    for key in old
        .keys()
        .chain(new.keys().filter(|k| !old.contains_key(k.as_str())))
    {
        let ok: bool = match (old.get(key), new.get(key)) {
            (Some(a), Some(b)) if a == b => continue,
            (Some(a), Some(b)) => elicit(format!("Change {key}: {a} -> {b}?")).await?,
            (Some(a), None) => elicit(format!("Remove {key} (was {a})?")).await?,
            (None, Some(b)) => elicit(format!("Add {key} = {b}?")).await?,
            (None, None) => continue,
        };
        if ok {
            accepted.push(key);
        } else {
            rejected += 1;
        }
    }
    let apply: bool = elicit(format!(
        "Apply {} changes ({rejected} rejected)?",
        accepted.len()
    ))
    .await?;
    Ok(format!("{apply}: {}", accepted.join(",")))
}

fn h20_script() -> Script {
    Script::new(|_key, request| {
        accept(json!({"value": !prompt_of(request).starts_with("Remove")}))
    })
}

#[tokio::test]
async fn h20_a_chain_over_two_maps_keys_resumes_with_its_key() {
    let outcome = differential(
        &h20_config_diff,
        plain!(plain::h20_config_diff),
        json!({
            "old": {"a": "1", "b": "2", "c": "3"},
            "new": {"a": "1", "b": "5", "d": "4"},
        }),
        h20_script,
    )
    .await;
    assert_eq!(outcome.text(), "true: b,d");
}

// ---------------------------------------------------------------------------------------
// h21: screening candidates.

const H_QUESTIONS: &[&str] = &[
    "Why this team?",
    "Hardest bug you fixed?",
    "How do you review code?",
];

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HCandidate {
    pub name: String,
    pub role: String,
}

/// Screening: a loop over the candidates, an inner loop over a constant `&[&str]` by value
/// whose item is read after the question (in a sample), and `best = Some(c)` in the outer
/// loop, taken apart by `let … else` and kept across the offer.
#[saga_tool]
pub async fn h21_screen(candidates: Vec<HCandidate>, pass_mark: u32) -> Result<String, SagaError> {
    let mut best: Option<&HCandidate> = None;
    let mut best_score = 0u32;
    for c in candidates.iter() {
        let mut score = 0u32;
        for q in H_QUESTIONS {
            let answer: String = elicit(format!("{} ({}): {q}", c.name, c.role)).await?;
            if answer.trim().is_empty() || answer == "pass" {
                continue;
            }
            let grade = sample(format!("Grade 0-9 for '{q}': {answer}"))
                .max_tokens(2)
                .await?;
            score += grade.text().trim().parse::<u32>().unwrap_or(0);
        }
        if score >= pass_mark && score > best_score {
            best = Some(c);
            best_score = score;
        }
    }
    let Some(best) = best else {
        return Ok("no one passed".to_owned());
    };
    let offer: bool = elicit(format!(
        "Offer {} the {} role ({best_score})?",
        best.name, best.role
    ))
    .await?;
    Ok(format!("{}: {best_score} offer={offer}", best.name))
}

fn h21_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if h_is_sample(request) {
            return says(&prompt[prompt.len() - 1..]);
        }
        let value = if prompt.starts_with("Offer") {
            json!(true)
        } else if prompt.starts_with("ann") {
            json!("a6")
        } else if prompt.starts_with("bob") {
            json!(if prompt.contains("bug") { "a9" } else { "a4" })
        } else {
            json!("pass")
        };
        accept(json!({"value": value}))
    })
}

#[tokio::test]
async fn h21_the_best_candidate_is_kept_across_samples_and_the_offer() {
    let candidates = json!([
        {"name": "ann", "role": "dev"},
        {"name": "bob", "role": "ops"},
        {"name": "cy", "role": "dev"},
    ]);
    for (pass_mark, text) in [(15, "ann: 18 offer=true"), (20, "no one passed")] {
        let outcome = differential(
            &h21_screen,
            plain!(plain::h21_screen),
            json!({"candidates": candidates.clone(), "pass_mark": pass_mark}),
            h21_script,
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// h22: handing a conversation off.

#[saga_fn]
async fn h_summarize(turns: &[HTurn], focus: &str) -> Result<String, SagaError> {
    let mut messages: Vec<SamplingMessage> = turns
        .iter()
        .map(|t| {
            if t.role == "user" {
                SamplingMessage::user(t.text.clone())
            } else {
                SamplingMessage::assistant(t.text.clone())
            }
        })
        .collect();
    messages.push(SamplingMessage::user(format!("Summarise, focusing on {focus}")));
    let first = sample_messages(messages).max_tokens(100).await?;
    if first.text().len() <= 40 {
        return Ok(first.text().to_owned());
    }
    let shorter = sample(format!(
        "Shorten to 40 chars ({} turns, {focus}): {}",
        turns.len(),
        first.text()
    ))
    .await?;
    Ok(shorter.text().to_owned())
}

/// Hand-off: two typed `&[HTurn]` slices of the history split at a computed index, a typed
/// `Option<&HTurn>` from `.iter().rev().find(..)` on one of them, kept across a
/// `#[saga_fn]` (given the other slice and a literal, reading both after it samples) in
/// an `if`'s `else`, and a question.
#[saga_tool]
pub async fn h22_handoff(history: Vec<HTurn>, keep_last: usize) -> Result<String, SagaError> {
    let cut = history.len().saturating_sub(keep_last);
    let old: &[HTurn] = &history[..cut];
    let recent: &[HTurn] = &history[cut..];
    let last_user: Option<&HTurn> = recent.iter().rev().find(|t| t.role == "user");
    let summary = if old.is_empty() {
        String::from("(nothing earlier)")
    } else {
        h_summarize(old, "decisions").await?
    };
    let approve: bool = elicit(format!(
        "Hand off with '{summary}' and {} recent turns?",
        recent.len()
    ))
    .await?;
    if !approve {
        return Ok("kept".to_owned());
    }
    let ask = last_user.map(|t| t.text.as_str()).unwrap_or("nothing");
    Ok(format!("{summary} | {} recent | open: {ask}", recent.len()))
}

fn h22_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if h_is_sample(request) {
            if prompt.starts_with("Summarise") {
                says("The user wants the api deployed to prod after 5pm today.")
            } else {
                says("api to prod after 5pm")
            }
        } else {
            accept(json!({"value": true}))
        }
    })
}

#[tokio::test]
async fn h22_slices_of_the_history_are_kept_across_a_helper_that_samples() {
    let history = json!([
        {"role": "user", "text": "deploy api"},
        {"role": "assistant", "text": "which env?"},
        {"role": "user", "text": "prod, but after 5pm"},
        {"role": "assistant", "text": "ok, scheduled"},
        {"role": "user", "text": "also rotate keys"},
        {"role": "assistant", "text": "noted"},
    ]);
    for (keep_last, text) in [
        (3, "api to prod after 5pm | 3 recent | open: also rotate keys"),
        (10, "(nothing earlier) | 6 recent | open: also rotate keys"),
    ] {
        let outcome = differential(
            &h22_handoff,
            plain!(plain::h22_handoff),
            json!({"history": history.clone(), "keep_last": keep_last}),
            h22_script,
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// h23: reordering stock.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HStock {
    pub sku: String,
    pub on_hand: i64,
    pub min: i64,
    pub supplier: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HSupplier {
    pub id: u32,
    pub name: String,
    pub lead_days: u32,
}

/// Reorder: in a filtered loop, an untyped borrow from
/// `find(..).ok_or_else(..)?` into another argument, kept across the question.
#[saga_tool]
pub async fn h23_reorder(
    stock: Vec<HStock>,
    suppliers: Vec<HSupplier>,
) -> Result<String, SagaError> {
    let mut orders: Vec<String> = Vec::new();
    for s in stock.iter().filter(|s| s.on_hand < s.min) {
        let supplier = suppliers
            .iter()
            .find(|sup| sup.id == s.supplier)
            .ok_or_else(|| SagaError::msg(format!("no supplier {} for {}", s.supplier, s.sku)))?;
        let qty: i64 = elicit(format!(
            "Order how many {} from {} ({} days)?",
            s.sku, supplier.name, supplier.lead_days
        ))
        .await?;
        if qty <= 0 {
            continue;
        }
        orders.push(format!("{qty}x{}@{}", s.sku, supplier.name));
    }
    let send: bool = elicit(format!("Send {} orders?", orders.len())).await?;
    Ok(format!("{send}: {}", orders.join(" ")))
}

fn h23_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        let value = if prompt.starts_with("Send") {
            json!(true)
        } else if prompt.contains("bolt") {
            json!(20)
        } else if prompt.contains("cog") {
            json!(4)
        } else {
            json!(0)
        };
        accept(json!({"value": value}))
    })
}

#[tokio::test]
async fn h23_a_supplier_found_with_question_mark_is_kept_across_the_question() {
    let suppliers = json!([
        {"id": 1, "name": "acme", "lead_days": 3},
        {"id": 2, "name": "globex", "lead_days": 10},
    ]);
    for (cog_supplier, text) in [
        (2, "true: 20xbolt@acme 4xcog@globex"),
        (9, "no supplier 9 for cog"),
    ] {
        let outcome = differential(
            &h23_reorder,
            plain!(plain::h23_reorder),
            json!({
                "stock": [
                    {"sku": "bolt", "on_hand": 5, "min": 10, "supplier": 1},
                    {"sku": "nut", "on_hand": 50, "min": 10, "supplier": 1},
                    {"sku": "gear", "on_hand": 0, "min": 2, "supplier": 2},
                    {"sku": "cog", "on_hand": 1, "min": 3, "supplier": cog_supplier},
                ],
                "suppliers": suppliers.clone(),
            }),
            h23_script,
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
}

// ---------------------------------------------------------------------------------------
// h24: rolling a service back.

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HRelease {
    pub tag: String,
    pub healthy: bool,
    pub notes: String,
}

/// Rollback: `let … else` over `last()`, a loop over `.rev().skip(1)` that asks with a
/// `continue` and a `break`, `Option<&HRelease>` set there, taken apart by `let … else`
/// whose `else` returns an error, kept across a `checkpoint()` and a question.
#[saga_tool]
pub async fn h24_rollback(service: String, releases: Vec<HRelease>) -> Result<String, SagaError> {
    let Some(current) = releases.last() else {
        return Ok(format!("{service} was never released"));
    };
    let mut target: Option<&HRelease> = None;
    for r in releases.iter().rev().skip(1) {
        if !r.healthy {
            continue;
        }
        let headline = r.notes.lines().next().unwrap_or("");
        let pick: bool = elicit(format!(
            "Roll {service} back from {} to {} ({headline})?",
            current.tag, r.tag
        ))
        .await?;
        if pick {
            target = Some(r);
            break;
        }
    }
    let Some(target) = target else {
        return Err(SagaError::msg(format!(
            "no healthy release before {}",
            current.tag
        )));
    };
    checkpoint().await;
    let confirm: String = elicit(format!("Type {} to confirm", target.tag)).await?;
    if confirm != target.tag {
        return Ok(format!(
            "{service}: confirmation mismatch, staying on {}",
            current.tag
        ));
    }
    Ok(format!("{service}: {} -> {}", current.tag, target.tag))
}

fn h24_script(pick: &'static str) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            if prompt.starts_with("Type") {
                let tag = prompt.split_whitespace().nth(1).unwrap_or_default();
                accept(json!({"value": tag}))
            } else {
                accept(json!({"value": prompt.contains(&format!("to {pick} ("))}))
            }
        })
    }
}

#[tokio::test]
async fn h24_the_release_picked_walking_back_is_kept_across_a_checkpoint() {
    let arguments = json!({
        "service": "api",
        "releases": [
            {"tag": "v1", "healthy": true, "notes": "first\nmore"},
            {"tag": "v2", "healthy": false, "notes": "bad"},
            {"tag": "v3", "healthy": true, "notes": "fixes\nand more"},
            {"tag": "v4", "healthy": true, "notes": "current"},
        ],
    });
    for (pick, text) in [
        ("v1", "api: v4 -> v1"),
        ("v3", "api: v4 -> v3"),
        ("v9", "no healthy release before v4"),
    ] {
        let outcome = differential(
            &h24_rollback,
            plain!(plain::h24_rollback),
            arguments.clone(),
            h24_script(pick),
        )
        .await;
        assert_eq!(outcome.text(), text);
    }
    let outcome = differential(
        &h24_rollback,
        plain!(plain::h24_rollback),
        json!({"service": "db", "releases": []}),
        h24_script("v1"),
    )
    .await;
    assert_eq!(outcome.text(), "db was never released");
}
