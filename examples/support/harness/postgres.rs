//! A `postgres` server of the test's own: a fresh cluster (`initdb`) in a temporary
//! directory, on a free loopback port, that a test may stop and start again (a database
//! that goes away and comes back). Debian's `postgresql` package provides the binaries
//! (`scripts/test.sh` installs it). Postgres refuses to run as root: as root, the cluster
//! belongs to the package's `postgres` user and its commands run as that user.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A Postgres cluster of our own, stopped and removed on drop.
pub struct Postgres {
    child: Option<std::process::Child>,
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    /// `postgres://saga@127.0.0.1:PORT/saga`.
    pub url: String,
}

/// Where the server's binaries are: `pg_config --bindir`, or Debian's versioned folder.
fn bin_dir() -> PathBuf {
    if let Ok(output) = Command::new("pg_config").arg("--bindir").output()
        && output.status.success()
    {
        let dir = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        if dir.join("initdb").exists() {
            return dir;
        }
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
        .unwrap_or_default();
    versions.sort();
    versions
        .into_iter()
        .rev()
        .map(|version| version.join("bin"))
        .find(|bin| bin.join("initdb").exists())
        .unwrap_or_else(|| {
            panic!("no Postgres server binaries (initdb); install them: apt-get install postgresql")
        })
}

/// The `postgres` user's uid and gid, when we are root (Postgres refuses root).
fn run_as() -> Option<(u32, u32)> {
    let id = |args: &[&str]| -> Option<u32> {
        let output = Command::new("id").args(args).output().ok()?;
        String::from_utf8_lossy(&output.stdout).trim().parse().ok()
    };
    if id(&["-u"])? != 0 {
        return None;
    }
    let uid = id(&["-u", "postgres"]).unwrap_or_else(|| {
        panic!("running as root, and there is no postgres user: apt-get install postgresql")
    });
    Some((uid, id(&["-g", "postgres"]).expect("the postgres group")))
}

/// `program` with `args`, as the `postgres` user when we are root (the process itself,
/// with no `runuser` between: a kill reaches the server).
fn command(bin: &Path, program: &str, args: &[&str]) -> Command {
    use std::os::unix::process::CommandExt as _;
    let mut command = Command::new(bin.join(program));
    command.args(args);
    if let Some((uid, gid)) = run_as() {
        command.uid(uid).gid(gid).env("HOME", "/tmp");
    }
    command
}

impl Postgres {
    /// Starts the server (again, after [`Postgres::stop`]) and waits until it accepts
    /// connections.
    pub async fn start(&mut self) {
        for _ in 0..20 {
            if self.try_start().await {
                return;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        panic!("postgres did not accept connections on {}", self.port);
    }

    /// One attempt: whether the server came up.
    async fn try_start(&mut self) -> bool {
        assert!(self.child.is_none(), "already running");
        let dir = self.dir.to_string_lossy().into_owned();
        let child = command(
            &self.bin,
            "postgres",
            &[
                "-D",
                &dir,
                "-p",
                &self.port.to_string(),
                "-k",
                &dir,
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "max_connections=200",
            ],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|error| panic!("postgres could not start: {error}"));
        self.child = Some(child);
        for _ in 0..100 {
            if let Some(child) = &mut self.child
                && child.try_wait().ok().flatten().is_some()
            {
                // It exited: its predecessor's processes still held the data directory.
                self.child = None;
                return false;
            }
            let ready = command(
                &self.bin,
                "pg_isready",
                &["-h", "127.0.0.1", "-p", &self.port.to_string()],
            )
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
            if ready {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.stop();
        false
    }

    /// Stops the server at once (SIGKILL: no shutdown, as a crash or a lost machine); its
    /// data stays for [`Postgres::start`].
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            // The postmaster's children see it die and exit within moments; a start before
            // they have is refused (their shared memory), and retried.
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// A fresh, empty database of this cluster, and its URL.
    pub async fn database(&self, name: &str) -> String {
        let status = command(
            &self.bin,
            "createdb",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "saga",
                name,
            ],
        )
        .status()
        .expect("createdb runs");
        assert!(status.success(), "createdb {name}");
        format!("postgres://saga@127.0.0.1:{}/{name}", self.port)
    }

    /// Runs `sql` in database `name` with `psql`, stopping at the first error.
    pub fn psql(&self, name: &str, sql: &str) {
        let status = command(
            &self.bin,
            "psql",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "saga",
                "-v",
                "ON_ERROR_STOP=1",
                "-q",
                "-d",
                name,
                "-c",
                sql,
            ],
        )
        .status()
        .expect("psql runs");
        assert!(status.success(), "psql {sql}");
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A new cluster, started; panics with the install command when Postgres is missing.
pub async fn start_postgres() -> Postgres {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let bin = bin_dir();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = std::env::temp_dir().join(format!(
        "saga-postgres-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");
    if run_as().is_some() {
        let status = Command::new("chown")
            .args(["postgres:postgres", &dir.to_string_lossy()])
            .status()
            .expect("chown runs");
        assert!(
            status.success(),
            "the temp dir cannot be given to the postgres user"
        );
    }
    let dir_text = dir.to_string_lossy().into_owned();
    let output = command(
        &bin,
        "initdb",
        &["-D", &dir_text, "-U", "saga", "--auth=trust", "--no-sync"],
    )
    .output()
    .expect("initdb runs");
    assert!(
        output.status.success(),
        "initdb failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut postgres = Postgres {
        child: None,
        dir,
        bin,
        port,
        url: format!("postgres://saga@127.0.0.1:{port}/saga"),
    };
    postgres.start().await;
    let status = command(
        &postgres.bin,
        "createdb",
        &[
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-U",
            "saga",
            "saga",
        ],
    )
    .status()
    .expect("createdb runs");
    assert!(status.success(), "createdb saga");
    postgres
}
