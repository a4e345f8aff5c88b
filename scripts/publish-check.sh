#!/usr/bin/env bash
# The four published crates package and build as crates.io would build them: each from
# its packaged files alone, saga-runtime against the packaged saga-macros and saga-wire,
# saga-cli against the packaged saga-wire (`cargo publish --dry-run` of the workspace's
# crates at once).
set -euo pipefail
cd "$(dirname "$0")/.."
# Cargo treats a registry crate of one version as never changing: it reuses an earlier
# run's unpacked copy and its build. Both go, and the check builds in a target directory
# of its own, so that what is verified is this tree's code.
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/saga-{macros,wire,runtime,cli}-* \
  "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/-*/saga-{macros,wire,runtime,cli}-* \
  target/package target/publish-check
# Its build is a second copy of every dependency: gone when the check ends, passed or not.
trap 'rm -rf target/publish-check' EXIT
CARGO_TARGET_DIR=target/publish-check cargo publish --dry-run --allow-dirty --quiet -p saga-macros -p saga-wire -p saga-runtime -p saga-cli
for crate in saga-macros saga-wire saga-runtime saga-cli; do
  files=$(cargo package --list --allow-dirty --quiet -p "$crate")
  for needed in LICENSE-MIT LICENSE-APACHE README.md Cargo.toml; do
    grep -qx "$needed" <<<"$files" || { echo "publish-check: $crate's package lacks $needed" >&2; exit 1; }
  done
done
echo "publish-check: saga-macros, saga-wire, saga-runtime and saga-cli package and build"
