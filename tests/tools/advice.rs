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
    let first = names.iter().max().cloned().unwrap();
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
    assert_eq!(run.text(), "hello, bo");
}

/// `saga_tool_borrow_across_suspension`: "hold an owned value instead".
#[saga_tool]
async fn greet_everyone(names: Vec<String>) -> Result<String, SagaError> {
    let everyone = names.join(" and ");
    let greeting: String = elicit("How should they be greeted?")
        .key("greeting")
        .await?;
    Ok(format!("{greeting}, {everyone}!"))
}

#[tokio::test]
async fn an_owned_value_in_place_of_a_borrowed_temporary_is_kept() {
    let run = TestClient::new(greet_everyone)
        .call("greet_everyone", json!({"names": ["ada", "bo"]}))
        .answer("greeting", Answer::accept(json!("hi")))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "hi, ada and bo!");
}

/// `saga_tool_borrow_from_function`: "keep an owned value instead".
fn longest(names: &[String]) -> &String {
    names.iter().max_by_key(|name| name.len()).unwrap()
}

#[saga_tool]
async fn greet_longest(names: Vec<String>) -> Result<String, SagaError> {
    let chosen = longest(&names).clone();
    let greeting: String = elicit("Greeting?").key("greeting").await?;
    Ok(format!("{greeting}, {chosen}"))
}

#[tokio::test]
async fn an_owned_copy_of_a_functions_borrow_is_kept() {
    let run = TestClient::new(greet_longest)
        .call("greet_longest", json!({"names": ["ada", "bobby", "cy"]}))
        .answer("greeting", Answer::accept(json!("hey")))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "hey, bobby");
}

/// `saga_tool_static_str_across_suspension`: "`String::from(..)`".
fn mode_of(fast: bool) -> &'static str {
    if fast { "fast" } else { "slow" }
}

#[saga_tool]
async fn deploy_mode(fast: bool) -> Result<String, SagaError> {
    let mode = String::from(mode_of(fast));
    let target: String = elicit("Target?").key("target").await?;
    Ok(format!("deploying to {target} ({mode})"))
}

#[tokio::test]
async fn an_owned_string_of_a_functions_static_str_is_kept() {
    let run = TestClient::new(deploy_mode)
        .call("deploy_mode", json!({"fast": false}))
        .answer("target", Answer::accept(json!("eu")))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "deploying to eu (slow)");
}

/// `saga_tool_mut_borrow_across_suspension`: "borrow the place again after the
/// suspension, where it is changed".
#[saga_tool]
async fn tally(mut yes: i64, mut no: i64, first: bool) -> Result<String, SagaError> {
    let extra: i64 = elicit("How many more?").key("extra").await?;
    let count = if first { &mut yes } else { &mut no };
    *count += extra;
    Ok(format!("{yes} yes, {no} no"))
}

#[tokio::test]
async fn a_mutable_borrow_made_again_after_the_suspension_changes_the_original() {
    for (first, expected) in [(true, "5 yes, 1 no"), (false, "2 yes, 4 no")] {
        let run = TestClient::new(tally)
            .call("tally", json!({"yes": 2, "no": 1, "first": first}))
            .answer("extra", Answer::accept(json!(3)))
            .run()
            .await
            .expect("the call completes");
        assert_eq!(run.text(), expected);
    }
}

/// `saga_tool_for_over_hash_map`: "`for (_, value) in &map`; for a count, a `let mut i =
/// 0;` incremented in the body".
#[saga_tool]
async fn review_scores(
    scores: std::collections::HashMap<String, i64>,
) -> Result<String, SagaError> {
    let mut accepted = Vec::new();
    let mut i = 0;
    for (_, score) in &scores {
        i += 1;
        if elicit::<bool>(format!("accept {score}?"))
            .key(score.to_string())
            .await?
        {
            accepted.push((i, *score));
        }
    }
    accepted.sort_by_key(|(_, score)| *score);
    let scores: Vec<i64> = accepted.iter().map(|(_, score)| *score).collect();
    let counts: Vec<i64> = accepted.iter().map(|(i, _)| *i).collect();
    Ok(format!("{scores:?} of {}", counts.len()))
}

#[tokio::test]
async fn a_loop_over_a_hash_maps_entries_visits_each_value_once() {
    let run = TestClient::new(review_scores)
        .call("review_scores", json!({"scores": {"a": 1, "b": 2, "c": 3}}))
        .answer("1", Answer::accept(json!(true)))
        .answer("2", Answer::accept(json!(false)))
        .answer("3", Answer::accept(json!(true)))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "[1, 3] of 2");
    assert_eq!(run.asked().len(), 3);
}

/// `saga_tool_value_from_accessor`: "own it where it is made …: `.to_owned()` after the
/// call".
#[derive(Serialize, Deserialize)]
struct Counter {
    n: i64,
}

impl Counter {
    fn get(&self, _key: &str) -> i64 {
        self.n
    }

    fn bump(&mut self) {
        self.n += 1;
    }
}

#[saga_tool]
async fn count_up(start: i64) -> Result<String, SagaError> {
    let mut counter = Counter { n: start };
    let before = counter.get("n").to_owned();
    counter.bump();
    let more: i64 = elicit("More?").key("more").await?;
    Ok(format!("{before} then {} (+{more})", counter.get("n")))
}

#[tokio::test]
async fn a_value_an_accessor_computed_is_kept_as_it_was_once_owned() {
    let run = TestClient::new(count_up)
        .call("count_up", json!({"start": 4}))
        .answer("more", Answer::accept(json!(2)))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "4 then 5 (+2)");
}

/// `saga_tool_mut_binding_tested`: "for a `&mut` …, borrow it again after the suspension,
/// where it is changed".
#[derive(Serialize, Deserialize)]
struct Node {
    leaf: bool,
    size: i64,
}

#[saga_tool]
async fn grow(sizes: Vec<i64>) -> Result<String, SagaError> {
    let mut nodes: Vec<Node> = sizes
        .into_iter()
        .map(|size| Node { leaf: true, size })
        .collect();
    if let Some(node @ Node { leaf: true, .. }) = nodes.get_mut(0) {
        node.leaf = false;
        let more: i64 = elicit("How much more?").key("more").await?;
        if let Some(node) = nodes.get_mut(0) {
            node.size += more;
        }
    }
    let shown: Vec<String> = nodes
        .iter()
        .map(|n| format!("{}:{}", n.leaf, n.size))
        .collect();
    Ok(shown.join(" "))
}

#[tokio::test]
async fn a_mutable_borrow_tested_by_its_pattern_borrowed_again_changes_the_original() {
    let run = TestClient::new(grow)
        .call("grow", json!({"sizes": [1, 2]}))
        .answer("more", Answer::accept(json!(5)))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "false:6 true:2");
}

/// `saga_fn_plain_async_fn`: "mark it `#[saga_fn]`; its body and its calls stay as they
/// are", written as the note's example (a helper taking an owned `String`).
#[saga_fn]
async fn confirm(what: String) -> Result<bool, SagaError> {
    elicit::<bool>(format!("Confirm {what}?")).await
}

#[saga_tool]
async fn cleanup(path: String) -> Result<String, SagaError> {
    let sure = confirm(path.clone()).await?;
    Ok(format!("{path}: {sure}"))
}

#[tokio::test]
async fn a_helper_marked_saga_fn_asks_through_its_caller() {
    let run = TestClient::new(cleanup)
        .call("cleanup", json!({"path": "/tmp/cache"}))
        .then(Answer::accept(json!(true)))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "/tmp/cache: true");
}

/// `saga_fn_awaited_in_plain_async_fn`: "if this is a plain `async fn`, mark it
/// `#[saga_fn]` as well; its body and its calls stay as they are".
#[saga_fn]
async fn confirm_twice(what: String) -> Result<bool, SagaError> {
    Ok(confirm(what.clone()).await? && confirm(what).await?)
}

#[saga_tool]
async fn cleanup_twice(path: String) -> Result<String, SagaError> {
    let sure = confirm_twice(path.clone()).await?;
    Ok(format!("{path}: {sure}"))
}

#[tokio::test]
async fn a_plain_helper_of_helpers_marked_saga_fn_asks_twice() {
    let run = TestClient::new(cleanup_twice)
        .call("cleanup_twice", json!({"path": "/tmp/cache"}))
        .then(Answer::accept(json!(true)))
        .then(Answer::accept(json!(true)))
        .run()
        .await
        .expect("the call completes");
    assert_eq!(run.text(), "/tmp/cache: true");
    assert_eq!(run.asked().len(), 2);
}

/// Asks with a pinned key, then without.
#[saga_tool]
async fn pinned_then_generated() -> Result<String, SagaError> {
    let sure: bool = elicit("Sure?").key("sure").await?;
    let said = sample("Say yes").max_tokens(5).await?;
    let again: bool = elicit("Again?").await?;
    Ok(format!("{sure} {} {again}", said.text()))
}

/// The guide's word on keys, tried (issue 76): a pinned key takes no number, so the
/// requests without one are numbered from 1 in the order asked, all kinds on one counter.
#[tokio::test]
async fn a_pinned_key_takes_no_generated_number() {
    let client = saga_runtime::testing::TestClient::new(pinned_then_generated);
    let run = client
        .call("pinned_then_generated", serde_json::json!({}))
        .then(saga_runtime::testing::Answer::accept(serde_json::json!(
            true
        )))
        .then(saga_runtime::testing::Answer::sampled("yes"))
        .then(saga_runtime::testing::Answer::accept(serde_json::json!(
            false
        )))
        .run()
        .await
        .expect("completes");
    let keys: Vec<&str> = run.asked().iter().map(|asked| asked.key()).collect();
    assert_eq!(keys, ["sure", "sample-1", "elicit-2"]);
    assert_eq!(run.text(), "true yes false");
}

/// The advice for a type that cannot be saved, `std::time::Instant`, tried as written
/// (issue 76): keep a `SystemTime` instead, across the suspension.
#[saga_tool]
async fn times_a_question() -> Result<String, SagaError> {
    let asked_at = std::time::SystemTime::now();
    let _sure: bool = elicit("Sure?").await?;
    let waited = asked_at.elapsed().unwrap_or_default();
    Ok(format!("answered within {} s", waited.as_secs().min(1)))
}

#[tokio::test]
async fn a_system_time_kept_across_a_suspension_where_an_instant_cannot_be() {
    let run = TestClient::new(times_a_question)
        .call("times_a_question", json!({}))
        .then(Answer::accept(json!(true)))
        .run()
        .await
        .expect("completes");
    assert!(run.text().starts_with("answered within"), "{}", run.text());
}
