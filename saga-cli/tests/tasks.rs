//! `saga call --task` and the `--answers` re-ask stop against real example servers: the
//! `migrate` example's process (`target/debug/examples/migrate`, built with `cargo build
//! --example migrate`) on a free port, driven by the `saga` binary.
//!
//! The examples are binaries of the workspace's root package, which `cargo test -p
//! saga-cli` does not build: build them first (a test fails, saying so, when one is
//! missing).

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod support;
use support::*;

/// `saga ARGS` started in the background: its process, a signal once its stdout says a
/// task was created, and its stdout and stderr as they are read to the end.
struct Background {
    child: Child,
    created: mpsc::Receiver<()>,
    out: std::thread::JoinHandle<String>,
    err: std::thread::JoinHandle<String>,
}

fn saga_in_background(args: &[&str]) -> Background {
    let mut child = Command::new(env!("CARGO_BIN_EXE_saga"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("saga runs");
    let stdout = child.stdout.take().expect("stdout");
    let (created, seen) = mpsc::channel();
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.contains(" created: ") {
                let _ = created.send(());
            }
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    let err = reader(child.stderr.take().expect("stderr"));
    Background {
        child,
        created: seen,
        out,
        err,
    }
}

/// Waits until the journal at `journal` has `lines` lines (30 s at most).
fn journal_reaches(journal: &Path, lines: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::read_to_string(journal)
        .map(|text| text.lines().count())
        .unwrap_or(0)
        < lines
    {
        assert!(Instant::now() < deadline, "the migration never began");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_task_goes_from_creation_through_input_required_to_its_result() {
    let server = serve("migrate", &[]);
    let dir = temp_dir("task");
    let file = answers(&dir, "a.json", r#"{"elicit-1": {"approve": true}}"#);
    let (code, out, err) = saga(&[
        "call",
        "--task",
        "--answers",
        &file,
        &server.url,
        "approve_migration",
        "tables=5",
    ]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    // In this order: the task, its question, the answer sent, its end, the result.
    let created = at(&out, "created: working (polling tasks/get every 500 ms)");
    let asked = at(&out, ": input_required\n");
    let request = at(&out, "1 request(s): elicit-1");
    let message = at(&out, "Migrate 5 tables?");
    let update = at(&out, "→ tasks/update ");
    let completed = at(&out, ": completed\n");
    let result = at(&out, "── result of task ");
    let text = at(&out, "\n5 tables approved\n");
    let order = [
        created, asked, request, message, update, completed, result, text,
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}\n{out}");
    // The task id printed at creation is the one answered and completed.
    let id = out[..created]
        .rsplit("← task ")
        .next()
        .and_then(|rest| rest.split_whitespace().next())
        .expect("a task id");
    assert_eq!(id.len(), 32, "{out}");
    assert!(
        out.contains(&format!("→ tasks/update {id} elicit-1")),
        "{out}"
    );
    assert!(out.contains(&format!("← task {id}: completed")), "{out}");
    assert!(err.is_empty(), "{err}");

    // Declined: the task still completes, with the tool's own answer.
    let file = answers(&dir, "no.json", r#"{"elicit-1": {"approve": false}}"#);
    let (code, out, err) = saga(&[
        "call",
        "--task",
        "--answers",
        &file,
        &server.url,
        "approve_migration",
        "tables=2",
    ]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("\nnot approved\n"), "{out}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_task_in_a_session_and_over_stdio() {
    let server = serve("migrate", &[]);
    let dir = temp_dir("session");
    let file = answers(&dir, "a.json", r#"{"elicit-1": {"approve": true}}"#);
    let (code, out, err) = saga(&[
        "call",
        "--session",
        "--task",
        "--answers",
        &file,
        &server.url,
        "approve_migration",
        "tables=3",
    ]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("\n3 tables approved\n"), "{out}");
    assert!(out.contains("1 request(s): elicit-1"), "{out}");

    let command = format!("{} --stdio", example("migrate").display());
    let (code, out, err) = saga(&[
        "call",
        "--task",
        "--answers",
        &file,
        "--stdio",
        &command,
        "migrate",
        "tables=3",
        "millis_per_table=50",
    ]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("\nmigrated 3 tables: [0, 1, 2]\n"), "{out}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn task_is_refused_where_tasks_are_not_offered() {
    let server = serve("deploy", &[]);
    for session in [false, true] {
        let mut args = vec!["call", "--task"];
        if session {
            args.push("--session");
        }
        args.extend([server.url.as_str(), "complex_tool", "initial_arg=x"]);
        let (code, out, err) = saga(&args);
        assert_eq!(code, Some(2), "{out}\n{err}");
        assert!(err.contains("the server does not offer tasks"), "{err}");
        assert!(err.contains("io.modelcontextprotocol/tasks"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!out.contains("tools/call"), "nothing was called: {out}");
    }
}

#[test]
fn ctrl_c_cancels_the_task() {
    let dir = temp_dir("cancel");
    let journal = dir.join("journal");
    let journal_path = journal.display().to_string();
    let server = serve("migrate", &[("MIGRATE_JOURNAL", journal_path.as_str())]);
    let mut following = saga_in_background(&[
        "call",
        "--task",
        &server.url,
        "migrate",
        "tables=300",
        "millis_per_table=50",
        "label=cancelled",
    ]);
    following
        .created
        .recv_timeout(Duration::from_secs(30))
        .expect("the task is created");
    // Some tables done, then Ctrl-C.
    journal_reaches(&journal, 4);
    let sent = Command::new("kill")
        .args(["-INT", &following.child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let code = wait(&mut following.child, Duration::from_secs(30));
    let (out, err) = (
        following.out.join().expect("stdout"),
        following.err.join().expect("stderr"),
    );
    assert_eq!(code, Some(130), "{out}\n{err}");
    assert!(err.contains("saga: interrupted: task "), "{err}");
    assert!(err.contains(" cancelled (tasks/cancel sent)"), "{err}");
    // The server stopped the work: the journal stops growing, and never says done.
    std::thread::sleep(Duration::from_millis(300));
    let stopped = std::fs::read_to_string(&journal).expect("the journal");
    std::thread::sleep(Duration::from_millis(500));
    let later = std::fs::read_to_string(&journal).expect("the journal");
    assert_eq!(stopped, later, "the migration went on after tasks/cancel");
    assert!(!later.contains("cancelled done"), "{later}");
    assert!(later.lines().count() < 600, "{later}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn answers_asked_again_stop_at_once_with_the_servers_reason() {
    let server = serve("migrate", &[]);
    let dir = temp_dir("reask");
    // `approve` must be a boolean: the server asks again, saying why.
    let file = answers(&dir, "bad.json", r#"{"elicit-1": {"approve": "maybe"}}"#);

    // MRTR: the same key in the next round.
    let (code, out, err) = saga(&[
        "call",
        "--answers",
        &file,
        &server.url,
        "approve_migration",
        "tables=3",
    ]);
    assert_eq!(code, Some(2), "{out}\n{err}");
    assert!(out.contains("── round 2 ──"), "{out}");
    assert!(
        !out.contains("── round 3 ──"),
        "stopped at the first re-ask: {out}"
    );
    assert!(
        out.contains("[elicit-1] asked again: the server did not accept the answer"),
        "{out}"
    );
    assert!(
        out.contains("Your last answer was not accepted:") && out.contains("approve"),
        "the server's reason is shown: {out}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("saga: error: the server asked \"elicit-1\" again"),
        "{err}"
    );
    assert!(err.contains("Your last answer was not accepted:"), "{err}");

    // A task: the same key in its next input_required; the task is cancelled.
    let (code, out, err) = saga(&[
        "call",
        "--task",
        "--answers",
        &file,
        &server.url,
        "approve_migration",
        "tables=3",
    ]);
    assert_eq!(code, Some(2), "{out}\n{err}");
    assert_eq!(out.matches("→ tasks/update").count(), 1, "{out}");
    assert!(out.contains("[elicit-1] asked again"), "{out}");
    assert!(
        err.contains(" cancelled: the server asked \"elicit-1\" again"),
        "{err}"
    );
    assert!(err.contains("Your last answer was not accepted:"), "{err}");

    // A session: the identical request asked again under the next counter.
    let file = answers(
        &dir,
        "session.json",
        r#"{"elicitation-1": {"approve": "maybe"}, "elicitation-2": {"approve": "maybe"}}"#,
    );
    let (code, out, err) = saga(&[
        "call",
        "--session",
        "--answers",
        &file,
        &server.url,
        "approve_migration",
        "tables=3",
    ]);
    assert_eq!(code, Some(2), "{out}\n{err}");
    assert_eq!(out.matches("answered from file").count(), 1, "{out}");
    assert!(out.contains("[elicitation-2] asked again"), "{out}");
    assert!(
        err.starts_with("saga: error: the server asked \"elicitation-2\" again"),
        "{err}"
    );
    assert!(err.contains("Your last answer was not accepted:"), "{err}");

    // A session whose file has no entry for the next counter: the same stop.
    let file = answers(
        &dir,
        "one.json",
        r#"{"elicitation-1": {"approve": "maybe"}}"#,
    );
    let (code, out, err) = saga(&[
        "call",
        "--session",
        "--answers",
        &file,
        &server.url,
        "approve_migration",
        "tables=3",
    ]);
    assert_eq!(code, Some(2), "{out}\n{err}");
    assert!(err.contains("\"elicitation-2\""), "{err}");
    assert!(err.contains("Your last answer was not accepted:"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 76: a durable task's server restarts while `saga call --task` follows it. saga
/// keeps polling (saying so), goes on once the server answers, prints the result, and never
/// cancels the task; `saga task get URL ID` re-attaches to it by its id afterwards.
#[test]
fn a_task_is_followed_through_its_servers_restart_and_found_again_by_id() {
    let dir = temp_dir("restart");
    let store = format!("sqlite:{}", dir.join("tasks.db").display());
    let journal = dir.join("journal");
    let journal_path = journal.display().to_string();
    let envs = [
        ("SAGA_TASKS", store.as_str()),
        ("MIGRATE_JOURNAL", journal_path.as_str()),
    ];
    let server = serve("migrate", &envs);
    let address = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let mut following = saga_in_background(&[
        "call",
        "--task",
        &server.url,
        "migrate",
        "tables=40",
        "millis_per_table=100",
        "label=restarted",
    ]);
    following
        .created
        .recv_timeout(Duration::from_secs(30))
        .expect("the task is created");
    journal_reaches(&journal, 3);
    // The server goes away mid-task, and comes back on the same port two seconds later.
    drop(server);
    std::thread::sleep(Duration::from_secs(2));
    let server = serve_at("migrate", &address, &envs);
    let code = wait(&mut following.child, Duration::from_secs(60));
    let (out, err) = (
        following.out.join().expect("stdout"),
        following.err.join().expect("stderr"),
    );
    assert_eq!(code, Some(0), "{out}\n{err}");
    let unreachable = at(&out, "the server cannot be reached");
    let again = at(&out, "the server answers again");
    let completed = at(&out, ": completed\n");
    assert!(unreachable < again && again < completed, "{out}");
    assert!(
        !out.contains("cancel") && !err.contains("cancel"),
        "{out}\n{err}"
    );
    let id = out[..unreachable]
        .rsplit("← task ")
        .find_map(|rest| rest.split_whitespace().next().filter(|id| id.len() == 32))
        .expect("a task id");

    // Found again by its id: its status and result.
    let (code, found, err) = saga(&["task", "get", &server.url, id]);
    assert_eq!(code, Some(0), "{found}\n{err}");
    assert!(
        found.contains(&format!("← task {id}: completed")),
        "{found}"
    );
    assert!(found.contains("── result of task "), "{found}");
    // Watching a finished task prints its result at once; cancelling one refuses.
    let (code, watched, err) = saga(&["task", "watch", &server.url, id]);
    assert_eq!(code, Some(0), "{watched}\n{err}");
    assert!(watched.contains(" found: completed"), "{watched}");
    let _ = std::fs::remove_dir_all(dir);
}

/// `--header NAME:VALUE` is sent with every request; a malformed one is refused before
/// anything is sent.
#[test]
fn a_header_is_checked_and_sent() {
    let server = serve("migrate", &[]);
    let (code, out, err) = saga(&["tools", "--header", "X-Api-Key: k-123", &server.url]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("approve_migration"), "{out}");
    let (code, _, err) = saga(&["tools", "--header", "no colon here", &server.url]);
    assert_eq!(code, Some(2));
    assert!(err.contains("expected NAME:VALUE"), "{err}");
}
