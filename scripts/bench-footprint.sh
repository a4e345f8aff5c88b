#!/usr/bin/env bash
# What one saga costs the deploy example's server in user space, counted, not timed:
# instructions, simulated L1 instruction and data cache misses, and mispredicted indirect
# branches per saga, for this build and, given a commit, that commit's build of the same
# example. The load generator's timings move with the machine (BENCHMARKS.md: the place
# bias of a paired trial is 3-5 %); these counts do not, so two builds a few percent apart
# can be told apart in one run.
#
#   bash scripts/bench-footprint.sh              # this build
#   bash scripts/bench-footprint.sh 2d2b4dd      # and 2d2b4dd's, with the ratios
#   SAGA_BIN=A BASELINE_BIN=B bash scripts/bench-footprint.sh   # two given binaries
#   SAGA_ENV="OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318" SAGA_BIN=A BASELINE_BIN=B …
#                                   # the first binary with these variables (a traced build
#                                   # exporting, sampling), the baseline without them
#   DRIVE_ARGS='--meta {"progressToken":"p"}' …   # every request asks for progress
#
# Each server runs under callgrind (cache and branch simulation: 32 KiB 8-way L1s), is
# warmed up with 40 sagas, has its counters zeroed, serves SAGAS (400) sagas from 16
# keep-alive clients (benches/python/drive.py; the client's own cost is not counted), and
# is dumped. The kernel's share (reading and writing the socket, waking the client) is
# not counted: `http_load` measures it. KEEP=DIR keeps each build's profile there
# (`s0.callgrind` this build, `s1.callgrind` the commit's) for `callgrind_annotate`.
# Needs valgrind and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "bench-footprint: valgrind is not installed" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench-footprint: python3 is not installed" >&2; exit 1; }
sagas=${SAGAS:-400}

if [ -n "${SAGA_BIN:-}" ]; then
  # SAGA_BIN=PATH [BASELINE_BIN=PATH]: these binaries as they are (two builds of the same
  # source with other features, say), nothing built.
  bins=("$SAGA_BIN")
  names=("$(basename "$SAGA_BIN")")
else
  cargo build --release -q -p saga-workspace --example deploy
  bins=("$PWD/target/release/examples/deploy")
  names=("$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo '+changes')")
fi
if [ -n "${BASELINE_BIN:-}" ]; then
  bins+=("$BASELINE_BIN")
  names+=("$(basename "$BASELINE_BIN")")
elif [ -n "${1:-}" ]; then
  rev=$(git rev-parse --short "$1")
  tree="target/bench-worktrees/$rev"
  [ -d "$tree" ] || git worktree add --detach -f "$tree" "$rev" >/dev/null
  (cd "$tree" && CARGO_TARGET_DIR="$PWD/../target-$rev" cargo build --release -q -p saga-workspace --example deploy)
  bins+=("$PWD/target/bench-worktrees/target-$rev/release/examples/deploy")
  names+=("$rev")
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
key=$(python3 -c 'print("07" * 32)')
port=$((20000 + RANDOM % 20000))

count() { # binary name [VAR=VALUE ...] -> "Ir I1mr D1mr D1mw Bim" per saga
  local bin=$1 name=$2 out="$work/$2"
  shift 2
  env "$@" SAGA_KEYS=$key valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes \
    --callgrind-out-file="$out.%p" "$bin" --http "127.0.0.1:$port" >"$out.log" 2>&1 &
  local vg=$!
  for _ in $(seq 1 300); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  local url="http://127.0.0.1:$port/mcp"
  local drive=()
  [ -z "${DRIVE_ARGS:-}" ] || read -r -a drive <<<"$DRIVE_ARGS"
  python3 benches/python/drive.py "$url" --sagas 40 --concurrency 4 "${drive[@]}" >/dev/null
  callgrind_control -z "$vg" >/dev/null 2>&1
  python3 benches/python/drive.py "$url" --sagas "$sagas" --concurrency 16 "${drive[@]}" >/dev/null
  callgrind_control -d "$vg" >/dev/null 2>&1
  kill "$vg"; wait "$vg" 2>/dev/null || true
  port=$((port + 1))
  [ -z "${KEEP:-}" ] || { mkdir -p "$KEEP"; cp "$out".*.1 "$KEEP/$name.callgrind"; }
  # The dump after the load (`.1`), not the one at exit.
  python3 - "$out".*.1 "$sagas" <<'EOF'
import sys
lines = open(sys.argv[1]).read().splitlines()
events = next(l for l in lines if l.startswith("events:")).split()[1:]
totals = next(l for l in lines if l.startswith(("summary:", "totals:"))).split()[1:]
value = dict(zip(events, map(int, totals)))
print(" ".join(str(round(value.get(e, 0) / int(sys.argv[2]))) for e in ["Ir", "I1mr", "D1mr", "D1mw", "Bim"]))
EOF
}

printf '%-16s %10s %8s %8s %8s %8s   (per saga)\n' build Ir I1mr D1mr D1mw Bim
first=()
for i in "${!bins[@]}"; do
  extra=()
  # Only the first binary runs with SAGA_ENV (split on spaces: VAR=VALUE words).
  if [ "$i" = 0 ] && [ -n "${SAGA_ENV:-}" ]; then read -r -a extra <<<"$SAGA_ENV"; fi
  read -r -a c <<<"$(count "${bins[$i]}" "s$i" "${extra[@]}")"
  printf '%-16s %10s %8s %8s %8s %8s\n' "${names[$i]}" "${c[@]}"
  if [ "$i" = 0 ]; then first=("${c[@]}"); else
    printf '%-16s' "${names[0]} ÷ ${names[$i]}"
    for j in 0 1 2 3 4; do printf ' %8s' "$(python3 -c "print(f'{${first[$j]}/max(${c[$j]},1):.3f}')")"; done
    echo
  fi
done
