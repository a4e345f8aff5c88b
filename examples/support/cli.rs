//! The command line of every serving example: `--http ADDR` (the default, on
//! `127.0.0.1:8080`) or `--stdio`; keys from `SAGA_KEYS`. `--inspect TOKEN` (with the
//! call's `--arguments JSON`, and `--tool`, `--principal` when needed) prints a token's
//! saga state as JSON instead of serving; `--graph TOOL` prints a tool's diagram (Mermaid,
//! see `SagaTool::diagram`) instead of serving.

use saga_runtime::prelude::*;

/// Where an example serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// Streamable HTTP on this address, at `/mcp`.
    Http(String),
    /// stdin and stdout.
    Stdio,
}

/// The default HTTP address.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";

/// Reads `--http [ADDR]` or `--stdio` from the arguments.
pub fn transport() -> anyhow::Result<Transport> {
    parse(std::env::args().skip(1))
}

fn parse(mut args: impl Iterator<Item = String>) -> anyhow::Result<Transport> {
    let mut transport = Transport::Http(DEFAULT_ADDR.to_owned());
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--stdio" => transport = Transport::Stdio,
            "--http" => {
                transport = Transport::Http(args.next().unwrap_or_else(|| DEFAULT_ADDR.to_owned()))
            }
            other => anyhow::bail!("unknown argument {other:?}; use --http ADDR or --stdio"),
        }
    }
    Ok(transport)
}

/// The key ring from `SAGA_KEYS` (or `SAGA_KEYS_FILE`), or an ephemeral key with a
/// warning when neither is set.
pub fn keys() -> anyhow::Result<KeyRing> {
    match KeyRing::from_env("SAGA_KEYS") {
        Ok(keys) => Ok(keys),
        Err(saga_runtime::state::KeyRingError::Missing { .. }) => {
            eprintln!(
                "warning: SAGA_KEYS is not set; using an ephemeral key, so tokens die with this \
                 process (set SAGA_KEYS=$(openssl rand -hex 32) to keep them across restarts)"
            );
            Ok(KeyRing::ephemeral())
        }
        Err(error) => Err(error.into()),
    }
}

/// An authenticator for [`SagaServerBuilder::authenticate`]: a request whose
/// `Authorization` is `Bearer KEY`, for one of the comma-separated keys in `SAGA_API_KEYS`,
/// is the verified principal `key-N` (N: the key's place in the list); any other caller
/// is unverified, and shares its address's pool of the server's bounds (SECURITY.md).
/// With `SAGA_API_KEYS` unset, nobody is verified and `authenticate` is not set.
///
/// With an authenticator, an address that sends more than 30 distinct keys it does not
/// verify in a minute is refused (429) for new ones (`HttpLimits::
/// max_failed_credentials_per_minute`; `SAGA_FAILED_CREDENTIALS_PER_MINUTE` sets it
/// here, for tests that make up identities by the hundred).
///
/// [`SagaServerBuilder::authenticate`]: saga_runtime::serve::SagaServerBuilder::authenticate
pub fn with_api_keys(
    builder: saga_runtime::serve::SagaServerBuilder,
) -> saga_runtime::serve::SagaServerBuilder {
    let keys: Vec<String> = std::env::var("SAGA_API_KEYS")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|key| !key.is_empty())
        .map(str::to_owned)
        .collect();
    if keys.is_empty() {
        return builder;
    }
    let mut limits = saga_runtime::serve::HttpLimits::default();
    if let Some(tries) = std::env::var("SAGA_FAILED_CREDENTIALS_PER_MINUTE")
        .ok()
        .and_then(|tries| tries.parse().ok())
    {
        limits = limits.max_failed_credentials_per_minute(tries);
    }
    builder.http_limits(limits).authenticate(api_keys(keys))
}

/// Authorization as MCP specifies it, from the environment: with `SAGA_AUTH_ISSUER` (an
/// issuer, `https://auth.example.com`) and `SAGA_AUTH_RESOURCE` (this server's canonical
/// URI, `https://mcp.example.com/mcp`), every request needs a JWT access token of that
/// issuer for that resource; `SAGA_AUTH_SCOPES` (space-separated) are needed by every
/// request. `SAGA_AUTH_INTROSPECTION=CLIENT:SECRET` verifies opaque tokens by
/// introspection instead. Unset, nothing changes.
pub fn with_authorization(
    builder: saga_runtime::serve::SagaServerBuilder,
) -> anyhow::Result<saga_runtime::serve::SagaServerBuilder> {
    use saga_runtime::serve::auth::{Introspection, JwtVerifier, ResourceServer};
    let Ok(issuer) = std::env::var("SAGA_AUTH_ISSUER") else {
        return Ok(builder);
    };
    let resource = std::env::var("SAGA_AUTH_RESOURCE").map_err(|_| {
        anyhow::anyhow!("SAGA_AUTH_ISSUER needs SAGA_AUTH_RESOURCE, this server's URI")
    })?;
    let mut server = ResourceServer::new(resource)?.authorization_server(&issuer);
    server = match std::env::var("SAGA_AUTH_INTROSPECTION") {
        Ok(client) => {
            let (id, secret) = client
                .split_once(':')
                .ok_or_else(|| anyhow::anyhow!("SAGA_AUTH_INTROSPECTION is CLIENT:SECRET"))?;
            server.verifier(Introspection::new(&issuer, id, secret))
        }
        Err(_) => server.verifier(JwtVerifier::new(&issuer)),
    };
    if let Ok(scopes) = std::env::var("SAGA_AUTH_SCOPES") {
        let scopes: Vec<&str> = scopes.split_ascii_whitespace().collect();
        server = server
            .require_scopes(scopes.clone())
            .scopes_supported(scopes);
    }
    Ok(builder.authorization(server))
}

/// The check [`with_api_keys`] sets for `keys`.
fn api_keys(
    keys: Vec<String>,
) -> impl Fn(&saga_runtime::http::request::Parts) -> Option<String> + Send + Sync + 'static {
    move |parts| {
        let presented = parts
            .headers
            .get(saga_runtime::http::header::AUTHORIZATION)?
            .to_str()
            .ok()?
            .strip_prefix("Bearer ")?;
        // Every key is compared in full, so the time taken tells nothing of a key.
        let mut found = None;
        for (index, key) in keys.iter().enumerate() {
            let same = key.len() == presented.len()
                && key
                    .bytes()
                    .zip(presented.bytes())
                    .fold(0u8, |differ, (a, b)| differ | (a ^ b))
                    == 0;
            if same {
                found = Some(format!("key-{index}"));
            }
        }
        found
    }
}

/// Where the examples keep tasks and redeemed tokens, from `SAGA_TASKS`:
///
/// | `SAGA_TASKS` | stores |
/// |---|---|
/// | unset | the SQLite file `saga-tasks.db` in the current directory: durable on this machine |
/// | `sqlite:PATH` | the SQLite file at `PATH` |
/// | `redis://…` | Redis, shared by replicas (also `SAGA_TASKS_REDIS=redis://…`) |
/// | `postgres://…` | Postgres, shared by replicas |
/// | `memory` | this process's memory: gone at a restart |
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stores {
    /// A SQLite file.
    Sqlite(std::path::PathBuf),
    /// Redis at this URL.
    Redis(String),
    /// Postgres at this URL.
    Postgres(String),
    /// In memory.
    Memory,
}

/// The SQLite file the examples use when `SAGA_TASKS` names none.
pub const DEFAULT_TASKS_FILE: &str = "saga-tasks.db";

impl Stores {
    /// What the environment asks for.
    pub fn from_env() -> anyhow::Result<Self> {
        if let Ok(url) = std::env::var("SAGA_TASKS_REDIS") {
            return Ok(Stores::Redis(url));
        }
        let Ok(value) = std::env::var("SAGA_TASKS") else {
            return Ok(Stores::Sqlite(DEFAULT_TASKS_FILE.into()));
        };
        Self::parse(&value)
    }

    /// The stores `value` names, as `SAGA_TASKS` names them.
    pub fn parse(value: &str) -> anyhow::Result<Self> {
        let value = value.to_owned();
        Ok(if let Some(path) = value.strip_prefix("sqlite:") {
            Stores::Sqlite(path.into())
        } else if value.starts_with("redis://") || value.starts_with("rediss://") {
            Stores::Redis(value)
        } else if value.starts_with("postgres://") || value.starts_with("postgresql://") {
            Stores::Postgres(value)
        } else if value == "memory" {
            Stores::Memory
        } else {
            anyhow::bail!(
                "SAGA_TASKS={value:?}: expected sqlite:PATH, redis://…, postgres://… or memory"
            )
        })
    }

    /// The task store.
    pub async fn tasks(&self) -> anyhow::Result<TaskStore> {
        Ok(match self {
            Stores::Sqlite(path) => TaskStore::sqlite(path)?,
            Stores::Redis(url) => TaskStore::redis(url).await?,
            Stores::Postgres(url) => TaskStore::postgres(url).await?,
            Stores::Memory => TaskStore::memory(),
        })
    }

    /// The single-use store, on the same backend: replicas sharing Redis or Postgres
    /// refuse each other's replays too, and a SQLite file keeps them across restarts.
    pub async fn single_use(&self) -> anyhow::Result<Box<dyn saga_runtime::state::TokenStore>> {
        use saga_runtime::state::{MemoryStore, PostgresStore, RedisStore, SqliteStore};
        Ok(match self {
            Stores::Sqlite(path) => Box::new(SqliteStore::open(path)?),
            Stores::Redis(url) => Box::new(RedisStore::connect(url).await?),
            Stores::Postgres(url) => Box::new(PostgresStore::connect(url).await?),
            Stores::Memory => Box::new(MemoryStore::new(100_000)),
        })
    }
}

/// The server-side model `SAGA_MODEL_URL` names (an OpenAI-compatible API's base URL,
/// `https://api.openai.com/v1`), with the key `SAGA_MODEL_KEY` and the model `SAGA_MODEL`
/// (`gpt-4o-mini` unless set): it answers `sample()` for clients that cannot
/// (`saga_runtime::model`). `None` when `SAGA_MODEL_URL` is not set.
pub fn model() -> anyhow::Result<Option<saga_runtime::model::OpenAiCompatible>> {
    let Ok(url) = std::env::var("SAGA_MODEL_URL") else {
        return Ok(None);
    };
    let key = std::env::var("SAGA_MODEL_KEY").unwrap_or_default();
    let model = std::env::var("SAGA_MODEL").unwrap_or_else(|_| "gpt-4o-mini".to_owned());
    Ok(Some(saga_runtime::model::OpenAiCompatible::new(
        url, key, model,
    )?))
}

/// The task store `SAGA_TASKS` names ([`Stores`]).
pub async fn task_store() -> anyhow::Result<TaskStore> {
    Stores::from_env()?.tasks().await
}

/// Task settings with `store` and the lease `SAGA_TASK_LEASE_MS` gives (the default
/// otherwise).
pub fn task_settings(store: TaskStore) -> saga_runtime::tasks::TaskSettings {
    let settings = saga_runtime::tasks::TaskSettings::new(store);
    match std::env::var("SAGA_TASK_LEASE_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
    {
        Some(lease) => settings.lease(std::time::Duration::from_millis(lease)),
        None => settings,
    }
}

/// The examples' OpenTelemetry export (feature `otel`), flushed when [`serve`] ends.
#[cfg(feature = "otel")]
static TELEMETRY: std::sync::Mutex<Option<saga_runtime::otel::Telemetry>> =
    std::sync::Mutex::new(None);

/// Logs to stderr (stdout may be the MCP channel), filtered by `RUST_LOG`, never with a
/// session's id ([`QUIET_SESSION_IDS`](saga_runtime::serve::QUIET_SESSION_IDS)).
///
/// With the `otel` feature and `OTEL_EXPORTER_OTLP_ENDPOINT` set, saga's spans and metrics
/// are exported over OTLP too (`saga_runtime::otel::Telemetry`).
pub fn init_logging() {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    #[cfg(feature = "otel")]
    if std::env::var_os(saga_runtime::otel::OTEL_EXPORTER_OTLP_ENDPOINT).is_some() {
        match saga_runtime::otel::Telemetry::builder().build() {
            Ok(telemetry) => {
                let _ = tracing_subscriber::registry()
                    .with(log_layer())
                    .with(telemetry.layer())
                    .try_init();
                if let Ok(mut kept) = TELEMETRY.lock() {
                    *kept = Some(telemetry);
                }
                return;
            }
            Err(error) => eprintln!("OpenTelemetry export is off: {error}"),
        }
    }
    let _ = tracing_subscriber::registry().with(log_layer()).try_init();
}

/// The examples' log: stderr, `RUST_LOG` (`warn` by default), no session ids.
fn log_layer<S>() -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    use tracing_subscriber::Layer as _;
    let mut filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    if let Ok(directive) = saga_runtime::serve::QUIET_SESSION_IDS.parse() {
        filter = filter.add_directive(directive);
    }
    tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(filter)
}

/// Sends what the examples' export holds (feature `otel`).
fn flush_telemetry() {
    #[cfg(feature = "otel")]
    if let Some(telemetry) = TELEMETRY.lock().ok().and_then(|mut kept| kept.take())
        && let Err(error) = telemetry.shutdown()
    {
        eprintln!("{error}");
    }
}

/// `--inspect TOKEN [--arguments JSON] [--tool NAME] [--principal P]`: the token to
/// decode and the request it is bound to, when the command line asks for it.
fn inspect_request(
    mut args: impl Iterator<Item = String>,
) -> anyhow::Result<Option<(String, saga_runtime::serve::InspectRequest)>> {
    let mut token = None;
    let mut request = saga_runtime::serve::InspectRequest::default();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .ok_or_else(|| anyhow::anyhow!("{name} needs a value"))
        };
        match arg.as_str() {
            "--inspect" => token = Some(value("--inspect")?),
            "--arguments" => {
                let text = value("--arguments")?;
                let arguments: serde_json::Value = serde_json::from_str(&text)
                    .map_err(|e| anyhow::anyhow!("--arguments is not JSON: {e}"))?;
                match arguments {
                    serde_json::Value::Object(map) => request.arguments = Some(map),
                    _ => anyhow::bail!("--arguments must be a JSON object"),
                }
            }
            "--tool" => request.tool = Some(value("--tool")?),
            "--principal" => request.principal = value("--principal")?,
            _ => {}
        }
    }
    Ok(token.map(|token| (token, request)))
}

/// `--graph TOOL`: the tool whose diagram to print, when the command line asks for one.
fn graph_request(mut args: impl Iterator<Item = String>) -> anyhow::Result<Option<String>> {
    while let Some(arg) = args.next() {
        if arg == "--graph" {
            return match args.next() {
                Some(tool) => Ok(Some(tool)),
                None => anyhow::bail!("--graph needs the name of a tool"),
            };
        }
    }
    Ok(None)
}

/// The diagram of the tool `name` of `server` (as a client reads it in `tools/list`,
/// whether the server lists diagrams there or not), or why there is none.
pub fn diagram(server: &SagaServer, name: &str) -> anyhow::Result<String> {
    let tools = server.tools();
    if !tools.contains(name) {
        let names: Vec<&str> = tools.tools().map(|tool| tool.name.as_ref()).collect();
        anyhow::bail!("no tool {name:?} here; the tools are: {}", names.join(", "));
    }
    match tools.diagram(name) {
        Some(diagram) => Ok(diagram.to_owned()),
        None => anyhow::bail!("the tool {name:?} has no diagram (it is not a #[saga_tool])"),
    }
}

/// `--check-layout FILE` or `--write-layout FILE`, when the command line asks for one.
fn layout_request(mut args: impl Iterator<Item = String>) -> Option<(bool, String)> {
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--check-layout" => return args.next().map(|file| (false, file)),
            "--write-layout" => return args.next().map(|file| (true, file)),
            _ => {}
        }
    }
    None
}

/// Serves `server` as the command line says. Instead: with `--graph TOOL` prints the
/// tool's diagram (Mermaid `stateDiagram-v2` text); with `--inspect TOKEN` (and the
/// `--arguments JSON` of the call) prints the token's saga state as JSON; with
/// `--check-layout FILE` checks that this build resumes every suspension point the
/// layout file records (exit status 1 and the reason when not, see
/// [`saga_runtime::deploy`]); with `--write-layout FILE` writes this build's file.
pub async fn serve(server: SagaServer) -> anyhow::Result<()> {
    if let Some(tool) = graph_request(std::env::args().skip(1))? {
        print!("{}", diagram(&server, &tool)?);
        return Ok(());
    }
    if let Some((write, file)) = layout_request(std::env::args().skip(1)) {
        let path = std::path::Path::new(&file);
        if write {
            std::fs::write(
                path,
                saga_runtime::deploy::LayoutFile::of(server.tools()).render(),
            )?;
            return Ok(());
        }
        match saga_runtime::deploy::check_layout(server.tools(), path) {
            Ok(()) => println!("{file}: every recorded suspension point resumes on this build"),
            Err(message) => {
                eprintln!("{message}");
                std::process::exit(1);
            }
        }
        return Ok(());
    }
    if let Some((token, request)) = inspect_request(std::env::args().skip(1))? {
        match server.inspect(&token, &request) {
            Ok(state) => println!("{}", serde_json::to_string_pretty(&state)?),
            Err(error) => {
                eprintln!("error: {error}");
                std::process::exit(1);
            }
        }
        return Ok(());
    }
    let served = match transport()? {
        Transport::Http(addr) => server.serve_http(addr).await,
        Transport::Stdio => server.serve_stdio().await,
    };
    flush_telemetry();
    served?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> impl Iterator<Item = String> {
        list.iter()
            .map(|s| (*s).to_owned())
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn parses_both_transports() {
        assert_eq!(
            parse(args(&[])).unwrap(),
            Transport::Http(DEFAULT_ADDR.into())
        );
        assert_eq!(
            parse(args(&["--http", "0.0.0.0:9"])).unwrap(),
            Transport::Http("0.0.0.0:9".into())
        );
        assert_eq!(parse(args(&["--stdio"])).unwrap(), Transport::Stdio);
        assert!(parse(args(&["--bogus"])).is_err());
    }

    #[test]
    fn parses_graph() {
        assert_eq!(graph_request(args(&["--http", "x"])).unwrap(), None);
        assert_eq!(
            graph_request(args(&["--graph", "complex_tool"])).unwrap(),
            Some("complex_tool".to_owned())
        );
        assert!(graph_request(args(&["--graph"])).is_err());
    }

    #[test]
    fn parses_inspect() {
        assert!(inspect_request(args(&["--http", "x"])).unwrap().is_none());
        let (token, request) =
            inspect_request(args(&["--inspect", "T", "--arguments", r#"{"a":1}"#]))
                .unwrap()
                .unwrap();
        assert_eq!(token, "T");
        assert_eq!(request.arguments.unwrap()["a"], 1);
        assert_eq!(request.method, "tools/call");
        assert!(inspect_request(args(&["--inspect"])).is_err());
        assert!(inspect_request(args(&["--inspect", "T", "--arguments", "[]"])).is_err());
    }
}
