//! The plain run of a saga, for the differential tests (`tests/corpus`): its body as one
//! ordinary async function (the `saga-plain` attributes), answered by a scripted client
//! at each request it awaits. The requests, their keys and the checks on the answers are
//! the state machine's (`KeyedRound`, saga's `Suspension` trait); only the suspending
//! differs. The tests compare the two.

use std::cell::RefCell;
use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use saga_runtime::__private::{Answers, Checkpoint, Request, Suspension};
use saga_runtime::rmcp::model::{InputRequests, InputResponses};
use saga_runtime::testing::KeyedRound;

pub use saga_plain::{join, keep, saga_fn, saga_tool, skip};

/// Where the answers of a plain run come from: a scripted client.
pub trait Script: Send {
    /// Answers a round's requests, as an MRTR client would.
    fn respond(&mut self, requests: &InputRequests) -> InputResponses;
}

/// A plain run: its script, and what the comparison reads afterwards.
pub struct PlainRun {
    script: Box<dyn Script>,
    last_key: u32,
    /// How many rounds the run asked for, answers asked again and checkpoints included.
    pub rounds: u32,
    /// Why the script's answers could not be used, if they could not; the tool then saw
    /// no answer (`SagaError::InvalidAnswer`).
    pub failure: Option<String>,
}

impl PlainRun {
    /// A run answered by `script`.
    pub fn new(script: impl Script + 'static) -> Self {
        Self {
            script: Box::new(script),
            last_key: 0,
            rounds: 0,
            failure: None,
        }
    }

    /// Asks `requests` of the script until it answers them all usably (at most 8 tries).
    fn ask(&mut self, requests: Vec<Request>) -> Answers {
        match self.try_ask(requests) {
            Ok(answers) => answers,
            Err(reason) => {
                self.failure.get_or_insert(reason);
                Answers::none()
            }
        }
    }

    fn try_ask(&mut self, requests: Vec<Request>) -> Result<Answers, String> {
        let round = KeyedRound::new(requests, &mut self.last_key)
            .map_err(|error| error.message.to_string())?;
        for _ in 0..8 {
            self.rounds += 1;
            let responses = self.script.respond(round.requests());
            match round.answers(responses) {
                Ok(Some(answers)) => return Ok(answers),
                Ok(None) => continue,
                Err(error) => return Err(error.message.to_string()),
            }
        }
        Err("the script was asked 8 times without a usable answer".into())
    }
}

thread_local! {
    /// The run whose body is being polled on this thread (see [`Scope`]).
    static RUNNING: RefCell<Option<PlainRun>> = const { RefCell::new(None) };
}

/// `future` (a plain body) polled with `run` as the running plain run: each poll lends it
/// to the thread, and takes it back.
pub struct Scope<F> {
    future: Pin<Box<F>>,
    run: Option<PlainRun>,
}

impl<F: Future> Scope<F> {
    /// Runs `future` under `run`; its output and the run at the end.
    pub fn new(future: F, run: PlainRun) -> Self {
        Self {
            future: Box::pin(future),
            run: Some(run),
        }
    }
}

impl<F: Future> Future for Scope<F> {
    type Output = (F::Output, PlainRun);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        /// Takes the run back from the thread however the poll ends, a panic included,
        /// so that no later plain body on this thread meets it.
        struct Lent<'a>(&'a mut Option<PlainRun>);
        impl Drop for Lent<'_> {
            fn drop(&mut self) {
                *self.0 = RUNNING.with(|running| running.borrow_mut().take());
            }
        }
        let this = self.get_mut();
        RUNNING.with(|running| *running.borrow_mut() = this.run.take());
        let polled = {
            let _lent = Lent(&mut this.run);
            this.future.as_mut().poll(cx)
        };
        match polled {
            Poll::Ready(output) => {
                let run = this
                    .run
                    .take()
                    .expect("the plain run is back after each poll");
                Poll::Ready((output, run))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Asks `requests` of the running plain run's script as one round: their answers.
pub fn ask(requests: Vec<Request>) -> Answers {
    RUNNING.with(|running| {
        running
            .borrow_mut()
            .as_mut()
            .expect("a plain body runs under a plain run's Scope")
            .ask(requests)
    })
}

fn checkpoint() {
    RUNNING.with(|running| {
        running
            .borrow_mut()
            .as_mut()
            .expect("a plain body runs under a plain run's Scope")
            .rounds += 1;
    });
}

/// What an awaited value is, told by its type (autoref specialisation on
/// `(&&&probe(&value)).kind()`: [`ViaRequest`] and [`ViaCheckpoint`] before [`ViaFuture`];
/// a checkpoint is no request, so the first two never both apply).
pub struct Probe<T>(PhantomData<fn() -> T>);

/// The probe of `value`.
pub fn probe<T>(_value: &T) -> Probe<T> {
    Probe(PhantomData)
}

/// A checkpoint: in a plain run, only a counted round.
pub struct CheckpointKind;
/// One of saga's requests: asked of the script as a round of its own.
pub struct RequestKind;
/// Any other future: awaited in place.
pub struct FutureKind;

/// Picks [`CheckpointKind`].
pub trait ViaCheckpoint {
    /// The kind.
    fn kind(&self) -> CheckpointKind;
}
impl ViaCheckpoint for &&&Probe<Checkpoint> {
    fn kind(&self) -> CheckpointKind {
        CheckpointKind
    }
}

/// Picks [`RequestKind`].
pub trait ViaRequest {
    /// The kind.
    fn kind(&self) -> RequestKind;
}
impl<R: Suspension> ViaRequest for &&Probe<R> {
    fn kind(&self) -> RequestKind {
        RequestKind
    }
}

/// Picks [`FutureKind`].
pub trait ViaFuture {
    /// The kind.
    fn kind(&self) -> FutureKind;
}
impl<F: IntoFuture> ViaFuture for &Probe<F> {
    fn kind(&self) -> FutureKind {
        FutureKind
    }
}

impl CheckpointKind {
    /// Counts the round.
    pub async fn plain(self, _checkpoint: Checkpoint) {
        checkpoint();
    }
}

impl RequestKind {
    /// Asks `request` as a round of its own: its answer, read as the machine reads it.
    pub async fn plain<R: Suspension>(self, request: R) -> R::Output {
        let mark = saga_runtime::__private::marker(&request);
        let mut round = Vec::new();
        saga_runtime::__private::requests(&mut round, request);
        let mut answers = ask(round);
        saga_runtime::__private::answer(mark, &mut answers, 0)
    }
}

impl FutureKind {
    /// Awaits `future`.
    pub async fn plain<F: IntoFuture>(self, future: F) -> F::Output {
        future.await
    }
}
