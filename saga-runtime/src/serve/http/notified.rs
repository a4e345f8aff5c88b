//! The response of a stateless call that asked for notifications (a progress token or a
//! log level in its `_meta`), written by saga, as rmcp's transport writes it: the call's
//! first message decides the response's form.
//!
//! - Its answer first, nothing sent before it: one JSON body, as any call's.
//! - A notification first: `200` and an SSE stream of each notification in the order the
//!   tool sent it, then the answer, each one `data:` event; a comment keeps a quiet
//!   stream alive (`HttpLimits::sse_keep_alive`).
//!
//! Why saga writes it: a 2026-07-28 request's notifications can only ride its own
//! response, and for this rmcp built a per-request service, peer, one-shot transport and
//! two tasks, then checked the request's headers again from a JSON value. The direct path
//! serves the call, and this module its notifications
//! ([`crate::engine::caller::outbox`]).
//!
//! The call runs as the response is read, so a client that leaves drops it, as it drops
//! a plain call. A notification sent after the answer is written is dropped: the
//! response has ended.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use futures::future::BoxFuture;
use http::{HeaderValue, StatusCode, header};
use rmcp::model::{ServerJsonRpcMessage, ServerNotification};

use super::refuse::refuse;
use crate::engine::caller::outbox::Inbox;

/// A JSON-RPC message written as JSON, with the HTTP status rmcp gives it as a response
/// of its own; `Err` when it could not be written.
pub(super) struct Written {
    pub(super) status: StatusCode,
    pub(super) body: Result<Vec<u8>, String>,
}

/// The JSON-RPC code of an answer that could not be written.
const INTERNAL_ERROR: i32 = -32603;

impl Written {
    /// The message as a response of its own.
    pub(super) fn into_response(self) -> Response {
        match self.body {
            Ok(body) => {
                let mut response = Response::new(Body::from(body));
                *response.status_mut() = self.status;
                response.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                response
            }
            Err(error) => refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                INTERNAL_ERROR,
                &format!("the response could not be written: {error}"),
            ),
        }
    }

    /// The message as the last event of a stream (whose status is already sent).
    fn into_event(self) -> Bytes {
        match self.body {
            Ok(body) => event(&body),
            Err(error) => {
                let refusal = serde_json::json!({
                    "jsonrpc": "2.0",
                    "id": null,
                    "error": {
                        "code": INTERNAL_ERROR,
                        "message": format!("the response could not be written: {error}"),
                    },
                });
                event(refusal.to_string().as_bytes())
            }
        }
    }
}

/// The response of a call whose answer `answer` writes and whose notifications arrive in
/// `inbox`: JSON if the answer comes before any notification, otherwise a stream.
pub(super) async fn respond(
    mut answer: BoxFuture<'static, Written>,
    mut inbox: Inbox,
    keep_alive: Option<Duration>,
) -> Response {
    let (first, answered) = tokio::select! {
        // The inbox first: a notification the tool sent before its answer comes first.
        biased;
        notice = inbox.recv() => match notice {
            Some(notice) => (notice, None),
            // No sender left while the call runs: nothing can come but the answer.
            None => return answer.await.into_response(),
        },
        written = &mut answer => match inbox.try_recv() {
            // Sent within the poll that answered: still first.
            Ok(notice) => (notice, Some(written)),
            Err(_) => return written.into_response(),
        },
    };
    let stream = Notified {
        first: Some(notification_event(first)),
        // The call still runs unless it answered in the poll that sent the first notice.
        answer: answered.is_none().then_some(answer),
        answered: answered.map(Written::into_event),
        inbox,
        keep_alive: keep_alive.map(|every| (every, Box::pin(tokio::time::sleep(every)))),
        done: false,
    };
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// The stream's body: the call, polled as the body is read, and what it sent.
struct Notified {
    /// The first notification, which opened the stream.
    first: Option<Bytes>,
    /// The call, until it answers.
    answer: Option<BoxFuture<'static, Written>>,
    /// The answer, written after every notification the call sent before it.
    answered: Option<Bytes>,
    inbox: Inbox,
    /// How often a quiet stream gets a comment, and when the next one is due.
    keep_alive: Option<(Duration, Pin<Box<tokio::time::Sleep>>)>,
    /// The answer is written: nothing follows it.
    done: bool,
}

impl futures::Stream for Notified {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(first) = this.first.take() {
            return Poll::Ready(Some(Ok(first)));
        }
        if this.done {
            return Poll::Ready(None);
        }
        if let Some(answer) = this.answer.as_mut()
            && let Poll::Ready(written) = answer.as_mut().poll(cx)
        {
            this.answer = None;
            this.answered = Some(written.into_event());
        }
        if let Poll::Ready(Some(notice)) = this.inbox.poll_recv(cx) {
            this.rearm();
            return Poll::Ready(Some(Ok(notification_event(notice))));
        }
        // Every notification sent before the answer has been read (a sender outside the
        // call, such as a round that goes on in a task of its own, cannot hold it back).
        if let Some(answered) = this.answered.take() {
            this.done = true;
            return Poll::Ready(Some(Ok(answered)));
        }
        if let Some((_, due)) = this.keep_alive.as_mut()
            && due.as_mut().poll(cx).is_ready()
        {
            this.rearm();
            return Poll::Ready(Some(Ok(Bytes::from_static(KEEP_ALIVE))));
        }
        Poll::Pending
    }
}

impl Notified {
    /// The next keep-alive comment is due a whole interval from now.
    fn rearm(&mut self) {
        if let Some((every, due)) = self.keep_alive.as_mut() {
            due.as_mut().reset(tokio::time::Instant::now() + *every);
        }
    }
}

/// The comment that keeps a quiet stream open, as rmcp's streams write it.
const KEEP_ALIVE: &[u8] = b":\n\n";

/// One SSE event carrying the JSON `message`, as rmcp's streams write it.
fn event(message: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(message.len() + 8);
    event.extend_from_slice(b"data: ");
    event.extend_from_slice(message);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// The event of a notification: the JSON-RPC message rmcp's peer would have sent.
fn notification_event(notification: ServerNotification) -> Bytes {
    let message = ServerJsonRpcMessage::notification(notification);
    match serde_json::to_vec(&message) {
        Ok(json) => event(&json),
        // A notification is plain data that always writes; were one not to, it is lost
        // and the stream goes on.
        Err(error) => {
            tracing::warn!(%error, "a notification could not be written");
            Bytes::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::caller::outbox::Outbox;
    use futures::{FutureExt as _, StreamExt as _};
    use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, Notification};

    fn note(text: &str) -> ServerNotification {
        ServerNotification::LoggingMessageNotification(Notification::new(
            LoggingMessageNotificationParam::new(LoggingLevel::Info, text.into()),
        ))
    }

    fn answer(text: &str) -> Written {
        Written {
            status: StatusCode::OK,
            body: Ok(format!(r#"{{"answer":"{text}"}}"#).into_bytes()),
        }
    }

    async fn body_text(response: Response) -> String {
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("the body reads");
        String::from_utf8(bytes.to_vec()).expect("text")
    }

    fn content_type(response: &Response) -> &str {
        response.headers()[header::CONTENT_TYPE]
            .to_str()
            .expect("text")
    }

    /// An answer with nothing sent before it is one JSON body.
    #[tokio::test]
    async fn an_answer_first_is_json() {
        let (outbox, inbox) = Outbox::channel();
        let call = async move {
            let _outbox = outbox;
            answer("a")
        };
        let response = respond(call.boxed(), inbox, None).await;
        assert_eq!(content_type(&response), "application/json");
        assert_eq!(body_text(response).await, r#"{"answer":"a"}"#);
    }

    /// Notifications sent before the answer, even in the poll that answers, come first
    /// and in order; one sent once the answer is written is not.
    #[tokio::test]
    async fn notifications_then_the_answer() {
        let (outbox, inbox) = Outbox::channel();
        let late = outbox.clone();
        let call = async move {
            outbox.send(note("one")).await;
            outbox.send(note("two")).await;
            answer("b")
        };
        let response = respond(call.boxed(), inbox, None).await;
        assert_eq!(content_type(&response), "text/event-stream");
        let text = body_text(response).await;
        late.send(note("late")).await;
        let events: Vec<&str> = text.split("\n\n").filter(|e| !e.is_empty()).collect();
        assert_eq!(events.len(), 3, "{text}");
        assert!(events[0].starts_with("data: ") && events[0].contains("\"one\""));
        assert!(events[1].contains("\"two\""));
        assert_eq!(events[2], r#"data: {"answer":"b"}"#);
    }

    /// A quiet stream gets a comment each interval; the answer still ends it.
    #[tokio::test(start_paused = true)]
    async fn a_quiet_stream_is_kept_alive() {
        let (outbox, inbox) = Outbox::channel();
        let call = async move {
            outbox.send(note("started")).await;
            tokio::time::sleep(Duration::from_secs(25)).await;
            answer("c")
        };
        let response = respond(call.boxed(), inbox, Some(Duration::from_secs(10))).await;
        let mut body = response.into_body().into_data_stream();
        let mut chunks = Vec::new();
        while let Some(chunk) = body.next().await {
            chunks.push(String::from_utf8(chunk.expect("a chunk").to_vec()).expect("text"));
        }
        assert!(chunks[0].contains("\"started\""), "{chunks:?}");
        assert_eq!(chunks[1..3], [":\n\n", ":\n\n"], "{chunks:?}");
        assert_eq!(chunks[3], "data: {\"answer\":\"c\"}\n\n", "{chunks:?}");
        assert_eq!(chunks.len(), 4, "{chunks:?}");
    }

    /// Dropping the response (its client left) drops the call.
    #[tokio::test]
    async fn a_client_that_leaves_drops_the_call() {
        let (outbox, inbox) = Outbox::channel();
        let (dropped, gone) = tokio::sync::oneshot::channel::<()>();
        let call = async move {
            let _dropped = dropped;
            outbox.send(note("started")).await;
            std::future::pending::<()>().await;
            answer("never")
        };
        let response = respond(call.boxed(), inbox, None).await;
        let mut body = response.into_body().into_data_stream();
        assert!(body.next().await.is_some());
        drop(body);
        assert!(
            gone.await.is_err(),
            "the call was dropped with its response"
        );
    }
}
