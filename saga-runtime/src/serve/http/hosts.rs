//! The `Host` and `Origin` rules of rmcp's transport (its DNS-rebinding protection: the
//! config's allowed hosts and origins), read once and checked without allocating for the
//! usual request: for the direct path of MRTR calls, and (hosts) for the routes of the
//! application's own served beside `/mcp`, which answer the same hosts.

use std::sync::Arc;

use http::request::Parts;
use http::{HeaderMap, header};
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

/// rmcp's `Origin` check under a config, its allowlist parsed once.
pub(super) enum Origins {
    /// No allowlist, and no order to check without one (rmcp's default): any `Origin`
    /// passes.
    Ignored,
    /// An `Origin` passes when it is one of these; none does when the list is empty.
    Allowed(Arc<[AllowedOrigin]>),
}

impl Origins {
    /// The check rmcp's transport makes under `config`. Whether rmcp checks without an
    /// allowlist (`enforce_origin_validation`) is private to rmcp: a config without an
    /// allowlist is read as unchecked only when it is, `Debug` for `Debug`, the same
    /// config with rmcp's order to stop checking (`disable_allowed_origins`) given, so
    /// that no other field's text can pass for the flag; any doubt leaves a request with
    /// an `Origin` to rmcp. A test keeps the reading true of this rmcp.
    pub(super) fn of(config: &StreamableHttpServerConfig) -> Self {
        if config.allowed_origins.is_empty()
            && format!("{config:?}") == format!("{:?}", config.clone().disable_allowed_origins())
        {
            return Self::Ignored;
        }
        Self::Allowed(
            config
                .allowed_origins
                .iter()
                .filter_map(|entry| AllowedOrigin::parse(entry))
                .collect(),
        )
    }

    /// Whether rmcp's check lets the request's `Origin` (its first, as rmcp reads it)
    /// pass: none at all, or one the allowlist names.
    pub(super) fn admit(&self, headers: &HeaderMap) -> bool {
        let Self::Allowed(allowed) = self else {
            return true;
        };
        let Some(origin) = headers.get(header::ORIGIN) else {
            return true;
        };
        let Some(origin) = origin.to_str().ok().and_then(Origin::parse) else {
            return false;
        };
        allowed.iter().any(|entry| entry.admits(&origin))
    }
}

/// An `Origin` value read as rmcp reads it: `null`, or a scheme, host and port.
#[derive(Debug, PartialEq, Eq)]
enum Origin {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: Option<u16>,
    },
}

impl Origin {
    fn parse(value: &str) -> Option<Self> {
        let value = value.trim();
        if value.is_empty() {
            return None;
        }
        if value.eq_ignore_ascii_case("null") {
            return Some(Self::Null);
        }
        let uri = http::Uri::try_from(value).ok()?;
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let authority = uri.authority()?;
        let Authority { host, port } = Authority::new(authority.host(), authority.port_u16());
        Some(Self::Tuple { scheme, host, port })
    }
}

/// An entry of the config's allowed origins, parsed as rmcp parses it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum AllowedOrigin {
    Null,
    Tuple {
        scheme: String,
        host: String,
        /// `None`: any port, for `:*` and, in rmcp 3.11, for an entry without one (rmcp
        /// warns that a later release will match only the scheme's default there).
        port: Option<u16>,
    },
}

impl AllowedOrigin {
    fn parse(entry: &str) -> Option<Self> {
        let entry = entry.trim();
        let (entry, any_port) = match entry.strip_suffix(":*") {
            Some(base) => (base, true),
            None => (entry, false),
        };
        match Origin::parse(entry)? {
            // `:*` after `null` or after a port is no entry.
            Origin::Null => (!any_port).then_some(Self::Null),
            Origin::Tuple { port: Some(_), .. } if any_port => None,
            Origin::Tuple { scheme, host, port } => Some(Self::Tuple { scheme, host, port }),
        }
    }

    fn admits(&self, origin: &Origin) -> bool {
        match (self, origin) {
            (Self::Null, Origin::Null) => true,
            (
                Self::Tuple { scheme, host, port },
                Origin::Tuple {
                    scheme: its_scheme,
                    host: its_host,
                    port: its_port,
                },
            ) => {
                scheme == its_scheme
                    && host == its_host
                    // RFC 6454 leaves a scheme's default port out of an origin.
                    && port.is_none_or(|allowed| {
                        its_port.or_else(|| default_port(its_scheme)) == Some(allowed)
                    })
            }
            _ => false,
        }
    }
}

/// The port a scheme implies when an origin leaves it out (RFC 6454 §4).
fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
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
        let ignored =
            |config: &StreamableHttpServerConfig| matches!(Origins::of(config), Origins::Ignored);
        let config = StreamableHttpServerConfig::default();
        assert!(ignored(&config));
        assert!(ignored(&crate::serve::default_http_config()));
        let listed = config
            .clone()
            .with_allowed_origins(["https://app.example.com:443"]);
        assert!(!ignored(&listed));
        assert!(!ignored(&config.clone().enforce_origin_validation()));
        assert!(ignored(
            &config
                .clone()
                .enforce_origin_validation()
                .disable_allowed_origins()
        ));
        // Another field's text cannot pass for the flag.
        let mut spoofed = config.enforce_origin_validation();
        spoofed.allowed_hosts = vec!["validate_empty_origin_allowlist: false".into()];
        assert!(!ignored(&spoofed));
    }

    /// An allowlist admits what rmcp's admits: each entry's scheme and host, its port
    /// (`:*` any, none any in this rmcp, or exactly, a scheme's default port implied).
    #[test]
    fn an_allowlist_admits_what_rmcps_admits() {
        let config = StreamableHttpServerConfig::default().with_allowed_origins([
            "https://app.example.com:443",
            "http://localhost:*",
            "http://portless.example",
            "null",
            "not an origin",
        ]);
        let origins = Origins::of(&config);
        let admits = |origin: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::ORIGIN, origin.parse().unwrap());
            origins.admit(&headers)
        };
        for origin in [
            "https://app.example.com",
            "https://APP.example.com:443",
            " https://app.example.com ",
            "http://localhost:3000",
            "http://localhost",
            "http://portless.example:8080",
            "null",
            "NULL",
        ] {
            assert!(admits(origin), "{origin}");
        }
        for origin in [
            "https://app.example.com:8443",
            "http://app.example.com",
            "https://localhost:3000",
            "http://evil.example",
            "",
            "app.example.com",
            "not an origin",
        ] {
            assert!(!admits(origin), "{origin}");
        }
        assert!(origins.admit(&HeaderMap::new()), "no Origin at all");
        // `:*` after `null` or after a port is no entry, as in rmcp.
        let broken = Origins::of(
            &StreamableHttpServerConfig::default()
                .with_allowed_origins(["null:*", "http://ported.example:8080:*"]),
        );
        for origin in [
            "null",
            "http://ported.example:8080",
            "http://ported.example",
        ] {
            let mut headers = HeaderMap::new();
            headers.insert(header::ORIGIN, origin.parse().unwrap());
            assert!(!broken.admit(&headers), "{origin}");
        }
        // Checked with no allowlist: any Origin is refused, none passes.
        let strict =
            Origins::of(&StreamableHttpServerConfig::default().enforce_origin_validation());
        let mut headers = HeaderMap::new();
        assert!(strict.admit(&headers));
        headers.insert(header::ORIGIN, "http://localhost".parse().unwrap());
        assert!(!strict.admit(&headers));
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
