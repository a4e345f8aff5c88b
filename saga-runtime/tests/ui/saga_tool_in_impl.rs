use saga_runtime::prelude::*;

struct Greeter;

impl Greeter {
    /// An associated function (no receiver) inside an impl block.
    #[saga_tool]
    async fn greet(name: String) -> Result<String, SagaError> {
        Ok(format!("Hello, {name}"))
    }
}

fn main() {}
