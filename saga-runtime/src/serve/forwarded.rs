//! The client's address behind reverse proxies the server trusts
//! ([`HttpLimits::trusted_proxy`](super::HttpLimits::trusted_proxy)).
//!
//! Behind a reverse proxy every connection comes from the proxy, so every caller would
//! share one address, and so every per-address bound (the unverified pools, the failed
//! credentials): one caller guessing keys would lock everyone out. A request whose
//! connection comes from a trusted proxy is counted at the address its `X-Forwarded-For`
//! names: read from the right (each proxy appends the address it was connected from),
//! the first that is not itself a trusted proxy. Anything else keeps the connection's
//! address: a connection from elsewhere (its `X-Forwarded-For` is whatever the client
//! wrote), an entry that does not parse (nothing to the left of it is believed), a list of
//! trusted proxies only. Scope: at most [`MAX_HOPS`] entries are read.

use std::net::IpAddr;
use std::sync::Arc;

/// The most `X-Forwarded-For` entries read, from the right.
const MAX_HOPS: usize = 16;

/// The networks of the reverse proxies the server trusts: `(address, prefix length)`.
#[derive(Debug, Clone, Default)]
pub(crate) struct TrustedProxies(Arc<[(IpAddr, u8)]>);

impl TrustedProxies {
    pub(crate) fn new(networks: &[(IpAddr, u8)]) -> Self {
        Self(networks.into())
    }

    fn trusts(&self, address: IpAddr) -> bool {
        self.0
            .iter()
            .any(|&(network, prefix)| within(address, network, prefix))
    }

    /// The client's address for a request whose connection came from `peer`.
    pub(crate) fn client(
        &self,
        parts: &http::request::Parts,
        peer: Option<IpAddr>,
    ) -> Option<IpAddr> {
        let peer = peer?;
        if self.0.is_empty() || !self.trusts(peer) {
            return Some(peer);
        }
        let mut client = peer;
        // Each header's entries, the last header's last entry first.
        let mut hops = parts
            .headers
            .get_all("x-forwarded-for")
            .iter()
            .rev()
            .flat_map(|value| value.to_str().unwrap_or("?").rsplit(','))
            .take(MAX_HOPS);
        for hop in hops.by_ref() {
            match hop_address(hop) {
                Some(address) => {
                    client = address;
                    if !self.trusts(address) {
                        break;
                    }
                }
                None => break,
            }
        }
        Some(client)
    }
}

/// One `X-Forwarded-For` entry's address: `203.0.113.5`, `2001:db8::1`, or with a port
/// (`203.0.113.5:4711`, `[2001:db8::1]:4711`), as some load balancers write it.
fn hop_address(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim();
    hop.parse::<IpAddr>()
        .ok()
        .or_else(|| hop.parse::<std::net::SocketAddr>().ok().map(|at| at.ip()))
}

/// Whether `address` is in `network`/`prefix` (an IPv4-mapped IPv6 address as its IPv4).
fn within(address: IpAddr, network: IpAddr, prefix: u8) -> bool {
    let canonical = |address: IpAddr| match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    };
    match (canonical(address), canonical(network)) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let bits = u32::from(prefix.min(32));
            let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let bits = u32::from(prefix.min(128));
            let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(forwarded: &[&str]) -> http::request::Parts {
        let mut request = http::Request::builder();
        for value in forwarded {
            request = request.header("x-forwarded-for", *value);
        }
        request.body(()).expect("a request").into_parts().0
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("an address")
    }

    #[test]
    fn the_nearest_untrusted_hop_behind_trusted_proxies() {
        let proxies = TrustedProxies::new(&[(ip("10.0.0.0"), 8), (ip("127.0.0.1"), 32)]);
        assert_eq!(hop_address(" 2001:db8::1 "), Some(ip("2001:db8::1")));
        assert_eq!(hop_address("unknown"), None);
        let from =
            |peer: &str, forwarded: &[&str]| proxies.client(&parts(forwarded), Some(ip(peer)));
        // From a trusted proxy: the client it names, past other trusted proxies.
        assert_eq!(from("10.1.2.3", &["203.0.113.5"]), Some(ip("203.0.113.5")));
        assert_eq!(
            from("127.0.0.1", &["198.51.100.1, 203.0.113.5, 10.9.9.9"]),
            Some(ip("203.0.113.5")),
            "what the client wrote on the left is not believed"
        );
        assert_eq!(
            from("127.0.0.1", &["198.51.100.1", "203.0.113.5"]),
            Some(ip("203.0.113.5"))
        );
        // With ports, as some load balancers write them.
        assert_eq!(
            from("127.0.0.1", &["203.0.113.5:4711"]),
            Some(ip("203.0.113.5"))
        );
        assert_eq!(
            from("127.0.0.1", &["[2001:db8::5]:4711"]),
            Some(ip("2001:db8::5"))
        );
        // A hop that does not parse: nothing to its left is believed.
        assert_eq!(
            from("127.0.0.1", &["203.0.113.5, junk, 10.0.0.2"]),
            Some(ip("10.0.0.2"))
        );
        // No header, or trusted proxies only: the connection's address.
        assert_eq!(from("127.0.0.1", &[]), Some(ip("127.0.0.1")));
        assert_eq!(from("127.0.0.1", &["10.0.0.7"]), Some(ip("10.0.0.7")));
        // From anywhere else, the header is the client's own words.
        assert_eq!(from("192.0.2.9", &["203.0.113.5"]), Some(ip("192.0.2.9")));
        // Nothing trusted: ignored.
        let none = TrustedProxies::default();
        assert_eq!(
            none.client(&parts(&["203.0.113.5"]), Some(ip("127.0.0.1"))),
            Some(ip("127.0.0.1"))
        );
        assert_eq!(none.client(&parts(&["203.0.113.5"]), None), None);
    }

    #[test]
    fn networks_match_by_prefix_and_mapped_addresses_as_ipv4() {
        assert!(within(ip("10.200.0.1"), ip("10.0.0.0"), 8));
        assert!(!within(ip("11.0.0.1"), ip("10.0.0.0"), 8));
        assert!(within(ip("::ffff:10.0.0.1"), ip("10.0.0.0"), 8));
        assert!(within(ip("2001:db8::1"), ip("2001:db8::"), 32));
        assert!(!within(ip("2001:db9::1"), ip("2001:db8::"), 32));
        assert!(within(ip("192.0.2.1"), ip("0.0.0.0"), 0));
        assert!(!within(ip("192.0.2.1"), ip("2001:db8::"), 0));
    }
}
