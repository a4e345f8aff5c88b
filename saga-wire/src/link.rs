//! Which call a token belongs to, and how far along it: the first twelve bytes of its
//! nonce. Every token a call hands out, round after round, checkpoint after checkpoint, is
//! a link of one chain (eight random bytes drawn at the call's first round) at a sequence
//! number one past the token it was sealed from. The nonce's other twelve bytes stay
//! random, so two tokens of one link never share a nonce.
//!
//! With single use (saga-runtime's `TokenStore`), the store keeps each chain's floor:
//! the lowest sequence number still redeemable. A call that hands out a newer token
//! retires the earlier ones, and a call that ends retires them all, so that the tokens a
//! streamed call handed out at its checkpoints (seed 002's resume policies) cannot be
//! resumed once the call has moved on, nor after it returned its result.
//!
//! Tokens sealed before chains existed have random nonces: each reads as a chain of its
//! own, which no floor has retired, as before.

/// A token's place in its call's chain of tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Link {
    /// The call's chain: random, drawn at its first round.
    pub chain: [u8; 8],
    /// How far along the chain the token is.
    pub seq: u32,
}

impl Link {
    /// The first link of a new chain (feature `seal`: drawn from the nonces' source).
    #[cfg(feature = "seal")]
    pub fn fresh() -> Self {
        let nonce = super::nonce::fresh();
        let mut chain = [0u8; 8];
        chain.copy_from_slice(&nonce[..8]);
        Self { chain, seq: 0 }
    }

    /// The link a nonce names.
    #[inline]
    pub fn of_nonce(nonce: &[u8; 24]) -> Self {
        let mut chain = [0u8; 8];
        chain.copy_from_slice(&nonce[..8]);
        let seq = u32::from_be_bytes([nonce[8], nonce[9], nonce[10], nonce[11]]);
        Self { chain, seq }
    }

    /// The link after this one; a new chain after the last number (never reached by a
    /// real call, but a token sealed before chains existed may read as any number).
    /// Feature `seal`, as [`Link::fresh`].
    #[cfg(feature = "seal")]
    #[inline]
    pub fn next(self) -> Self {
        match self.seq.checked_add(1) {
            Some(seq) => Self { seq, ..self },
            None => Self::fresh(),
        }
    }

    /// The floor that retires this link and every one before it.
    #[inline]
    pub fn past(self) -> u64 {
        u64::from(self.seq) + 1
    }
}

// Its chains are drawn from the nonces' source (feature `seal`).
#[cfg(all(test, feature = "seal"))]
mod tests {
    use super::*;

    #[test]
    fn a_linked_nonce_names_its_link_and_stays_unique() {
        let link = Link::fresh().next().next();
        let first = crate::nonce::linked(link.chain, link.seq);
        let second = crate::nonce::linked(link.chain, link.seq);
        assert_eq!(Link::of_nonce(&first), link);
        assert_eq!(Link::of_nonce(&second), link);
        assert_ne!(first, second, "the random part differs");
        assert_eq!(link.seq, 2);
        assert_eq!(link.past(), 3);
        let last = Link {
            chain: link.chain,
            seq: u32::MAX,
        };
        assert_ne!(
            last.next().chain,
            link.chain,
            "a new chain after the last number"
        );
    }
}
