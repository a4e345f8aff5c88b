use std::fmt::Write as _;

use saga_runtime::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::harness::{Script, accept, differential};
use crate::sagas::by_prompt;

fn text(value: &str) -> Value {
    accept(json!({ "value": value }))
}

fn number(value: i64) -> Value {
    accept(json!({ "value": value }))
}

fn flag(value: bool) -> Value {
    accept(json!({ "value": value }))
}

/// Records `what` and gives its length: a side effect whose order shows in the log.
fn note(log: &mut Vec<String>, what: &str) -> i64 {
    log.push(what.to_owned());
    what.len() as i64
}

fn add3(a: i64, b: i64, c: i64) -> i64 {
    a * 100 + b * 10 + c
}

#[derive(Debug, Serialize, Deserialize)]
struct Pair {
    left: i64,
    right: i64,
}

// ---------------------------------------------------------------------------------------
// Operands, arguments and literals, in Rust's order.

/// Every operand position, with side effects logged before and after each suspension.
#[saga_tool]
pub async fn operands(base: i64) -> Result<String, SagaError> {
    let mut log: Vec<String> = Vec::new();
    // Binary operands: the left is evaluated before the question is asked.
    let n = base + elicit::<i64>("n?").await?;
    let m =
        note(&mut log, "left") + elicit::<i64>(format!("m after {} notes?", log.len())).await? * 2;
    // A call's arguments: the first before, the last after the suspension.
    let call = add3(
        note(&mut log, "a"),
        elicit::<i64>(format!("b after {:?}?", log)).await?,
        note(&mut log, "ccc"),
    );
    // The receiver of a method call stays a place: `v` is pushed to, not copied.
    let mut v = vec![n];
    v.push(elicit::<i64>("push?").await?);
    v.extend([m, elicit::<i64>("extend?").await?]);
    // Struct, tuple and array literals.
    let pair = Pair {
        left: note(&mut log, "struct"),
        right: elicit::<i64>(format!("right after {}?", log.len())).await?,
    };
    let tuple = (log.len(), elicit::<String>("tuple?").await?, log.len());
    let array = [v[0], elicit::<i64>("array?").await?, v[1]];
    // Index, cast, unary.
    let picked = v[elicit::<i64>("index?").await? as usize];
    let small = elicit::<i64>("cast?").await? as u8;
    let negated = -elicit::<i64>("negate?").await?;
    let inverted = !elicit::<bool>("invert?").await?;
    // Compound assignment, to a local and to an indexed place.
    let mut total = 1;
    total += elicit::<i64>("add?").await?;
    v[0] *= elicit::<i64>("times?").await?;
    let slot = v.len() - 1;
    v[slot] = elicit::<i64>(format!("slot {slot}?")).await? - total;
    Ok(format!(
        "{n} {m} {call} {v:?} {pair:?} {tuple:?} {array:?} {picked} {small} {negated} \
         {inverted} {total} {log:?}"
    ))
}

pub fn operands_script() -> Script {
    by_prompt(|_, prompt, _| match prompt {
        "n?" => number(2),
        "tuple?" => text("tee"),
        "invert?" => flag(false),
        "index?" => number(1),
        "cast?" => number(300 - 256),
        p if p.starts_with("m after") => number(p.len() as i64),
        p if p.starts_with("b after") => number(p.len() as i64 % 10),
        p if p.starts_with("right after") => number(p.len() as i64),
        p if p.starts_with("slot") => number(1000),
        p => number(p.len() as i64),
    })
}

#[tokio::test]
async fn operands_are_evaluated_in_rusts_order() {
    let outcome = differential(
        &operands,
        plain!(plain::operands),
        json!({"base": 40}),
        operands_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        r#"42 36 123 [252, 5, 36, 995] Pair { left: 6, right: 14 } (4, "tee", 4) [42, 6, 5] 5 44 -7 true 5 ["left", "a", "ccc", "struct"]"#
    );
    assert_eq!(outcome.rounds, 15);
}

// ---------------------------------------------------------------------------------------
// Conditions, scrutinees, arms, `break` and `return` values, short-circuits.

/// Suspensions in conditions and in the operands of `&&` and `||`.
#[saga_tool]
pub async fn conditions(level: i64, items: Vec<String>) -> Result<String, SagaError> {
    let mut seen = Vec::new();
    // Asked only when `level > 0`, as Rust would.
    if level > 0 && elicit::<bool>("sure?").await? {
        seen.push("sure".to_owned());
    }
    // Asked only when `level <= 5`.
    let skip = level > 5 || elicit::<bool>(format!("skip at {level}?")).await?;
    // A condition that suspends on every iteration.
    let mut asked = 0;
    while asked < 3 && elicit::<bool>(format!("more after {asked}?")).await? {
        asked += 1;
    }
    // A `let` chain that suspends after its `let`, with an `else` that suspends too.
    let opener = if let Some(first) = items.first().cloned()
        && elicit::<bool>(format!("open with {first}?")).await?
    {
        first
    } else {
        elicit::<String>("opener?").await?
    };
    // A scrutinee and arms that suspend.
    let size = match elicit::<String>("size?").await?.as_str() {
        "big" => elicit::<i64>("how big?").await? * 10,
        "none" => 0,
        other => other.len() as i64,
    };
    // `break` with a value that suspends.
    let mut index = 0;
    let chosen = loop {
        if index == items.len() {
            break String::from("none");
        }
        if items[index].starts_with('k') {
            break format!("{}:{}", items[index], elicit::<String>("why?").await?);
        }
        index += 1;
    };
    if seen.is_empty() && !skip {
        return Ok(format!(
            "early {} {size} {chosen} {opener}",
            elicit::<String>("early?").await?
        ));
    }
    Ok(format!("{seen:?} {skip} {asked} {size} {chosen} {opener}"))
}

pub fn conditions_script() -> Script {
    by_prompt(|_, prompt, _| match prompt {
        "sure?" => flag(true),
        p if p.starts_with("skip") => flag(false),
        p if p.starts_with("more after 2") => flag(false),
        p if p.starts_with("more") => flag(true),
        "size?" => text("big"),
        "how big?" => number(4),
        "why?" => text("because"),
        "opener?" => text("hello"),
        "open with a?" => flag(false),
        p if p.starts_with("open with") => flag(true),
        _ => text("bye"),
    })
}

#[tokio::test]
async fn conditions_suspend_exactly_when_rust_evaluates_them() {
    let cases = [
        (
            json!({"level": 1, "items": ["a", "kb"]}),
            r#"["sure"] false 2 40 kb:because hello"#,
            10,
        ),
        // `level > 0` is false: "sure?" is never asked; `level > 5` is false: "skip?" is.
        (
            json!({"level": 0, "items": []}),
            "early bye 40 none hello",
            8,
        ),
        // `level > 5` is true: "skip?" is never asked.
        (
            json!({"level": 9, "items": ["x"]}),
            r#"["sure"] true 2 40 none x"#,
            7,
        ),
    ];
    for (arguments, expected, rounds) in cases {
        let outcome = differential(
            &conditions,
            plain!(plain::conditions),
            arguments.clone(),
            conditions_script,
        )
        .await;
        assert_eq!(outcome.text(), expected, "{arguments}");
        assert_eq!(outcome.rounds, rounds, "{arguments}");
    }
}

// ---------------------------------------------------------------------------------------
// `let … else` and the standard macros.

fn lookup(name: &str) -> Option<u32> {
    name.strip_prefix("id")
        .and_then(|digits| digits.parse().ok())
}

/// A `let … else` whose `else` asks, and suspensions in macro arguments.
#[saga_tool]
pub async fn lets_and_macros(name: String) -> Result<String, SagaError> {
    let Some(id) = lookup(&name) else {
        let reason: String = elicit(format!("no id in {name}: why?")).await?;
        return Ok(format!("no id: {reason}"));
    };
    let (Some(first), mut rest) = (name.chars().next(), Vec::<String>::new()) else {
        unreachable!("a name with an id is not empty")
    };
    let mut out = String::new();
    write!(out, "{first}{id}:{}", elicit::<String>("write?").await?)
        .map_err(|e| SagaError::Tool(e.to_string()))?;
    writeln!(out, " {} {name}", elicit::<i64>("line?").await? + 1)
        .map_err(|e| SagaError::Tool(e.to_string()))?;
    assert!(elicit::<bool>("holds?").await?, "{name} must hold");
    assert_eq!(
        id as i64,
        elicit::<i64>(format!("id of {name}?")).await?,
        "the id of {}",
        name
    );
    println!("asked {}", elicit::<String>("print?").await?);
    let listed = vec![
        elicit::<String>("one?").await?,
        name.clone(),
        elicit::<String>("two?").await?,
    ];
    let repeated = vec![elicit::<String>("repeat?").await?; 2];
    rest.extend(listed);
    rest.extend(repeated);
    let named = format!(
        "{label}={value}",
        label = elicit::<String>("label?").await?,
        value = rest.len()
    );
    Ok(format!(
        "{out}{rest:?} {named} {}",
        sample("sum up").await?.text()
    ))
}

pub fn lets_and_macros_script() -> Script {
    by_prompt(|method, prompt, _| {
        if method == "sampling/createMessage" {
            return crate::harness::says("summed");
        }
        match prompt {
            "holds?" => flag(true),
            "line?" => number(6),
            p if p.starts_with("id of") => number(42),
            p => text(&p.replace('?', "!")),
        }
    })
}

#[tokio::test]
async fn let_else_and_macro_arguments_suspend() {
    let outcome = differential(
        &lets_and_macros,
        plain!(plain::lets_and_macros),
        json!({"name": "id42"}),
        lets_and_macros_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        "i42:write! 7 id42\n[\"one!\", \"id42\", \"two!\", \"repeat!\", \"repeat!\"] label!=5 summed"
    );
    assert_eq!(outcome.rounds, 10);
    let outcome = differential(
        &lets_and_macros,
        plain!(plain::lets_and_macros),
        json!({"name": "bob"}),
        lets_and_macros_script,
    )
    .await;
    assert_eq!(outcome.text(), "no id: no id in bob: why!");
    assert_eq!(outcome.rounds, 1);
}

/// `matches!` (its scrutinee, as a `match`'s), `assert_ne!` and `dbg!` take their operands
/// apart like the other standard macros (issue 39, point 8: `matches!` was refused as
/// "another macro").
#[saga_tool]
pub async fn more_macros(name: String) -> Result<String, SagaError> {
    let page = matches!(
        elicit::<bool>(format!("page {name}?")).outcome().await?,
        Elicited::Accepted(true)
    );
    let big = matches!(elicit::<i64>("size?").await?, n if n > 10);
    let small = matches!(elicit::<i64>("other size?").await?, 0..=3 | 7);
    assert_ne!(elicit::<String>("other name?").await?, name, "a new name");
    let shown = dbg!(elicit::<i64>("dbg?").await?) + 1;
    // A suspension in a guard is refused, with this advice, written out as it says.
    let guarded = match elicit::<i64>("guarded?").await? {
        1..=9 => elicit::<bool>("single digit ok?").await?,
        _ => false,
    };
    Ok(format!("{page} {big} {small} {shown} {guarded}"))
}

pub fn more_macros_script() -> Script {
    by_prompt(|_, prompt, _| match prompt {
        p if p.starts_with("page") => flag(true),
        "size?" => number(12),
        "other size?" => number(7),
        "dbg?" => number(4),
        "guarded?" => number(3),
        "single digit ok?" => flag(true),
        p => text(&p.replace('?', "!")),
    })
}

#[tokio::test]
async fn matches_assert_ne_and_dbg_suspend() {
    let outcome = differential(
        &more_macros,
        plain!(plain::more_macros),
        json!({"name": "ada"}),
        more_macros_script,
    )
    .await;
    assert_eq!(outcome.text(), "true true true 5 true");
    assert_eq!(outcome.rounds, 7);
}

/// A table's name: a `&'static str` a function returns.
fn name_of(c: u8) -> &'static str {
    if c == 0 { "zero" } else { "other" }
}

/// `&str` operands of formatting macros evaluated before a suspension in the same call
/// (issue 39, point 8: a function's `&'static str` was refused as a borrow): kept as
/// their `String`, and formatted as they would be, whatever the spec.
#[saga_tool]
pub async fn static_operands(c: u8, name: String) -> Result<String, SagaError> {
    let mut sql = String::new();
    write!(sql, "{} {}", name_of(c), elicit::<i64>("n?").await?)
        .map_err(|e| SagaError::Tool(e.to_string()))?;
    let line = format!(
        "[{:>7}|{:<6}|{:?}|{:.2}] {}",
        name_of(c),
        name.trim(),
        name_of(c),
        name.trim(),
        elicit::<String>("tail?").await?
    );
    Ok(format!("{sql} {line}"))
}

pub fn static_operands_script() -> Script {
    by_prompt(|_, prompt, _| match prompt {
        "n?" => number(7),
        p => text(&p.replace('?', "!")),
    })
}

#[tokio::test]
async fn a_str_operand_before_a_suspension_is_kept_as_its_text() {
    let outcome = differential(
        &static_operands,
        plain!(plain::static_operands),
        json!({"c": 0, "name": "  ada  "}),
        static_operands_script,
    )
    .await;
    assert_eq!(outcome.text(), "zero 7 [   zero|ada   |\"zero\"|ad] tail!");
    assert_eq!(outcome.rounds, 2);
}

// ---------------------------------------------------------------------------------------
// Items declared in the body are visible everywhere in it, before and after suspensions.

/// A body that declares what it uses: a `use`, consts, a static, a fn, a struct with an
/// impl, an enum and a macro, each used after a suspension.
#[saga_tool]
pub async fn with_items(words: Vec<String>) -> Result<String, SagaError> {
    use std::collections::BTreeMap;
    const LIMIT: usize = 3;
    static GREETING: &str = "hi";

    #[derive(serde::Serialize, serde::Deserialize)]
    struct Tally {
        counts: BTreeMap<String, usize>,
    }

    impl Tally {
        fn add(&mut self, word: &str) {
            *self.counts.entry(word.to_owned()).or_default() += 1;
        }
    }

    #[derive(Debug, serde::Serialize, serde::Deserialize)]
    enum Mood {
        Glad,
        Sad,
    }

    macro_rules! shout {
        ($e:expr) => {
            $e.to_uppercase()
        };
    }

    let mut tally = Tally {
        counts: BTreeMap::new(),
    };
    for word in words.into_iter().take(LIMIT) {
        let kept: bool = elicit(format!("{GREETING}, keep {word}?")).await?;
        if kept {
            tally.add(&normalise(&word));
        }
    }
    let mood = if elicit::<bool>("glad?").await? {
        Mood::Glad
    } else {
        Mood::Sad
    };
    fn normalise(word: &str) -> String {
        word.trim().to_lowercase()
    }
    let extra: String = elicit("extra word?").await?;
    tally.add(&normalise(&extra));
    Ok(format!("{} {:?} {mood:?}", shout!(GREETING), tally.counts))
}

pub fn with_items_script() -> Script {
    by_prompt(|_, prompt, _| match prompt {
        "glad?" => flag(true),
        "extra word?" => text(" Apple "),
        p => flag(!p.contains("pear")),
    })
}

#[tokio::test]
async fn items_in_the_body_are_visible_everywhere() {
    let outcome = differential(
        &with_items,
        plain!(plain::with_items),
        json!({"words": ["Apple", "pear", "fig", "kiwi"]}),
        with_items_script,
    )
    .await;
    assert_eq!(outcome.text(), r#"HI {"apple": 2, "fig": 1} Glad"#);
    assert_eq!(outcome.rounds, 5);
}

// ---------------------------------------------------------------------------------------
// `for` over a borrowed collection: the position is saved, the item borrowed again.

/// Loops over borrowed saved collections, using the borrowed items after suspensions.
#[saga_tool]
pub async fn borrowed_loops(names: Vec<String>) -> Result<String, SagaError> {
    let mut kept = Vec::new();
    for name in &names {
        let keep: bool = elicit(format!("keep {name}?")).await?;
        if keep {
            kept.push(name.clone());
        }
        if name.is_empty() {
            break;
        }
    }
    let mut numbered = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if i == 1 {
            continue;
        }
        let title: String = elicit(format!("title for #{i} {name}?")).await?;
        numbered.push(format!("{i}:{title} {name}"));
    }
    let mut ages = std::collections::BTreeMap::new();
    ages.insert("bob".to_owned(), 40_i64);
    ages.insert("ann".to_owned(), 30);
    let mut report = Vec::new();
    for (who, age) in &ages {
        let delta: i64 = elicit(format!("delta for {who} ({age})?")).await?;
        report.push(format!("{who}={}", age + delta));
    }
    for age in ages.values_mut() {
        *age += elicit::<i64>(format!("bump {age}?")).await?;
    }
    let mut letters = String::new();
    for c in names[0].chars().rev().skip(1) {
        checkpoint().await;
        letters.push(c.to_ascii_uppercase());
    }
    let mut scores = vec![1_i64, 2, 3];
    for score in scores.iter_mut() {
        let factor: i64 = elicit(format!("factor for {score}?")).await?;
        *score *= factor;
    }
    Ok(format!(
        "{kept:?} {numbered:?} {report:?} {ages:?} {letters} {scores:?}"
    ))
}

pub fn borrowed_loops_script() -> Script {
    by_prompt(|_, prompt, _| {
        if let Some(name) = prompt.strip_prefix("keep ") {
            return flag(!name.starts_with('b'));
        }
        if prompt.starts_with("title") {
            return text(&format!("T{}", prompt.len()));
        }
        if prompt.starts_with("delta for ann") {
            return number(1);
        }
        if let Some(n) = prompt.strip_prefix("bump ") {
            return number(n.trim_end_matches('?').parse::<i64>().unwrap_or(0) / 10);
        }
        if let Some(n) = prompt.strip_prefix("factor for ") {
            return number(n.trim_end_matches('?').parse::<i64>().unwrap_or(0) + 1);
        }
        number(-1)
    })
}

#[tokio::test]
async fn for_loops_over_borrowed_collections_resume_at_their_position() {
    let outcome = differential(
        &borrowed_loops,
        plain!(plain::borrowed_loops),
        json!({"names": ["ann", "bob", "cy"]}),
        borrowed_loops_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        r#"["ann", "cy"] ["0:T17 ann", "2:T16 cy"] ["ann=31", "bob=39"] {"ann": 33, "bob": 44} NA [2, 6, 12]"#
    );
    assert_eq!(outcome.rounds, 14);
}

// ---------------------------------------------------------------------------------------
// `join_all`: a dynamic number of requests of one kind in one round.

/// Asks about every name at once, then samples a summary per kept name, keyed.
#[saga_tool]
pub async fn join_many(names: Vec<String>) -> Result<String, SagaError> {
    let answers = join_all(
        names
            .iter()
            .map(|name| elicit::<bool>(format!("keep {name}?"))),
    )
    .await;
    let mut kept = Vec::new();
    for (name, keep) in names.iter().zip(answers) {
        if keep? {
            kept.push(name.clone());
        }
    }
    let summaries = join_all(
        kept.iter()
            .enumerate()
            .map(|(i, name)| sample(format!("summarise {name}")).key(format!("summary-{i}"))),
    )
    .await;
    let mut texts = Vec::new();
    for summary in summaries {
        texts.push(summary?.text().to_owned());
    }
    // Nothing to ask: a round that asks nothing, and no answers.
    let none: Vec<Result<String, SagaError>> =
        join_all(Vec::<String>::new().into_iter().map(elicit::<String>)).await;
    Ok(format!("{kept:?} {texts:?} {}", none.len()))
}

pub fn join_many_script() -> Script {
    Script::new(|key, request| {
        let prompt = crate::harness::prompt_of(request);
        if let Some(name) = prompt.strip_prefix("keep ") {
            return flag(!name.starts_with('b'));
        }
        crate::harness::says(&format!("{key}: {}", prompt.to_uppercase()))
    })
}

#[tokio::test]
async fn join_all_sends_a_dynamic_number_of_requests_in_one_round() {
    let outcome = differential(
        &join_many,
        plain!(plain::join_many),
        json!({"names": ["ann", "bob", "cy"]}),
        join_many_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        r#"["ann", "cy"] ["summary-0: SUMMARISE ANN", "summary-1: SUMMARISE CY"] 0"#
    );
    assert_eq!(outcome.rounds, 3);
    assert_eq!(
        outcome.keys,
        vec![
            vec!["elicit-1", "elicit-2", "elicit-3"],
            vec!["summary-0", "summary-1"],
            vec![],
        ]
    );
}

// ---------------------------------------------------------------------------------------
// A user's saga with suspensions nested in each other and in every kind of place.

#[derive(Debug, Default, Serialize, Deserialize)]
struct Profile {
    name: String,
    age: i64,
    tags: Vec<String>,
    score: i64,
}

fn weigh(a: i64, b: i64) -> i64 {
    a * 3 + b
}

/// Nested suspensions, answers used through method chains, field and entry assignments,
/// struct update syntax, labelled blocks, `return Err(..)` with a suspension.
#[saga_tool]
pub async fn nested(seed: i64) -> Result<String, SagaError> {
    let mut log = Vec::new();
    let title = elicit::<String>("title?").await?.trim().to_uppercase();
    let weighed = weigh(
        elicit::<i64>("a?").await?,
        weigh(note(&mut log, "inner"), elicit::<i64>("b?").await?),
    );
    let chosen = weigh(
        if seed > 0 {
            elicit::<i64>("positive?").await?
        } else {
            0
        },
        match seed % 3 {
            0 => note(&mut log, "zero") + elicit::<i64>("zero?").await?,
            r => r,
        },
    );
    let mut profile = Profile {
        name: elicit::<String>("name?").await?,
        ..Default::default()
    };
    profile.age = elicit::<i64>(format!("age of {}?", profile.name)).await?;
    profile.tags.push(elicit::<String>("tag?").await?);
    let mut counts = std::collections::BTreeMap::new();
    *counts.entry(profile.name.clone()).or_insert(0) += elicit::<i64>("count?").await?;
    profile.score += elicit::<i64>("score?").await? * profile.age;
    let greeting = String::from("hi ") + &elicit::<String>("who?").await?;
    // A receiver that is not a place goes to a temporary the method may borrow mutably.
    profile
        .tags
        .push(Vec::<String>::new().pop().unwrap_or_default() + &elicit::<String>("tag2?").await?);
    let mut fresh = vec![1_i64, elicit::<i64>("chained?").await?];
    fresh.push(
        std::mem::take(&mut Vec::<i64>::new()).len() as i64 + elicit::<i64>("pushed?").await?,
    );
    log.push(format!("{fresh:?}"));
    let verdict = 'decide: {
        if elicit::<bool>("early?").await? {
            break 'decide "early".to_owned();
        }
        "late".to_owned()
    };
    let mut x = seed;
    loop {
        // Shadows the outer `x`, which the loop then updates.
        let y = x + elicit::<i64>(format!("step from {x}?")).await?;
        let x_inner = y;
        if x_inner > 10 {
            log.push(format!("x={x_inner}"));
            break;
        }
        x = y;
    }
    x += 1;
    if profile.age < 0 {
        return Err(SagaError::Tool(elicit::<String>("why negative?").await?));
    }
    Ok(format!(
        "{title} {weighed} {chosen} {profile:?} {counts:?} {greeting} {verdict} {x} {log:?}"
    ))
}

pub fn nested_script() -> Script {
    by_prompt(|_, prompt, _| match prompt {
        "title?" => text("  hello "),
        "name?" => text("ann"),
        "tag?" => text("vip"),
        "tag2?" => text("new"),
        "who?" => text("bob"),
        "why negative?" => text("time travel"),
        "early?" => flag(false),
        "age of ann?" => number(30),
        p if p.starts_with("step from") => number(4),
        p => number(p.len() as i64),
    })
}

#[tokio::test]
async fn nested_suspensions_in_every_place() {
    let outcome = differential(&nested, plain!(plain::nested), json!({"seed": 3}), nested_script).await;
    // title, a, b, positive, zero, name, age, tag, count, score, who, tag2, chained, pushed,
    // early, two steps.
    assert_eq!(
        outcome.text(),
        r#"HELLO 23 36 Profile { name: "ann", age: 30, tags: ["vip", "new"], score: 180 } {"ann": 6} hi bob late 8 ["inner", "zero", "[1, 8, 7]", "x=11"]"#
    );
    assert_eq!(outcome.rounds, 17);
}
