//! The requests of a stateless (MCP 2026-07-28) client that this server does not serve,
//! answered by the direct path (`super::direct`) as rmcp's service answers them: `-32601`
//! (method not found), HTTP 404; or, for a completion on a server that declares the
//! capability, an empty one.
//!
//! - `ping`, `resources/subscribe` and `resources/unsubscribe`: removed in 2026-07-28;
//!   rmcp refuses them before the handler runs.
//! - `logging/setLevel`: removed too (a request asks for log messages in its `_meta`);
//!   `SagaServer`'s handler refuses it, in its MCP server span.
//! - `completion/complete`: saga completes nothing. It declares the capability when it
//!   has prompts, and rmcp's default handler then answers an empty completion (as the
//!   conformance suite asks); otherwise it refuses the method.
//! - `subscriptions/listen`: saga accepts no subscription filter; rmcp refuses it.
//!
//! Each is read with rmcp's own params type, so that a request whose params rmcp would
//! refuse is left to rmcp, which refuses it otherwise. An unserved method is one
//! [`Unserved`]; adding one is a variant, its method's name, its params and its refusal.

use axum::response::Response;
use http::request::Parts;
use rmcp::ErrorData;
#[allow(deprecated)] // logging is deprecated in 2026-07-28 (SEP-2577), still named
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CompleteRequestMethod, CompleteRequestParams, CompleteResult, PingRequestMethod, RequestId,
    RequestMetaObject, ServerResult, SubscribeRequestMethod, SubscribeRequestParams,
    SubscriptionsListenRequestMethod, SubscriptionsListenRequestParams, UnsubscribeRequestMethod,
    UnsubscribeRequestParams,
};

use super::message::{
    CallId, RequestMessage, ServedMethod, answered, names_2026_07_28, one_pass, written,
};
use crate::otel::MethodTrace;
use crate::serve::json_check::JsonBudget;

/// A method a stateless client may send that this server answers as not found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unserved {
    Ping,
    Complete,
    SetLevel,
    Subscribe,
    Unsubscribe,
    Listen,
}

impl ServedMethod for Unserved {
    const ALL: &'static [Self] = &[
        Unserved::Ping,
        Unserved::Complete,
        Unserved::SetLevel,
        Unserved::Subscribe,
        Unserved::Unsubscribe,
        Unserved::Listen,
    ];

    fn method(self) -> &'static str {
        match self {
            Unserved::Ping => "ping",
            Unserved::Complete => "completion/complete",
            Unserved::SetLevel => "logging/setLevel",
            Unserved::Subscribe => "resources/subscribe",
            Unserved::Unsubscribe => "resources/unsubscribe",
            Unserved::Listen => "subscriptions/listen",
        }
    }
}

impl Unserved {
    /// Whether rmcp's transport requires `Mcp-Name` to name it: the resource's URI
    /// (SEP-2243).
    pub(super) fn named(self) -> bool {
        matches!(self, Unserved::Subscribe | Unserved::Unsubscribe)
    }

    /// The answer, as rmcp gives it: a server that declares completions (`completes`)
    /// completes nothing; every other request is refused.
    fn answer(self, completes: bool) -> Result<ServerResult, ErrorData> {
        match self {
            Unserved::Complete if completes => {
                Ok(ServerResult::CompleteResult(CompleteResult::default()))
            }
            _ => Err(self.refusal()),
        }
    }

    /// The refusal, as rmcp words it.
    fn refusal(self) -> ErrorData {
        match self {
            Unserved::Ping => ErrorData::method_not_found::<PingRequestMethod>(),
            Unserved::Complete => ErrorData::method_not_found::<CompleteRequestMethod>(),
            Unserved::Subscribe => ErrorData::method_not_found::<SubscribeRequestMethod>(),
            Unserved::Unsubscribe => ErrorData::method_not_found::<UnsubscribeRequestMethod>(),
            Unserved::Listen => ErrorData::method_not_found::<SubscriptionsListenRequestMethod>(),
            // `SagaServer::set_level`'s own words.
            Unserved::SetLevel => ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                "logging/setLevel",
                None,
            ),
        }
    }

    /// Whether `SagaServer`'s handler runs, and so makes its span, before it refuses.
    fn reaches_the_handler(self) -> bool {
        self == Unserved::SetLevel
    }
}

/// `ping`'s params: `_meta` alone, whatever else is there (rmcp reads no other member).
#[derive(serde::Deserialize)]
struct PingParams {
    #[serde(rename = "_meta")]
    meta: Option<RequestMetaObject>,
}

/// A stateless request of a method this server does not serve: read, and found to pass
/// every check rmcp makes before it refuses the method.
pub(crate) struct UnservedRequest {
    method: Unserved,
    id: RequestId,
    /// The server declares the completions capability.
    completes: bool,
    /// The handler's span, for a method whose handler runs.
    trace: Option<MethodTrace>,
}

impl UnservedRequest {
    /// The request `body` is, read in one pass within `budget`, when it is the `method`
    /// its `Mcp-Method` header names, its params are the method's as rmcp reads them,
    /// `name` (the decoded `Mcp-Name`, which only a subscription's method reads) is its
    /// resource's URI, and its `_meta` has every key 2026-07-28 requires; the transport's
    /// checks have passed (`super::direct::Direct::read_within`). `completes`: the
    /// server declares the completions capability (in its discovery answer).
    pub(super) fn read(
        parts: &Parts,
        method: Unserved,
        name: Option<&str>,
        body: &[u8],
        budget: JsonBudget,
        completes: bool,
    ) -> Option<Self> {
        // Each method's params, read with rmcp's type for them: the `_meta` and, for a
        // subscription's method, the URI `Mcp-Name` must name. Read from the JSON value
        // the one pass built: that pass does not read an enum (a log level), and these
        // requests are too rare for their cost to matter.
        fn read<P: serde::de::DeserializeOwned>(
            body: &[u8],
            budget: JsonBudget,
            parts: impl FnOnce(P) -> (Option<RequestMetaObject>, Option<String>),
        ) -> Option<(CallId, String, Option<RequestMetaObject>, Option<String>)> {
            let message: RequestMessage<serde_json::Map<String, serde_json::Value>> =
                one_pass(body, budget)?;
            let params = serde_json::from_value(serde_json::Value::Object(message.params)).ok()?;
            let (meta, uri) = parts(params);
            Some((message.id, message.method, meta, uri))
        }
        #[allow(deprecated)] // logging is deprecated in 2026-07-28 (SEP-2577)
        let (CallId(id), named, meta, uri) = match method {
            Unserved::Ping => read(body, budget, |p: PingParams| (p.meta, None))?,
            Unserved::Complete => read(body, budget, |p: CompleteRequestParams| (p.meta, None))?,
            Unserved::SetLevel => read(body, budget, |p: SetLevelRequestParams| (p.meta, None))?,
            Unserved::Subscribe => read(body, budget, |p: SubscribeRequestParams| {
                (p.meta, Some(p.uri))
            })?,
            Unserved::Unsubscribe => read(body, budget, |p: UnsubscribeRequestParams| {
                (p.meta, Some(p.uri))
            })?,
            Unserved::Listen => read(body, budget, |p: SubscriptionsListenRequestParams| {
                (p.meta, None)
            })?,
        };
        if named != method.method() || (method.named() && uri.as_deref() != name) {
            return None;
        }
        let meta = meta?;
        if !names_2026_07_28(&meta) {
            return None;
        }
        // The other key 2026-07-28 requires: without it rmcp refuses the request.
        crate::serve::wire::resumable::capabilities_of(&meta)?;
        let trace = method
            .reaches_the_handler()
            .then(|| MethodTrace::stateless(method.method(), None, &parts.headers, &meta, &id));
        Some(Self {
            method,
            id,
            completes,
            trace,
        })
    }

    /// Its JSON-RPC method.
    pub(crate) fn method(&self) -> &'static str {
        self.method.method()
    }

    /// The answer, as rmcp writes it: in the handler's span for a method whose handler
    /// runs.
    pub(super) async fn respond(self) -> Response {
        let UnservedRequest {
            method,
            id,
            completes,
            trace,
        } = self;
        let answer = std::future::ready(method.answer(completes));
        let answer = match trace {
            Some(trace) => trace.run(answer).await,
            None => answer.await,
        };
        written(&answered(answer, id), None).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_unserved_method_is_named_by_its_method_and_only_it() {
        for &method in Unserved::ALL {
            assert_eq!(Unserved::of_method(method.method()), Some(method));
        }
        for other in [
            "tools/call",
            "resources/read",
            "notifications/cancelled",
            "ping ",
        ] {
            assert_eq!(Unserved::of_method(other), None, "{other}");
        }
    }

    /// Each refusal is rmcp's: method not found, naming the method.
    #[test]
    fn each_refusal_names_its_method() {
        for &method in Unserved::ALL {
            let refusal = method.refusal();
            assert_eq!(refusal.code, rmcp::model::ErrorCode::METHOD_NOT_FOUND);
            assert_eq!(refusal.message, method.method());
        }
    }
}
