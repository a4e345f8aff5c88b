#!/usr/bin/env bash
# Runs the MCP conformance suite (@modelcontextprotocol/conformance) against
# examples/conformance_server.rs: every server scenario of both protocol eras, 2026-07-28
# (stateless, MRTR) and 2025-11-25 (sessions), and the extension scenarios (the tasks
# extension, `tasks-*`, on 2026-07-28), on the same server.
#
#   scripts/conformance.sh                         # every set, every server scenario
#   SPEC_VERSIONS=2025-11-25 scripts/conformance.sh   # one set ("extensions" for the tasks-*)
#   scripts/conformance.sh caching tools-list      # only these, in each set
#
# Node 22 and the suite are installed once into $SAGA_CONFORMANCE_CACHE (default
# ~/.cache/saga-conformance), outside the repository, with the system's npm. Prints one line
# per scenario and, last, `N passed, M failed`; exits non-zero if a scenario fails that is
# not listed in scripts/conformance-expected-failures.txt (or $SAGA_CONFORMANCE_EXPECTED). The suite's reports (checks.json
# per scenario) and logs go to $SAGA_CONFORMANCE_OUT (default: a fresh temporary directory).
set -euo pipefail

SUITE_VERSION=0.2.0-alpha.12
SPEC_VERSIONS=${SPEC_VERSIONS:-${SPEC_VERSION:-2026-07-28 2025-11-25 extensions}}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${SAGA_CONFORMANCE_CACHE:-$HOME/.cache/saga-conformance}
EXPECTED=${SAGA_CONFORMANCE_EXPECTED:-$ROOT/scripts/conformance-expected-failures.txt}
OUT=${SAGA_CONFORMANCE_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/saga-conformance.XXXXXX")}
NODE=$CACHE/node_modules/node/bin/node
CLI=$CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js
START=$SECONDS
mkdir -p "$OUT"

log() { printf '%s\n' "$*" >&2; }

# ── the suite and Node 22 ─────────────────────────────────────────────────────────────
installed() {
    [[ -x $NODE && -f $CLI ]] &&
        [[ $("$NODE" --version 2>/dev/null) == v22.* ]] &&
        [[ $("$NODE" "$CLI" --version 2>/dev/null) == "$SUITE_VERSION" ]]
}
if ! installed; then
    command -v npm >/dev/null || { log "npm is needed once, to install Node 22 and the suite into $CACHE"; exit 2; }
    log "installing node@22 and @modelcontextprotocol/conformance@$SUITE_VERSION into $CACHE"
    mkdir -p "$CACHE"
    [[ -f $CACHE/package.json ]] || (cd "$CACHE" && npm init -y >/dev/null)
    (cd "$CACHE" && npm install --no-audit --no-fund "node@22" "@modelcontextprotocol/conformance@$SUITE_VERSION" >&2)
    installed || { log "the install in $CACHE did not give Node 22 and the suite $SUITE_VERSION"; exit 2; }
fi

# ── expected failures ─────────────────────────────────────────────────────────────────
# `<scenario> <check id>  # <reason>`: the scenario is an expected failure when every check
# of it that fails is listed.
declare -A REASON=()  # "<scenario> <check>" → reason
declare -A LISTED=()  # scenario → 1
while IFS= read -r line || [[ -n $line ]]; do
    [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
    if [[ ! $line =~ ^[[:space:]]*([^[:space:]#]+)[[:space:]]+([^[:space:]#]+)[[:space:]]*#[[:space:]]*([^[:space:]].*)$ ]]; then
        log "$EXPECTED: '$line' is not '<scenario> <check id>  # <reason>'"
        exit 2
    fi
    name=${BASH_REMATCH[1]} check=${BASH_REMATCH[2]} reason=${BASH_REMATCH[3]}
    if [[ $name == input-required-result-* ]]; then
        log "$EXPECTED: '$name' is a multi round-trip scenario, which may not be an expected failure"
        exit 2
    fi
    REASON["$name $check"]=$reason
    LISTED[$name]=1
done < <([[ -f $EXPECTED ]] && cat "$EXPECTED")

# ── the server ────────────────────────────────────────────────────────────────────────
log "building examples/conformance_server.rs"
(cd "$ROOT" && cargo build --quiet -p saga-workspace --example conformance_server)
SERVER_BIN=${CARGO_TARGET_DIR:-$ROOT/target}/debug/examples/conformance_server

SERVER_LOG=$OUT/server.log
: >"$SERVER_LOG"
SERVER_PID=
stop_server() {
    if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=
}
trap stop_server EXIT
trap 'exit 130' INT TERM

SAGA_KEYS=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n') \
    "$SERVER_BIN" --http 127.0.0.1:0 >"$SERVER_LOG" 2>&1 &
SERVER_PID=$!
URL=
for _ in $(seq 1 300); do
    URL=$(sed -nE 's#^listening on (http://[^[:space:]]+).*#\1#p' "$SERVER_LOG" | head -n 1)
    [[ -n $URL ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { log "the server exited:"; cat "$SERVER_LOG" >&2; exit 2; }
    sleep 0.1
done
[[ -n $URL ]] || { log "the server did not start within 30 s:"; cat "$SERVER_LOG" >&2; exit 2; }
log "server at $URL; reports in $OUT"

# ── the scenarios ─────────────────────────────────────────────────────────────────────
passed=0 failed=0 unexpected=0 expected_failed=0
for SPEC_VERSION in $SPEC_VERSIONS; do
if (($# > 0)); then
    SCENARIOS=("$@")
else
    if [[ $SPEC_VERSION == extensions ]]; then
        # Extension scenarios are on no spec's timeline: listed apart, run without a version.
        mapfile -t SCENARIOS < <("$NODE" "$CLI" list --server |
            sed -nE 's/^[[:space:]]*- ([^[:space:]]+) \[extension\].*/\1/p')
    else
        mapfile -t SCENARIOS < <("$NODE" "$CLI" list --server --spec-version "$SPEC_VERSION" |
            sed -nE 's/^[[:space:]]*- ([^[:space:]]+).*/\1/p')
    fi
    ((${#SCENARIOS[@]} > 0)) || { log "the suite listed no server scenario for $SPEC_VERSION"; exit 2; }
fi
printf '── %s: %s server scenarios\n' "$SPEC_VERSION" "${#SCENARIOS[@]}"
set_passed=$passed set_failed=$failed
mkdir -p "$OUT/$SPEC_VERSION"
for scenario in "${SCENARIOS[@]}"; do
    scenario_log=$OUT/$SPEC_VERSION/$scenario.log
    status=0
    version_args=(--spec-version "$SPEC_VERSION")
    [[ $SPEC_VERSION == extensions ]] && version_args=()
    "$NODE" "$CLI" server --url "$URL" --scenario "$scenario" "${version_args[@]}" \
        -o "$OUT/$SPEC_VERSION/reports" >"$scenario_log" 2>&1 || status=$?
    checks=$(sed -nE 's/^Passed: ([0-9]+)\/([0-9]+), [0-9]+ failed, ([0-9]+) warnings?.*/\1\/\2 checks, \3 warnings/p' \
        "$scenario_log" | tail -n 1)
    checks=${checks:-no checks reported}
    if ((status == 0)) && grep -q '^Passed: ' "$scenario_log"; then
        passed=$((passed + 1))
        if [[ -n ${LISTED[$scenario]+x} ]]; then
            printf 'XPASS %s (%s): listed in %s; remove its line\n' "$scenario" "$checks" "${EXPECTED#"$ROOT"/}"
        else
            printf 'PASS  %s (%s)\n' "$scenario" "$checks"
        fi
        continue
    fi
    failed=$((failed + 1))
    mapfile -t failing < <(sed -E 's/\x1b\[[0-9;]*m//g' "$scenario_log" |
        sed -nE 's/.*\[([^] ]+)[[:space:]]*\][[:space:]]+FAILURE.*/\1/p' | sort -u)
    reasons=() unlisted=()
    for check in "${failing[@]}"; do
        if [[ -n ${REASON["$scenario $check"]+x} ]]; then
            reasons+=("$check: ${REASON["$scenario $check"]}")
        else
            unlisted+=("$check")
        fi
    done
    if ((${#failing[@]} > 0 && ${#unlisted[@]} == 0)); then
        expected_failed=$((expected_failed + 1))
        printf 'XFAIL %s (%s; expected: %s)\n' "$scenario" "$checks" "$(printf '%s; ' "${reasons[@]}" | sed 's/; $//')"
    else
        unexpected=$((unexpected + 1))
        printf 'FAIL  %s (%s, exit %s; failing: %s; log: %s)\n' "$scenario" "$checks" "$status" \
            "$(IFS=,; echo "${unlisted[*]:-none reported}")" "$scenario_log"
    fi
done
printf '── %s: %s passed, %s failed\n' "$SPEC_VERSION" "$((passed - set_passed))" "$((failed - set_failed))"
done

stop_server
printf '%s expected failure(s), %s unexpected; took %ss\n' "$expected_failed" "$unexpected" "$((SECONDS - START))"
printf '%s passed, %s failed\n' "$passed" "$failed"
((unexpected == 0))
