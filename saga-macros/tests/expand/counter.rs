/// Counts to `n`, one checkpoint at a time.
async fn count_to(#[arg(description = "Where to stop")] n: u32) -> Result<Json<Count>, SagaError> {
    let mut total = 0u64;
    for i in 1..=n {
        total += u64::from(i);
        checkpoint().await;
    }
    Ok(Json(Count { n, total }))
}
