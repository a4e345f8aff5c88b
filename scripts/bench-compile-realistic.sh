#!/usr/bin/env bash
# What realistic tools cost a user's release build: the tools of
# benches/compile/realistic/ (one file each, written the way users write them: loops over
# borrowed items with `match` bindings, nested loops over borrowed maps, `&'static str`
# tables, forms, samples, helpers, JSON state, `join!`, roots), built in one crate, against
# a crate with the first of them alone. Per tool = (all - one) / (count - 1), so the
# runtime's one-off code cancels out. Generated tools are bench-compile.sh's.
#
#   scripts/bench-compile-realistic.sh               # this tree
#   scripts/bench-compile-realistic.sh a5b5a95       # and a5b5a95's, interleaved
#   ROUNDS=5 scripts/bench-compile-realistic.sh REV  # rounds (3 by default)
#   SET=borrows scripts/bench-compile-realistic.sh   # with benches/compile/borrows/
#
# SET=borrows puts the files of benches/compile/borrows/ in place of those of the same name
# (and adds the others): the same tools written with what builds before issue 55 refused
# (a `match` on a borrowed loop item, nested loops over borrowed values, borrows of places
# kept across a suspension) and an agent loop (a sample with tools). It shows what those
# shapes cost beside their owned rewrites; only builds that accept them can compile it.
#
# Each other revision is checked out in target/bench-worktrees/REV and built there; both
# crates of every build are rebuilt after a touch of main.rs in every round, alternating
# builds, and the fastest round of each is kept (the VM's noise only ever adds time). The
# same sources are compiled against every build, so a tool that one of them does not
# accept fails the run rather than being left out. Needs cargo-llvm-lines (installed if
# missing). Never asserts a time: it reports.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
rounds=${ROUNDS:-3}
work="$root/target/bench-compile-realistic"
tools_dir="$root/benches/compile/realistic"
overlay_dir="$root/benches/compile/${SET:-realistic}"
mkdir -p "$work"
command -v cargo-llvm-lines >/dev/null 2>&1 || cargo install --quiet cargo-llvm-lines

# Builds: "this" is this tree; each argument a revision in a worktree of its own.
builds=(this)
declare -A tree
tree[this]=$root
for rev in "$@"; do
    dir="$root/target/bench-worktrees/$rev"
    if [ ! -d "$dir" ]; then
        git worktree add --detach -f "$dir" "$rev" >/dev/null
    fi
    builds+=("$rev")
    tree[$rev]=$dir
done

# The tools' files, by name: the set's own, then the realistic ones it does not replace.
mapfile -t files < <(
    { ls "$overlay_dir"/*.rs; ls "$tools_dir"/*.rs; } | awk -F/ '!seen[$NF]++ { print $NF "\t" $0 }' | sort | cut -f2
)
count=${#files[@]}
[ "$count" -ge 2 ] || { echo "need two tools or more in $tools_dir" >&2; exit 1; }

name_of() { basename "$1" .rs; }

# The tool a file registers: the function after its `#[saga_tool]`.
tool_of() {
    awk '/#\[saga_tool/ { want = 1; next } want && /async fn/ { sub(/.*async fn /, ""); sub(/[(<].*/, ""); print; exit }' "$1"
}

# A crate per set, build and size; a target directory per build.
crate_dir() { echo "$work/${SET:-realistic}-$1-$2"; }

write_crate() { # build size
    local build=$1 size=$2 dir
    dir=$(crate_dir "$1" "$2")
    mkdir -p "$dir/src"
    cat >"$dir/Cargo.toml" <<TOML
[package]
name = "realistic-$size"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
saga-runtime = { path = "${tree[$build]}/saga-runtime" }
schemars = "1"
serde = { version = "1", features = ["derive"] }
serde_json = "1"
tokio = { version = "1", features = ["macros", "rt-multi-thread"] }

[workspace]
TOML
    local chosen=("${files[@]:0:$size}")
    {
        for f in "${chosen[@]}"; do
            echo "#[path = \"$f\"]"
            echo "mod $(name_of "$f");"
        done
        echo
        echo "#[tokio::main]"
        echo "async fn main() -> Result<(), Box<dyn std::error::Error>> {"
        echo "    let server = saga_runtime::prelude::SagaServer::builder()"
        echo "        .keys(saga_runtime::prelude::KeyRing::ephemeral())"
        for f in "${chosen[@]}"; do
            echo "        .tool($(name_of "$f")::$(tool_of "$f"))"
        done
        echo "        .build()?;"
        echo "    server.serve_stdio().await?;"
        echo "    Ok(())"
        echo "}"
    } >"$dir/src/main.rs"
}

target_of() { echo "$work/target-$1"; }

build_once() { # build size
    local dir
    dir=$(crate_dir "$1" "$2")
    (cd "$dir" && CARGO_TARGET_DIR="$(target_of "$1")" cargo build --quiet --release)
}

timed() { # build size -> seconds of a release rebuild after a touch
    local dir start end
    dir=$(crate_dir "$1" "$2")
    touch "$dir/src/main.rs"
    start=$(date +%s.%N)
    build_once "$1" "$2"
    end=$(date +%s.%N)
    echo "$end - $start" | bc
}

llvm_lines() { # build size
    (cd "$(crate_dir "$1" "$2")" && CARGO_TARGET_DIR="$(target_of "$1")" cargo llvm-lines --release 2>/dev/null) \
        | awk 'NR > 2 && /\(TOTAL\)/ { gsub(/[^0-9].*/, "", $1); print $1; exit }'
}

command -v bc >/dev/null 2>&1 || { apt-get update -qq >/dev/null; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bc >/dev/null; }

echo "tools: $count ($(for f in "${files[@]}"; do printf '%s ' "$(name_of "$f")"; done)); the one-tool crate: $(name_of "${files[0]}")"
for build in "${builds[@]}"; do
    for size in 1 "$count"; do
        write_crate "$build" "$size"
        build_once "$build" "$size"
    done
done

declare -A best seconds
for round in $(seq 1 "$rounds"); do
    for build in "${builds[@]}"; do
        for size in 1 "$count"; do
            s=$(timed "$build" "$size")
            key="$build-$size"
            seconds[$round-$key]=$s
            if [ -z "${best[$key]:-}" ] || [ "$(echo "$s < ${best[$key]}" | bc)" = 1 ]; then
                best[$key]=$s
            fi
            printf 'round %s %-10s %3s tools %7.2f s\n' "$round" "$build" "$size" "$s"
        done
    done
done

echo
printf '%-10s %10s %10s %12s %12s %14s %12s\n' build one_s all_s s/tool one_lines all_lines lines/tool
declare -A per_s per_lines
for build in "${builds[@]}"; do
    one_lines=$(llvm_lines "$build" 1)
    all_lines=$(llvm_lines "$build" "$count")
    per_s[$build]=$(echo "(${best[$build-$count]} - ${best[$build-1]}) / ($count - 1)" | bc -l)
    per_lines[$build]=$(echo "($all_lines - $one_lines) / ($count - 1)" | bc -l)
    printf '%-10s %10.2f %10.2f %12.3f %12s %14s %12.0f\n' "$build" "${best[$build-1]}" \
        "${best[$build-$count]}" "${per_s[$build]}" "$one_lines" "$all_lines" "${per_lines[$build]}"
done
for build in "${builds[@]:1}"; do
    printf 'this / %s: %.3f× the seconds per tool (fastest rounds), %.3f× the LLVM lines per tool\n' "$build" \
        "$(echo "${per_s[this]} / ${per_s[$build]}" | bc -l)" \
        "$(echo "${per_lines[this]} / ${per_lines[$build]}" | bc -l)"
    # Each round's ratio, its builds run back to back: the median is less moved by one
    # fast or slow round of either build than the ratio of the fastest rounds.
    ratios=()
    for round in $(seq 1 "$rounds"); do
        ratios+=("$(echo "(${seconds[$round-this-$count]} - ${seconds[$round-this-1]}) / (${seconds[$round-$build-$count]} - ${seconds[$round-$build-1]})" | bc -l)")
    done
    printf 'this / %s, per round: %s; median %.3f×\n' "$build" \
        "$(printf '%.3f ' "${ratios[@]}")" \
        "$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
done
