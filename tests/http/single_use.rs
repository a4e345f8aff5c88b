//! Optional single use: a redeemed token runs its round once, by one process
//! (`MemoryStore`) or by every replica sharing a Redis (`RedisStore`, against a real
//! `redis-server`, which `.ci/run` installs). The same request sent again gets the
//! answer its first sending got (`retries.rs` covers that in depth); with other answers,
//! it is refused.

use std::net::SocketAddr;

use saga_examples::deploy;
use saga_examples::harness::http::{Call, DEPLOY, accept_target};
use saga_examples::harness::redis::start_redis;
use saga_examples::harness::serving::serve_local;
use saga_runtime::prelude::*;
use saga_runtime::state::{INVALID_STATE_MESSAGE, MemoryStore, RedisStore, TokenStore};
use serde_json::{Value, json};

const KEY: [u8; 32] = [5; 32];

fn server(store: impl TokenStore) -> SagaServer {
    SagaServer::builder()
        .keys(KeyRing::from_keys([KEY]).unwrap())
        .single_use(store)
        .tool(deploy::complex_tool)
        .build()
        .unwrap()
}

/// A round of the deploy tool, resuming `state` with `answers`; the reply.
async fn call(addr: SocketAddr, state: Option<&str>, answers: Option<Value>) -> Value {
    let mut call = Call::new(DEPLOY, json!({"initial_arg": "value"}));
    if let Some(state) = state {
        call = call.state(state);
    }
    if let Some(answers) = answers {
        call = call.answers(answers);
    }
    call.send(addr).await.1
}

fn target() -> Value {
    accept_target("production")
}

/// The `requestState` of a reply.
pub(crate) fn token(reply: &Value) -> String {
    reply["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no token: {reply:#}"))
        .to_owned()
}

/// Asserts `reply` is the refusal every refused token gets.
#[track_caller]
pub(crate) fn refused(reply: &Value) {
    assert_eq!(reply["error"]["code"], -32602, "{reply:#}");
    assert_eq!(reply["error"]["message"], INVALID_STATE_MESSAGE);
}

/// `state` sent again with the answers of its first request: the same result, the round
/// not run again; with `other` answers, refused.
async fn spent(addr: SocketAddr, state: &str, first: &Value, answers: Option<Value>, other: Value) {
    let again = call(addr, Some(state), answers).await;
    assert_eq!(again["result"], first["result"], "{again:#}");
    refused(&call(addr, Some(state), Some(other)).await);
}

#[tokio::test]
async fn a_token_is_redeemed_once() {
    let running = serve_local(server(MemoryStore::new(1_000))).await;
    let first = call(running.addr, None, None).await;
    let t1 = token(&first);

    let second = call(running.addr, Some(&t1), Some(target())).await;
    assert!(
        second["result"]["inputRequests"]["sample-2"].is_object(),
        "{second:#}"
    );
    spent(
        running.addr,
        &t1,
        &second,
        Some(target()),
        accept_target("staging"),
    )
    .await;

    // Asking again redeems the token too, and hands out a fresh one that works once.
    let t2 = token(&second);
    let again = call(running.addr, Some(&t2), None).await;
    let t3 = token(&again);
    assert_ne!(t3, t2);
    spent(running.addr, &t2, &again, None, accept_target("staging")).await;
    let answer = json!({"sample-2": {"role": "assistant", "content": {"type": "text", "text": "Yes"}, "model": "m"}});
    let done = call(running.addr, Some(&t3), Some(answer.clone())).await;
    assert_eq!(done["result"]["resultType"], "complete", "{done:#}");
    let other = json!({"sample-2": {"role": "assistant", "content": {"type": "text", "text": "No"}, "model": "m"}});
    spent(running.addr, &t3, &done, Some(answer), other).await;
}

#[tokio::test]
async fn a_full_store_refuses_new_tokens_and_keeps_the_old_ones() {
    let running = serve_local(server(MemoryStore::new(1))).await;
    let a = token(&call(running.addr, None, None).await);
    let b = token(&call(running.addr, None, None).await);
    let redeemed = call(running.addr, Some(&a), Some(target())).await;
    assert!(redeemed["result"].is_object(), "{redeemed:#}");

    // The store is full of a live token: it refuses B rather than forget A.
    let busy = call(running.addr, Some(&b), Some(target())).await;
    assert_eq!(busy["error"]["code"], -32603, "{busy:#}");
    spent(
        running.addr,
        &a,
        &redeemed,
        Some(target()),
        accept_target("staging"),
    )
    .await;
}

#[tokio::test]
async fn replicas_sharing_redis_redeem_each_token_once() {
    let redis = start_redis().await;
    let one = serve_local(server(RedisStore::connect(&redis.url).await.unwrap())).await;
    let two = serve_local(server(RedisStore::connect(&redis.url).await.unwrap())).await;

    let t1 = token(&call(one.addr, None, None).await);
    let next = call(two.addr, Some(&t1), Some(target())).await;
    assert!(
        next["result"]["inputRequests"]["sample-2"].is_object(),
        "{next:#}"
    );
    spent(
        one.addr,
        &t1,
        &next,
        Some(target()),
        accept_target("staging"),
    )
    .await;
    spent(
        two.addr,
        &t1,
        &next,
        Some(target()),
        accept_target("staging"),
    )
    .await;
}

/// A stateless request of seed 002 (`resumableRequests` declared in its `_meta`).
async fn streamed(url: &str, mut message: Value) -> reqwest::Response {
    message["params"]["_meta"] =
        saga_examples::harness::http::meta(json!({"resumableRequests": {}}));
    saga_examples::harness::http::Post::to(url)
        .rpc(&message)
        .response()
        .await
}

/// `requests/resume` of request `id` from `token`: the stream's final message.
async fn resume(url: &str, id: &str, token: &str) -> Value {
    let response = streamed(
        url,
        json!({"jsonrpc": "2.0", "id": id, "method": "requests/resume",
               "params": {"resumeToken": token}}),
    )
    .await;
    let mut events = saga_examples::harness::session::Events::new(response);
    events.next_after_policy().await.1
}

/// Finding 5 of the second hardening pass: with the Redis single-use store, a streamed
/// call that had returned its result could have each token it handed out resumed once
/// more, and its work ran again (tables ran 3×). A call's tokens now die as it hands out
/// a newer one, and all of them when it ends, on every replica.
#[tokio::test]
async fn a_calls_earlier_tokens_die_as_it_moves_on_across_replicas() {
    use saga_examples::harness::journal::Journal;
    use saga_examples::harness::session::Events;
    const KEY_HEX: &str = "3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d";
    let redis = start_redis().await;
    let journal = Journal::new("single-use-siblings");
    let spawn = || {
        journal
            .migrate(KEY_HEX)
            .env("SAGA_TASKS_REDIS", &redis.url)
            .start()
    };
    let (first, second) = (spawn(), spawn());
    let (url_a, url_b) = (
        format!("http://{}/mcp", first.addr),
        format!("http://{}/mcp", second.addr),
    );
    let migrate = |id: &str, tables: u32, label: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "migrate",
                          "arguments": {"tables": tables, "millis_per_table": 20, "label": label}}})
    };

    // A call streamed to its end on replica A: every token it handed out dies with it.
    let mut events = Events::new(streamed(&url_a, migrate("done-1", 3, "done")).await);
    let mut tokens = Vec::new();
    let result = loop {
        let message = events.next().await.expect("the call streams");
        match message["params"]["resumeToken"].as_str() {
            Some(token) => tokens.push(token.to_owned()),
            None => break message,
        }
    };
    assert!(
        result["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("migrated 3")),
        "{result}"
    );
    assert!(tokens.len() >= 3, "a policy at each checkpoint: {tokens:?}");
    for token in &tokens {
        let replay = resume(&url_b, "done-1", token).await;
        assert_eq!(
            replay["error"]["code"], -32602,
            "a finished call's token ran: {replay}"
        );
    }
    assert_eq!(journal.tables_done("done"), 3, "{}", journal.text());

    // A call whose client went away after its second checkpoint: the first token died
    // when the second was handed out; the second continues it once, on replica B.
    let mut events = Events::new(streamed(&url_a, migrate("cut-1", 4, "cut")).await);
    let older = events.policies(1, "cut-1").await;
    let newer = events.policies(1, "cut-1").await;
    drop(events);
    // The run stops with its stream; give it a moment to notice.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let stale = resume(&url_b, "cut-1", &older).await;
    assert_eq!(
        stale["error"]["code"], -32602,
        "an earlier sibling ran: {stale}"
    );
    let resumed = resume(&url_b, "cut-1", &newer).await;
    assert!(
        resumed["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("migrated 4")),
        "{resumed}"
    );
    // The same resume sent again: answered from its recorded outcome, the work not run
    // again (the journal below counts it).
    let again = resume(&url_a, "cut-1", &newer).await;
    assert_eq!(again["result"], resumed["result"], "{again}");
    let done = journal.tables_done("cut");
    assert!(
        done <= 4 + 1,
        "at most the table cut off ran twice: {}",
        journal.text()
    );
}
