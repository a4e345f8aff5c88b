//! Talking to a server with rmcp's client: `saga tools` and `saga call`.
//!
//! The client connects with `server/discover` (MCP 2026-07-28) and drives a call through
//! its `input_required` rounds itself. When the server does not answer `server/discover`,
//! rmcp falls back to a 2025-11-25 session (`initialize`); the server then sends its
//! elicitation, sampling and roots requests during the call, and the same prompts (or
//! `--answers` entries keyed `elicitation-N` / `sampling-N`) answer them. With `--task`
//! the client declares the MCP tasks extension and follows the task the call becomes
//! (see [`crate::task`]).

pub(crate) mod print;
pub(crate) mod respond;
mod run;
pub(crate) mod session;
mod tools;

pub use respond::{Capability, Outcome, Responder, roots};
pub use run::call;
pub(crate) use session::cannot_connect;
pub use tools::list_tools;

#[cfg(test)]
mod tests {
    use rmcp::model::Tool;
    use serde_json::{Map, Value, json};

    use crate::answers::Answers;

    use super::print::*;
    use super::respond::*;
    use super::session::*;
    use super::tools::*;

    #[test]
    fn shortens_the_token_unless_asked() {
        let token = "A".repeat(12) + &"B".repeat(100) + "CCCCCC";
        assert_eq!(shown_state(&token, true), token);
        let short = shown_state(&token, false);
        assert!(
            short.starts_with("AAAAAAAAAAAA…CCCCCC (118 chars"),
            "{short}"
        );
        assert_eq!(shown_state("abc", false), "abc");
    }

    #[test]
    fn declares_capabilities_but_those_left_out() {
        let all = serde_json::to_value(capabilities(&[], false)).unwrap();
        assert!(all["sampling"].is_object() && all["roots"].is_object());
        assert!(all["elicitation"]["url"].is_object());
        assert!(all.get("extensions").is_none(), "{all}");
        let some = serde_json::to_value(capabilities(
            &[Capability::Sampling, Capability::Url],
            false,
        ))
        .unwrap();
        assert!(some.get("sampling").is_none());
        assert!(some["elicitation"]["form"].is_object());
        assert!(some["elicitation"].get("url").is_none());
        assert!(some["roots"].is_object());
        assert!(all["sampling"]["tools"].is_object(), "{all}");
        let no_tools =
            serde_json::to_value(capabilities(&[Capability::SamplingTools], false)).unwrap();
        assert!(no_tools["sampling"].is_object());
        assert!(no_tools["sampling"].get("tools").is_none(), "{no_tools}");
    }

    #[test]
    fn declares_the_tasks_extension_with_task() {
        let declared = capabilities(&[], true);
        assert!(declared.supports_tasks());
        let json = serde_json::to_value(&declared).unwrap();
        assert!(
            json["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
            "{json}"
        );
        assert!(json["elicitation"]["form"].is_object());
    }

    #[test]
    fn a_request_asked_again_with_its_reason_is_the_same_request() {
        let first = json!({"method": "elicitation/create", "params": {
            "mode": "form", "message": "Book a meeting for Ada",
            "requestedSchema": {"type": "object", "properties": {"duration": {"type": "integer", "maximum": 240}}}}});
        let mut again = first.clone();
        again["params"]["message"] = json!(
            "Book a meeting for Ada\n\nYour last answer was not accepted: `duration` is above the maximum 240."
        );
        assert!(same_request(&first, &again));
        assert!(same_request(&first, &first));
        let mut other = first.clone();
        other["params"]["message"] = json!("Book a meeting for Bob");
        assert!(!same_request(&first, &other));
        let mut other_schema = first.clone();
        other_schema["params"]["requestedSchema"]["properties"] = json!({});
        assert!(!same_request(&first, &other_schema));
    }

    #[test]
    fn with_answers_a_session_stops_at_a_request_asked_again_or_without_an_entry() {
        let answers = Answers::parse(r#"{"elicitation-1": {"duration": 300}}"#).unwrap();
        let responder = Responder::new(Some(answers), Vec::new());
        let ask = |message: &str| {
            json!({"method": "elicitation/create", "params": {"mode": "form", "message": message,
                "requestedSchema": {"type": "object", "properties": {}}}})
        };
        let first = ask("How long?");
        assert!(responder.session_reask("elicitation-1", &first).is_none());
        responder.session_answered(&first);
        // Asked again with the reason: refused, and the error carries the server's words.
        let again = ask(
            "How long?\n\nYour last answer was not accepted: `duration` is above the maximum 240.",
        );
        let error = responder
            .session_reask("elicitation-2", &again)
            .expect("a re-ask stops the call");
        let text = format!("{error:#}");
        assert!(text.contains("elicitation-2"), "{text}");
        assert!(
            text.contains("`duration` is above the maximum 240"),
            "{text}"
        );
        // Another question with no entry for its counter stops too, quoting it.
        let error = responder
            .session_reask("elicitation-2", &ask("Which room?"))
            .expect("no entry stops the call");
        assert!(format!("{error:#}").contains("Which room?"), "{error:#}");
        // Roots need no entry.
        assert!(
            responder
                .session_reask("roots-3", &json!({"method": "roots/list"}))
                .is_none()
        );
        // A person at the terminal is asked again instead.
        let person = Responder::new(None, Vec::new());
        person.session_answered(&first);
        assert!(person.session_reask("elicitation-2", &again).is_none());
    }

    #[tokio::test]
    async fn a_stop_wins_over_the_requests_own_outcome() {
        let responder = Responder::new(None, Vec::new());
        assert_eq!(responder.until_stopped(async { 7 }).await.unwrap(), 7);
        responder.set_stop(anyhow::anyhow!("no answer for elicitation-2"));
        let error = responder
            .until_stopped(std::future::pending::<()>())
            .await
            .unwrap_err();
        assert_eq!(error.to_string(), "no answer for elicitation-2");
    }

    #[test]
    fn progress_is_one_line() {
        let params: rmcp::model::ProgressNotificationParam = serde_json::from_value(
            json!({"progressToken": 1, "progress": 50, "total": 100, "message": "50% done"}),
        )
        .unwrap();
        assert_eq!(progress_line(&params), "… progress 50/100 50% done");
        let params: rmcp::model::ProgressNotificationParam =
            serde_json::from_value(json!({"progressToken": 1, "progress": 3})).unwrap();
        assert_eq!(progress_line(&params), "… progress 3");
    }

    #[test]
    fn session_keys_share_one_counter_across_kinds() {
        let responder = Responder::new(None, Vec::new());
        assert_eq!(responder.next_session_key("elicitation"), "elicitation-1");
        assert_eq!(responder.next_session_key("sampling"), "sampling-2");
        assert_eq!(responder.next_session_key("roots"), "roots-3");
        assert_eq!(responder.next_session_key("elicitation"), "elicitation-4");
    }

    #[test]
    fn roots_are_file_uris() {
        let roots = roots(&["/srv/app".into(), "https://x/y".into()]).unwrap();
        assert_eq!(roots[0], json!({"uri": "file:///srv/app", "name": "app"}));
        assert_eq!(roots[1], json!({"uri": "https://x/y"}));
        let default = super::roots(&[]).unwrap();
        assert_eq!(default.len(), 1);
        assert!(default[0]["uri"].as_str().unwrap().starts_with("file:///"));
    }

    #[test]
    fn answers_from_a_file_without_a_terminal() {
        let answers = Answers::parse(r#"{"e": {"target": "prod"}, "s": "Yes"}"#).unwrap();
        let responder = Responder::new(Some(answers), vec![json!({"uri": "file:///w"})]);
        let elicit = json!({"method": "elicitation/create", "params": {
            "mode": "form", "message": "m", "requestedSchema": {"type": "object", "properties": {}}}});
        assert_eq!(
            responder.answer("e", &elicit).unwrap(),
            json!({"action": "accept", "content": {"target": "prod"}})
        );
        let sample = json!({"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "q"}}], "maxTokens": 5}});
        assert_eq!(
            responder.answer("s", &sample).unwrap()["content"]["text"],
            "Yes"
        );
        let roots = json!({"method": "roots/list"});
        assert_eq!(
            responder.answer("r", &roots).unwrap(),
            json!({"roots": [{"uri": "file:///w"}]})
        );
        assert!(responder.answer("missing", &sample).is_err());
        assert!(responder.answer("e", &json!({"method": "x/y"})).is_err());
    }

    #[test]
    fn a_servers_line_breaks_forge_no_line_of_a_tool_listing() {
        let tool: Tool = serde_json::from_value(json!({
            "name": "t\nforged_tool — Looks real.",
            "title": "T\n  title: forged",
            "description": "Line one.\nforged_tool_2 — Also real?",
            "inputSchema": {"type": "object", "properties": {
                "a\n  forged_arg  string  required": {
                    "type": "string",
                    "enum": ["x\n  forged_enum  string  required"],
                    "description": "d\n  forged_description"
                }
            }}
        }))
        .unwrap();
        let text = describe_tool(&tool, Some("optional\n  task support: forged"));
        // Every line the listing prints is its own: a tool's line, a deeper description
        // line, or one of the tool's two-space fields; no server text starts a line.
        for line in text.lines() {
            assert!(
                line.starts_with("t\\u{a}forged_tool")
                    || line.starts_with("    forged_tool_2")
                    || line.starts_with("  title: T\\u{a}")
                    || line.starts_with("  a\\u{a}")
                    || line.starts_with("  task support: optional\\u{a}"),
                "a forged line: {line:?}\n{text}"
            );
        }
        assert_eq!(text.lines().count(), 5, "{text}");
    }

    #[test]
    fn progress_messages_stay_on_their_line() {
        let params: rmcp::model::ProgressNotificationParam = serde_json::from_value(json!({
            "progressToken": 1, "progress": 1.0, "total": 3.0,
            "message": "step\n← task x: completed"
        }))
        .unwrap();
        assert_eq!(
            progress_line(&params),
            "… progress 1/3 step\\u{a}← task x: completed"
        );
    }

    #[test]
    fn lists_arguments_with_types_and_requiredness() {
        let tool: Tool = serde_json::from_value(json!({
            "name": "complex_tool",
            "description": "Deploys.",
            "inputSchema": {"type": "object", "properties": {
                "initial_arg": {"type": "string", "description": "first"},
                "replicas": {"type": ["integer", "null"], "minimum": 0}
            }, "required": ["initial_arg"]}
        }))
        .unwrap();
        let text = describe_tool(&tool, None);
        assert!(text.starts_with("complex_tool — Deploys.\n"), "{text}");
        assert!(text.ends_with("  task support: not declared\n"), "{text}");
        assert!(
            !text.contains("title:") && !text.contains("output:"),
            "{text}"
        );
        assert!(
            text.contains("initial_arg  string                  required  first"),
            "{text}"
        );
        assert!(
            text.contains("replicas     integer (>= 0) or null  optional"),
            "{text}"
        );
    }

    #[test]
    fn shows_the_title_output_schema_and_task_support() {
        let tool: Tool = serde_json::from_value(json!({
            "name": "book_meeting",
            "title": "Book a meeting",
            "inputSchema": {"type": "object", "properties": {"organiser": {"type": "string"}},
                            "required": ["organiser"]},
            "outputSchema": {"type": "object", "properties": {
                "room": {"enum": ["aurora", "cosmos"]},
                "minutes": {"type": "integer", "minimum": 15},
                "notes": {"type": "string"}
            }, "required": ["room", "minutes"]}
        }))
        .unwrap();
        let text = describe_tool(&tool, Some("optional"));
        assert!(
            text.starts_with("book_meeting\n  title: Book a meeting\n  organiser"),
            "{text}"
        );
        assert!(
            text.contains(
                "  output: {room: one of aurora|cosmos, minutes: integer (>= 15), notes?: string}\n"
            ),
            "{text}"
        );
        assert!(text.ends_with("  task support: optional\n"), "{text}");
        // A title in the annotations only, and an output that is not an object.
        let tool: Tool = serde_json::from_value(json!({
            "name": "t", "inputSchema": {"type": "object"},
            "annotations": {"title": "Tee"}, "outputSchema": {"type": "string"}
        }))
        .unwrap();
        let text = describe_tool(&tool, Some("required"));
        assert!(text.contains("  title: Tee\n"), "{text}");
        assert!(text.contains("  output: string\n"), "{text}");
    }

    #[test]
    fn a_long_output_schema_is_cut() {
        let mut properties = Map::new();
        for i in 0..100 {
            properties.insert(format!("field_{i}"), json!({"type": "string"}));
        }
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), Value::Object(properties));
        let shown = describe_output(&schema);
        assert_eq!(shown.chars().count(), MAX_OUTPUT_CHARS + 1, "{shown}");
        assert!(shown.ends_with('…'));
    }
}
