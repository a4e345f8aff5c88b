use saga_runtime::prelude::*;

/// `join_all` inside `join!`: it is a round of its own.
#[saga_tool]
async fn both(names: Vec<String>) -> Result<String, SagaError> {
    let (all, extra) = join!(
        join_all(names.iter().map(|n| elicit::<bool>(format!("keep {n}?")))),
        elicit::<String>("Anything else?")
    );
    Ok(format!("{} {}", all.len(), extra?))
}

/// `join_all` not awaited.
#[saga_tool]
async fn kept(names: Vec<String>) -> Result<String, SagaError> {
    let pending = join_all(names.iter().map(|n| elicit::<bool>(format!("keep {n}?"))));
    Ok(format!("{}", pending.len()))
}

fn main() {}
