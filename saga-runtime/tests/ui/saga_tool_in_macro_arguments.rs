use saga_runtime::prelude::*;

/// Evaluates its argument twice: saga cannot know when (or how often) a macro it does not
/// know runs its arguments.
macro_rules! both {
    ($e:expr) => {
        ($e, $e)
    };
}

#[saga_tool]
async fn greet() -> Result<String, SagaError> {
    let (a, b) = both!(elicit::<String>("Your name?").await?);
    Ok(format!("Hello, {a} and {b}!"))
}

fn main() {}
