//! The server model's bounds, per pool and global: requests and tokens per minute (a
//! sliding minute each, see [`Window`]) per pool, for the unverified callers together and for
//! the whole server; and the samples running at once (a [`Shares`] bound: per pool, the
//! unverified callers' part, the whole).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::engine::caller::pool::{Place, Pool, Shares, unverified_part};

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
    /// The whole server's samples for this minute are made (or the unverified callers'
    /// part of them).
    #[error("the server's samples for this minute are spent")]
    ServerRequests,
    /// The whole server's tokens for this minute are asked for (or the unverified
    /// callers' part of them).
    #[error("the server's sampling tokens for this minute are spent")]
    ServerTokens,
    /// The prompt is larger than the server takes.
    #[error("the prompt is larger than the server's model takes")]
    PromptSize,
    /// As many samples as the server allows are running (or the unverified callers' part).
    #[error("the server's model is busy")]
    Busy,
    /// The model's tool uses (their inputs, which cannot be cut as text is) are larger
    /// than [`SamplingLimits::max_answer_bytes`].
    #[error("the model's tool uses are larger than the server takes")]
    AnswerSize,
}

/// The bounds on a server's model, each with whom it protects. Set the ones you change
/// and take the rest from [`Default`]:
/// `SamplingLimits::default().requests_per_minute(10)`. Each setter says its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub struct SamplingLimits {
    pub(crate) requests_per_minute: u32,
    pub(crate) tokens_per_minute: u64,
    pub(crate) total_requests_per_minute: u32,
    pub(crate) total_tokens_per_minute: u64,
    pub(crate) max_prompt_bytes: usize,
    pub(crate) max_tokens: u32,
    pub(crate) max_concurrent: usize,
    pub(crate) timeout: Duration,
    pub(crate) max_answer_bytes: usize,
}

impl Default for SamplingLimits {
    fn default() -> Self {
        Self {
            requests_per_minute: 30,
            tokens_per_minute: 50_000,
            total_requests_per_minute: 300,
            total_tokens_per_minute: 500_000,
            max_prompt_bytes: 64 * 1024,
            max_tokens: 4096,
            max_concurrent: 16,
            timeout: Duration::from_secs(30),
            max_answer_bytes: 32 * 1024,
        }
    }
}

impl SamplingLimits {
    /// Samples per minute per pool (a verified principal, or the unverified callers at
    /// one address): one caller cannot spend another's. Default 30.
    pub fn requests_per_minute(mut self, requests_per_minute: u32) -> Self {
        self.requests_per_minute = requests_per_minute;
        self
    }

    /// Tokens per minute per pool. A request is admitted against what it may cost (its
    /// `maxTokens`, and its prompt at one token per four bytes); once the provider says
    /// what it did cost (`usage.total_tokens`), that is what the minute counts. Default
    /// 50,000.
    pub fn tokens_per_minute(mut self, tokens_per_minute: u64) -> Self {
        self.tokens_per_minute = tokens_per_minute;
        self
    }

    /// Samples per minute for the whole server (global): your bill, whoever calls. The
    /// unverified callers together make at most three quarters of them
    /// ([`UNVERIFIED_PART`](crate::engine::caller::pool::UNVERIFIED_PART)), so that
    /// identities made up where the server is not told a caller's address still share
    /// one budget. Default 300.
    pub fn total_requests_per_minute(mut self, total_requests_per_minute: u32) -> Self {
        self.total_requests_per_minute = total_requests_per_minute;
        self
    }

    /// Tokens per minute for the whole server (global), counted as
    /// [`tokens_per_minute`](Self::tokens_per_minute) counts them; the unverified callers
    /// together ask for at most three quarters. Default 500,000.
    pub fn total_tokens_per_minute(mut self, total_tokens_per_minute: u64) -> Self {
        self.total_tokens_per_minute = total_tokens_per_minute;
        self
    }

    /// The largest prompt (system prompt and messages, as JSON) the server sends, in
    /// bytes: protects the server's bill from one huge request. Default 64 KiB.
    pub fn max_prompt_bytes(mut self, max_prompt_bytes: usize) -> Self {
        self.max_prompt_bytes = max_prompt_bytes;
        self
    }

    /// The largest `maxTokens` one request may ask for; larger asks are cut to it.
    /// Default 4,096.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Samples running at once in this server (global); the unverified callers together
    /// hold at most three quarters, and one pool at most a quarter. Default 16.
    pub fn max_concurrent(mut self, max_concurrent: usize) -> Self {
        self.max_concurrent = max_concurrent;
        self
    }

    /// The largest answer text taken from the provider, in bytes: a longer one is cut
    /// (at a character's boundary) and reads as stopped at `maxTokens`, so that a
    /// provider's reply cannot outgrow what a token may keep of it, nor reach the client
    /// unbounded. The model's name is cut at 128 bytes and its control characters dropped.
    /// Default 32 KiB (4,096 tokens of English take about 16).
    pub fn max_answer_bytes(mut self, max_answer_bytes: usize) -> Self {
        self.max_answer_bytes = max_answer_bytes;
        self
    }

    /// How long one sample may take. Default 30 s: shorter than a call's run time
    /// ([`max_run_time`](crate::serve::SagaToolsBuilder::max_run_time), 60 s by default),
    /// which it must be (the server does not build otherwise), so that a hung provider
    /// reaches the tool as [`ModelError::Timeout`](super::ModelError::Timeout), which it may
    /// handle, before the request itself is stopped.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

const WINDOW: Duration = Duration::from_secs(60);

/// The windows: each pool's, the unverified callers' together, the whole server's; and
/// the size at which the pools' ended ones are next forgotten.
struct Windows {
    by_pool: HashMap<Pool, Window>,
    unverified: Window,
    all: Window,
    sweep_at: usize,
}

/// Windows are forgotten once they end and there are at least this many.
const SWEEP_AT: usize = 4096;

/// One window's use: a pool's, or a group's. A sliding minute, approximated as
/// Cloudflare's rate limiter does: the use of the minute that ended weighs in by the part
/// of it the sliding minute still covers, so that no burst at a window's boundary spends
/// twice a minute's bound (a fixed window allowed 2x across one boundary).
#[derive(Debug, Clone, Copy)]
struct Window {
    began: Instant,
    requests: u32,
    tokens: u64,
    /// The minute before `began`'s use.
    before: (u32, u64),
}

impl Window {
    fn new(now: Instant) -> Self {
        Window {
            began: now,
            requests: 0,
            tokens: 0,
            before: (0, 0),
        }
    }

    /// Moves the window on to the minute `now` falls in.
    fn roll(&mut self, now: Instant) {
        let elapsed = now.duration_since(self.began);
        if elapsed < WINDOW {
            return;
        }
        self.before = if elapsed < 2 * WINDOW {
            (self.requests, self.tokens)
        } else {
            (0, 0)
        };
        let minutes = (elapsed.as_secs() / WINDOW.as_secs()) as u32;
        self.began += WINDOW * minutes;
        self.requests = 0;
        self.tokens = 0;
    }

    /// The use of the sliding minute ending at `now`: this window's, and the part of the
    /// one before that the sliding minute still covers.
    fn used(&self, now: Instant) -> (u64, u64) {
        let into = now.duration_since(self.began).as_secs_f64() / WINDOW.as_secs_f64();
        let weight = (1.0 - into).clamp(0.0, 1.0);
        let carried = |before: u64| (before as f64 * weight).ceil() as u64;
        (
            u64::from(self.requests) + carried(u64::from(self.before.0)),
            self.tokens.saturating_add(carried(self.before.1)),
        )
    }

    /// Whether one more request of `tokens` fits `requests` and `max_tokens` in the
    /// sliding minute ending at `now`; `refused` says which is spent.
    fn fits(
        &mut self,
        now: Instant,
        (requests, max_tokens): (u32, u64),
        tokens: u64,
        refused: (Limited, Limited),
    ) -> Result<(), Limited> {
        self.roll(now);
        let (used_requests, used_tokens) = self.used(now);
        if used_requests >= u64::from(requests) {
            return Err(refused.0);
        }
        if used_tokens.saturating_add(tokens) > max_tokens {
            return Err(refused.1);
        }
        Ok(())
    }

    fn take(&mut self, tokens: u64) {
        self.requests = self.requests.saturating_add(1);
        self.tokens = self.tokens.saturating_add(tokens);
    }

    /// Counts `actual` tokens where `estimated` were taken, in the window that took
    /// them (taken at `at`); an estimate of a window that has ended is left as it was.
    fn settle(&mut self, at: Instant, estimated: u64, actual: u64) {
        if at < self.began {
            return;
        }
        self.tokens = self.tokens.saturating_sub(estimated).saturating_add(actual);
    }
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

/// A sample admitted: its place among those running, given back when dropped, and what
/// its tokens were estimated at, settled with what the provider counted.
pub(crate) struct Admitted {
    _place: Place,
    pub(crate) estimated: u64,
    pub(crate) at: Instant,
}

impl Budgets {
    pub(crate) fn new(limits: &SamplingLimits) -> Arc<Self> {
        let total = limits.max_concurrent.max(1);
        Arc::new(Self {
            limits: *limits,
            windows: Mutex::new(Windows {
                by_pool: HashMap::new(),
                unverified: Window::new(Instant::now()),
                all: Window::new(Instant::now()),
                sweep_at: 0,
            }),
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
        self.admit_at(pool, tokens, Instant::now())
    }

    /// [`admit`](Self::admit) as of `now`.
    fn admit_at(&self, pool: &Pool, tokens: u64, now: Instant) -> Result<Admitted, Limited> {
        let place = self.running.try_take(pool).map_err(|_| Limited::Busy)?;
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
                .retain(|_, window| now.duration_since(window.began) < 2 * WINDOW);
            windows.sweep_at = windows.by_pool.len().saturating_mul(2);
        }
        let limits = &self.limits;
        let caller = (Limited::Requests, Limited::Tokens);
        let server = (Limited::ServerRequests, Limited::ServerTokens);
        let whole = (
            limits.total_requests_per_minute,
            limits.total_tokens_per_minute,
        );
        windows.all.fits(now, whole, tokens, server)?;
        let verified = pool.is_verified();
        if !verified {
            let part = (
                u32::try_from(unverified_part(whole.0 as usize)).unwrap_or(u32::MAX),
                u64::try_from(unverified_part(
                    usize::try_from(whole.1).unwrap_or(usize::MAX),
                ))
                .unwrap_or(u64::MAX),
            );
            windows.unverified.fits(now, part, tokens, server)?;
        }
        let own = (limits.requests_per_minute, limits.tokens_per_minute);
        windows
            .by_pool
            .entry(pool.clone())
            .or_insert_with(|| Window::new(now))
            .fits(now, own, tokens, caller)?;
        // Every window has room: the request is taken from each.
        windows.all.take(tokens);
        if !verified {
            windows.unverified.take(tokens);
        }
        if let Some(window) = windows.by_pool.get_mut(pool) {
            window.take(tokens);
        }
        Ok(Admitted {
            _place: place,
            estimated: tokens,
            at: now,
        })
    }

    /// Counts the `actual` tokens the provider said a sample of `pool` cost, where it was
    /// admitted at an estimate (its `maxTokens` and a quarter of its prompt's bytes): the
    /// estimate bounds what a request may spend before it runs; what it did spend is
    /// what the minute's budget counts. Each window is settled only while it is the one
    /// that took the estimate.
    pub(crate) fn settle(&self, pool: &Pool, admitted: &Admitted, actual: u64) {
        let mut windows = self
            .windows
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let (at, estimated) = (admitted.at, admitted.estimated);
        windows.all.settle(at, estimated, actual);
        if !pool.is_verified() {
            windows.unverified.settle(at, estimated, actual);
        }
        if let Some(window) = windows.by_pool.get_mut(pool) {
            window.settle(at, estimated, actual);
        }
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

    /// Made-up identities pooled apart (no address known) still share the unverified
    /// callers' part of the server's minute, and a verified principal keeps the rest.
    #[test]
    fn the_unverified_callers_together_take_a_part_of_the_servers_minute() {
        let limits = SamplingLimits {
            total_requests_per_minute: 8,
            ..SamplingLimits::default()
        };
        let budgets = Budgets::new(&limits);
        let made_up = |n: usize| Pool::of(&format!("made-up-{n}"), false, None);
        for n in 0..6 {
            assert!(budgets.admit(&made_up(n), 1).is_ok(), "identity {n}");
        }
        // Three quarters of 8: the seventh identity finds the part spent.
        assert_eq!(
            budgets.admit(&made_up(6), 1).err(),
            Some(Limited::ServerRequests)
        );
        let verified = Pool::of("alice", true, None);
        assert!(budgets.admit(&verified, 1).is_ok());
        assert!(budgets.admit(&verified, 1).is_ok());
        assert_eq!(
            budgets.admit(&verified, 1).err(),
            Some(Limited::ServerRequests)
        );
    }

    /// A fixed window let a pool spend its minute at 0:59 and again at 1:01; the sliding
    /// minute counts the minute before by the part of it still covered.
    #[test]
    fn a_burst_across_a_window_boundary_does_not_spend_two_minutes() {
        let limits = SamplingLimits {
            requests_per_minute: 10,
            ..SamplingLimits::default()
        };
        let budgets = Budgets::new(&limits);
        let a = pool("10.0.0.1");
        let start = Instant::now();
        let late = start + Duration::from_secs(59);
        for _ in 0..10 {
            drop(budgets.admit_at(&a, 1, late).expect("within the minute"));
        }
        let next = start + Duration::from_secs(61);
        let mut admitted = 0;
        while budgets.admit_at(&a, 1, next).is_ok() {
            admitted += 1;
        }
        assert!(admitted <= 1, "{admitted} more, two seconds after ten");
        // Once the burst's minute has slid out, the pool has its whole minute again.
        let later = late + Duration::from_secs(120);
        let mut admitted = 0;
        while budgets.admit_at(&a, 1, later).is_ok() {
            admitted += 1;
        }
        assert_eq!(admitted, 10);
    }

    /// A request is admitted at its estimate, and the minute counts what the provider
    /// said it cost.
    #[test]
    fn what_the_provider_counted_is_what_the_minute_counts() {
        let limits = SamplingLimits {
            tokens_per_minute: 1000,
            ..SamplingLimits::default()
        };
        let budgets = Budgets::new(&limits);
        let a = pool("10.0.0.1");
        let admitted = budgets.admit(&a, 900).expect("the estimate fits");
        assert_eq!(budgets.admit(&a, 200).err(), Some(Limited::Tokens));
        budgets.settle(&a, &admitted, 13);
        assert!(budgets.admit(&a, 900).is_ok(), "13 were spent, not 900");
        // A provider that spent more than estimated is counted too.
        let b = pool("10.0.0.2");
        let admitted = budgets.admit(&b, 10).expect("fits");
        budgets.settle(&b, &admitted, 995);
        assert_eq!(budgets.admit(&b, 10).err(), Some(Limited::Tokens));
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
