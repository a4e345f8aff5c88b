use saga_runtime::prelude::*;

// An assertion's message is evaluated only when it fails: asking in it is refused.
#[saga_tool]
async fn check(x: i64) -> Result<String, SagaError> {
    assert!(x > 0, "{}", elicit::<String>("why?").await?);
    Ok("ok".into())
}

// Equality assertions: the two compared values may ask, the message may not.
#[saga_tool]
async fn equal(x: i64) -> Result<String, SagaError> {
    assert_eq!(x, elicit::<i64>("x again?").await?, "{}", sample("why?").await?.text());
    Ok("ok".into())
}

// A debug assertion's arguments are not evaluated in release builds at all.
#[saga_tool]
async fn debug_only(x: i64) -> Result<String, SagaError> {
    debug_assert!(elicit::<bool>("fine?").await?);
    Ok(x.to_string())
}

fn main() {}
