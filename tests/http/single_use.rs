//! Optional single use: a redeemed token is refused the second time, by one process
//! (`MemoryStore`) or by every replica sharing a Redis (`RedisStore`, against a real
//! `redis-server`, which `.ci/run` installs).

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

fn token(reply: &Value) -> String {
    reply["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no token: {reply:#}"))
        .to_owned()
}

#[track_caller]
fn refused(reply: &Value) {
    assert_eq!(reply["error"]["code"], -32602, "{reply:#}");
    assert_eq!(reply["error"]["message"], INVALID_STATE_MESSAGE);
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
    refused(&call(running.addr, Some(&t1), Some(target())).await);

    // Asking again redeems the token too, and hands out a fresh one that works once.
    let t2 = token(&second);
    let again = call(running.addr, Some(&t2), None).await;
    let t3 = token(&again);
    refused(&call(running.addr, Some(&t2), None).await);
    let answer = json!({"sample-2": {"role": "assistant", "content": {"type": "text", "text": "Yes"}, "model": "m"}});
    let done = call(running.addr, Some(&t3), Some(answer.clone())).await;
    assert_eq!(done["result"]["resultType"], "complete", "{done:#}");
    refused(&call(running.addr, Some(&t3), Some(answer)).await);
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
    refused(&call(running.addr, Some(&a), Some(target())).await);
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
    refused(&call(one.addr, Some(&t1), Some(target())).await);
    refused(&call(two.addr, Some(&t1), Some(target())).await);
}
