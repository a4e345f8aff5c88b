//! The wire formats a saga is served in, gathered in one place.
//!
//! MCP 2026-07-28 MRTR is the native format. The proposals it grew from are translations
//! of it, each in its own file:
//!
//! | format | selected by | file |
//! |---|---|---|
//! | MRTR (`inputRequests` / `requestState`) | default | — |
//! | `dependent_requests` (seed 001) | `Mcp-Result-Format: dependent-requests` | [`dependent`] |
//! | `resumeToken` (seed 003) | `Mcp-Result-Format: resume-token` | [`resume_token`] |
//! | `tools/callSaga` (seed 000) | its own methods | [`call_saga`] |
//! | resumable requests (seed 002, SEP-975) | `resumableRequests` in a session's capabilities | [`resumable`] |
//!
//! A header-selected format only rewrites the JSON-RPC message on its way in (into an MRTR
//! `tools/call`) and the response on its way out. In between, the request takes the one
//! path every request takes: the HTTP guard's limits, then rmcp's transport validation
//! (path, method, headers, protocol version, origin, JSON-RPC envelope), then the
//! handler. A new format cannot skip a check, because it never sees the request before
//! they run. (An MRTR `tools/call` that passes rmcp's checks as it is may skip rmcp's
//! per-request service, never its checks: `serve::http` has the direct path's rules.)

pub(crate) mod call_saga;
pub(crate) mod dependent;
mod format;
pub(crate) mod resumable;
pub(crate) mod resume_token;

use std::collections::BTreeMap;

use rmcp::ErrorData;
use rmcp::model::ClientCapabilities;
use serde_json::Value;

use crate::engine::StepFailure;
use format::ResultFormat;

/// The header that selects a format other than MRTR.
pub(crate) const FORMAT_HEADER: &str = "mcp-result-format";

/// The registration: each header-selected format's variant in [`WireFormat`], and the
/// dispatch to its [`ResultFormat`] impl.
macro_rules! formats {
    ($($(#[$doc:meta])* $name:ident => $format:ty,)*) => {
        /// A format a `tools/call` can be answered in.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub(crate) enum WireFormat {
            /// MCP 2026-07-28 multi round-trip requests.
            #[default]
            Mrtr,
            $($(#[$doc])* $name,)*
        }

        impl WireFormat {
            /// Every format a header can select, with its header value.
            const SELECTED: &[(WireFormat, &'static str)] =
                &[$((WireFormat::$name, <$format as ResultFormat>::HEADER_VALUE),)*];

            /// The method bound into this format's tokens, so that a token issued in one
            /// format is refused in another.
            pub(crate) fn bound_method(self) -> &'static str {
                match self {
                    WireFormat::Mrtr => "tools/call",
                    $(WireFormat::$name => <$format as ResultFormat>::BOUND_METHOD,)*
                }
            }

            fn decode_as(self, message: &mut Value, call: &mut WireCall) -> Result<(), ErrorData> {
                match self {
                    WireFormat::Mrtr => Ok(()),
                    $(WireFormat::$name => <$format as ResultFormat>::decode(message, &mut call.failures),)*
                }
            }

            /// Rewrites the MRTR response to a `tools/call` into this format.
            pub(crate) fn encode(self, response: Value) -> Value {
                match self {
                    WireFormat::Mrtr => response,
                    $(WireFormat::$name => <$format as ResultFormat>::encode(response),)*
                }
            }
        }
    };
}

formats! {
    /// `dependent-requests`: seed 001.
    DependentRequests => dependent::DependentRequests,
    /// `resume-token`: seed 003.
    ResumeToken => resume_token::ResumeToken,
}

/// A header value that names no format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnknownFormat(pub String);

impl std::fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown Mcp-Result-Format {:?}: expected ", self.0)?;
        let names = WireFormat::SELECTED;
        for (index, (_, name)) in names.iter().enumerate() {
            let separator = match index {
                0 => "",
                _ if index + 1 == names.len() => " or ",
                _ => ", ",
            };
            write!(f, "{separator}{name:?}")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownFormat {}

impl WireFormat {
    /// The format a request selects with [`FORMAT_HEADER`]; MRTR without it.
    pub(crate) fn from_headers(headers: &http::HeaderMap) -> Result<Self, UnknownFormat> {
        let mut values = headers.get_all(FORMAT_HEADER).iter();
        let Some(value) = values.next() else {
            return Ok(WireFormat::Mrtr);
        };
        let text = value.to_str().unwrap_or_default();
        if values.next().is_some() {
            return Err(UnknownFormat(format!(
                "{} (given more than once)",
                crate::log::sanitized(text)
            )));
        }
        let wanted = text.trim();
        WireFormat::SELECTED
            .iter()
            .find(|(_, name)| name.eq_ignore_ascii_case(wanted))
            .map(|(format, _)| *format)
            .ok_or_else(|| UnknownFormat(crate::log::sanitized(text)))
    }

    /// Rewrites an incoming `tools/call` message into MRTR form. What MRTR cannot say (a
    /// client's report that a step failed) and any decoding error travel beside the
    /// message, in the returned [`WireCall`], so that rmcp still validates the request
    /// before anything else is answered.
    pub(crate) fn decode(self, message: &mut Value) -> WireCall {
        let mut call = WireCall {
            format: self,
            ..WireCall::default()
        };
        if let Err(error) = self.decode_as(message, &mut call) {
            call.error = Some(error);
        }
        call
    }
}

/// What a format's decoding leaves beside the rewritten message, for the handler. It
/// travels in the HTTP request's extensions, which rmcp hands to the handler.
#[derive(Debug, Clone, Default)]
pub(crate) struct WireCall {
    pub(crate) format: WireFormat,
    pub(crate) failures: BTreeMap<String, StepFailure>,
    pub(crate) error: Option<ErrorData>,
}

/// The capabilities assumed for a client of the proposals MCP 2026-07-28 grew from when
/// it declares none: those proposals predate declaring them, and their clients perform
/// the steps they are sent.
pub(crate) fn undeclared_capabilities() -> ClientCapabilities {
    ClientCapabilities::builder()
        .enable_elicitation()
        .enable_sampling()
        .enable_roots()
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selected(values: &[&str]) -> Result<WireFormat, UnknownFormat> {
        let mut headers = http::HeaderMap::new();
        for value in values {
            headers.append(
                FORMAT_HEADER,
                http::HeaderValue::from_str(value).expect("a value"),
            );
        }
        WireFormat::from_headers(&headers)
    }

    #[test]
    fn each_registered_format_is_selected_by_its_header_value_in_any_case() {
        assert_eq!(selected(&[]), Ok(WireFormat::Mrtr));
        for &(format, name) in WireFormat::SELECTED {
            assert_eq!(selected(&[name]), Ok(format));
            assert_eq!(
                selected(&[&format!(" {} ", name.to_uppercase())]),
                Ok(format)
            );
            assert_ne!(format.bound_method(), WireFormat::Mrtr.bound_method());
        }
    }

    #[test]
    fn an_unknown_or_repeated_value_names_every_format() {
        let unknown = selected(&["mrtr-v2"]).expect_err("unknown");
        assert_eq!(
            unknown.to_string(),
            r#"unknown Mcp-Result-Format "mrtr-v2": expected "dependent-requests" or "resume-token""#
        );
        assert!(selected(&["resume-token", "resume-token"]).is_err());
    }
}
