//! An example server run as its own process, for tests that attack or kill a real server:
//! spawned on a free loopback port, its address read from its stdout, killed and reaped
//! when dropped.

use std::io::{BufRead as _, BufReader, Read as _};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// An example's binary, which `cargo test` builds next to the test binaries.
///
/// # Panics
///
/// When the binary is missing: it is a test helper, and the message says how to build it.
pub fn example_binary(name: &str) -> PathBuf {
    let mut dir = std::env::current_exe().expect("the test binary's path");
    dir.pop(); // the test binary
    if dir.ends_with("deps") {
        dir.pop();
    }
    let binary = dir.join("examples").join(name);
    assert!(
        binary.exists(),
        "{} is missing: run `cargo build --workspace --examples` or `cargo test --workspace`",
        binary.display()
    );
    binary
}

/// The `saga` CLI's debug binary (`cargo build -p saga-cli`).
///
/// # Panics
///
/// When it is missing: the message says how to build it.
pub fn saga_cli() -> PathBuf {
    let saga = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/debug/saga");
    assert!(
        saga.exists(),
        "{} is missing: build it with `cargo build -p saga-cli`",
        saga.display()
    );
    saga
}

/// A `saga call --answers` file holding `json`, removed when dropped.
#[derive(Debug)]
pub struct AnswersFile(PathBuf);

impl AnswersFile {
    /// Writes `json` to a file of its own, named for `test`.
    ///
    /// # Panics
    ///
    /// When the file cannot be written.
    pub fn new(test: &str, json: &str) -> Self {
        let path =
            std::env::temp_dir().join(format!("saga-{test}-answers-{}.json", std::process::id()));
        std::fs::write(&path, json).expect("the answers file is written");
        Self(path)
    }

    /// Its path.
    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for AnswersFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// How to start an example server.
#[derive(Debug, Clone)]
pub struct Spawn {
    example: String,
    keys: String,
    log: String,
    max_open_files: Option<u32>,
    capture_stderr: bool,
    envs: Vec<(String, String)>,
}

impl Spawn {
    /// `example --http 127.0.0.1:0` with `SAGA_KEYS=keys` and `RUST_LOG=error`.
    pub fn new(example: &str, keys: &str) -> Self {
        Self {
            example: example.to_owned(),
            keys: keys.to_owned(),
            log: "error".to_owned(),
            max_open_files: None,
            capture_stderr: false,
            envs: Vec::new(),
        }
    }

    /// Sets an environment variable of the process.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.envs.push((key.to_owned(), value.to_owned()));
        self
    }

    /// `RUST_LOG` for the process.
    pub fn log(mut self, filter: &str) -> Self {
        self.log = filter.to_owned();
        self
    }

    /// Runs the process under `ulimit -n files` (soft and hard).
    pub fn max_open_files(mut self, files: u32) -> Self {
        self.max_open_files = Some(files);
        self
    }

    /// Keeps the process's stderr (its log) for [`ServerProcess::stderr`].
    pub fn capture_stderr(mut self) -> Self {
        self.capture_stderr = true;
        self
    }

    /// Starts it and waits until it listens.
    ///
    /// # Panics
    ///
    /// When the process cannot start or prints no address within a minute.
    pub fn start(self) -> ServerProcess {
        let binary = example_binary(&self.example);
        let mut command = match self.max_open_files {
            Some(files) => {
                let mut shell = Command::new("sh");
                shell
                    .arg("-c")
                    .arg(format!(
                        "ulimit -n {files} && exec \"$0\" --http 127.0.0.1:0"
                    ))
                    .arg(&binary);
                shell
            }
            None => {
                let mut direct = Command::new(&binary);
                direct.args(["--http", "127.0.0.1:0"]);
                direct
            }
        };
        // Each process its own SQLite file of tasks (the examples' default store), unless
        // the test names a store: processes of other tests never share one.
        let chose_store = self
            .envs
            .iter()
            .any(|(key, _)| key == "SAGA_TASKS" || key == "SAGA_TASKS_REDIS");
        let own_tasks_file = (!chose_store).then(|| {
            static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            std::env::temp_dir().join(format!(
                "saga-tasks-{}-{}.db",
                std::process::id(),
                NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ))
        });
        if let Some(file) = &own_tasks_file {
            command.env("SAGA_TASKS", format!("sqlite:{}", file.display()));
        }
        let child = command
            .env("SAGA_KEYS", &self.keys)
            .env_remove("SAGA_KEYS_FILE")
            .env("RUST_LOG", &self.log)
            .env("NO_COLOR", "1")
            .envs(self.envs.iter().map(|(key, value)| (key, value)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(if self.capture_stderr {
                Stdio::piped()
            } else {
                Stdio::inherit()
            })
            .spawn()
            .expect("the example starts");
        // Owned by the guard at once, so that it is killed and reaped on every path.
        let mut process = ServerProcess {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            stderr: Arc::new(Mutex::new(Vec::new())),
            own_tasks_file,
        };
        if let Some(mut stderr) = process.child.stderr.take() {
            let sink = process.stderr.clone();
            std::thread::spawn(move || {
                let mut buffer = [0u8; 8192];
                while let Ok(read) = stderr.read(&mut buffer) {
                    if read == 0 {
                        break;
                    }
                    if let Ok(mut sink) = sink.lock() {
                        sink.extend_from_slice(&buffer[..read]);
                    }
                }
            });
        }
        let stdout = process.child.stdout.take().expect("a piped stdout");
        let (found, listening) = std::sync::mpsc::channel();
        // Reads the address, then keeps draining stdout until the process exits.
        std::thread::spawn(move || {
            let mut found = Some(found);
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.strip_prefix("listening on http://")
                    && let Some(sender) = found.take()
                {
                    let _ = sender.send(rest.trim_end_matches("/mcp").to_owned());
                }
            }
        });
        let addr = listening
            .recv_timeout(Duration::from_secs(60))
            .expect("the example prints its address");
        process.addr = addr.parse().expect("a socket address");
        process
    }
}

/// A running example server process; killed and reaped when dropped.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// The SQLite file of tasks the harness gave it, removed with it.
    own_tasks_file: Option<std::path::PathBuf>,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(file) = &self.own_tasks_file {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
            }
        }
    }
}

impl ServerProcess {
    /// `deploy --http 127.0.0.1:0` with these keys.
    pub fn deploy(keys: &str) -> Self {
        Spawn::new("deploy", keys).start()
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, then reap.
    ///
    /// # Panics
    ///
    /// When the process cannot be killed or had already exited.
    pub fn kill_9(&mut self) {
        self.child.kill().expect("the process can be killed");
        let status = self.child.wait().expect("the process can be reaped");
        assert!(!status.success(), "killed, not exited: {status:?}");
    }

    /// Stops it as Ctrl-C does (SIGINT): it finishes what it serves, flushes what it
    /// exports, and exits. Waits for the exit.
    ///
    /// # Panics
    ///
    /// When the signal cannot be sent or the process does not exit in 10 s.
    pub fn interrupt(&mut self) {
        self.signal("INT");
        self.wait_exit("SIGINT", Duration::from_secs(10));
    }

    /// Stops it as Docker, Kubernetes and systemd do (SIGTERM), without waiting.
    ///
    /// # Panics
    ///
    /// When the signal cannot be sent.
    pub fn terminate(&mut self) {
        self.signal("TERM");
    }

    /// Waits up to `within` for the process to exit; its status.
    ///
    /// # Panics
    ///
    /// When it does not exit in time.
    pub fn wait_exit(&mut self, after: &str, within: Duration) -> std::process::ExitStatus {
        let deadline = std::time::Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().expect("the process can be polled") {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the server did not exit within {within:?} of {after}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn signal(&self, name: &str) {
        let sent = Command::new("kill")
            .args([&format!("-{name}"), &self.pid().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "SIG{name} sent");
    }

    /// Asserts that the process is still running.
    ///
    /// # Panics
    ///
    /// When it exited.
    #[track_caller]
    pub fn assert_alive(&mut self) {
        let status = self.child.try_wait().expect("the process can be polled");
        assert!(status.is_none(), "the server process exited: {status:?}");
    }

    /// A field of `/proc/<pid>/status` in KiB: `VmRSS` (resident now) or `VmHWM` (the
    /// peak so far).
    ///
    /// # Panics
    ///
    /// When the process has no such line.
    pub fn memory_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("the process has a status");
        status
            .lines()
            .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("a memory line")
    }

    /// The resident set size in KiB.
    pub fn rss_kib(&self) -> u64 {
        self.memory_kib("VmRSS")
    }

    /// CPU time the process has used so far (user + system), from `/proc/<pid>/stat`.
    ///
    /// # Panics
    ///
    /// When the stat line does not parse.
    pub fn cpu_time(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid()))
            .expect("the process has a stat");
        // The command name may hold spaces: the fields after it start past the last ')'.
        let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
        let fields: Vec<&str> = after.split_whitespace().collect();
        let ticks: u64 =
            fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
        // The kernel's USER_HZ is 100 on every Linux this runs on.
        Duration::from_millis(ticks * 10)
    }

    /// What the process wrote to stderr so far (with [`Spawn::capture_stderr`]).
    pub fn stderr(&self) -> String {
        let bytes = self.stderr.lock().map(|b| b.clone()).unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}
