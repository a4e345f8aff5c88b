#!/usr/bin/env bash
# The deploy saga under a client's load, every server its own process pinned to one core
# (saga-runtime/benches/http_load.rs): saga, the hand-written rmcp server and the floor,
# and, given a commit, that commit's build of the same example in the same run, paired.
#
#   bash scripts/bench-http.sh              # saga, rmcp, floor
#   bash scripts/bench-http.sh 2d2b4dd      # and 2d2b4dd's deploy example, paired with saga
#
# TRIALS, SECONDS, VUS, CLIENT=reqwest pass through to the bench. The other commit is
# built once in a worktree under target/bench-worktrees/ (release, its own target dir).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p saga-workspace --example deploy
if [ -n "${1:-}" ]; then
  rev=$(git rev-parse --short "$1")
  tree="target/bench-worktrees/$rev"
  if [ ! -d "$tree" ]; then
    git worktree add --detach -f "$tree" "$rev" >/dev/null
  fi
  (cd "$tree" && CARGO_TARGET_DIR="$PWD/../target-$rev" cargo build --release -q -p saga-workspace --example deploy)
  export BASELINE_BIN="$PWD/target/bench-worktrees/target-$rev/release/examples/deploy"
  echo "base: $rev ($(git log -1 --format=%s "$rev" | cut -c1-70))"
fi
echo "saga: $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' with uncommitted changes')"
cargo bench -q -p saga-runtime --bench http_load
