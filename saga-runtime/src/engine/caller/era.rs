//! The generation of MCP a request speaks, which decides how a saga's requests reach the
//! client: in the response, for the client to send back (stateless), or as requests of
//! the server's own during the call (a session).

use rmcp::model::ProtocolVersion;

/// How a request's saga asks the client, by the protocol version the request names.
///
/// ```
/// use saga_runtime::engine::Era;
/// use saga_runtime::rmcp::model::ProtocolVersion;
///
/// assert_eq!(Era::of(&ProtocolVersion::V_2026_07_28), Era::Stateless);
/// assert_eq!(Era::of(&ProtocolVersion::V_2025_06_18), Era::Session);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// MCP 2026-07-28 and later: multi round-trip requests. A round's requests go out in
    /// the response with the sealed state, and the client retries with the answers.
    Stateless,
    /// A version before 2026-07-28, negotiated with `initialize`: the server sends the
    /// round's requests to the client during the call, over the session.
    Session,
}

impl Era {
    /// The first protocol version of the stateless era.
    pub const FIRST_STATELESS: ProtocolVersion = ProtocolVersion::V_2026_07_28;

    /// The era of `version`. Versions are ISO dates, so they compare as strings; a
    /// version newer than any this build knows is stateless.
    pub fn of(version: &ProtocolVersion) -> Era {
        if version.as_str() < Self::FIRST_STATELESS.as_str() {
            Era::Session
        } else {
            Era::Stateless
        }
    }

    /// Whether a request naming `version` (`None`: it names none) belongs to the session
    /// era. A request that names no version is stateless.
    pub(crate) fn is_session(version: Option<&ProtocolVersion>) -> bool {
        version.map(Era::of) == Some(Era::Session)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_before_2026_07_28_is_the_session_era() {
        for version in [
            ProtocolVersion::V_2024_11_05,
            ProtocolVersion::V_2025_03_26,
            ProtocolVersion::V_2025_06_18,
            ProtocolVersion::V_2025_11_25,
        ] {
            assert_eq!(Era::of(&version), Era::Session, "{version:?}");
        }
        assert_eq!(Era::of(&ProtocolVersion::V_2026_07_28), Era::Stateless);
        assert!(!Era::is_session(None));
    }
}
