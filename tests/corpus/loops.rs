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
