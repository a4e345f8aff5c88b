//! What a newcomer meets in the first hour, tested as they would test it, with
//! `saga_runtime::testing`: a form's fields in the order they are declared, an answer
//! outside the form asked again with the reason, a decline that is an answer, and the
//! tool's annotations in `tools/list`.

use saga_examples::meeting::book_meeting;
use saga_runtime::prelude::*;
use saga_runtime::testing::{Answer, Failed, TestClient};
use serde_json::json;

fn meeting(duration: u32) -> Answer {
    Answer::accept(json!({
        "title": "Planning",
        "duration": duration,
        "room": "Cosmos",
    }))
}

#[tokio::test]
async fn a_forms_fields_are_sent_in_declared_order() {
    let client = TestClient::new(book_meeting);
    let run = client
        .call("book_meeting", json!({"organiser": "Ada"}))
        .answer("meeting", meeting(45))
        .answer("confirm", Answer::accept(json!(true)))
        .run()
        .await
        .expect("the booking completes");
    let form = run.asked()[0];
    assert_eq!(form.key(), "meeting");
    assert_eq!(form.fields(), ["title", "duration", "room", "notes"]);
    let required = &form.requested_schema().expect("a form")["required"];
    assert_eq!(required, &json!(["title", "duration", "room"]));
    // The text on the wire, not only the parsed map, is in that order.
    let text = serde_json::to_string(form.as_json()).expect("serializes");
    let at = |field: &str| text.find(&format!("\"{field}\":{{")).expect(field);
    assert!(
        at("title") < at("duration") && at("duration") < at("room") && at("room") < at("notes")
    );
    assert_eq!(run.text(), "Booked Planning (45 min) in Cosmos for Ada.");
    assert_eq!(run.rounds().len(), 3);
}

#[tokio::test]
async fn an_answer_outside_its_form_is_asked_again_with_the_reason() {
    let client = TestClient::new(book_meeting);
    let mut first = true;
    let run = client
        .call("book_meeting", json!({"organiser": "Ada"}))
        .answer("confirm", Answer::accept(json!(true)))
        .respond(move |asked| {
            assert_eq!(asked.key(), "meeting");
            let duration = if std::mem::take(&mut first) { 500 } else { 60 };
            Some(meeting(duration))
        })
        .run()
        .await
        .expect("the booking completes once the duration fits");
    let asked = run.asked();
    assert_eq!(asked[0].message(), Some("Book a meeting for Ada"));
    assert_eq!(asked[1].key(), "meeting", "the same key, asked again");
    assert_eq!(
        asked[1].message(),
        Some(
            "Book a meeting for Ada\n\nYour last answer was not accepted: `duration` is above \
             the maximum 240."
        )
    );
    assert_eq!(asked[1].requested_schema(), asked[0].requested_schema());
    assert_eq!(run.text(), "Booked Planning (60 min) in Cosmos for Ada.");

    // The same answer again gets the same reason again, never a longer message.
    let failed = client
        .call("book_meeting", json!({"organiser": "Ada"}))
        .answer("meeting", meeting(5))
        .max_rounds(4)
        .run()
        .await
        .expect_err("a duration of 5 never fits");
    assert!(matches!(failed, Failed::TooManyRounds { .. }), "{failed}");
    let messages: Vec<_> = failed
        .rounds()
        .iter()
        .skip(1)
        .map(|round| round.asked()[0].message().expect("a form").to_owned())
        .collect();
    assert_eq!(messages.len(), 3);
    assert!(messages.iter().all(|message| message
        == "Book a meeting for Ada\n\nYour last answer was not accepted: `duration` is below \
            the minimum 15."));
}

#[tokio::test]
async fn a_one_field_forms_reason_names_the_answer() {
    #[saga_tool]
    async fn pick(max: i64) -> Result<String, SagaError> {
        let n: String = elicit("A name?").key("name").await?;
        Ok(format!("{n} {max}"))
    }
    let client = TestClient::new(pick);
    let failed = client
        .call("pick", json!({"max": 3}))
        .answer("name", Answer::accept(json!(7)))
        .max_rounds(2)
        .run()
        .await
        .expect_err("a number is not a name");
    let again = failed.rounds()[1].asked()[0].message().expect("a form");
    assert_eq!(
        again,
        "A name?\n\nYour last answer was not accepted: the answer is not a string."
    );
}

#[tokio::test]
async fn every_number_type_is_a_one_field_form_of_its_range() {
    #[saga_tool]
    async fn count(item: String) -> Result<String, SagaError> {
        let boxes: u8 = elicit(format!("How many {item}?")).key("boxes").await?;
        let serial = elicit::<u64>("The serial?").key("serial").await?;
        let ratio: f32 = elicit("The ratio?").key("ratio").await?;
        // As the guide and `Elicit`'s docs write it.
        let more = elicit::<u32>("How many?").key("more").await?;
        Ok(format!(
            "{boxes} {item}, serial {serial}, ratio {ratio}, {more} more"
        ))
    }
    let client = TestClient::new(count);
    let mut first = true;
    let mut first_ratio = true;
    let run = client
        .call("count", json!({"item": "crates"}))
        .respond(move |asked| {
            Some(Answer::accept(match asked.key() {
                "boxes" if std::mem::take(&mut first) => json!(300),
                "boxes" => json!(7),
                // Beyond an f32: asked again, not a failed call.
                "ratio" if std::mem::take(&mut first_ratio) => json!(1e39),
                "serial" => json!(u64::MAX),
                "more" => json!(4_000_000_000u32),
                _ => json!(0.5),
            }))
        })
        .run()
        .await
        .expect("the count completes once the answer fits a u8");
    let asked = run.asked();
    assert_eq!(
        asked[0].requested_schema().expect("a form")["properties"]["value"],
        json!({"type": "integer", "minimum": 0, "maximum": 255})
    );
    assert_eq!(
        asked[1].message(),
        Some(
            "How many crates?\n\nYour last answer was not accepted: the answer is above the maximum 255."
        )
    );
    let more = asked
        .iter()
        .find(|asked| asked.key() == "more")
        .expect("asked");
    assert_eq!(
        more.requested_schema().expect("a form")["properties"]["value"],
        json!({"type": "integer", "minimum": 0, "maximum": 4_294_967_295u32})
    );
    let ratios: Vec<_> = asked
        .iter()
        .filter(|asked| asked.key() == "ratio")
        .collect();
    assert_eq!(
        ratios[0].requested_schema().expect("a form")["properties"]["value"],
        json!({"type": "number", "minimum": -3.4028235e38, "maximum": 3.4028235e38})
    );
    assert_eq!(
        ratios[1].message(),
        Some(
            "The ratio?\n\nYour last answer was not accepted: the answer is above the maximum 3.4028235e38."
        )
    );
    assert_eq!(
        run.text(),
        format!("7 crates, serial {}, ratio 0.5, 4000000000 more", u64::MAX)
    );
}

#[tokio::test]
async fn a_decline_or_a_cancel_is_an_answer_not_an_error() {
    let client = TestClient::new(book_meeting);
    for (answer, expected) in [
        (Answer::decline(), "No meeting booked."),
        (Answer::cancel(), "Booking cancelled."),
    ] {
        let run = client
            .call("book_meeting", json!({"organiser": "Ada"}))
            .answer("meeting", answer)
            .run()
            .await
            .expect("a decline ends the call with a result");
        assert_eq!(run.text(), expected);
        assert!(!run.is_error());
        assert_eq!(run.rounds().len(), 2);
    }
    let run = client
        .call("book_meeting", json!({"organiser": "Ada"}))
        .answer("meeting", meeting(30))
        .answer("confirm", Answer::decline())
        .run()
        .await
        .expect("a declined confirmation ends the call with a result");
    assert_eq!(run.text(), "No meeting booked.");
}

/// With `?` on the plain answer, a decline still fails the call, as documented: the
/// outcome is opt-in.
#[tokio::test]
async fn a_decline_with_question_mark_fails_the_call() {
    #[saga_tool]
    async fn strict(name: String) -> Result<String, SagaError> {
        let go: bool = elicit(format!("Greet {name}?")).key("go").await?;
        Ok(format!("{go}"))
    }
    let run = TestClient::new(strict)
        .call("strict", json!({"name": "Ada"}))
        .answer("go", Answer::decline())
        .run()
        .await
        .expect("a tool error is a result");
    assert!(run.is_error());
    assert!(run.text().contains("declined"), "{}", run.text());
}

/// The outcome of a URL elicitation, and of each request of a `join_all`, in one round.
#[tokio::test]
async fn outcomes_of_url_elicitations_and_join_all() {
    #[saga_tool]
    async fn consent(names: Vec<String>) -> Result<String, SagaError> {
        let linked = elicit_url("https://example.com/link", "Link your account")
            .key("link")
            .outcome()
            .await?;
        let answers = join_all(
            names
                .iter()
                .map(|name| elicit::<bool>(format!("Keep {name}?")).outcome()),
        )
        .await;
        let mut kept = Vec::new();
        for (name, answer) in names.iter().zip(answers) {
            if answer?.accepted() == Some(true) {
                kept.push(name.clone());
            }
        }
        Ok(format!(
            "linked: {}; kept: {}",
            linked.is_accepted(),
            kept.join(",")
        ))
    }
    let run = TestClient::new(consent)
        .call("consent", json!({"names": ["a", "b", "c"]}))
        .answer("link", Answer::cancel())
        .then(Answer::accept(json!(true)))
        .then(Answer::decline())
        .then(Answer::accept(json!(true)))
        .run()
        .await
        .expect("completes");
    assert_eq!(run.text(), "linked: false; kept: a,c");
    assert_eq!(run.rounds().len(), 3);
    assert_eq!(run.rounds()[1].asked().len(), 3);
}

#[tokio::test]
async fn annotations_icons_and_meta_appear_in_the_tool_list() {
    #[saga_tool(
        read_only,
        destructive = false,
        idempotent,
        open_world = false,
        icons = ["https://example.com/icon.svg"],
        meta = r#"{"team": "payments"}"#
    )]
    async fn lookup(id: String) -> Result<String, SagaError> {
        Ok(id)
    }
    let client = TestClient::new(lookup);
    let tool = client.tools().tools().next().expect("one tool");
    let tool = serde_json::to_value(tool).expect("serializes");
    assert_eq!(
        tool["annotations"],
        json!({
            "readOnlyHint": true,
            "destructiveHint": false,
            "idempotentHint": true,
            "openWorldHint": false,
        })
    );
    assert_eq!(
        tool["icons"],
        json!([{"src": "https://example.com/icon.svg"}])
    );
    assert_eq!(tool["_meta"]["team"], "payments");

    let plain = TestClient::new(book_meeting);
    let tool =
        serde_json::to_value(plain.tools().tools().next().expect("one tool")).expect("serializes");
    assert_eq!(tool["title"], "Book a meeting");
    assert_eq!(tool["annotations"], json!({"idempotentHint": true}));
}

/// A form the token keeps (its message comes from the tool's own function, so it cannot
/// be stated again from the state): the runtime checks the answer, and the question asked
/// again says why as well.
#[tokio::test]
async fn a_kept_forms_misfit_is_asked_again_with_the_reason() {
    fn question(organiser: &str) -> String {
        format!("Book a meeting for {organiser}")
    }
    #[saga_tool]
    async fn book(organiser: String) -> Result<String, SagaError> {
        let meeting: saga_examples::meeting::Meeting =
            elicit(question(&organiser)).key("meeting").await?;
        Ok(format!("{} for {organiser}", meeting.duration))
    }
    let failed = TestClient::new(book)
        .call("book", json!({"organiser": "Ada"}))
        .answer(
            "meeting",
            Answer::accept(json!({"title": "x", "duration": 60, "room": "Attic"})),
        )
        .max_rounds(2)
        .run()
        .await
        .expect_err("the room is not one of the rooms");
    let again = failed.rounds()[1].asked()[0].message().expect("a form");
    assert_eq!(
        again,
        "Book a meeting for Ada\n\nYour last answer was not accepted: `room` is not one of \
         [\"Aurora\", \"Borealis\", \"Cosmos\"]."
    );
    assert_eq!(
        failed.rounds()[1].asked()[0].fields(),
        ["title", "duration", "room", "notes"]
    );
}

/// A 2025-11-25 client, in a session over HTTP: the same order and the same reason.
#[tokio::test]
async fn a_session_client_sees_declared_order_and_the_reason() {
    use saga_examples::client::{ScriptedClient, accept, llm_says};
    use saga_runtime::rmcp::model::{CallToolRequestParams, ElicitRequestParams};
    use std::sync::{Arc, Mutex};

    let running = saga_examples::harness::serving::serve_local(
        saga_examples::meeting::server(KeyRing::ephemeral()).expect("builds"),
    )
    .await;
    /// Each form asked: its message and its fields in wire order.
    type Asked = Vec<(String, Vec<String>)>;
    let seen: Arc<Mutex<Asked>> = Arc::default();
    let log = seen.clone();
    let client = ScriptedClient::new(
        move |params| {
            let ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } = params
            else {
                panic!("a form");
            };
            let wire = serde_json::to_value(requested_schema).expect("serializes");
            let fields = wire["properties"]
                .as_object()
                .map(|properties| properties.keys().cloned().collect())
                .unwrap_or_default();
            let mut log = log.lock().expect("not poisoned");
            log.push((message.clone(), fields));
            match log.len() {
                1 => accept(json!({"title": "Retro", "duration": 500, "room": "Aurora"})),
                2 => accept(json!({"title": "Retro", "duration": 90, "room": "Aurora"})),
                _ => accept(json!({"value": true})),
            }
        },
        |_| llm_says("unused"),
    )
    .connect_http_session(&running.url())
    .await
    .expect("a session opens");
    let result = client
        .call_tool(
            CallToolRequestParams::new("book_meeting").with_arguments(
                json!({"organiser": "Grace"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await
        .expect("the call completes");
    assert_eq!(
        result.content[0].as_text().expect("text").text,
        "Booked Retro (90 min) in Aurora for Grace."
    );
    let seen = seen.lock().expect("not poisoned").clone();
    assert_eq!(seen[0].0, "Book a meeting for Grace");
    assert_eq!(seen[0].1, ["title", "duration", "room", "notes"]);
    assert_eq!(
        seen[1].0,
        "Book a meeting for Grace\n\nYour last answer was not accepted: `duration` is above \
         the maximum 240."
    );
    assert_eq!(seen[1].1, seen[0].1);
    client.cancel().await.expect("closes");
}

/// `.outcome()` in a `join!` round and inside a `#[saga_fn]` helper, and an `Elicited`
/// kept across a later suspension.
#[tokio::test]
async fn outcomes_in_join_and_in_helpers() {
    #[saga_fn]
    async fn consent(what: String) -> Result<bool, SagaError> {
        let answer = elicit::<bool>(format!("Allow {what}?"))
            .outcome()
            .key(format!("allow-{what}"))
            .await?;
        Ok(answer == Elicited::Accepted(true))
    }
    #[saga_tool]
    async fn setup(name: String) -> Result<String, SagaError> {
        let (label, model) = join!(
            elicit::<String>("A label?").key("label").outcome(),
            sample("Suggest a name").key("model"),
        );
        let label = label?;
        let model = model?;
        let camera = consent("camera".to_owned()).await?;
        let microphone = consent("microphone".to_owned()).await?;
        checkpoint().await;
        Ok(format!(
            "{name}: label {:?}, model {}, camera {camera}, microphone {microphone}",
            label.accepted(),
            model.text()
        ))
    }
    let run = TestClient::new(setup)
        .call("setup", json!({"name": "kit"}))
        .answer("label", Answer::decline())
        .answer("model", Answer::sampled("Kestrel"))
        .answer("allow-camera", Answer::accept(json!(true)))
        .answer("allow-microphone", Answer::cancel())
        .run()
        .await
        .expect("completes");
    assert_eq!(
        run.text(),
        "kit: label None, model Kestrel, camera true, microphone false"
    );
    assert_eq!(
        run.rounds().len(),
        5,
        "join, two helpers, checkpoint, result"
    );
}

/// A tool's diagram is in `tools/list` only when the server lists them (for `saga graph
/// URL TOOL`), beside the tool's own `_meta`; by default, the tool's own `_meta` alone: a
/// diagram shows the tool's code to every client.
#[tokio::test]
async fn diagrams_are_listed_only_when_the_server_says_so() {
    #[saga_tool(meta = r#"{"team": "payments"}"#)]
    async fn ask(name: String) -> Result<String, SagaError> {
        let go: bool = elicit(format!("Go, {name}?")).key("go").await?;
        Ok(format!("{go}"))
    }
    let listed = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .tool(ask)
        .diagrams_in_tool_list(true)
        .build()
        .expect("builds");
    let tool = serde_json::to_value(listed.tools().next().expect("one")).expect("json");
    assert!(
        tool["_meta"]["saga/diagram"]
            .as_str()
            .is_some_and(|diagram| diagram.starts_with("stateDiagram-v2")),
        "{tool}"
    );
    let unlisted = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .tool(ask)
        .build()
        .expect("builds");
    let tool = serde_json::to_value(unlisted.tools().next().expect("one")).expect("json");
    assert_eq!(tool["_meta"], json!({"team": "payments"}));
    // The server itself still has it, as a client of a listing server would read it.
    assert_eq!(
        unlisted.diagram("ask"),
        listed
            .tools()
            .next()
            .and_then(saga_runtime::engine::diagram_of)
    );
    assert!(unlisted.diagram("ask").is_some());
}

/// Imports three batches, checkpointing after each, then asks for a confirmation.
#[saga_tool(task)]
async fn import_batches() -> Result<String, SagaError> {
    let mut imported = 0u32;
    for _ in 0..3 {
        imported += 1;
        checkpoint().await;
    }
    let ok: bool = elicit(format!("Keep the {imported} batches?"))
        .key("keep")
        .await?;
    Ok(format!("{imported} batches, kept: {ok}"))
}

/// Point 7 of "a newcomer's second hour": `TestClient` counted each checkpoint of a
/// task tool as a round (5 here), where a client over HTTP without the tasks extension
/// takes 2 (the checkpoints pass within its first request). Both now take the same
/// route, and the same rounds.
#[tokio::test]
async fn a_test_client_takes_the_rounds_a_client_over_http_takes() {
    use saga_examples::harness::http::Call;
    use saga_examples::harness::serving::serve_local;
    let run = TestClient::new(import_batches)
        .call("import_batches", json!({}))
        .answer("keep", Answer::accept(json!(true)))
        .run()
        .await
        .expect("the import completes");
    assert_eq!(run.text(), "3 batches, kept: true");

    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(import_batches)
        .tasks(TaskStore::memory())
        .build()
        .expect("the server builds");
    let running = serve_local(server).await;
    let mut over_http = 0;
    let mut call = Call::new("import_batches", json!({}));
    let done = loop {
        over_http += 1;
        let (_, body) = call.send(running.addr).await;
        let result = &body["result"];
        if result["resultType"] == "complete" {
            break result["content"][0]["text"].clone();
        }
        let state = result["requestState"].as_str().expect("a state").to_owned();
        call = call.clone().state(&state);
        if result["inputRequests"].get("keep").is_some() {
            call = call.answers(json!({"keep": {"action": "accept", "content": {"value": true}}}));
        }
        assert!(over_http < 10, "{body}");
    };
    assert_eq!(done, "3 batches, kept: true");
    assert_eq!(
        run.rounds().len(),
        over_http,
        "the rounds over HTTP: {over_http}"
    );
    assert_eq!(over_http, 2);
}

/// A form whose fields have defaults.
#[derive(Debug, Elicit, Serialize, Deserialize)]
struct Expense {
    /// What it was for.
    what: String,
    /// Reimburse it now?
    #[elicit(default = true)]
    now: bool,
    /// Where it was spent.
    #[elicit(default = "eu-west")]
    region: Region,
    /// How many receipts.
    #[elicit(default = 1)]
    receipts: Option<i64>,
}

#[derive(Debug, Elicit, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Region {
    EuWest,
    UsEast,
}

#[saga_tool]
async fn file_expense() -> Result<String, SagaError> {
    let expense: Expense = elicit("Which expense?").key("expense").await?;
    Ok(format!(
        "{} now={} region={:?} receipts={:?}",
        expense.what, expense.now, expense.region, expense.receipts
    ))
}

/// Point 3 of "a newcomer's second hour": a default was only a hint. A field the answer
/// leaves out (or sends as `null`) now gets its default on the server, as serde's
/// `#[serde(default)]` would, for a `bool`, an enum and an `Option`; a field the answer
/// gives keeps its value.
#[tokio::test]
async fn a_field_left_out_gets_its_default() {
    let client = TestClient::new(file_expense);
    let run = |content: serde_json::Value| {
        client
            .call("file_expense", json!({}))
            .answer("expense", Answer::accept(content))
            .run()
    };
    let left_out = run(json!({"what": "taxi"}))
        .await
        .expect("defaults fill it");
    assert_eq!(
        left_out.text(),
        "taxi now=true region=EuWest receipts=Some(1)"
    );
    assert_eq!(left_out.rounds().len(), 2, "not asked again");
    let nulls = run(json!({"what": "taxi", "now": null, "region": null}))
        .await
        .expect("null is left out");
    assert_eq!(nulls.text(), "taxi now=true region=EuWest receipts=Some(1)");
    let given = run(json!({"what": "hotel", "now": false, "region": "us-east", "receipts": 3}))
        .await
        .expect("the answer's own values");
    assert_eq!(
        given.text(),
        "hotel now=false region=UsEast receipts=Some(3)"
    );
    // A field without a default is still required.
    let missing = run(json!({"now": true})).await;
    assert!(
        missing.is_err(),
        "`what` has no default: asked again, and unscripted"
    );
}

// A tool a `macro_rules!` writes, its loop's binding given by the macro's caller: the
// binding, and what the expansion declares for the loop and for a `#[saga_fn]` call,
// resolve in their own contexts. (Its suspensions are the macro's own tokens.)
macro_rules! confirming_tool {
    ($name:ident, $item:ident) => {
        #[saga_tool]
        async fn $name(items: Vec<String>) -> Result<String, SagaError> {
            let mut kept = Vec::new();
            for $item in items {
                if elicit::<bool>(format!("keep {}?", $item))
                    .key($item.clone())
                    .await?
                {
                    kept.push($item);
                }
            }
            Ok(kept.join(", "))
        }
    };
    ($name:ident, $item:ident, by_helper) => {
        #[saga_tool]
        async fn $name(items: Vec<String>) -> Result<String, SagaError> {
            let mut kept = Vec::new();
            for $item in items {
                if keep_it($item.clone()).await? {
                    kept.push($item);
                }
            }
            Ok(kept.join(", "))
        }
    };
}

#[saga_fn]
async fn keep_it(item: String) -> Result<bool, SagaError> {
    elicit::<bool>(format!("keep {item}?")).key(item).await
}

confirming_tool!(confirm_each, item);
// The loop's binding is saved while a helper waits.
confirming_tool!(confirm_each_by_helper, item, by_helper);

#[tokio::test]
async fn a_tool_written_by_a_macro_rules_keeps_its_loops_binding() {
    for (tool, client) in [
        ("confirm_each", TestClient::new(confirm_each)),
        (
            "confirm_each_by_helper",
            TestClient::new(confirm_each_by_helper),
        ),
    ] {
        let run = client
            .call(tool, json!({"items": ["a", "b", "c"]}))
            .answer("a", Answer::accept(json!(true)))
            .answer("b", Answer::accept(json!(false)))
            .answer("c", Answer::accept(json!(true)))
            .run()
            .await
            .expect("the call completes");
        assert_eq!(run.text(), "a, c", "{tool}");
    }
}

// A tool a `macro_rules!` writes whose suspension is given by the macro's caller: the
// expansion's own locals resolve in the expansion's context, whatever context the
// suspension's tokens come from.
macro_rules! asking_tool {
    ($name:ident, $ask:expr) => {
        #[saga_tool]
        async fn $name(greeting: String) -> Result<String, SagaError> {
            let name: String = $ask.await?;
            Ok(format!("{greeting}, {name}"))
        }
    };
}

asking_tool!(ask_given, elicit("Your name?").key("name"));

// The same, the whole suspension, `.await` and `?` included, given by the caller.
macro_rules! awaiting_tool {
    ($name:ident, $answer:expr) => {
        #[saga_tool]
        async fn $name(greeting: String) -> Result<String, SagaError> {
            let name: String = $answer;
            Ok(format!("{greeting}, {name}"))
        }
    };
}

awaiting_tool!(await_given, elicit("Your name?").key("name").await?);

#[saga_fn]
async fn ask_name(question: String) -> Result<String, SagaError> {
    elicit(question).key("name").await
}

// A `#[saga_fn]` call given by the caller, awaited by the macro, or awaited by the caller.
asking_tool!(call_given, ask_name("Your name?".to_owned()));
awaiting_tool!(call_await_given, ask_name("Your name?".to_owned()).await?);

#[tokio::test]
async fn a_tool_written_by_a_macro_rules_asks_what_its_caller_gives() {
    for (tool, client) in [
        ("ask_given", TestClient::new(ask_given)),
        ("await_given", TestClient::new(await_given)),
        ("call_given", TestClient::new(call_given)),
        ("call_await_given", TestClient::new(call_await_given)),
    ] {
        let run = client
            .call(tool, json!({"greeting": "Hello"}))
            .answer("name", Answer::accept(json!({"value": "Ada"})))
            .run()
            .await
            .expect("the call completes");
        assert_eq!(run.text(), "Hello, Ada", "{tool}");
    }
    // The diagram walks the function as written and finds the suspension in the group.
    for diagram in [ask_given.diagram(), await_given.diagram()] {
        assert!(!diagram.contains("control flow not shown"), "{diagram}");
        assert!(diagram.contains("AfterElicitName"), "{diagram}");
    }
}

// Tools named like the parameters of the methods the expansion writes: each name is also a
// unit struct, which a bare parameter of that name would match as a pattern.
// (In a module of their own: a tool's unit struct would also turn the file's own
// `let state = ..` into a pattern, as any unit struct does.)
mod named_like_parameters {
    use saga_runtime::prelude::*;

    #[saga_tool]
    pub async fn state(topic: String) -> Result<String, SagaError> {
        let more: String = elicit(format!("More on {topic}?")).await?;
        Ok(format!("{topic}: {more}"))
    }

    #[saga_tool]
    pub async fn cx(topic: String) -> Result<String, SagaError> {
        let more: String = elicit(format!("More on {topic}?")).await?;
        Ok(format!("{topic}: {more}"))
    }

    #[saga_tool]
    pub async fn arguments(topic: String) -> Result<String, SagaError> {
        let more: String = elicit(format!("More on {topic}?")).await?;
        Ok(format!("{topic}: {more}"))
    }
}

#[tokio::test]
async fn tools_named_like_the_expansions_parameters_compile_and_run() {
    for (name, client) in [
        ("state", TestClient::new(named_like_parameters::state)),
        ("cx", TestClient::new(named_like_parameters::cx)),
        (
            "arguments",
            TestClient::new(named_like_parameters::arguments),
        ),
    ] {
        let run = client
            .call(name, json!({"topic": "owls"}))
            .then(Answer::accept(json!({"value": "wise"})))
            .run()
            .await
            .expect("the call completes");
        assert_eq!(run.text(), "owls: wise", "{name}");
    }
}

/// A task-only tool, asking once its task has begun.
#[saga_tool(task = "required")]
async fn migrate_later(tables: u32) -> Result<String, SagaError> {
    checkpoint().await;
    let ok: bool = elicit(format!("Migrate {tables} tables?"))
        .key("approve")
        .await?;
    checkpoint().await;
    Ok(format!("{tables} tables: {ok}"))
}

/// `TestCall::as_task` (issue 76): a task tool runs through the tools' task store, its
/// question answered with `tasks/update`; without it, a client that does not declare
/// tasks is refused a task-only tool, as a server refuses it.
#[tokio::test]
async fn a_task_tool_runs_through_the_task_store_in_a_test() {
    let tools = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .tasks(TaskStore::memory())
        .tool(migrate_later)
        .build()
        .expect("builds");
    let client = TestClient::with_tools(tools);
    let run = client
        .call("migrate_later", json!({"tables": 4}))
        .as_task()
        .answer("approve", Answer::accept(json!(true)))
        .run()
        .await
        .expect("the task completes");
    assert_eq!(run.text(), "4 tables: true");
    let asked: Vec<&str> = run.asked().iter().map(|asked| asked.key()).collect();
    assert_eq!(asked, ["approve"]);

    let refused = client
        .call("migrate_later", json!({"tables": 4}))
        .run()
        .await;
    let Err(Failed::Server { error, .. }) = refused else {
        panic!("a task-only tool ran without the tasks extension");
    };
    assert_eq!(error.code.0, -32021, "{}", error.message);
}
