//! What a client's load sees: the deploy saga over Streamable HTTP, every server in a
//! process of its own pinned to one core, driven by this load generator from the other
//! cores, the servers' CPU read from `/proc/PID/stat`.
//!
//! ```text
//! cargo build --release -p saga-workspace --example deploy
//! cargo bench -p saga-runtime --bench http_load
//! bash scripts/bench-http.sh 2d2b4dd      # the same, paired with another commit's build
//! ```
//!
//! # The servers
//!
//! * **saga**: the `deploy` example's release binary, run as a user runs it (`--http
//!   ADDR`, keys from `SAGA_KEYS`, its logging at `warn`); `SAGA_BIN` names another path.
//! * **base** (only with `BASELINE_BIN`): the same example built from another commit
//!   (`scripts/bench-http.sh REV` builds it in a worktree). Each of its trials is paired
//!   with saga's trial of the same round, and the table gives the median of the pairs'
//!   ratios. `BASE_ENV="K=V …"` (and `SAGA_ENV` for saga's place) sets its environment
//!   besides: the same binary in both places, with `BASE_ENV=SAGA_SINGLE_USE=memory`,
//!   measures what single use with recorded outcomes costs.
//! * **rmcp**: the hand-written rmcp 3.11 MRTR server of `support/peers.rs`, this binary
//!   run again with `--serve rmcp ADDR`.
//! * **floor**: `--serve floor ADDR FILE`: a bare hyper HTTP/1 server that parses each
//!   body as JSON and answers saga's own results for each round (recorded from saga at
//!   start-up and handed over in `FILE`).
//!
//! Every server runs with tokio's default runtime for one core: each is started pinned
//! to CPU 0 (`sched_setaffinity` before `exec`), so its runtime sizes itself to the one
//! CPU it may use. This process pins itself to the other CPUs.
//!
//! # The load
//!
//! `VUS` (16) virtual users, each with one keep-alive HTTP/1.1 connection, run complete
//! three-round sagas back to back and check every round. A trial is 1 s of warm-up and
//! `SECONDS` (5) measured; in each of `TRIALS` (5) rounds every server gets one trial,
//! in an order that rotates from round to round, so that a drift of the machine's speed
//! falls on all of them alike. The figure is the server process's CPU time (user +
//! system, all threads) per completed saga: it stays meaningful when the load generator,
//! not the server, is the bottleneck. It asserts nothing about timings: only that each
//! server runs the same exchange.
//!
//! `ONLY=saga` (or `base`, `rmcp`, `floor`) loads that one server and prints its PID first,
//! for `perf record -p PID`.

// Sampling is deprecated by MCP 2026-07-28 (SEP-2577) but the deploy saga uses it.
#![allow(deprecated)]

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

// Shared with the `e2e` bench, which uses other parts of them.
#[allow(dead_code)]
mod support {
    pub mod drive;
    pub mod peers;
    pub mod raw;
}
use support::drive::{
    Client, KEY, Trial, env_or, median, new_client, one_saga, pin_current_thread,
    process_cpu_ticks, requests_of, run_load,
};
use support::peers::{Canned, hand_router, serve_floor};

/// The CPU every server is pinned to.
const SERVER_CPU: usize = 0;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = args.iter().position(|arg| arg == "--serve") {
        return serve(&args[at + 1..]);
    }
    drive();
}

// ---------------------------------------------------------------------------------------
// A peer in its own process.
// ---------------------------------------------------------------------------------------

/// `--serve rmcp ADDR` or `--serve floor ADDR FILE`, until killed.
fn serve(args: &[String]) {
    let kind = args.first().map(String::as_str).unwrap_or_default();
    let addr: SocketAddr = args
        .get(1)
        .and_then(|addr| addr.parse().ok())
        .expect("--serve KIND ADDR");
    // tokio's default: one worker per CPU this process may use, i.e. one.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr).await.expect("bind");
        match kind {
            "rmcp" => axum::serve(listener, hand_router()).await.expect("serve"),
            "floor" => {
                let file = args.get(2).expect("--serve floor ADDR FILE");
                let rounds: Vec<String> =
                    serde_json::from_slice(&std::fs::read(file).expect("the canned rounds"))
                        .expect("three rounds");
                let rounds: [String; 3] = rounds.try_into().expect("three rounds");
                serve_floor(listener, Arc::new(Canned { rounds })).await;
            }
            other => panic!("unknown server {other:?}: rmcp or floor"),
        }
    });
}

// ---------------------------------------------------------------------------------------
// The driver.
// ---------------------------------------------------------------------------------------

/// A server process under load.
struct Server {
    name: &'static str,
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free loopback port (the listener is dropped; the server binds it right after).
fn free_addr() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
}

/// Starts `command` pinned to [`SERVER_CPU`] and waits until it accepts connections.
fn start(name: &'static str, mut command: Command, addr: SocketAddr) -> Server {
    command.stdin(Stdio::null()).stdout(Stdio::null());
    // SAFETY: between fork and exec only async-signal-safe calls: sched_setaffinity.
    unsafe {
        command.pre_exec(|| {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(SERVER_CPU, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            Ok(())
        });
    }
    let child = command
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {name}: {error}"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "{name} did not listen on {addr}");
        std::thread::sleep(Duration::from_millis(20));
    }
    Server {
        name,
        child,
        url: format!("http://{addr}/mcp"),
    }
}

/// A deploy example's binary, serving on `addr` with the bench's key.
fn deploy_command(binary: &PathBuf, addr: SocketAddr) -> Command {
    let mut command = Command::new(binary);
    command
        .args(["--http", &addr.to_string()])
        .env("SAGA_KEYS", hex(&KEY))
        .env_remove("RUST_LOG");
    command
}

/// Sets on `command` the environment the variable `var` names (`"K=V K2=V2"`): the same
/// binary in both places with a setting on in one (`BASE_ENV=SAGA_SINGLE_USE=memory`)
/// measures that setting.
fn with_env(command: &mut Command, var: &str) {
    for pair in std::env::var(var).unwrap_or_default().split_whitespace() {
        if let Some((key, value)) = pair.split_once('=') {
            command.env(key, value);
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// This binary again, serving a peer.
fn peer_command(args: &[&str]) -> Command {
    let mut command = Command::new(std::env::current_exe().expect("this binary"));
    command.arg("--serve").args(args);
    command
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"),
        PathBuf::from,
    )
}

fn drive() {
    let started = Instant::now();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let vus: usize = env_or("VUS", 16);
    let seconds: f64 = env_or("SECONDS", 5.0);
    let trials: usize = env_or("TRIALS", 5);
    let only = std::env::var("ONLY").unwrap_or_default();
    let client = match std::env::var("CLIENT").as_deref() {
        Ok("reqwest") => Client::Reqwest,
        _ => Client::Raw,
    };
    if cpus >= 2 {
        pin_current_thread(
            &(0..cpus)
                .filter(|&cpu| cpu != SERVER_CPU)
                .collect::<Vec<_>>(),
        );
    } else {
        println!("WARNING: one CPU: the load generator and the servers share it");
    }
    let saga_bin = std::env::var_os("SAGA_BIN").map_or_else(
        || target_dir().join("release/examples/deploy"),
        PathBuf::from,
    );
    if !saga_bin.exists() {
        eprintln!(
            "{} does not exist: build it with `cargo build --release -p saga-workspace --example deploy` (or set SAGA_BIN)",
            saga_bin.display()
        );
        std::process::exit(2);
    }
    let baseline_bin = std::env::var_os("BASELINE_BIN").map(PathBuf::from);
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads((cpus - 1).max(1))
        .enable_all()
        .build()
        .expect("a runtime");

    let mut servers = Vec::new();
    let addr = free_addr();
    let mut command = deploy_command(&saga_bin, addr);
    with_env(&mut command, "SAGA_ENV");
    servers.push(start("saga", command, addr));
    if let Some(binary) = &baseline_bin {
        let addr = free_addr();
        let mut command = deploy_command(binary, addr);
        with_env(&mut command, "BASE_ENV");
        servers.push(start("base", command, addr));
    }
    let addr = free_addr();
    servers.push(start(
        "rmcp",
        peer_command(&["rmcp", &addr.to_string()]),
        addr,
    ));

    // Every server runs the same exchange (apart from the tokens), checked untimed.
    let rounds: Vec<[Value; 3]> = client_rt.block_on(async {
        let client = new_client();
        let mut id = 0;
        let mut all = Vec::new();
        for server in &servers {
            all.push(one_saga(&client, &server.url, &mut id).await);
        }
        all
    });
    for (server, theirs) in servers.iter().zip(&rounds).skip(1) {
        for round in 0..3 {
            let (ours, theirs) = (requests_of(&rounds[0][round]), requests_of(&theirs[round]));
            if ours != theirs {
                println!(
                    "WARNING: {} does not run saga's exchange; round {} differs\n  saga: {ours}\n  {}: {theirs}",
                    server.name,
                    round + 1,
                    server.name
                );
            }
        }
    }
    let token_lengths: Vec<[usize; 2]> = rounds
        .iter()
        .map(|rounds| {
            [0, 1].map(|round| rounds[round]["requestState"].as_str().map_or(0, str::len))
        })
        .collect();

    let canned = std::env::temp_dir().join(format!("saga-http-load-{}.json", std::process::id()));
    let canned_rounds: Vec<String> = rounds[0].iter().map(Value::to_string).collect();
    std::fs::write(
        &canned,
        serde_json::to_vec(&canned_rounds).expect("the rounds"),
    )
    .expect("write the canned rounds");
    let addr = free_addr();
    let canned_arg = canned.to_string_lossy().into_owned();
    servers.push(start(
        "floor",
        peer_command(&["floor", &addr.to_string(), &canned_arg]),
        addr,
    ));
    let floor_rounds = client_rt.block_on(one_saga(
        &new_client(),
        &servers[servers.len() - 1].url,
        &mut 0,
    ));
    assert_eq!(
        floor_rounds, rounds[0],
        "the floor answers what saga answered"
    );

    if !only.is_empty() {
        let server = servers
            .iter()
            .find(|server| server.name == only)
            .unwrap_or_else(|| panic!("ONLY={only}: no such server"));
        println!("{} is PID {}", server.name, server.child.id());
        for _ in 0..trials {
            let pid = server.child.id();
            let trial =
                client_rt.block_on(run_load(client, server.url.clone(), vus, seconds, || {
                    process_cpu_ticks(pid)
                }));
            println!(
                "{only}: {:.0} sagas/s, server CPU {:.1} µs/saga ({:.1} of it in the kernel)",
                trial.sagas_per_s, trial.server_cpu_us_per_saga, trial.server_system_us_per_saga
            );
        }
        let _ = std::fs::remove_file(&canned);
        return;
    }

    // Each round runs the servers in the order of one row of a Williams design, so that
    // each is first as often as another and follows each other one as often: a trial
    // pays for what the trial before it left (a plain rotation always ran `base` right
    // after `saga`, and an A/A run of one binary in both places read 1.05).
    let mut results: Vec<Vec<Trial>> = servers.iter().map(|_| Vec::new()).collect();
    for round in 0..trials {
        for index in williams_row(servers.len(), round) {
            let server = &servers[index];
            let pid = server.child.id();
            let trial =
                client_rt.block_on(run_load(client, server.url.clone(), vus, seconds, || {
                    process_cpu_ticks(pid)
                }));
            results[index].push(trial);
        }
    }
    let _ = std::fs::remove_file(&canned);
    report(&servers, &results, &token_lengths, vus, seconds);
    println!("\n(finished in {:.1} s)", started.elapsed().as_secs_f64());
}

/// Row `round` of a Williams design for `n` treatments: `0, 1, n-1, 2, n-2, …` shifted by
/// the row, its mirror in the second half of each `2n` rows when `n` is odd. Over a whole
/// cycle every treatment comes at every place and right after every other equally often.
fn williams_row(n: usize, round: usize) -> Vec<usize> {
    let shift = round % n;
    let mut row: Vec<usize> = (0..n)
        .map(|place| {
            let step = place.div_ceil(2);
            let base = if place % 2 == 1 { step } else { n - step % n };
            (base % n + shift) % n
        })
        .collect();
    if n % 2 == 1 && (round / n) % 2 == 1 {
        row.reverse();
    }
    row
}

fn report(
    servers: &[Server],
    results: &[Vec<Trial>],
    token_lengths: &[[usize; 2]],
    vus: usize,
    seconds: f64,
) {
    let find = |name: &str| servers.iter().position(|server| server.name == name);
    let cpu = |trial: &Trial| trial.server_cpu_us_per_saga;
    println!(
        "\n### Deploy saga over Streamable HTTP, each server its own process pinned to CPU {SERVER_CPU} ({vus} keep-alive users, {seconds} s per trial)\n"
    );
    println!(
        "| server | server CPU µs/saga, median (trials) | of it kernel | of it user | sagas/s | p50 / p99 ms | ÷ floor | ÷ rmcp | user ÷ floor's user |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let user = |trial: &Trial| trial.server_cpu_us_per_saga - trial.server_system_us_per_saga;
    let floor = find("floor").map(|at| median(&results[at], cpu));
    let floor_user = find("floor").map(|at| median(&results[at], user));
    let rmcp = find("rmcp").map(|at| median(&results[at], cpu));
    for (server, trials) in servers.iter().zip(results) {
        let value = median(trials, cpu);
        let mut each: Vec<f64> = trials.iter().map(cpu).collect();
        each.sort_by(f64::total_cmp);
        let each: Vec<String> = each.iter().map(|v| format!("{v:.0}")).collect();
        println!(
            "| {} | **{value:.1}** ({}) | {:.1} | {:.1} | {:.0} | {:.2} / {:.2} | {:.3} | {:.3} | {:.3} |",
            server.name,
            each.join(", "),
            median(trials, |t| t.server_system_us_per_saga),
            median(trials, user),
            median(trials, |t| t.sagas_per_s),
            median(trials, |t| t.p50_ms),
            median(trials, |t| t.p99_ms),
            floor.map_or(f64::NAN, |floor| value / floor),
            rmcp.map_or(f64::NAN, |rmcp| value / rmcp),
            floor_user.map_or(f64::NAN, |floor| median(trials, user) / floor),
        );
    }
    // Paired: each saga trial against the baseline's trial of the same round.
    if let (Some(saga), Some(base)) = (find("saga"), find("base")) {
        let mut ratios: Vec<f64> = results[saga]
            .iter()
            .zip(&results[base])
            .map(|(ours, theirs)| cpu(ours) / cpu(theirs))
            .collect();
        ratios.sort_by(f64::total_cmp);
        let each: Vec<String> = ratios.iter().map(|r| format!("{r:.3}")).collect();
        println!(
            "\nPaired, saga ÷ base in the same round: median **{:.3}** ({}).",
            ratios[ratios.len() / 2],
            each.join(", ")
        );
    }
    for (server, [first, second]) in servers.iter().zip(token_lengths) {
        println!(
            "Tokens of rounds 2 and 3 ({}): {first} + {second} = {} characters.",
            server.name,
            first + second
        );
    }
}
