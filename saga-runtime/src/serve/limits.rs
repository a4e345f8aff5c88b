//! What one request, one connection and the whole server may cost, over HTTP.

use std::time::Duration;

use super::json_check::JsonBudget;

/// The bounds an HTTP server of sagas enforces, each with a default a normal tool never
/// meets. Set with [`SagaServerBuilder::http_limits`](crate::serve::SagaServerBuilder::http_limits).
///
/// | bound | default | beyond it |
/// |---|---|---|
/// | request body | 1 MiB | HTTP 413, `-32600` |
/// | JSON nesting | 64 levels | HTTP 400, `-32600` |
/// | JSON values in one request | 100,000 | HTTP 400, `-32600` |
/// | requests being served at once | 64; one verified principal's, or the unverified callers' of one address: 16; all unverified callers': 48 | waits up to `queue_timeout` (5 s), then HTTP 429 (its own share) or 503 |
/// | time to send a request's headers (also how long an idle keep-alive connection stays) | 10 s | connection closed |
/// | time to send a request's body | 30 s | HTTP 408 |
/// | time a response write waits for the client to read | 30 s | connection closed, its request ended |
/// | open connections | 1,024 | new ones wait in the listen backlog |
/// | sessions (MCP 2025-11-25) | 1,000 | `initialize` gets HTTP 503, `-32603` |
/// | sessions one pool opened | 100 | `initialize` gets HTTP 429, `-32603` |
/// | requests of sessions in flight (they wait for their client without a place) | 128 | HTTP 503, `-32603` |
/// | requests in flight in one pool's sessions | 32 | HTTP 429, `-32603` |
/// | requests in flight in one session | 16 | HTTP 429, `-32603` |
/// | open GET streams | 256 | HTTP 503 |
/// | open GET streams of one pool's sessions | 64 | HTTP 429 |
/// | open GET streams of one session | 4 | HTTP 429 |
/// | time a GET stream stays open without an event | 5 minutes | the stream ends; the client reconnects |
/// | SSE keep-alive comment | every 15 s | |
/// | distinct credentials `authenticate` did not verify, per address | 30 a minute | HTTP 429 for a new one until the minute ends |
///
/// A *pool* is one verified principal, or the callers nobody verified at one address
/// (see [`SagaServerBuilder::authenticate`](crate::serve::SagaServerBuilder::authenticate));
/// the unverified pools together take at most [`UNVERIFIED_PART`](crate::serve::UNVERIFIED_PART)
/// % of each global bound they share (requests at once, sessions, session requests,
/// streams), so that made-up identities never lock verified principals out.
///
/// Session requests and GET streams together stay well under the connection limit, so
/// that streams held open never lock a fresh client out.
/// Bodies are read before a request waits for nothing else, and only while it holds one
/// of the `max_concurrent_requests` places, so the memory the server holds for requests
/// is at most about `max_concurrent_requests × max_body_bytes` times a small factor.
#[derive(Debug, Clone)]
#[must_use]
pub struct HttpLimits {
    pub(crate) max_body_bytes: usize,
    pub(crate) max_json_depth: usize,
    pub(crate) max_json_values: usize,
    pub(crate) max_concurrent_requests: usize,
    pub(crate) max_requests_per_principal: usize,
    pub(crate) queue_timeout: Duration,
    pub(crate) header_read_timeout: Duration,
    pub(crate) body_read_timeout: Duration,
    pub(crate) write_timeout: Duration,
    pub(crate) max_connections: usize,
    pub(crate) max_sessions: usize,
    pub(crate) max_sessions_per_principal: usize,
    pub(crate) max_session_requests: usize,
    pub(crate) max_requests_per_session: usize,
    pub(crate) max_session_requests_per_principal: usize,
    pub(crate) max_streams: usize,
    pub(crate) max_streams_per_principal: usize,
    pub(crate) max_streams_per_session: usize,
    pub(crate) stream_idle_timeout: Duration,
    pub(crate) sse_keep_alive: Duration,
    pub(crate) max_failed_credentials_per_minute: u32,
    pub(crate) trusted_proxies: Vec<(std::net::IpAddr, u8)>,
}

/// The default largest request body: 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_json_depth: 64,
            max_json_values: 100_000,
            max_concurrent_requests: 64,
            max_requests_per_principal: 16,
            queue_timeout: Duration::from_secs(5),
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(30),
            max_connections: 1024,
            max_sessions: 1_000,
            max_sessions_per_principal: 100,
            max_session_requests: 128,
            max_requests_per_session: 16,
            max_session_requests_per_principal: 32,
            max_streams: 256,
            max_streams_per_principal: 64,
            max_streams_per_session: 4,
            stream_idle_timeout: Duration::from_secs(300),
            sse_keep_alive: Duration::from_secs(15),
            max_failed_credentials_per_minute: 30,
            trusted_proxies: Vec::new(),
        }
    }
}

impl HttpLimits {
    /// The largest request body, in bytes (default 1 MiB); over stdio, the longest line.
    /// Tokens are sealed up to three quarters of it at most, so that every token the
    /// server issues fits a request that carries it back (see
    /// [`SagaServerBuilder::max_token_len`](super::SagaServerBuilder::max_token_len)).
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// How deep JSON may nest in a request.
    pub fn max_json_depth(mut self, levels: usize) -> Self {
        self.max_json_depth = levels;
        self
    }

    /// How many JSON values (scalars, arrays, objects and keys) one request may hold.
    pub fn max_json_values(mut self, values: usize) -> Self {
        self.max_json_values = values;
        self
    }

    /// How many distinct credentials that
    /// [`authenticate`](crate::serve::SagaServerBuilder::authenticate) does not verify one
    /// address (an IPv4 address, an IPv6 /64) may send in a minute; past it, the
    /// address's requests that carry another credential get HTTP 429 until the minute
    /// ends (a valid key never verified before too: the check is not run, so that it
    /// tells a guesser nothing). A credential verified before passes from any address,
    /// and a credential already refused may be sent again: neither guesses anything.
    /// Where the server does not know the caller's address (a router served without
    /// `ConnectInfo`) nothing is counted. Default 30. Applies with an `authenticate` check,
    /// and to the bearer tokens of `.authorization(..)` (feature `oauth`).
    pub fn max_failed_credentials_per_minute(mut self, tries: u32) -> Self {
        self.max_failed_credentials_per_minute = tries.max(1);
        self
    }

    /// Trusts the reverse proxies in `network`/`prefix_len` (`10.0.0.0`, 8; one proxy:
    /// its address, 32 or 128) to say the client's address: a request whose connection
    /// comes from one is counted at the address its `X-Forwarded-For` names (the nearest
    /// not itself trusted), for every bound per address (the unverified callers' pools,
    /// the failed credentials). Behind a proxy and without this, every caller shares the
    /// proxy's address. A connection from anywhere else is counted at its own address,
    /// whatever `X-Forwarded-For` it sends. Trust only the proxies themselves, as
    /// narrowly as they can be named, and only proxies that append to the header: any
    /// host of a trusted network that reaches the server directly can name any address.
    /// An entry may carry a port (`203.0.113.5:4711`, `[2001:db8::1]:4711`). Call once per
    /// network. Default: none trusted.
    pub fn trusted_proxy(mut self, network: std::net::IpAddr, prefix_len: u8) -> Self {
        self.trusted_proxies.push((network, prefix_len));
        self
    }

    /// How many requests are served at once; more wait for a place.
    pub fn max_concurrent_requests(mut self, requests: usize) -> Self {
        self.max_concurrent_requests = requests.max(1);
        self
    }

    /// How many of the [`max_concurrent_requests`](Self::max_concurrent_requests) one
    /// verified principal, or the unverified callers at one address, may take at once
    /// (16 of 64 by default): a caller past its share waits for one of its own places
    /// (up to the queue timeout), then gets HTTP 429.
    pub fn max_requests_per_principal(mut self, requests: usize) -> Self {
        self.max_requests_per_principal = requests.max(1);
        self
    }

    /// How long a request waits for a place before it is shed with HTTP 503.
    pub fn queue_timeout(mut self, timeout: Duration) -> Self {
        self.queue_timeout = timeout;
        self
    }

    /// How long a client has to send a request's headers; also how long an idle
    /// keep-alive connection is kept.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// How long a client has to send a request's body.
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// How long a connection's write may wait for its client to take the bytes (30 s by
    /// default): a client that stops reading a response, or an SSE stream, has its
    /// connection closed after this, and the request it held ends, so that clients that
    /// never read cannot hold the request places. Applies to `serve_http` and
    /// `serve_listener`; a server of your own that mounts `router()` needs its own.
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.write_timeout = timeout.max(Duration::from_millis(100));
        self
    }

    /// How many connections are open at once; more wait in the listen backlog.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections.max(1);
        self
    }

    /// How many sessions (MCP 2025-11-25) are open at once. A session costs about
    /// 60 KiB while it lives; an idle one closes after
    /// [`SagaServerBuilder::session_idle_timeout`](crate::serve::SagaServerBuilder::session_idle_timeout).
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions.max(1);
        self
    }

    /// How many sessions one pool (a verified principal, or the unverified callers at one
    /// address) may have open at once.
    pub fn max_sessions_per_principal(mut self, sessions: usize) -> Self {
        self.max_sessions_per_principal = sessions.max(1);
        self
    }

    /// How many requests of sessions may be in flight at once, across all sessions. Such
    /// a request gives back its place while it waits for its client (a person answering
    /// an elicitation), so this bound, not `max_concurrent_requests`, is what caps the
    /// memory they hold: at most about this many request bodies.
    pub fn max_session_requests(mut self, requests: usize) -> Self {
        self.max_session_requests = requests.max(1);
        self
    }

    /// How many requests one session may have in flight at once.
    pub fn max_requests_per_session(mut self, requests: usize) -> Self {
        self.max_requests_per_session = requests.max(1);
        self
    }

    /// How many requests one pool's sessions (a verified principal's, or those of the
    /// unverified callers at one address) may have in flight at once, so that
    /// one client cannot take every place of [`max_session_requests`](Self::max_session_requests).
    pub fn max_session_requests_per_principal(mut self, requests: usize) -> Self {
        self.max_session_requests_per_principal = requests.max(1);
        self
    }

    /// How many standalone SSE streams one pool's sessions may hold open.
    pub fn max_streams_per_principal(mut self, streams: usize) -> Self {
        self.max_streams_per_principal = streams.max(1);
        self
    }

    /// How many standalone SSE streams (`GET /mcp`) are open at once.
    pub fn max_streams(mut self, streams: usize) -> Self {
        self.max_streams = streams.max(1);
        self
    }

    /// How many standalone SSE streams one session may hold open.
    pub fn max_streams_per_session(mut self, streams: usize) -> Self {
        self.max_streams_per_session = streams.max(1);
        self
    }

    /// How long a standalone SSE stream stays open without sending an event (keep-alive
    /// comments do not count); the client then opens another if it still wants one.
    pub fn stream_idle_timeout(mut self, timeout: Duration) -> Self {
        self.stream_idle_timeout = timeout;
        self
    }

    /// How often an SSE stream that sends nothing else sends a keep-alive comment, so
    /// that proxies and clients can tell a quiet stream from a dead one.
    pub fn sse_keep_alive(mut self, interval: Duration) -> Self {
        self.sse_keep_alive = interval.max(Duration::from_millis(100));
        self
    }

    pub(crate) fn json_budget(&self) -> JsonBudget {
        JsonBudget {
            max_depth: self.max_json_depth,
            max_values: self.max_json_values,
        }
    }
}
