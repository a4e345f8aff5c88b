#!/usr/bin/env python3
"""Counts the public items of saga-runtime, from rustdoc's JSON (nightly rustdoc).

Usage: python3 scripts/public-items.py [rustdoc.json] [--list]

Without a file, builds it with `cargo +nightly rustdoc` (the published features) into
target/public-items. Counted: every item a user can name (modules, types, traits,
functions, constants, statics, macros, re-exports), every field and variant, and every
method of an inherent or trait impl written in this crate; `#[doc(hidden)]` items are left
out, as rustdoc leaves them out. Impls the compiler or a blanket impl provides are not
counted. Issue 44 asks for these counts before and after trimming the public surface.
"""
import json, os, subprocess, sys

def build():
    target = os.path.join(os.path.dirname(__file__), "..", "target", "public-items")
    subprocess.run(
        ["cargo", "+nightly", "rustdoc", "-q", "-p", "saga-runtime",
         "--features", "redis,sqlite,postgres,openai", "--",
         "-Z", "unstable-options", "--output-format", "json"],
        check=True, env={**os.environ, "CARGO_TARGET_DIR": target})
    return os.path.join(target, "doc", "saga_runtime.json")

def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    path = args[0] if args else build()
    doc = json.load(open(path))
    index = doc["index"]
    counted = {}

    def kind_of(item):
        (kind,) = item["inner"].keys()
        return kind

    def visit(item_id, prefix, seen):
        visit_as(item_id, prefix, None, seen)

    def visit_as(item_id, prefix, alias, seen):
        if (item_id, prefix) in seen or str(item_id) not in index:
            return
        seen.add((item_id, prefix))
        item = index[str(item_id)]
        if item.get("crate_id") != 0:
            return
        kind = kind_of(item)
        inner = item["inner"][kind]
        if not isinstance(inner, dict):
            inner = {}
        name = alias or item.get("name") or ""
        here = f"{prefix}::{name}" if name else prefix
        if kind == "use":
            target = inner.get("id")
            local = target is not None and index.get(str(target), {}).get("crate_id") == 0
            if not local:
                counted.setdefault(("use", inner.get("name")), (f"{prefix}::{inner.get('name')}", "use"))
            elif inner.get("is_glob"):
                module = index[str(target)]["inner"].get("module", {})
                for child in module.get("items", []):
                    visit(child, prefix, seen)
            else:
                visit_as(target, prefix, inner.get("name"), seen)
            return
        if kind == "impl":
            if inner.get("is_synthetic") or inner.get("blanket_impl") is not None:
                return
            trait = inner.get("trait")
            foreign = trait is not None and index.get(str(trait.get("id")), {}).get("crate_id") != 0
            for child in inner.get("items", []):
                if foreign:
                    # Debug, Clone, From, serde's traits...: one entry per impl.
                    counted.setdefault(("impl", item_id), (f"{prefix} impl {trait.get('path')}", "trait_impl"))
                else:
                    visit(child, prefix, seen)
            return
        counted.setdefault(item_id, (here, kind))
        for key in ("items",):
            for child in inner.get(key, []) or []:
                visit(child, here, seen)
        for child in inner.get("variants", []) or []:
            visit(child, here, seen)
        fields = inner.get("kind", {})
        if isinstance(fields, dict):
            plain = fields.get("plain", {})
            if isinstance(plain, dict):
                for child in plain.get("fields", []):
                    visit(child, here, seen)
            for child in fields.get("tuple", []) or []:
                if child is not None:
                    visit(child, here, seen)
            struct = fields.get("struct", {})
            if isinstance(struct, dict):
                for child in struct.get("fields", []):
                    visit(child, here, seen)
        for child in inner.get("impls", []) or []:
            visit(child, here, seen)

    visit_as(doc["root"], "", "saga_runtime", set())
    if "--list" in sys.argv:
        for path_, kind in sorted(counted.values()):
            print(f"{kind:12} {path_}")
    by_kind = {}
    for _, kind in counted.values():
        by_kind[kind] = by_kind.get(kind, 0) + 1
    print(f"{len(counted)} public items: " + ", ".join(f"{k} {v}" for k, v in sorted(by_kind.items())))

main()
