#!/usr/bin/env bash
# Runs each cargo-fuzz target for a while (default 20 s each; FUZZ_SECONDS to change) and
# fails on any crash. cargo fuzz needs nightly-only compiler flags (sanitizers); the
# machine has one stable toolchain, so RUSTC_BOOTSTRAP lets it use them.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

seconds="${FUZZ_SECONDS:-20}"
export RUSTC_BOOTSTRAP=1

if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "fuzz.sh: installing cargo-fuzz" >&2
  cargo install cargo-fuzz --locked --quiet
fi

targets=(open_token handle_request http_router)
for target in "${targets[@]}"; do
  corpus="corpus/$target"
  mkdir -p "$corpus"
  echo "fuzz.sh: $target for ${seconds}s" >&2
  log="$(mktemp)"
  if ! cargo fuzz run -O "$target" "$corpus" -- -max_total_time="$seconds" -print_final_stats=1 >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "FAIL $target"
    exit 1
  fi
  runs=$(grep -Eo 'Done [0-9]+ runs' "$log" | tail -n 1 | grep -Eo '[0-9]+' || echo "?")
  echo "PASS $target: $runs executions in ${seconds}s, no crash"
  rm -f "$log"
done
