//! Nonces for sealing, from a per-thread ChaCha12 stream seeded by the operating system.
//!
//! XChaCha20-Poly1305 needs each (key, nonce) pair to be unique; its 192-bit nonce makes
//! random nonces safe at any volume. A `getrandom` syscall per seal (~370 ns here) was a
//! measurable part of a round's cost, so each thread draws nonces from its own
//! cryptographic stream instead (~12 ns), seeded once from the OS.
//!
//! A forked child must not go on with its parent's stream: both would then draw the same
//! nonces. On Unix a `pthread_atfork` handler counts forks, and a stream seeded before the
//! latest fork is seeded again (checking the process id on every seal instead would cost a
//! `getpid` syscall, a third of what this saves).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng as _};

/// Bytes of an XChaCha20 nonce.
pub const NONCE_LEN: usize = super::aead::NONCE_LEN;

/// Bytes drawn from one seed before the stream is seeded again, so that no thread's
/// stream is long-lived.
const RESEED_AFTER: u64 = 1 << 30;

/// Forks of this process seen so far (in the child, by the `pthread_atfork` handler).
static FORKS: AtomicU64 = AtomicU64::new(0);

struct Stream {
    /// [`FORKS`] when the stream was seeded.
    forks: u64,
    drawn: u64,
    rng: StdRng,
}

thread_local! {
    static STREAM: RefCell<Option<Stream>> = const { RefCell::new(None) };
}

/// A nonce of the chain `chain` at `seq` (see [`Link`](crate::Link)): those twelve bytes,
/// then twelve fresh random ones, so that two tokens of one link (a token and its
/// reseal, or a round replayed without single use) still never share a nonce.
#[inline]
pub fn linked(chain: [u8; 8], seq: u32) -> [u8; NONCE_LEN] {
    let mut nonce = fresh();
    nonce[..8].copy_from_slice(&chain);
    nonce[8..12].copy_from_slice(&seq.to_be_bytes());
    nonce
}

/// The nonce of a new chain's first link: fresh, its sequence number zero, so that the
/// chain has room for every round of its call (from a random number it could run out,
/// and go on as another chain that retiring the call would miss). One draw, as
/// [`fresh`].
#[inline]
pub fn first_link() -> [u8; NONCE_LEN] {
    let mut nonce = fresh();
    nonce[8..12].fill(0);
    nonce
}

/// A fresh nonce.
#[inline]
pub fn fresh() -> [u8; NONCE_LEN] {
    watch_forks();
    let mut nonce = [0u8; NONCE_LEN];
    STREAM.with_borrow_mut(|slot| {
        let forks = FORKS.load(Ordering::Acquire);
        let stream = match slot {
            Some(stream) if stream.forks == forks && stream.drawn < RESEED_AFTER => stream,
            _ => slot.insert(Stream {
                forks,
                drawn: 0,
                rng: StdRng::from_seed(os_seed()),
            }),
        };
        stream.rng.fill_bytes(&mut nonce);
        stream.drawn += NONCE_LEN as u64;
    });
    nonce
}

fn os_seed() -> [u8; 32] {
    let mut seed = [0u8; 32];
    // Without an OS random source nothing can be sealed safely; there is no fallback.
    getrandom::fill(&mut seed).expect("the operating system's random source failed");
    seed
}

#[cfg(unix)]
fn watch_forks() {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    extern "C" fn in_child() {
        // Async-signal-safe: one atomic add.
        FORKS.fetch_add(1, Ordering::AcqRel);
    }
    REGISTERED.call_once(|| {
        // SAFETY: registers a handler that only does an atomic add; it stays valid for
        // the life of the process, as `pthread_atfork` requires.
        let registered = unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
        if registered != 0 {
            // Out of memory for the handler: nonces are still unique within this
            // process; a fork would then have to reseed by itself, which no code here does.
            tracing::warn!(
                target: "saga_runtime::state",
                "pthread_atfork failed ({registered}); nonce streams are not reseeded after fork"
            );
        }
    });
}

#[cfg(not(unix))]
fn watch_forks() {}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn nonces_do_not_repeat_within_or_across_threads() {
        let mut seen: HashSet<[u8; NONCE_LEN]> = (0..10_000).map(|_| fresh()).collect();
        assert_eq!(seen.len(), 10_000);
        let others: Vec<[u8; NONCE_LEN]> =
            std::thread::spawn(|| (0..10_000).map(|_| fresh()).collect())
                .join()
                .expect("the thread draws nonces");
        for nonce in others {
            assert!(seen.insert(nonce), "a nonce repeated across threads");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_forked_child_draws_other_nonces_than_its_parent() {
        use std::io::Read as _;
        use std::os::fd::FromRawFd as _;

        let _ = fresh();
        let mut fds = [0; 2];
        // SAFETY: a pipe, then a fork whose child only draws a nonce, writes it and exits
        // without running destructors or other threads' code.
        let child_nonce = unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            let pid = libc::fork();
            assert!(pid >= 0, "fork failed");
            if pid == 0 {
                let nonce = fresh();
                libc::write(fds[1], nonce.as_ptr().cast(), NONCE_LEN);
                libc::_exit(0);
            }
            libc::close(fds[1]);
            let mut reader = std::fs::File::from_raw_fd(fds[0]);
            let mut nonce = [0u8; NONCE_LEN];
            reader
                .read_exact(&mut nonce)
                .expect("the child sends its nonce");
            libc::waitpid(pid, std::ptr::null_mut(), 0);
            nonce
        };
        let parent_nonce = fresh();
        assert_ne!(
            child_nonce, parent_nonce,
            "the child went on with its parent's nonce stream"
        );
    }
}
