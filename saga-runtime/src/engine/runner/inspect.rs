//! Inspection: a token opened without redeeming it, and its state decoded with the tool's
//! own types, as JSON (`SagaServer::inspect`, `saga inspect`, the examples' `--inspect`).
//! It reads a token as a transition does, and runs none: each pending request is shown
//! as it was asked, from the token or as the tool states it again.

use crate::engine::caller::context::SagaContext;
use crate::engine::caller::error::InspectError;
use crate::engine::contract::typed::Typed;
use crate::engine::identity::points::Points;
use crate::engine::round::asking;
use crate::engine::round::pending::RoundRecord;
use crate::state::{Binding, StateCodec, TokenHeader};

/// The round's requests as the tool states them again from `state_bytes`
/// ([`SagaTool::restate`](crate::engine::SagaTool::restate)), for inspection: a panic, or
/// a state the tool cannot restate, shows no request.
fn restated_for_inspection(
    tool: &dyn Typed,
    head: &RoundRecord,
    state_bytes: &[u8],
) -> Option<rmcp::model::InputRequests> {
    let (state, _) = tool.decode(state_bytes).ok()?;
    let cx = SagaContext::new("inspect");
    let requests =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tool.restate(state, &cx)))
            .ok()??;
    asking::asked_again(head, Some(requests), "inspect", head.build)
        .ok()
        .map(|(asked, _)| asked)
}

/// Opens `token` for `tool` under `binding` without redeeming it, and decodes the saved
/// state with the tool's own types, as JSON
/// ([`SagaTool::state_json`](crate::engine::contract::tool::SagaTool::state_json)): for
/// `SagaServer::inspect`.
pub(crate) fn inspect_state(
    tool: &dyn Typed,
    points: &Points,
    codec: &StateCodec,
    token: &str,
    binding: &Binding,
) -> Result<serde_json::Value, InspectError> {
    let header =
        TokenHeader::peek_point(token).map_err(|error| InspectError::Refused(error.into()))?;
    let point = points
        .find(&header)
        .ok_or_else(|| InspectError::OtherBuild(points.refusal(&header)))?;
    let opened = codec
        .open(token, &point.key, binding)
        .map_err(InspectError::Refused)?;
    let undecodable =
        |reason: &dyn std::fmt::Display| InspectError::Undecodable(reason.to_string());
    let (head, fields) =
        RoundRecord::decode(opened.format, &opened.plaintext).map_err(|e| undecodable(&e))?;
    let state_bytes = points.join(point, fields);
    let state_bytes = state_bytes.as_slice();
    let (state, _) = tool.decode(state_bytes).map_err(|e| undecodable(&e))?;
    // Show each pending request as it is asked: from the token, or as the tool states it
    // again from its state.
    let asked = if head.needs_restating() {
        restated_for_inspection(tool, &head, state_bytes)
    } else {
        asking::asked_again(&head, None, "inspect", head.build)
            .ok()
            .map(|(asked, _)| asked)
    };
    let pending: Vec<serde_json::Value> = head
        .pending
        .iter()
        .map(|entry| {
            let key = entry.key();
            let request = asked
                .as_ref()
                .and_then(|asked| asked.get(&*key))
                .and_then(|request| serde_json::to_value(request).ok())
                .unwrap_or_default();
            serde_json::json!({
                "key": &*key,
                "kind": entry.kind,
                "request": request,
                "restated": entry.params.is_none(),
            })
        })
        .collect();
    Ok(serde_json::json!({
        "tool": points.tool(),
        "version": points.version(),
        "point": &point.name,
        "expiresAt": opened.expires_at,
        "nextKey": head.next_key,
        "pending": pending,
        "state": tool.state_json(state).map_err(|e| undecodable(&e))?,
    }))
}
