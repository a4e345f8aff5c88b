use saga_runtime::prelude::*;

// `?` on `join!(..)`, a tuple of answers: one error, at the `?`, with the fix.
#[saga_tool]
async fn pair() -> Result<String, SagaError> {
    let (a, b) = join!(elicit::<i64>("a?"), elicit::<i64>("b?"))?;
    Ok(format!("{}", a + b))
}

fn main() {}
