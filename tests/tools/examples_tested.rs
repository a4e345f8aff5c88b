//! The examples' tools tested as their authors would, with `saga_runtime::testing`: in
//! process, scripted answers, the state sealed and opened at every round.

#![allow(deprecated)] // sampling: deprecated in 2026-07-28, still served

use saga_examples::deploy;
use saga_examples::migrate;
use saga_examples::weather;
use saga_runtime::testing::{Answer, TestClient};
use serde_json::json;

#[tokio::test]
async fn deploy_goes_ahead_on_a_yes_and_postpones_otherwise() {
    let client = TestClient::with_tools(
        deploy::server(saga_runtime::state::KeyRing::ephemeral())
            .expect("builds")
            .tools()
            .clone(),
    );
    for (verdict, expected) in [
        (
            "Yes, all systems are green.",
            "Deployment to production initiated successfully based on confirmation.",
        ),
        ("No: an incident is open.", "Deployment postponed."),
    ] {
        let run = client
            .call("complex_tool", json!({"initial_arg": "api"}))
            .respond(move |asked| match asked.method() {
                "elicitation/create" => Some(Answer::accept(json!({"target": "production"}))),
                "sampling/createMessage" => {
                    assert!(asked.prompt()?.contains("production"));
                    Some(Answer::sampled(verdict))
                }
                _ => None,
            })
            .run()
            .await
            .expect("completes");
        assert_eq!(run.text(), expected);
        assert_eq!(run.rounds().len(), 3);
        let asked = run.asked();
        assert_eq!(asked[0].fields(), ["target"]);
        assert!(run.rounds()[0].token_len().is_some_and(|len| len > 0));
    }
}

#[tokio::test]
async fn weather_asks_both_questions_in_one_round() {
    let run = TestClient::new(weather::get_weather)
        .call("get_weather", json!({"location": "Paris"}))
        .answer("github_login", Answer::accept(json!({"name": "octocat"})))
        .answer("capital_of_france", Answer::sampled("Paris"))
        .run()
        .await
        .expect("completes");
    assert_eq!(run.rounds().len(), 2);
    let keys: Vec<&str> = run.rounds()[0].asked().iter().map(|a| a.key()).collect();
    assert_eq!(keys, ["capital_of_france", "github_login"]);
    assert!(
        run.text().starts_with("Current weather in Paris"),
        "{}",
        run.text()
    );
}

#[tokio::test]
async fn migrate_checkpoints_once_per_table_as_an_ordinary_call() {
    let run = TestClient::new(migrate::migrate)
        .call("migrate", json!({"tables": 3, "millis_per_table": 0}))
        .run()
        .await
        .expect("completes without asking anything");
    assert_eq!(run.text(), "migrated 3 tables: [0, 1, 2]");
    assert!(run.asked().is_empty());

    let approved = TestClient::new(migrate::approve_migration)
        .call("approve_migration", json!({"tables": 4}))
        .then(Answer::accept(json!({"approve": true})))
        .run()
        .await
        .expect("completes");
    assert_eq!(approved.text(), "4 tables approved");
    assert_eq!(approved.asked()[0].message(), Some("Migrate 4 tables?"));
}

#[tokio::test]
async fn release_starts_its_rollout_once_as_an_effect() {
    let run = TestClient::new(deploy::release)
        .call("release", json!({"service": "api", "replicas": 3}))
        .then(Answer::accept(json!({"target": "production"})))
        .then(Answer::accept(json!({"value": true})))
        .run()
        .await
        .expect("completes");
    let text = run.text();
    assert!(
        text.starts_with("Rollout rollout-")
            && text.ends_with(" of api to production started (3 replicas)."),
        "{text}"
    );
    // The effect's checkpoint is a round of its own, passed without asking.
    assert_eq!(run.asked().len(), 2);
    let postponed = TestClient::new(deploy::release)
        .call("release", json!({"service": "api"}))
        .then(Answer::accept(json!({"target": "production"})))
        .then(Answer::accept(json!({"value": false})))
        .run()
        .await
        .expect("completes");
    assert_eq!(postponed.text(), "Release postponed.");
}
