//! A lean HTTP/1.1 client for the `http_load` bench: one keep-alive connection per user,
//! requests written from bytes prepared once, responses framed by `Content-Length` (or
//! chunked) and read only as far as the token and the final text. The load generator's
//! own CPU then stays well below a server's, so even the floor runs saturated.

use std::io;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use super::drive::{DONE_TEXT, PROTOCOL_VERSION, TOOL, round_body, target_answer, verdict_answer};

/// A marker the bodies are made with, replaced by the token of the round before.
const TOKEN_MARK: &str = "@@TOKEN@@";

/// One user's connection and the three rounds' bodies around their tokens.
pub struct RawUser {
    stream: TcpStream,
    head: String,
    first: Vec<u8>,
    /// Rounds 2 and 3, split where the token goes.
    later: [(Vec<u8>, Vec<u8>); 2],
    request: Vec<u8>,
    buffer: Vec<u8>,
}

impl RawUser {
    pub async fn connect(url: &str) -> io::Result<Self> {
        let rest = url.strip_prefix("http://").unwrap_or(url);
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let stream = TcpStream::connect(authority).await?;
        stream.set_nodelay(true)?;
        let head = format!(
            "POST {path} HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: {PROTOCOL_VERSION}\r\nmcp-method: tools/call\r\nmcp-name: {TOOL}\r\ncontent-length: "
        );
        let split = |answers| {
            let body = round_body(1, Some(TOKEN_MARK), Some(answers));
            let text = String::from_utf8(body).expect("JSON text");
            let (before, after) = text.split_once(TOKEN_MARK).expect("the token's place");
            (before.as_bytes().to_vec(), after.as_bytes().to_vec())
        };
        Ok(Self {
            stream,
            head,
            first: round_body(1, None, None),
            later: [split(target_answer()), split(verdict_answer())],
            request: Vec::with_capacity(1024),
            buffer: Vec::with_capacity(4096),
        })
    }

    /// One complete saga; an error names what went wrong.
    pub async fn saga(&mut self) -> io::Result<()> {
        let mut token = String::new();
        for round in 0..3 {
            self.request.clear();
            let body_len = match round {
                0 => self.first.len(),
                n => {
                    let (before, after) = &self.later[n - 1];
                    before.len() + token.len() + after.len()
                }
            };
            self.request.extend_from_slice(self.head.as_bytes());
            self.request
                .extend_from_slice(itoa::Buffer::new().format(body_len).as_bytes());
            self.request.extend_from_slice(b"\r\n\r\n");
            match round {
                0 => self.request.extend_from_slice(&self.first),
                n => {
                    let (before, after) = &self.later[n - 1];
                    self.request.extend_from_slice(before);
                    self.request.extend_from_slice(token.as_bytes());
                    self.request.extend_from_slice(after);
                }
            }
            self.stream.write_all(&self.request).await?;
            let body = self.response().await?;
            if round < 2 {
                token = token_of(body).ok_or_else(|| {
                    invalid(format!(
                        "round {}: no token in {}",
                        round + 1,
                        String::from_utf8_lossy(body)
                    ))
                })?;
            } else if !contains(body, DONE_TEXT.as_bytes()) {
                return Err(invalid(format!(
                    "round 3: not done: {}",
                    String::from_utf8_lossy(body)
                )));
            }
        }
        Ok(())
    }

    /// Reads one response; returns its body.
    async fn response(&mut self) -> io::Result<&[u8]> {
        self.buffer.clear();
        let head_end = loop {
            if let Some(at) = find(&self.buffer, b"\r\n\r\n") {
                break at + 4;
            }
            self.fill().await?;
        };
        let head = std::str::from_utf8(&self.buffer[..head_end]).map_err(|_| invalid("head"))?;
        if !head.starts_with("HTTP/1.1 200") {
            return Err(invalid(format!("status: {head}")));
        }
        let header = |name: &str| {
            head.split("\r\n").find_map(|line| {
                let (key, value) = line.split_once(':')?;
                key.eq_ignore_ascii_case(name)
                    .then(|| value.trim().to_owned())
            })
        };
        if let Some(len) = header("content-length") {
            let len: usize = len.parse().map_err(|_| invalid("content-length"))?;
            while self.buffer.len() < head_end + len {
                self.fill().await?;
            }
            return Ok(&self.buffer[head_end..head_end + len]);
        }
        // Chunked: read to the last chunk, then join the chunks' data.
        while find(&self.buffer[head_end..], b"\r\n0\r\n\r\n").is_none()
            && !self.buffer[head_end..].starts_with(b"0\r\n\r\n")
        {
            self.fill().await?;
        }
        let mut body = Vec::new();
        let mut rest = &self.buffer[head_end..];
        loop {
            let line = find(rest, b"\r\n").ok_or_else(|| invalid("chunk"))?;
            let size = usize::from_str_radix(
                std::str::from_utf8(&rest[..line]).map_err(|_| invalid("chunk"))?,
                16,
            )
            .map_err(|_| invalid("chunk size"))?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&rest[line + 2..line + 2 + size]);
            rest = &rest[line + 4 + size..];
        }
        let start = self.buffer.len();
        self.buffer.extend_from_slice(&body);
        Ok(&self.buffer[start..])
    }

    async fn fill(&mut self) -> io::Result<()> {
        let mut chunk = [0u8; 4096];
        let read = self.stream.read(&mut chunk).await?;
        if read == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed"));
        }
        self.buffer.extend_from_slice(&chunk[..read]);
        Ok(())
    }
}

fn invalid(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    find(haystack, needle).is_some()
}

/// The `requestState` of a result: base64url, so it ends at the next quote.
fn token_of(body: &[u8]) -> Option<String> {
    const KEY: &[u8] = br#""requestState":""#;
    let start = find(body, KEY)? + KEY.len();
    let len = body[start..].iter().position(|&byte| byte == b'"')?;
    String::from_utf8(body[start..start + len].to_vec()).ok()
}
