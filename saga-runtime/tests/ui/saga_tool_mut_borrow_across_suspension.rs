use saga_runtime::prelude::*;

// A `&mut` kept across a suspension in a `mut` binding, which may point elsewhere by
// then: saga cannot borrow its place again, and an owned copy would not change the
// original, so the fix is to borrow again after the suspension.
#[saga_tool]
async fn tally(mut yes: i64, mut no: i64, first: bool) -> Result<String, SagaError> {
    let mut count = &mut yes;
    if !first {
        count = &mut no;
    }
    let extra: i64 = elicit("How many more?").await?;
    *count += extra;
    Ok(format!("{yes} yes, {no} no"))
}

fn main() {}
