//! The direct path's JSON reply: the bytes rmcp writes, an input-required result written
//! straight out (`engine::runner::written`, without the `serde_json::Value` rmcp 3.11 builds
//! for every input request), and a result's `serverInfo` stamp written beside it.

use rmcp::model::{
    JsonRpcMessage, JsonRpcResponse, MetaObject, ServerJsonRpcMessage, ServerResult,
};

use crate::engine::runner::written;

/// Writes `message` as `serde_json::to_writer` would.
///
/// `server_info` is the `serverInfo` stamp of an input-required or complete result that
/// has no `_meta` of its own, as JSON ([`crate::serve::tools::server_info_stamp`]): it is
/// written as the `_meta` that stamping the result would have given it, so the result
/// need not be stamped, which cloned the server info into new maps for every reply.
/// Only a writer that writes results directly takes it ([`stamps_unstamped`]).
pub(super) fn write(
    message: &ServerJsonRpcMessage,
    server_info: Option<&[u8]>,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    if !written::writes_directly() {
        debug_assert!(server_info.is_none(), "rmcp's writer stamps nothing");
        return serde_json::to_writer(out, message);
    }
    match message {
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc,
            id,
            result: ServerResult::InputRequiredResult(result),
        }) => {
            // The envelope's keys written as the bytes serde_json writes for them: they
            // are constants that need no escaping (BENCHMARKS.md). Its values, and the
            // result, are serde_json's.
            out.extend_from_slice(br#"{"jsonrpc":"#);
            serde_json::to_writer(&mut *out, jsonrpc)?;
            out.extend_from_slice(br#","id":"#);
            serde_json::to_writer(&mut *out, id)?;
            out.extend_from_slice(br#","result":"#);
            written::write_input_required(result, server_info, out)?;
            out.push(b'}');
            Ok(())
        }
        JsonRpcMessage::Response(JsonRpcResponse {
            result: ServerResult::CallToolResult(result),
            ..
        }) if result.meta.is_none() => {
            let start = out.len();
            serde_json::to_writer(&mut *out, message)?;
            let Some(stamp) = server_info else {
                return Ok(());
            };
            // The result's `_meta` is its last field, and the result the response's: the
            // stamped result's bytes are these with `,"_meta":STAMP` before the result's
            // closing brace (a test compares them with rmcp's). Stamping the result
            // itself cloned the server info into new maps for every reply.
            if out.ends_with(b"}}") {
                out.truncate(out.len() - 2);
                out.extend_from_slice(br#","_meta":"#);
                out.extend_from_slice(stamp);
                out.extend_from_slice(b"}}");
                return Ok(());
            }
            // Not the shape above (another rmcp): the stamped result, written by rmcp.
            out.truncate(start);
            let mut stamped = message.clone();
            if let JsonRpcMessage::Response(JsonRpcResponse {
                result: ServerResult::CallToolResult(result),
                ..
            }) = &mut stamped
            {
                let meta: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_slice(stamp)?;
                result.meta = Some(MetaObject(meta));
            }
            serde_json::to_writer(out, &stamped)
        }
        _ => {
            debug_assert!(
                server_info.is_none(),
                "only an input-required or a complete result is stamped"
            );
            serde_json::to_writer(out, message)
        }
    }
}

/// Whether [`write()`] writes an input-required or complete result's `serverInfo` stamp
/// itself.
pub(super) fn stamps_unstamped() -> bool {
    written::writes_directly()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{
        CreateMessageRequestParams, ElicitRequestParams, ElicitationSchema, InputRequest,
        InputRequests, InputRequiredResult, ModelPreferences, RequestId, SamplingMessage,
    };

    fn reply(requests: Vec<(&str, InputRequest)>) -> ServerJsonRpcMessage {
        let mut map = InputRequests::new();
        for (key, request) in requests {
            map.insert(key.to_owned(), request);
        }
        let mut result = InputRequiredResult::from_request_state("state");
        result.input_requests = Some(map);
        ServerJsonRpcMessage::response(
            ServerResult::InputRequiredResult(result),
            RequestId::Number(7),
        )
    }

    fn same_bytes_as_rmcp(message: &ServerJsonRpcMessage) {
        let mut ours = Vec::new();
        write(message, None, &mut ours).unwrap();
        let rmcp = serde_json::to_vec(message).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&rmcp)
        );
    }

    fn sample(params: CreateMessageRequestParams) -> InputRequest {
        InputRequest::CreateMessage(rmcp::model::CreateMessageRequest::new(params))
    }

    fn form(message: &str) -> InputRequest {
        let schema = ElicitationSchema::builder()
            .required_string("target")
            .optional_number("replicas", 0.5, 10.0)
            .build()
            .unwrap();
        InputRequest::Elicitation(rmcp::model::ElicitRequest::new(
            ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: message.to_owned(),
                requested_schema: schema,
            },
        ))
    }

    /// Writes `unstamped` with the stamp of `info`, requires rmcp's bytes for the result
    /// stamped, and returns them.
    fn same_bytes_as_stamped(
        unstamped: rmcp::model::CallToolResponse,
        info: &serde_json::Value,
        id: RequestId,
    ) -> String {
        let mut stamped = unstamped.clone();
        crate::serve::tools::stamp_server_info(&mut stamped, info);
        let message =
            |response| ServerJsonRpcMessage::response(ServerResult::from(response), id.clone());
        let mut ours = Vec::new();
        let stamp = crate::serve::tools::server_info_stamp(info);
        write(&message(unstamped), Some(&stamp), &mut ours).unwrap();
        let rmcp = serde_json::to_vec(&message(stamped)).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&rmcp)
        );
        String::from_utf8(ours).unwrap()
    }

    /// The stamp the writer writes is the one stamping the result gives, as rmcp writes it.
    #[test]
    fn a_stamp_written_by_the_writer_is_the_stamped_results() {
        let info = serde_json::json!({"name": "deploy \"server\"", "version": "0.1.0"});
        let mut result = InputRequiredResult::from_request_state("s");
        let mut requests = InputRequests::new();
        requests.insert("elicit-1".to_owned(), form("Where to?"));
        result.input_requests = Some(requests);
        let ours = same_bytes_as_stamped(
            rmcp::model::CallToolResponse::InputRequired(result),
            &info,
            RequestId::Number(7),
        );
        assert!(ours.contains(r#""_meta":{"io.modelcontextprotocol/serverInfo":{"name""#));
    }

    /// A complete result's stamp, written by the writer, is the stamped result's, as rmcp
    /// writes it: with and without structured content and an error flag.
    #[test]
    fn a_complete_results_stamp_written_by_the_writer_is_the_stamped_results() {
        let info = serde_json::json!({"name": "deploy \"server\"", "version": "0.1.0"});
        let mut structured =
            rmcp::model::CallToolResult::structured(serde_json::json!({"ok": true, "n": [1, 2.5]}));
        structured.is_error = Some(false);
        let results = [
            rmcp::model::CallToolResult::success(vec![rmcp::model::ContentBlock::text("done ✓")]),
            rmcp::model::CallToolResult::error(vec![]),
            structured,
        ];
        for unstamped in results {
            same_bytes_as_stamped(
                rmcp::model::CallToolResponse::Complete(unstamped),
                &info,
                RequestId::String("r\"1".into()),
            );
        }
    }

    #[test]
    fn input_required_replies_are_rmcps_bytes() {
        let plain = CreateMessageRequestParams::new(
            vec![SamplingMessage::user_text("Is it \"safe\"? ✓")],
            100,
        );
        same_bytes_as_rmcp(&reply(vec![("sample-2", sample(plain.clone()))]));
        same_bytes_as_rmcp(&reply(vec![("elicit-1", form("Where to?"))]));
        // `f32`s, which a `Value` widens.
        let floats = plain.clone().with_temperature(0.7).with_model_preferences(
            ModelPreferences::new()
                .with_cost_priority(0.1)
                .with_speed_priority(f32::NAN),
        );
        same_bytes_as_rmcp(&reply(vec![
            ("a", sample(floats)),
            ("b", form("second")),
            ("c", InputRequest::ListRoots(Default::default())),
        ]));
        // A `_meta` in the params, which rmcp moves first.
        let mut meta = rmcp::model::RequestMetaObject::default();
        meta.0.0.insert("k".into(), serde_json::json!(1.25));
        let mut with_meta = plain.clone();
        with_meta.meta = Some(meta.clone());
        same_bytes_as_rmcp(&reply(vec![("m", sample(with_meta))]));
        // A `_meta` in the extensions, which rmcp merges in.
        let mut request = rmcp::model::CreateMessageRequest::new(plain);
        request.extensions.insert(meta);
        same_bytes_as_rmcp(&reply(vec![("x", InputRequest::CreateMessage(request))]));
        // A checkpoint (a state, no requests), a result with a `_meta` of its own, and
        // one with neither a state nor requests, under a string id to escape.
        let mut checkpoint = InputRequiredResult::from_request_state("only\"state");
        same_bytes_as_rmcp(&ServerJsonRpcMessage::response(
            ServerResult::InputRequiredResult(checkpoint.clone()),
            RequestId::String("id \"1\"".into()),
        ));
        let mut own_meta = MetaObject::default();
        own_meta
            .0
            .insert("k".into(), serde_json::json!({"x": [1, "y"]}));
        checkpoint.meta = Some(own_meta);
        same_bytes_as_rmcp(&ServerJsonRpcMessage::response(
            ServerResult::InputRequiredResult(checkpoint.clone()),
            RequestId::Number(-3),
        ));
        checkpoint.request_state = None;
        same_bytes_as_rmcp(&ServerJsonRpcMessage::response(
            ServerResult::InputRequiredResult(checkpoint),
            RequestId::Number(0),
        ));
        // Other messages are serde_json's.
        same_bytes_as_rmcp(&ServerJsonRpcMessage::error(
            rmcp::ErrorData::invalid_params("no", None),
            Some(RequestId::String("s".into())),
        ));
    }
}
