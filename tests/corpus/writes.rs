use saga_runtime::prelude::*;
use saga_runtime::prelude::{SagaError, checkpoint, elicit, sample};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::harness::{Script, accept, differential, prompt_of, says};

fn text(value: &str) -> Value {
    accept(json!({ "value": value }))
}

/// Asked prompts are answered with their own text, reversed; numbers with their length.
fn echo() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if request["method"] == "sampling/createMessage" {
            return says(&prompt.to_uppercase());
        }
        if prompt.starts_with('#') {
            return accept(json!({ "value": prompt.len() as i64 }));
        }
        text(&prompt.chars().rev().collect::<String>())
    })
}

/// `s` is moved from, then overwritten by an answer: only the new value is used after.
#[saga_tool]
async fn overwrite(start: String) -> Result<String, SagaError> {
    let mut s = start;
    let old = s;
    s = elicit::<String>("s?").await?;
    Ok(s + "|" + &old)
}

#[tokio::test]
async fn a_moved_local_overwritten_by_an_answer() {
    let outcome = differential(&overwrite, plain!(plain::overwrite), json!({"start": "a"}), echo).await;
    assert_eq!(outcome.text(), "?s|a");
    assert_eq!(outcome.rounds, 1);
}

/// The accumulator moved into the next value each iteration.
#[saga_tool]
async fn accumulate(n: u32) -> Result<String, SagaError> {
    let mut acc = String::new();
    for i in 0..n {
        let old = acc;
        acc = old + &elicit::<String>(format!("{i}?")).await?;
    }
    Ok(acc)
}

#[tokio::test]
async fn an_accumulator_moved_and_reassigned_in_a_loop() {
    let outcome = differential(&accumulate, plain!(plain::accumulate), json!({"n": 3}), echo).await;
    assert_eq!(outcome.text(), "?0?1?2");
    assert_eq!(outcome.rounds, 3);
}

/// Deferred initialisation, with the declared type the only annotation.
#[saga_tool]
async fn deferred(flag: bool) -> Result<String, SagaError> {
    let x: i64;
    if flag {
        x = elicit("#x?").await?;
    } else {
        x = 0;
    }
    checkpoint().await;
    Ok(x.to_string())
}

#[tokio::test]
async fn a_local_declared_without_a_value_and_assigned_by_an_answer() {
    let outcome = differential(&deferred, plain!(plain::deferred), json!({"flag": true}), echo).await;
    assert_eq!(outcome.text(), "3");
    assert_eq!(outcome.rounds, 2);
    let outcome = differential(&deferred, plain!(plain::deferred), json!({"flag": false}), echo).await;
    assert_eq!(outcome.text(), "0");
    assert_eq!(outcome.rounds, 1);
}

/// A local named like the tool, which is also a unit struct of that name.
#[saga_tool]
async fn summary(topic: String) -> Result<String, SagaError> {
    let summary = sample(format!("sum {topic}")).await?.text().to_owned();
    Ok(summary)
}

#[tokio::test]
async fn a_local_named_like_its_tool() {
    let outcome = differential(&summary, plain!(plain::summary), json!({"topic": "x"}), echo).await;
    assert_eq!(outcome.text(), "SUM X");
}

#[derive(Serialize, Deserialize)]
struct Point {
    x: i64,
    y: i64,
}

/// Width and precision named by locals; a shorthand field pattern.
#[saga_tool]
async fn layout(name: String) -> Result<String, SagaError> {
    let width = 6;
    let prec = 2;
    let Point { x, y } = Point { x: 3, y: 4 };
    checkpoint().await;
    let ratio = elicit::<i64>("#ratio?").await? as f64 / 4.0;
    Ok(format!("[{name:>width$}] {ratio:.prec$} {x},{y}"))
}

#[tokio::test]
async fn format_specs_and_field_shorthand() {
    let outcome = differential(&layout, plain!(plain::layout), json!({"name": "ab"}), echo).await;
    assert_eq!(outcome.text(), "[    ab] 1.75 3,4");
    assert_eq!(outcome.rounds, 2);
}

#[derive(Serialize, Deserialize)]
struct Named {
    b: String,
}

/// A field moved into a struct and read through it inside `format!`; a named argument
/// that shadows a moved local's name.
#[saga_tool]
async fn macro_names(b: String, name: String) -> Result<String, SagaError> {
    let f = Named { b };
    let owned = name;
    checkpoint().await;
    let tail: String = elicit("tail?").await?;
    Ok(format!("{} {name} {tail}", f.b, name = owned))
}

#[tokio::test]
async fn standard_macros_read_fields_and_named_arguments() {
    let outcome = differential(
        &macro_names,
        plain!(plain::macro_names),
        json!({"b": "B", "name": "N"}),
        echo,
    )
    .await;
    assert_eq!(outcome.text(), "B N ?liat");
}

/// Locals named only in the spec of a positional argument (`{:0width$}`, `{:.prec$}`,
/// `{:>pad$}`), one of them shadowed after the suspension: each is saved and renamed.
#[saga_tool]
async fn positional_specs(n: u32) -> Result<String, SagaError> {
    let width = 5;
    let prec = 3;
    let pad = 4;
    let x = 1.5f64;
    let tail: String = elicit("tail?").await?;
    let first = format!("{:0width$} {:.prec$} {:>pad$}", n, x, tail);
    let width = width + 2;
    checkpoint().await;
    Ok(format!("{first} [{:0width$}] [{x:width$}]", n))
}

#[tokio::test]
async fn width_and_precision_of_positional_arguments() {
    let outcome = differential(
        &positional_specs,
        plain!(plain::positional_specs),
        json!({"n": 42}),
        echo,
    )
    .await;
    assert_eq!(outcome.text(), "00042 1.500 ?liat [0000042] [    1.5]");
    assert_eq!(outcome.rounds, 2);
}

/// A helper returning `Option`, with `?` on options before and after a suspension.
#[saga_runtime::prelude::saga_fn]
async fn first_positive(v: Vec<i64>) -> Option<i64> {
    let x = *v.first()?;
    checkpoint().await;
    let y = v.get(1).copied().filter(|y| *y > 0)?;
    Some(x + y)
}

#[saga_tool]
async fn options(v: Vec<i64>) -> Result<String, SagaError> {
    let found = first_positive(v.clone()).await;
    let none = first_positive(Vec::new()).await;
    Ok(format!("{found:?} {none:?}"))
}

#[tokio::test]
async fn question_mark_on_options_in_a_helper() {
    let outcome = differential(&options, plain!(plain::options), json!({"v": [2, 5]}), echo).await;
    assert_eq!(outcome.text(), "Some(7) None");
    let outcome = differential(&options, plain!(plain::options), json!({"v": [2, -5]}), echo).await;
    assert_eq!(outcome.text(), "None None");
}

async fn plus_one(n: i64) -> i64 {
    n + 1
}

#[saga_runtime::prelude::saga_fn]
async fn doubled(n: i64) -> Result<i64, SagaError> {
    checkpoint().await;
    Ok(n * 2)
}

#[saga_runtime::prelude::saga_fn]
async fn asked(prompt: String) -> Result<i64, SagaError> {
    elicit::<i64>(prompt).await
}

/// Suspensions inside the arguments of awaited calls, of ordinary async fns and of
/// helpers; `?` inside such arguments; other crates' `join_all` and `join!` of ordinary
/// futures beside saga's.
#[saga_tool]
async fn call_arguments(base: i64) -> Result<String, SagaError> {
    let n = plus_one(elicit::<i64>("#n?").await?).await;
    let m = doubled(elicit::<i64>("#m?").await?).await?;
    let k = doubled(asked(format!("#k{base}?")).await?).await?;
    let parsed = doubled("21".parse::<i64>().map_err(SagaError::msg)?).await?;
    let ones: Vec<i64> = futures::future::join_all((0..3).map(plus_one)).await;
    let (a, b) = tokio::join!(plus_one(10), plus_one(20));
    Ok(format!("{n} {m} {k} {parsed} {ones:?} {a} {b}"))
}

#[tokio::test]
async fn suspensions_in_the_arguments_of_awaited_calls() {
    let outcome = differential(
        &call_arguments,
        plain!(plain::call_arguments),
        json!({"base": 7}),
        echo,
    )
    .await;
    // "#n?" has 3 characters, "#m?" 3, "#k7?" 4.
    assert_eq!(outcome.text(), "4 6 8 42 [1, 2, 3] 11 21");
    assert_eq!(outcome.rounds, 6);
}

/// `for` over ranges that suspend: an unbounded one left early, an inclusive one whose
/// last item must come once.
#[saga_tool]
async fn ranges(limit: u32) -> Result<String, SagaError> {
    let mut seen = Vec::new();
    for i in 0..=limit {
        checkpoint().await;
        seen.push(i.to_string());
    }
    for attempt in 1u32.. {
        let answer: String = elicit(format!("try {attempt}?")).await?;
        if answer.starts_with("?3") {
            return Ok(format!("{} after {attempt}", seen.join(",")));
        }
    }
    Ok("never".into())
}

#[tokio::test]
async fn ranges_are_saved_not_collected() {
    let outcome = differential(&ranges, plain!(plain::ranges), json!({"limit": 2}), echo).await;
    // "try N?" comes back reversed: "?3 yrt" at the third attempt.
    assert_eq!(outcome.text(), "0,1,2 after 3");
    assert_eq!(outcome.rounds, 6);
}

/// The user's own functions, named like saga's requests.
mod db {
    pub async fn checkpoint(n: u32) -> u32 {
        n * 10
    }

    pub async fn sample(rows: &[u32]) -> u32 {
        rows.iter().copied().max().unwrap_or(0)
    }
}

/// `db::checkpoint(..)` and `db::sample(..)` are ordinary async fns; saga's own
/// requests may be named through `saga_runtime` too.
#[saga_tool]
async fn own_names(rows: Vec<u32>) -> Result<String, SagaError> {
    let saved = db::checkpoint(3).await;
    saga_runtime::prelude::checkpoint().await;
    let largest = db::sample(&rows).await;
    let note: String = saga_runtime::prelude::elicit("note?").await?;
    Ok(format!("{saved} {largest} {note}"))
}

#[tokio::test]
async fn functions_named_like_requests_in_other_modules() {
    let outcome = differential(
        &own_names,
        plain!(plain::own_names),
        json!({"rows": [4, 9, 2]}),
        echo,
    )
    .await;
    assert_eq!(outcome.text(), "30 9 ?eton");
    assert_eq!(outcome.rounds, 2);
}
