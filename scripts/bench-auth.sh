#!/usr/bin/env bash
# What authorization costs a request: the deploy example's first round under load from a
# separate process (wrk, one thread pinned to core 1, 8 connections), paired and
# alternating, 10 s each: without authorization, without it but sending the same bearer
# token (the default principal digests the header), and behind `serve::auth` with a JWT
# of a real oidc-provider (its keys fetched once, the token verified once and kept).
#
#   scripts/bench-auth.sh [PAIRS]      # default 3; installs wrk and oidc-provider if missing
set -euo pipefail
cd "$(dirname "$0")/.."
pairs="${1:-3}"
command -v wrk >/dev/null || { apt-get update -qq >/dev/null; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
cache="${SAGA_OIDC_CACHE:-$HOME/.cache/saga-oidc}"
mkdir -p "$cache"
cp tests/auth/oidc/package.json tests/auth/oidc/server.mjs "$cache/"
[ -d "$cache/node_modules/oidc-provider" ] || (cd "$cache" && npm install --no-audit --no-fund --loglevel=error)
cargo build --release --quiet -p saga-workspace --example deploy
bin=target/release/examples/deploy
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
as_port=$(free_port); plain_port=$(free_port); auth_port=$(free_port)
(cd "$cache" && exec node server.mjs "$as_port") >/dev/null 2>&1 &
as_pid=$!
issuer="http://127.0.0.1:$as_port"
keys=$(printf '42%.0s' $(seq 32))
SAGA_KEYS=$keys "$bin" --http "127.0.0.1:$plain_port" >/dev/null 2>&1 &
plain_pid=$!
SAGA_KEYS=$keys SAGA_AUTH_ISSUER=$issuer SAGA_AUTH_RESOURCE="http://127.0.0.1:$auth_port/mcp" \
  "$bin" --http "127.0.0.1:$auth_port" >/dev/null 2>&1 &
auth_pid=$!
trap 'kill $as_pid $plain_pid $auth_pid 2>/dev/null || true' EXIT
sleep 2
token=$(python3 - "$issuer" "http://127.0.0.1:$auth_port/mcp" <<'PY'
import base64, json, sys, urllib.parse, urllib.request
issuer, resource = sys.argv[1], sys.argv[2]
body = urllib.parse.urlencode({"grant_type": "client_credentials", "scope": "tools:deploy", "resource": resource}).encode()
request = urllib.request.Request(issuer + "/token", data=body)
request.add_header("authorization", "Basic " + base64.b64encode(b"saga-tests:secret").decode())
print(json.load(urllib.request.urlopen(request))["access_token"])
PY
)
echo "pair variant requests/s"
for pair in $(seq "$pairs"); do
  for variant in plain plain+token auth; do
    case $variant in
      plain) port=$plain_port; auth="" ;;
      plain+token) port=$plain_port; auth="Bearer $token" ;;
      auth) port=$auth_port; auth="Bearer $token" ;;
    esac
    out=$(AUTH="$auth" taskset -c 1 wrk -t1 -c8 -d10s -s benches/auth/first_round.lua "http://127.0.0.1:$port/mcp" 2>&1)
    bad=$(echo "$out" | awk -F': ' '/non-200/ {print $2}')
    [ "$bad" = 0 ] || { echo "$variant: $bad answers were not the first round's" >&2; exit 1; }
    echo "$pair $variant $(echo "$out" | awk '/Requests\/sec/ {print $2}')"
  done
done
