//! stdio: newline-delimited JSON-RPC on stdin and stdout; logs go to stderr.

use futures::future::BoxFuture;
use rmcp::ServiceExt;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

use super::error::ServeError;
use super::json_check::names_reserved_key;
use super::server::SagaServer;
use super::wire::resumable;

impl SagaServer {
    /// Serves MCP on stdin/stdout until stdin closes, or until SIGTERM or Ctrl-C: then
    /// no further line is read, the requests in flight get their answers (rmcp waits up to
    /// 5 s for them), the rounds that go on after their clients left finish within the
    /// shutdown grace, and it returns; a second signal exits at once.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let stop = super::shutdown::from_signals();
        self.serve_erased_io(
            Box::new(tokio::io::stdin()),
            Box::new(tokio::io::stdout()),
            Box::pin(stop),
        )
        .await
    }

    /// Serves MCP on any byte stream pair, until the reader reaches end of file.
    ///
    /// A line longer than [`HttpLimits::max_body_bytes`](super::HttpLimits) (the same
    /// bound as an HTTP body) is dropped with a warning, rather than buffered whole.
    pub async fn serve_io<R, W>(self, reader: R, writer: W) -> Result<(), ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        self.serve_erased_io(
            Box::new(reader),
            Box::new(writer),
            Box::pin(std::future::pending()),
        )
        .await
    }

    /// The server's future, built and compiled once, here: an `async fn`'s body is
    /// compiled again in every crate that awaits it, so the public entry points only
    /// box their arguments and await this.
    fn serve_erased_io(
        self,
        reader: Box<dyn AsyncRead + Send + Unpin>,
        writer: Box<dyn AsyncWrite + Send + Unpin>,
        stop: BoxFuture<'static, ()>,
    ) -> BoxFuture<'static, Result<(), ServeError>> {
        Box::pin(async move {
            self.tools().start_background();
            let (lines_in, lines_out) = tokio::io::duplex(64 * 1024);
            let max_line = self.http_limits().max_body_bytes;
            // In a `JoinSet`, which aborts its tasks when dropped: however this future
            // ends (done, an error from `?`, or dropped by its caller), the forwarding
            // task stops with it and lets go of the input, instead of reading on until
            // the next whole line finds the server gone.
            let mut forwarding = tokio::task::JoinSet::new();
            forwarding.spawn(forward_lines(reader, lines_in, max_line));
            let tools = self.tools().clone();
            let grace = self.shutdown_grace();
            let running = self
                .serve((lines_out, writer))
                .await
                .map_err(|error| ServeError::Initialize(Box::new(error)))?;
            let waiting = running.waiting();
            tokio::pin!(waiting);
            tokio::select! {
                ended = &mut waiting => {
                    ended.map_err(ServeError::Session)?;
                }
                () = stop => {
                    // No further line is read: the service sees its input end, answers
                    // what it is running, and stops.
                    let deadline = tokio::time::Instant::now() + grace;
                    forwarding.abort_all();
                    if let Ok(ended) = tokio::time::timeout_at(deadline, &mut waiting).await {
                        ended.map_err(ServeError::Session)?;
                    }
                    tools.drain(deadline).await;
                }
            }
            Ok(())
        })
    }
}

/// Copies `reader` to `out` line by line, each bounded by `max_line` bytes, with a
/// top-level `resumableRequests` capability of `initialize` moved where rmcp keeps it
/// ([`resumable::promote_capability`]).
async fn forward_lines<R, W>(reader: R, mut out: W, max_line: usize) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::new(reader);
    let bound = u64::try_from(max_line)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let mut line = Vec::new();
    loop {
        line.clear();
        if (&mut reader)
            .take(bound)
            .read_until(b'\n', &mut line)
            .await?
            == 0
        {
            return Ok(());
        }
        if line.len() > max_line && !line.ends_with(b"\n") {
            tracing::warn!(max_line, "dropping a stdin line longer than the body limit");
            loop {
                line.clear();
                let read = (&mut reader)
                    .take(bound)
                    .read_until(b'\n', &mut line)
                    .await?;
                if read == 0 || line.ends_with(b"\n") {
                    break;
                }
            }
            continue;
        }
        if names_reserved_key(&line) {
            // rmcp would read the string under such a key as a document of its own, past
            // serde_json's depth limit (see `json_check`).
            tracing::warn!("dropping a stdin line with an object key the JSON parser reserves");
            continue;
        }
        if let Some(mut promoted) = resumable::promote_in_bytes(&line) {
            promoted.push(b'\n');
            line = promoted;
        }
        out.write_all(&line).await?;
        out.flush().await?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn forwarded(input: &[u8], max_line: usize) -> String {
        let (mut write, read) = tokio::io::duplex(1 << 16);
        let (out, mut collected) = tokio::io::duplex(1 << 16);
        write.write_all(input).await.expect("written");
        drop(write);
        forward_lines(read, out, max_line).await.expect("forwarded");
        let mut text = String::new();
        collected.read_to_string(&mut text).await.expect("read");
        text
    }

    #[tokio::test]
    async fn lines_pass_and_an_over_long_one_is_dropped_whole() {
        let long = format!("{}\n", "x".repeat(100));
        let input = format!("{{\"a\":1}}\n{long}{{\"b\":2}}\n");
        assert_eq!(
            forwarded(input.as_bytes(), 50).await,
            "{\"a\":1}\n{\"b\":2}\n"
        );
    }

    #[tokio::test]
    async fn a_line_naming_a_key_the_json_parser_reserves_is_dropped() {
        let input = concat!(
            "{\"a\":1}\n",
            "{\"x\":{\"$serde_json::private::RawValue\":\"[[]]\"}}\n",
            "{\"$serde_json::private::Raw\\u0056alue\":\"1\"}\n",
            // The `$` itself escaped.
            "{\"\\u0024serde_json::private::RawValue\":\"1\"}\n",
            // Behind a key named twice, which serde_json lets through.
            "{\"k\":1,\"k\":2,\"x\":{\"$serde_json::private::RawValue\":\"1\"}}\n",
            "{\"b\":\"$serde_json::private::RawValue\"}\n",
        );
        assert_eq!(
            forwarded(input.as_bytes(), 1 << 10).await,
            "{\"a\":1}\n{\"b\":\"$serde_json::private::RawValue\"}\n"
        );
    }

    #[tokio::test]
    async fn a_top_level_resumable_requests_capability_moves_to_experimental() {
        let input = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{"resumableRequests":{}}}}
"#;
        let out: serde_json::Value =
            serde_json::from_str(&forwarded(input, 1 << 20).await).expect("JSON");
        assert_eq!(
            out["params"]["capabilities"],
            serde_json::json!({"experimental": {"resumableRequests": {}}})
        );
    }
}
