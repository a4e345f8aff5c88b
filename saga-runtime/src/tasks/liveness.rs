//! Which processes on this machine are alive, for a store that only they can share (a
//! SQLite file): each process that opens the store holds an exclusive `flock` on a file of
//! its own, `<store>.workers/<process>.lock`, for as long as it runs, and writes its
//! process id into every claim it makes. The kernel drops the lock when the process ends,
//! `kill -9` included, so a claim whose process's file can be locked by another is a claim
//! of a dead process: its task is taken over at once instead of when its lease ends.
//!
//! Safe where a lease alone is not needed: a task is taken early only when its worker's
//! process is certainly gone (the kernel says so), never because it is slow. A claim
//! without a process part (a record of an earlier build, or of a store opened on another
//! system) is never called gone; its task waits for its lease as before.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// Separates a claim's process part from its own: neither holds it (both are hex).
const SEPARATOR: char = '~';

/// This process's lock on the store's directory of live processes.
#[derive(Debug)]
pub(crate) struct Liveness {
    dir: PathBuf,
    me: String,
    /// Held open, and so locked, until the store is dropped or the process ends.
    _lock: File,
}

impl Liveness {
    /// Registers this process beside the store at `store`: creates
    /// `<store>.workers/<id>.lock` and locks it.
    pub(crate) fn register(store: &Path) -> io::Result<Self> {
        let mut dir = store.as_os_str().to_owned();
        dir.push(".workers");
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir)?;
        let me = crate::state::random_id();
        let lock = OpenOptions::new()
            .create_new(true)
            .write(true)
            .open(dir.join(format!("{me}.lock")))?;
        if !try_lock(&lock)? {
            return Err(io::Error::other(
                "a new lock file is locked by another process",
            ));
        }
        Ok(Self {
            dir,
            me,
            _lock: lock,
        })
    }

    /// A new claim of this process.
    pub(crate) fn claim(&self) -> String {
        format!("{}{SEPARATOR}{}", self.me, crate::state::random_id())
    }

    /// Whether `claim` is certainly a claim of a process that has ended: its lock file is
    /// gone, or this process could lock it. Anything else (a claim of this process, one
    /// with no process part, an error) is not.
    pub(crate) fn is_gone(&self, claim: &str) -> bool {
        let Some((process, _)) = claim.split_once(SEPARATOR) else {
            return false;
        };
        // Only the ids this module writes: a tampered record names no other path.
        if process == self.me
            || process.is_empty()
            || process.len() > 64
            || !process.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return false;
        }
        let path = self.dir.join(format!("{process}.lock"));
        match File::open(&path) {
            // Removed by the process that found it gone (or never written here: a claim
            // of a process that never registered beside this store is not alive here).
            Err(error) if error.kind() == io::ErrorKind::NotFound => true,
            Err(_) => false,
            Ok(file) => match try_lock(&file) {
                Ok(true) => {
                    // Ours now, so no process holds it: the one that wrote the claim is
                    // gone. The file goes with it; its lock drops with `file`.
                    let _ = std::fs::remove_file(&path);
                    true
                }
                Ok(false) | Err(_) => false,
            },
        }
    }
}

impl Drop for Liveness {
    fn drop(&mut self) {
        // An orderly end: the claims this process still holds are gone with it.
        let _ = std::fs::remove_file(self.dir.join(format!("{}.lock", self.me)));
    }
}

/// Takes an exclusive `flock` on `file` without waiting: `false` when another open file
/// holds it.
fn try_lock(file: &File) -> io::Result<bool> {
    // SAFETY: `flock` on a file descriptor this `File` owns and keeps open for the call.
    let result = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if result == 0 {
        return Ok(true);
    }
    let error = io::Error::last_os_error();
    if error.kind() == io::ErrorKind::WouldBlock {
        Ok(false)
    } else {
        Err(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> PathBuf {
        std::env::temp_dir().join(format!("saga-liveness-{}.db", crate::state::random_id()))
    }

    #[test]
    fn a_live_process_claim_is_not_gone_and_a_dropped_ones_is() {
        let path = store();
        let first = Liveness::register(&path).expect("registered");
        let second = Liveness::register(&path).expect("registered");
        let claim = first.claim();
        assert!(!second.is_gone(&claim), "its process holds its lock");
        assert!(!first.is_gone(&claim), "a process's own claim");
        drop(first);
        assert!(second.is_gone(&claim), "its lock file went with it");
        let _ = std::fs::remove_dir_all(second.dir.clone());
    }

    #[test]
    fn a_claim_whose_lock_nobody_holds_is_gone_and_its_file_removed() {
        let path = store();
        let me = Liveness::register(&path).expect("registered");
        // What a process killed with SIGKILL leaves: its file, unlocked.
        let dead = "ab".repeat(16);
        let file = me.dir.join(format!("{dead}.lock"));
        std::fs::write(&file, b"").expect("written");
        assert!(me.is_gone(&format!("{dead}~0123")));
        assert!(!file.exists(), "the file of a gone process is removed");
        let _ = std::fs::remove_dir_all(me.dir.clone());
    }

    #[test]
    fn claims_without_a_process_or_naming_a_path_are_never_gone() {
        let path = store();
        let me = Liveness::register(&path).expect("registered");
        for claim in [
            "0123abcd",
            "~x",
            "../../etc/passwd~1",
            "ab/cd~1",
            "AB CD~1",
            "",
        ] {
            assert!(!me.is_gone(claim), "{claim:?}");
        }
        let _ = std::fs::remove_dir_all(me.dir.clone());
    }
}
