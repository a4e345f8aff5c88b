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
//!
//! A lock file names its own identity: `saga-worker <process> <device> <inode>`, written
//! when it is made. A file at that path is believed only if it is a regular file (never
//! through a symlink) that says so of itself: a file removed and made again while its
//! process runs (`rm` and `touch`, a restore, an rsync, a cleanup script) says nothing, so
//! the live process's tasks are not taken from it (issue 72, finding 6: all ten of a live
//! server's tasks were, and each one's step ran twice). The stale files removed are only
//! such files, and the empty ones of earlier builds, never through a symlink (finding 7).

use std::fs::{File, OpenOptions};
use std::io::{self, Read as _, Write as _};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
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
        // Made under another name, locked and marked, then put in place: a cleanup in
        // another process never finds it empty and unlocked.
        let making = dir.join(format!("{me}.new"));
        let mut lock = OpenOptions::new()
            .create_new(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&making)?;
        let made = (|| {
            if !try_lock(&lock)? {
                return Err(io::Error::other(
                    "a new lock file is locked by another process",
                ));
            }
            // The file says which file it is: another made at its path is not believed.
            lock.write_all(marker(&me, &lock.metadata()?).as_bytes())?;
            std::fs::rename(&making, dir.join(format!("{me}.lock")))
        })();
        if let Err(error) = made {
            let _ = std::fs::remove_file(&making);
            return Err(error);
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
        if process == self.me || !is_process_id(process) {
            return false;
        }
        // A file that cannot be opened says nothing: gone, or never here; nor does one
        // that is not the file its process made (replaced, or a symlink).
        let Some(file) = open_ours(&self.dir.join(format!("{process}.lock")), process, false)
        else {
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
            if process == self.me || named.contains(process) || !is_process_id(process) {
                continue;
            }
            // Not through a symlink, and only a file this module wrote (or an earlier
            // build's, which were empty).
            if !entry.file_type().is_ok_and(|kind| kind.is_file()) {
                continue;
            }
            if let Some(file) = open_ours(&path, process, true)
                && matches!(try_lock(&file), Ok(true))
                && same_file(&path, &file)
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
        // An orderly end: the claims this process still holds are gone with it. Only its
        // own file: one made at its path since is another's.
        let path = self.dir.join(format!("{}.lock", self.me));
        if same_file(&path, &self._lock) {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Whether `process` is an id this module writes (hex, at most 64 characters).
fn is_process_id(process: &str) -> bool {
    !process.is_empty() && process.len() <= 64 && process.bytes().all(|b| b.is_ascii_hexdigit())
}

/// What the lock file of `process` holds: its name for itself.
fn marker(process: &str, metadata: &std::fs::Metadata) -> String {
    format!(
        "saga-worker {process} {} {}\n",
        metadata.dev(),
        metadata.ino()
    )
}

/// The lock file at `path`, opened, if it is the one `process` made: a regular file,
/// opened without following a symlink (nor waiting on a FIFO), that names itself
/// ([`marker`]). `or_empty`: an empty file too (what earlier builds wrote, for the
/// cleanup only; never taken as a process's file when its liveness is asked).
fn open_ours(path: &Path, process: &str, or_empty: bool) -> Option<File> {
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let metadata = file.metadata().ok()?;
    if !metadata.is_file() {
        return None;
    }
    let expected = marker(process, &metadata);
    let mut held = Vec::with_capacity(expected.len());
    (&mut file)
        .take(expected.len() as u64 + 1)
        .read_to_end(&mut held)
        .ok()?;
    (held == expected.as_bytes() || (or_empty && held.is_empty())).then_some(file)
}

/// Whether `path` is still the file `file` has open (nothing replaced it since).
fn same_file(path: &Path, file: &File) -> bool {
    match (std::fs::symlink_metadata(path), file.metadata()) {
        (Ok(at_path), Ok(open)) => at_path.dev() == open.dev() && at_path.ino() == open.ino(),
        _ => false,
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
        write_marked(&file, &dead);
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
        write_marked(&file, &dead);
        let other = Liveness::register(&path).expect("registered");
        other.remove_stale(&[dead.clone()].into_iter().collect());
        assert!(file.exists(), "still named by a working task");
        other.remove_stale(&Default::default());
        assert!(!file.exists(), "named by none: removed");
        assert!(!other.is_gone(&me.claim()), "a live one's stays locked");
        assert_eq!(Liveness::process_of(&me.claim()), Some(me.me.as_str()));
        let _ = std::fs::remove_dir_all(me.dir.clone());
    }

    /// A lock file as a process that was killed left it.
    fn write_marked(path: &Path, process: &str) {
        std::fs::write(path, b"").expect("written");
        let metadata = std::fs::metadata(path).expect("its metadata");
        std::fs::write(path, marker(process, &metadata)).expect("written");
    }

    /// Finding 6: a live process's file removed and made again (`rm` and `touch`, or a
    /// copy of it, as a restore or an rsync makes) does not make it look gone; its own
    /// orderly end leaves the file it did not make.
    #[test]
    fn a_live_process_file_replaced_says_nothing() {
        let path = store();
        let live = Liveness::register(&path).expect("registered");
        let other = Liveness::register(&path).expect("registered");
        let claim = live.claim();
        let file = live.dir.join(format!("{}.lock", live.me));
        let copy = live.dir.join("copy");
        std::fs::copy(&file, &copy).expect("copied");
        std::fs::remove_file(&file).expect("removed");
        std::fs::write(&file, b"").expect("touched");
        assert!(!other.is_gone(&claim), "an empty file made again");
        std::fs::rename(&copy, &file).expect("restored");
        assert!(!other.is_gone(&claim), "a copy, restored: another file");
        other.remove_stale(&Default::default());
        assert!(file.exists(), "not this module's: not removed");
        drop(live);
        assert!(
            file.exists(),
            "the live process's end removes only its own file"
        );
        let _ = std::fs::remove_dir_all(other.dir.clone());
    }

    /// Finding 7: the cleanup removes only the files this module wrote, never through a
    /// symlink, and never a file whose name is not a process id.
    #[test]
    fn the_cleanup_removes_only_its_own_files_never_through_a_symlink() {
        let path = store();
        let me = Liveness::register(&path).expect("registered");
        let outside = std::env::temp_dir().join(format!("saga-outside-{}", me.me));
        let target = "cd".repeat(16);
        write_marked(&outside, &target);
        let link = me.dir.join(format!("{target}.lock"));
        std::os::unix::fs::symlink(&outside, &link).expect("a symlink");
        let foreign = me.dir.join("notes.lock");
        std::fs::write(&foreign, b"").expect("written");
        let odd = me.dir.join(format!("{}.lock", "ef".repeat(16)));
        std::fs::write(&odd, b"someone else's").expect("written");
        // An earlier build's file: empty, named by a process id.
        let earlier = me.dir.join(format!("{}.lock", "12".repeat(16)));
        std::fs::write(&earlier, b"").expect("written");
        assert!(!me.is_gone(&format!("{target}~1")), "not through a symlink");
        assert!(
            !me.is_gone(&format!("{}~1", "12".repeat(16))),
            "an empty file says nothing"
        );
        me.remove_stale(&Default::default());
        assert!(link.symlink_metadata().is_ok(), "the symlink stays");
        assert!(outside.exists(), "and what it points at");
        assert!(
            foreign.exists() && odd.exists(),
            "files it did not write stay"
        );
        assert!(!earlier.exists(), "an earlier build's file goes");
        let _ = std::fs::remove_file(&outside);
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
