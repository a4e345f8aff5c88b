//! The `Host` rules of rmcp's transport (its DNS-rebinding protection: the config's
//! allowed hosts), read once and checked without allocating for the usual request: for
//! the direct path of MRTR calls, and for the routes of the application's own served
//! beside `/mcp`, which answer the same hosts.

use std::sync::Arc;

use http::header;
use http::request::Parts;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;

/// The config's allowed hosts, parsed as rmcp reads them; empty admits any host, as in
/// rmcp. `None` for a list of blank entries, which admits none in rmcp, and which an
/// empty parsed list here would not keep.
pub(super) fn allowed(config: &StreamableHttpServerConfig) -> Option<Arc<[Authority]>> {
    let allowed: Arc<[Authority]> = config
        .allowed_hosts
        .iter()
        .filter_map(|entry| Authority::allowed(entry))
        .collect();
    (!allowed.is_empty() || config.allowed_hosts.is_empty()).then_some(allowed)
}

/// Whether rmcp's transport under `config` ignores a request's `Origin`: it checks one
/// only against an allowlist, or when told to check with none
/// (`enforce_origin_validation`). That flag is private to rmcp; its `Debug` names it, and
/// a config whose `Debug` does not say it is off counts as checking (the request is then
/// rmcp's to answer). A test keeps the reading true of this rmcp.
pub(super) fn ignores_origin(config: &StreamableHttpServerConfig) -> bool {
    config.allowed_origins.is_empty()
        && format!("{config:?}").contains("validate_empty_origin_allowlist: false")
}

/// A host and port, normalized as rmcp normalizes them (brackets off, lower case).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Authority {
    host: String,
    port: Option<u16>,
}

impl Authority {
    fn new(host: &str, port: Option<u16>) -> Self {
        Self {
            host: host
                .trim_matches('[')
                .trim_matches(']')
                .to_ascii_lowercase(),
            port,
        }
    }

    /// An entry of the allowed hosts: `host`, `host:port`, or anything else taken as a
    /// host name, as rmcp reads it.
    pub(super) fn allowed(entry: &str) -> Option<Self> {
        let entry = entry.trim();
        if entry.is_empty() {
            return None;
        }
        Some(match http::uri::Authority::try_from(entry) {
            Ok(authority) => Self::new(authority.host(), authority.port_u16()),
            Err(_) => Self::new(entry, None),
        })
    }

    fn admits(&self, request: &Authority) -> bool {
        self.host == request.host && self.port.is_none_or(|port| request.port == Some(port))
    }

    /// [`Authority::admits`] for a host read by [`plain_authority`], in any case.
    fn admits_plain(&self, host: &str, port: Option<u16>) -> bool {
        self.host.eq_ignore_ascii_case(host) && self.port.is_none_or(|own| port == Some(own))
    }
}

/// A `Host` value of the plainest shape, a DNS name or IPv4 address with an optional
/// decimal port (`localhost`, `127.0.0.1:8080`), split without allocating. Anything else
/// (IPv6 brackets, user info, an empty or overlong port) is `None`, for
/// `http::uri::Authority` to read as rmcp reads it.
fn plain_authority(value: &[u8]) -> Option<(&str, Option<u16>)> {
    let (host, port) = match value.iter().position(|&byte| byte == b':') {
        Some(colon) => (&value[..colon], Some(&value[colon + 1..])),
        None => (value, None),
    };
    let is_name = |byte: &u8| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'-');
    if host.is_empty() || !host.iter().all(is_name) {
        return None;
    }
    let port = match port {
        None => None,
        Some(digits)
            if (1..=5).contains(&digits.len()) && digits.iter().all(u8::is_ascii_digit) =>
        {
            Some(std::str::from_utf8(digits).ok()?.parse::<u16>().ok()?)
        }
        Some(_) => return None,
    };
    Some((std::str::from_utf8(host).ok()?, port))
}

/// rmcp's DNS-rebinding check: the `Host` header (or, without one, the URI's authority)
/// names a host in `allowed`, or any host when `allowed` is empty. A host that does not
/// parse is refused even then, as rmcp refuses it (400).
pub(super) fn host_admitted(allowed: &[Authority], parts: &Parts) -> bool {
    let host = parts.headers.get(header::HOST);
    // Every request names its host, so the usual one is read without allocating.
    if let Some((name, port)) = host.and_then(|host| plain_authority(host.as_bytes())) {
        return allowed.is_empty() || allowed.iter().any(|entry| entry.admits_plain(name, port));
    }
    let authority = match host {
        Some(host) => {
            let Ok(host) = host.to_str() else {
                return false;
            };
            match http::uri::Authority::try_from(host) {
                Ok(authority) => Authority::new(authority.host(), authority.port_u16()),
                Err(_) => return false,
            }
        }
        None => match parts.uri.authority() {
            Some(authority) => Authority::new(authority.host(), authority.port_u16()),
            None => return false,
        },
    };
    allowed.is_empty() || allowed.iter().any(|entry| entry.admits(&authority))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rmcp ignores `Origin` under its default config only: an allowlist, or the order
    /// to check with none, makes it check.
    #[test]
    fn origin_is_ignored_only_where_rmcp_ignores_it() {
        let config = StreamableHttpServerConfig::default();
        assert!(ignores_origin(&config));
        assert!(ignores_origin(&crate::serve::default_http_config()));
        let listed = config
            .clone()
            .with_allowed_origins(["https://app.example.com:443"]);
        assert!(!ignores_origin(&listed));
        assert!(!ignores_origin(&config.clone().enforce_origin_validation()));
        assert!(ignores_origin(
            &config.enforce_origin_validation().disable_allowed_origins()
        ));
    }

    #[test]
    fn allowed_hosts_are_read_as_rmcp_reads_them() {
        let any_port = Authority::allowed("LocalHost").unwrap();
        assert!(any_port.admits(&Authority::new("localhost", Some(8080))));
        assert!(any_port.admits(&Authority::new("localhost", None)));
        let one_port = Authority::allowed("example.com:8443").unwrap();
        assert!(one_port.admits(&Authority::new("example.com", Some(8443))));
        assert!(!one_port.admits(&Authority::new("example.com", Some(443))));
        assert!(!one_port.admits(&Authority::new("example.com", None)));
        let v6 = Authority::allowed("[::1]").unwrap();
        assert!(v6.admits(&Authority::new("[::1]", Some(3000))));
        assert!(Authority::allowed("  ").is_none());
    }

    #[test]
    fn a_plain_host_is_read_as_http_reads_it() {
        for host in [
            "localhost",
            "LocalHost:8080",
            "127.0.0.1:3000",
            "example.com:080",
            "a-b.example:65535",
        ] {
            let parsed = http::uri::Authority::try_from(host).unwrap();
            let (name, port) = plain_authority(host.as_bytes()).unwrap();
            assert_eq!((name, port), (parsed.host(), parsed.port_u16()), "{host}");
        }
        for host in [
            "",
            ":80",
            "[::1]:80",
            "host:",
            "host:65536",
            "host:123456",
            "user@host",
            "host:80:80",
            "ho st",
            "host/x",
        ] {
            assert_eq!(plain_authority(host.as_bytes()), None, "{host}");
        }
        let allowed = Authority::allowed("localhost:8080").unwrap();
        assert!(allowed.admits_plain("LOCALHOST", Some(8080)));
        assert!(!allowed.admits_plain("localhost", Some(8081)));
        assert!(!allowed.admits_plain("localhost", None));
    }
}
