use std::sync::atomic::{AtomicU32, Ordering};

use saga_runtime::prelude::*;

static OPEN: AtomicU32 = AtomicU32::new(0);
static CLOSED: AtomicU32 = AtomicU32::new(0);

// A reference chosen among statics with interior mutability: their values change while
// the program runs, so the value cannot tell them apart after the suspension. One error,
// at the local.
#[saga_tool]
async fn vote(open: bool) -> Result<String, SagaError> {
    let tally: &AtomicU32 = if open { &OPEN } else { &CLOSED };
    let _sure: bool = elicit("Sure?").await?;
    tally.fetch_add(1, Ordering::Relaxed);
    Ok("counted".to_owned())
}

fn main() {}
