//! The digest a token keeps of the requests it keeps no params of (see `asking`): when such a
//! round is asked again, the tool's statement of it must match what was asked.
//!
//! Not a security measure (the token is authenticated): it catches a tool that states a
//! round differently, through code saga cannot see (a user's `Display` or `From` impl, a
//! field the state leaves out).
//!
//! A form's schema enters as the hash of its JSON, computed once per answer type
//! ([`Fnv::of_json`] from the schema cache), not as the JSON written again each round:
//! writing it cost a quarter of a round that asks (BENCHMARKS.md).

use crate::engine::identity::fnv::Fnv;
use crate::engine::kinds::table::Asked;

/// The digest of one round's restated requests, added in the round's order.
#[derive(Default)]
pub(crate) struct RoundDigest(Option<Fnv>);

impl RoundDigest {
    pub(crate) fn add(&mut self, key: &str, request: &Asked) {
        let hash = self.0.get_or_insert_with(Fnv::new);
        hash.write_str(key);
        request.digest(hash);
    }

    pub(crate) fn finish(self) -> Option<u32> {
        self.0.map(|hash| fold(hash.finish()))
    }
}

fn fold(hash: u64) -> u32 {
    (hash ^ (hash >> 32)) as u32
}
