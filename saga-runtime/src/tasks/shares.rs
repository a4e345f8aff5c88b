//! Each principal's share of a process's task workers: a semaphore per principal with
//! tasks waiting or running here, dropped once none are.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The shares, by principal.
pub(super) struct Shares {
    per_principal: usize,
    shares: Arc<Mutex<HashMap<String, Arc<Semaphore>>>>,
}

/// One principal's share, to wait on.
pub(super) struct Share {
    principal: String,
    semaphore: Arc<Semaphore>,
    shares: Arc<Mutex<HashMap<String, Arc<Semaphore>>>>,
}

/// A worker of the principal's share, held while its task runs.
pub(super) struct Held {
    _permit: OwnedSemaphorePermit,
}

impl Shares {
    pub(super) fn new(per_principal: usize) -> Self {
        Self {
            per_principal,
            shares: Arc::default(),
        }
    }

    pub(super) fn of(&self, principal: &str) -> Share {
        let semaphore = self.shares.lock().map_or_else(
            |_| Arc::new(Semaphore::new(self.per_principal)),
            |mut shares| {
                shares
                    .entry(principal.to_owned())
                    .or_insert_with(|| Arc::new(Semaphore::new(self.per_principal)))
                    .clone()
            },
        );
        Share {
            principal: principal.to_owned(),
            semaphore,
            shares: self.shares.clone(),
        }
    }
}

impl Share {
    pub(super) async fn acquire(&self) -> Result<Held, tokio::sync::AcquireError> {
        let permit = self.semaphore.clone().acquire_owned().await?;
        Ok(Held { _permit: permit })
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        // The map's handle and this one: nobody else waits on or holds this share.
        if Arc::strong_count(&self.semaphore) == 2
            && let Ok(mut shares) = self.shares.lock()
            && shares
                .get(&self.principal)
                .is_some_and(|held| Arc::ptr_eq(held, &self.semaphore))
            && Arc::strong_count(&self.semaphore) == 2
        {
            shares.remove(&self.principal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Shares;

    #[tokio::test]
    async fn a_principal_waits_for_its_own_share_and_others_do_not() {
        let shares = Shares::new(1);
        let alice = shares.of("alice");
        let first = alice.acquire().await.expect("a worker");
        let second = shares.of("alice");
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(50), second.acquire());
        assert!(waiting.await.is_err(), "alice's second task waits");
        let bob = shares.of("bob");
        assert!(
            bob.acquire().await.is_ok(),
            "bob's task does not wait for alice's"
        );
        drop(first);
        assert!(second.acquire().await.is_ok());
    }

    #[tokio::test]
    async fn a_share_nobody_uses_is_forgotten() {
        let shares = Shares::new(2);
        let share = shares.of("carol");
        drop(share.acquire().await.expect("a worker"));
        drop(share);
        assert!(shares.shares.lock().expect("lock").is_empty());
    }
}
