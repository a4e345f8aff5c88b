//! A real authorization server of the test's own: `oidc-provider` (Node), started from
//! `tests/auth/oidc/server.mjs` on a free loopback port, with its own signing keys (a
//! second one is another issuer, the attacker's). Its npm packages are installed, at the
//! versions `tests/auth/oidc/package.json` pins, into `${SAGA_OIDC_CACHE:-~/.cache/saga-oidc}`
//! the first time a test starts one.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// One `oidc-provider` process, stopped on drop.
pub struct Oidc {
    child: Child,
    /// Its issuer identifier, `http://127.0.0.1:PORT`.
    pub issuer: String,
    port: u16,
    token_ttl: u64,
    format: Format,
    /// The file its signing key is kept in, so that a restart may keep it.
    key_file: PathBuf,
}

impl Drop for Oidc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.key_file);
    }
}

/// The client the tests authenticate as: scopes `tools:deploy tools:read tools:admin`.
pub const CLIENT: (&str, &str) = ("saga-tests", "secret");

/// Another client with the same scopes: another subject.
pub const OTHER_CLIENT: (&str, &str) = ("saga-tests-2", "secret");

/// The client the server introspects tokens as.
pub const INTROSPECTOR: (&str, &str) = ("saga-introspector", "secret");

/// One install at a time in this process.
static INSTALL: Mutex<()> = Mutex::new(());

fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/auth/oidc")
}

/// The directory the packages are installed in, installed if they are not.
fn installed() -> PathBuf {
    let _one = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    let cache = std::env::var_os("SAGA_OIDC_CACHE").map_or_else(
        || {
            Path::new(&std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into()))
                .join(".cache/saga-oidc")
        },
        PathBuf::from,
    );
    std::fs::create_dir_all(&cache).expect("the cache directory");
    let package = std::fs::read(sources().join("package.json")).expect("package.json");
    let fresh = std::fs::read(cache.join("package.json")).ok().as_deref() == Some(&package[..])
        && cache.join("node_modules/oidc-provider").exists();
    std::fs::copy(sources().join("server.mjs"), cache.join("server.mjs")).expect("server.mjs");
    if !fresh {
        std::fs::write(cache.join("package.json"), &package).expect("package.json");
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&cache)
            .status()
            .unwrap_or_else(|error| panic!("npm could not run ({error}); install Node.js and npm"));
        assert!(status.success(), "npm install of oidc-provider failed");
    }
    cache
}

/// `pairs` as `application/x-www-form-urlencoded`.
fn form(pairs: &[(&str, &str)]) -> String {
    let encode = |text: &str| -> String {
        text.bytes()
            .map(|byte| match byte {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    (byte as char).to_string()
                }
                _ => format!("%{byte:02X}"),
            })
            .collect()
    };
    pairs
        .iter()
        .map(|(key, value)| format!("{}={}", encode(key), encode(value)))
        .collect::<Vec<_>>()
        .join("&")
}

/// How an [`Oidc`] issues its access tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JWTs (RFC 9068), verified against its keys.
    Jwt,
    /// Opaque strings, verified by introspection (RFC 7662).
    Opaque,
}

impl Oidc {
    /// Starts one whose tokens live five minutes, as JWTs.
    pub async fn start() -> Self {
        Self::start_with(300, Format::Jwt).await
    }

    /// Starts one, its access tokens living `token_ttl` seconds, in `format`.
    pub async fn start_with(token_ttl: u64, format: Format) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("a port")
            .local_addr()
            .expect("an address")
            .port();
        let key_file =
            std::env::temp_dir().join(format!("saga-oidc-key-{port}-{}.json", std::process::id()));
        let _ = std::fs::remove_file(&key_file);
        let (child, issuer) = Self::spawn(port, token_ttl, format, &key_file).await;
        Self {
            child,
            issuer,
            port,
            token_ttl,
            format,
            key_file,
        }
    }

    /// Stops it: its issuer cannot be reached until [`Self::restart`].
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts it again at the same issuer (address), with the same signing key, or
    /// (`new_key`) with a new one in its place: the old key is gone from its key set, as
    /// an issuer that rotated a key out, or removed a compromised one.
    pub async fn restart(&mut self, new_key: bool) {
        self.stop();
        if new_key {
            let _ = std::fs::remove_file(&self.key_file);
        }
        let (child, issuer) =
            Self::spawn(self.port, self.token_ttl, self.format, &self.key_file).await;
        assert_eq!(issuer, self.issuer, "the same issuer");
        self.child = child;
    }

    async fn spawn(port: u16, token_ttl: u64, format: Format, key_file: &Path) -> (Child, String) {
        let dir = tokio::task::spawn_blocking(installed)
            .await
            .expect("installed");
        let mut child = Command::new("node")
            .arg("server.mjs")
            .arg(port.to_string())
            .env("SAGA_OIDC_KEY_FILE", key_file)
            .env("SAGA_OIDC_TOKEN_TTL", token_ttl.to_string())
            .env(
                "SAGA_OIDC_FORMAT",
                if format == Format::Opaque {
                    "opaque"
                } else {
                    "jwt"
                },
            )
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| panic!("node could not run ({error}); install Node.js"));
        let stdout = child.stdout.take().expect("stdout");
        let (found, listening) = tokio::sync::oneshot::channel();
        // Its output is read to its end: a write to a closed pipe would end the process
        // (oidc-provider logs notices on stdout as it issues tokens).
        std::thread::spawn(move || {
            let mut found = Some(found);
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(issuer) = line.strip_prefix("listening on ")
                    && let Some(found) = found.take()
                {
                    let _ = found.send(issuer.to_owned());
                }
            }
        });
        let issuer = listening.await.expect("oidc-provider did not start");
        (child, issuer)
    }

    /// A client-credentials token for `resource` with `scopes` (space-separated), as
    /// [`CLIENT`].
    pub async fn token(&self, resource: &str, scopes: &str) -> String {
        self.token_of(CLIENT, resource, scopes).await
    }

    /// How many times its key set was fetched.
    pub async fn jwks_hits(&self) -> u64 {
        self.count("jwks-hits").await
    }

    /// How many times it was asked to introspect a token.
    pub async fn introspections(&self) -> u64 {
        self.count("introspections").await
    }

    async fn count(&self, what: &str) -> u64 {
        let body: serde_json::Value = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("a client")
            .get(format!("{}/test/{what}", self.issuer))
            .send()
            .await
            .expect("answered")
            .json()
            .await
            .expect("JSON");
        body["hits"].as_u64().expect("a count")
    }

    /// A client-credentials token for `resource` with `scopes`, as `client`.
    pub async fn token_of(&self, client: (&str, &str), resource: &str, scopes: &str) -> String {
        let response = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(10))
            .build()
            .expect("a client")
            .post(format!("{}/token", self.issuer))
            .basic_auth(client.0, Some(client.1))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form(&[
                ("grant_type", "client_credentials"),
                ("scope", scopes),
                ("resource", resource),
            ]))
            .send()
            .await
            .expect("the token endpoint answers");
        let body: serde_json::Value = response.json().await.expect("JSON");
        body["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no access token: {body}"))
            .to_owned()
    }
}
