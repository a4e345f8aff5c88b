//! The context of a direct call (`SagaTools::run`) from a client that can elicit and sample.

use saga_runtime::engine::SagaContext;
use saga_runtime::rmcp::model::ClientCapabilities;

/// `principal`'s call, from a client that declared elicitation and sampling.
#[allow(deprecated)] // sampling: deprecated in 2026-07-28, still served
pub fn eliciting_and_sampling(principal: &str) -> SagaContext {
    SagaContext::new(principal).with_capabilities(
        ClientCapabilities::builder()
            .enable_elicitation()
            .enable_sampling()
            .build(),
    )
}
