//! A session's response bodies under their bounds: the body keeps the request's place
//! ([`HeldPlace`]) until it is done or dropped, and a standalone GET stream ends after a
//! while without an event, so that no stream a client forgot stays open for ever.

use std::future::Future as _;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use futures::Stream;
use hyper::body::{Body as HttpBody, Frame, SizeHint};

use super::owners::HeldPlace;

/// `response` with its body holding `held`, and, given `idle`, ending once that long
/// passes without an SSE event (keep-alive comments do not count).
pub(crate) fn held(response: Response, held: HeldPlace, idle: Option<Duration>) -> Response {
    let Some(idle) = idle else {
        return keeping(response, held);
    };
    let (parts, body) = response.into_parts();
    let body = Watched {
        body: body.into_data_stream(),
        _held: held,
        idle,
        sleep: Box::pin(tokio::time::sleep(idle)),
    };
    Response::from_parts(parts, Body::from_stream(body))
}

/// Whether `headers` say the body is an SSE stream.
pub(crate) fn is_event_stream(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"))
}

/// `response` with its body keeping `kept` (a request's place) until the body is done or
/// dropped. The body is otherwise the same, its length included: a JSON answer keeps its
/// `Content-Length` rather than becoming a chunked stream.
pub(crate) fn keeping<T: Send + Unpin + 'static>(response: Response, kept: T) -> Response {
    let (parts, body) = response.into_parts();
    Response::from_parts(parts, Body::new(Keeping { body, _kept: kept }))
}

struct Keeping<T> {
    body: Body,
    _kept: T,
}

impl<T: Unpin> HttpBody for Keeping<T> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

struct Watched {
    body: axum::body::BodyDataStream,
    _held: HeldPlace,
    idle: Duration,
    sleep: Pin<Box<tokio::time::Sleep>>,
}

/// Whether `chunk` carries only SSE comments (keep-alives) and blank lines.
fn is_comment(chunk: &[u8]) -> bool {
    chunk
        .split(|&byte| byte == b'\n')
        .all(|line| line.is_empty() || line == b"\r" || line.starts_with(b":"))
}

impl Stream for Watched {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = Pin::new(&mut self.body).poll_next(cx);
        match &polled {
            Poll::Ready(Some(Ok(chunk))) => {
                if !is_comment(chunk) {
                    let deadline = tokio::time::Instant::now() + self.idle;
                    self.sleep.as_mut().reset(deadline);
                }
                polled
            }
            Poll::Pending => {
                if self.sleep.as_mut().poll(cx).is_ready() {
                    tracing::debug!("closing an SSE stream that sent nothing for its idle time");
                    Poll::Ready(None)
                } else {
                    Poll::Pending
                }
            }
            _ => polled,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_comment;

    #[test]
    fn keep_alives_are_comments_and_events_are_not() {
        assert!(is_comment(b":\n\n"));
        assert!(is_comment(b": keep-alive\r\n\r\n"));
        assert!(!is_comment(b"event: message\ndata: {}\n\n"));
        assert!(!is_comment(b"data: x\n\n"));
    }
}
