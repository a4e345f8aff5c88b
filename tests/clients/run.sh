#!/usr/bin/env bash
# Drives the `deploy`, `weather` and `research` examples to completion with two real MCP clients, the
# official TypeScript client (npm @modelcontextprotocol/client, on Node 22 from the npm
# package `node`) and the official Python SDK (PyPI mcp), over Streamable HTTP and stdio.
#
#   tests/clients/run.sh
#
# Everything the clients need is installed into a cache outside the repository,
# ${SAGA_CLIENTS_CACHE:-$HOME/.cache/saga-clients}, and reused while the pinned versions in
# ts/package.json, ts/package-lock.json and python/requirements.txt stay the same.
# Each client runs in both eras: 2026-07-28 (MRTR) and 2025-11-25 (a session opened with
# `initialize`, the server sending its requests during the call); each also drives the
# `migrate` example's task tool through the tasks extension (ts/task.mjs, python/task.py).
# Prints `PASS|FAIL <client> <era> <transport> <example>` per run and `N passed, M failed` last;
# exits non-zero on any failure. Logs of every run stay in a temporary directory, named on
# stderr when something fails (set SAGA_CLIENTS_KEEP_LOGS=1 to keep them anyway).
set -euo pipefail

started=$SECONDS
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${SAGA_CLIENTS_CACHE:-$HOME/.cache/saga-clients}"
logs="$(mktemp -d "${TMPDIR:-/tmp}/saga-clients.XXXXXX")"
run_timeout="${SAGA_CLIENTS_TIMEOUT:-120}"

say() { echo "run.sh: $*" >&2; }
die() { say "$*"; exit 1; }

case "$cache" in
"$root" | "$root"/*) die "the cache $cache must be outside the repository $root" ;;
esac

server_pid=""
failed=0
cleanup() {
    if [[ -n "$server_pid" ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [[ "$failed" -eq 0 && -z "${SAGA_CLIENTS_KEEP_LOGS:-}" ]]; then
        rm -rf "$logs"
    else
        say "logs: $logs"
    fi
}
trap cleanup EXIT

fingerprint() { cat "$@" | sha256sum | cut -d' ' -f1; }

# One installer at a time: test binaries run this script in parallel (tests/otel's tests
# each call `--install-only`), and two installs into one directory remove each other's
# files. The lock is held until both clients are installed; the next caller then finds
# them installed and reuses them.
mkdir -p "$cache"
exec 9>"$cache/.install.lock"
command -v flock >/dev/null || die "flock (util-linux) is needed to install the clients"
flock 9

# --- TypeScript: Node 22 and @modelcontextprotocol/client, from package-lock.json -------
ts_dir="$cache/ts"
ts_node="$ts_dir/node_modules/.bin/node"
ts_stamp="$(fingerprint "$here/ts/package.json" "$here/ts/package-lock.json")"
if [[ ! -x "$ts_node" || "$(cat "$ts_dir/.stamp" 2>/dev/null)" != "$ts_stamp" ]]; then
    say "installing the TypeScript client into $ts_dir"
    command -v npm >/dev/null || die "npm is needed to install the TypeScript client"
    rm -rf "$ts_dir"
    mkdir -p "$ts_dir"
    cp "$here/ts/package.json" "$here/ts/package-lock.json" "$ts_dir/"
    if ! (cd "$ts_dir" && npm ci --no-audit --no-fund >"$ts_dir/install.log" 2>&1); then
        cat "$ts_dir/install.log" >&2
        die "npm ci failed"
    fi
    echo "$ts_stamp" >"$ts_dir/.stamp"
fi
ts_version="$("$ts_node" --version)" || die "$ts_node does not run"
[[ "$ts_version" == v22.* ]] || die "$ts_node is $ts_version, not Node 22"
# ESM resolves imports next to the importing file, so the driver runs from the cache.
cp "$here/ts/drive.mjs" "$here/ts/task.mjs" "$ts_dir/"

# --- Python: a venv with the pinned mcp ---------------------------------------------------
py_dir="$cache/python"
py="$py_dir/venv/bin/python"
py_stamp="$(fingerprint "$here/python/requirements.txt")"
if [[ ! -x "$py" || "$(cat "$py_dir/.stamp" 2>/dev/null)" != "$py_stamp" ]]; then
    say "installing the Python client into $py_dir"
    command -v python3 >/dev/null || die "python3 is needed to install the Python client"
    rm -rf "$py_dir"
    mkdir -p "$py_dir"
    if ! { python3 -m venv "$py_dir/venv" &&
        "$py" -m pip install --disable-pip-version-check -r "$here/python/requirements.txt"; } \
        >"$py_dir/install.log" 2>&1; then
        cat "$py_dir/install.log" >&2
        die "installing mcp failed"
    fi
    echo "$py_stamp" >"$py_dir/.stamp"
fi
py_mcp="$("$py" -c 'import importlib.metadata as m; print(m.version("mcp"))')" || die "$py does not run"
flock -u 9
exec 9>&-
say "clients: @modelcontextprotocol/client on node $ts_version; mcp $py_mcp on $("$py" --version)"
# `run.sh --install-only`: the clients installed (tests/otel drives the TypeScript one),
# their paths printed, nothing run.
if [[ "${1:-}" == --install-only ]]; then
    echo "ts_node=$ts_node"
    echo "ts_dir=$ts_dir"
    echo "py=$py"
    exit 0
fi

# --- The servers ---------------------------------------------------------------------------
say "cargo build --workspace --examples"
(cd "$root" && cargo build --workspace --examples --quiet) || die "cargo build --workspace --examples failed"
bin_dir="$root/target/debug/examples"
for example in deploy weather research migrate; do
    [[ -x "$bin_dir/$example" ]] || die "missing $bin_dir/$example after the build"
done

if [[ -z "${SAGA_KEYS:-}" ]]; then
    SAGA_KEYS="$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"
fi
export SAGA_KEYS

# Starts `$1 --http 127.0.0.1:0` (the OS picks a free port) and sets server_url from its
# `listening on http://ADDR/mcp` line.
start_server() {
    local binary="$1" out="$2" err="$3"
    : >"$out"
    "$binary" --http 127.0.0.1:0 >"$out" 2>"$err" &
    server_pid=$!
    server_url=""
    local waited=0
    while [[ $waited -lt 300 ]]; do
        if server_url="$(grep -m1 -o 'listening on http://[^[:space:]]*' "$out")"; then
            server_url="${server_url#listening on }"
            return 0
        fi
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
        waited=$((waited + 1))
    done
    echo "server did not print 'listening on' (waited ${waited}0 ms)" >>"$err"
    return 1
}

stop_server() {
    if [[ -n "$server_pid" ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    fi
}

client_cmd() {
    case "$1" in
    ts) echo "$ts_node" "$ts_dir/drive.mjs" ;;
    py) echo "$py" "$here/python/drive.py" ;;
    esac
}

# Prints `PASS|FAIL name` for a run whose result is `ok` (1 or 0) and counts it; on a
# failure, the end of its log and the start of the server's stderr (`server_err`, if any).
report() {
    local name="$1" ok="$2" log="$3" server_err="${4:-}"
    if [[ "$ok" -eq 1 ]]; then
        echo "PASS $name"
        passed=$((passed + 1))
        return
    fi
    echo "FAIL $name"
    failed=$((failed + 1))
    {
        echo "---- $name: $log"
        tail -n 30 "$log" 2>/dev/null || true
        if [[ -n "$server_err" ]]; then
            echo "---- server stderr"
            head -n 20 "$server_err" 2>/dev/null || true
        fi
    } | sed 's/^/    /' >&2
}

passed=0
for era in 2026-07-28 2025-11-25; do
for client in ts py; do
    for example in deploy weather research; do
        for transport in http stdio; do
            name="$client $era $transport $example"
            log="$logs/$client-$era-$transport-$example.log"
            ok=1
            read -r -a cmd <<<"$(client_cmd "$client")"
            if [[ "$transport" == http ]]; then
                if start_server "$bin_dir/$example" "$logs/server-$client-$example.out" \
                    "$logs/server-$client-$example.err"; then
                    timeout "$run_timeout" "${cmd[@]}" --http "$server_url" --tool "$example" \
                        --era "$era" >"$log" 2>&1 || ok=0
                else
                    ok=0
                fi
                stop_server
            else
                timeout "$run_timeout" "${cmd[@]}" --stdio "$bin_dir/$example" --tool "$example" \
                    --era "$era" >"$log" 2>&1 || ok=0
            fi
            server_err=""
            [[ "$transport" == http ]] && server_err="$logs/server-$client-$example.err"
            report "$name" "$ok" "$log" "$server_err"
        done
    done
done
done

# --- Tasks: the migrate example's approve_migration, a task that asks a form ----------------
# Each client declares the tasks extension, gets a task from tools/call, polls tasks/get,
# answers the form with tasks/update and reads the completed task's result (task.mjs,
# task.py; the guide's client chapter includes them), in both eras.
for era in 2026-07-28 2025-11-25; do
    for client in ts py; do
        name="$client $era http migrate (a task)"
        log="$logs/$client-$era-task.log"
        ok=1
        case "$client" in
        ts) cmd=("$ts_node" "$ts_dir/task.mjs") ;;
        py) cmd=("$py" "$here/python/task.py") ;;
        esac
        if SAGA_TASKS=memory start_server "$bin_dir/migrate" "$logs/server-task.out" "$logs/server-task.err"; then
            timeout "$run_timeout" "${cmd[@]}" "$server_url" "$era" >"$log" 2>&1 || ok=0
        else
            ok=0
        fi
        stop_server
        report "$name" "$ok" "$log" "$logs/server-task.err"
    done
done

# --- Authorization: the TypeScript client through its own OAuth flow ----------------------
# The deploy example as an OAuth 2.1 resource server (SAGA_AUTH_ISSUER, SAGA_AUTH_RESOURCE)
# in front of a real authorization server (oidc-provider, tests/auth/oidc, installed into
# the cache); the client holds no token: on the 401 it reads the server's protected
# resource metadata, discovers the issuer, takes a client-credentials token for the
# resource, retries, and completes the saga in both eras.
oidc_dir="$cache/oidc"
oidc_stamp="$(fingerprint "$root/tests/auth/oidc/package.json")"
if [[ ! -d "$oidc_dir/node_modules/oidc-provider" || "$(cat "$oidc_dir/.stamp" 2>/dev/null)" != "$oidc_stamp" ]]; then
    say "installing oidc-provider into $oidc_dir"
    rm -rf "$oidc_dir"
    mkdir -p "$oidc_dir"
    cp "$root/tests/auth/oidc/package.json" "$oidc_dir/"
    (cd "$oidc_dir" && npm install --no-audit --no-fund --loglevel=error >"$oidc_dir/install.log" 2>&1) ||
        { cat "$oidc_dir/install.log" >&2; die "npm install of oidc-provider failed"; }
    echo "$oidc_stamp" >"$oidc_dir/.stamp"
fi
cp "$root/tests/auth/oidc/server.mjs" "$oidc_dir/server.mjs"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
oidc_port="$(free_port)"
(cd "$oidc_dir" && exec node server.mjs "$oidc_port") >"$logs/oidc.out" 2>"$logs/oidc.err" &
oidc_pid=$!
for _ in $(seq 1 100); do
    grep -q 'listening on' "$logs/oidc.out" 2>/dev/null && break
    sleep 0.1
done
issuer="http://127.0.0.1:$oidc_port"
for era in 2026-07-28 2025-11-25; do
    name="ts $era http deploy (OAuth: client credentials from a real authorization server)"
    log="$logs/ts-$era-oauth.log"
    ok=1
    port="$(free_port)"
    SAGA_AUTH_ISSUER="$issuer" SAGA_AUTH_RESOURCE="http://127.0.0.1:$port/mcp" \
        "$bin_dir/deploy" --http "127.0.0.1:$port" >"$logs/server-oauth.out" 2>"$logs/server-oauth.err" &
    server_pid=$!
    for _ in $(seq 1 300); do
        grep -q 'listening on' "$logs/server-oauth.out" 2>/dev/null && break
        sleep 0.1
    done
    read -r -a cmd <<<"$(client_cmd ts)"
    timeout "$run_timeout" "${cmd[@]}" --http "http://127.0.0.1:$port/mcp" --tool deploy \
        --era "$era" --oauth "saga-tests:secret@$issuer" >"$log" 2>&1 || ok=0
    # And without a token the same server refuses the call.
    status="$(python3 - "http://127.0.0.1:$port/mcp" <<'PY'
import sys, urllib.request, urllib.error
request = urllib.request.Request(sys.argv[1], method="POST",
    data=b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}',
    headers={"content-type": "application/json", "accept": "application/json, text/event-stream"})
try:
    print(urllib.request.urlopen(request).status)
except urllib.error.HTTPError as error:
    print(error.code)
PY
)"
    [[ "$status" == 401 ]] || { echo "without a token: HTTP $status, not 401" >>"$log"; ok=0; }
    stop_server
    report "$name" "$ok" "$log" "$logs/server-oauth.err"
done
kill "$oidc_pid" 2>/dev/null || true
wait "$oidc_pid" 2>/dev/null || true

# --- A client that declares no sampling, against a server with a model of its own -------
# The deploy and research examples with SAGA_MODEL_URL pointing at a local chat completions
# server (examples/fake_chat_completions.rs, which checks its key; for research it answers
# as a small agent with `tool_calls`): the TypeScript client is asked only the forms, and
# the saga completes.
model_key="sk-clients-$RANDOM"
model_pids=()
for example in deploy research; do
    behaviour=""
    [[ "$example" == research ]] && behaviour=research
    FAKE_MODEL_KEY="$model_key" FAKE_MODEL_BEHAVIOUR="$behaviour" "$bin_dir/fake_chat_completions" \
        >"$logs/model-$example.out" 2>"$logs/model-$example.err" &
    model_pids+=($!)
    model_url=""
    for _ in $(seq 1 100); do
        model_url="$(grep -m1 -o 'http://[^[:space:]]*' "$logs/model-$example.out" 2>/dev/null || true)"
        [[ -n "$model_url" ]] && break
        sleep 0.1
    done
    for era in 2026-07-28 2025-11-25; do
        name="ts $era http $example (no sampling: the server's model answers)"
        log="$logs/ts-$era-$example-model.log"
        ok=1
        read -r -a cmd <<<"$(client_cmd ts)"
        if [[ -n "$model_url" ]] &&
            SAGA_MODEL_URL="$model_url" SAGA_MODEL_KEY="$model_key" SAGA_MODEL=local-model \
                start_server "$bin_dir/$example" "$logs/server-model.out" "$logs/server-model.err"; then
            timeout "$run_timeout" "${cmd[@]}" --http "$server_url" --tool "$example" --era "$era" \
                --no-sampling >"$log" 2>&1 || ok=0
        else
            ok=0
        fi
        stop_server
        report "$name" "$ok" "$log"
    done
done
for pid in "${model_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
done

say "took $((SECONDS - started))s"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
