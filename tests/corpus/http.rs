//! The whole corpus served by one `SagaServer` over Streamable HTTP and driven round by
//! round by rmcp's client: every result must equal the differential run's.

use saga_examples::client::{ScriptedClient, accept as client_accept, llm_says};
use saga_runtime::prelude::*;
use saga_runtime::rmcp::model::{CallToolRequestParams, CallToolResponse};
use saga_runtime::rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};

use super::borrows::*;
use super::expressions::*;
use super::harness::{Script, all_capabilities, differential};
use super::helpers::*;
use super::sagas::*;
use crate::loops::{looper, looper_script};

type Client = RunningService<RoleClient, ScriptedClient>;

/// Calls `name` with `arguments` until it completes, answering every round with `script`;
/// gives the final result (without `_meta`) and the number of rounds.
async fn drive(client: &Client, name: &str, arguments: &Value, mut script: Script) -> (Value, u32) {
    let mut params = CallToolRequestParams::new(name.to_owned())
        .with_arguments(arguments.as_object().cloned().expect("an object"));
    let mut rounds = 0;
    loop {
        match client
            .call_tool_once(params.clone())
            .await
            .unwrap_or_else(|error| panic!("{name}: round {rounds} failed: {error}"))
        {
            CallToolResponse::InputRequired(required) => {
                rounds += 1;
                assert!(rounds < 1_000, "{name} never finished");
                params.input_responses = required
                    .input_requests
                    .as_ref()
                    .map(|requests| script.respond(requests));
                params.request_state = required.request_state;
            }
            CallToolResponse::Complete(result) => {
                let mut result = serde_json::to_value(result).expect("results serialize");
                if let Some(object) = result.as_object_mut() {
                    object.remove("_meta");
                }
                return (result, rounds);
            }
            other => panic!("{name}: unexpected response {other:?}"),
        }
    }
}

/// Runs the differential for `$tool`, then the same conversation over HTTP.
macro_rules! same_over_http {
    ($client:expr, $tool:expr, $plain:expr, $arguments:expr, $script:expr) => {{
        let arguments: Value = $arguments;
        let script = $script;
        let expected = differential(&$tool, plain!($plain), arguments.clone(), &script).await;
        let name = $tool.tool().name.to_string();
        let (result, rounds) = drive(&$client, &name, &arguments, script()).await;
        assert_eq!(result, expected.result, "{name} {arguments}: HTTP differs");
        assert_eq!(rounds, expected.rounds, "{name} {arguments}: rounds differ");
        name
    }};
}

#[tokio::test]
async fn corpus_runs_end_to_end_over_http() {
    let server = SagaServer::builder()
        .info("corpus", "0.0.0")
        .keys(KeyRing::ephemeral())
        .tool(looper)
        .tool(statements)
        .tool(branches)
        .tool(matcher)
        .tool(loop_value)
        .tool(stack)
        .tool(for_kinds)
        .tool(grid)
        .tool(search)
        .tool(early_exit)
        .tool(lookup_chain)
        .tool(shadowing)
        .tool(captures)
        .tool(keyed)
        .tool(five_asks)
        .tool(joined)
        .tool(url_flow)
        .tool(context_aware)
        .tool(described_args)
        .tool(structured)
        .tool(many_rounds)
        .tool(big_state)
        .tool(original_name)
        .tool(declines)
        .tool(operands)
        .tool(conditions)
        .tool(lets_and_macros)
        .tool(with_items)
        .tool(borrowed_loops)
        .tool(join_many)
        .tool(nested)
        .tool(cleanup)
        .tool(research)
        .tool(everywhere)
        .tool(migration_plan)
        .tool(recount)
        .tool(merge_setting)
        .tool(chess)
        .tool(triage)
        .tool(hash_walk)
        .tool(shadowed_capture)
        .build()
        .expect("the corpus server builds");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve_listener(listener, async {
        let _ = stopped.await;
    }));

    // The client's own handlers are never used: every round is answered by a Script.
    let client = ScriptedClient::new(|_| client_accept(json!({})), |_| llm_says("unused"))
        .with_capabilities(all_capabilities())
        .connect_http(&url)
        .await
        .expect("the client connects");

    let mut driven = vec![
        same_over_http!(
            client,
            looper,
            crate::loops::plain::looper,
            json!({"n": 5, "items": ["a", "b", "c"]}),
            looper_script
        ),
        same_over_http!(
            client,
            statements,
            crate::sagas::plain::statements,
            json!({"greeting": "hi"}),
            statements_script
        ),
        same_over_http!(
            client,
            branches,
            crate::sagas::plain::else_if::branches,
            json!({"level": 3, "hint": "yes"}),
            branches_script
        ),
        same_over_http!(
            client,
            matcher,
            crate::sagas::plain::matcher,
            json!({"code": "21", "label": "x"}),
            matcher_script("Red", 3)
        ),
        same_over_http!(
            client,
            loop_value,
            crate::sagas::plain::loop_value,
            json!({"limit": 6}),
            loop_value_script
        ),
        same_over_http!(
            client,
            stack,
            crate::sagas::plain::stack,
            json!({"items": ["a", "bb", "ccc"]}),
            stack_script
        ),
        same_over_http!(
            client,
            for_kinds,
            crate::sagas::plain::for_kinds,
            json!({"words": ["c", "a", "b"], "n": 4}),
            for_kinds_script
        ),
        same_over_http!(
            client,
            grid,
            crate::sagas::plain::grid,
            json!({"rows": 3, "cols": 3}),
            grid_script
        ),
        same_over_http!(
            client,
            search,
            crate::sagas::plain::search,
            json!({"target": 21}),
            search_script
        ),
        same_over_http!(
            client,
            early_exit,
            crate::sagas::plain::early_exit,
            json!({"mode": "err"}),
            early_exit_script(|| client_text("F"))
        ),
        same_over_http!(
            client,
            early_exit,
            crate::sagas::plain::early_exit,
            json!({"mode": "ok"}),
            early_exit_script(decline)
        ),
        same_over_http!(
            client,
            lookup_chain,
            crate::sagas::plain::lookup_chain,
            json!({"count": 3}),
            lookup_script
        ),
        same_over_http!(
            client,
            shadowing,
            crate::sagas::plain::shadowing,
            json!({"start": 5}),
            shadowing_script
        ),
        same_over_http!(
            client,
            captures,
            crate::sagas::plain::captures,
            json!({"name": "ann"}),
            captures_script
        ),
        same_over_http!(
            client,
            keyed,
            crate::sagas::plain::keyed,
            json!({}),
            keyed_script
        ),
        same_over_http!(
            client,
            five_asks,
            crate::sagas::plain::five_asks,
            json!({}),
            five_asks_script
        ),
        same_over_http!(
            client,
            joined,
            crate::sagas::plain::joined,
            json!({"topic": "rust"}),
            joined_script(|| client_text("T"))
        ),
        same_over_http!(
            client,
            url_flow,
            crate::sagas::plain::url_flow,
            json!({"service": "git"}),
            url_flow_script(|| json!({"action": "accept"}))
        ),
        same_over_http!(
            client,
            described_args,
            crate::sagas::plain::described_args,
            json!({"name": "ann", "times": 2}),
            described_script
        ),
        same_over_http!(
            client,
            structured,
            crate::sagas::plain::structured,
            json!({"owner": "ann"}),
            structured_script
        ),
        same_over_http!(
            client,
            many_rounds,
            crate::sagas::plain::many_rounds,
            json!({"n": 200}),
            many_rounds_script
        ),
        same_over_http!(
            client,
            big_state,
            crate::sagas::plain::big_state,
            json!({"count": 50}),
            big_state_script
        ),
        same_over_http!(
            client,
            original_name,
            crate::sagas::plain::original_name,
            json!({"word": "hi"}),
            renamed_script
        ),
        same_over_http!(
            client,
            declines,
            crate::sagas::plain::declines,
            json!({"fallback": "anon"}),
            declines_script(decline, || client_flag(false))
        ),
        same_over_http!(
            client,
            operands,
            crate::expressions::plain::operands,
            json!({"base": 40}),
            operands_script
        ),
        same_over_http!(
            client,
            conditions,
            crate::expressions::plain::conditions,
            json!({"level": 0, "items": []}),
            conditions_script
        ),
        same_over_http!(
            client,
            conditions,
            crate::expressions::plain::conditions,
            json!({"level": 1, "items": ["a", "kb"]}),
            conditions_script
        ),
        same_over_http!(
            client,
            lets_and_macros,
            crate::expressions::plain::lets_and_macros,
            json!({"name": "id42"}),
            lets_and_macros_script
        ),
        same_over_http!(
            client,
            lets_and_macros,
            crate::expressions::plain::lets_and_macros,
            json!({"name": "bob"}),
            lets_and_macros_script
        ),
        same_over_http!(
            client,
            with_items,
            crate::expressions::plain::with_items,
            json!({"words": ["Apple", "pear", "fig", "kiwi"]}),
            with_items_script
        ),
        same_over_http!(
            client,
            borrowed_loops,
            crate::expressions::plain::borrowed_loops,
            json!({"names": ["ann", "bob", "cy"]}),
            borrowed_loops_script
        ),
        same_over_http!(
            client,
            join_many,
            crate::expressions::plain::join_many,
            json!({"names": ["ann", "bob", "cy"]}),
            join_many_script
        ),
        same_over_http!(
            client,
            nested,
            crate::expressions::plain::nested,
            json!({"seed": 3}),
            nested_script
        ),
        same_over_http!(
            client,
            nested,
            crate::expressions::plain::nested,
            json!({"seed": -2}),
            nested_script
        ),
        same_over_http!(
            client,
            cleanup,
            crate::helpers::plain::cleanup,
            json!({"paths": ["a", "b", "c"]}),
            yes_to_b
        ),
        same_over_http!(
            client,
            research,
            crate::helpers::plain::research,
            json!({"topics": ["x", "y"]}),
            research_script
        ),
        same_over_http!(
            client,
            everywhere,
            crate::helpers::plain::everywhere,
            json!({"options": ["x", "y", "z"]}),
            everywhere_script
        ),
        same_over_http!(
            client,
            migration_plan,
            crate::borrows::plain::migration_plan,
            json!({"sources": [
                {"kind": "Postgres", "dsn": "pg://a", "tables": ["t1"]},
                {"kind": "S3", "bucket": "logs"},
            ]}),
            migration_script
        ),
        same_over_http!(
            client,
            recount,
            crate::borrows::plain::recount,
            json!({"by_sku": {
                "apple": [{"bin": "b1", "expected": 3}, {"bin": "b2", "expected": 4}],
                "pear": [{"bin": "z9", "expected": 1}, {"bin": "b3", "expected": 1}],
            }}),
            recount_script
        ),
        same_over_http!(
            client,
            merge_setting,
            crate::borrows::plain::merge_setting,
            json!({"old": {"List": ["a"]}, "new": {"List": ["b"]}}),
            merge_script
        ),
        same_over_http!(
            client,
            chess,
            crate::borrows::plain::chess,
            json!({"white": false, "turns": 3}),
            chess_script
        ),
        same_over_http!(
            client,
            triage,
            crate::borrows::plain::triage,
            json!({"pick": 0, "incidents": [
                {"id": "i1", "owner": "ana", "tags": ["db", "p1"], "severity": 2},
                {"id": "i2", "owner": null, "tags": ["net"], "severity": 1},
            ]}),
            triage_script
        ),
        same_over_http!(
            client,
            hash_walk,
            crate::borrows::plain::hash_walk,
            json!({"scores": {"a": 1, "bb": 2, "ccc": 3}, "seen": ["x", "y"]}),
            hash_script
        ),
        same_over_http!(
            client,
            shadowed_capture,
            crate::borrows::plain::shadowed_capture,
            json!({"v": [3, 1]}),
            shadowed_script
        ),
    ];

    // The principal over HTTP is the server's, not the differential's "tester": compare
    // the shape instead.
    let (result, rounds) = drive(
        &client,
        "context_aware",
        &json!({"topic": "tabs"}),
        context_script(),
    )
    .await;
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    let (principals, opinion) = text.split_once(": ").expect("principal: opinion");
    let (first, second) = principals.split_once('/').expect("two principals");
    assert_eq!(first, second, "{text}");
    assert_eq!(opinion, "from the LLM", "{text}");
    assert_eq!(rounds, 2);
    driven.push("context_aware".into());

    driven.sort();
    driven.dedup();
    assert_eq!(
        driven.len(),
        41,
        "every tool of the server was driven: {driven:?}"
    );

    client.cancel().await.unwrap();
    let _ = stop.send(());
    let _ = serving.await;
}

fn client_text(value: &str) -> Value {
    super::harness::accept(json!({ "value": value }))
}

fn client_flag(value: bool) -> Value {
    super::harness::accept(json!({ "value": value }))
}
