//! Who opened each session (MCP 2025-11-25), and what each session may hold: a session
//! answers only to the principal that opened it, only a session that exists, and is the
//! caller's, lets a request give back its slot while it waits for its client, and the
//! sessions, their waiting requests and their streams are counted against
//! [`HttpLimits`](super::HttpLimits).
//!
//! rmcp's session manager keys sessions by id alone: anyone who learns an id could answer
//! its elicitations, read its stream or delete it, and a made-up id would otherwise let a
//! request skip the slots (rmcp serves a 2026-07-28 request statelessly whatever the
//! header says). MCP's security guidance binds a session to the user who opened it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::HttpLimits;

/// What a request's session id is to its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ownership {
    /// A live session the caller opened.
    Owned,
    /// A live session someone else opened.
    Other,
    /// No live session of that id.
    Unknown,
}

/// What a session holds, beside rmcp's own state.
struct Entry {
    principal: String,
    /// Its requests in flight.
    requests: Arc<Semaphore>,
    /// Its open standalone streams.
    streams: Arc<Semaphore>,
}

/// What one principal's sessions hold together.
struct Principal {
    /// Its live sessions and `initialize`s under way.
    sessions: usize,
    /// Its sessions' requests in flight.
    requests: Arc<Semaphore>,
    /// Its sessions' open standalone streams.
    streams: Arc<Semaphore>,
}

#[derive(Default)]
struct Book {
    sessions: HashMap<String, Entry>,
    per_principal: HashMap<String, Principal>,
    /// `initialize`s under way: counted against the caps before their session exists.
    opening: usize,
}

impl Book {
    fn forget(&mut self, id: &str) {
        if let Some(entry) = self.sessions.remove(id) {
            self.release(&entry.principal);
            crate::metrics::sessions(self.sessions.len());
        }
    }

    fn release(&mut self, principal: &str) {
        if let Some(held) = self.per_principal.get_mut(principal) {
            held.sessions = held.sessions.saturating_sub(1);
            if held.sessions == 0 {
                self.per_principal.remove(principal);
            }
        }
    }
}

/// Why a session or a request of one was refused: which bound it met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The server holds `max_sessions`.
    Sessions(usize),
    /// The principal holds `max_sessions_per_principal`.
    PrincipalSessions(usize),
    /// `max_session_requests` are in flight.
    Requests(usize),
    /// The session has `max_requests_per_session` in flight.
    SessionRequests(usize),
    /// The principal's sessions have `max_session_requests_per_principal` in flight.
    PrincipalRequests(usize),
    /// The principal's sessions hold `max_streams_per_principal` open.
    PrincipalStreams(usize),
    /// `max_streams` are open.
    Streams(usize),
    /// The session holds `max_streams_per_session` open.
    SessionStreams(usize),
}

impl Refusal {
    /// Whether the caller itself holds what the bound counts (HTTP 429), rather than
    /// the whole server (503).
    pub(crate) fn is_the_callers(self) -> bool {
        matches!(
            self,
            Self::PrincipalSessions(_)
                | Self::SessionRequests(_)
                | Self::SessionStreams(_)
                | Self::PrincipalRequests(_)
                | Self::PrincipalStreams(_)
        )
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Sessions(max) => write!(f, "the server has {max} sessions open, its limit"),
            Self::PrincipalSessions(max) => write!(
                f,
                "this client has {max} sessions open, the limit per client; close one \
                 (DELETE with its Mcp-Session-Id) or let it idle out"
            ),
            Self::Requests(max) => write!(
                f,
                "{max} requests of sessions are in flight, the server's limit"
            ),
            Self::SessionRequests(max) => write!(
                f,
                "this session has {max} requests in flight, the limit per session"
            ),
            Self::PrincipalRequests(max) => write!(
                f,
                "this client's sessions have {max} requests in flight, the limit per client"
            ),
            Self::PrincipalStreams(max) => write!(
                f,
                "this client's sessions hold {max} SSE streams open, the limit per client"
            ),
            Self::Streams(max) => write!(f, "{max} SSE streams are open, the server's limit"),
            Self::SessionStreams(max) => write!(
                f,
                "this session holds {max} SSE streams open, the limit per session"
            ),
        }
    }
}

/// An `initialize` counted against the session caps until its session exists (or it
/// fails, and the count is given back).
pub(crate) struct Opening {
    owners: Owners,
    principal: Option<String>,
}

impl Opening {
    /// The session `id` was opened: it now counts as the principal's.
    pub(crate) fn opened(mut self, id: &str) {
        let Some(principal) = self.principal.take() else {
            return;
        };
        let limits = &self.owners.limits;
        let entry = Entry {
            principal,
            requests: Arc::new(Semaphore::new(limits.max_requests_per_session)),
            streams: Arc::new(Semaphore::new(limits.max_streams_per_session)),
        };
        if let Ok(mut book) = self.owners.book.lock() {
            book.opening = book.opening.saturating_sub(1);
            // The principal's count was taken when the initialize began.
            if let Some(old) = book.sessions.insert(id.to_owned(), entry) {
                book.release(&old.principal);
            }
            crate::metrics::sessions(book.sessions.len());
        }
    }
}

impl Drop for Opening {
    fn drop(&mut self) {
        if let Some(principal) = self.principal.take()
            && let Ok(mut book) = self.owners.book.lock()
        {
            book.opening = book.opening.saturating_sub(1);
            book.release(&principal);
        }
    }
}

/// What a request of a session holds while it is in flight, or a GET stream while it is
/// open: its place under the server's bound and under its session's. Shared by the
/// request's handler (through the request's extensions) and its response body, so that
/// it is given back when both are done: a call whose client went away still counts
/// until it ends.
#[derive(Clone)]
pub(crate) struct Held(#[allow(dead_code)] Arc<[OwnedSemaphorePermit; 3]>);

/// Session id → who opened it and what it holds.
#[derive(Clone)]
pub(crate) struct Owners {
    book: Arc<Mutex<Book>>,
    sessions: Arc<LocalSessionManager>,
    limits: Arc<HttpLimits>,
    requests: Arc<Semaphore>,
    streams: Arc<Semaphore>,
}

impl Owners {
    pub(crate) fn new(sessions: Arc<LocalSessionManager>, limits: &HttpLimits) -> Self {
        Self {
            book: Arc::default(),
            sessions,
            requests: Arc::new(Semaphore::new(limits.max_session_requests)),
            streams: Arc::new(Semaphore::new(limits.max_streams)),
            limits: Arc::new(limits.clone()),
        }
    }

    /// Counts an `initialize` of `principal` against the caps, or says which it meets.
    pub(crate) async fn open(&self, principal: String) -> Result<Opening, Refusal> {
        let limits = &self.limits;
        let over = |book: &Book| {
            if book.sessions.len() + book.opening >= limits.max_sessions {
                Some(Refusal::Sessions(limits.max_sessions))
            } else if book
                .per_principal
                .get(&principal)
                .map_or(0, |held| held.sessions)
                >= limits.max_sessions_per_principal
            {
                Some(Refusal::PrincipalSessions(
                    limits.max_sessions_per_principal,
                ))
            } else {
                None
            }
        };
        let full = self.book.lock().map(|book| over(&book).is_some());
        if full.unwrap_or(true) {
            // Sessions that idled out are gone from rmcp's manager but not yet from the
            // book: sweep them, then count again.
            self.sweep().await;
        }
        let Ok(mut book) = self.book.lock() else {
            return Err(Refusal::Sessions(limits.max_sessions));
        };
        if let Some(refusal) = over(&book) {
            return Err(refusal);
        }
        book.opening += 1;
        book.per_principal
            .entry(principal.clone())
            .or_insert_with(|| Principal {
                sessions: 0,
                requests: Arc::new(Semaphore::new(limits.max_session_requests_per_principal)),
                streams: Arc::new(Semaphore::new(limits.max_streams_per_principal)),
            })
            .sessions += 1;
        Ok(Opening {
            owners: self.clone(),
            principal: Some(principal),
        })
    }

    async fn sweep(&self) {
        let live = self.sessions.sessions.read().await;
        if let Ok(mut book) = self.book.lock() {
            let ended: Vec<String> = book
                .sessions
                .keys()
                .filter(|id| !live.contains_key(id.as_str()))
                .cloned()
                .collect();
            for id in ended {
                book.forget(&id);
            }
        }
    }

    /// What session `id` is to `principal`.
    pub(crate) async fn of(&self, id: &str, principal: &str) -> Ownership {
        let owner = self.book.lock().ok().and_then(|book| {
            book.sessions
                .get(id)
                .map(|entry| entry.principal == principal)
        });
        let Some(is_callers) = owner else {
            return Ownership::Unknown;
        };
        if !self.sessions.sessions.read().await.contains_key(id) {
            self.closed(id);
            return Ownership::Unknown;
        }
        if is_callers {
            Ownership::Owned
        } else {
            Ownership::Other
        }
    }

    /// A place for a request of session `id` (`stream`: a GET stream's instead), or which
    /// bound it meets.
    pub(crate) fn hold(&self, id: &str, stream: bool) -> Result<Held, Refusal> {
        let limits = &self.limits;
        let (server, [per_session, per_principal, server_wide]) = if stream {
            (
                &self.streams,
                [
                    Refusal::SessionStreams(limits.max_streams_per_session),
                    Refusal::PrincipalStreams(limits.max_streams_per_principal),
                    Refusal::Streams(limits.max_streams),
                ],
            )
        } else {
            (
                &self.requests,
                [
                    Refusal::SessionRequests(limits.max_requests_per_session),
                    Refusal::PrincipalRequests(limits.max_session_requests_per_principal),
                    Refusal::Requests(limits.max_session_requests),
                ],
            )
        };
        let (session, principal) = self
            .book
            .lock()
            .ok()
            .and_then(|book| {
                let entry = book.sessions.get(id)?;
                let held = book.per_principal.get(&entry.principal)?;
                Some(if stream {
                    (entry.streams.clone(), held.streams.clone())
                } else {
                    (entry.requests.clone(), held.requests.clone())
                })
            })
            .ok_or(per_session)?;
        let session = session.try_acquire_owned().map_err(|_| per_session)?;
        let principal = principal.try_acquire_owned().map_err(|_| per_principal)?;
        let server = server
            .clone()
            .try_acquire_owned()
            .map_err(|_| server_wide)?;
        Ok(Held(Arc::new([server, principal, session])))
    }

    /// Forgets session `id` (deleted).
    pub(crate) fn closed(&self, id: &str) {
        if let Ok(mut book) = self.book.lock() {
            book.forget(id);
        }
    }
}
