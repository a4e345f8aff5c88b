#!/usr/bin/env bash
# Parses every committed diagram (tests/diagrams/**/*.mmd and the ```mermaid blocks of
# docs/diagrams.md) with Mermaid's own parser, in Node, so that what `#[saga_tool]` emits
# is Mermaid that parses. Installs mermaid and jsdom (pinned in
# scripts/mermaid-check/package.json) into target/mermaid-check the first time.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v node >/dev/null || { echo "mermaid-check: node is needed (Node 20 or later)" >&2; exit 1; }
work=target/mermaid-check
mkdir -p "$work"
cp scripts/mermaid-check/package.json scripts/mermaid-check/check.mjs "$work/"
if [ ! -d "$work/node_modules/mermaid" ] || [ "$work/package.json" -nt "$work/node_modules/.installed" ]; then
  (cd "$work" && npm install --silent --no-audit --no-fund >/dev/null 2>&1) \
    || { echo "mermaid-check: npm install failed" >&2; exit 1; }
  touch "$work/node_modules/.installed"
fi
mapfile -t files < <(find tests/diagrams -name '*.mmd' | sort)
[ -f docs/diagrams.md ] && files+=(docs/diagrams.md)
node "$work/check.mjs" "${files[@]}"
