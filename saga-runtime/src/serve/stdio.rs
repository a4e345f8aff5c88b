//! stdio: newline-delimited JSON-RPC on stdin and stdout; logs go to stderr.

use rmcp::ServiceExt;

use super::SagaServer;

impl SagaServer {
    /// Serves MCP on stdin/stdout until stdin closes.
    pub async fn serve_stdio(self) -> anyhow::Result<()> {
        self.serve_io(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serves MCP on any byte stream pair, until the reader reaches end of file.
    pub async fn serve_io<R, W>(self, reader: R, writer: W) -> anyhow::Result<()>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let running = self.serve((reader, writer)).await?;
        running.waiting().await?;
        Ok(())
    }
}
