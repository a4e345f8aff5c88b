//! `saga graph URL TOOL` sends the run's credentials as `saga tools` and `saga call` do:
//! `--token`, `SAGA_TOKEN` and `--header`, seen by a listener that records each request's
//! headers and refuses it (401).

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

mod support;
use support::*;

/// A listener on a free port that records the headers of every request (lower-cased, one
/// string per request) and answers each with a 401.
fn recorder() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("its address"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("a second handle"));
            let mut headers = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let line = line.to_ascii_lowercase();
                if let Some(value) = line.strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
                headers.push_str(&line);
            }
            let mut body = vec![0; length];
            let _ = std::io::Read::read_exact(&mut reader, &mut body);
            record.lock().expect("the record").push(headers);
            let _ = stream.write_all(
                b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    (url, seen)
}

#[test]
fn graph_sends_the_token_and_headers_of_the_run() {
    let (url, seen) = recorder();
    let sent = |args: &[&str], envs: &[(&str, &str)]| -> String {
        seen.lock().expect("the record").clear();
        let mut all = vec!["graph"];
        all.extend_from_slice(args);
        all.extend_from_slice(&[url.as_str(), "complex_tool"]);
        let (code, out, err) = saga_with(&all, envs);
        // The 401 ends the run, in one line.
        assert_eq!(code, Some(2), "{out}\n{err}");
        assert!(err.contains(&format!("cannot connect to {url}")), "{err}");
        let requests = seen.lock().expect("the record").clone();
        assert!(!requests.is_empty(), "no request reached the server: {err}");
        requests.join("\n")
    };

    let none = sent(&[], &[]);
    assert!(!none.contains("authorization:"), "{none}");
    let token = sent(&["--token", "t-1"], &[]);
    assert!(token.contains("authorization: bearer t-1\r\n"), "{token}");
    let env = sent(&[], &[("SAGA_TOKEN", "t-2")]);
    assert!(env.contains("authorization: bearer t-2\r\n"), "{env}");
    let header = sent(&["--header", "X-Api-Key: k-3"], &[]);
    assert!(header.contains("x-api-key: k-3\r\n"), "{header}");
}
