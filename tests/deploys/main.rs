//! Deploys: what a token carries from one process and one build to the next. Two builds of
//! the upgrade examples as real processes, a suspension point's identity, the examples'
//! layout files, `SagaServer::inspect`, and requests restated from a token that does not
//! keep them.
//!
//! One binary: `cargo test -p saga-workspace --test deploys`, or one file of it with `cargo test --test
//! deploys layouts::`. The helpers are `saga_examples::harness`
//! (`examples/support/harness/`).

mod deploy_identity;
mod deploys;
mod inspect;
mod layouts;
mod restatable_by_hand;
mod restated;
