#!/usr/bin/env bash
# Builds the guide (docs/guide, an mdBook) into docs/guide/book, installing mdBook (pinned)
# when it is missing. Every chapter must also be included in saga-runtime/src/guide.rs,
# so that its Rust code blocks compile and run as doctests: `cargo test --workspace`
# (scripts/test.sh) runs them, and `cargo test -p saga-runtime --doc guide` runs them alone.
set -euo pipefail
cd "$(dirname "$0")/.."

MDBOOK_VERSION=0.5.4
if [ "$(mdbook --version 2>/dev/null)" != "mdbook v$MDBOOK_VERSION" ]; then
  echo "guide-check: installing mdbook $MDBOOK_VERSION (cargo install, a few minutes)" >&2
  cargo install mdbook --version "$MDBOOK_VERSION" --locked --no-default-features --quiet
fi

missing=0
for chapter in docs/guide/src/*.md; do
  name=$(basename "$chapter")
  [ "$name" = SUMMARY.md ] && continue
  grep -q "docs/guide/src/$name\"" saga-runtime/src/guide.rs || {
    echo "guide-check: $chapter is not included in saga-runtime/src/guide.rs, so its code is not tested" >&2
    missing=1
  }
  grep -q "($name)" docs/guide/src/SUMMARY.md || {
    echo "guide-check: $chapter is not listed in docs/guide/src/SUMMARY.md" >&2
    missing=1
  }
done
[ "$missing" -eq 0 ] || exit 1

rm -rf docs/guide/book
mdbook build docs/guide
test -f docs/guide/book/index.html || { echo "guide-check: mdbook wrote no docs/guide/book/index.html" >&2; exit 1; }
echo "guide-check: the guide builds (docs/guide/book), and every chapter's code is a doctest"
