use saga_runtime::prelude::*;

// No return type.
#[saga_tool]
async fn no_output(name: String) {
    let _ = name;
}

// An unknown #[arg] key.
#[saga_tool]
async fn unknown_arg_key(#[arg(default = "x")] name: String) -> Result<String, SagaError> {
    Ok(name)
}

// #[arg] on the context, and two contexts.
#[saga_tool]
async fn two_contexts(
    #[arg(description = "who")] cx: &SagaContext,
    other: &SagaContext,
) -> Result<String, SagaError> {
    Ok(format!("{} {}", cx.principal(), other.principal()))
}

// The same attribute argument twice.
#[saga_tool(name = "a", name = "b")]
async fn named_twice() -> Result<String, SagaError> {
    Ok(String::new())
}

// A suspension in the `else` of a `let … else`: accepted, no error here.
#[saga_tool]
async fn let_else(value: Option<String>) -> Result<String, SagaError> {
    let Some(found) = value else {
        let asked: String = elicit("Which?").await?;
        return Ok(asked);
    };
    Ok(found)
}

// `const`.
#[saga_tool]
const async fn constant() -> Result<String, SagaError> {
    Ok(String::new())
}

// C-variadic.
#[saga_tool]
async fn variadic(count: u32, ...) -> Result<String, SagaError> {
    Ok(count.to_string())
}

// On something that is not a function.
#[saga_tool]
struct NotAFunction;

fn main() {}
