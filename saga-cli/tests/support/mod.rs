//! What the CLI's tests against real example servers share: an example's process on a
//! free port, the `saga` binary run to its end, and reading what it printed.
//!
//! Each test crate uses some of it.
#![allow(dead_code)]

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const KEY: &str = "8f3c1b2a4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8";

/// A running example server, killed when dropped.
pub struct Server {
    pub child: Child,
    pub url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn example(name: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let path = target.join("debug/examples").join(name);
    assert!(
        path.exists(),
        "{} is missing: build it first with `cargo build -p saga-workspace --example {name}`",
        path.display()
    );
    path
}

/// Starts example `name` on a free port with `envs`; waits for its "listening on" line.
pub fn serve(name: &str, envs: &[(&str, &str)]) -> Server {
    serve_at(name, "127.0.0.1:0", envs)
}

/// [`serve`] at `address` (a restart on the same port).
pub fn serve_at(name: &str, address: &str, envs: &[(&str, &str)]) -> Server {
    let mut child = Command::new(example(name))
        .args(["--http", address])
        .env("SAGA_KEYS", KEY)
        // Tasks in this process's memory: the examples' default, a SQLite file in the
        // working directory, would outlive the test and be shared by the next run.
        .env("SAGA_TASKS", "memory")
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the example starts");
    let stdout = child.stdout.take().expect("its stdout");
    let (found, listening) = mpsc::channel();
    std::thread::spawn(move || {
        // Read to the end, so that the server never blocks on a full pipe.
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("listening on ") {
                let _ = found.send(url.to_owned());
            }
        }
    });
    let url = listening
        .recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("{name} did not say where it listens"));
    Server { child, url }
}

/// `saga ARGS`, run to its end (at most a minute): exit code, stdout, stderr.
pub fn saga(args: &[&str]) -> (Option<i32>, String, String) {
    saga_with(args, &[])
}

/// [`saga`] with the environment variables `envs` set too.
pub fn saga_with(args: &[&str], envs: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_saga"))
        .args(args)
        // An example the CLI starts (`--stdio`) keeps its tasks in memory, as `serve`'s.
        .env("SAGA_TASKS", "memory")
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("saga runs");
    let out = reader(child.stdout.take().expect("stdout"));
    let err = reader(child.stderr.take().expect("stderr"));
    let status = wait(&mut child, Duration::from_secs(60));
    (
        status,
        out.join().expect("stdout read"),
        err.join().expect("stderr read"),
    )
}

pub fn reader(mut pipe: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}

/// Waits for `child`, killing it past `limit`; its exit code.
pub fn wait(child: &mut Child, limit: Duration) -> Option<i32> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("a status") {
            return status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("saga did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn answers(dir: &Path, name: &str, json: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, json).expect("the answers file is written");
    path.display().to_string()
}

pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("saga-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// Where `needle` is in `text`, failing with the text when it is not there.
pub fn at(text: &str, needle: &str) -> usize {
    text.find(needle)
        .unwrap_or_else(|| panic!("{needle:?} is not in:\n{text}"))
}
