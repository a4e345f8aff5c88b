#!/usr/bin/env bash
# User-space instructions per request of each e2e server (saga, hand-written rmcp, the
# floor), counted by callgrind: a figure that does not move with the machine's load, which
# the e2e bench's CPU times do (by ±30 % on a shared VM).
#
# Each server runs the deploy saga under callgrind twice, for two lengths of load; the
# server thread's instructions and its responses are read from each run's profile, and the
# difference between the two runs, divided by the difference in responses, is the cost of
# one more request (start-up and the untimed check sagas cancel out). Kernel time is not
# counted, and callgrind's CPU has no SHA extensions, so SHA-256 done in `sha2` costs more
# here than on the machine.
#
# Usage: bash scripts/bench-instructions.sh   (needs valgrind and python3; about 3 minutes
# once the bench is built). SERVERS="saga" counts only the servers named.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v valgrind >/dev/null || { echo "bench-instructions: valgrind is not installed" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench-instructions: python3 is not installed" >&2; exit 1; }

bench=$(cargo bench -p saga-runtime --bench e2e --no-run --message-format=json 2>/dev/null \
    | python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "e2e" and m.get("executable"):
        print(m["executable"])')
[ -x "$bench" ] || { echo "bench-instructions: the e2e bench did not build" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The server thread's instructions and responses in one callgrind run's per-thread files:
# the server is the thread whose profile encodes HTTP responses.
read_run() {
    python3 - "$1" <<'EOF'
import glob, re, sys
best = None
for path in glob.glob(sys.argv[1] + "/cg.out-*"):
    names, calls, current = {}, {}, None
    total = 0
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith(("summary:", "totals:")) and not total:
            total = int(line.split()[1])
        m = re.match(r"^c?fn=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(2):
                names[m.group(1)] = m.group(2)
            current = m.group(1) if line.startswith("cfn") else None
            continue
        m = re.match(r"^calls=(\d+)", line)
        if m and current:
            calls[current] = calls.get(current, 0) + int(m.group(1))
            current = None
    responses = sum(
        count for id, count in calls.items()
        if "role::Server as hyper::proto::h1::Http1Transaction>::encode" in names.get(id, "")
    )
    if responses and (best is None or responses > best[1]):
        best = (total, responses)
if best is None:
    sys.exit("no thread of this run answered HTTP requests")
print(*best)
EOF
}

printf '| server | instructions per request | runs (instructions / responses) |\n|---|---:|---|\n'
declare -A per_request
for server in ${SERVERS:-saga rmcp floor}; do
    runs=()
    for seconds in 2 5; do
        out="$work/$server-$seconds"
        mkdir -p "$out"
        ONLY=$server TRIALS=1 SECONDS=$seconds VUS=4 \
            valgrind --tool=callgrind --separate-threads=yes \
            --callgrind-out-file="$out/cg.out" "$bench" --bench >"$out/log" 2>&1
        runs+=("$(read_run "$out")")
    done
    read -r short_total short_responses <<<"${runs[0]}"
    read -r long_total long_responses <<<"${runs[1]}"
    if [ "$long_responses" -le "$short_responses" ]; then
        echo "bench-instructions: the longer $server run answered no more requests" >&2
        exit 1
    fi
    per=$(( (long_total - short_total) / (long_responses - short_responses) ))
    per_request[$server]=$per
    printf '| %s | %d | %d / %d, %d / %d |\n' "$server" "$per" \
        "$short_total" "$short_responses" "$long_total" "$long_responses"
done
if [ -n "${per_request[saga]:-}" ] && [ -n "${per_request[rmcp]:-}" ] && [ -n "${per_request[floor]:-}" ]; then
    python3 -c "import sys; s, r, f = map(int, sys.argv[1:]); print(f'\nsaga/rmcp {s / r:.3f}, saga/floor {s / f:.3f} (user-space instructions per request)')" \
        "${per_request[saga]}" "${per_request[rmcp]}" "${per_request[floor]}"
fi
