use saga_runtime::prelude::*;

// `matches!`'s scrutinee may ask (it runs once, first); its guard runs only when the
// pattern matches, so asking in it is refused.
#[saga_tool]
async fn pick(x: i64) -> Result<String, SagaError> {
    let asked = matches!(elicit::<i64>("n?").await?, 1..=9);
    let guarded = matches!(x, 1..=9 if elicit::<bool>("ok?").await?);
    Ok(format!("{asked} {guarded}"))
}

fn main() {}
