//! A call's response as a stream of server-sent events: its notifications in the order it
//! sent them, then its answer.
//!
//! The call runs in a task of its own ([`spawned`]), aborted when the response is
//! dropped: a client that leaves drops it, and one that stops reading cannot stall it
//! past its run-time bound (a body is polled only as the client reads it). A tool that
//! reports faster than its client reads waits on the bounded queue
//! (`engine::caller::outbox`).
//!
//! One writer for the two responses saga streams itself: a stateless call that asks for
//! progress or log messages (`http::notified`, framed as rmcp frames its events) and a
//! call streamed through its checkpoints (`streamed`, seed 002, each event named
//! `message`).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use futures::FutureExt as _;
use futures::future::BoxFuture;
use http::{HeaderValue, header};
use rmcp::model::{ServerJsonRpcMessage, ServerNotification};
use tokio_util::task::AbortOnDropHandle;
use tracing::Instrument as _;

use crate::engine::caller::outbox::Inbox;

/// How each event is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// `data: <message>`, as rmcp's transport writes its events.
    Data,
    /// `event: message` then `data: <message>`, as seed 002's streams are written.
    Message,
}

impl Framing {
    /// One event carrying the JSON `message`.
    pub(crate) fn event(self, message: &[u8]) -> Bytes {
        let name: &[u8] = match self {
            Self::Data => b"",
            Self::Message => b"event: message\n",
        };
        let mut event = Vec::with_capacity(name.len() + message.len() + 8);
        event.extend_from_slice(name);
        event.extend_from_slice(b"data: ");
        event.extend_from_slice(message);
        event.extend_from_slice(b"\n\n");
        Bytes::from(event)
    }

    /// The event of a notification: the JSON-RPC message a peer would have sent.
    pub(crate) fn notification(self, notification: ServerNotification) -> Option<Bytes> {
        let message = ServerJsonRpcMessage::notification(notification);
        match serde_json::to_vec(&message) {
            Ok(json) => Some(self.event(&json)),
            // A notification is plain data that always writes; were one not to, it is
            // lost and the stream goes on.
            Err(error) => {
                tracing::warn!(%error, "a notification could not be written");
                None
            }
        }
    }
}

/// `run` in a task of its own, under the current span, aborted when the returned future
/// is dropped; `None` if the task failed (a panic outside a tool's steps, which are
/// caught where they run).
pub(crate) fn spawned<T: Send + 'static>(
    run: impl Future<Output = T> + Send + 'static,
) -> BoxFuture<'static, Option<T>> {
    let task = AbortOnDropHandle::new(tokio::spawn(run.in_current_span()));
    async move {
        task.await
            .map_err(|error| crate::engine::runner::unwind::log_task_failure(error, "a call"))
            .ok()
    }
    .boxed()
}

/// The comment that keeps a quiet stream open, as rmcp's streams write it.
const KEEP_ALIVE: &[u8] = b":\n\n";

/// A call's answer, as a stream is given it.
pub(crate) enum Answer {
    /// The call runs: its answer's JSON once it ends.
    Running(BoxFuture<'static, Vec<u8>>),
    /// The call has answered (this JSON) before the stream began.
    Ready(Vec<u8>),
}

/// The parts of a streamed response.
pub(crate) struct Events {
    /// An event already taken from the call (the one that decided to stream), sent first.
    pub(crate) first: Option<Bytes>,
    pub(crate) answer: Answer,
    /// What the call sends before its answer.
    pub(crate) inbox: Inbox,
    /// How often a quiet stream gets a comment; `None`, never.
    pub(crate) keep_alive: Option<Duration>,
    pub(crate) framing: Framing,
}

impl Events {
    /// The `200` SSE response whose body is these events.
    pub(crate) fn into_response(self) -> Response {
        let Events {
            first,
            answer,
            mut inbox,
            keep_alive,
            framing,
        } = self;
        let last = match answer {
            Answer::Running(answer) => Last::Running(answer),
            Answer::Ready(json) => {
                // What the call queued before it answered goes out first, nothing after
                // (see `poll_next`).
                inbox.close();
                Last::Ready(framing.event(&json))
            }
        };
        let stream = EventStream {
            first,
            last,
            inbox,
            keep_alive: keep_alive.map(|every| (every, Box::pin(tokio::time::sleep(every)))),
            framing,
        };
        let mut response = Response::new(Body::from_stream(stream));
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        // A reverse proxy that buffers responses (nginx) would hold the events back.
        headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
        response
    }
}

/// Where a stream is with its call's answer.
enum Last {
    Running(BoxFuture<'static, Vec<u8>>),
    /// The answer's event, written after every notification queued before it.
    Ready(Bytes),
    /// The answer is written: nothing follows it.
    Written,
}

/// The body: what the call sent, then its answer.
struct EventStream {
    first: Option<Bytes>,
    last: Last,
    inbox: Inbox,
    /// How often a quiet stream gets a comment, and when the next one is due.
    keep_alive: Option<(Duration, Pin<Box<tokio::time::Sleep>>)>,
    framing: Framing,
}

impl futures::Stream for EventStream {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(first) = this.first.take() {
            return Poll::Ready(Some(Ok(first)));
        }
        match &mut this.last {
            Last::Written => return Poll::Ready(None),
            Last::Running(answer) => {
                if let Poll::Ready(json) = answer.as_mut().poll(cx) {
                    this.last = Last::Ready(this.framing.event(&json));
                    // What the call queued before it answered still goes out first;
                    // nothing sent after (a clone of its context kept elsewhere) can hold
                    // the answer back.
                    this.inbox.close();
                }
            }
            Last::Ready(_) => {}
        }
        while let Poll::Ready(Some(notice)) = this.inbox.poll_recv(cx) {
            if let Some(event) = this.framing.notification(notice) {
                this.rearm();
                return Poll::Ready(Some(Ok(event)));
            }
        }
        if matches!(this.last, Last::Ready(_))
            && let Last::Ready(answer) = std::mem::replace(&mut this.last, Last::Written)
        {
            return Poll::Ready(Some(Ok(answer)));
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

impl EventStream {
    /// The next keep-alive comment is due a whole interval from now.
    fn rearm(&mut self) {
        if let Some((every, due)) = self.keep_alive.as_mut() {
            due.as_mut().reset(tokio::time::Instant::now() + *every);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::wire::resumable::{RESUME_POLICY, policy_message};
    use rmcp::model::CustomNotification;

    /// Each framing writes an event as its clients read it.
    #[test]
    fn events_are_framed_as_their_clients_read_them() {
        assert_eq!(
            Framing::Data.event(b"{}"),
            Bytes::from_static(b"data: {}\n\n")
        );
        assert_eq!(
            Framing::Message.event(b"{}"),
            Bytes::from_static(b"event: message\ndata: {}\n\n")
        );
    }

    /// A stream whose call answered before it began takes what was queued before, then
    /// the answer; nothing sent after can get in ahead of the answer.
    #[tokio::test]
    async fn an_answer_in_before_the_stream_closes_its_queue() {
        use crate::engine::caller::outbox::Outbox;
        use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, Notification};
        let note = |text: &str| {
            ServerNotification::LoggingMessageNotification(Notification::new(
                LoggingMessageNotificationParam::new(LoggingLevel::Info, text.into()),
            ))
        };
        let (outbox, inbox) = Outbox::channel();
        assert!(outbox.send(note("before")).await);
        let response = Events {
            first: None,
            answer: Answer::Ready(b"{}".to_vec()),
            inbox,
            keep_alive: None,
            framing: Framing::Data,
        }
        .into_response();
        assert!(!outbox.send(note("after")).await, "the queue is closed");
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("the body reads");
        let text = String::from_utf8(body.to_vec()).expect("text");
        assert!(text.contains("\"before\""), "{text}");
        assert!(!text.contains("\"after\""), "{text}");
        assert!(text.ends_with("data: {}\n\n"), "{text}");
    }

    /// A resume policy sent through a call's queue is written byte for byte as the
    /// policy message a stream wrote before its notifications shared the queue.
    #[test]
    fn a_policy_through_the_queue_is_the_policy_message() {
        let params = serde_json::json!({"requestId": "m-1", "resumeToken": "t", "n": 1});
        let policy = CustomNotification::new(RESUME_POLICY, Some(params.clone()));
        let event = Framing::Message
            .notification(ServerNotification::CustomNotification(policy))
            .expect("written");
        let before = Framing::Message.event(policy_message(params).to_string().as_bytes());
        assert_eq!(event, before);
    }
}
