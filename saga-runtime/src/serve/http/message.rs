//! The stateless JSON-RPC message as the direct path (`super::direct` and the modules of
//! each kind of request it serves) reads it and writes its answer back: read in one pass
//! with the guard's JSON checks, an id as those checks admit one, params from an object
//! only, the `_meta` keys read without rmcp's typed accessors, and the answer written with
//! rmcp's status.

use axum::response::Response;
use http::StatusCode;
use rmcp::ErrorData;
use rmcp::model::{ErrorCode, ProtocolVersion, RequestId, ServerJsonRpcMessage, ServerResult};

use std::time::Duration;

use futures::future::{BoxFuture, FutureExt as _};

use super::notified::{Answer, Written};
use crate::engine::SagaContext;
use crate::engine::caller::outbox::Outbox;
use crate::serve::json_check::{self, JsonBudget};
use crate::serve::tools::SagaTools;

/// A closed set of methods the direct path serves (`lists::Listing`,
/// `catalog_requests::CatalogMethod`, `task_requests::TaskMethod`), each named by its
/// JSON-RPC method: the one lookup of a method's name all of them share.
pub(super) trait ServedMethod: Copy + 'static {
    /// Every method of the set.
    const ALL: &'static [Self];

    /// Its JSON-RPC method.
    fn method(self) -> &'static str;

    /// The method of the set called `method`, if it is one.
    fn of_method(method: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|served| served.method() == method)
    }
}

/// A message read from `body` in one pass with the guard's JSON checks
/// ([`json_check::typed::read_within`]); `None` for a body they would refuse, and for any
/// that is not a `T`.
pub(super) fn one_pass<'de, T: serde::Deserialize<'de>>(
    body: &'de [u8],
    budget: JsonBudget,
) -> Option<T> {
    // The walk also requires a JSON-RPC message to be an object, where a struct may be
    // read from an array.
    if body.trim_ascii_start().first() != Some(&b'{') {
        return None;
    }
    json_check::typed::read_within(body, budget)
}

/// A JSON-RPC request of a method the direct path serves, read as it reads a call: rmcp's
/// types for each member, exactly these four (a stray `result` or `error`, which rmcp
/// refuses, is refused here too), `jsonrpc` exactly `"2.0"`, `params` (`P`, the method's)
/// from an object only. rmcp also takes some methods without params, but a stateless
/// request's params carry its required `_meta`, so one without is rmcp's to refuse. Each
/// reader checks `method` against the one `Mcp-Method` names.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, bound = "P: serde::Deserialize<'de>")]
pub(super) struct RequestMessage<P> {
    #[allow(dead_code)] // read to be checked
    jsonrpc: rmcp::model::JsonRpcVersion2_0,
    pub(super) id: CallId,
    pub(super) method: String,
    #[serde(deserialize_with = "params_object")]
    pub(super) params: P,
}

/// The params, from a JSON object only. The derived readers of rmcp's params types also
/// take an array of the members in order, which rmcp (reading params beside a flattened
/// `_meta`) refuses.
pub(super) fn params_object<'de, D: serde::Deserializer<'de>, P: serde::Deserialize<'de>>(
    deserializer: D,
) -> Result<P, D::Error> {
    struct ObjectVisitor<P>(std::marker::PhantomData<P>);
    impl<'de, P: serde::Deserialize<'de>> serde::de::Visitor<'de> for ObjectVisitor<P> {
        type Value = P;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("the params object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<P, A::Error> {
            P::deserialize(serde::de::value::MapAccessDeserializer::new(map))
        }
    }
    deserializer.deserialize_map(ObjectVisitor(std::marker::PhantomData))
}

/// A request id as the guard's envelope check admits one: an integer or a string, by its
/// JSON token. rmcp also reads a number in float form (`1.0`) as an integer id, but the
/// check refuses it, and a body read in one pass (`super::direct::Direct::read_within`)
/// has not been through the check.
pub(super) struct CallId(pub(super) RequestId);

impl<'de> serde::Deserialize<'de> for CallId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl serde::de::Visitor<'_> for IdVisitor {
            type Value = CallId;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an integer or a string")
            }
            fn visit_i64<E: serde::de::Error>(self, id: i64) -> Result<CallId, E> {
                Ok(CallId(RequestId::Number(id)))
            }
            fn visit_u64<E: serde::de::Error>(self, id: u64) -> Result<CallId, E> {
                // Past `i64::MAX` rmcp refuses the id, and so the request.
                let id = i64::try_from(id).map_err(E::custom)?;
                Ok(CallId(RequestId::Number(id)))
            }
            fn visit_str<E: serde::de::Error>(self, id: &str) -> Result<CallId, E> {
                Ok(CallId(RequestId::String(id.into())))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
}

/// The `_meta` keys this path reads itself: rmcp's accessors (`protocol_version()`,
/// `get_progress_token()`, `log_level()`) decode a typed value from each, which cost
/// more than all the request's other checks together. A test keeps them rmcp's.
pub(super) const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(super) const META_PROGRESS_TOKEN: &str = "progressToken";
pub(super) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// What a request's `_meta` asks to be sent while it runs, read as a tool's `progress` and
/// `log` read it: a key present but not readable asks for nothing, on either path.
#[derive(Clone, Copy)]
pub(super) struct Notices {
    /// A progress token that reads as one.
    pub(super) progress: bool,
    /// The least level of log messages asked for.
    pub(super) log_level: Option<rmcp::model::LoggingLevel>,
}

impl Notices {
    /// What `meta` asks for.
    pub(super) fn asked_in(meta: &rmcp::model::RequestMetaObject) -> Self {
        let map = &(meta.0).0;
        // A key is looked up first: the typed accessors decode a value, and most requests
        // have neither key.
        Self {
            progress: map.contains_key(META_PROGRESS_TOKEN) && meta.get_progress_token().is_some(),
            log_level: if map.contains_key(META_LOG_LEVEL) {
                meta.log_level()
            } else {
                None
            },
        }
    }

    /// Whether anything is asked for: the response is then written by `super::notified`.
    pub(super) fn any(self) -> bool {
        self.progress || self.log_level.is_some()
    }
}

/// Whether `_meta` names MCP 2026-07-28, as `meta.protocol_version() ==
/// Some(V_2026_07_28)` answers: that version is the string, and only it.
pub(super) fn names_2026_07_28(meta: &rmcp::model::RequestMetaObject) -> bool {
    (meta.0)
        .0
        .get(META_PROTOCOL_VERSION)
        .and_then(serde_json::Value::as_str)
        == Some(ProtocolVersion::V_2026_07_28.as_str())
}

/// The message answering request `id` with a handler's `answer`, as rmcp's service wraps
/// it for a 2026-07-28 client: a result's cache hints filled, a missing resource's error
/// code `-32602` (`INVALID_PARAMS`), as 2026-07-28 has it. (Not a `tools/call`'s error,
/// which rmcp passes on as the handler made it: `Direct::message`.)
pub(super) fn answered(
    answer: Result<ServerResult, ErrorData>,
    id: RequestId,
) -> ServerJsonRpcMessage {
    match answer {
        Ok(mut result) => {
            result.fill_missing_cache_hints();
            ServerJsonRpcMessage::response(result, id)
        }
        Err(mut error) => {
            if error.code == ErrorCode::RESOURCE_NOT_FOUND {
                error.code = ErrorCode::INVALID_PARAMS;
            }
            ServerJsonRpcMessage::error(error, Some(id))
        }
    }
}

/// The JSON response rmcp gives a stateless request's one message, with its status.
pub(super) fn respond(message: &ServerJsonRpcMessage) -> Response {
    written(message, None).into_response()
}

/// The response of request `id` whose answer `run` makes, from the server's `tools`, for
/// the caller `cx`: that answer alone, or, for a request that asked for notifications
/// (`notifies`), what [`notifying`] writes of them and of it.
pub(super) fn answering<F: Future<Output = Written> + Send + 'static>(
    tools: &SagaTools,
    cx: SagaContext,
    id: RequestId,
    notifies: bool,
    keep_alive: Option<Duration>,
    run: impl FnOnce(SagaTools, SagaContext) -> F + 'static,
) -> BoxFuture<'static, Response> {
    let tools = tools.clone();
    if !notifies {
        return run(tools, cx).map(Written::into_response).boxed();
    }
    let run = move |cx| run(tools, cx).map(Answer::Written);
    notifying(cx, id, keep_alive, run).boxed()
}

/// The response of request `id` that asked for notifications (`Notices::any`), run by
/// `run` in the caller's context `cx` with the notifications' outbox added: its
/// notifications and answer as [`super::notified`] writes them. The run owns what it uses
/// (its tools, not a borrow of them): it runs in a task of its own. If that task stops
/// before it answers (a panic outside the tool's steps), the answer is an internal error.
pub(super) fn notifying<F: Future<Output = Answer> + Send + 'static>(
    cx: SagaContext,
    id: RequestId,
    keep_alive: Option<Duration>,
    run: impl FnOnce(SagaContext) -> F,
) -> impl Future<Output = Response> + Send {
    let (outbox, inbox) = Outbox::channel();
    let answer = run(cx.with_outbox(outbox));
    let failed = move || {
        let error = crate::serve::route::stopped_before_answering();
        written(&ServerJsonRpcMessage::error(error, Some(id)), None)
    };
    super::notified::respond(answer, inbox, keep_alive, failed)
}

/// `message` written as rmcp writes a stateless request's one message, with its status,
/// and the `serverInfo` stamp of an unstamped input-required or complete result written
/// by the reply writer (see `reply::write`).
pub(super) fn written(message: &ServerJsonRpcMessage, server_info: Option<&[u8]>) -> Written {
    let status = match message {
        ServerJsonRpcMessage::Error(error) => match error.error.code {
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
            | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            | ErrorCode::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
            ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
            _ => StatusCode::OK,
        },
        _ => StatusCode::OK,
    };
    // Sized for a typical answer up front: growing from serde_json's default of 128
    // bytes copied the body three times.
    let mut body = Vec::with_capacity(1024);
    let body = super::reply::write(message, server_info, &mut body)
        .map(|()| body)
        .map_err(|error| error.to_string());
    Written { status, body }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `_meta` keys read here are the ones rmcp's accessors read: each is present
    /// exactly when rmcp's setter wrote it, and the version reads as rmcp reads it.
    #[test]
    fn meta_is_read_as_rmcp_reads_it() {
        use rmcp::model::{LoggingLevel, NumberOrString, ProgressToken, RequestMetaObject};
        let mut meta = RequestMetaObject::default();
        assert!(!names_2026_07_28(&meta));
        meta.set_protocol_version(ProtocolVersion::V_2026_07_28);
        meta.set_progress_token(ProgressToken(NumberOrString::Number(1)));
        meta.set_log_level(LoggingLevel::Debug);
        assert!(names_2026_07_28(&meta));
        assert!((meta.0).0.contains_key(META_PROGRESS_TOKEN));
        assert!((meta.0).0.contains_key(META_LOG_LEVEL));
        for version in [
            serde_json::json!("2025-11-25"),
            serde_json::json!("2026-07-28 "),
            serde_json::json!(20260728),
            serde_json::json!(null),
        ] {
            (meta.0)
                .0
                .insert(META_PROTOCOL_VERSION.to_owned(), version.clone());
            assert_eq!(
                names_2026_07_28(&meta),
                meta.protocol_version() == Some(ProtocolVersion::V_2026_07_28),
                "{version}"
            );
            assert!(!names_2026_07_28(&meta), "{version}");
        }
    }
}
