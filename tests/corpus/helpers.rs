use saga_runtime::prelude::*;
use serde_json::{Value, json};

use crate::harness::{Script, accept, differential, prompt_of, says};

fn flag(value: bool) -> Value {
    accept(json!({ "value": value }))
}

fn text(value: &str) -> Value {
    accept(json!({ "value": value }))
}

/// Asks the user to confirm; usable from any saga.
#[saga_fn]
async fn confirm(what: &str) -> Result<bool, SagaError> {
    elicit::<bool>(format!("Confirm {what}?")).await
}

/// The API's example: a helper in a `for` over a borrowed `Vec`, with `?`.
#[saga_tool]
pub async fn cleanup(paths: Vec<String>) -> Result<String, SagaError> {
    let mut removed = Vec::new();
    for p in &paths {
        if confirm(p).await? {
            removed.push(p.clone());
        }
    }
    Ok(format!("removed {}", removed.join(", ")))
}

pub fn yes_to_b() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        flag(prompt.contains(" b") || prompt.contains(" c"))
    })
}

#[tokio::test]
async fn a_helper_in_a_loop_over_a_borrowed_vec() {
    let outcome = differential(
        &cleanup,
        plain!(plain::cleanup),
        json!({"paths": ["a", "b", "c"]}),
        yes_to_b,
    )
    .await;
    assert_eq!(outcome.text(), "removed b, c");
    assert_eq!(outcome.rounds, 3);
}

/// A helper that keeps locals across several suspensions, checkpoints, samples and
/// calls another helper; ordinary async functions awaited beside it.
#[saga_fn]
async fn interview(topic: String, rounds: u32) -> Result<Vec<String>, SagaError> {
    let mut notes = Vec::new();
    let mut round = 0;
    while round < rounds {
        let answer: String = elicit(format!("{topic} #{round}?")).await?;
        checkpoint().await;
        notes.push(answer);
        round += 1;
    }
    if confirm(&format!("summary of {topic}")).await? {
        let summary = sample(format!("summarise {}", notes.join("/"))).await?;
        notes.push(summary.text().to_owned());
    }
    let pause = settle(notes.len()).await;
    notes.push(format!("paused {pause}"));
    Ok(notes)
}

/// An ordinary `async fn`, awaited in a saga as written.
async fn settle(n: usize) -> usize {
    tokio::task::yield_now().await;
    n * 10
}

/// A helper with no suspension at all on some paths, and a `&mut` parameter used before
/// its first suspension only.
#[saga_fn]
async fn tally(counts: &mut Vec<u32>, extra: u32) -> u32 {
    counts.push(extra);
    let total: u32 = counts.iter().sum();
    if total > 100 {
        checkpoint().await;
    }
    total
}

#[saga_tool]
pub async fn research(topics: Vec<String>) -> Result<String, SagaError> {
    let mut lines = Vec::new();
    let mut counts = vec![1];
    for (i, topic) in topics.iter().enumerate() {
        let notes = interview(topic.clone(), 2).await?;
        let total = tally(&mut counts, notes.len() as u32).await;
        lines.push(format!("{i}:{}={total}", notes.join("|")));
    }
    let last = tally(&mut counts, 200).await;
    // Two helpers in one expression, in Rust's evaluation order.
    let both = confirm("first").await? && confirm("second").await?;
    Ok(format!("{} / {last} / {both}", lines.join(" ")))
}

pub fn research_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if request["method"] == "sampling/createMessage" {
            return says(&prompt.to_uppercase());
        }
        match prompt.as_str() {
            "Confirm summary of x?" => flag(true),
            "Confirm summary of y?" => flag(false),
            "Confirm first?" => flag(false),
            "Confirm second?" => panic!("`&&` asked its right side after a false left"),
            other => text(&other.replace('?', "!")),
        }
    })
}

#[tokio::test]
async fn helpers_nest_loop_sample_checkpoint_and_mix_with_ordinary_futures() {
    let outcome = differential(
        &research,
        plain!(plain::research),
        json!({"topics": ["x", "y"]}),
        research_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        "0:x #0!|x #1!|SUMMARISE X #0!/X #1!|paused 30=5 \
         1:y #0!|y #1!|paused 20=8 / 208 / false"
    );
}

/// Associated helpers, called with `Self::` and with the type's path.
struct Steps;

impl Steps {
    #[saga_fn]
    async fn ask_twice(prompt: &str) -> Result<(String, String), SagaError> {
        // The borrow ends before the first suspension.
        let prompt = prompt.to_owned();
        let first: String = elicit(format!("{prompt} (1)?")).await?;
        let second: String = elicit(format!("{prompt} (2)?")).await?;
        Ok((first, second))
    }
}

#[saga_tool]
async fn associated(prompt: String) -> Result<String, SagaError> {
    let (a, b) = Steps::ask_twice(&prompt).await?;
    let c = format!("{a}{b}");
    let (d, _) = Steps::ask_twice(&c).await?;
    Ok(d)
}

#[tokio::test]
async fn associated_helpers() {
    let script = || {
        Script::new(|_key, request| {
            let prompt = prompt_of(request);
            text(&prompt[..prompt.len().min(3)])
        })
    };
    let outcome = differential(
        &associated,
        plain!(plain::associated),
        json!({"prompt": "p"}),
        script,
    )
    .await;
    assert_eq!(outcome.text(), "p (");
    assert_eq!(outcome.rounds, 4);
}

/// A declined elicitation inside a helper reaches the tool through `?`.
#[saga_tool]
async fn declined(items: Vec<String>) -> Result<String, SagaError> {
    let mut kept = 0;
    for item in items {
        match confirm(&item).await {
            Ok(true) => kept += 1,
            Ok(false) => {}
            Err(error) => return Ok(format!("stopped after {kept}: {error}")),
        }
    }
    Ok(format!("kept {kept}"))
}

#[tokio::test]
async fn errors_inside_helpers_reach_the_caller() {
    let script = || {
        Script::new(|_key, request| {
            if prompt_of(request).contains("c?") {
                json!({"action": "decline"})
            } else {
                flag(true)
            }
        })
    };
    let outcome = differential(
        &declined,
        plain!(plain::declined),
        json!({"items": ["a", "b", "c", "d"]}),
        script,
    )
    .await;
    assert!(
        outcome.text().starts_with("stopped after 2"),
        "{}",
        outcome.text()
    );
}

/// A helper that asks several things in one round, and one that returns nothing.
#[saga_fn]
async fn pick_all(names: Vec<String>) -> Result<Vec<String>, SagaError> {
    let answers = join_all(names.iter().map(|n| elicit::<bool>(format!("keep {n}?")))).await;
    let mut kept = Vec::new();
    for (name, keep) in names.into_iter().zip(answers) {
        if keep? {
            kept.push(name);
        }
    }
    let (a, b) = join!(elicit::<String>("tag?"), sample("colour?"));
    kept.push(format!("{}-{}", a?, b?.text()));
    Ok(kept)
}

#[saga_fn]
async fn note(cx: &SagaContext, what: String) {
    checkpoint().await;
    let _ = cx.principal();
    let _ = what;
}

/// Three levels: a tool, a helper, a helper.
#[saga_fn]
async fn choose(cx: &SagaContext, options: Vec<String>) -> Result<String, SagaError> {
    let kept = pick_all(options).await?;
    note_twice(cx, kept.len()).await;
    Ok(kept.join("+"))
}

#[saga_fn]
async fn note_twice(cx: &SagaContext, n: usize) {
    note(cx, format!("{n}")).await;
    note(cx, format!("{n}")).await;
}

#[saga_fn]
async fn number(prompt: &str) -> Result<i64, SagaError> {
    let prompt = prompt.to_owned();
    elicit::<i64>(prompt).await
}

/// Helpers wherever an expression is evaluated.
#[saga_tool]
pub async fn everywhere(cx: &SagaContext, options: Vec<String>) -> Result<String, SagaError> {
    let mut out = Vec::new();
    // A call argument and a method-call argument.
    out.push(format!("{}", number("a?").await? + number("b?").await?));
    // A `match` scrutinee and arms.
    let word = match number("pick?").await? {
        1 => choose(cx, options.clone()).await?,
        n => format!("n{n}"),
    };
    out.push(word);
    // A `while` condition.
    let mut rounds = 0;
    while number(&format!("again {rounds}?")).await? > 0 {
        rounds += 1;
    }
    out.push(format!("rounds {rounds}"));
    // A macro argument, a `let … else`, a helper that returns `()`.
    let Some(first) = options.first().cloned() else {
        return Ok(format!("none {}", number("why?").await?));
    };
    note(cx, first.clone()).await;
    out.push(format!("{first}:{}", number("last?").await?));
    Ok(out.join(" "))
}

pub fn everywhere_script() -> Script {
    let again = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(2));
    Script::new(move |_key, request| {
        let prompt = prompt_of(request);
        if request["method"] == "sampling/createMessage" {
            return says("red");
        }
        match prompt.as_str() {
            "a?" => accept(json!({"value": 2})),
            "b?" => accept(json!({"value": 3})),
            "pick?" => accept(json!({"value": 1})),
            "last?" => accept(json!({"value": 9})),
            "tag?" => text("t"),
            p if p.starts_with("keep ") => flag(p != "keep y?"),
            p if p.starts_with("again ") => accept(json!({
                "value": again.fetch_sub(1, std::sync::atomic::Ordering::SeqCst)
            })),
            other => panic!("unexpected prompt {other:?}"),
        }
    })
}

#[tokio::test]
async fn helpers_in_every_expression_position() {
    let outcome = differential(
        &everywhere,
        plain!(plain::everywhere),
        json!({"options": ["x", "y", "z"]}),
        everywhere_script,
    )
    .await;
    assert_eq!(outcome.text(), "5 x+z+t-red rounds 2 x:9");
}
