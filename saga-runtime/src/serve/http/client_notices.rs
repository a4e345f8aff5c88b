//! The notifications a stateless (MCP 2026-07-28) client may post, accepted by the direct
//! path (`super::direct`) as rmcp's transport accepts them: `202 Accepted`, no body, and
//! nothing done. A stateless request has no session for a notification to act on (a
//! call is cancelled by closing its connection), so rmcp ignores them all.
//!
//! Each is read as rmcp reads it (`ClientJsonRpcMessage`, from the bytes), so a body rmcp
//! would not read as a notification is left to rmcp, which answers it otherwise. A
//! notification method served here is one [`ClientNotice`]; adding one is a variant and
//! its method's name. Any other method (a custom notification) is rmcp's to accept.

use axum::body::Body;
use axum::response::Response;
use http::StatusCode;
use rmcp::model::{ClientJsonRpcMessage, JsonRpcVersion2_0};

use super::message::{ServedMethod, one_pass};
use crate::serve::json_check::JsonBudget;

/// A notification of a client, accepted here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClientNotice {
    Cancelled,
    Progress,
    Initialized,
    RootsListChanged,
}

impl ServedMethod for ClientNotice {
    const ALL: &'static [Self] = &[
        ClientNotice::Cancelled,
        ClientNotice::Progress,
        ClientNotice::Initialized,
        ClientNotice::RootsListChanged,
    ];

    fn method(self) -> &'static str {
        match self {
            ClientNotice::Cancelled => "notifications/cancelled",
            ClientNotice::Progress => "notifications/progress",
            ClientNotice::Initialized => "notifications/initialized",
            ClientNotice::RootsListChanged => "notifications/roots/list_changed",
        }
    }
}

/// A JSON-RPC notification: exactly these members, each once (no `id`: a message with
/// one is a request), `params` whatever they are (rmcp reads them below). Read in one
/// pass with the guard's JSON checks, it is the body's budget check too.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NoticeMessage<'a> {
    #[allow(dead_code)] // read to be checked
    jsonrpc: JsonRpcVersion2_0,
    #[serde(borrow)]
    method: std::borrow::Cow<'a, str>,
    #[allow(dead_code)] // read to be checked
    params: Option<serde::de::IgnoredAny>,
}

/// A stateless notification the direct path accepts: read, and found to pass every check.
pub(crate) struct AcceptedNotice {
    notice: ClientNotice,
}

impl AcceptedNotice {
    /// The notification `body` is, read within `budget`, when it is the `notice` its
    /// `Mcp-Method` header names and rmcp reads it as a notification (the transport's
    /// checks have passed: `super::direct::Direct::read_within`).
    pub(super) fn read(notice: ClientNotice, body: &[u8], budget: JsonBudget) -> Option<Self> {
        let message: NoticeMessage<'_> = one_pass(body, budget)?;
        if message.method != notice.method() {
            return None;
        }
        // As rmcp's transport reads the body: a notification of a known method whose
        // params do not fit is still one (a custom one), and accepted alike.
        match serde_json::from_slice::<ClientJsonRpcMessage>(body) {
            Ok(ClientJsonRpcMessage::Notification(_)) => Some(Self { notice }),
            _ => None,
        }
    }

    /// Its JSON-RPC method.
    pub(crate) fn method(&self) -> &'static str {
        self.notice.method()
    }

    /// The response, as rmcp's transport gives it: `202 Accepted`, empty.
    pub(super) fn respond(self) -> Response {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::ACCEPTED;
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_notice_is_named_by_its_method_and_only_it() {
        for &notice in ClientNotice::ALL {
            assert_eq!(ClientNotice::of_method(notice.method()), Some(notice));
        }
        for other in ["notifications/message", "ping", "notifications/custom"] {
            assert_eq!(ClientNotice::of_method(other), None, "{other}");
        }
    }
}
