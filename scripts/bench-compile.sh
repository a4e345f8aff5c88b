#!/usr/bin/env bash
# What a #[saga_tool] costs a user's build: a crate of N generated tools (N = 1, 10, 50
# by default), built in release and in debug after touching its main.rs, with
# `cargo llvm-lines` totals; and the same functions as plain `async fn`s, without saga,
# as the anchor. Prints seconds and LLVM lines per tool, (N tools - 1 tool) / (N - 1),
# so the runtime's one-off code cancels out; and the smallest crate's lines and seconds
# beyond the plain one, which are that one-off code plus its own tools.
#
#   scripts/bench-compile.sh            # N = 1 10 50
#   scripts/bench-compile.sh 1 22       # other sizes (the first is the baseline)
#
# Needs cargo-llvm-lines (installed if missing). Each tool: a loop of elicitations with a
# checkpoint, a form, a sample, and a `#[saga_fn]` helper call; each one's strings differ,
# so no two tools are the same code. Never asserts a time: it reports.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1 10 50)
work="$root/target/bench-compile"
mkdir -p "$work"
command -v cargo-llvm-lines >/dev/null 2>&1 || cargo install --quiet cargo-llvm-lines

tool_saga() {
    local i=$1
    cat <<RS
#[derive(Debug, Elicit, Serialize, Deserialize)]
struct Form$i {
    /// Who asks (tool $i)
    name: String,
    /// How many
    count: u32,
    /// Whether it is urgent
    urgent: bool,
}

#[saga_fn]
async fn confirm_$i(what: String) -> Result<bool, SagaError> {
    elicit::<bool>(format!("Confirm {what} (helper $i)?")).await
}

/// Tool $i: asks per step, then a form, a sample and a confirmation.
#[saga_tool]
async fn tool_$i(target: String, limit: u32) -> Result<String, SagaError> {
    let mut seen = Vec::new();
    for step in 0..limit.min(3) {
        let ok: bool = elicit(format!("Step {step} of {target} (tool $i)?")).await?;
        if ok {
            seen.push(step);
        }
        checkpoint().await;
    }
    let form: Form$i = elicit("Details for tool $i").await?;
    let summary = sample(format!("Summarise {} for tool $i", form.name)).await?;
    let sure = confirm_$i(target.clone()).await?;
    Ok(format!(
        "{target}: {seen:?} {} {} {} {} {sure}",
        form.name,
        form.count,
        form.urgent,
        summary.text()
    ))
}
RS
}

tool_plain() {
    local i=$1
    cat <<RS
#[derive(Debug, Serialize, Deserialize)]
struct Form$i {
    name: String,
    count: u32,
    urgent: bool,
}

async fn confirm_$i(client: &dyn Client, what: String) -> Result<bool, String> {
    client.ask_bool(format!("Confirm {what} (helper $i)?")).await
}

async fn tool_$i(client: &dyn Client, target: String, limit: u32) -> Result<String, String> {
    let mut seen = Vec::new();
    for step in 0..limit.min(3) {
        let ok = client.ask_bool(format!("Step {step} of {target} (tool $i)?")).await?;
        if ok {
            seen.push(step);
        }
        client.checkpoint().await;
    }
    let form: Form$i = serde_json::from_value(client.ask_form("Details for tool $i").await?)
        .map_err(|e| e.to_string())?;
    let summary = client.sample(format!("Summarise {} for tool $i", form.name)).await?;
    let sure = confirm_$i(client, target.clone()).await?;
    Ok(format!(
        "{target}: {seen:?} {} {} {} {} {sure}",
        form.name, form.count, form.urgent, summary
    ))
}
RS
}

write_crate() { # kind n
    local kind=$1 n=$2 dir="$work/$1-$2"
    mkdir -p "$dir/src"
    # Both kinds share serde and tokio; saga's adds saga-runtime, the plain one serde_json.
    local extra='serde_json = "1"'
    [ "$kind" = saga ] && extra="saga-runtime = { path = \"$root/saga-runtime\" }"
    cat >"$dir/Cargo.toml" <<TOML
[package]
name = "bench-$kind-$n"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
$extra
serde = { version = "1", features = ["derive"] }
tokio = { version = "1", features = ["macros", "rt-multi-thread"] }

[workspace]
TOML
    if [ "$kind" = saga ]; then
        {
            echo "use saga_runtime::prelude::*;"
            echo
            for i in $(seq 1 "$n"); do tool_saga "$i"; echo; done
            echo "#[tokio::main]"
            echo "async fn main() -> Result<(), Box<dyn std::error::Error>> {"
            echo "    let server = SagaServer::builder()"
            echo "        .keys(KeyRing::ephemeral())"
            for i in $(seq 1 "$n"); do echo "        .tool(tool_$i)"; done
            echo "        .build()?;"
            echo "    server.serve_stdio().await?;"
            echo "    Ok(())"
            echo "}"
        } >"$dir/src/main.rs"
    else
        {
            echo "use serde::{Deserialize, Serialize};"
            echo "use std::future::Future;"
            echo "use std::pin::Pin;"
            echo
            echo "type Boxed<'a, T> = Pin<Box<dyn Future<Output = Result<T, String>> + Send + 'a>>;"
            echo
            echo "trait Client: Sync {"
            echo "    fn ask_bool(&self, message: String) -> Boxed<'_, bool>;"
            echo "    fn ask_form(&self, message: &str) -> Boxed<'_, serde_json::Value>;"
            echo "    fn sample(&self, prompt: String) -> Boxed<'_, String>;"
            echo "    fn checkpoint(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;"
            echo "}"
            echo
            echo "struct Yes;"
            echo "impl Client for Yes {"
            echo "    fn ask_bool(&self, _: String) -> Boxed<'_, bool> { Box::pin(async { Ok(true) }) }"
            echo "    fn ask_form(&self, _: &str) -> Boxed<'_, serde_json::Value> {"
            echo "        Box::pin(async { Ok(serde_json::json!({\"name\": \"a\", \"count\": 1, \"urgent\": true})) })"
            echo "    }"
            echo "    fn sample(&self, p: String) -> Boxed<'_, String> { Box::pin(async move { Ok(p) }) }"
            echo "    fn checkpoint(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> { Box::pin(async {}) }"
            echo "}"
            echo
            for i in $(seq 1 "$n"); do tool_plain "$i"; echo; done
            echo "#[tokio::main]"
            echo "async fn main() {"
            echo "    let target = std::env::args().nth(1).unwrap_or_default();"
            for i in $(seq 1 "$n"); do echo "    println!(\"{:?}\", tool_$i(&Yes, target.clone(), 3).await);"; done
            echo "}"
        } >"$dir/src/main.rs"
    fi
}

# Seconds of an incremental build after touching main.rs (the dependencies are built).
timed_build() { # dir profile-flag
    local dir=$1 flag=$2
    (cd "$dir" && CARGO_TARGET_DIR="$work/target" cargo build --quiet $flag >/dev/null 2>&1)
    touch "$dir/src/main.rs"
    local start end
    start=$(date +%s.%N)
    (cd "$dir" && CARGO_TARGET_DIR="$work/target" cargo build --quiet $flag)
    end=$(date +%s.%N)
    echo "$end - $start" | bc
}

llvm_lines() { # dir
    (cd "$1" && CARGO_TARGET_DIR="$work/target" cargo llvm-lines --release 2>/dev/null) \
        | awk 'NR > 2 && /\(TOTAL\)/ { gsub(/[^0-9].*/, "", $1); print $1; exit }'
}

command -v bc >/dev/null 2>&1 || { apt-get update -qq >/dev/null; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bc >/dev/null; }

printf '%-6s %5s %10s %10s %12s\n' kind tools release_s debug_s llvm_lines
declare -A release debug lines
for kind in saga plain; do
    for n in "${sizes[@]}"; do
        write_crate "$kind" "$n"
        dir="$work/$kind-$n"
        release[$kind-$n]=$(timed_build "$dir" --release)
        debug[$kind-$n]=$(timed_build "$dir" "")
        lines[$kind-$n]=$(llvm_lines "$dir")
        printf '%-6s %5s %10.1f %10.1f %12s\n' "$kind" "$n" "${release[$kind-$n]}" "${debug[$kind-$n]}" "${lines[$kind-$n]}"
    done
done

base=${sizes[0]}
echo
echo "per tool, from $base to N tools:"
printf '%-6s %5s %14s %14s %16s\n' kind N release_s/tool debug_s/tool llvm_lines/tool
for kind in saga plain; do
    for n in "${sizes[@]:1}"; do
        d=$((n - base))
        printf '%-6s %5s %14.3f %14.3f %16.0f\n' "$kind" "$n" \
            "$(echo "(${release[$kind-$n]} - ${release[$kind-$base]}) / $d" | bc -l)" \
            "$(echo "(${debug[$kind-$n]} - ${debug[$kind-$base]}) / $d" | bc -l)" \
            "$(echo "(${lines[$kind-$n]} - ${lines[$kind-$base]}) / $d" | bc -l)"
    done
done

# What the smallest crate compiles of saga beyond the plain one: the runtime's one-off
# code plus that crate's own tools (about 20,000 lines and 0.4-0.5 s each). With one tool it
# was 731,658 lines (14.9 s) while the server's `async fn`s were compiled in the user's
# crate, and 99,873 (2.1 s) once they awaited futures boxed in saga-runtime (issue 43);
# a jump back means a public `async fn` of the runtime whose body is compiled again in
# every user's crate.
echo
echo "one-off and its own tools, a crate with $base tool(s): saga $((lines[saga-$base] - lines[plain-$base])) llvm lines and $(echo "${release[saga-$base]} - ${release[plain-$base]}" | bc -l | xargs printf '%.1f') s of release build beyond the plain crate"
