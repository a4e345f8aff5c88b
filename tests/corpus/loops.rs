use saga_runtime::prelude::*;
use serde_json::json;

use crate::harness::{Script, accept, differential, prompt_of, says};

#[saga_tool]
pub async fn looper(n: u32, items: Vec<String>) -> Result<String, SagaError> {
    let mut names = Vec::new();
    let mut i = 0;
    while i < n {
        let name: String = elicit(format!("name #{i}?")).await?;
        if name == "stop" {
            break;
        }
        names.push(name);
        i += 1;
    }
    'outer: for item in items {
        for round in 0..2 {
            let ok: bool = elicit(format!("keep {item} ({round})?")).await?;
            if !ok {
                continue 'outer;
            }
        }
        names.push(item);
    }
    let total = match names.len() {
        0 => {
            checkpoint().await;
            0
        }
        k => {
            let v = sample(format!("{k} names")).await?;
            v.text().len()
        }
    };
    let (a, b) = join!(elicit::<i64>("a?"), elicit::<i64>("b?"));
    Ok(format!("{names:?} {total} {}", a? + b?))
}

pub fn looper_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        if prompt.starts_with("name #") {
            let n: u32 = prompt[6..prompt.len() - 1].parse().unwrap();
            accept(json!({"value": if n == 2 { "stop".to_owned() } else { format!("n{n}") }}))
        } else if prompt.starts_with("keep ") {
            accept(json!({"value": !prompt.contains("b (1)")}))
        } else if prompt == "a?" {
            accept(json!({"value": 40}))
        } else if prompt == "b?" {
            accept(json!({"value": 2}))
        } else {
            says("four")
        }
    })
}

#[tokio::test]
async fn loops_labels_matches_and_joins() {
    let outcome = differential(
        &looper,
        plain!(plain::looper),
        json!({"n": 5, "items": ["a", "b", "c"]}),
        looper_script,
    )
    .await;
    assert_eq!(outcome.text(), r#"["n0", "n1", "a", "c"] 4 42"#);
}

/// A table of `&'static str` pairs, a slice of words and a static in a module, each walked
/// by value across suspensions (nested, labelled); their items are `&'static str`, which
/// no token can give back, so saga saves the position and names the constant again.
const STEPS: [(&str, &str); 3] = [
    ("name", "What is your name?"),
    ("city", "Which city?"),
    ("pet", "A pet?"),
];
const WORDS: &[&str] = &["alpha", "beta"];
mod tables {
    pub static LIMITS: [u32; 2] = [10, 20];
    pub static ORDER: [&str; 2] = ["first", "second"];
}

/// Not `Copy`: a constant of these is not named again, its items are saved (through a
/// `Vec`, as the error for `for kind in KINDS` says to write).
#[derive(Debug, Serialize, Deserialize)]
pub enum Kind {
    Small,
    Large,
}
const KINDS: [Kind; 2] = [Kind::Small, Kind::Large];

fn double(n: i64) -> i64 {
    n * 2
}
fn square(n: i64) -> i64 {
    n * n
}
/// Functions: `Copy` but not `Serialize`, so never fingerprinted; read before the
/// suspension only, so nothing is bound again.
const STEPS_FNS: [fn(i64) -> i64; 2] = [double, square];

#[saga_tool]
pub async fn constant_tables(who: String) -> Result<String, SagaError> {
    let mut out = vec![who];
    'steps: for (label, question) in STEPS {
        for word in WORDS {
            let answer: String = elicit(format!("{question} ({word})")).await?;
            if answer == "skip" {
                continue 'steps;
            }
            if answer == "stop" {
                break 'steps;
            }
            out.push(format!("{label}/{word}={answer}"));
        }
    }
    // A binding declared `mut` changes before the suspension: this loop saves its items
    // (u32s), and the change is kept.
    for mut limit in tables::LIMITS {
        limit += 1;
        let extra: i64 = elicit(format!("extra for {limit}?")).await?;
        out.push(format!("{limit}+{extra}"));
    }
    // A static by a path of two names, its binding kept across the suspension.
    for place in tables::ORDER {
        let who: String = elicit(format!("who is {place}?")).await?;
        out.push(format!("{place}:{who}"));
    }
    // A local named as a constant is still a local: its items are saved.
    #[allow(non_snake_case)]
    let NAMES = vec!["x".to_owned(), "y".to_owned()];
    for name in NAMES {
        let size: i64 = elicit(format!("size of {name}?")).await?;
        out.push(format!("{name}={size}"));
    }
    for kind in Vec::from(KINDS) {
        let note: String = elicit(format!("note on {kind:?}?")).await?;
        out.push(format!("{kind:?}:{note}"));
    }
    // Items that are not `Copy`, not read after the suspension: nothing to bind again.
    for kind in KINDS {
        let mark: String = elicit(format!("mark {kind:?}?")).await?;
        out.push(mark);
    }
    for apply in STEPS_FNS {
        let seed = apply(3);
        let got: i64 = elicit(format!("apply to {seed}?")).await?;
        out.push(format!("{seed}->{got}"));
    }
    Ok(out.join(" "))
}

pub fn constant_tables_script() -> Script {
    Script::new(|_key, request| {
        let prompt = prompt_of(request);
        let value = match prompt.as_str() {
            "What is your name? (alpha)" => json!("Ada"),
            "What is your name? (beta)" => json!("Lovelace"),
            "Which city? (alpha)" => json!("skip"),
            "A pet? (alpha)" => json!("cat"),
            "A pet? (beta)" => json!("stop"),
            "extra for 11?" => json!(5),
            "extra for 21?" => json!(7),
            "who is first?" => json!("Ann"),
            "who is second?" => json!("Bo"),
            "size of x?" => json!(1),
            "size of y?" => json!(2),
            "note on Small?" => json!("s"),
            "note on Large?" => json!("l"),
            "mark Small?" => json!("m1"),
            "mark Large?" => json!("m2"),
            "apply to 6?" => json!(60),
            "apply to 9?" => json!(90),
            other => panic!("not asked by the tool: {other}"),
        };
        accept(json!({ "value": value }))
    })
}

#[tokio::test]
async fn for_loops_over_constants_by_value_resume_at_their_position() {
    let outcome = differential(
        &constant_tables,
        plain!(plain::constant_tables),
        json!({"who": "Zed"}),
        constant_tables_script,
    )
    .await;
    assert_eq!(
        outcome.text(),
        "Zed name/alpha=Ada name/beta=Lovelace pet/alpha=cat 11+5 21+7 \
         first:Ann second:Bo x=1 y=2 Small:s Large:l m1 m2 6->60 9->90"
    );
    assert_eq!(outcome.rounds, 17);
}
