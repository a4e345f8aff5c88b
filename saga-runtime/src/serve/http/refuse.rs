//! A request refused before it reached a handler: an HTTP status with a JSON-RPC error.

use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};
use serde_json::json;

/// An HTTP error status with a JSON-RPC error body (id `null`: the request could not be
/// read far enough to answer its id).
pub(crate) fn refuse(status: StatusCode, code: i32, message: &str) -> Response {
    refuse_id(status, &serde_json::Value::Null, code, message)
}

/// [`refuse`] answering the request `id`.
pub(crate) fn refuse_id(
    status: StatusCode,
    id: &serde_json::Value,
    code: i32,
    message: &str,
) -> Response {
    let body = refusal(id, code, message);
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The JSON-RPC error message of a refusal: the body [`refuse_id`] sends, or the last
/// event of a stream whose status is already sent.
pub(crate) fn refusal(id: &serde_json::Value, code: i32, message: &str) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}
