//! Who opened each session (MCP 2025-11-25), and what each session may hold: a session
//! answers only to the principal that opened it, only a session that exists, and is the
//! caller's, lets a request give back its place while it waits for its client, and the
//! sessions, their waiting requests and their streams are counted against
//! [`HttpLimits`].
//!
//! rmcp's session manager keys sessions by id alone: anyone who learns an id could answer
//! its elicitations, read its stream or delete it, and a made-up id would otherwise let a
//! request skip the places (rmcp serves a 2026-07-28 request statelessly whatever the
//! header says). MCP's security guidance binds a session to the user who opened it.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::engine::caller::pool::{Place, Pool, Shares, Spent};

use crate::serve::limits::HttpLimits;
use tokio_util::sync::CancellationToken;

use crate::serve::head::SessionGone;

/// How often sessions rmcp let expire are swept from the book.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

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
struct SessionHold {
    principal: String,
    /// The pool its bounds count against.
    pool: Pool,
    /// Its place among the sessions.
    _place: Place,
    /// Its requests in flight.
    requests: Arc<Semaphore>,
    /// Its open standalone streams.
    streams: Arc<Semaphore>,
    /// The JSON-RPC ids of its requests in flight.
    ids: Arc<Mutex<HashSet<String>>>,
    /// Cancelled when the session ends (deleted, or gone from rmcp's manager): its calls
    /// still running stop, since no one can take their answers.
    gone: CancellationToken,
    /// When it was opened: its duration is a metric.
    opened: std::time::Instant,
}

#[derive(Default)]
struct Book {
    sessions: HashMap<String, SessionHold>,
}

impl Book {
    fn forget(&mut self, id: &str) {
        if let Some(entry) = self.sessions.remove(id) {
            entry.gone.cancel();
            crate::metrics::sessions(self.sessions.len());
            crate::metrics::session_ended(entry.opened.elapsed());
        }
    }
}

/// What a session bound counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Counted {
    /// The requests served at once (not of a session).
    Slots,
    Sessions,
    Requests,
    Streams,
}

/// Why a session or a request of one was refused: which bound it met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BoundMet {
    /// A bound shared by pools (see [`crate::engine::caller::pool`]) is spent.
    Shared(Counted, Spent),
    /// The session has `max_requests_per_session` in flight.
    SessionRequests(usize),
    /// The session holds `max_streams_per_session` open.
    SessionStreams(usize),
    /// A request of the session with this id is in flight: JSON-RPC ids must be unique
    /// among a session's requests in flight, and rmcp would route the original's answer
    /// to the newcomer.
    DuplicateId,
}

impl BoundMet {
    /// Whether the caller itself holds what the bound counts (HTTP 429), rather than
    /// the whole server (503).
    pub(crate) fn is_the_callers(self) -> bool {
        match self {
            Self::Shared(_, spent) => spent.is_the_callers(),
            Self::SessionRequests(_) | Self::SessionStreams(_) | Self::DuplicateId => true,
        }
    }
}

impl std::fmt::Display for BoundMet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = |counted: &Counted| match counted {
            Counted::Slots => "requests being served",
            Counted::Sessions => "sessions open",
            Counted::Requests => "requests of sessions in flight",
            Counted::Streams => "SSE streams open",
        };
        match self {
            Self::Shared(counted, Spent::Pool(max)) => {
                write!(
                    f,
                    "this client has {max} {}, the limit per client",
                    what(counted)
                )?;
                if *counted == Counted::Sessions {
                    f.write_str("; close one (DELETE with its Mcp-Session-Id) or let it idle out")?;
                }
                Ok(())
            }
            Self::Shared(counted, Spent::Unverified(max)) => write!(
                f,
                "callers the server has not verified have {max} {} together, their part of \
                 the server's limit; retry later, or call with credentials the server verifies",
                what(counted)
            ),
            Self::Shared(counted, Spent::Total(max)) => {
                write!(f, "the server has {max} {}, its limit", what(counted))
            }
            Self::SessionRequests(max) => write!(
                f,
                "this session has {max} requests in flight, the limit per session"
            ),
            Self::SessionStreams(max) => write!(
                f,
                "this session holds {max} SSE streams open, the limit per session"
            ),
            Self::DuplicateId => f.write_str(
                "a request of this session with the same id is still in flight; \
                 JSON-RPC ids must be unique among a session's requests in flight",
            ),
        }
    }
}

/// An `initialize` counted against the session caps until its session exists (or it
/// fails, and its place is given back).
pub(crate) struct SessionOpening {
    owners: Owners,
    principal: String,
    pool: Pool,
    place: Place,
}

impl SessionOpening {
    /// The session `id` was opened: it now counts as the principal's.
    pub(crate) fn opened(self, id: &str) {
        let limits = &self.owners.limits;
        let entry = SessionHold {
            principal: self.principal,
            pool: self.pool,
            _place: self.place,
            requests: Arc::new(Semaphore::new(limits.max_requests_per_session)),
            streams: Arc::new(Semaphore::new(limits.max_streams_per_session)),
            ids: Arc::default(),
            gone: CancellationToken::new(),
            opened: std::time::Instant::now(),
        };
        if let Ok(mut book) = self.owners.book.lock() {
            book.sessions.insert(id.to_owned(), entry);
            crate::metrics::sessions(book.sessions.len());
        }
    }
}

/// What a request of a session holds while it is in flight, or a GET stream while it is
/// open: its place under the server's bound and under its session's. Shared by the
/// request's handler (through the request's extensions) and its response body, so that
/// it is given back when both are done: a call whose client went away still counts
/// until it ends.
#[derive(Clone)]
pub(crate) struct HeldPlace(
    Arc<(
        Place,
        OwnedSemaphorePermit,
        Option<InFlightId>,
        CancellationToken,
    )>,
);

impl HeldPlace {
    /// Cancelled when the request's session ends.
    pub(crate) fn session_gone(&self) -> SessionGone {
        SessionGone(self.0.3.clone())
    }
}

/// A request id in flight in its session, forgotten when dropped.
pub(crate) struct InFlightId {
    ids: Arc<Mutex<HashSet<String>>>,
    id: String,
}

impl Drop for InFlightId {
    fn drop(&mut self) {
        if let Ok(mut ids) = self.ids.lock() {
            ids.remove(&self.id);
        }
    }
}

/// Session id → who opened it and what it holds.
#[derive(Clone)]
pub(crate) struct Owners {
    book: Arc<Mutex<Book>>,
    sessions: Arc<LocalSessionManager>,
    limits: Arc<HttpLimits>,
    /// Places among the sessions, the session requests in flight, and the open streams,
    /// each split by pool.
    places: Arc<Shares>,
    requests: Arc<Shares>,
    streams: Arc<Shares>,
    /// Set once the expiry sweeper runs.
    watching: Arc<std::sync::OnceLock<()>>,
}

impl Owners {
    pub(crate) fn new(sessions: Arc<LocalSessionManager>, limits: &HttpLimits) -> Self {
        Self {
            book: Arc::default(),
            sessions,
            places: Shares::new(limits.max_sessions, limits.max_sessions_per_principal),
            requests: Shares::new(
                limits.max_session_requests,
                limits.max_session_requests_per_principal,
            ),
            streams: Shares::new(limits.max_streams, limits.max_streams_per_principal),
            limits: Arc::new(limits.clone()),
            watching: Arc::default(),
        }
    }

    /// Sweeps the sessions rmcp's manager let expire every few seconds, so that their
    /// calls stop and their places free up without waiting for the next `initialize`.
    /// Started by the first session (a router that serves none runs no task), and ended
    /// once the router is dropped.
    fn watch_expiry(&self) {
        if self.watching.set(()).is_err() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (book, sessions) = (Arc::downgrade(&self.book), Arc::downgrade(&self.sessions));
        let (places, requests, streams, limits) = (
            self.places.clone(),
            self.requests.clone(),
            self.streams.clone(),
            self.limits.clone(),
        );
        runtime.spawn(async move {
            let mut every = tokio::time::interval(SWEEP_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                let (Some(book), Some(sessions)) = (book.upgrade(), sessions.upgrade()) else {
                    return;
                };
                let owners = Owners {
                    book,
                    sessions,
                    limits: limits.clone(),
                    places: places.clone(),
                    requests: requests.clone(),
                    streams: streams.clone(),
                    watching: Arc::default(),
                };
                owners.sweep().await;
            }
        });
    }

    /// Counts an `initialize` of `principal` against the caps, or says which it meets.
    pub(crate) async fn open(
        &self,
        principal: String,
        pool: Pool,
    ) -> Result<SessionOpening, BoundMet> {
        self.watch_expiry();
        let place = match self.places.try_take(&pool) {
            Ok(place) => place,
            Err(_) => {
                // Sessions that idled out are gone from rmcp's manager but not yet from
                // the book: sweep them, then count again.
                self.sweep().await;
                self.places
                    .try_take(&pool)
                    .map_err(|spent| BoundMet::Shared(Counted::Sessions, spent))?
            }
        };
        Ok(SessionOpening {
            owners: self.clone(),
            principal,
            pool,
            place,
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

    /// A place for a request of session `id` (`stream`: a GET stream's instead) whose
    /// JSON-RPC id (as JSON text) is `request`, or which bound it meets.
    pub(crate) fn hold(
        &self,
        id: &str,
        stream: bool,
        request: Option<String>,
    ) -> Result<HeldPlace, BoundMet> {
        let limits = &self.limits;
        let (shares, counted, per_session) = if stream {
            (
                &self.streams,
                Counted::Streams,
                BoundMet::SessionStreams(limits.max_streams_per_session),
            )
        } else {
            (
                &self.requests,
                Counted::Requests,
                BoundMet::SessionRequests(limits.max_requests_per_session),
            )
        };
        let (session, pool, ids, gone) = self
            .book
            .lock()
            .ok()
            .and_then(|book| {
                let entry = book.sessions.get(id)?;
                let session = if stream {
                    entry.streams.clone()
                } else {
                    entry.requests.clone()
                };
                Some((
                    session,
                    entry.pool.clone(),
                    entry.ids.clone(),
                    entry.gone.clone(),
                ))
            })
            .ok_or(per_session)?;
        let session = session.try_acquire_owned().map_err(|_| per_session)?;
        let place = shares
            .try_take(&pool)
            .map_err(|spent| BoundMet::Shared(counted, spent))?;
        let in_flight = match request {
            Some(request) => {
                let Ok(mut held) = ids.lock() else {
                    return Err(BoundMet::DuplicateId);
                };
                if !held.insert(request.clone()) {
                    return Err(BoundMet::DuplicateId);
                }
                drop(held);
                Some(InFlightId { ids, id: request })
            }
            None => None,
        };
        Ok(HeldPlace(Arc::new((place, session, in_flight, gone))))
    }

    /// Forgets session `id` (deleted).
    pub(crate) fn closed(&self, id: &str) {
        if let Ok(mut book) = self.book.lock() {
            book.forget(id);
        }
    }
}
