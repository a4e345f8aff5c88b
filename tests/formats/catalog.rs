//! Prompts and resources backed by sagas, over raw HTTP: listings, `prompts/get` and
//! `resources/read` (input-required rounds included), and the answers a first call may
//! already carry.

#![allow(deprecated)]

use std::net::SocketAddr;

use saga_examples::harness::http::{Post, StatusCode, meta, request};
use saga_examples::harness::serving::{Running, serve_local};
use saga_runtime::prelude::*;
use saga_runtime::rmcp::model::{PromptMessage, Role};
use serde_json::{Value, json};

#[derive(Elicit, Serialize, Deserialize)]
struct Context {
    context: String,
}

/// A prompt that first asks which context to use.
#[saga_prompt]
async fn contextual(topic: String) -> Result<Prompt, SagaError> {
    let answer: Context = elicit("What context should the prompt use?")
        .key("user_context")
        .await?;
    Ok(Prompt::new(vec![PromptMessage::new_text(
        Role::User,
        format!("Explain {topic} for {}", answer.context),
    )]))
}

/// A fixed prompt.
#[saga_prompt]
async fn simple() -> Result<Prompt, SagaError> {
    Ok(Prompt::new(vec![PromptMessage::new_text(
        Role::User,
        "Hello",
    )]))
}

/// A fixed text.
#[saga_resource]
async fn static_text(uri: String) -> Result<Contents, SagaError> {
    Ok(Contents::text(uri, "text/plain", "static"))
}

/// Data for an id.
#[saga_resource]
async fn item(uri: String, id: String) -> Result<Contents, SagaError> {
    let confirmed: bool = elicit(format!("Show item {id}?")).key("confirm").await?;
    Ok(Contents::text(
        uri,
        "application/json",
        json!({"id": id, "shown": confirmed}).to_string(),
    ))
}

/// Greets by name.
#[saga_tool]
async fn greet() -> Result<String, SagaError> {
    let name: String = elicit("Your name?").key("user_name").await?;
    Ok(format!("Hello, {name}!"))
}

async fn serve() -> (SocketAddr, Running) {
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(greet)
        .prompt(simple)
        .prompt(contextual)
        .resource("test://static", static_text)
        .resource_template("test://items/{id}", item)
        .build()
        .unwrap();
    let running = serve_local(server).await;
    (running.addr, running)
}

/// A 2026-07-28 request from a client that declares elicitation.
async fn rpc(addr: SocketAddr, method: &str, mut params: Value) -> (StatusCode, Value) {
    params["_meta"] = meta(json!({"elicitation": {}}));
    Post::mcp(addr)
        .rpc(&request(1, method, params))
        .send()
        .await
}

#[tokio::test]
async fn discover_declares_prompts_and_resources() {
    let (addr, _stop) = serve().await;
    let (_, reply) = rpc(addr, "server/discover", json!({})).await;
    let capabilities = &reply["result"]["capabilities"];
    assert!(capabilities["prompts"].is_object(), "{reply:#}");
    assert!(capabilities["resources"].is_object(), "{reply:#}");
    assert!(capabilities["tools"].is_object(), "{reply:#}");
}

/// A server with tools alone advertises neither prompts nor resources, and their list
/// methods do not exist there (`-32601`), as with rmcp's own handlers.
#[tokio::test]
async fn lists_of_capabilities_not_advertised_are_method_not_found() {
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .tool(greet)
        .build()
        .unwrap();
    let running = serve_local(server).await;
    let (_, reply) = rpc(running.addr, "server/discover", json!({})).await;
    let capabilities = &reply["result"]["capabilities"];
    assert!(capabilities.get("prompts").is_none(), "{reply:#}");
    assert!(capabilities.get("resources").is_none(), "{reply:#}");
    for method in ["prompts/list", "resources/list", "resources/templates/list"] {
        let (_, reply) = rpc(running.addr, method, json!({})).await;
        assert_eq!(reply["error"]["code"], -32601, "{method}: {reply:#}");
    }
    let (_, reply) = rpc(running.addr, "tools/list", json!({})).await;
    assert!(reply["result"]["tools"].is_array(), "{reply:#}");
}

#[tokio::test]
async fn prompts_are_listed_with_their_arguments_and_get_runs_the_saga() {
    let (addr, _stop) = serve().await;
    let (_, reply) = rpc(addr, "prompts/list", json!({})).await;
    let prompts = reply["result"]["prompts"].as_array().unwrap();
    let names: Vec<&str> = prompts
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["simple", "contextual"]);
    assert_eq!(
        prompts[1]["arguments"],
        json!([{"name": "topic", "required": true}])
    );
    assert_eq!(
        prompts[1]["description"],
        "A prompt that first asks which context to use."
    );
    assert!(reply["result"]["ttlMs"].is_u64() && reply["result"]["cacheScope"].is_string());

    let (_, reply) = rpc(addr, "prompts/get", json!({"name": "simple"})).await;
    assert_eq!(
        reply["result"]["messages"][0]["content"]["text"], "Hello",
        "{reply:#}"
    );

    let get = json!({"name": "contextual", "arguments": {"topic": "sagas"}});
    let (_, reply) = rpc(addr, "prompts/get", get.clone()).await;
    let result = &reply["result"];
    assert_eq!(result["resultType"], "input_required", "{reply:#}");
    assert_eq!(
        result["inputRequests"]["user_context"]["params"]["message"],
        "What context should the prompt use?"
    );
    let mut retry = get;
    retry["requestState"] = result["requestState"].clone();
    retry["inputResponses"] =
        json!({"user_context": {"action": "accept", "content": {"context": "beginners"}}});
    let (_, reply) = rpc(addr, "prompts/get", retry).await;
    assert_eq!(reply["result"]["resultType"], "complete", "{reply:#}");
    assert_eq!(
        reply["result"]["messages"][0]["content"]["text"],
        "Explain sagas for beginners"
    );

    let (_, reply) = rpc(addr, "prompts/get", json!({"name": "nope"})).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply:#}");
}

#[tokio::test]
async fn resources_and_templates_are_read_through_their_sagas() {
    let (addr, _stop) = serve().await;
    let (_, reply) = rpc(addr, "resources/list", json!({})).await;
    assert_eq!(
        reply["result"]["resources"][0]["uri"], "test://static",
        "{reply:#}"
    );
    let (_, reply) = rpc(addr, "resources/templates/list", json!({})).await;
    assert_eq!(
        reply["result"]["resourceTemplates"][0]["uriTemplate"], "test://items/{id}",
        "{reply:#}"
    );

    let (_, reply) = rpc(addr, "resources/read", json!({"uri": "test://static"})).await;
    let result = &reply["result"];
    assert_eq!(
        result["contents"],
        json!([{"uri": "test://static", "mimeType": "text/plain", "text": "static"}]),
        "{reply:#}"
    );
    assert!(
        result["ttlMs"].is_u64() && result["cacheScope"].is_string(),
        "{reply:#}"
    );

    let read = json!({"uri": "test://items/42"});
    let (_, reply) = rpc(addr, "resources/read", read.clone()).await;
    assert_eq!(reply["result"]["resultType"], "input_required", "{reply:#}");
    assert_eq!(
        reply["result"]["inputRequests"]["confirm"]["params"]["message"],
        "Show item 42?"
    );
    let mut retry = read;
    retry["requestState"] = reply["result"]["requestState"].clone();
    retry["inputResponses"] = json!({"confirm": {"action": "accept", "content": {"value": true}}});
    let (_, reply) = rpc(addr, "resources/read", retry).await;
    let text = reply["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!({"id": "42", "shown": true}),
        "{reply:#}"
    );

    let (_, reply) = rpc(addr, "resources/read", json!({"uri": "test://nothing"})).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply:#}");
    assert_eq!(reply["error"]["data"]["uri"], "test://nothing");
}

#[tokio::test]
async fn a_first_call_that_already_has_its_answers_completes() {
    let (addr, _stop) = serve().await;
    let call = json!({
        "name": "greet",
        "inputResponses": {
            "user_name": {"action": "accept", "content": {"value": "Alice"}},
            "unknown_extra_key": {"action": "accept", "content": {}}
        }
    });
    let (_, reply) = rpc(addr, "tools/call", call).await;
    assert_eq!(
        reply["result"]["content"][0]["text"], "Hello, Alice!",
        "{reply:#}"
    );

    let wrong = json!({"name": "greet", "inputResponses": {"wrong_key": {"action": "accept", "content": {"data": "x"}}}});
    let (_, reply) = rpc(addr, "tools/call", wrong).await;
    assert_eq!(reply["result"]["resultType"], "input_required", "{reply:#}");
    assert!(reply["result"]["inputRequests"]["user_name"].is_object());
}

#[tokio::test]
async fn removed_logging_set_level_is_method_not_found() {
    let (addr, _stop) = serve().await;
    let (status, reply) = rpc(addr, "logging/setLevel", json!({"level": "info"})).await;
    assert_eq!(reply["error"]["code"], -32601, "{status} {reply:#}");
}

/// A resource read by a caller with a principal of its own may have been answered for it
/// alone: `cacheScope` is `private` (issue 72, finding 5's kin: a per-caller answer marked
/// `public` may be served to another caller by an intermediary); an anonymous caller's
/// read stays `public`.
#[tokio::test]
async fn a_resource_read_by_a_principal_is_private() {
    let server = SagaServer::builder()
        .keys(KeyRing::ephemeral())
        .resource("test://static", static_text)
        .principal_headers(["x-user"])
        .build()
        .expect("the server builds");
    let running = serve_local(server).await;
    let mut params = json!({"uri": "test://static"});
    params["_meta"] = meta(json!({}));
    let read = request(1, "resources/read", params);
    let (_, anonymous) = Post::mcp(running.addr).rpc(&read).send().await;
    assert_eq!(anonymous["result"]["cacheScope"], "public", "{anonymous:#}");
    let (_, named) = Post::mcp(running.addr)
        .rpc(&read)
        .header("x-user", "alice")
        .send()
        .await;
    assert_eq!(named["result"]["cacheScope"], "private", "{named:#}");
}
