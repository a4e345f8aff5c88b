use saga_runtime::prelude::*;

/// Makes the effect, then awaits it later: no checkpoint would save its result.
#[saga_tool]
async fn charge_later(customer: String) -> Result<String, SagaError> {
    let charge = effect("charge", |key| async move { format!("{customer}: {key}") });
    let receipt = charge.await;
    Ok(receipt)
}

/// An effect in an `async` block: the block is a future of its own, where nothing can be
/// saved.
#[saga_tool]
async fn charge_in_a_block(customer: String) -> Result<String, SagaError> {
    let receipt = async { effect("charge", |key| async move { format!("{customer}: {key}") }).await }.await;
    Ok(receipt)
}

/// An effect in a match guard.
#[saga_tool]
async fn charge_in_a_guard(customer: String) -> Result<String, SagaError> {
    match customer.len() {
        0 if effect("charge", |_| async move { true }).await => Ok("none".into()),
        _ => Ok(customer),
    }
}

fn main() {}
