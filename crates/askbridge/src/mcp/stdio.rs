//! MCP over standard input and output (`askbridge mcp`): serves one
//! client until it closes standard input, then cancels the asks its calls
//! were still waiting on (the host quit or restarted the server).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::oneshot;

use super::McpServer;

/// How long a cancellation under way may take once the client is gone.
const CANCEL_ON_CLOSE: Duration = Duration::from_secs(10);

/// Why serving over stdio failed.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    /// The client's first messages were not an MCP start.
    #[error("the MCP handshake on standard input failed")]
    Handshake(#[source] Box<ServerInitializeError>),
    /// The service stopped other than by the client leaving.
    #[error("the MCP service stopped abnormally")]
    Stopped(#[source] tokio::task::JoinError),
}

impl McpServer {
    /// Serves MCP on standard input and output until the client closes
    /// standard input; asks still waited on then are cancelled.
    pub async fn serve_stdio(&self) -> Result<(), StdioError> {
        let (closed, on_close) = oneshot::channel();
        let stdin = WatchedStdin {
            inner: tokio::io::stdin(),
            closed: Some(closed),
        };
        let running = self
            .clone()
            .serve((stdin, tokio::io::stdout()))
            .await
            .map_err(|error| StdioError::Handshake(Box::new(error)))?;
        // The host went away: cancel the asks it was waiting on now, rather
        // than after rmcp's grace period for in-flight requests.
        let cancel_on_close = {
            let server = self.clone();
            tokio::spawn(async move {
                if on_close.await.is_ok() {
                    server.cancel_inflight().await;
                }
            })
        };
        let quit = running.waiting().await;
        // Let a cancellation under way finish (the task ends once standard
        // input is dropped), then cancel whatever is left.
        let _ = tokio::time::timeout(CANCEL_ON_CLOSE, cancel_on_close).await;
        self.cancel_inflight().await;
        let reason = quit.map_err(StdioError::Stopped)?;
        tracing::info!(?reason, "MCP connection closed");
        Ok(())
    }
}

/// Standard input that says when it reaches its end (the host closed the
/// connection).
struct WatchedStdin {
    inner: tokio::io::Stdin,
    closed: Option<oneshot::Sender<()>>,
}

impl AsyncRead for WatchedStdin {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        let at_end = matches!(poll, Poll::Ready(Ok(())))
            && buf.filled().len() == before
            && buf.remaining() > 0;
        if at_end && let Some(closed) = self.closed.take() {
            let _ = closed.send(());
        }
        poll
    }
}
