use saga_runtime::prelude::*;

/// A handle: neither `Serialize` nor `Deserialize`.
struct Meter {
    count: u32,
}

#[saga_fn]
async fn confirm(what: String) -> Result<bool, SagaError> {
    elicit::<bool>(format!("Confirm {what}?")).await
}

// A local kept across a helper's suspension, and one kept in the helper itself: one
// error each, at the local.
#[saga_fn]
async fn count_twice(what: String) -> Result<u32, SagaError> {
    let meter = Meter { count: 1 };
    let again: bool = elicit(format!("Count {what} again?")).await?;
    Ok(meter.count + u32::from(again))
}

#[saga_tool]
async fn tally(what: String) -> Result<String, SagaError> {
    let meter = Meter { count: 0 };
    let ok = confirm(what.clone()).await?;
    let more = count_twice(what).await?;
    Ok(format!("{ok} {} {more}", meter.count))
}

fn main() {}
