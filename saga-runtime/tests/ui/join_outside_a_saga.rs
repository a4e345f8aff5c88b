use saga_runtime::prelude::*;

// `join!` in a plain helper: one error, which says to mark it #[saga_fn].
async fn both() -> Result<(String, String), SagaError> {
    let (a, b) = join!(elicit::<String>("tag?"), elicit::<String>("colour?"));
    Ok((a?, b?))
}

fn main() {}
