#!/usr/bin/env bash
# The test command: everything `cargo test --workspace` needs besides Rust, then the tests,
# then the OpenTelemetry ones (feature `otel`).
# The stores' tests run against a real redis-server and a real postgres; they are
# installed here when missing (Debian's packages, as root or through sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

# `scripts/test.sh --quick`: the user-facing paths in a few minutes (README, "Tests"):
# the runtime's own tests and saga-wire's (the token format, the key ring, the engine, the stores in memory, the
# layering rules) and the tools' behaviour as a client meets it (forms, samples, agent
# loops, JSON state, kept states, advice, every example tool), no server processes and no
# database. The full suite below is the one CI runs.
if [[ "${1:-}" == "--quick" ]]; then
  shift
  cargo test -p saga-wire -p saga-runtime --lib --test sealing --test layers "$@"
  exec cargo test -p saga-workspace --test tools "$@"
fi

# Debian's packages for the servers the store tests start: redis-server, and postgres
# (initdb and the server, in /usr/lib/postgresql/*/bin).
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  need+=(postgresql)
fi
if [[ ${#need[@]} -gt 0 ]]; then
  echo "test.sh: installing ${need[*]} (for the stores' tests)" >&2
  sudo_=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || {
      echo "test.sh: ${need[*]} missing and this user cannot install them; run: apt-get install ${need[*]}" >&2
      exit 2
    }
    sudo_="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo_ apt-get update -qq >/dev/null
  # The package's own cluster is not needed: the tests start clusters of their own.
  $sudo_ apt-get install -y -qq "${need[@]}" >/dev/null
fi

cargo test --workspace "$@"

# OpenTelemetry end to end (feature `otel`, off in the build above): the examples built
# with it export to a real OTLP receiver the test starts, driven by saga's client and the
# official TypeScript one (installed by tests/clients/run.sh --install-only, npm). Both
# builds of the examples stay in target/debug/deps; the last one built is the one in
# target/debug/examples.
cargo test -p saga-runtime --features otel --doc -- guide::Observability otel::
cargo build --quiet -p saga-workspace --features otel --examples
exec cargo test -p saga-workspace --features otel --test otel "$@"
