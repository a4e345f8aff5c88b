#!/usr/bin/env bash
# Tests the `saga` CLI against an MCP server saga did not write: tests/clients/ts_server/
# server.mjs, built with the official TypeScript SDK's server package
# (npm @modelcontextprotocol/server, on Node 22 from the npm package `node`).
#
#   bash scripts/cli-ts-server.sh
#
# Over Streamable HTTP and stdio it runs `saga tools` (the tool names must appear) and
# `saga call … --answers FILE` for a tool that elicits a form, one that asks for a sampling
# and a plain one, and checks that the result printed on stdout carries the values of the
# answers file. The calls run on 2026-07-28 (multi round-trip requests: the TS server
# returns input_required) and in a 2025-11-25 session (`--session`: the TS server sends
# elicitation/create and sampling/createMessage during the call).
# A declined form must come back as a result with isError (exit status 1).
#
# Node and the SDK are installed into a cache outside the repository,
# ${SAGA_CLIENTS_CACHE:-$HOME/.cache/saga-clients}/ts_server, and reused while
# package.json and package-lock.json stay the same.
# Prints `PASS|FAIL <name>` per check and `N passed, M failed` last; exits non-zero on any
# failure. Kills the server on exit.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
src="$root/tests/clients/ts_server"
cache="${SAGA_CLIENTS_CACHE:-$HOME/.cache/saga-clients}"
dir="$cache/ts_server"
work="$(mktemp -d "${TMPDIR:-/tmp}/saga-cli-ts-server.XXXXXX")"
call_timeout="${SAGA_CLI_TS_TIMEOUT:-60}"

say() { echo "cli-ts-server: $*" >&2; }
die() { say "$*"; exit 2; }

case "$cache" in
"$root" | "$root"/*) die "the cache $cache must be outside the repository $root" ;;
esac

server_pid=""
passed=0
failed=0
cleanup() {
    if [[ -n "$server_pid" ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [[ "$failed" -eq 0 ]]; then
        rm -rf "$work"
    else
        say "logs: $work"
    fi
}
trap cleanup EXIT

# --- Node 22 and @modelcontextprotocol/server, from package-lock.json ---------------------
node="$dir/node_modules/.bin/node"
stamp="$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [[ ! -x "$node" || "$(cat "$dir/.stamp" 2>/dev/null)" != "$stamp" ]]; then
    say "installing the TypeScript SDK server into $dir"
    command -v npm >/dev/null || die "npm is needed to install the TypeScript SDK server"
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$src/package.json" "$src/package-lock.json" "$dir/"
    if ! (cd "$dir" && npm ci --no-audit --no-fund >"$dir/install.log" 2>&1); then
        cat "$dir/install.log" >&2
        die "npm ci failed"
    fi
    echo "$stamp" >"$dir/.stamp"
fi
node_version="$("$node" --version)" || die "$node does not run"
[[ "$node_version" == v22.* ]] || die "$node is $node_version, not Node 22"
sdk_version="$("$node" -p 'require(process.argv[1]).version' \
    "$dir/node_modules/@modelcontextprotocol/server/package.json")"
# ESM resolves imports next to the importing file, so the server runs from the cache.
cp "$src/server.mjs" "$dir/server.mjs"
say "server: @modelcontextprotocol/server $sdk_version on node $node_version"

# --- saga ----------------------------------------------------------------------------------
(cd "$root" && cargo build -p saga-cli --bin saga --quiet) || die "cargo build -p saga-cli failed"
saga="$root/target/debug/saga"
[[ -x "$saga" ]] || die "missing $saga after the build"

# --- the HTTP server -----------------------------------------------------------------------
"$node" "$dir/server.mjs" 0 >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
url=""
for _ in $(seq 1 300); do
    if url="$(grep -m1 -o 'listening on http://[^[:space:]]*' "$work/server.out")"; then
        url="${url#listening on }"
        break
    fi
    url=""
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
done
if [[ -z "$url" ]]; then
    cat "$work/server.err" >&2
    die "the TS server did not start"
fi
# It answers: a POST gets an HTTP response back (asked with Node's fetch: no curl needed).
answered=0
for _ in $(seq 1 50); do
    if "$node" -e 'fetch(process.argv[1], {method: "POST", headers: {"content-type": "application/json"},
        body: "{}"}).then(() => process.exit(0), () => process.exit(1))' "$url" 2>/dev/null; then
        answered=1
        break
    fi
    sleep 0.1
done
[[ $answered -eq 1 ]] || die "the TS server at $url does not answer"
say "server at $url"
stdio_cmd="$node $dir/server.mjs --stdio"

# --- the answers ---------------------------------------------------------------------------
# Keyed by the TS server's inputRequests keys (2026-07-28) and by saga's session keys
# (2025-11-25, numbered per call).
answers="$work/answers.json"
cat >"$answers" <<'EOF'
{
  "pizza_form": {"action": "accept", "content": {"name": "Ada Lovelace", "size": "large", "slices": 8}},
  "summary": "Rust is fast, safe and a little strict.",
  "elicitation-1": {"name": "Grace Hopper", "size": "small", "slices": 3},
  "sampling-1": "Sessions still carry samplings."
}
EOF
declined="$work/declined.json"
echo '{"pizza_form": "decline"}' >"$declined"

# check NAME WANT_STATUS 'NEEDLE|NEEDLE…' -- saga ARGS…: runs saga, passes when the exit
# status is WANT_STATUS and stdout has every needle (fixed strings, one a line).
check() {
    local name="$1" want="$2" needles="$3"
    shift 4
    local log="$work/$(echo "$name" | tr -c 'A-Za-z0-9_-' '_').log"
    local status=0
    timeout "$call_timeout" "$@" >"$log.out" 2>"$log.err" || status=$?
    local missing=""
    while IFS= read -r needle; do
        [[ -z "$needle" ]] && continue
        grep -qF -- "$needle" "$log.out" || missing+="    missing on stdout: $needle"$'\n'
    done <<<"$(tr '|' '\n' <<<"$needles")"
    if [[ "$status" -eq "$want" && -z "$missing" ]]; then
        echo "PASS $name"
        passed=$((passed + 1))
    else
        echo "FAIL $name"
        failed=$((failed + 1))
        {
            echo "    command: $*"
            echo "    exit status $status, wanted $want"
            printf '%s' "$missing"
            echo "    ---- stdout"
            sed 's/^/    /' "$log.out"
            echo "    ---- stderr"
            sed 's/^/    /' "$log.err"
        } >&2
    fi
}

pizza='Order for Ada Lovelace: a large mushroom pizza cut in 8 slices'
summary='The model says: Rust is fast, safe and a little strict.'
tools='echo — |order_pizza — |summarize — |topping  string  required'

for transport in http stdio; do
    if [[ "$transport" == http ]]; then
        target=("$url")
    else
        target=(--stdio "$stdio_cmd")
    fi
    check "$transport tools" 0 "$tools" -- "$saga" tools "${target[@]}"
    check "$transport 2026-07-28 order_pizza (form elicitation)" 0 \
        "[pizza_form] elicitation (form)|── result after 2 round(s) ──|$pizza" \
        -- "$saga" call "${target[@]}" order_pizza topping=mushroom --answers "$answers"
    check "$transport 2026-07-28 summarize (sampling)" 0 \
        "[summary] sampling (max 60 tokens)|user: Summarize Rust in one sentence.|── result after 2 round(s) ──|$summary" \
        -- "$saga" call "${target[@]}" summarize topic=Rust --answers "$answers"
    check "$transport 2026-07-28 echo (plain)" 0 "── result after 1 round(s) ──|echo: hello from saga" \
        -- "$saga" call "${target[@]}" echo "text=hello from saga"
    check "$transport 2026-07-28 order_pizza declined (isError, exit 1)" 1 \
        "── ERROR (isError: true) after 2 round(s) ──|error: order_pizza: the form was decline, no order" \
        -- "$saga" call "${target[@]}" order_pizza topping=mushroom --answers "$declined"

    # A 2025-11-25 session (`initialize`): the server asks during the call, and saga
    # keys its answers elicitation-N / sampling-N.
    check "$transport 2025-11-25 order_pizza (form elicitation)" 0 \
        "[elicitation-1] elicitation (form)|── result after 1 round(s) ──|Order for Grace Hopper: a small olive pizza cut in 3 slices" \
        -- "$saga" call --session "${target[@]}" order_pizza topping=olive --answers "$answers"
    check "$transport 2025-11-25 summarize (sampling)" 0 \
        "[sampling-1] sampling (max 60 tokens)|── result after 1 round(s) ──|The model says: Sessions still carry samplings." \
        -- "$saga" call --session "${target[@]}" summarize topic=C --answers "$answers"
    check "$transport 2025-11-25 echo (plain)" 0 "echo: plain in a session" \
        -- "$saga" call --session "${target[@]}" echo "text=plain in a session"
done

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
