//! Stopping gracefully: on SIGTERM (how Docker, Kubernetes and systemd stop a process) or
//! Ctrl-C, or a future of the application's, a server stops accepting, lets the requests
//! in flight and the rounds that go on after their clients left finish within its grace
//! ([`SagaServerBuilder::shutdown_grace`](super::SagaServerBuilder::shutdown_grace), 25 s
//! by default), so that their outcomes are recorded, then returns: the application then
//! flushes its telemetry (`Telemetry::shutdown`) and exits. A second signal exits at once.
//!
//! A round still running when the grace ends is cut: where outcomes are recorded in a store
//! that renews leases, its claim's lease then runs out within seconds and a retry of its
//! request, on any replica, runs it again from the same token (its effects under the same
//! keys). Last, the tasks this process's workers run are handed back to their store (no
//! worker, the lease run out), and another replica's next sweep takes them over; a step cut
//! short runs again there from the task's last checkpoint.

use std::future::Future;
use std::time::Duration;

/// How long a server lets what is in flight finish once asked to stop, unless
/// [`SagaServerBuilder::shutdown_grace`](super::SagaServerBuilder::shutdown_grace) says
/// otherwise: 25 s, under Kubernetes' default `terminationGracePeriodSeconds` (30 s), so
/// that the process returns, flushes its telemetry and exits before it is killed.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(25);

/// Completes on SIGTERM or SIGINT (Ctrl-C), whichever comes first; never where no handler
/// can be installed. For [`SagaServer::serve_listener`](super::SagaServer::serve_listener)
/// and the `_until` forms, combined with a future of the application's.
pub async fn shutdown_signal() {
    Signals::install().next().await;
}

/// The default stop of `serve_http` and `serve_stdio`: the first SIGTERM or SIGINT; a
/// second one, while the server drains, exits the process at once. The handlers are
/// installed when this is called (before the server binds), so that a signal that comes
/// early is not the default action, which kills.
pub(crate) fn from_signals() -> impl Future<Output = ()> + Send + 'static {
    let mut signals = Signals::install();
    async move {
        let signal = signals.next().await;
        tracing::info!(
            signal,
            "stopping: requests in flight finish within the shutdown grace; a second signal exits now"
        );
        tokio::spawn(async move {
            let again = signals.next().await;
            tracing::warn!(signal = again, "a second signal: exiting now");
            std::process::exit(128 + again);
        });
    }
}

/// The signals a server stops on.
struct Signals {
    #[cfg(unix)]
    terminate: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    interrupt: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn install() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Self {
                terminate: signal(SignalKind::terminate()).ok(),
                interrupt: signal(SignalKind::interrupt()).ok(),
            }
        }
        #[cfg(not(unix))]
        {
            Self {}
        }
    }

    /// The next signal's number (15: SIGTERM, 2: SIGINT); never, where none could be
    /// listened for.
    async fn next(&mut self) -> i32 {
        #[cfg(unix)]
        {
            let terminate = async {
                match &mut self.terminate {
                    Some(signal) => signal.recv().await,
                    None => std::future::pending().await,
                }
            };
            let interrupt = async {
                match &mut self.interrupt {
                    Some(signal) => signal.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = terminate => 15,
                _ = interrupt => 2,
            }
        }
        #[cfg(not(unix))]
        {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
            2
        }
    }
}
