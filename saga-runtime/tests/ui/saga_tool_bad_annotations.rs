use saga_runtime::prelude::*;

/// An annotation given a string instead of a boolean.
#[saga_tool(read_only = "yes")]
async fn a() -> Result<String, SagaError> {
    Ok("a".into())
}

/// The same annotation twice.
#[saga_tool(idempotent, idempotent = false)]
async fn b() -> Result<String, SagaError> {
    Ok("b".into())
}

/// An icon that is not a string literal.
#[saga_tool(icons = [ICON])]
async fn c() -> Result<String, SagaError> {
    Ok("c".into())
}

const ICON: &str = "https://example.com/icon.svg";

/// `meta` that is not JSON.
#[saga_tool(meta = "{team: payments}")]
async fn d() -> Result<String, SagaError> {
    Ok("d".into())
}

/// `meta` that is JSON but not an object.
#[saga_tool(meta = "[1, 2]")]
async fn e() -> Result<String, SagaError> {
    Ok("e".into())
}

fn main() {}
