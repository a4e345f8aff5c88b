//! The response of a stateless call (or `prompts/get`, `resources/read`: a call of the
//! catalog) that asked for notifications (a progress token or a log level in its `_meta`), written by saga, as rmcp's transport writes it: the call's
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
//! The call runs in a task of its own, aborted when the response is dropped: a client
//! that leaves drops it, as it drops a plain call, and one that stops reading cannot hold
//! it past its run-time bound. A notification sent after the answer is in is dropped.

use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use futures::FutureExt as _;
use http::{HeaderValue, StatusCode, header};

use super::refuse::refuse;
use crate::engine::caller::outbox::Inbox;
use crate::serve::sse::{self, Events, Framing};

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

    /// The message as the last event of a stream (whose status is already sent): its
    /// JSON, or the error that it could not be written.
    fn into_json(self) -> Vec<u8> {
        self.body.unwrap_or_else(|error| {
            failed_json(&format!("the response could not be written: {error}"))
        })
    }
}

/// The response of a call that answered before it sent anything; `None`, its task
/// failed, and `failed` writes what it answers then.
fn answered_alone(answer: Option<Answer>, failed: impl FnOnce() -> Written) -> Response {
    match answer {
        Some(answer) => answer.into_response(),
        None => failed().into_response(),
    }
}

/// The last event's JSON of a call that answered after a notification.
fn answer_json(answer: Option<Answer>, failed: impl FnOnce() -> Written) -> Vec<u8> {
    match answer {
        Some(answer) => answer.into_json(),
        None => failed().into_json(),
    }
}

/// A JSON-RPC internal error without an id, as JSON.
fn failed_json(message: &str) -> Vec<u8> {
    super::refuse::refusal(&serde_json::Value::Null, INTERNAL_ERROR, message)
        .to_string()
        .into_bytes()
}

/// What a call that asked for notifications answers.
pub(super) enum Answer {
    /// A JSON-RPC message, for this module to write.
    Written(Written),
    /// A response of its own: a call streamed through its checkpoints, whose stream
    /// carries its notifications (`serve::streamed`). It is decided before the call runs,
    /// so nothing was sent before it.
    Own(Response),
}

impl Answer {
    fn into_response(self) -> Response {
        match self {
            Self::Written(written) => written.into_response(),
            Self::Own(response) => response,
        }
    }

    fn into_json(self) -> Vec<u8> {
        match self {
            Self::Written(written) => written.into_json(),
            Self::Own(_) => failed_json("a streamed call answered after a notification"),
        }
    }
}

/// The response of a call whose answer `answer` writes and whose notifications arrive in
/// `inbox`: JSON if the answer comes before any notification, otherwise a stream. The
/// call runs in a task of its own ([`sse::spawned`](crate::serve::sse::spawned)); if that
/// task fails (a panic outside the tool's steps), `failed` writes the answer.
pub(super) async fn respond(
    answer: impl Future<Output = Answer> + Send + 'static,
    mut inbox: Inbox,
    keep_alive: Option<Duration>,
    failed: impl FnOnce() -> Written + Send + 'static,
) -> Response {
    let mut answer = crate::serve::sse::spawned(answer);
    let (first, answered) = tokio::select! {
        // The inbox first: a notification the tool sent before its answer comes first.
        biased;
        notice = inbox.recv() => match notice {
            Some(notice) => (notice, None),
            // No sender left while the call runs: nothing can come but the answer.
            None => return answered_alone(answer.await, failed),
        },
        answered = &mut answer => match inbox.try_recv() {
            // Sent within the poll that answered: still first.
            Ok(notice) => (notice, Some(answered)),
            Err(_) => return answered_alone(answered, failed),
        },
    };
    Events {
        first: Framing::Data.notification(first),
        // The call still runs unless it answered in the poll that sent the first notice.
        answer: match answered {
            Some(answered) => sse::Answer::Ready(answer_json(answered, failed)),
            None => sse::Answer::Running(answer.map(|answer| answer_json(answer, failed)).boxed()),
        },
        inbox,
        keep_alive,
        framing: Framing::Data,
    }
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::caller::outbox::Outbox;
    use futures::StreamExt as _;
    use rmcp::model::{
        LoggingLevel, LoggingMessageNotificationParam, Notification, ServerNotification,
    };

    fn note(text: &str) -> ServerNotification {
        ServerNotification::LoggingMessageNotification(Notification::new(
            LoggingMessageNotificationParam::new(LoggingLevel::Info, text.into()),
        ))
    }

    fn answer(text: &str) -> Answer {
        Answer::Written(Written {
            status: StatusCode::OK,
            body: Ok(format!(r#"{{"answer":"{text}"}}"#).into_bytes()),
        })
    }

    fn failed() -> Written {
        Written {
            status: StatusCode::OK,
            body: Ok(br#"{"failed":true}"#.to_vec()),
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
        let response = respond(call.boxed(), inbox, None, failed).await;
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
        let response = respond(call.boxed(), inbox, None, failed).await;
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
        let response = respond(call.boxed(), inbox, Some(Duration::from_secs(10)), failed).await;
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

    /// A sender that outlives the call (a clone of its context kept elsewhere) and never
    /// stops cannot hold the answer back: once the answer is in, nothing more is taken.
    #[tokio::test]
    async fn a_sender_that_outlives_the_call_cannot_hold_the_answer_back() {
        let (outbox, inbox) = Outbox::channel();
        let keeper = outbox.clone();
        let chatter = tokio::spawn(async move {
            while keeper.send(note("chatter")).await {
                tokio::task::yield_now().await;
            }
        });
        let call = async move {
            outbox.send(note("one")).await;
            tokio::task::yield_now().await;
            answer("d")
        };
        let response = respond(call, inbox, None, failed).await;
        // A guard against a hang, not a measure of time.
        let text = tokio::time::timeout(Duration::from_secs(60), body_text(response))
            .await
            .expect("the stream ends");
        assert!(text.ends_with("data: {\"answer\":\"d\"}\n\n"), "{text}");
        chatter
            .await
            .expect("the chatter stops once its sends are refused");
    }

    /// A call whose task fails (a panic outside the tool's steps) answers what `failed`
    /// writes, before or after its notifications.
    #[tokio::test]
    async fn a_call_whose_task_fails_answers_as_told() {
        let (outbox, inbox) = Outbox::channel();
        let call = async move {
            let _outbox = outbox;
            if true {
                panic!("outside the steps");
            }
            answer("never")
        };
        let response = respond(call, inbox, None, failed).await;
        assert_eq!(body_text(response).await, r#"{"failed":true}"#);
        let (outbox, inbox) = Outbox::channel();
        let call = async move {
            outbox.send(note("one")).await;
            tokio::task::yield_now().await;
            if true {
                panic!("outside the steps");
            }
            answer("never")
        };
        let text = body_text(respond(call, inbox, None, failed).await).await;
        assert!(text.ends_with("data: {\"failed\":true}\n\n"), "{text}");
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
        let response = respond(call.boxed(), inbox, None, failed).await;
        let mut body = response.into_body().into_data_stream();
        assert!(body.next().await.is_some());
        drop(body);
        assert!(
            gone.await.is_err(),
            "the call was dropped with its response"
        );
    }
}
