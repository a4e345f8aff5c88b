//! [`join_all`]: a dynamic number of requests of one kind in one round.

use crate::engine::round::requests::Request;

/// Sends every request of `requests` in one round; `.await` inside a `#[saga_tool]` or
/// `#[saga_fn]` gives a `Vec` of their answers, in the same order.
///
/// The requests are of one kind (all `elicit::<T>`, all `sample`, …); `join!` is the form
/// for a fixed set of different kinds. Keys are generated unless each request has
/// `.key(..)`. An empty iterator still makes a round, which asks nothing (like
/// `checkpoint()`), and gives an empty `Vec`.
///
/// ```ignore
/// let keep: Vec<Result<bool, SagaError>> =
///     join_all(names.iter().map(|n| elicit::<bool>(format!("keep {n}?")))).await;
/// ```
pub fn join_all<I>(requests: I) -> JoinAll<I::Item>
where
    I: IntoIterator,
    I::Item: Into<Request>,
{
    JoinAll {
        requests: requests.into_iter().collect(),
    }
}

/// Requests sent in one round; see [`join_all`].
#[must_use = "the requests are sent only when the saga awaits them"]
#[derive(Debug)]
pub struct JoinAll<R> {
    pub(crate) requests: Vec<R>,
}

impl<R> JoinAll<R> {
    /// How many requests the round sends.
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    /// Whether the round sends none.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }
}
