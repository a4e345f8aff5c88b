use saga_runtime::prelude::*;

pub struct Wizard;

impl Wizard {
    #[saga_fn]
    async fn ask(n: u32) -> Result<String, SagaError> {
        elicit::<String>(format!("{n}?")).await
    }

    // `Self` would name the helper's generated state machine.
    #[saga_fn]
    async fn both() -> Result<String, SagaError> {
        Ok(Self::ask(1).await? + &Self::ask(2).await?)
    }
}

fn main() {}
