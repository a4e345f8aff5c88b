#!/usr/bin/env bash
# A user's first build, cold: each crate below built with `cargo build` (debug, what
# `cargo run` does) into an empty target directory, sources already downloaded (the
# download is the network's, not the build's). Reports wall seconds and how many crates
# were compiled. Never asserts a time: it reports, for BENCHMARKS.md ("first build").
#
#   saga-http    one #[saga_tool] served over Streamable HTTP (saga-runtime's defaults)
#   saga-stdio   the same tool over stdio, `default-features = false` (no axum/hyper/tower)
#   rmcp-http    one rmcp #[tool] over rmcp's Streamable HTTP server, with axum
#   rmcp-stdio   the same rmcp tool over stdio
#   quickstart   `cargo build --example quickstart` in a fresh clone of this repository
#   saga-cli     `cargo install --path saga-cli` (release, as the guide's CLI chapter says),
#                the client a user installs beside a server (issue 78: against saga-http)
#
#   scripts/bench-first-build.sh              # every crate, once each, rmcp and saga alternating
#   scripts/bench-first-build.sh saga-http rmcp-http   # some of them
#
# The runs share nothing but the registry, so each pays for everything it compiles. On a
# loaded machine run it alone: the ratios are what count.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
WORK=$ROOT/target/bench-first-build
mkdir -p "$WORK"
which=("$@")
[ ${#which[@]} -gt 0 ] || which=(rmcp-http saga-http rmcp-stdio saga-stdio quickstart)

TOOL='
use saga_runtime::prelude::*;

#[derive(Elicit, Serialize, Deserialize)]
struct Target {
    /// Where to deploy.
    target: String,
}

/// Deploys after asking where.
#[saga_tool]
async fn deploy(service: String) -> Result<String, SagaError> {
    let target: Target = elicit("Where to?").await?;
    Ok(format!("{service} deployed to {}", target.target))
}
'

RMCP_TOOL='
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct Args {
    /// The service.
    pub service: String,
}

#[derive(Clone)]
pub struct Deployer {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Deployer {
    fn new() -> Self {
        Self { tool_router: Self::tool_router() }
    }

    /// Deploys a service.
    #[tool(description = "Deploys a service.")]
    fn deploy(&self, Parameters(Args { service }): Parameters<Args>) -> String {
        format!("{service} deployed")
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Deployer {}
'

RMCP_VERSION=$(grep -m1 '^rmcp = { version' Cargo.toml | sed -E 's/.*version = "([^"]+)".*/\1/')

make_crate() {
  local name=$1 deps=$2 main=$3
  rm -rf "${WORK:?}/$name"
  mkdir -p "$WORK/$name/src"
  printf '[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n[workspace]\n\n[dependencies]\n%s\n' \
    "$name" "$deps" >"$WORK/$name/Cargo.toml"
  printf '%s\n' "$main" >"$WORK/$name/src/main.rs"
  # The lock file resolved now, so that the timed build only builds.
  (cd "$WORK/$name" && cargo fetch --quiet)
}

SAGA_DEP="saga-runtime = { path = \"$ROOT/saga-runtime\" }"
COMMON='serde = { version = "1", features = ["derive"] }
tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
anyhow = "1"'

prepare() {
  case $1 in
    saga-http) make_crate saga-http "$SAGA_DEP
$COMMON" "$TOOL
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    SagaServer::builder().keys(KeyRing::from_env(\"SAGA_KEYS\")?).tool(deploy).build()?.serve_http(\"127.0.0.1:8080\").await?;
    Ok(())
}" ;;
    saga-stdio) make_crate saga-stdio "saga-runtime = { path = \"$ROOT/saga-runtime\", default-features = false }
$COMMON" "$TOOL
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    SagaServer::builder().keys(KeyRing::from_env(\"SAGA_KEYS\")?).tool(deploy).build()?.serve_stdio().await?;
    Ok(())
}" ;;
    rmcp-http) make_crate rmcp-http "rmcp = { version = \"$RMCP_VERSION\", features = [\"server\", \"macros\", \"transport-streamable-http-server\"] }
axum = \"0.8\"
$COMMON" "$RMCP_TOOL
use rmcp::transport::streamable_http_server::{StreamableHttpService, session::local::LocalSessionManager};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let service = StreamableHttpService::new(|| Ok(Deployer::new()), LocalSessionManager::default().into(), Default::default());
    let router = axum::Router::new().nest_service(\"/mcp\", service);
    let listener = tokio::net::TcpListener::bind(\"127.0.0.1:8080\").await?;
    axum::serve(listener, router).await?;
    Ok(())
}" ;;
    rmcp-stdio) make_crate rmcp-stdio "rmcp = { version = \"$RMCP_VERSION\", features = [\"server\", \"macros\", \"transport-io\"] }
$COMMON" "$RMCP_TOOL
use rmcp::ServiceExt;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    Deployer::new().serve(rmcp::transport::stdio()).await?.waiting().await?;
    Ok(())
}" ;;
    saga-cli)
      # What `cargo install --path saga-cli` resolves, downloaded now.
      (cd "$ROOT/saga-cli" && cargo fetch --quiet) ;;
    quickstart)
      rm -rf "$WORK/quickstart"
      git clone --quiet "$ROOT" "$WORK/quickstart"
      (cd "$WORK/quickstart" && cargo fetch --quiet) ;;
    *) echo "bench-first-build: unknown crate $1" >&2; exit 2 ;;
  esac
}

build() {
  local name=$1 target="$WORK/$1-target" log="$WORK/$1.log" args=()
  rm -rf "$target"
  [ "$name" = quickstart ] && args=(--example quickstart)
  local start end
  start=$(date +%s.%N)
  local build=(cargo build --offline "${args[@]}") dir="$WORK/$name"
  if [ "$name" = saga-cli ]; then
    build=(cargo install --offline --path "$ROOT/saga-cli" --root "$WORK/saga-cli-root" --force)
    dir=$ROOT
  fi
  (cd "$dir" && CARGO_TARGET_DIR=$target "${build[@]}" >"$log" 2>&1) || {
    echo "bench-first-build: $name failed to build; see $log" >&2; tail -20 "$log" >&2; exit 1; }
  end=$(date +%s.%N)
  local crates
  crates=$(grep -c "^ *Compiling " "$log" || true)
  printf '%-11s %7.1f s  %4d crates compiled\n' "$name" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "$crates"
  rm -rf "$target"
}

for name in "${which[@]}"; do prepare "$name"; done
echo "first build, cold (cargo build, debug; $(nproc) cores; $(rustc --version))"
for name in "${which[@]}"; do build "$name"; done
