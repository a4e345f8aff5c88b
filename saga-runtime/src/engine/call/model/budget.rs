//! The server model's bounds, per pool and global: requests and tokens per minute per
//! pool (a fixed one-minute window each), and the samples running at once (a
//! [`Shares`] bound: per pool, the unverified callers' part, the whole).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::engine::call::pool::{Pool, Share, Shares};

/// Which bound of [`SamplingLimits`] refused a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Limited {
    /// The caller's pool made its requests for this minute.
    #[error("this caller's server-side samples for this minute are spent")]
    Requests,
    /// The caller's pool asked for its tokens for this minute.
    #[error("this caller's server-side sampling tokens for this minute are spent")]
    Tokens,
    /// The prompt is larger than the server takes.
    #[error("the prompt is larger than the server's model takes")]
    PromptSize,
    /// As many samples as the server allows are running (or the unverified callers' part).
    #[error("the server's model is busy")]
    Busy,
}

/// The bounds on a server's model, each with whom it protects. Set the ones you change
/// and take the rest from [`Default`]:
/// `SamplingLimits { requests_per_minute: 10, ..SamplingLimits::default() }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SamplingLimits {
    /// Samples per minute per pool (a verified principal, or the unverified callers at
    /// one address): one caller cannot spend another's. Default 30.
    pub requests_per_minute: u32,
    /// Tokens per minute per pool, counted when each request is admitted as what it may
    /// cost: its `maxTokens`, and its prompt at one token per four bytes (before the
    /// provider says what it did). Default 50,000.
    pub tokens_per_minute: u64,
    /// The largest prompt (system prompt and messages, as JSON) the server sends, in
    /// bytes: protects the server's bill from one huge request. Default 64 KiB.
    pub max_prompt_bytes: usize,
    /// The largest `maxTokens` one request may ask for; larger asks are cut to it.
    /// Default 4,096.
    pub max_tokens: u32,
    /// Samples running at once in this server (global); the unverified callers together
    /// hold at most three quarters, and one pool at most a quarter. Default 16.
    pub max_concurrent: usize,
    /// How long one sample may take. Default 60 s.
    pub timeout: Duration,
}

impl Default for SamplingLimits {
    fn default() -> Self {
        Self {
            requests_per_minute: 30,
            tokens_per_minute: 50_000,
            max_prompt_bytes: 64 * 1024,
            max_tokens: 4096,
            max_concurrent: 16,
            timeout: Duration::from_secs(60),
        }
    }
}

const WINDOW: Duration = Duration::from_secs(60);

/// The pools' windows, and the size at which the ended ones are next forgotten.
#[derive(Default)]
struct Windows {
    by_pool: HashMap<Pool, Window>,
    sweep_at: usize,
}

/// Windows are forgotten once they end and there are at least this many.
const SWEEP_AT: usize = 4096;

/// One pool's use in its current window.
#[derive(Debug, Clone, Copy)]
struct Window {
    began: Instant,
    requests: u32,
    tokens: u64,
}

/// The bounds' state, shared by every request of a server.
pub(crate) struct Budgets {
    limits: SamplingLimits,
    windows: Mutex<Windows>,
    running: Arc<Shares>,
}

impl std::fmt::Debug for Budgets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budgets").finish_non_exhaustive()
    }
}

/// A sample admitted: its place among those running, given back when dropped.
pub(crate) struct Admitted {
    _place: Share,
}

impl Budgets {
    pub(crate) fn new(limits: &SamplingLimits) -> Arc<Self> {
        let total = limits.max_concurrent.max(1);
        Arc::new(Self {
            limits: *limits,
            windows: Mutex::default(),
            running: Shares::new(total, total.div_ceil(4)),
        })
    }

    /// The most samples one pool has answered at once.
    pub(crate) fn per_pool(&self) -> usize {
        self.running.per_pool()
    }

    /// Takes one request and `tokens` from `pool`'s window, and a place among the samples
    /// running; or says which bound is spent (and takes nothing).
    pub(crate) fn admit(&self, pool: &Pool, tokens: u64) -> Result<Admitted, Limited> {
        let place = self.running.try_take(pool).map_err(|_| Limited::Busy)?;
        let now = Instant::now();
        let mut windows = self
            .windows
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // Windows that ended are forgotten once there are many: the map holds the pools
        // of the last minute, not every pool ever seen. The next sweep waits until the
        // map has doubled, so that many live pools do not cost a scan per sample.
        if windows.by_pool.len() >= windows.sweep_at.max(SWEEP_AT) {
            windows
                .by_pool
                .retain(|_, window| now.duration_since(window.began) < WINDOW);
            windows.sweep_at = windows.by_pool.len().saturating_mul(2);
        }
        let window = windows.by_pool.entry(pool.clone()).or_insert(Window {
            began: now,
            requests: 0,
            tokens: 0,
        });
        if now.duration_since(window.began) >= WINDOW {
            *window = Window {
                began: now,
                requests: 0,
                tokens: 0,
            };
        }
        if window.requests >= self.limits.requests_per_minute {
            return Err(Limited::Requests);
        }
        if window.tokens.saturating_add(tokens) > self.limits.tokens_per_minute {
            return Err(Limited::Tokens);
        }
        window.requests += 1;
        window.tokens = window.tokens.saturating_add(tokens);
        Ok(Admitted { _place: place })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(ip: &str) -> Pool {
        Pool::of("anyone", false, Some(ip.parse().expect("an address")))
    }

    #[test]
    fn one_pool_spends_its_own_budget_not_anothers() {
        let limits = SamplingLimits {
            requests_per_minute: 2,
            tokens_per_minute: 1000,
            ..SamplingLimits::default()
        };
        let budgets = Budgets::new(&limits);
        let (a, b) = (pool("10.0.0.1"), pool("10.0.0.2"));
        assert!(budgets.admit(&a, 10).is_ok());
        assert!(budgets.admit(&a, 10).is_ok());
        assert_eq!(budgets.admit(&a, 10).err(), Some(Limited::Requests));
        assert!(budgets.admit(&b, 10).is_ok(), "another pool's budget");
        assert_eq!(budgets.admit(&b, 991).err(), Some(Limited::Tokens));
        assert!(budgets.admit(&b, 990).is_ok());
    }

    #[test]
    fn the_samples_running_at_once_are_bounded() {
        let limits = SamplingLimits {
            max_concurrent: 4,
            ..SamplingLimits::default()
        };
        let budgets = Budgets::new(&limits);
        let a = pool("10.0.0.1");
        let held = budgets.admit(&a, 1).expect("one");
        // One pool holds a quarter of the places: one.
        assert_eq!(budgets.admit(&a, 1).err(), Some(Limited::Busy));
        drop(held);
        assert!(budgets.admit(&a, 1).is_ok(), "given back when dropped");
    }
}
