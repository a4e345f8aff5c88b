use saga_runtime::prelude::*;

struct Greeter;

impl Greeter {
    /// A method.
    #[saga_tool]
    async fn greet(&self, name: String) -> Result<String, SagaError> {
        Ok(format!("Hello, {name}"))
    }
}

fn main() {}
