//! Which processes on this machine are alive, for a store that only they can share (a
//! SQLite file): each process that opens the store holds an exclusive `flock` on a file of
//! its own, `<store>.workers/<process>.lock`, for as long as it runs, and writes its
//! process id into every claim it makes. The kernel drops the lock when the process ends,
//! `kill -9` included, so a claim whose process's file can be locked by another is a claim
//! of a dead process: its task is taken over at once instead of when its lease ends.
//!
//! Safe where a lease alone is not needed: a task is taken early only when its worker's
//! process is certainly gone (the kernel says so), never because it is slow, and never
//! because its file cannot be found: a file missing (removed by hand, or a server that
//! opened the store by another path, another mount of the same volume) says nothing, and
//! its task waits for its lease as before. So does a claim without a process part (a
//! record of an earlier build). Where `flock` cannot be trusted (NFS, some FUSE file
//! systems: a second lock on the same file succeeds), the check is off.

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
        // One directory for every path that names the file (a relative one, a symlink):
        // a process that looked in another would find nothing, which is safe but slow.
        let store = std::fs::canonicalize(store)?;
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
        // A second open of the file must not get the lock: where it does, a lock says
        // nothing of liveness (flock emulated by per-process locks on NFS, or ignored).
        let path = dir.join(format!("{me}.lock"));
        if try_lock(&File::open(&path)?)? {
            let _ = std::fs::remove_file(&path);
            return Err(io::Error::other(
                "this file system does not keep flock locks apart (NFS?)",
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
        // A file that cannot be opened says nothing: gone, or never here.
        let Ok(file) = File::open(self.dir.join(format!("{process}.lock"))) else {
            return false;
        };
        // Ours for a moment, so no process holds it: the one that wrote the claim is gone.
        // The file stays (its lock drops with `file`), so that the next check of the same
        // claim finds it again; `register` removes the files of gone processes that no
        // live one holds.
        matches!(try_lock(&file), Ok(true))
    }
}

impl Liveness {
    /// Removes the lock files of ended processes (locked by none) that no working task's
    /// claim names (`named`: the process parts of those claims): a process killed leaves
    /// its file, which the takeover of its tasks needs and nothing after it.
    pub(crate) fn remove_stale(&self, named: &std::collections::HashSet<String>) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(process) = path
                .file_stem()
                .and_then(|stem| stem.to_str())
                .filter(|_| path.extension().is_some_and(|ext| ext == "lock"))
            else {
                continue;
            };
            if process == self.me || named.contains(process) {
                continue;
            }
            if let Ok(file) = File::open(&path)
                && matches!(try_lock(&file), Ok(true))
            {
                let _ = std::fs::remove_file(&path);
            }
        }
    }

    /// The process part of `claim`, if it has one.
    pub(crate) fn process_of(claim: &str) -> Option<&str> {
        claim.split_once(SEPARATOR).map(|(process, _)| process)
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

    /// A store's path; the file exists, as it does when the store registers.
    fn store() -> PathBuf {
        let path =
            std::env::temp_dir().join(format!("saga-liveness-{}.db", crate::state::random_id()));
        std::fs::write(&path, b"").expect("written");
        path
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
        assert!(
            !second.is_gone(&claim),
            "an orderly end removes its file: not known gone"
        );
        let _ = std::fs::remove_dir_all(second.dir.clone());
    }

    #[test]
    fn a_claim_whose_lock_nobody_holds_is_gone_and_a_missing_file_says_nothing() {
        let path = store();
        let me = Liveness::register(&path).expect("registered");
        // What a process killed with SIGKILL leaves: its file, unlocked.
        let dead = "ab".repeat(16);
        let file = me.dir.join(format!("{dead}.lock"));
        std::fs::write(&file, b"").expect("written");
        assert!(me.is_gone(&format!("{dead}~0123")));
        assert!(
            me.is_gone(&format!("{dead}~4567")),
            "found again: the file stays"
        );
        // A file removed by hand, or never here (a server on another path to the store):
        // its process may be alive.
        std::fs::remove_file(&file).expect("removed");
        assert!(!me.is_gone(&format!("{dead}~0123")));
        // The files nobody holds go, unless a working task's claim names them; the live
        // ones stay.
        std::fs::write(&file, b"").expect("written");
        let other = Liveness::register(&path).expect("registered");
        other.remove_stale(&[dead.clone()].into_iter().collect());
        assert!(file.exists(), "still named by a working task");
        other.remove_stale(&Default::default());
        assert!(!file.exists(), "named by none: removed");
        assert!(!other.is_gone(&me.claim()), "a live one's stays locked");
        assert_eq!(Liveness::process_of(&me.claim()), Some(me.me.as_str()));
        let _ = std::fs::remove_dir_all(me.dir.clone());
    }

    #[test]
    fn two_paths_to_one_store_share_one_directory() {
        let path = store();
        let parent = path.parent().expect("a parent");
        let other_path = parent.join(".").join(path.file_name().expect("a name"));
        let first = Liveness::register(&path).expect("registered");
        let second = Liveness::register(&other_path).expect("registered");
        assert_eq!(first.dir, second.dir);
        let _ = std::fs::remove_dir_all(first.dir.clone());
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
