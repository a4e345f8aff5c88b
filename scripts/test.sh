#!/usr/bin/env bash
# The test command: everything `cargo test --workspace` needs besides Rust, then the tests.
# The single-use store's tests run against a real redis-server; it is installed here when
# missing (Debian's package, as root or through sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v redis-server >/dev/null 2>&1; then
  echo "test.sh: installing redis-server (for the single-use store's tests)" >&2
  sudo_=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || {
      echo "test.sh: redis-server is missing and this user cannot install it; run: apt-get install redis-server" >&2
      exit 2
    }
    sudo_="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo_ apt-get update -qq >/dev/null
  $sudo_ apt-get install -y -qq redis-server >/dev/null
fi

exec cargo test --workspace "$@"
