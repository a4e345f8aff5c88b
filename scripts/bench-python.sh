#!/usr/bin/env bash
# Deploy saga vs the official MCP Python SDK: server CPU per complete three-round saga.
#
# Starts `target/release/examples/deploy` (saga) and `benches/python/server.py` (the same
# tool written with the Python SDK's documented MRTR API: `Resolve` + `Elicit`/`Sample`,
# `requestState` sealed by `MCPServer`'s `RequestStateBoundary`, stateless Streamable
# HTTP on uvicorn, one worker process), drives both with the same driver
# (`benches/python/drive.py`) in the same run, saga first, each after a warm-up, and
# reports the server process's CPU time (utime + stime of all its threads, from
# /proc/PID/stat) per completed saga, and the ratio Python / saga.
#
# The Python side runs from a venv the script creates outside the repo, in
# ${SAGA_BENCH_CACHE:-$HOME/.cache/saga-bench}/venv, from benches/python/requirements.txt.
#
# Environment: SAGAS (3000 per measurement for saga), PY_SAGAS (default SAGAS),
# CONCURRENCY (16 virtual users), WARMUP (300 sagas before each measurement),
# TRIALS (1; with more, the servers alternate and the ratio uses the medians),
# PIN (1 when the machine has 2+ CPUs: server on CPU 0, driver on CPU 1), PYTHON (python3),
# UVICORN_PLAIN (1: the Python server on asyncio + h11 instead of uvloop + httptools).
#
# Exits non-zero only on errors (a failed saga, a server that does not start), never
# because of the ratio.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

CACHE="${SAGA_BENCH_CACHE:-$HOME/.cache/saga-bench}"
VENV="$CACHE/venv"
REQUIREMENTS="$ROOT/benches/python/requirements.txt"
SAGAS="${SAGAS:-3000}"
PY_SAGAS="${PY_SAGAS:-$SAGAS}"
CONCURRENCY="${CONCURRENCY:-16}"
WARMUP="${WARMUP:-300}"
TRIALS="${TRIALS:-1}"
PYTHON="${PYTHON:-python3}"
if [ -z "${PIN:-}" ]; then
  if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then PIN=1; else PIN=0; fi
fi
if [ "$PIN" = 1 ]; then
  SERVER_CPU=(taskset -c 0)
  DRIVER_CPU=(taskset -c 1)
else
  SERVER_CPU=()
  DRIVER_CPU=()
fi
SAGA_KEY=0707070707070707070707070707070707070707070707070707070707070707
LOGS="$(mktemp -d)"
SERVER_PID=""

cleanup() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$LOGS"
}
trap cleanup EXIT

say() { echo "bench-python: $*" >&2; }

# --- the venv -----------------------------------------------------------------------
mkdir -p "$CACHE"
STAMP="$VENV/.requirements.sha256"
WANT="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
  say "creating $VENV from benches/python/requirements.txt"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$REQUIREMENTS"
  echo "$WANT" >"$STAMP"
fi
PY="$VENV/bin/python"
export UVICORN_PLAIN="${UVICORN_PLAIN:-0}"
MCP_VERSION="$("$PY" -c 'import importlib.metadata as m; print(m.version("mcp"))')"
UVICORN_VERSION="$("$PY" -c 'import importlib.metadata as m; print(m.version("uvicorn"))')"
PY_VERSION="$("$PY" -c 'import platform; print(platform.python_version())')"

# --- the saga server --------------------------------------------------------------------
say "building the deploy example (release)"
cargo build --release -p saga-workspace --example deploy --quiet
DEPLOY="$ROOT/target/release/examples/deploy"

free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# cpu_ticks PID: utime + stime (clock ticks) of the whole process, all threads.
cpu_ticks() {
  # Fields after the ")" that closes the command name: state is field 3, utime 14, stime 15.
  sed -e 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}
TICK_US=$((1000000 / $(getconf CLK_TCK)))

# start_server NAME: starts it on a free port, sets SERVER_PID and URL.
start_server() {
  local name="$1" port log
  port="$(free_port)"
  log="$LOGS/$name.log"
  case "$name" in
    saga)
      SAGA_KEYS="$SAGA_KEY" "${SERVER_CPU[@]}" "$DEPLOY" --http "127.0.0.1:$port" >"$log" 2>&1 &
      ;;
    python)
      "${SERVER_CPU[@]}" "$PY" "$ROOT/benches/python/server.py" "$port" >"$log" 2>&1 &
      ;;
  esac
  SERVER_PID=$!
  URL="http://127.0.0.1:$port/mcp"
  for _ in $(seq 1 150); do
    if grep -q "listening on" "$log"; then break; fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      say "$name server exited at start-up:"; cat "$log" >&2; exit 1
    fi
    sleep 0.1
  done
  grep -q "listening on" "$log" || { say "$name server did not start"; cat "$log" >&2; exit 1; }
  # The port is bound once the first saga completes.
  for _ in $(seq 1 50); do
    if "$PY" "$ROOT/benches/python/drive.py" "$URL" --sagas 1 --concurrency 1 >/dev/null 2>"$LOGS/probe"; then
      return 0
    fi
    sleep 0.2
  done
  say "$name server does not complete a saga:"; cat "$LOGS/probe" "$log" >&2; exit 1
}

stop_server() {
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

drive() { # drive N -> JSON line
  "${DRIVER_CPU[@]}" "$PY" "$ROOT/benches/python/drive.py" "$URL" --sagas "$1" --concurrency "$CONCURRENCY"
}

# measure NAME N: one warmed-up measurement; prints "name sagas sagas_per_s cpu_us_per_saga keys".
measure() {
  local name="$1" n="$2" before after report
  start_server "$name"
  drive "$WARMUP" >/dev/null || { say "$name warm-up failed"; cat "$LOGS/$name.log" >&2; exit 1; }
  before="$(cpu_ticks "$SERVER_PID")"
  report="$(drive "$n")" || { say "$name measurement failed"; cat "$LOGS/$name.log" >&2; exit 1; }
  after="$(cpu_ticks "$SERVER_PID")"
  stop_server
  "$PY" - "$name" "$before" "$after" "$TICK_US" "$report" <<'EOF'
import json, sys
name, before, after, tick_us, report = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), json.loads(sys.argv[5])
cpu_us = (after - before) * tick_us
print(name, report["sagas"], report["sagas_per_s"], round(cpu_us / report["sagas"], 1), ",".join(report["input_request_keys"]))
EOF
}

say "mcp $MCP_VERSION, uvicorn $UVICORN_VERSION (UVICORN_PLAIN=$UVICORN_PLAIN), Python $PY_VERSION, saga at $(git rev-parse --short HEAD); SAGAS=$SAGAS PY_SAGAS=$PY_SAGAS CONCURRENCY=$CONCURRENCY WARMUP=$WARMUP TRIALS=$TRIALS PIN=$PIN"
RESULTS="$LOGS/results"
: >"$RESULTS"
for trial in $(seq 1 "$TRIALS"); do
  say "trial $trial/$TRIALS: saga"
  measure saga "$SAGAS" >>"$RESULTS"
  tail -n 1 "$RESULTS" >&2
  say "trial $trial/$TRIALS: python"
  measure python "$PY_SAGAS" >>"$RESULTS"
  tail -n 1 "$RESULTS" >&2
done

"$PY" - "$RESULTS" "$MCP_VERSION" "$UVICORN_VERSION" "$PY_VERSION" "$CONCURRENCY" "$PIN" "$UVICORN_PLAIN" <<'EOF'
import statistics, sys
path, mcp_version, uvicorn_version, py_version, concurrency, pin, plain = sys.argv[1:]
rows = [line.split() for line in open(path) if line.strip()]
by = {"saga": [], "python": []}
for name, sagas, rate, cpu, keys in rows:
    by[name].append((int(sagas), float(rate), float(cpu), keys))
med = {k: (statistics.median(r[1] for r in v), statistics.median(r[2] for r in v)) for k, v in by.items()}
ratio = med["python"][1] / med["saga"][1]
labels = {
    "saga": "saga (`examples/deploy`, release)",
    "python": f"Python SDK `mcp` {mcp_version} (`Resolve` + `RequestStateBoundary`, uvicorn {uvicorn_version} {'asyncio + h11' if plain == '1' else 'uvloop + httptools'}, 1 worker)",
}
print()
print(f"Concurrency {concurrency}, pinned server/driver CPUs: {'yes' if pin == '1' else 'no'}; Python {py_version}.")
print()
print("| server | sagas | sagas/s | server CPU µs/saga | ratio (Python CPU / saga CPU) |")
print("| --- | ---: | ---: | ---: | ---: |")
for name in ("saga", "python"):
    for i, (sagas, rate, cpu, _) in enumerate(by[name]):
        r = "1.0×" if name == "saga" else f"{cpu / med['saga'][1]:.1f}×"
        trial = f" (trial {i + 1})" if len(by[name]) > 1 else ""
        print(f"| {labels[name]}{trial} | {sagas} | {rate:.0f} | {cpu:.0f} | {r} |")
if any(len(v) > 1 for v in by.values()):
    print(f"| median saga | | {med['saga'][0]:.0f} | {med['saga'][1]:.0f} | |")
    print(f"| median Python | | {med['python'][0]:.0f} | {med['python'][1]:.0f} | {ratio:.1f}× |")
print()
print(f"inputRequests keys: saga {by['saga'][0][3]}; Python {by['python'][0][3]}")
print(f"mcp (Python SDK) version: {mcp_version}")
print(f"Python server CPU per saga / saga server CPU per saga: {ratio:.1f}× "
      f"({'meets' if ratio >= 20 else 'does not meet'} the >= 20x target)")
EOF
