use saga_runtime::prelude::*;

#[saga_fn(name = "x")]
async fn with_arguments() -> u32 {
    1
}

#[saga_fn]
fn not_async() -> u32 {
    1
}

#[saga_fn]
async fn generic<T: Serialize>(value: T) -> u32 {
    checkpoint().await;
    1
}

fn main() {}
