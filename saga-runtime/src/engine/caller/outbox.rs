//! Where a stateless call's notifications go when saga writes the call's response itself:
//! a bounded queue the HTTP layer reads into the call's SSE stream.
//!
//! Why a queue of its own and not rmcp's `Peer`: a 2026-07-28 request has no connection
//! beyond its own response, so a progress or log notification can only ride that
//! response. rmcp builds a per-request service, peer and transport for it; saga's direct
//! path (`serve::http::direct`) answers the call itself, and reads its notifications from
//! here.
//!
//! Bounded, so that a tool reporting faster than its client reads waits for the client
//! (its `progress().await` does), rather than growing the server's memory.

use rmcp::model::ServerNotification;
use tokio::sync::mpsc;

/// How many notifications may wait for the client before a tool's next one waits: enough
/// that a burst of reports does not stall the tool, few enough that a slow reader holds
/// little.
const WAITING: usize = 16;

/// The sending side, held by the call's context (and its clones).
#[derive(Debug, Clone)]
pub(crate) struct Outbox(mpsc::Sender<ServerNotification>);

/// The reading side, held by the call's response.
pub(crate) type Inbox = mpsc::Receiver<ServerNotification>;

impl Outbox {
    /// A new queue: the context's side and the response's.
    pub(crate) fn channel() -> (Self, Inbox) {
        let (sender, receiver) = mpsc::channel(WAITING);
        (Self(sender), receiver)
    }

    /// Queues `notification` for the client, waiting while the queue is full; `false`
    /// once the response is gone (the client left, or the call's answer was written):
    /// it is dropped, as no one could read it.
    pub(crate) async fn send(&self, notification: ServerNotification) -> bool {
        let sent = self.0.send(notification).await.is_ok();
        if !sent {
            tracing::debug!("a notification was dropped: its response has ended");
        }
        sent
    }

    /// Whether the response is gone: nothing sent from now on reaches the client.
    pub(crate) fn is_closed(&self) -> bool {
        self.0.is_closed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, Notification};

    fn note(text: &str) -> ServerNotification {
        ServerNotification::LoggingMessageNotification(Notification::new(
            LoggingMessageNotificationParam::new(LoggingLevel::Info, text.into()),
        ))
    }

    /// Notifications arrive in the order sent; one sent once the reader is gone returns at
    /// once instead of waiting for room that will never come.
    #[tokio::test]
    async fn in_order_and_never_stuck_without_a_reader() {
        let (outbox, mut inbox) = Outbox::channel();
        outbox.send(note("a")).await;
        outbox.send(note("b")).await;
        let text = |n: ServerNotification| match n {
            ServerNotification::LoggingMessageNotification(n) => n.params.data,
            other => panic!("unexpected {other:?}"),
        };
        assert_eq!(text(inbox.recv().await.unwrap()), "a");
        assert_eq!(text(inbox.recv().await.unwrap()), "b");
        for _ in 0..WAITING {
            outbox.send(note("fill")).await;
        }
        // Full: the next one waits for the reader (a tool faster than its client waits).
        assert!(
            futures::FutureExt::now_or_never(outbox.send(note("one more"))).is_none(),
            "a send past the bound waits"
        );
        inbox.recv().await.expect("the first waiting one");
        assert!(futures::FutureExt::now_or_never(outbox.send(note("room again"))).is_some());
        assert!(!outbox.is_closed());
        drop(inbox);
        assert!(outbox.is_closed());
        // Full and unread: without the reader this returns rather than waiting.
        let sent =
            tokio::time::timeout(std::time::Duration::from_secs(5), outbox.send(note("late")))
                .await
                .expect("a send without a reader returns");
        assert!(!sent);
    }
}
