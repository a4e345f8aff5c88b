use std::fmt;

use saga_runtime::prelude::*;
use saga_runtime::prelude::{SagaError, checkpoint, elicit, join_all};
use serde_json::{Value, json};

use crate::harness::{Outcome, Script, accept, differential, prompt_of};

/// Answers `first?` with `first`, `keep NAME?` with whether NAME is not `drop`, and
/// `#total?` with `total`.
fn answers(first: &'static str, total: i64) -> impl Fn() -> Script {
    move || {
        Script::new(move |_key, request| {
            let prompt = prompt_of(request);
            if prompt == "first?" {
                accept(json!({ "value": first }))
            } else if let Some(name) = prompt.strip_prefix("keep ") {
                accept(json!({ "value": name != "drop?" }))
            } else {
                accept(json!({ "value": total }))
            }
        })
    }
}

/// `anyhow::ensure!` before the first suspension and in a loop, `bail!` after a
/// suspension, and `?` on a std error converted into `anyhow::Error`.
#[saga_tool]
async fn vetted(n: i64, names: Vec<String>) -> anyhow::Result<String> {
    anyhow::ensure!(n > 0, "n must be positive, not {n}");
    let first: String = elicit("first?").await?;
    if first == "bail" {
        anyhow::bail!("bailed after the first answer");
    }
    let mut kept = Vec::new();
    for name in &names {
        let keep: bool = elicit(format!("keep {name}?")).await?;
        anyhow::ensure!(keep || name != "must", "{name} had to be kept");
        if keep {
            kept.push(name.clone());
        }
    }
    let total: i64 = elicit("#total?").await?;
    let small: u8 = u8::try_from(total)?;
    Ok(format!("{first}: {} ({small})", kept.join(",")))
}

#[machine_only]
async fn run_vetted(arguments: Value, first: &'static str, total: i64) -> Outcome {
    differential(&vetted, plain!(plain::vetted), arguments, answers(first, total)).await
}

fn error_text(outcome: &Outcome) -> (bool, &str) {
    (
        outcome.result["isError"].as_bool().unwrap_or(false),
        outcome.text(),
    )
}

#[tokio::test]
async fn anyhow_macros_end_the_saga_with_their_error() {
    let names = json!(["a", "drop", "b"]);
    let ok = run_vetted(json!({"n": 1, "names": names}), "x", 7).await;
    assert_eq!(error_text(&ok), (false, "x: a,b (7)"));

    let before = run_vetted(json!({"n": 0, "names": names}), "x", 7).await;
    assert_eq!(error_text(&before), (true, "n must be positive, not 0"));
    assert_eq!(before.rounds, 0);

    let after = run_vetted(json!({"n": 1, "names": names}), "bail", 7).await;
    assert_eq!(error_text(&after), (true, "bailed after the first answer"));
    assert_eq!(after.rounds, 1);

    let in_loop = differential(
        &vetted,
        plain!(plain::vetted),
        json!({"n": 1, "names": ["a", "must", "b"]}),
        || {
            Script::new(|_key, request| {
                let prompt = prompt_of(request);
                accept(
                    json!({ "value": if prompt == "first?" { json!("x") } else { json!(false) } }),
                )
            })
        },
    )
    .await;
    assert_eq!(error_text(&in_loop), (true, "must had to be kept"));
    assert_eq!(in_loop.rounds, 3);

    let question_mark = run_vetted(json!({"n": 1, "names": []}), "x", 300).await;
    assert_eq!(question_mark.result["isError"], true);
    assert!(
        question_mark.text().contains("out of range"),
        "{question_mark:?}"
    );
}

/// An error type of the user's, `From<SagaError>`.
#[derive(Debug)]
pub struct Refusal(String);

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "refused: {}", self.0)
    }
}

impl From<SagaError> for Refusal {
    fn from(error: SagaError) -> Self {
        Refusal(error.to_string())
    }
}

/// A macro of the user's whose body returns: the macro cannot see the `return`.
macro_rules! refuse_unless {
    ($ok:expr, $($why:tt)*) => {
        if !$ok {
            return Err(Refusal(format!($($why)*)));
        }
    };
}

/// Ends with `Err`, through the helper's `bail!` or the tool's own macro.
#[saga_fn]
async fn checked_total(limit: i64) -> anyhow::Result<i64> {
    checkpoint().await;
    let total: i64 = elicit("#total?").await?;
    if total > limit {
        anyhow::bail!("{total} is over {limit}");
    }
    Ok(total)
}

#[saga_tool]
async fn refusing(limit: i64) -> Result<String, Refusal> {
    refuse_unless!(limit >= 0, "a negative limit {limit}");
    let first: String = elicit("first?").await?;
    let mut round = 0;
    loop {
        round += 1;
        let total = checked_total(limit)
            .await
            .map_err(|error| Refusal(error.to_string()))?;
        refuse_unless!(total != 13, "{first} answered 13 in round {round}");
        if round == 2 {
            return Ok(format!("{first} {total}"));
        }
    }
}

#[tokio::test]
async fn a_users_macro_and_a_helpers_bail_end_the_saga() {
    let run = |limit: i64, total: i64| {
        differential(
            &refusing,
            plain!(plain::refusing),
            json!({ "limit": limit }),
            answers("x", total),
        )
    };
    assert_eq!(
        error_text(&run(-1, 0).await),
        (true, "refused: a negative limit -1")
    );
    assert_eq!(error_text(&run(20, 5).await), (false, "x 5"));
    assert_eq!(
        error_text(&run(20, 13).await),
        (true, "refused: x answered 13 in round 1")
    );
    assert_eq!(error_text(&run(3, 5).await), (true, "refused: 5 is over 3"));
}

/// A helper returning `Option`, leaving through a macro whose body returns `None`.
macro_rules! none_unless {
    ($ok:expr) => {
        if !$ok {
            return None;
        }
    };
}

#[saga_fn]
async fn positive_total() -> Option<i64> {
    let total: i64 = elicit("#total?").await.ok()?;
    none_unless!(total > 0);
    Some(total)
}

#[saga_tool]
async fn optional(times: u32) -> Result<String, SagaError> {
    let mut seen = Vec::new();
    for _ in 0..times {
        seen.push(positive_total().await);
    }
    Ok(format!("{seen:?}"))
}

#[tokio::test]
async fn an_option_helper_leaves_through_a_macro() {
    let run = |total: i64| {
        differential(
            &optional,
            plain!(plain::optional),
            json!({"times": 2}),
            answers("x", total),
        )
    };
    assert_eq!(run(4).await.text(), "[Some(4), Some(4)]");
    assert_eq!(run(-4).await.text(), "[None, None]");
}

/// The fixes the compile errors suggest, compiled and run: a `&'static str` owned with
/// `String::from(..)` (and read back with `.as_str()`), `join_all`'s answers collected
/// into one `Result` before `?`, a borrow owned before the suspension.
#[saga_tool]
async fn suggested_fixes(fast: bool, names: Vec<String>) -> Result<String, SagaError> {
    let mode = String::from(if fast { "fast" } else { "slow" });
    let first = names.first().map(|name| name.as_str().to_owned());
    let kept: Vec<bool> = join_all(names.iter().map(|n| elicit::<bool>(format!("keep {n}?"))))
        .await
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    checkpoint().await;
    let speed = match mode.as_str() {
        "fast" => 2,
        _ => 1,
    };
    Ok(format!("{mode} {speed} {kept:?} {first:?}"))
}

#[tokio::test]
async fn the_suggested_fixes_compile_and_keep_the_behaviour() {
    let script = || {
        Script::new(|_key, request| {
            if prompt_of(request) == "keep b?" {
                json!({ "action": "decline" })
            } else {
                accept(json!({ "value": true }))
            }
        })
    };
    let run = |fast: bool, names: Value| {
        differential(
            &suggested_fixes,
            plain!(plain::suggested_fixes),
            json!({ "fast": fast, "names": names }),
            script,
        )
    };
    let ok = run(true, json!(["a", "c"])).await;
    assert_eq!(error_text(&ok), (false, r#"fast 2 [true, true] Some("a")"#));
    assert_eq!(ok.rounds, 2);
    let declined = run(false, json!(["a", "b", "c"])).await;
    assert_eq!(declined.result["isError"], true, "{declined:?}");
    assert_eq!(declined.rounds, 1);
}
