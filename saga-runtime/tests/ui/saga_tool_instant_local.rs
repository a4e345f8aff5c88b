// A type of another crate that cannot be saved (`std::time::Instant`), kept across a
// suspension: the note says to keep what it is made from (a `SystemTime`), not to derive
// what a type of the user's own would.
use saga_runtime::prelude::*;

#[saga_tool]
async fn timed() -> Result<String, SagaError> {
    let started = std::time::Instant::now();
    let _sure: bool = elicit("Sure?").await?;
    Ok(format!("{:?}", started.elapsed()))
}

fn main() {}
