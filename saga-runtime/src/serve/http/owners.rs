//! Who opened each session (MCP 2025-11-25): a session answers only to the principal
//! that opened it, and only a session that exists, and is the caller's, lets a request
//! give back its slot while it waits for its client.
//!
//! rmcp's session manager keys sessions by id alone: anyone who learns an id could answer
//! its elicitations, read its stream or delete it, and a made-up id would otherwise let a
//! request skip the slots (rmcp serves a 2026-07-28 request statelessly whatever the
//! header says). MCP's security guidance binds a session to the user who opened it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

/// More entries than this and the ones whose sessions ended are swept before the next.
const SWEEP_ABOVE: usize = 4096;

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

/// Session id → the principal that opened it.
#[derive(Clone)]
pub(crate) struct Owners {
    owners: Arc<Mutex<HashMap<String, String>>>,
    sessions: Arc<LocalSessionManager>,
}

impl Owners {
    pub(crate) fn new(sessions: Arc<LocalSessionManager>) -> Self {
        Self {
            owners: Arc::default(),
            sessions,
        }
    }

    /// Records that `principal` opened session `id` (seen on `initialize`'s response).
    pub(crate) async fn opened(&self, id: &str, principal: String) {
        let sweep = self
            .owners
            .lock()
            .is_ok_and(|owners| owners.len() > SWEEP_ABOVE);
        if sweep {
            let live = self.sessions.sessions.read().await;
            if let Ok(mut owners) = self.owners.lock() {
                owners.retain(|id, _| live.contains_key(id.as_str()));
            }
        }
        if let Ok(mut owners) = self.owners.lock() {
            owners.insert(id.to_owned(), principal);
        }
    }

    /// What session `id` is to `principal`.
    pub(crate) async fn of(&self, id: &str, principal: &str) -> Ownership {
        let owner = self
            .owners
            .lock()
            .ok()
            .and_then(|owners| owners.get(id).cloned());
        let Some(owner) = owner else {
            return Ownership::Unknown;
        };
        if !self.sessions.sessions.read().await.contains_key(id) {
            self.closed(id);
            return Ownership::Unknown;
        }
        if owner == principal {
            Ownership::Owned
        } else {
            Ownership::Other
        }
    }

    /// Forgets session `id` (deleted).
    pub(crate) fn closed(&self, id: &str) {
        if let Ok(mut owners) = self.owners.lock() {
            owners.remove(id);
        }
    }
}
