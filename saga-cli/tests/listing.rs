//! `saga tools` shows what rmcp's model of a tool leaves out (`execution.taskSupport`),
//! read off the wire over HTTP, whether `tools/list` comes back as JSON or as an SSE
//! stream (tests/listing_server.py); and `--task` refuses a tool whose task support is
//! `forbidden`.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts tests/listing_server.py (`sse`: tools/list as an SSE stream); its URL.
fn serve(sse: bool) -> (Server, String) {
    let mut command = Command::new("python3");
    command
        .arg(format!(
            "{}/tests/listing_server.py",
            env!("CARGO_MANIFEST_DIR")
        ))
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if sse {
        command.env("LISTING_SSE", "1");
    }
    let mut child = command.spawn().expect("python3 runs");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the server says where it listens");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("not a listening line: {line:?}"))
        .to_owned();
    (Server(child), url)
}

fn saga(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_saga"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("saga runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn tools_shows_title_output_and_task_support_from_json_and_sse_lists() {
    for sse in [false, true] {
        let (_server, url) = serve(sse);
        let (code, out, err) = saga(&["tools", &url]);
        assert_eq!(code, Some(0), "sse {sse}: {out}\n{err}");
        let expected = "\
plain
  (no arguments)
  task support: not declared

batch — Runs long.
  title: Batch job
  n  integer  required
  output: {done: integer}
  task support: required

maybe
  (no arguments)
  task support: optional

never
  (no arguments)
  task support: forbidden
";
        assert_eq!(out, expected, "sse {sse}");
    }
}

#[test]
fn task_refuses_a_tool_that_forbids_tasks() {
    let (_server, url) = serve(false);
    let (code, out, err) = saga(&["call", "--task", &url, "never"]);
    assert_eq!(code, Some(2), "{out}\n{err}");
    assert!(
        err.contains("the tool \"never\" does not run as a task"),
        "{err}"
    );
    assert!(!out.contains("tools/call"), "nothing was called: {out}");
}
