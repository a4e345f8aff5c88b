use std::collections::BTreeMap;

use saga_runtime::prelude::*;
use saga_runtime::rmcp::model::{ClientCapabilities, ElicitationCapability};
use serde_json::{Value, json};

use crate::harness::{Script, accept, differential, differential_in, machine, prompt_of, says};

// ---------------------------------------------------------------------------------------
// Script helpers

/// The JSON-RPC method of a request.
pub fn method_of(request: &Value) -> &str {
    request["method"].as_str().unwrap_or_default()
}

/// The answer to `roots/list` every script gives.
pub fn roots_answer() -> Value {
    json!({"roots": [{"uri": "file:///w", "name": "w"}]})
}

pub fn decline() -> Value {
    json!({"action": "decline"})
}

pub fn cancel() -> Value {
    json!({"action": "cancel"})
}

/// A script answering from the request's method and prompt; `roots/list` always gets
/// [`roots_answer`].
pub fn by_prompt(answer: impl Fn(&str, &str, &Value) -> Value + Send + Clone + 'static) -> Script {
    Script::new(move |_key, request| {
        let method = method_of(request);
        if method == "roots/list" {
            return roots_answer();
        }
        answer(method, &prompt_of(request), request)
    })
}

fn text(value: &str) -> Value {
    accept(json!({ "value": value }))
}

fn number(value: i64) -> Value {
    accept(json!({ "value": value }))
}

fn flag(value: bool) -> Value {
    accept(json!({ "value": value }))
}

/// A fixed answer, for tables of cases.
type Answer = fn() -> Value;

fn is_error(outcome: &crate::harness::Outcome) -> bool {
    outcome.result["isError"] == json!(true)
}

// ---------------------------------------------------------------------------------------
// 1. Suspensions in `let`s, in expression statements (answers discarded), in nested blocks.

/// Statements of every kind that suspend.
#[saga_tool]
pub async fn statements(greeting: String) -> Result<String, SagaError> {
    let mut log = vec![greeting];
    checkpoint().await;
    sample("warm up").max_tokens(5).await?;
    let name: String = elicit("name?").await?;
    {
        let extra: String = elicit(format!("extra for {name}?")).await?;
        log.push(extra);
        checkpoint().await;
        log.push(name.clone());
    }
    let tail = {
        let told = sample(format!("tail for {name}"))
            .system("be brief")
            .temperature(0.5)
            .model_hint("tiny")
            .max_tokens(7)
            .await?;
        told.text().to_uppercase()
    };
    log.push(tail);
    Ok(log.join(","))
}

pub fn statements_script() -> Script {
    by_prompt(|method, prompt, request| match (method, prompt) {
        ("sampling/createMessage", "warm up") => says("ignored"),
        ("sampling/createMessage", "tail for ann") => {
            let params = &request["params"];
            assert_eq!(params["systemPrompt"], "be brief", "{request}");
            assert_eq!(params["maxTokens"], 7, "{request}");
            assert_eq!(params["temperature"], 0.5, "{request}");
            assert_eq!(
                params["modelPreferences"]["hints"][0]["name"], "tiny",
                "{request}"
            );
            says("end")
        }
        (_, "name?") => text("ann"),
        (_, "extra for ann?") => text("x"),
        other => panic!("unexpected request {other:?}"),
    })
}

#[tokio::test]
async fn statements_suspend_in_lets_expression_statements_and_blocks() {
    let outcome = differential(
        &statements,
        plain!(plain::statements),
        json!({"greeting": "hi"}),
        statements_script,
    )
    .await;
    assert_eq!(outcome.text(), "hi,x,ann,END");
    assert_eq!(outcome.rounds, 6);
}

// ---------------------------------------------------------------------------------------
// 2. `if` / `else if` chains / `else`, `if let`, `if` as an expression; `Option` args.

/// `else if` chains whose branches suspend (regression: the expansion used to trip rustc's
/// `unused_braces` lint, which `-D warnings` turns into an error).
pub mod else_if {
    use super::*;

    /// Branches that suspend.
    #[saga_tool]
    pub async fn branches(level: i64, hint: Option<String>) -> Result<String, SagaError> {
        let mut out = String::new();
        if level > 10 {
            let high: String = elicit("high?").await?;
            out.push_str(&high);
        } else if level > 5 {
            let medium = sample("medium?").await?;
            out.push_str(medium.text());
        } else if level > 0 {
            checkpoint().await;
            out.push_str("low");
        } else {
            out.push_str("none");
        }
        if let Some(hint) = hint {
            let ok: bool = elicit(format!("use hint {hint}?")).await?;
            out.push_str(if ok { &hint } else { "-" });
        } else {
            out.push('!');
        }
        let label = if out.len() > 4 {
            elicit::<String>("long label?").await?
        } else {
            "short".to_owned()
        };
        Ok(format!("{out} {label}"))
    }
}

pub use else_if::branches;

pub fn branches_script() -> Script {
    by_prompt(|_, prompt, _| match prompt {
        "high?" => text("H"),
        "medium?" => says("M"),
        "long label?" => text("LONG"),
        hint if hint.starts_with("use hint ") => flag(hint == "use hint yes?"),
        other => panic!("unexpected prompt {other:?}"),
    })
}

#[tokio::test]
async fn branches_if_else_if_chains_and_if_let() {
    let cases = [
        (json!({"level": 20}), "H! short", 1),
        (json!({"level": 7, "hint": "yes"}), "Myes short", 2),
        (json!({"level": 3, "hint": "yes"}), "lowyes LONG", 3),
        (json!({"level": 0, "hint": "no"}), "none- LONG", 2),
        (json!({"level": 0, "hint": null}), "none! LONG", 1),
    ];
    for (arguments, expected, rounds) in cases {
        let outcome = differential(
            &branches,
            plain!(plain::else_if::branches),
            arguments.clone(),
            branches_script,
        )
        .await;
        assert_eq!(outcome.text(), expected, "{arguments}");
        assert_eq!(outcome.rounds, rounds, "{arguments}");
    }
}

// ---------------------------------------------------------------------------------------
// 3. `match` arm bodies, including arms whose bindings are used after the suspension.

/// A colour, asked as a single select.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Elicit, Serialize, Deserialize)]
pub enum Color {
    Red,
    Green,
    Blue,
}

/// What the user picks.
#[derive(Debug, Elicit, Serialize, Deserialize)]
pub struct Pick {
    /// The colour.
    pub color: Color,
    /// How many.
    pub amount: i64,
}

/// Matches whose arms suspend.
#[saga_tool]
pub async fn matcher(code: String, label: Option<String>) -> Result<String, SagaError> {
    let pick: Pick = elicit("pick?").await?;
    let described = match pick.color {
        Color::Red => {
            let why: String = elicit("why red?").await?;
            format!("red because {why}")
        }
        Color::Green => "green".to_owned(),
        Color::Blue => {
            checkpoint().await;
            "blue".to_owned()
        }
    };
    let counted = match pick.amount {
        0 => "none".to_owned(),
        n @ 1..=9 => {
            let spelled = sample(format!("spell {n}")).await?;
            format!("{n}={}", spelled.text())
        }
        n => format!("many({n})"),
    };
    let parsed = match code.parse::<i64>() {
        Ok(value) => {
            checkpoint().await;
            value * 2
        }
        Err(_) => -1,
    };
    let named = match label {
        Some(text) => {
            let confirm: bool = elicit(format!("label {text}?")).await?;
            if confirm { text } else { format!("not {text}") }
        }
        None => "unlabelled".to_owned(),
    };
    Ok(format!("{described}; {counted}; {parsed}; {named}"))
}

pub fn matcher_script(color: &'static str, amount: i64) -> impl Fn() -> Script {
    move || {
        by_prompt(move |_, prompt, _| match prompt {
            "pick?" => accept(json!({"color": color, "amount": amount})),
            "why red?" => text("R"),
            "spell 3" => says("three"),
            label if label.starts_with("label ") => flag(label != "label y?"),
            other => panic!("unexpected prompt {other:?}"),
        })
    }
}

#[tokio::test]
async fn match_arms_suspend_and_keep_their_bindings() {
    let cases = [
        (
            "Red",
            3,
            json!({"code": "21", "label": "x"}),
            "red because R; 3=three; 42; x",
            5,
        ),
        (
            "Blue",
            12,
            json!({"code": "zz"}),
            "blue; many(12); -1; unlabelled",
            2,
        ),
        (
            "Green",
            0,
            json!({"code": "5", "label": "y"}),
            "green; none; 10; not y",
            3,
        ),
    ];
    for (color, amount, arguments, expected, rounds) in cases {
        let outcome = differential(
            &matcher,
            plain!(plain::matcher),
            arguments.clone(),
            matcher_script(color, amount),
        )
        .await;
        assert_eq!(outcome.text(), expected, "{arguments}");
        assert_eq!(outcome.rounds, rounds, "{arguments}");
    }
}

// ---------------------------------------------------------------------------------------
// 4. `loop` as an expression with `break value`, and `continue`.

/// Asks for guesses until one reaches `limit`.
#[saga_tool]
pub async fn loop_value(limit: i64) -> Result<String, SagaError> {
    let mut tries = 0;
    let found = loop {
        tries += 1;
        let guess: i64 = elicit(format!("guess {tries}?")).await?;
        if guess >= limit {
            break guess * 10;
        }
        if guess < 0 {
            checkpoint().await;
            continue;
        }
    };
    Ok(format!("{found} after {tries}"))
}

pub fn loop_value_script() -> Script {
    by_prompt(|_, prompt, _| {
        let n: i64 = prompt["guess ".len()..prompt.len() - 1].parse().unwrap();
        number(n * 2 - 3)
    })
}

#[tokio::test]
async fn loop_breaks_with_a_value() {
    let outcome = differential(
        &loop_value,
        plain!(plain::loop_value),
        json!({"limit": 6}),
        loop_value_script,
    )
    .await;
    assert_eq!(outcome.text(), "70 after 5");
    assert_eq!(outcome.rounds, 6);
}

// ---------------------------------------------------------------------------------------
// 5. `while let` popping a Vec (a `mut` argument), and `while`.

/// Describes items from the top of the stack.
#[saga_tool]
pub async fn stack(mut items: Vec<String>) -> Result<String, SagaError> {
    let mut done = Vec::new();
    while let Some(item) = items.pop() {
        let answer = sample(format!("describe {item}")).await?;
        done.push(format!("{item}={}", answer.text()));
    }
    let mut budget = 3;
    while budget > 0 {
        checkpoint().await;
        budget -= 1;
    }
    Ok(done.join(" "))
}

pub fn stack_script() -> Script {
    by_prompt(|_, prompt, _| says(&prompt["describe ".len()..].len().to_string()))
}

#[tokio::test]
async fn while_let_pops_and_while_counts() {
    let outcome = differential(
        &stack,
        plain!(plain::stack),
        json!({"items": ["a", "bb", "ccc"]}),
        stack_script,
    )
    .await;
    assert_eq!(outcome.text(), "ccc=3 bb=2 a=1");
    assert_eq!(outcome.rounds, 6);
}

// ---------------------------------------------------------------------------------------
// 6. `for` over a Vec, a range, and iterators of collections.

/// Loops of every kind of iterable.
#[saga_tool]
pub async fn for_kinds(words: Vec<String>, n: u32) -> Result<String, SagaError> {
    let mut out = Vec::new();
    for word in words.clone() {
        let upper = sample(format!("upper {word}")).await?;
        out.push(upper.text().to_owned());
    }
    for i in 0..n {
        let square: i64 = elicit(format!("square {i}?")).await?;
        out.push(square.to_string());
    }
    for (i, word) in words.clone().into_iter().enumerate().skip(1) {
        checkpoint().await;
        out.push(format!("{i}:{word}"));
    }
    let lengths: BTreeMap<String, usize> = words.iter().map(|w| (w.clone(), w.len())).collect();
    for (word, len) in lengths {
        let keep: bool = elicit(format!("keep {word} ({len})?")).await?;
        if keep {
            out.push(word);
        }
    }
    Ok(out.join(","))
}

pub fn for_kinds_script() -> Script {
    by_prompt(|method, prompt, _| {
        if method == "sampling/createMessage" {
            return says(&prompt["upper ".len()..].to_uppercase());
        }
        if let Some(i) = prompt.strip_prefix("square ") {
            let i: i64 = i.trim_end_matches('?').parse().unwrap();
            return number(i * i);
        }
        flag(!prompt.starts_with("keep b"))
    })
}

#[tokio::test]
async fn for_loops_over_vecs_ranges_and_iterators() {
    let outcome = differential(
        &for_kinds,
        plain!(plain::for_kinds),
        json!({"words": ["c", "a", "b"], "n": 4}),
        for_kinds_script,
    )
    .await;
    assert_eq!(outcome.text(), "C,A,B,0,1,4,9,1:a,2:b,a,c");
    assert_eq!(outcome.rounds, 3 + 4 + 2 + 3);
}

// ---------------------------------------------------------------------------------------
// 7. Nested loops with labelled `break 'outer` / `continue 'outer`; a labelled `loop`
//    broken with a value from an inner `for`; a `Vec<Content>` output.

/// Fills a grid until told to skip a row or stop.
#[saga_tool]
pub async fn grid(rows: u32, cols: u32) -> Result<String, SagaError> {
    let mut cells = Vec::new();
    let mut skipped = 0;
    'outer: for r in 0..rows {
        let mut c = 0;
        while c < cols {
            let cell: String = elicit(format!("cell {r},{c}?")).await?;
            c += 1;
            if cell == "skip" {
                skipped += 1;
                continue 'outer;
            } else if cell == "stop" {
                break 'outer;
            }
            cells.push(cell);
        }
        checkpoint().await;
    }
    Ok(format!("{} skipped={skipped}", cells.join("")))
}

pub fn grid_script() -> Script {
    by_prompt(|_, prompt, _| {
        let cell = &prompt["cell ".len()..prompt.len() - 1];
        match cell {
            "1,1" => text("skip"),
            "2,0" => text("stop"),
            other => text(&other.replace(',', "")),
        }
    })
}

#[tokio::test]
async fn labelled_break_and_continue_in_nested_loops() {
    let outcome = differential(
        &grid,
        plain!(plain::grid),
        json!({"rows": 3, "cols": 3}),
        grid_script,
    )
    .await;
    assert_eq!(outcome.text(), "00010210 skipped=1");
    assert_eq!(outcome.rounds, 7);
}

/// Searches rounds of slots for `target`.
#[saga_tool]
pub async fn search(target: i64) -> Result<Vec<Content>, SagaError> {
    let mut seen = Vec::new();
    let mut round = 0;
    let found = 'search: loop {
        round += 1;
        for slot in 0..3 {
            let v: i64 = elicit(format!("round {round} slot {slot}?")).await?;
            seen.push(v);
            if v == target {
                break 'search Some((round, slot));
            }
        }
        if round >= 3 {
            break None;
        }
    };
    Ok(vec![
        Content::text(format!("found {found:?}")),
        Content::text(format!("seen {seen:?}")),
    ])
}

pub fn search_script() -> Script {
    by_prompt(|_, prompt, _| {
        let words: Vec<&str> = prompt.trim_end_matches('?').split(' ').collect();
        let round: i64 = words[1].parse().unwrap();
        let slot: i64 = words[3].parse().unwrap();
        number(round * 10 + slot)
    })
}

#[tokio::test]
async fn labelled_loop_breaks_with_a_value_from_an_inner_for() {
    let outcome = differential(
        &search,
        plain!(plain::search),
        json!({"target": 21}),
        search_script,
    )
    .await;
    assert_eq!(outcome.result["content"][0]["text"], "found Some((2, 1))");
    assert_eq!(
        outcome.result["content"][1]["text"],
        "seen [10, 11, 12, 20, 21]"
    );
    assert_eq!(outcome.rounds, 5);

    let outcome = differential(
        &search,
        plain!(plain::search),
        json!({"target": 99}),
        search_script,
    )
    .await;
    assert_eq!(outcome.result["content"][0]["text"], "found None");
    assert_eq!(outcome.rounds, 9);
}

// ---------------------------------------------------------------------------------------
// 8. Early `return Ok(..)` / `return Err(..)`, `?` on a declined or cancelled answer.

/// Leaves early in several ways.
#[saga_tool]
pub async fn early_exit(mode: String) -> Result<String, SagaError> {
    let first: String = elicit("first?").await?;
    if mode == "ok" {
        return Ok(format!("early {first}"));
    }
    if mode == "err" {
        checkpoint().await;
        return Err(SagaError::msg(format!("refused {first}")));
    }
    for i in 0..3 {
        let more: i64 = elicit(format!("more {i}?")).await?;
        if more == 0 {
            return Ok(format!("zero at {i}"));
        }
    }
    Ok("late".into())
}

pub fn early_exit_script(first: fn() -> Value) -> impl Fn() -> Script {
    move || {
        by_prompt(move |_, prompt, _| match prompt {
            "first?" => first(),
            "more 1?" => number(0),
            _ => number(1),
        })
    }
}

#[tokio::test]
async fn early_returns_and_question_marks_on_declines() {
    let cases: [(&str, Answer, &str, bool, u32); 5] = [
        ("ok", || text("F"), "early F", false, 1),
        ("err", || text("F"), "refused F", true, 2),
        ("loop", || text("F"), "zero at 1", false, 3),
        ("ok", decline, "the user declined the request", true, 1),
        ("loop", cancel, "the user cancelled the request", true, 1),
    ];
    for (mode, first, expected, error, rounds) in cases {
        let outcome = differential(
            &early_exit,
            plain!(plain::early_exit),
            json!({ "mode": mode }),
            early_exit_script(first),
        )
        .await;
        assert_eq!(outcome.text(), expected, "{mode}");
        assert_eq!(is_error(&outcome), error, "{mode}");
        assert_eq!(outcome.rounds, rounds, "{mode}");
    }
}

// ---------------------------------------------------------------------------------------
// 9. `?` on an ordinary awaited future between suspensions.

/// A stand-in for a database: an ordinary async call inside the current request.
async fn lookup(name: &str) -> Result<String, SagaError> {
    tokio::task::yield_now().await;
    match name {
        "ann" => Ok("admin".into()),
        "bob" => Ok("user".into()),
        other => Err(SagaError::msg(format!("no such user {other}"))),
    }
}

/// Looks users up between questions.
#[saga_tool]
pub async fn lookup_chain(count: u32) -> Result<String, SagaError> {
    let mut roles = Vec::new();
    for i in 0..count {
        let name: String = elicit(format!("user {i}?")).await?;
        let role = lookup(&name).await?;
        let confirmed = sample(format!("{name} is {role}?")).await?;
        roles.push(format!("{name}:{role}:{}", confirmed.text()));
    }
    Ok(roles.join(" "))
}

pub fn lookup_script() -> Script {
    by_prompt(|method, prompt, _| match (method, prompt) {
        ("sampling/createMessage", _) => says("ok"),
        (_, "user 0?") => text("ann"),
        (_, "user 1?") => text("bob"),
        _ => text("eve"),
    })
}

#[tokio::test]
async fn question_mark_on_ordinary_futures_between_suspensions() {
    let outcome = differential(
        &lookup_chain,
        plain!(plain::lookup_chain),
        json!({"count": 2}),
        lookup_script,
    )
    .await;
    assert_eq!(outcome.text(), "ann:admin:ok bob:user:ok");
    assert_eq!(outcome.rounds, 4);

    let outcome = differential(
        &lookup_chain,
        plain!(plain::lookup_chain),
        json!({"count": 3}),
        lookup_script,
    )
    .await;
    assert_eq!(outcome.text(), "no such user eve");
    assert!(is_error(&outcome));
    assert_eq!(outcome.rounds, 5);
}

// ---------------------------------------------------------------------------------------
// 10. Shadowing across suspensions, and an outer binding live after an inner block.

/// Shadows bindings around suspensions.
#[saga_tool]
pub async fn shadowing(start: i64) -> Result<String, SagaError> {
    let x = start;
    checkpoint().await;
    let x = format!("{x}!");
    let asked: String = elicit(format!("after {x}?")).await?;
    let x = format!("{x}{asked}");
    let v = 1;
    let mut inner = Vec::new();
    {
        let v = elicit::<i64>("inner v?").await?;
        inner.push(v);
        inner.push(v * 2);
    }
    // The outer `v` is hidden where the saga suspends, and used again after the inner
    // scope: both are saved.
    {
        let v = elicit::<i64>("hidden v?").await?;
        checkpoint().await;
        inner.push(v);
        // Shadowed by a pattern, in a match arm and in a closure.
        let (v, x) = (v + 1, x.len() as i64);
        match Some(v * 10) {
            Some(v) if v > x => inner.push(elicit::<i64>(format!("arm v {v}?")).await? + v),
            Some(v) => inner.push(v),
            None => {}
        }
        let add = |v: i64| v + x;
        inner.push(add(v));
    }
    checkpoint().await;
    let w = v + 100;
    let total: i64 = inner.iter().sum();
    Ok(format!("{x} v={v} w={w} inner={inner:?} total={total}"))
}

pub fn shadowing_script() -> Script {
    by_prompt(|_, prompt, _| match prompt {
        "after 5!?" => text("a"),
        "inner v?" => number(7),
        "hidden v?" => number(3),
        "arm v 40?" => number(1),
        other => panic!("unexpected prompt {other:?}"),
    })
}

#[tokio::test]
async fn shadowed_bindings_survive_suspensions() {
    let outcome = differential(
        &shadowing,
        plain!(plain::shadowing),
        json!({"start": 5}),
        shadowing_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        "5!a v=1 w=101 inner=[7, 14, 3, 41, 7] total=72"
    );
    assert_eq!(outcome.rounds, 7);
}

/// A borrow and a shared handle, each shadowed by an owned value of the same name that the
/// saga saves. The renamer keeps capitalised bindings as written (such a name may be a
/// constant's pattern), so two bindings may share a name: the macro's checks tell them
/// apart by where each is bound, not by the name (which reported the owned `Count` as a
/// shared handle). A raw identifier shadowed is renamed (it made the macro panic).
// Denied here and allowed on the tool: the tool's own lint levels govern its body, which
// the expansion moves into the step (and the plain run).
#[deny(non_snake_case)]
pub mod same_names {
    use super::*;

    #[saga_tool]
    #[allow(non_snake_case)]
    pub async fn shadowing_same_names(name: String) -> Result<String, SagaError> {
        let r#type = &name;
        let length = r#type.len();
        let r#type = format!("{length} chars");
        let Count = std::sync::Arc::new(length);
        let Count = *Count + 1;
        checkpoint().await;
        Ok(format!("{name}: {} / {Count}", r#type))
    }
}
use same_names::shadowing_same_names;

#[tokio::test]
async fn bindings_sharing_a_name_are_told_apart() {
    let outcome = differential(
        &shadowing_same_names,
        plain!(plain::same_names::shadowing_same_names),
        json!({"name": "Ada"}),
        || by_prompt(|_, prompt, _| panic!("unexpected prompt {prompt:?}")),
    )
    .await;
    assert_eq!(outcome.text(), "Ada: 3 chars / 4");
    assert_eq!(outcome.rounds, 1);
}

// ---------------------------------------------------------------------------------------
// 11. Inline format captures of saved locals.

/// Formats saved locals with inline captures.
#[saga_tool]
pub async fn captures(name: String) -> Result<String, SagaError> {
    let count: i64 = elicit(format!("count for {name}?")).await?;
    let ratio: f64 = elicit("ratio?").await?;
    checkpoint().await;
    let width = 8;
    Ok(format!(
        "{name} has {count:>3}|{ratio:.2}|{name:>width$}|{count:#x}|{name:?}"
    ))
}

pub fn captures_script() -> Script {
    by_prompt(|_, prompt, _| match prompt {
        "count for ann?" => number(7),
        "ratio?" => accept(json!({"value": 0.5})),
        other => panic!("unexpected prompt {other:?}"),
    })
}

#[tokio::test]
async fn inline_format_captures_of_saved_locals() {
    let outcome = differential(
        &captures,
        plain!(plain::captures),
        json!({"name": "ann"}),
        captures_script,
    )
    .await;
    assert_eq!(outcome.text(), r#"ann has   7|0.50|     ann|0x7|"ann""#);
    assert_eq!(outcome.rounds, 3);
}

// ---------------------------------------------------------------------------------------
// 12. Explicit keys, and generated keys unique across the saga.

/// Every request with its own key.
#[saga_tool]
pub async fn keyed() -> Result<String, SagaError> {
    let (user, verdict, roots) = join!(
        elicit::<String>("user?").key("user_name"),
        sample("verdict?").key("verdict"),
        list_roots().key("roots")
    );
    let user = user?;
    let again: String = elicit(format!("again {user}?")).key("user_again").await?;
    Ok(format!(
        "{user} {again} {} {}",
        verdict?.text(),
        roots?.len()
    ))
}

pub fn keyed_script() -> Script {
    Script::new(|key, request| match key {
        "user_name" => text("ann"),
        "verdict" => says("fine"),
        "roots" => roots_answer(),
        "user_again" => {
            assert_eq!(prompt_of(request), "again ann?");
            text("ann2")
        }
        other => panic!("unexpected key {other}"),
    })
}

#[tokio::test]
async fn explicit_keys_are_the_input_request_keys() {
    let expected_keys = vec![
        vec!["roots".to_owned(), "user_name".into(), "verdict".into()],
        vec!["user_again".to_owned()],
    ];
    let outcome = differential(&keyed, plain!(plain::keyed), json!({}), keyed_script).await;
    assert_eq!(outcome.text(), "ann ann2 fine 1");
    assert_eq!(outcome.keys, expected_keys);
    // A manual machine run, on its own: the keys on the wire are the ones written.
    let outcome = machine(&keyed, serde_json::Map::new(), keyed_script()).await;
    assert_eq!(outcome.keys, expected_keys);
    assert_eq!(outcome.rounds, 2);
}

/// Asks five times in a loop, then twice at once.
#[saga_tool]
pub async fn five_asks() -> Result<String, SagaError> {
    let mut got = Vec::new();
    for i in 0..5 {
        let v: i64 = elicit(format!("ask {i}?")).await?;
        got.push(v);
    }
    let (a, b) = join!(elicit::<i64>("a?"), elicit::<i64>("b?"));
    got.push(a? + b?);
    Ok(format!("{got:?}"))
}

pub fn five_asks_script() -> Script {
    by_prompt(|_, prompt, _| match prompt {
        "a?" => number(100),
        "b?" => number(1),
        other => number(other["ask ".len()..other.len() - 1].parse().unwrap()),
    })
}

#[tokio::test]
async fn generated_keys_are_unique_across_the_saga() {
    let outcome = differential(&five_asks, plain!(plain::five_asks), json!({}), five_asks_script).await;
    assert_eq!(outcome.text(), "[0, 1, 2, 3, 4, 101]");
    assert_eq!(outcome.rounds, 6);
    let all: Vec<&String> = outcome.keys.iter().flatten().collect();
    let unique: std::collections::BTreeSet<&String> = all.iter().copied().collect();
    assert_eq!(all.len(), 7, "{:?}", outcome.keys);
    assert_eq!(unique.len(), 7, "keys repeat: {:?}", outcome.keys);
}

// ---------------------------------------------------------------------------------------
// 13. `join!` of elicit + sample + list_roots in one round.

/// Asks the user, the LLM and the client at once.
#[saga_tool]
pub async fn joined(topic: String) -> Result<String, SagaError> {
    let (title, summary, roots) = join!(
        elicit::<String>(format!("title for {topic}?")),
        sample(format!("summarise {topic}")).max_tokens(50),
        list_roots()
    );
    let title = title?;
    let summary = summary?;
    let roots = roots?;
    let uris: Vec<String> = roots
        .iter()
        .map(|root| format!("{}({})", root.uri, root.name.clone().unwrap_or_default()))
        .collect();
    Ok(format!("{title}: {} @ {}", summary.text(), uris.join(",")))
}

pub fn joined_script(title: fn() -> Value) -> impl Fn() -> Script {
    move || {
        by_prompt(move |method, _, _| match method {
            "sampling/createMessage" => says("S"),
            _ => title(),
        })
    }
}

#[tokio::test]
async fn join_of_elicit_sample_and_roots_is_one_round() {
    let outcome = differential(
        &joined,
        plain!(plain::joined),
        json!({"topic": "rust"}),
        joined_script(|| text("T")),
    )
    .await;
    assert_eq!(outcome.text(), "T: S @ file:///w(w)");
    assert_eq!(outcome.rounds, 1);
    assert_eq!(outcome.keys[0].len(), 3);

    let outcome = differential(
        &joined,
        plain!(plain::joined),
        json!({"topic": "rust"}),
        joined_script(decline),
    )
    .await;
    assert_eq!(outcome.text(), "the user declined the request");
    assert!(is_error(&outcome));
}

// ---------------------------------------------------------------------------------------
// 14. `elicit_url`.

/// Sends the user to a sign-in page, then asks whether it worked.
#[saga_tool]
pub async fn url_flow(service: String) -> Result<String, SagaError> {
    elicit_url(
        format!("https://auth.example.com/{service}"),
        format!("Sign in to {service}"),
    )
    .await?;
    let signed_in: bool = elicit("signed in?").await?;
    Ok(format!("{service}: signed_in={signed_in}"))
}

pub fn url_flow_script(url_answer: fn() -> Value) -> impl Fn() -> Script {
    move || {
        by_prompt(move |_, prompt, request| {
            if let Some(url) = request["params"]["url"].as_str() {
                assert_eq!(url, "https://auth.example.com/git");
                assert_eq!(prompt, "Sign in to git");
                url_answer()
            } else {
                flag(true)
            }
        })
    }
}

#[tokio::test]
async fn url_elicitation_is_a_suspension() {
    let outcome = differential(
        &url_flow,
        plain!(plain::url_flow),
        json!({"service": "git"}),
        url_flow_script(|| json!({"action": "accept"})),
    )
    .await;
    assert_eq!(outcome.text(), "git: signed_in=true");
    assert_eq!(outcome.rounds, 2);

    let outcome = differential(
        &url_flow,
        plain!(plain::url_flow),
        json!({"service": "git"}),
        url_flow_script(decline),
    )
    .await;
    assert_eq!(outcome.text(), "the user declined the request");
    assert_eq!(outcome.rounds, 1);
}

// ---------------------------------------------------------------------------------------
// 15. A `&SagaContext` parameter.

/// Adapts to what the client can do.
#[saga_tool]
pub async fn context_aware(cx: &SagaContext, topic: String) -> Result<String, SagaError> {
    let who = cx.principal().to_owned();
    let opinion = if cx.can_sample() {
        sample(format!("opinion on {topic}"))
            .await?
            .text()
            .to_owned()
    } else {
        elicit::<String>(format!("your opinion on {topic}?")).await?
    };
    checkpoint().await;
    Ok(format!("{who}/{}: {opinion}", cx.principal()))
}

pub fn context_script() -> Script {
    by_prompt(|method, _, _| match method {
        "sampling/createMessage" => says("from the LLM"),
        _ => text("from the user"),
    })
}

#[tokio::test]
async fn saga_context_is_rebound_and_adapts() {
    let outcome = differential(
        &context_aware,
        plain!(plain::context_aware),
        json!({"topic": "tabs"}),
        context_script,
    )
    .await;
    assert_eq!(outcome.text(), "tester/tester: from the LLM");
    assert_eq!(outcome.rounds, 2);

    let mut capabilities = ClientCapabilities::default();
    capabilities.elicitation = Some(ElicitationCapability::default());
    let cx = SagaContext::new("alice").with_capabilities(capabilities);
    let outcome = differential_in(
        cx,
        &context_aware,
        plain!(plain::context_aware),
        json!({"topic": "tabs"}),
        context_script,
    )
    .await;
    assert_eq!(outcome.text(), "alice/alice: from the user");
    assert_eq!(outcome.rounds, 2);
}

// ---------------------------------------------------------------------------------------
// 16. Described arguments and `Option` arguments, absent and present.

/// Greets with words from the user.
#[saga_tool]
pub async fn described_args(
    #[arg(description = "Who to greet")] name: String,
    #[arg(description = "How many words to ask for")] times: Option<u32>,
    loud: Option<bool>,
) -> Result<String, SagaError> {
    let times = times.unwrap_or(1);
    let mut parts = Vec::new();
    for i in 0..times {
        let word: String = elicit(format!("word {i} for {name}?")).await?;
        parts.push(word);
    }
    let text = format!("{name}: {}", parts.join(" "));
    Ok(if loud.unwrap_or(false) {
        text.to_uppercase()
    } else {
        text
    })
}

pub fn described_script() -> Script {
    by_prompt(|_, prompt, _| text(&format!("w{}", &prompt["word ".len().."word ".len() + 1])))
}

#[tokio::test]
async fn described_and_optional_arguments() {
    let tool = described_args.tool();
    let schema = serde_json::to_value(&*tool.input_schema).unwrap();
    assert_eq!(schema["type"], "object", "{schema}");
    assert_eq!(
        schema["properties"]["name"]["description"], "Who to greet",
        "{schema}"
    );
    assert_eq!(
        schema["properties"]["times"]["description"], "How many words to ask for",
        "{schema}"
    );
    assert_eq!(schema["required"], json!(["name"]), "{schema}");
    assert_eq!(
        tool.description.as_deref(),
        Some("Greets with words from the user.")
    );

    let outcome = differential(
        &described_args,
        plain!(plain::described_args),
        json!({"name": "ann"}),
        described_script,
    )
    .await;
    assert_eq!(outcome.text(), "ann: w0");
    assert_eq!(outcome.rounds, 1);

    let outcome = differential(
        &described_args,
        plain!(plain::described_args),
        json!({"name": "ann", "times": 3, "loud": true}),
        described_script,
    )
    .await;
    assert_eq!(outcome.text(), "ANN: W0 W1 W2");
    assert_eq!(outcome.rounds, 3);
}

// ---------------------------------------------------------------------------------------
// 17. A structured `Json<U>` output.

/// A structured report.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Report {
    /// Whose report it is.
    pub owner: String,
    /// The score the user gave.
    pub score: i64,
    /// Tags from the LLM.
    pub tags: Vec<String>,
}

/// Builds a structured report.
#[saga_tool]
pub async fn structured(owner: String) -> Result<Json<Report>, SagaError> {
    let score: i64 = elicit(format!("score for {owner}?")).await?;
    let mut tags: Vec<String> = Vec::new();
    while tags.len() < 2 {
        let tag = sample(format!("tag {}", tags.len())).await?;
        tags.push(tag.text().to_owned());
    }
    Ok(Json(Report { owner, score, tags }))
}

pub fn structured_script() -> Script {
    by_prompt(|method, prompt, _| match method {
        "sampling/createMessage" => says(&prompt.replace(' ', "-")),
        _ => number(9),
    })
}

#[tokio::test]
async fn json_output_is_structured_content_with_a_schema() {
    let tool = structured.tool();
    let output_schema = tool.output_schema.as_ref().expect("an output schema");
    let output_schema = serde_json::to_value(&**output_schema).unwrap();
    assert_eq!(output_schema["type"], "object", "{output_schema}");
    assert!(
        output_schema["properties"]["tags"].is_object(),
        "{output_schema}"
    );

    let outcome = differential(
        &structured,
        plain!(plain::structured),
        json!({"owner": "ann"}),
        structured_script,
    )
    .await;
    assert_eq!(
        outcome.result["structuredContent"],
        json!({"owner": "ann", "score": 9, "tags": ["tag-0", "tag-1"]})
    );
    assert_ne!(outcome.result["isError"], json!(true));
    assert_eq!(outcome.rounds, 3);
}

// ---------------------------------------------------------------------------------------
// 18. Many rounds, and a large saved state.

/// Suspends `n` times, alternating checkpoints and questions.
#[saga_tool]
pub async fn many_rounds(n: u32) -> Result<String, SagaError> {
    let mut sum: i64 = 0;
    for i in 0..n {
        if i % 2 == 0 {
            checkpoint().await;
        } else {
            let v: i64 = elicit(format!("v{i}?")).await?;
            sum += v;
        }
    }
    Ok(format!("{n} rounds, sum {sum}"))
}

pub fn many_rounds_script() -> Script {
    by_prompt(|_, prompt, _| number(prompt[1..prompt.len() - 1].parse().unwrap()))
}

#[tokio::test]
async fn two_hundred_rounds() {
    let outcome = differential(
        &many_rounds,
        plain!(plain::many_rounds),
        json!({"n": 200}),
        many_rounds_script,
    )
    .await;
    assert_eq!(outcome.text(), "200 rounds, sum 10000");
    assert_eq!(outcome.rounds, 200);
    eprintln!("many_rounds: longest token {} bytes", outcome.longest_token);
}

/// Accumulates `count` long answers.
#[saga_tool]
pub async fn big_state(count: u32) -> Result<String, SagaError> {
    let mut answers: Vec<String> = Vec::new();
    for i in 0..count {
        let answer: String = elicit(format!("line {i}?")).await?;
        answers.push(answer);
    }
    let total: usize = answers.iter().map(String::len).sum();
    let last = answers.last().cloned().unwrap_or_default();
    Ok(format!(
        "{} answers, {total} bytes, last {last}",
        answers.len()
    ))
}

pub fn line(i: u32) -> String {
    format!("{i:03}-{}", "x".repeat(96))
}

pub fn big_state_script() -> Script {
    by_prompt(|_, prompt, _| text(&line(prompt[5..prompt.len() - 1].parse().unwrap())))
}

#[tokio::test]
async fn a_state_of_several_kibibytes() {
    let outcome = differential(
        &big_state,
        plain!(plain::big_state),
        json!({"count": 50}),
        big_state_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        format!("50 answers, 5000 bytes, last {}", line(49))
    );
    assert_eq!(outcome.rounds, 50);
    // 49 saved answers of 100 bytes are 5 KB of state; each is 96 `x`s behind its
    // number, so the state deflates (format 0x60) to a token of a few hundred bytes.
    assert!(
        outcome.longest_token < 1_200,
        "49 saved answers of 100 bytes, deflated, got {}",
        outcome.longest_token
    );
    eprintln!("big_state: longest token {} bytes", outcome.longest_token);
}

// ---------------------------------------------------------------------------------------
// 19. Tool metadata from the attribute.

/// The doc comment the attribute overrides.
#[saga_tool(name = "renamed", title = "T", description = "D")]
pub async fn original_name(word: String) -> Result<String, SagaError> {
    let echoed: String = elicit(format!("echo {word}?")).await?;
    Ok(format!("{word}->{echoed}"))
}

pub fn renamed_script() -> Script {
    by_prompt(|_, prompt, _| text(&prompt.to_uppercase()))
}

#[tokio::test]
async fn attribute_sets_name_title_and_description() {
    let tool = original_name.tool();
    assert_eq!(tool.name, "renamed");
    assert_eq!(tool.title.as_deref(), Some("T"));
    assert_eq!(tool.description.as_deref(), Some("D"));
    let outcome = differential(
        &original_name,
        plain!(plain::original_name),
        json!({"word": "hi"}),
        renamed_script,
    )
    .await;
    assert_eq!(outcome.text(), "hi->ECHO HI?");
}

// ---------------------------------------------------------------------------------------
// 20. Handling declines and cancels in a `match` on the answer.

/// Falls back when the user declines.
#[saga_tool]
pub async fn declines(fallback: String) -> Result<String, SagaError> {
    let name = match elicit::<String>("name?").await {
        Ok(v) => v,
        Err(SagaError::Declined) => {
            checkpoint().await;
            format!("{fallback} (declined)")
        }
        Err(e) => return Err(e),
    };
    let second = match elicit::<bool>(format!("sure about {name}?")).await {
        Ok(true) => "sure".to_owned(),
        Ok(false) => "unsure".to_owned(),
        Err(error) => format!("no answer: {error}"),
    };
    Ok(format!("{name}, {second}"))
}

pub fn declines_script(first: fn() -> Value, second: fn() -> Value) -> impl Fn() -> Script {
    move || {
        by_prompt(
            move |_, prompt, _| {
                if prompt == "name?" { first() } else { second() }
            },
        )
    }
}

#[tokio::test]
async fn declines_and_cancels_are_matched() {
    let cases: [(Answer, Answer, &str, bool, u32); 4] = [
        (|| text("ann"), || flag(true), "ann, sure", false, 2),
        (decline, || flag(false), "anon (declined), unsure", false, 3),
        (
            || text("bob"),
            cancel,
            "bob, no answer: the user cancelled the request",
            false,
            2,
        ),
        (
            cancel,
            || flag(true),
            "the user cancelled the request",
            true,
            1,
        ),
    ];
    for (first, second, expected, error, rounds) in cases {
        let outcome = differential(
            &declines,
            plain!(plain::declines),
            json!({"fallback": "anon"}),
            declines_script(first, second),
        )
        .await;
        assert_eq!(outcome.text(), expected);
        assert_eq!(is_error(&outcome), error, "{expected}");
        assert_eq!(outcome.rounds, rounds, "{expected}");
    }
}
