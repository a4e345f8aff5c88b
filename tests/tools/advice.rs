//! The fixes that `#[saga_tool]`'s errors about saved locals advise, written exactly as
//! they say, compile (this file is built) and keep the behaviour the code was written for:
//! each local holds, after the suspension, the value it had before it. One case per
//! diagnostic, named after its trybuild case in `saga-runtime/tests/ui`.

use saga_runtime::prelude::*;
use saga_runtime::testing::{Answer, TestClient};
use serde_json::json;

/// `saga_tool_unserializable_local`: "derive `Serialize` and `Deserialize` for the type".
#[derive(Serialize, Deserialize)]
struct Connection {
    host: String,
}

fn connect(host: &str) -> Connection {
    Connection {
        host: host.to_owned(),
    }
}

#[saga_tool]
async fn migrate(host: String) -> Result<String, SagaError> {
    let connection = connect(&host);
    let database: String = elicit("Which database should be migrated?")
        .key("database")
        .await?;
    Ok(format!("migrating {database} on {}", connection.host))
}

#[tokio::test]
async fn a_local_whose_type_derives_both_serde_traits_is_kept() {
    let run = TestClient::new(migrate)
        .call("migrate", json!({"host": "db-1"}))
        .answer("database", Answer::accept(json!("orders")))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "migrating orders on db-1");
}

/// `saga_tool_for_item_part_unsaveable`: "derive `Serialize` and `Deserialize` for
/// `Handle`, and if the item's type skips this field (`#[serde(skip)]`), save it there
/// too".
#[derive(Default, Serialize, Deserialize)]
struct Handle {
    id: u32,
}

#[derive(Serialize, Deserialize)]
struct Job {
    name: String,
    handle: Handle,
}

#[saga_tool]
async fn run_jobs(names: Vec<String>) -> Result<String, SagaError> {
    let jobs: Vec<Job> = names
        .into_iter()
        .zip(1..)
        .map(|(name, id)| Job {
            name,
            handle: Handle { id },
        })
        .collect();
    let mut done = Vec::new();
    for Job { name, handle } in jobs {
        if elicit::<bool>(format!("run {name}?"))
            .key(name.clone())
            .await?
        {
            done.push(format!("{name}#{}", handle.id));
        }
    }
    Ok(done.join(", "))
}

#[tokio::test]
async fn a_part_of_a_loops_item_whose_type_derives_both_is_kept_with_its_value() {
    let run = TestClient::new(run_jobs)
        .call("run_jobs", json!({"names": ["a", "b", "c"]}))
        .answer("a", Answer::accept(json!(true)))
        .answer("b", Answer::accept(json!(false)))
        .answer("c", Answer::accept(json!(true)))
        .run()
        .await
        .expect("the call completes");
    // The ids the handles were made with, also for `c`, which was among the items still
    // to visit at each suspension (with `#[serde(skip)]` left on, its handle read back as
    // the default, 0).
    assert_eq!(run.text(), "a#1, c#3");
}

/// `saga_tool_for_over_borrowed_iterator`, its first fix: "loop by position and borrow
/// inside".
#[saga_tool]
async fn review_by_position(names: Vec<String>) -> Result<String, SagaError> {
    let mut accepted = Vec::new();
    for i in 0..names.len() {
        let name = &names[i];
        if name.is_empty() {
            continue;
        }
        if elicit::<bool>(format!("accept {name}?"))
            .key(name.clone())
            .await?
        {
            accepted.push(names[i].clone());
        }
    }
    Ok(accepted.join(", "))
}

/// Its second fix: "over owned items".
#[saga_tool]
async fn review_owned(names: Vec<String>) -> Result<String, SagaError> {
    let mut accepted = Vec::new();
    for name in names
        .iter()
        .filter(|name| !name.is_empty())
        .cloned()
        .collect::<Vec<_>>()
    {
        if elicit::<bool>(format!("accept {name}?"))
            .key(name.clone())
            .await?
        {
            accepted.push(name.clone());
        }
    }
    Ok(accepted.join(", "))
}

#[tokio::test]
async fn both_fixes_of_a_loop_over_borrowed_items_visit_the_same_items() {
    for (tool, client) in [
        ("review_by_position", TestClient::new(review_by_position)),
        ("review_owned", TestClient::new(review_owned)),
    ] {
        let run = client
            .call(tool, json!({"names": ["ada", "", "bo", "cy"]}))
            .answer("ada", Answer::accept(json!(true)))
            .answer("bo", Answer::accept(json!(false)))
            .answer("cy", Answer::accept(json!(true)))
            .run()
            .await
            .expect("the call completes");
        assert_eq!(run.text(), "ada, cy", "{tool}");
        assert_eq!(run.asked().len(), 3, "{tool}: the empty name is skipped");
    }
}

/// `saga_tool_borrow_from_method`: "keep an owned value instead (`.cloned()`, …)".
#[saga_tool]
async fn greet_first(names: Vec<String>) -> Result<String, SagaError> {
    let first = names.first().cloned().unwrap();
    let greeting: String = elicit("Which greeting?").key("greeting").await?;
    Ok(format!("{greeting}, {first}"))
}

#[tokio::test]
async fn an_owned_copy_of_a_borrow_is_kept() {
    let run = TestClient::new(greet_first)
        .call("greet_first", json!({"names": ["ada", "bo"]}))
        .answer("greeting", Answer::accept(json!("hello")))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "hello, ada");
}
