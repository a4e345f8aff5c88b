#!/usr/bin/env bash
# Builds the README's "One tool" snippets as a user's own crate would: a fresh package
# whose [dependencies] are the README's (its git dependency on saga-runtime pointed at
# this repository's crate), whose main.rs is the tool, then the server. Fails if either no
# longer compiles, or the first tool's test fails.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$ROOT/target/readme-check
rm -rf "$WORK" && mkdir -p "$WORK/src"

# The n-th fenced block of a language in the README.
block() {
  awk -v lang="$1" -v want="$2" '
    /^```/ { if (inside) { inside = 0; next } if ($0 == "```" lang) { n++; if (n == want) { inside = 1; next } } }
    inside { print }
  ' "$ROOT/README.md"
}

{
  printf '[package]\nname = "readme-check"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n[workspace]\n\n'
  # What a user writes (a git dependency until the crate is published), pointed at this
  # repository's crate.
  block toml 1 | sed "s#^saga-runtime = { git = \"https://github.com/saga-rs/saga\" }#saga-runtime = { path = \"$ROOT/saga-runtime\" }#"
} >"$WORK/Cargo.toml"
grep -q "^saga-runtime = { path = \"$ROOT/saga-runtime\" }" "$WORK/Cargo.toml" || {
  echo "readme-check: the README's [dependencies] lost its line saga-runtime = { git = \"https://github.com/saga-rs/saga\" }" >&2; exit 1; }
! grep -q "saga-macros" "$WORK/Cargo.toml" || {
  echo "readme-check: the README's [dependencies] names saga-macros; saga-runtime re-exports the macros" >&2; exit 1; }

{
  block rust 1            # the tool
  echo
  echo '#[tokio::main]'
  echo 'async fn main() -> anyhow::Result<()> {'
  block rust 2 | sed 's/^/    /'   # the server, which ends with `.await?;`
  echo '    Ok(())'
  echo '}'
} >"$WORK/src/main.rs"
grep -q "saga_tool" "$WORK/src/main.rs" && grep -q "SagaServer::builder" "$WORK/src/main.rs" || {
  echo "readme-check: the README's snippets moved; update scripts/readme-check.sh" >&2; exit 1; }

# No warning either, as a binary crate and as its test build: a user's first build of the
# README's tool once warned `struct Target is never constructed`.
for build in "check" "test --no-run"; do
  # shellcheck disable=SC2086
  warnings=$(CARGO_TARGET_DIR=$ROOT/target cargo $build --manifest-path "$WORK/Cargo.toml" --message-format short 2>&1 |
    grep -E "^src/.*warning" || true)
  [ -z "$warnings" ] || { echo "readme-check: the README's crate warns (cargo $build):" >&2; echo "$warnings" >&2; exit 1; }
done
grep -q "saga_runtime::testing" "$WORK/src/main.rs" || {
  echo "readme-check: the README's first tool lost its test" >&2; exit 1; }
# The tool's own test, written with saga_runtime::testing, runs as a user's `cargo test`.
CARGO_TARGET_DIR=$ROOT/target cargo test --quiet --manifest-path "$WORK/Cargo.toml" 2>&1 | tail -n 3
test "${PIPESTATUS[0]}" -eq 0 || { echo "readme-check: the README tool's test fails" >&2; exit 1; }
echo "readme-check: the README's [dependencies], tool and server compile, and the tool's test passes"
