//! A state that grows round after round (issue 74): deflated before it is sealed, readable
//! by the tool (`cx.state_size()`) so that it can trim itself, and, when it outgrows the
//! token anyway, refused with the error of whoever grew it: the tool's own values are the
//! tool's error naming the largest, a client's oversized answer is the client's.

use saga_runtime::prelude::*;
use saga_runtime::testing::{Answer, Failed, TestClient};
use serde_json::json;

/// What a tool fetches each round: `len` bytes of words that do not repeat from one
/// round to the next (a page, a file, an API's answer), so deflating keeps little of it.
fn fetched(round: u32, len: usize) -> String {
    saga_examples::harness::noise::noise(round, len)
}

/// Keeps every page it fetches across a question: its own values grow its state.
#[saga_tool]
async fn hoard(rounds: u32) -> Result<String, SagaError> {
    let mut pages: Vec<String> = Vec::new();
    for round in 0..rounds {
        pages.push(fetched(round, 8 * 1024));
        let _more: bool = elicit(format!("Fetched {} pages; more?", pages.len())).await?;
    }
    Ok(format!("{} pages", pages.len()))
}

/// `hoard`'s forty rounds through `client`, each question answered yes.
async fn hoard_forty(client: &TestClient) -> Result<saga_runtime::testing::Run, Failed> {
    client
        .call("hoard", json!({"rounds": 40}))
        .respond(|_| Some(Answer::accept(json!(true))))
        .max_rounds(50)
        .run()
        .await
}

#[tokio::test]
async fn a_state_grown_by_the_tool_ends_with_the_tools_error_naming_its_largest_local() {
    let failed = hoard_forty(&TestClient::new(hoard)).await;
    let Err(Failed::Server { error, rounds }) = failed else {
        panic!("not refused: {}", failed.is_ok());
    };
    // The server's error, not the client's: its answers were `true`.
    assert_eq!(error.code.0, -32603, "{}", error.message);
    assert!(
        error.message.contains("the tool's state outgrew its token")
            && error.message.contains("`pages`")
            && error.message.contains("cx.state_size()"),
        "{}",
        error.message
    );
    // Its numbers say what they count, so that a local larger than the total reads as
    // what it is: the total is the encoded bytes, each local its JSON.
    assert!(
        error
            .message
            .contains("bytes encoded (a local's JSON, below, takes more)")
            && error.message.contains("`pages`, ")
            && error.message.contains(" characters as JSON"),
        "{}",
        error.message
    );
    // Against the default cap of 64 KiB, pages of 8 KiB that do not deflate: the sixth
    // or so round ends it, and every round before it sealed a token the server accepts.
    assert!((4..12).contains(&rounds.len()), "{} rounds", rounds.len());
    for round in &rounds {
        assert!(round.token_len().is_some_and(|len| len <= 64 * 1024));
    }
}

/// Keeps what the person typed.
#[saga_tool]
async fn note_taker() -> Result<String, SagaError> {
    let note: String = elicit("Your note?").await?;
    let _sure: bool = elicit(format!("Keep a note of {} bytes?", note.len())).await?;
    Ok(note)
}

#[tokio::test]
async fn a_state_grown_by_the_clients_answer_stays_the_clients_error() {
    let client = TestClient::new(note_taker);
    let huge = fetched(1, 100 * 1024);
    let failed = client
        .call("note_taker", json!({}))
        .then(Answer::accept(json!(huge)))
        .then(Answer::accept(json!(true)))
        .run()
        .await;
    let Err(Failed::Server { error, .. }) = failed else {
        panic!("not refused: {}", failed.is_ok());
    };
    assert_eq!(error.code.0, -32602, "{}", error.message);
    assert!(
        error.message.contains("send smaller answers"),
        "{}",
        error.message
    );
}

/// Keeps the last pages only, trimming as its state nears the cap: it reads its state's
/// size and decides for itself.
#[saga_tool]
async fn trimmer(rounds: u32, cx: &SagaContext) -> Result<String, SagaError> {
    let mut pages: Vec<String> = Vec::new();
    let mut dropped = 0u32;
    let mut largest_share = 0.0f64;
    for round in 0..rounds {
        let size = cx.state_size();
        largest_share = largest_share.max(size.sealed_share());
        if size.sealed_share() > 0.5 {
            pages.remove(0);
            dropped += 1;
        }
        pages.push(fetched(round, 8 * 1024));
        let _more: bool = elicit("more?").await?;
    }
    Ok(format!(
        "kept {}, dropped {dropped}, largest share {largest_share:.2}",
        pages.len()
    ))
}

#[tokio::test]
async fn a_tool_that_reads_its_state_size_trims_itself_and_runs_on() {
    let client = TestClient::new(trimmer);
    let run = client
        .call("trimmer", json!({"rounds": 30}))
        .respond(|_| Some(Answer::accept(json!(true))))
        .max_rounds(40)
        .run()
        .await
        .unwrap_or_else(|failed| panic!("trims and completes: {failed:?}"));
    let text = run.text();
    assert!(text.starts_with("kept "), "{text}");
    assert!(!text.contains("dropped 0,"), "it had to trim: {text}");
    assert_eq!(run.rounds().len(), 31);
}

/// Reads the same 20 KB file every round and keeps each read: the kind of state that
/// deflates well.
#[saga_tool]
async fn rereader(rounds: u32) -> Result<String, SagaError> {
    let mut reads: Vec<String> = Vec::new();
    for _ in 0..rounds {
        reads.push(fetched(7, 20 * 1024));
        let _again: bool = elicit("read it again?").await?;
    }
    Ok(format!("{} reads", reads.len()))
}

#[tokio::test]
async fn a_state_that_deflates_well_runs_far_past_the_raw_cap() {
    let client = TestClient::new(rereader);
    let run = client
        .call("rereader", json!({"rounds": 20}))
        .respond(|_| Some(Answer::accept(json!(true))))
        .max_rounds(30)
        .run()
        .await
        .unwrap_or_else(|failed| panic!("completes: {failed:?}"));
    assert_eq!(run.text(), "20 reads");
    // 400 KB of reads in the last round's state; its token well under the 64 KiB cap.
    let last = run.rounds()[19].token_len().expect("a token");
    assert!(last < 64 * 1024 / 2, "{last} characters");
}

/// An API's answer of about 100 KB (a page of records, as JSON) kept across a question:
/// refused at its first round before states were deflated (108 KB against the 64 KiB
/// cap); now a token of a fraction of the cap.
#[saga_tool]
async fn keeps_payload(records: u32) -> Result<String, SagaError> {
    let payload: serde_json::Value = (0..records)
        .map(|id| {
            json!({
                "id": id,
                "name": format!("customer {id}"),
                "email": format!("customer{id}@example.com"),
                "plan": if id % 3 == 0 { "team" } else { "personal" },
                "created": format!("2026-{:02}-{:02}T10:{:02}:00Z", 1 + id % 12, 1 + id % 28, id % 60),
                "balance_cents": (id * 7919) % 100_000,
            })
        })
        .collect();
    let approve: bool = elicit(format!(
        "Import {} bytes of records?",
        payload.to_string().len()
    ))
    .await?;
    Ok(format!(
        "{approve} {}",
        payload.as_array().map_or(0, Vec::len)
    ))
}

/// Token sizes of the loops BENCHMARKS.md reports (`cargo test -p saga-workspace --test
/// tools token_sizes -- --nocapture` prints them), each held to a bound it must stay under.
#[tokio::test]
async fn token_sizes_of_real_states() {
    // The research loop, five turns of searches answered by the client.
    let client = TestClient::new(saga_examples::research::research);
    let mut turn = 0;
    let run = client
        .call(
            "research",
            json!({"question": "What changed in the 2026 spec?"}),
        )
        .respond(move |asked| {
            turn += 1;
            (asked.method() == "sampling/createMessage").then(|| {
                if turn < 6 {
                    Answer::tool_uses([("c", "search", json!({"query": format!("topic {turn}")}))])
                } else {
                    Answer::sampled("done")
                }
            })
        })
        .max_rounds(10)
        .run()
        .await
        .expect("completes");
    let research: Vec<usize> = run
        .rounds()
        .iter()
        .filter_map(|round| round.token_len())
        .collect();
    println!("research loop, token characters by turn: {research:?}");
    // Five searches and the answer: six rounds sealed a token. Before deflating (issue
    // 74's table): 1,423, 1,663, 1,904, 2,226, 2,746 characters for the first five.
    assert_eq!(research.len(), 6);
    assert!(research[4] < 2_746 / 2, "{research:?}");
    // The offered tools are restated from their types, not saved: the first round's token
    // holds the question alone (the three schemas were 1.4 KB of it, 626 characters
    // deflated).
    assert!(research[0] < 300, "{research:?}");
    // And every round offers the same tools, schemas and all.
    let offered: Vec<&serde_json::Value> = run
        .asked()
        .iter()
        .map(|asked| &asked.params()["tools"])
        .collect();
    assert!(
        offered.iter().all(|tools| *tools == offered[0]),
        "{offered:?}"
    );
    assert_eq!(
        offered[0].as_array().map(Vec::len),
        Some(3),
        "{:?}",
        offered[0]
    );

    // About 100 KB of JSON records kept across one question.
    let client = TestClient::new(keeps_payload);
    let run = client
        .call("keeps_payload", json!({"records": 700}))
        .then(Answer::accept(json!(true)))
        .run()
        .await
        .expect("completes");
    let token = run.rounds()[0].token_len().expect("a token");
    println!("a 100 KB JSON payload kept across an elicit: {token} characters");
    assert!(token < 64 * 1024 / 2, "{token}");
    assert_eq!(run.text(), "true 700");
}

/// Keeps its argument across a question.
#[saga_tool]
async fn keeps_argument(text: String) -> Result<String, SagaError> {
    let _sure: bool = elicit("Keep it?").await?;
    Ok(format!("{} bytes", text.len()))
}

/// A first call's arguments are the client's, as its answers are: a state grown by them is
/// the client's error.
#[tokio::test]
async fn a_state_grown_by_a_first_calls_arguments_is_the_clients_error() {
    let client = TestClient::new(keeps_argument);
    let failed = client
        .call("keeps_argument", json!({"text": fetched(9, 100 * 1024)}))
        .then(Answer::accept(json!(true)))
        .run()
        .await;
    let Err(Failed::Server { error, .. }) = failed else {
        panic!("not refused: {}", failed.is_ok());
    };
    assert_eq!(error.code.0, -32602, "{}", error.message);
    assert!(
        error.message.contains("send smaller answers"),
        "{}",
        error.message
    );
}

/// The research example's loop reading one 20 KB page of its log per turn, `pages` turns,
/// then answering: the client's LLM as a scripted agent.
async fn read_pages(client: &TestClient, pages: u32) -> Result<saga_runtime::testing::Run, Failed> {
    let mut turn = 0u32;
    client
        .call("research", json!({"question": "What failed in the log?"}))
        .respond(move |asked| {
            (asked.method() == "sampling/createMessage").then(|| {
                turn += 1;
                if turn <= pages {
                    Answer::tool_uses([("p", "read_page", json!({"page": turn - 1}))])
                } else {
                    Answer::sampled(format!("read {pages} pages"))
                }
            })
        })
        .max_rounds(pages as usize + 4)
        .run()
        .await
}

/// With a state store, the loop reads 20 pages of 20 KB: every token the client carries
/// is a short reference once the conversation passes the inline bound.
#[tokio::test]
async fn twenty_turns_of_20_kb_pages_complete_with_a_state_store() {
    let tools = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .state_store(TaskStore::memory())
        .tool(saga_examples::research::research)
        .build()
        .expect("builds");
    let client = TestClient::with_tools(tools);
    let run = read_pages(&client, 20).await.expect("completes");
    assert_eq!(run.text(), "read 20 pages");
    let tokens: Vec<usize> = run.rounds().iter().filter_map(|r| r.token_len()).collect();
    println!("20 pages with a state store, token characters by turn: {tokens:?}");
    assert_eq!(tokens.len(), 21);
    assert!(tokens.iter().all(|len| *len <= 8 * 1024), "{tokens:?}");
}

/// Without a store, the same loop goes as far as deflating takes it, and then ends with
/// the tool's own error, naming the conversation it keeps.
#[tokio::test]
async fn without_a_store_the_loop_ends_with_the_tools_error_at_the_documented_turn() {
    let client = TestClient::new(saga_examples::research::research);
    let failed = read_pages(&client, 20).await;
    let Err(Failed::Server { error, rounds }) = failed else {
        panic!("not refused: {}", failed.is_ok());
    };
    println!(
        "without a store: {} turns, then: {}",
        rounds.len(),
        error.message
    );
    assert_eq!(error.code.0, -32603, "{}", error.message);
    assert!(
        error.message.contains("the tool's state outgrew its token")
            && error
                .message
                .contains("Largest saved: the frame of the #[saga_fn] helper")
            && error.message.contains("SagaServerBuilder::state_store"),
        "{}",
        error.message
    );
    // Documented in the guide's sampling chapter: at least ten pages of the log.
    assert!(rounds.len() >= 10, "{} turns", rounds.len());
}

/// A server is never set to seal references (0x70), nor traced tokens (0x80) on their
/// own, as its format: the builder says so, and names the formats it takes; each of
/// those builds.
#[test]
fn a_reference_is_no_format_to_seal_in() {
    use saga_runtime::state::TokenFormat;
    for format in [TokenFormat::Kept, TokenFormat::Traced] {
        let built = SagaServer::builder()
            .keys(KeyRing::ephemeral())
            .token_format(format)
            .build();
        let Err(error) = built else {
            panic!("built with {format:?}");
        };
        assert!(
            error
                .to_string()
                .contains("names no format a codec seals in"),
            "{error}"
        );
    }
    // The advice: each format it names builds.
    for format in [
        TokenFormat::SEALED,
        TokenFormat::Deflated,
        TokenFormat::Compact,
        TokenFormat::Fixed,
    ] {
        let built = SagaServer::builder()
            .keys(KeyRing::ephemeral())
            .token_format(format)
            .build();
        assert!(built.is_ok(), "{format:?}");
    }
}

/// Keeps a page that does not deflate across ten samples, then asks the person.
#[saga_tool]
async fn samples_with_a_page() -> Result<String, SagaError> {
    let page = fetched(3, 40 * 1024);
    let mut said = 0;
    for _ in 0..10 {
        let answer = sample("Say something").max_tokens(20).await?;
        said += answer.text().len().min(1);
    }
    let _sure: bool = elicit("Keep it?").await?;
    Ok(format!("{} bytes, {said} answers", page.len()))
}

/// Only a state that leaves the process is kept (the review of issue 74): the ten rounds
/// the server's model answers within one request are handed on in memory, so a store whose
/// bound holds two such states keeps only the one the client is answered with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_state_a_request_answers_with_is_kept() {
    use saga_examples::harness::openai::FakeOpenAi;
    use saga_runtime::model::OpenAiCompatible;
    use saga_runtime::rmcp::model::ClientCapabilities;
    use saga_runtime::tasks::StateSettings;
    let provider = FakeOpenAi::start("sk-kept-0123456789").await;
    let model = OpenAiCompatible::new(&provider.base_url, "sk-kept-0123456789", "fake-model")
        .expect("a client");
    let tools = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .model(model)
        .state_store(StateSettings::new(TaskStore::memory()).max_bytes_per_principal(100 * 1024))
        .tool(samples_with_a_page)
        .build()
        .expect("builds");
    let client = TestClient::with_tools(tools)
        .capabilities(ClientCapabilities::builder().enable_elicitation().build());
    let run = client
        .call("samples_with_a_page", json!({}))
        .then(Answer::accept(json!(true)))
        .run()
        .await
        .expect("completes");
    assert_eq!(run.text(), format!("{} bytes, 10 answers", 40 * 1024));
    assert_eq!(provider.requests().len(), 10);
    let tokens: Vec<usize> = run.rounds().iter().filter_map(|r| r.token_len()).collect();
    assert_eq!(tokens.len(), 1, "one round reached the client: {tokens:?}");
    assert!(tokens[0] < 200, "a reference: {tokens:?}");
}

/// A test of a tool served with a state store keeps its state as that server does: the
/// loop that outgrows its token above passes whole.
#[tokio::test]
async fn a_test_client_with_a_state_store_keeps_what_outgrows_a_token() {
    let client = TestClient::with_state_store(hoard, TaskStore::memory());
    let run = hoard_forty(&client).await.expect("kept in the store");
    assert_eq!(run.text(), "40 pages");
}

/// What a state store costs on disk (issue 98): the research loop's 20 turns of 20 KB
/// pages kept in a SQLite file, its size and its write-ahead log's measured after the
/// call. Each turn's state is kept until its token expires (ten minutes by default), so
/// a call's states add up; the WAL is truncated to 4 MiB after each checkpoint
/// (`journal_size_limit`), so that a burst does not keep its size on disk for good.
#[tokio::test]
async fn a_sqlite_state_stores_disk_use_per_call_is_measured_and_its_wal_bounded() {
    let dir = std::env::temp_dir().join(format!("saga-disk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let path = dir.join("states.db");
    let store = TaskStore::sqlite(&path).expect("opens");
    let client = TestClient::with_state_store(saga_examples::research::research, store);
    let run = read_pages(&client, 20).await.expect("completes");
    assert_eq!(run.text(), "read 20 pages");
    let size = |suffix: &str| {
        std::fs::metadata(format!("{}{suffix}", path.display())).map_or(0, |meta| meta.len())
    };
    let (file, wal) = (size(""), size("-wal"));
    let turns = run.rounds().len() as u64;
    println!(
        "20 turns of 20 KB pages in SQLite: file {file} bytes, WAL {wal} bytes, \
         {} bytes per turn",
        (file + wal) / turns
    );
    // Past the limit only by what was written since the last checkpoint: 1,000 pages.
    assert!(
        wal <= 4 * 1024 * 1024 + 1000 * 4096 + 64 * 1024,
        "WAL {wal} bytes"
    );
    drop(client);
    let _ = std::fs::remove_dir_all(&dir);
}
